/*
 * alert — the failure-alert decisions of issue 14 item 5 (pure).
 *
 * Owns two rules and nothing else: whether a task's conclusion raises
 * an alert (the table of mode x the job's previous outcome x this
 * outcome), and the deterministic requestId of the alert task, so that a
 * repeated conclusion (crash, recovery, two nodes) names the same file
 * and the O_EXCL create in incoming/ makes it a no-op.  No I/O, no clock.
 * Follows the design (xxl-job's alarm: one alarm per failed
 * trigger; Alertmanager's firing/resolved pair for `transition`).
 */
#ifndef TASKSPOOL_ALERT_H
#define TASKSPOOL_ALERT_H

#include <stddef.h>

#include "core/buf.h"

enum alert_mode {
	ALERT_MODE_EVERY,	/* each task that ends FAILED (default) */
	ALERT_MODE_TRANSITION	/* first FAILED after a SUCCESS; recovery */
};

/* The job's last concluded outcome, as kept in state/alerts/. */
enum alert_prev {
	ALERT_PREV_NONE,	/* no conclusion recorded yet */
	ALERT_PREV_SUCCESS,
	ALERT_PREV_FAILED
};

enum alert_kind {
	ALERT_KIND_NONE,	/* no alert */
	ALERT_KIND_FAILED,	/* alert: "failed" */
	ALERT_KIND_RECOVERED	/* alert: "recovered" */
};

/* The suffixes of the alert task's requestId, per kind. */
#define ALERT_SUFFIX_FAILED	".onfailure"
#define ALERT_SUFFIX_RECOVERED	".onrecovery"

/*
 * Parse a mode name: "every" or "transition" (the member onFailureMode,
 * the config key on_failure_mode).  Returns 0 with *mode set, or -1 for
 * any other string (s NULL included); the caller names the field.
 */
int alert_mode_parse(const char *s, enum alert_mode *mode);

/*
 * The alert a conclusion raises.  failed: 1 when the task ended FAILED
 * (terminal, after its retries), 0 when it ended SUCCESS.  is_alert: 1
 * when the concluded task is itself an alert task (member alertFor):
 * it never raises one (no loops).  Table (issue 14 item 5):
 *   every:      FAILED -> failed; SUCCESS -> none
 *   transition: FAILED after NONE or SUCCESS -> failed,
 *               FAILED after FAILED -> none,
 *               SUCCESS after FAILED -> recovered, otherwise none.
 * Returns an enum alert_kind.
 */
enum alert_kind alert_decide(enum alert_mode mode, enum alert_prev prev,
    int failed, int is_alert);

/*
 * Write the alert task's requestId for the task id (a valid requestId,
 * NUL-terminated, borrowed) and kind (FAILED or RECOVERED) into out
 * (outlen bytes; TASK_ID_MAX + 1 are enough).  It is id + suffix when
 * that fits in max bytes (max = TASK_ID_MAX, 128, in use); else the
 * first max - len(suffix) - 17 bytes of id, "-", the first 16 hex
 * digits of SHA-256(id), then the suffix: deterministic, within max,
 * and distinct for ids that share the kept prefix.  Returns 0, or -1
 * when kind is NONE, max is too small for the hashed form (< 40),
 * outlen < max + 1 when needed, or the hash fails.
 */
int alert_request_id(const char *id, enum alert_kind kind, size_t max,
    char *out, size_t outlen);

/*
 * The state file state/alerts/<jobCode> (the job's last outcome): one
 * word and a newline, "SUCCESS\n" or "FAILED\n".  alert_prev_parse()
 * reads len bytes at data (hostile: anything else, a missing newline
 * included, is refused) into *prev; returns 0, or -1 (the caller treats
 * the job as having no outcome yet and rewrites the file).
 * alert_prev_word() is the file's text for failed (1) or success (0): a
 * static string.  Pure.
 */
int alert_prev_parse(const char *data, size_t len, enum alert_prev *prev);
const char *alert_prev_word(int failed);

/*
 * The alert task's executeParams: the result envelope (len bytes at
 * env, a JSON object as result.c writes it, borrowed) with the member
 * "alert":"failed" or "alert":"recovered" (per kind) added before its
 * closing brace, appended to out.  Returns 0, or -1 (errno EINVAL: env
 * is not '{' ... '}' after trimming white space, or kind is NONE;
 * ENOMEM/EFBIG from buf).  Pure.
 */
int alert_params(const char *env, size_t len, enum alert_kind kind,
    struct buf *out);

#endif
