/*
 * callback — signed result callbacks: delivery files in the spool's
 * outbox and the sender that delivers them (API.md §6-7).
 *
 * When a task becomes terminal and it has a callbackUrl, or its app
 * (appId) has a registration in state/callbacks/<appId>.json, one
 * delivery is created: the file outbox/callbacks/pending/<requestId>.json
 * (writer protocol, exclusive create, so a task never gets two) holding a
 * stable webhook-id, the §6.2 envelope serialised once, and the delivery
 * state (attempts, next try, last status, lastError).  The file's mtime is
 * the time the next try is due, as in delayed/.
 *
 * The sender, a thread of taskspoold with its own loop, claims due files
 * by flock + rename into outbox/callbacks/active/<node>/ (so a dead node's
 * deliveries, left unlocked, are taken back to pending/ by any sender),
 * sends them with libcurl's multi interface (one slow receiver never holds
 * up others; at most one try in flight per endpoint), and after each try
 * writes the file back to pending/ (retry) or to delivered/ or failed/
 * (CALLBACK_FAILED, which also runs hooks/_on_callback_failed with the
 * delivery file on stdin).  Schedule and circuit breaker: delivery.h;
 * signatures: whsign.h; destination policy: ssrf.h and the libcurl
 * settings of API.md §7.4.  spool-layout/README.md documents the layout.
 *
 * Errors: -1 with errno and, where a caller shows one, a message in why.
 * Library functions do not log; the sender thread logs its decisions.
 */
#ifndef TASKSPOOL_CALLBACK_H
#define TASKSPOOL_CALLBACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "callback/urlcheck.h"
#include "core/buf.h"
#include "spool/config.h"
#include "spool/spool.h"
#include "core/task.h"

#define CALLBACK_BODY_MAX (256 * 1024)	/* envelope bytes, API.md §8 */

/*
 * Build the delivery file for task t (its requestId, callbackUrl, appId)
 * whose result envelope (results/<id>.json) is result/rlen, into out.
 * s is used to look up the app's registration.  now_ms (epoch ms) is the
 * creation time and the first try's due time.  Returns 1 when a delivery
 * is wanted (out holds it), 0 when none (no callbackUrl, no
 * registration), -1 with errno (EINVAL: result is not an envelope; EIO:
 * no random id).
 */
int callback_prepare(const struct spool *s, const struct task *t,
    const char *result, size_t rlen, int64_t now_ms, struct buf *out);

/*
 * Publish a prepared delivery of requestId id into pending/ (exclusive
 * create).  One delivery per event: when a delivery of id exists already
 * nothing is done, unless it is finished (delivered/, failed/) and its
 * body differs, i.e. the task ran again (`taskspool retry`) and ended
 * with a new outcome; then the new delivery, with a new webhook-id,
 * replaces it.  Returns 0, or -1 with errno.
 */
int callback_publish(const struct spool *s, const char *id,
    const struct buf *delivery);

/*
 * prepare + publish for a task t whose result is in results/ (recovery
 * of a conclusion interrupted before its delivery was written).  Returns
 * 0 (also when no delivery is wanted) or -1 with errno.
 */
int callback_enqueue(const struct spool *s, const struct task *t,
    const char *result, size_t rlen);

/*
 * As callback_enqueue, but only when task t has no delivery at all
 * (pending, in flight, delivered or failed): for a result rebuilt after
 * it was torn (resrepair.h), whose bytes may differ from the result the
 * delivery was made from, so that one event is never delivered twice.
 * Returns 0 or -1 with errno.
 */
int callback_enqueue_missing(const struct spool *s, const struct task *t,
    const char *result, size_t rlen);

/*
 * The delivery of a completed batch (callback_batch.c): the envelope
 * {"type": "batch.completed", "timestamp": now_ms, "data": summary}
 * (summary/slen: a JSON object, batch_summary_encode), to url (borrowed;
 * checked by the writer that set it), as delivery id did (a requestId:
 * "<batchId>.batch"), published as callback_publish does (exclusive: a
 * second call for the same batch changes nothing).  Signed with
 * callback_secret.  Returns 0, or -1 with errno (EINVAL: summary is not
 * JSON).
 */
int callback_enqueue_batch(const struct spool *s, const char *did,
    const char *url, const char *summary, size_t slen, int64_t now_ms);

/* Where a delivery stands, for the CLI and the API's callback member. */
struct callback_info {
	char webhook_id[40];
	char status[20];		/* PENDING | DELIVERED | CALLBACK_FAILED */
	char reason[24];		/* "" or RETRIES_EXHAUSTED, GONE, .. */
	char last_error[24];		/* "" or TIMEOUT, HTTP_STATUS, .. */
	int attempts;
	int last_http;			/* 0 = none */
	int64_t last_attempt_ms;	/* -1 = none */
	int64_t next_ms;		/* -1 = none */
	char where[80];			/* pending, active/<node>, delivered.. */
};

/*
 * Whether AppId app has a callback registration (the file
 * state/callbacks/<app>.json of s exists, whatever its status).  Returns
 * 1 or 0; an error reading the directory counts as 0.
 */
int callback_registered(const struct spool *s, const char *app);

/*
 * Read the delivery of requestId id.  Returns 0 and fills ci, or -1 with
 * errno (ENOENT: the task has no delivery: NOT_REGISTERED).
 */
int callback_info_read(const struct spool *s, const char *id,
    struct callback_info *ci);

/*
 * Print every delivery (one line each: requestId, status, attempts, last
 * status, lastError, next try, where) to fp.  Returns the number listed,
 * or -1 with errno.
 */
int callback_list(const struct spool *s, FILE *fp);

/*
 * Start a fresh attempt sequence for the delivery of requestId id (same
 * webhook-id and body, API.md §6.6 "redeliver"): it goes back to pending/,
 * due now.  Returns 0, or -1 with errno and why (ENOENT none, EBUSY a try
 * is in flight on a node).
 */
int callback_redeliver(const struct spool *s, const char *id, char *why,
    size_t whylen);

/*
 * The submit-time check of a callback URL url (borrowed) under cfg's
 * callback_allow_http, callback_allowed_ports and callback_allow_cidrs
 * (urlcheck_url(); callback_submit.c).  Returns its verdict with the
 * reason in why, which names the key that would allow a refused URL;
 * URLCHECK_UNAVAILABLE when a key does not parse or libcurl is missing.
 * Blocks on DNS for a host name.
 */
enum urlcheck_rc callback_url_check(const struct config *cfg,
    const char *url, char *why, size_t whylen);

/*
 * Whether a callback of a task of AppId app (may be NULL or "": the CLI's
 * tasks) can be signed: cfg's callback_secret is set, or app has a
 * registration in s (its secrets sign the task's own callbackUrl too).
 * Returns 1 or 0.
 */
int callback_can_sign(const struct spool *s, const struct config *cfg,
    const char *app);

/* Why a task with a callbackUrl is refused when callback_can_sign() is
 * 0: the keys to set. */
#define CALLBACK_NO_SECRET_WHY	"no secret to sign its callbacks with " \
	"(unsigned callbacks are never sent): set callback_secret (whsec_ " \
	"and base64) in taskspool.conf, or register the app's callback " \
	"(POST /api/callbacks/register), which gives it secrets"

/* The sender thread that delivers them: callback_sender.h. */

#endif
