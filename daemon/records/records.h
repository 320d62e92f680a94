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
 * Implemented by records.c (the embedded implementation, the outbox and
 * its writer thread, which drains it through records_mariadb.h only).
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
#include "records/records_row.h"

#define RECORDS_DIR		"records"		/* under outbox/ */
#define RECORDS_CLAIMED_DIR	"records-claimed"	/* under outbox/ */
#define RECORDS_FILE_MAX	(64 << 20)	/* bytes: a record file (the
					 * envelope with a 16 MiB hook result
					 * and escaped output tails) */
#define RECORDS_BATCH		256	/* records per transaction */

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

/* --- record files → rows (pure; records.c; the rows: records_row.h) --- */

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

#endif
