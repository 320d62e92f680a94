/*
 * records_row — the rows a record file becomes: what the outbox's codec
 * (records_decode, records.h) makes and the MariaDB side
 * (records_db_apply, records_mariadb.h) writes, so that neither of the
 * two needs the other's header for them.  Types only.
 */
#ifndef TASKSPOOL_RECORDS_ROW_H
#define TASKSPOOL_RECORDS_ROW_H

#include <stddef.h>
#include <stdint.h>

#define RECORDS_RESULT_MAX	(8 << 20)	/* bytes of result_summary */
#define RECORDS_NULL		INT64_MIN	/* an absent number */

struct records_attempt_row {
	int attempt;
	char *node;			/* new or NULL */
	char *state;			/* new: RUNNING or an outcome */
	int fence;			/* 1 running, 3 ended */
	int64_t started_at, finished_at, duration_ms, retry_at; /* or NULL */
	int64_t exit_code, sig;		/* RECORDS_NULL = none */
	char *reason;			/* new or NULL */
	char *traceparent;		/* new or NULL: the attempt's span,
					 * W3C version 00 (55 characters) */
};

/* A callback_record row (a record file with "state": "CALLBACK"). */
struct records_callback_row {
	char *delivery_id, *url, *state;	/* new */
	char *last_error;			/* new or NULL */
	int64_t attempts, last_status;		/* RECORDS_NULL = none */
	int64_t next_try_at, updated_at;	/* epoch ms; RECORDS_NULL */
};

/* A task_definition row (a record file with "state": "DEFINITION"). */
struct records_definition_row {
	char *job_code, *task_code;	/* new */
	char *schedule;			/* new or NULL */
	char *definition;		/* new: the jobs/ file, compact JSON;
					 * NULL: the job was removed */
	int64_t enabled, updated_at;	/* epoch ms */
};

struct records_row {
	struct records_definition_row *def;	/* new: a job definition
						 * record; NULL: another */
	struct records_callback_row *cb;	/* new: a callback record
						 * (only request_id is set
						 * besides); NULL: a task's */
	char *request_id, *app_id, *task_code, *job_code, *status, *node;
	char *failure_code, *failure_reason;	/* new or NULL */
	char *result_summary;			/* new or NULL */
	char *traceparent;			/* new or NULL: the task's,
						 * W3C version 00 */
	int64_t trigger_time, created_at, started_at, finished_at;
	int64_t duration_ms, exit_code, max_retries;	/* RECORDS_NULL */
	int attempt;
	int64_t fence;
	struct records_attempt_row *att;	/* new, natt entries */
	size_t natt;
};

#endif
