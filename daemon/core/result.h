/*
 * result — the result envelope results/<requestId>.json (pure codec).
 *
 * Shape (API.md §4.2, plus the attempt history and output tails):
 *   {"requestId","taskCode","taskName","status","createdAt","startedAt",
 *    "finishedAt","durationMs","attempt","maxRetries","node",
 *    "triggerTime","result","failureReason":{"code","message"}|null,
 *    "attempts":[{attempt,node,startedAt,finishedAt,durationMs,exitCode,
 *                 signal,outcome,reason,retryAt}],
 *    "stdoutTail","stderrTail"} and "fencingToken" (cluster mode: the
 *    final attempt's lease, coord.h) when not 0.
 * status is SUCCESS, FAILED or CANCELLED.  Times are RFC 3339 UTC ms.
 */
#ifndef TASKSPOOL_RESULT_H
#define TASKSPOOL_RESULT_H

#include <stddef.h>

#include "core/buf.h"
#include "core/task.h"

struct result_info {
	const char *status;		/* "SUCCESS" | "FAILED" | "CANCELLED" */
	const char *failure_code;	/* NULL unless FAILED: "TIMEOUT",.. */
	const char *failure_message;	/* NULL or text */
	const char *hook_result;	/* raw JSON text or NULL (→ null) */
	size_t hook_result_len;
	const char *stdout_tail;	/* bytes or NULL */
	size_t stdout_len;
	const char *stderr_tail;
	size_t stderr_len;
	int max_retries;		/* effective value */
	long long fence;		/* fencing token of the final attempt's
					 * lease (cluster mode), 0 = none */
};

/* The reason a dependency's cancel starts with (Slurm's
 * DependencyNeverSatisfied), and its cancelReason code. */
#define RESULT_NEVER_SATISFIED	"DEPENDENCY_NEVER_SATISFIED"

/*
 * Append the envelope for t (whose attempts include the final one) to
 * out.  hook_result must be valid JSON (the caller checked it); tails are
 * stored as JSON strings (invalid UTF-8 replaced by U+FFFD).  A CANCELLED
 * task whose last attempt has a reason gets cancelReason {code, message}:
 * code RESULT_NEVER_SATISFIED when the reason starts with it and a colon,
 * else CANCELLED.  Returns 0 or -1 (ENOMEM/EFBIG).
 */
int result_encode(const struct task *t, const struct result_info *ri,
    struct buf *out);

/*
 * Read the status (buffer of 16 bytes) and the number of attempts of an
 * envelope.  Returns 0, or -1 if data is not an envelope.
 */
int result_peek(const char *data, size_t len, char *status,
    size_t *nattempts);

/*
 * Whether len bytes at data are a result envelope (as result_peek: a
 * JSON object with a string status and an attempts array).  A result
 * file that is not one (cut short by a crash on a file system that does
 * not order writes, or edited by hand) is a missing result (issue 11
 * item 5): readers report it, recovery rebuilds it (result_rebuild).
 * Returns 1 or 0; on 0 why (may be NULL) gets jansson's message with
 * the line and column, or the member that is wrong.
 */
int result_valid(const char *data, size_t len, char *why, size_t whylen);

/*
 * Rebuild the envelope of a task that finished with status ("SUCCESS",
 * "FAILED" or "CANCELLED": the terminal directory it is in decides)
 * whose result file is torn or missing.  t is the task file of that
 * directory; its attempts[] holds the attempts before the final one.
 * torn (may be NULL) is the damaged file's bytes: what of it still
 * parses — the complete members of its top-level object, and of its
 * attempts[] the complete entries — is kept (the final attempt, the
 * hook's result, the tails, the fencing token).  A final attempt that
 * cannot be salvaged is rebuilt from the salvaged header (attempt,
 * node, startedAt, finishedAt, failureReason) with the reason saying
 * its details were lost; node "unknown" when not even that survives.
 * max_retries: the effective value when the torn file does not say it.
 * Appends the new envelope to out.  Returns 0 or -1 (ENOMEM/EFBIG).
 * Pure: no I/O, no clock.
 */
int result_rebuild(const struct task *t, const char *status,
    const char *torn, size_t tornlen, int max_retries, struct buf *out);

/* Whether len bytes at data are one valid JSON value (any type). */
int result_json_ok(const char *data, size_t len);

#endif
