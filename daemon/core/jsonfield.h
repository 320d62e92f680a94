/*
 * jsonfield — the member decoders the task and job codecs share: one
 * jansson value checked against one rule, and the refusal written into a
 * struct task_error naming the member ("timeoutSec: must be an integer
 * 0..604800").  The task file (core/task.c) and the job file
 * (core/job.c) follow the same member rules (README.md, "The task file"
 * and "The job file"), so they come from here.
 *
 * Every decoder returns 0 and sets *out, or -1 with *err filled (the
 * field name, the rule it broke); *out is then unchanged.  Strings are
 * borrowed from the json_t (valid while it lives) unless said otherwise.
 */
#ifndef TASKSPOOL_JSONFIELD_H
#define TASKSPOOL_JSONFIELD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>


/*
 * The first violation a decoder found (task_decode, job_decode,
 * result_decode...): the member and the rule it broke.  Named for the
 * task file, its first user.
 */
struct task_error {
	char field[64];		/* member name, or "json", "file" */
	char rule[256];		/* what was expected */
	int truncated;		/* 1: the text ends early (empty, or jansson's
				 * premature end of input): a writer may not
				 * have finished it */
};

/*
 * Fill *err with field and the printf-formatted rule (each truncated to
 * its buffer).  Returns -1, so a decoder can `return jsonfield_fail(...)`.
 */
int jsonfield_fail(struct task_error *err, const char *field,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A JSON string of at most max bytes (UTF-8, as jansson counts them)
 * with no \u0000 escape in it (RFC 8259 allows one; a C string would
 * silently end there, so the codecs refuse it).
 */
int jsonfield_string(json_t *v, const char *field, size_t max,
    const char **out, struct task_error *err);

/* A JSON integer lo..hi (inclusive). */
int jsonfield_int(json_t *v, const char *field, int64_t lo, int64_t hi,
    int64_t *out, struct task_error *err);

/*
 * An RFC 3339 date-time with offset (tstime_parse_rfc3339), as ms since
 * the epoch (may be negative: before 1970).
 */
int jsonfield_time(json_t *v, const char *field, int64_t *out,
    struct task_error *err);

/*
 * jsonfield_string, copied with strdup into *out (the caller frees it).
 * Out of memory is reported as the member's error.
 */
int jsonfield_dup(json_t *v, const char *field, size_t max, char **out,
    struct task_error *err);

/*
 * Whether s is text a marker file may hold (shown in logs and terminals):
 * at most max bytes, no byte below 0x20 and no 0x7f.  Returns 1 or 0.
 */
int jsonfield_text_ok(const char *s, size_t max);

/*
 * A JSON string that jsonfield_text_ok(max) accepts, copied into out
 * (max + 1 bytes).
 */
int jsonfield_text(json_t *v, const char *field, size_t max, char *out,
    struct task_error *err);

/* jsonfield_time, not before 1970-01-01T00:00:00Z. */
int jsonfield_epoch_time(json_t *v, const char *field, int64_t *out,
    struct task_error *err);

/*
 * The len bytes at data (any bytes) as one JSON object: at most max bytes
 * (else field "file"), through the RFC 8259 byte gate and jansson with
 * duplicate members refused (else field "json").  Returns a new
 * reference (the caller decrefs), or NULL with *err filled.  For the
 * small codecs (core/drainmark.c, core/holdmark.c, core/batch.c).
 */
json_t *jsonfield_object(const char *data, size_t len, size_t max,
    struct task_error *err);

/*
 * jsonfield_object, then member(ctx, name, value, err) for each member in
 * order until one returns nonzero.  Returns 0, or -1 with *err filled.
 */
int jsonfield_each_member(const char *data, size_t len, size_t max,
    int (*member)(void *ctx, const char *k, json_t *v,
    struct task_error *err), void *ctx, struct task_error *err);

/*
 * Set member k of object o to the RFC 3339 UTC form of ms
 * (tstime_format_ms), or to null when ms < 0 (absent).  Returns
 * jansson's 0 or -1 (out of memory).
 */
int jsonfield_put_time(json_t *o, const char *k, int64_t ms);

#endif
