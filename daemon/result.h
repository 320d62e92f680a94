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

#include "buf.h"
#include "task.h"

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

/*
 * Append the envelope for t (whose attempts include the final one) to
 * out.  hook_result must be valid JSON (the caller checked it); tails are
 * stored as JSON strings (invalid UTF-8 replaced by U+FFFD).  Returns 0
 * or -1 (ENOMEM/EFBIG).
 */
int result_encode(const struct task *t, const struct result_info *ri,
    struct buf *out);

/*
 * Read the status (buffer of 16 bytes) and the number of attempts of an
 * envelope.  Returns 0, or -1 if data is not an envelope.
 */
int result_peek(const char *data, size_t len, char *status,
    size_t *nattempts);

/* Whether len bytes at data are one valid JSON value (any type). */
int result_json_ok(const char *data, size_t len);

#endif
