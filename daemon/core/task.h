/*
 * task — the task file codec (pure: no I/O, no clock, no logging).
 *
 * A task file is one JSON object (UTF-8, no BOM, at most TASK_FILE_MAX
 * bytes, duplicate member names rejected, nesting at most TASK_DEPTH_MAX,
 * no "\u0000", and no byte RFC 8259 forbids where it stands: jsontext.h,
 * whose reason names the byte and its offset).  Members are those of API.md §4.1 plus the members the
 * spool itself maintains (createdAt, notBefore, triggerTime, attempts,
 * shardIndex, shardTotal, jobCode, appId).  Any other member is an error,
 * so a typo fails loudly.  executeParams is kept as the raw bytes of the
 * file, so the hook gets exactly what was submitted.
 *
 * Decoding reports the first violation as (field, rule), e.g. field
 * "timeoutSec", rule "must be an integer 1..604800"; the caller turns that
 * into the corrupt/<name>.reason text.  No json_t escapes this module.
 */
#ifndef TASKSPOOL_TASK_H
#define TASKSPOOL_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/depend.h"	/* dependsOn, releasedBy */
#include "core/jsonfield.h"	/* struct task_error */
#include "core/traceparent.h"	/* TRACEPARENT_LEN */

#define TASK_FILE_MAX	(1024 * 1024)	/* bytes, API.md §8 body limit */
#define TASK_DEPTH_MAX	32		/* containers nested in executeParams */
#define TASK_ID_MAX	128		/* requestId length */
#define TASK_APP_ID_MAX	64		/* AppId length (API.md §3.1) */
#define TASK_CODE_MAX	64		/* taskCode, node id, appId length */
#define TASK_NAME_MAX	256		/* taskName bytes */
#define TASK_URL_MAX	2048		/* callbackUrl bytes */
#define TASK_REASON_MAX	256		/* attempt reason text */
#define TASK_ATTEMPTS_MAX 1000		/* history entries kept */
#define TASK_BATCH_ID_MAX (TASK_ID_MAX - 9)	/* batchId: room for the
						 * ".complete" (core/batch.h) */

enum task_trigger { TASK_TRIGGER_NOW, TASK_TRIGGER_DELAY, TASK_TRIGGER_AT };

/* Outcome of one attempt, as recorded in the result's attempts list. */
enum task_outcome {
	TASK_OUTCOME_SUCCESS,	/* exit 0 */
	TASK_OUTCOME_FAILED,	/* non-zero exit or signal */
	TASK_OUTCOME_TEMPFAIL,	/* exit 75 (EX_TEMPFAIL) */
	TASK_OUTCOME_TIMEOUT,	/* killed after timeoutSec */
	TASK_OUTCOME_LOST,	/* owner died or lease lost during it */
	TASK_OUTCOME_CANCELLED,	/* killed by a cancel request */
	TASK_OUTCOME_ERROR	/* could not be started (exec failed, ...) */
};

struct task_attempt {
	int attempt;			/* 1-based */
	char node[TASK_CODE_MAX + 1];
	int64_t start_ms, end_ms;	/* epoch ms; -1 = unknown */
	int exit_code;			/* -1 = none (signalled, lost) */
	int signal;			/* 0 = none */
	enum task_outcome outcome;
	char reason[TASK_REASON_MAX];	/* human text, may be "" */
	int64_t retry_at_ms;		/* next attempt not before; -1 none */
	char traceparent[TRACEPARENT_LEN + 1];	/* the hook's TRACEPARENT
					 * (this attempt's span); "" none */
};

struct task {
	char request_id[TASK_ID_MAX + 1];	/* "" when absent */
	char task_code[TASK_CODE_MAX + 1];
	char *task_name;		/* new or NULL */
	enum task_trigger trigger;
	int64_t delay_ms;		/* -1 = absent */
	int64_t run_at_ms;		/* -1 = absent */
	char *params;			/* new: raw executeParams JSON bytes */
	size_t params_len;
	char *callback_url;		/* new or NULL */
	int max_retries;		/* -1 = absent (config default) */
	int timeout_sec;		/* -1 = absent (config default) */
	int priority;			/* 0..9 (core/priority.h); -1 = absent
					 * (PRIORITY_DEFAULT) */
	char *route;			/* new or NULL; never tag:<name>,
					 * which decoding folds into
					 * require_tags (core/tags.h) */
	char *require_tags;		/* requireTags: new or NULL (none), a
					 * core/tags.h list in file order */
	char *conc_key_tmpl;		/* concurrencyKey as written: new or
					 * NULL (core/conckey.h template) */
	char *conc_key;			/* new or NULL: conc_key_tmpl expanded
					 * with executeParams by task_decode
					 * (never encoded) */
	int max_per_key;		/* maxConcurrentPerKey 1..4096
					 * (core/conckey.h); -1 = absent
					 * (max_concurrent_per_key) */
	char *shard_key;		/* new or NULL */
	char *traceparent;		/* new or NULL: W3C, version 00 */
	int shard_index, shard_total;	/* -1 = absent */
	char *job_code;			/* new or NULL (fired by job) */
	char *app_id;			/* new or NULL (API submitter) */
	int app_weight;			/* appWeight 1..100 (core/fairshare.h:
					 * the app's share), only with
					 * appId; -1 = absent (1) */
	char batch_id[TASK_BATCH_ID_MAX + 1];	/* batchId (README "Batches"),
					 * requestId grammar; "" = none */
	int64_t created_ms;		/* createdAt; -1 = absent */
	int64_t not_before_ms;		/* notBefore; -1 = absent */
	int64_t trigger_ms;		/* triggerTime; -1 = absent */
	struct task_attempt *attempts;	/* new; finished attempts */
	size_t nattempts;
	struct depend_list depends;	/* dependsOn; n == 0: absent */
	struct depend_list released;	/* releasedBy; n == 0: absent */
	char on_failure[TASK_CODE_MAX + 1];	/* onFailure taskCode (README
					 * "Failure alerts"); "" = none */
	int on_failure_mode;		/* onFailureMode: -1 absent, else an
					 * enum alert_mode (core/alert.h) */
	char alert_for[TASK_ID_MAX + 1];	/* alertFor: the requestId this
					 * alert task is about; "" = none */
};

/* Initialise t to an empty task (all optional members absent). */
void task_init(struct task *t);

/* Free everything t owns and re-initialise it.  NULL is accepted. */
void task_fini(struct task *t);

/*
 * Decode and validate len bytes at data into t (which must be initialised;
 * previous contents are freed).  Returns 0, or -1 with err filled and t
 * left initialised-empty.  Does not check that the hook exists: that is
 * the spool's business.
 */
int task_decode(const char *data, size_t len, struct task *t,
    struct task_error *err);

/*
 * When a task of trigger delay or at, created at t->created_ms, is due:
 * created_ms + delayMs, or runAt (Unix ms).  Sets t->not_before_ms to it
 * and returns it when it is after created_ms; else (trigger now, or a due
 * time not in the future) returns -1 and leaves not_before_ms as it is.
 * For writers that add createdAt (taskspool submit, the HTTP API).
 */
int64_t task_set_not_before(struct task *t);

/*
 * Append t as one JSON object (compact, members in a fixed order,
 * executeParams spliced byte-for-byte) to out.  Returns 0 or -1 (errno
 * ENOMEM/EFBIG from buf).
 */
int task_encode(const struct task *t, struct buf *out);

/*
 * Whether two optional strings of a decoded value differ: 1 when one is
 * NULL and the other not, or both are strings that strcmp() tells apart;
 * 0 otherwise.  For the codecs' *_diff() functions (task, job, callback
 * delivery).  Pure.
 */
int task_str_differs(const char *a, const char *b);

/*
 * The first member in which two decoded tasks differ ("taskName",
 * "attempts[2].node", "executeParams", ...), or NULL when they hold the
 * same value.  Returns a borrowed static string.  Pure; thread-safe.
 */
const char *task_diff(const struct task *a, const struct task *b);

/*
 * The round-trip property of the codec (issue 10, item 2): decode data,
 * encode that, decode the encoding, and compare the two decoded values
 * with task_diff().  Returns 1 when task_decode() refuses data (err says
 * why: nothing to check), 0 when decode(encode(decode(data))) equals
 * decode(data), -1 when it does not (err->field names the member, err->rule
 * says what went wrong), or on ENOMEM.  For the unit tests and the fuzz
 * target.
 */
int task_roundtrip(const char *data, size_t len, struct task_error *err);

/*
 * Append a copy of a to t's history.  Returns 0 or -1 (ENOMEM); when the
 * history holds TASK_ATTEMPTS_MAX entries the oldest is dropped.
 */
int task_add_attempt(struct task *t, const struct task_attempt *a);

/* Name of an outcome ("SUCCESS", "TIMEOUT", ...). */
const char *task_outcome_name(enum task_outcome o);

/*
 * Copy the raw bytes of executeParams out of the JSON object data[0..len)
 * (already accepted by jsontext_loadb(); present: whether the parsed
 * object has the member), or "{}" when absent, into *params (new,
 * NUL-terminated after the value; *plen bytes, no NUL among them: a span
 * holding one is refused) and *plen.  Returns 0, or -1 with err filled
 * (field executeParams).  A text that is not JSON after all (cut after
 * the member's ':', say) is never read past data[len - 1].
 * Shared by task and job files, so both keep the bytes as written.
 */
int task_copy_params(const char *data, size_t len, int present,
    char **params, size_t *plen, struct task_error *err);

/* Whether s matches [A-Za-z0-9][A-Za-z0-9_.-]{0,max-1}. */
int task_name_ok(const char *s, size_t max);

/*
 * Whether the NUL-terminated s is an AppId of the HTTP API (API.md §3.1):
 * [A-Za-z0-9_-]{1,TASK_APP_ID_MAX}, which a leading '_' or '-' may start.
 * Returns 1 or 0.  Pure.
 */
int task_app_id_ok(const char *s);

/*
 * A name member of a task or job file (taskCode, requestId, code...):
 * a JSON string matching task_name_ok(s, max), copied into out (room
 * for max + 1 bytes).  Returns 0, or -1 with *err naming field and the
 * pattern (jsonfield.h's conventions).
 */
int task_json_name(json_t *v, const char *field, size_t max, char *out,
    struct task_error *err);

/*
 * The member onFailureMode of a task or job file (README "Failure
 * alerts"): the JSON string "every" or "transition" (alert_mode_parse,
 * core/alert.h), stored as an enum alert_mode in *out.  Returns 0, or
 * -1 with *err naming field.
 */
int task_json_alert_mode(json_t *v, const char *field, int *out,
    struct task_error *err);

/*
 * Whether s is a route of the task file format: any, round_robin,
 * least_active, consistent_hash, broadcast, node:<id> with id of the
 * task-code grammar (README.md, "Where a task runs"), or the shorthand
 * tag:<name> (core/tags.h; README.md, "Node tags").  Returns 1 or 0.
 * Used by the task and the job decoders.
 */
int task_route_ok(const char *s);

/*
 * Encode an attempt as a JSON object text appended to out (used by the
 * result writer too).  Returns 0 or -1 as buf_append.
 */
int task_attempt_encode(const struct task_attempt *a, struct buf *out);

/*
 * The same attempt as a new jansson object, for the other JSON codecs
 * (result.c builds the result envelope from it without printing and
 * parsing each attempt again).  Returns new (json_decref it), or NULL
 * when out of memory.  No other module sees json_t.
 */
struct json_t;
struct json_t *task_attempt_json(const struct task_attempt *a);

#endif
