/*
 * records — the durable history of cluster mode (DESIGN §1, §9): every
 * task state change as a record, and the MariaDB rows built from them.
 *
 * Two implementations behind one ops table (struct records):
 *  - embedded (no `mariadb` key): the result files are the whole record;
 *    records_append() writes nothing and no thread runs;
 *  - MariaDB: records_append() publishes a record file into
 *    outbox/records/ by the writer protocol (tmp + fsync + rename + fsync
 *    of the directory), and a writer thread applies the files in name
 *    order with idempotent upserts, then removes them.  While MariaDB is
 *    down or slow the outbox grows, tasks keep running, the thread
 *    reconnects with capped exponential backoff and replays.
 *
 * Record files: outbox/records/<epoch-ms, 15 digits>.<seq, 9 digits>.
 * <node>.json, so names sort in time order.  A writer claims a file by
 * rename into outbox/records-claimed/<node>/ while it holds a flock on that
 * directory; a dead writer's claimed directory (flock free) is moved back.
 * Applying a record twice is harmless: rows are keyed by request_id and
 * (request_id, attempt), and a row changes only with a record whose fence
 * (attempt * 4 + rank of the state) is not older than the row's.  A
 * record MariaDB rejects (a value too long, ...) goes to corrupt/ with the
 * server's message as the reason and the rest of the outbox goes on.
 *
 * Only records_mariadb.c includes <mysql.h>; everything here uses plain C
 * types.  Library code: nothing here logs except the writer thread, which
 * is the policy layer of the records (it logs state changes of the link,
 * never once per record).
 */
#ifndef TASKSPOOL_RECORDS_H
#define TASKSPOOL_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spool/config.h"
#include "spool/spool.h"
#include "core/task.h"

#define RECORDS_DIR		"records"		/* under outbox/ */
#define RECORDS_CLAIMED_DIR	"records-claimed"	/* under outbox/ */
#define RECORDS_FILE_MAX	(64 << 20)	/* bytes: a record file (the
					 * envelope with a 16 MiB hook result
					 * and escaped output tails) */
#define RECORDS_RESULT_MAX	(8 << 20)	/* bytes of result_summary */
#define RECORDS_BATCH		256	/* records per transaction */
#define RECORDS_NULL		INT64_MIN	/* an absent number */

/* What records_append() records. */
enum records_kind {
	RECORDS_RUNNING,	/* attempt a started (a->end_ms == -1) */
	RECORDS_RETRY,		/* attempt a ended; a retry waits */
	RECORDS_RESULT		/* the task ended: here is its envelope */
};

struct records;

/*
 * Choose the implementation for cfg (borrowed during the call): MariaDB
 * when cfg->mariadb is set, else embedded.  sp (borrowed, must outlive the
 * result) is the daemon's open spool with its node id; the MariaDB one
 * creates outbox/records/ and outbox/records-claimed/<node>/.  Returns a
 * new handle (records_free), or NULL with errno and a reason in why.
 */
struct records *records_new(const struct config *cfg, const struct spool *sp,
    char *why, size_t whylen);

/*
 * Start the writer thread (MariaDB; a no-op for embedded).  Returns 0, or
 * -1 with errno (pthread_create's error).
 */
int records_start(struct records *r);

/*
 * Append one record (main thread only).  RUNNING and RETRY use t (the task
 * as claimed) and a, the attempt (RUNNING: a may be NULL for "attempt
 * t->nattempts + 1 starts now on this node"); RESULT uses t
 * for the ids it carries (jobCode, appId; may be NULL) and the envelope
 * (len bytes of results/<id>.json, borrowed).  id is the requestId.
 * Returns 0, or -1 with errno when the record file could not be written
 * (ENOSPC, ...): the caller logs it; the task itself goes on.
 */
int records_append(struct records *r, enum records_kind kind, const char *id,
    const struct task *t, const struct task_attempt *a,
    const char *envelope, size_t len);

/* A callback delivery's state change (records_append_callback). */
struct records_callback {
	const char *delivery_id;	/* the webhook-id */
	const char *request_id;
	const char *url;		/* "" = not known yet (registration) */
	const char *state;		/* PENDING, DELIVERED, CALLBACK_FAILED */
	const char *last_error;		/* NULL = none; else TIMEOUT, ... */
	int attempts;			/* tries made */
	int last_http;			/* 0 = none */
	int64_t next_try_ms;		/* epoch ms; -1 = none */
	int64_t updated_ms;		/* epoch ms of this state */
};

/*
 * Append the record of a callback delivery's state change (created, a
 * try, DELIVERED, CALLBACK_FAILED) to sp's outbox/records/ by the writer
 * protocol (tmp + fsync + rename + fsync of the directory; spool_publish),
 * for the record writer to upsert into callback_record (keyed by
 * delivery_id; a row changes only with a record whose updated_at is not
 * older).  Thread-safe (the callback sender's thread calls it); its file
 * names carry node "<sp->node>~cb" so that they never meet the task
 * records' names.  Only for MariaDB mode: the caller checks the mariadb
 * key.  cb and sp are borrowed.  Returns 0, or -1 with errno.
 */
int records_append_callback(const struct spool *sp,
    const struct records_callback *cb);

/*
 * Append the record of a recurring job definition the leader loaded
 * (definition: the jobs/<code>.json bytes, len of them, borrowed; they
 * are stored compact) or removed (definition NULL), for the record writer
 * to upsert into (or delete from) task_definition, keyed by job_code; a
 * row changes only with a record whose updated_ms (epoch ms) is not
 * older.  schedule: the cron text or "fixedRateMs=N" / "fixedDelayMs=N"
 * (may be NULL).  Published like records_append_callback (names with node
 * "<sp->node>~job"); MariaDB mode only (the caller checks).  Returns 0, or
 * -1 with errno (EINVAL: definition is not JSON).
 */
int records_append_definition(const struct spool *sp, const char *job_code,
    const char *task_code, const char *schedule, int enabled,
    const char *definition, size_t len, int64_t updated_ms);

/* Stop and join the writer thread (it finishes the transaction in
 * progress) and free r.  NULL is accepted. */
void records_free(struct records *r);

/* --- record files → rows (pure; records_outbox.c) --- */

struct records_attempt_row {
	int attempt;
	char *node;			/* new or NULL */
	char *state;			/* new: RUNNING or an outcome */
	int fence;			/* 1 running, 3 ended */
	int64_t started_at, finished_at, duration_ms, retry_at; /* or NULL */
	int64_t exit_code, sig;		/* RECORDS_NULL = none */
	char *reason;			/* new or NULL */
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
	int64_t trigger_time, created_at, started_at, finished_at;
	int64_t duration_ms, exit_code, max_retries;	/* RECORDS_NULL */
	int attempt;
	int64_t fence;
	struct records_attempt_row *att;	/* new, natt entries */
	size_t natt;
};

/*
 * Decode a record file (len bytes at data) into row.  Times in the file
 * are RFC 3339 (as in result files), in row epoch ms.  trigger_time is the
 * task's triggerTime, else its createdAt, else the attempt's start.
 * result_summary is the envelope's "result" member as compact JSON (NULL
 * when null).  Returns 0, or -1 with the field and rule in why; row is
 * then empty.  Free with records_row_fini.
 */
int records_decode(const char *data, size_t len, struct records_row *row,
    char *why, size_t whylen);

/* Free what row owns and zero it.  NULL is accepted. */
void records_row_fini(struct records_row *row);

/*
 * The name of a record file: "<ms:15>.<seq:9>.<node>.json" into out
 * (outlen >= SPOOL_NAME_MAX).  Returns 0, or -1 (EINVAL: node too long).
 */
int records_file_name(char *out, size_t outlen, int64_t ms,
    unsigned long seq, const char *node);

/* --- the database (records_mariadb.c) --- */

/* A migration compiled in from sql/migrations/NNNN_name.sql. */
struct records_migration {
	unsigned version;		/* NNNN */
	const char *name;		/* file name without .sql */
	const char *sql;		/* the file's text */
};
/* Generated by sql/embed.sh, in version order; ends with a NULL name. */
extern const struct records_migration records_migrations[];

/* Result of applying one record. */
enum records_apply {
	RECORDS_APPLY_OK,
	RECORDS_APPLY_REJECT,	/* the server refused this record's values
				 * (too long, out of range, bad value, a
				 * unique key of another task), or its
				 * result exceeds RECORDS_RESULT_MAX */
	RECORDS_APPLY_RETRY	/* anything else: link down, deadlock, disk
				 * full, no table...: try again later */
};

struct records_db;

/*
 * Connection settings from the configuration (see config.c): mariadb =
 * HOST:PORT | /path/to/socket | mariadb://USER:PASSWORD@HOST:PORT/DB,
 * with mariadb_user, mariadb_password, mariadb_database supplying what the
 * value does not.  Connects (3 s connect timeout, 10 s read/write
 * timeouts, utf8mb4, strict SQL mode).  Returns a new handle
 * (records_db_close), or NULL with the server's or the parser's message
 * in why.
 */
struct records_db *records_db_connect(const struct config *cfg, char *why,
    size_t whylen);

/* Close db.  NULL is accepted. */
void records_db_close(struct records_db *db);

/*
 * Apply the compiled-in migrations newer than the database's
 * schema_migrations, in order, under the named lock "taskspool_migrate"
 * (so two migrating hosts do not interleave).  *applied counts those run.
 * Returns 0, or -1 with why ("0002_x: <server message>").
 */
int records_db_migrate(struct records_db *db, int *applied, char *why,
    size_t whylen);

/*
 * The database's schema version (0 = no schema_migrations table) into
 * *version.  Returns 0 or -1 with why.
 */
int records_db_version(struct records_db *db, unsigned *version, char *why,
    size_t whylen);

/* The newest compiled-in migration's version. */
unsigned records_latest_version(void);

/* Transactions of the writer.  Each returns a records_apply value. */
enum records_apply records_db_begin(struct records_db *db, char *why,
    size_t whylen);
enum records_apply records_db_commit(struct records_db *db, char *why,
    size_t whylen);
void records_db_rollback(struct records_db *db);

/*
 * Upsert row (task_execution, then each task_attempt) with prepared
 * statements, inside the caller's transaction.  Returns OK; REJECT with
 * the server's message in why when the values are refused (too long,
 * out of range, ...); RETRY when the link failed (the caller reconnects).
 */
enum records_apply records_db_apply(struct records_db *db,
    const struct records_row *row, char *why, size_t whylen);

/*
 * Whether task_execution has a terminal row (SUCCESS, FAILED, CANCELLED)
 * for request id.  Returns 1, 0 (no row, or not terminal), or -1 with the
 * server's message in why (the link failed: the caller reconnects).
 */
int records_db_terminal(struct records_db *db, const char *id, char *why,
    size_t whylen);

/*
 * Upsert this node into node_registry (started_at kept from the first
 * call of this process).  Returns a records_apply value.
 */
enum records_apply records_db_node_seen(struct records_db *db,
    const char *node, int64_t started_ms, int64_t now_ms, char *why,
    size_t whylen);

/* A row of the history / the task list. */
struct records_task {
	char request_id[TASK_ID_MAX + 1];
	char task_code[TASK_CODE_MAX + 1];
	char status[17];
	char node[TASK_CODE_MAX + 1];
	int attempt;
	int64_t trigger_time, created_at, started_at, finished_at;
	int64_t duration_ms, exit_code;		/* RECORDS_NULL = none */
	char failure_code[33];
	int64_t max_retries;			/* RECORDS_NULL = none */
	char failure_reason[1025];		/* "" = none */
};

/* Filters of history and of the list; NULL / RECORDS_NULL = any. */
struct records_filter {
	const char *task_code;
	const char *status;
	int64_t since_ms;		/* trigger_time >= since */
};

/*
 * One page of the task list in (created_at, request_id) order, keyset
 * pagination: rows strictly after the cursor (after_created,
 * after_id); after_id NULL = from the start.  Rows inserted or updated
 * while a client pages never make a row appear twice or be skipped,
 * because the key is immutable (created_at never changes once set).
 * Fills up to max rows (caller's array) and *n.  Returns 0 or -1 with
 * why.  For the API's GET /api/tasks (API.md §4.4) and `history`.
 */
int records_db_list(struct records_db *db, const struct records_filter *f,
    int64_t after_created, const char *after_id, struct records_task *rows,
    size_t max, size_t *n, char *why, size_t whylen);

/*
 * One page of app_id's tasks for GET /api/tasks (API.md §4.4): newest
 * first, in (created_at, request_id) descending order, keyset pagination:
 * rows strictly before the cursor (before_created ms, before_id); before_id
 * NULL = from the newest.  statuses: "" = any, else a comma-separated list
 * of states (SUCCESS,FAILED); task_code: "" = any; since_ms: created_at >=
 * since (RECORDS_NULL = any).  All strings are borrowed and bound as
 * parameters.  Fills up to max rows (caller's array) and *n.  Returns 0,
 * or -1 with the server's message in why.
 */
int records_db_list_app(struct records_db *db, const char *app_id,
    const char *statuses, const char *task_code, int64_t since_ms,
    int64_t before_created, const char *before_id, struct records_task *rows,
    size_t max, size_t *n, char *why, size_t whylen);

/* One line of `taskspool stats`: per task code. */
struct records_stat {
	char task_code[TASK_CODE_MAX + 1];
	long count, success, failed, cancelled, retries, callback_failures;
	int64_t p50_ms, p95_ms;		/* nearest-rank; RECORDS_NULL if none */
};

/*
 * Statistics of terminal tasks with trigger_time >= since_ms, per task
 * code in code order: count, outcomes, retries (sum of attempt - 1),
 * callbacks in state CALLBACK_FAILED, and p50/p95 of duration_ms by the
 * nearest-rank method (the smallest value with at least p% of values <=
 * it; NIST/Hyndman-Fan definition 1).  *out is new (free), *n its length.
 * Returns 0 or -1 with why.
 */
int records_db_stats(struct records_db *db, int64_t since_ms,
    struct records_stat **out, size_t *n, char *why, size_t whylen);

/*
 * Delete terminal task_execution rows finished before before_ms, and
 * their task_attempt and callback_record rows.  *deleted counts
 * task_execution rows.  Returns 0 or -1 with why.
 */
int records_db_purge(struct records_db *db, int64_t before_ms, long *deleted,
    char *why, size_t whylen);

/*
 * Nearest-rank percentile p (1..100) of the n sorted values v: v[ceil(p *
 * n / 100) - 1].  Returns RECORDS_NULL when n == 0.  Pure.
 */
int64_t records_percentile(const int64_t *v, size_t n, int p);

#endif
