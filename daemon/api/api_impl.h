/*
 * api_impl.h — what the files of the HTTP API share (api.h is the public
 * interface).  Internal: only daemon/api/api*.c include it.
 *
 *   api.c            the entry point api_handle: route and method, the
 *                    body rules of §2.3, the order of the checks; the
 *                    answers (CGI responses, problem+json) and the small
 *                    helpers every endpoint uses
 *   api_auth.c       TS1-HMAC-SHA256 (§3.4), the nonce store, the
 *                    AppId's rate limit
 *   api_marker.c     the idempotency record state/requests/<id>.json
 *   api_view.c       the §4.2 view of a task (and its callback member)
 *   api_submit.c     POST /tasks
 *   api_bulk.c       POST /tasks:bulk (many POST /tasks in one request)
 *   api_tasks.c      GET and DELETE /tasks/{id}, GET /tasks (the list)
 *   api_callbacks.c  POST /callbacks/register, callback URL checks
 *   api_ops.c        GET /health and GET /metrics (unsigned)
 *   api_logs.c       GET /tasks/{id}/logs (pages of hook output)
 *   api_retry.c      POST /tasks/{id}/retry
 *   api_jobs.c       /jobs: recurring jobs (coord/jobstore.h)
 *   api_cron.c       GET /cron/next (the `cron next` and `cron explain`
 *                    preview)
 *   api_trace.c      the traceparent a submitted task keeps
 *   api_console.c    the web console: routes, login, session, CSRF
 *   api_console_pages.c  its pages and actions
 *   api_html.c       its HTML: escaping, the page frame, the stylesheet
 *
 * Every endpoint function takes the request's context c (borrowed, valid
 * for the one request) and the response buffer out, appends exactly one
 * complete CGI response to out (replacing what was there) and returns the
 * HTTP status sent.  None of them fails otherwise: a store error becomes
 * a 503 through api_unavailable().
 */
#ifndef TASKSPOOL_API_IMPL_H
#define TASKSPOOL_API_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api.h"
#include "api/apps.h"
#include "core/buf.h"
#include "core/sign.h"
#include "core/task.h"
#include "spool/spool.h"

struct job;

/* One request being served (api_handle's, on its stack). */
struct api_ctx {
	const struct api_request *rq;
	const char *method, *path;	/* path = PATH_INFO */
        char instance[512];             /* "/api" + PATH_INFO, for problems */
        char trace[33];
        struct buf hdr; /* extra header lines, CRLF each */
        struct spool sp;
	int sp_open;
	char app_id[APPS_ID_MAX + 1];
        struct app app; /* the caller, once authenticated */
        char body_hex[SIGN_HEX_LEN + 1];
	const char *body;
	size_t body_len;
};

/* An idempotency record, state/requests/<requestId>.json (api_marker.c). */
struct api_marker {
	char app_id[APPS_ID_MAX + 1];
	char request_id[TASK_ID_MAX + 1];
	char task_code[TASK_CODE_MAX + 1];
	char fingerprint[SIGN_HEX_LEN + 1];
	int64_t created_ms;
	int64_t mtime;			/* of the record file, Unix s */
};

/* --- answers (api.c) ------------------------------------------------- */

/*
 * Replace out with a complete CGI response: status, Content-Type ctype,
 * the extra header lines gathered in c->hdr, then len bytes of body
 * (borrowed).  Returns status.
 */
int api_respond(struct api_ctx *c, struct buf *out, int status,
    const char *ctype, const char *body, size_t len);

/* Send o (stolen; NULL = out of memory, a 500) as application/json with
 * status.  Returns the status sent. */
int api_respond_json(struct api_ctx *c, struct buf *out, int status,
    json_t *o);

/*
 * A problem response (RFC 9457; API.md §5): code in UPPER_SNAKE, type
 * urn:ts:problem:<kebab-case>, extras (stolen, may be NULL) merged in,
 * detail from the printf format fmt.  A 401 adds WWW-Authenticate, a 503
 * Retry-After.  Returns status.
 */
int api_problem(struct api_ctx *c, struct buf *out, int status,
    const char *code, json_t *extras, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/*
 * 500 PERMISSION_DENIED: what (borrowed; a path, or the spool part and
 * the reason) may not be used by the user taskspool.cgi runs as.  The
 * detail names what, that user, the group of path (borrowed: the file or
 * directory whose group decides; the spool for its parts) and the
 * commands that fix it (usermod -aG, taskspool init --group, chgrp):
 * permanent until an operator acts, so not a 503.  Logged once on
 * stderr.  Returns 500.
 */
int api_denied(struct api_ctx *c, struct buf *out, const char *what,
    const char *path);

/*
 * 422 VALIDATION_FAILED for the body member name (borrowed), not one of
 * the n known members (borrowed): the reason "unknown member", with
 * "(did you mean \"timeoutSec\"?)" when one is close (core/suggest.h).
 * Returns 422.
 */
int api_unknown_member(struct api_ctx *c, struct buf *out, const char *name,
    const char *const *known, size_t n);

/* 503 SERVICE_UNAVAILABLE after a store failure: what and strerror(errno)
 * logged once on stderr, without secrets.  With errno EACCES or EPERM,
 * api_denied(what, the spool) instead.  Returns 503 (or 500). */
int api_unavailable(struct api_ctx *c, struct buf *out, const char *what);

/* A new object {k: v}; v is stolen. */
json_t *api_one_member(const char *k, json_t *v);

/* 422 VALIDATION_FAILED naming the body's field (borrowed) and why.
 * Returns 422. */
int api_validation(struct api_ctx *c, struct buf *out, const char *field,
    const char *reason);

/* The same for a query parameter of a list request (own title).
 * Returns 422. */
int api_query_invalid(struct api_ctx *c, struct buf *out, const char *field,
    const char *reason);

/* 404 TASK_NOT_FOUND for task id (borrowed) of the caller's AppId, with
 * "requestId" (api_tasks.c): the answer for an unknown task and for
 * another app's alike.  Returns 404. */
int api_task_not_found(struct api_ctx *c, struct buf *out, const char *id);

/* --- request parts and helpers (api.c) ------------------------------- */

/* Percent-decode the query-string part [s, e) (borrowed; its escapes
 * already checked by sign_query_ok) into out (outlen bytes, always
 * NUL-terminated on success).  Returns 0, or -1 when the value does not
 * fit or decodes to a NUL byte.  RFC 3986 section 2.1. */
int api_qdecode(const char *s, const char *e, char *out, size_t outlen);

/* A query parameter api_query_read() knows: its name, and where its
 * decoded value goes (room bytes, NUL included). */
struct api_param {
	const char	*name;
	char		*val;
	size_t		 room;
};

/*
 * Decode QUERY_STRING (API.md 3.3: '&'-separated name=value pairs, empty
 * ones dropped, a name without '=' the empty value) into the n params
 * (at most 32), setting bit i of *seen for each params[i] given.
 * Returns 0, or the status of the 422 VALIDATION_FAILED sent for an
 * unknown parameter (the reason lists the known ones), one given twice,
 * or a name or value that does not decode or fit.
 */
int api_query_read(struct api_ctx *c, struct buf *out,
    const struct api_param *params, size_t n, unsigned *seen);

/* Read exactly n bytes of rq's body into b (§2.3: never to EOF), through
 * rq->body_read (FastCGI) or from rq->in_fd, EINTR retried.  Returns 0,
 * or -1 on an early EOF or a read error. */
int api_read_body(const struct api_request *rq, char *b, size_t n);

/* The CGI meta-variable name: borrowed (valid for the request), or NULL
 * when unset. */
const char *api_env(struct api_ctx *c, const char *name);

/* Copy the value of the meta-variable name with leading and trailing
 * spaces and tabs removed into out (outlen bytes).  Returns 0, -1 when
 * unset, 1 when it does not fit. */
int api_header(struct api_ctx *c, const char *name, char *out,
    size_t outlen);

/*
 * Parse the body as a JSON object (UTF-8, no BOM, no duplicate members,
 * no \u0000, depth <= 32 counting the top object).  Returns the new object
 * (caller decrefs) or NULL after sending 400 INVALID_JSON.
 */
json_t *api_parse_body(struct api_ctx *c, struct buf *out);

/* Open (creating when needed, mode 02770) state/<name>/ of c's spool.
 * Returns a new dirfd (caller closes) or -1 with errno. */
int api_state_subdir(struct api_ctx *c, const char *name);

/* Copy the string src into dst (size > 0 bytes), truncating. */
void api_copy(char *dst, size_t size, const char *src);

/* Format ms (Unix ms) as RFC 3339 into b (TSTIME_BUF bytes).  Returns b. */
char *api_fmt_time(char *b, int64_t ms);

/* A new JSON string of ms as RFC 3339, or JSON null when ms < 0. */
json_t *api_time_or_null(int64_t ms);

/* --- authentication (api_auth.c) ------------------------------------- */

/*
 * Check the four auth headers, the app (apps.conf), the timestamp window,
 * the signature over c's canonical string and the nonce (§3.4 steps 5 to
 * 9), in that order.  On success fills c->app_id and c->app (secrets
 * wiped) and returns 0; else returns the 401/403/500/503 sent.
 */
int api_authenticate(struct api_ctx *c, struct buf *out);

/*
 * The AppId's request limit (ratelimit.h), after authentication: the
 * app's rate=N from apps.conf, else api_rate_limit; 0 = none, and then
 * nothing is read or locked.  Embedded mode counts in
 * state/ratelimit/<appId> (one flock), cluster mode in Redis.  A store
 * that fails lets the request through (logged): the limit protects the
 * service, it must not take it down.  Returns 0 (go on) or the 429 sent.
 */
int api_rate_check(struct api_ctx *c, struct buf *out);

/* --- idempotency records (api_marker.c) ------------------------------ */

/* Append the record of m to out.  Returns 0, or -1 (ENOMEM, EFBIG). */
int api_marker_encode(const struct api_marker *m, struct buf *out);

/* Fill m (zeroed first) as the caller's record of task id (borrowed) of
 * task code code (borrowed), made at created_ms (Unix ms), fingerprinted
 * by the request's body digest. */
void api_marker_fill(struct api_ctx *c, struct api_marker *m,
    const char *id, const char *code, int64_t created_ms);

/* Read and decode requests/<id>.json from dfd (the requests directory)
 * into m, with its mtime.  Returns 0, -1 with ENOENT when absent, -1
 * with EINVAL when it does not decode or another errno on error. */
int api_marker_read(int dfd, const char *id, struct api_marker *m);

/* --- views (api_view.c) ---------------------------------------------- */

/* 1 when status (a state name) is SUCCESS, FAILED or CANCELLED. */
int api_terminal(const char *status);

/*
 * The callback member of §4.2 for task id (borrowed) of app: a new
 * object.  The delivery's state from outbox/callbacks/ once there is
 * one; before that PENDING when has_url (the task's own callbackUrl) or
 * app has a registration, else NOT_REGISTERED; when finished (the task
 * is terminal) and there is none, NOT_REGISTERED (none will be made).
 */
json_t *api_callback_view(struct api_ctx *c, const char *app,
    const char *id, int has_url, int finished);

/*
 * The §4.2 view of the task whose record is m, as a new object; with_result:
 * include "result" (single GET) or not (list).  NULL with errno ENOENT
 * when the task is in no state directory, EBADMSG when its result file
 * is torn, EAGAIN when it kept moving while read.
 */
json_t *api_task_view(struct api_ctx *c, const struct api_marker *m,
    int with_result);

/*
 * The §4.1 202 body, a new object: a short summary of the task's current
 * state; fresh (not NULL) for a task just published, whose state is
 * known: PENDING, due in *fresh ms from now.
 */
json_t *api_summary(struct api_ctx *c, const struct api_marker *m,
    const int64_t *fresh);

/* --- trace context (api_trace.c) ------------------------------------- */

/*
 * Give t (borrowed) the traceparent it keeps when it has none from its
 * body: the request's traceparent header when it is a valid W3C value
 * (an invalid one is ignored, W3C Trace Context §3.2), else a new trace
 * (traceparent_fresh).  Returns 0, or -1 (ENOMEM, or EIO from
 * RAND_bytes).
 */
int api_trace_choose(struct api_ctx *c, struct task *t);

/* --- callback registration (api_callbacks.c) ------------------------- */

/*
 * Check the callback URL url (borrowed) of the body's member field
 * against the configuration's policy (urlcheck.h).  Returns 0 when it
 * may be used, else the 422 (INVALID_CALLBACK_URL, CALLBACK_URL_FORBIDDEN,
 * CALLBACK_URL_UNRESOLVABLE) or 503 sent.
 */
int api_url_problem(struct api_ctx *c, struct buf *out, const char *url,
    const char *field);

/* --- the endpoints (return the HTTP status sent) --------------------- */

int api_submit(struct api_ctx *c, struct buf *out);	/* POST /tasks */

#define API_BULK_MAX	500	/* tasks in one POST /tasks:bulk */

/*
 * POST /tasks:bulk: the body {"tasks": [T1, ...]} (1 to API_BULK_MAX
 * task objects, the whole body within API_BODY_MAX); each Ti submitted
 * by api_submit() in order, as if it came alone, its body Ti in compact
 * form.  Answers 200 {"accepted", "refused", "results": [{"status",
 * "body"}, ...]}, results[i] being what POST /tasks would have answered
 * for Ti (202 and the summary, or the problem).  An Idempotency-Key
 * header is 422 (each task carries its requestId).  Returns the status
 * sent.
 */
int api_submit_bulk(struct api_ctx *c, struct buf *out);
int api_list(struct api_ctx *c, struct buf *out);	/* GET /tasks */
int api_get(struct api_ctx *c, struct buf *out,         /* GET /tasks/{id} */
            const char *id);
int api_cancel(struct api_ctx *c, struct buf *out,	/* DELETE */
    const char *id);
/*
 * The body of a POST that takes none (api_hold.c): empty, or the empty
 * object {}.  Returns 0, or -1 with the problem (400, or 422 naming the
 * unknown member) written to out and its status in *status.
 */
int api_empty_body(struct api_ctx *c, struct buf *out, int *status);

/* POST /tasks/{id}/hold, or /release when release (api_hold.c). */
int api_hold(struct api_ctx *c, struct buf *out, const char *id,
    int release);
/*
 * The caller's idempotency record of id into *m (api_tasks.c): 0, or -1
 * with a 404 TASK_NOT_FOUND already sent and its status in *status (the
 * record is missing or another AppId's).
 */
int api_own_marker(struct api_ctx *c, struct buf *out, const char *id,
    struct api_marker *m, int *status);
int api_register(struct api_ctx *c, struct buf *out);	/* POST /callbacks/
							 * register */
int api_health(struct api_ctx *c, struct buf *out);	/* GET /health */
/* What a node's heartbeat text data (state/heartbeat.<node>, read back;
 * NULL: unreadable, both 0) says: *leader, *draining, 1 or 0 each
 * (api_ops.c; GET /health and the console's overview). */
void api_heartbeat_flags(const char *data, int *leader, int *draining);
int api_batch_get(struct api_ctx *c, struct buf *out,	/* GET /batches/{id} */
    const char *id);
/* POST /batches/{id}/close */
int api_batch_close(struct api_ctx *c, struct buf *out, const char *id);
/*
 * POST /batches/{id}/hold, or /release when release (api_batches.c): the
 * moves of `taskspool hold --batch` / `release --batch` for the caller's
 * own batch id; 200 with the counts, 404 BATCH_NOT_FOUND for no batch or
 * another's, 503 when a member could not be moved (a retry is safe).
 */
int api_batch_hold(struct api_ctx *c, struct buf *out, const char *id,
    int release);

/*
 * The batch side of POST /tasks (api_batches.c): request id joins batch
 * bid (batchdir_join) before anything of the task is stored.  Returns 0,
 * or the status sent: 409 BATCH_CLOSED (member batchId), 503.
 */
int api_batch_join(struct api_ctx *c, struct buf *out, const char *bid,
    const char *id);
int api_metrics(struct api_ctx *c, struct buf *out);	/* GET /metrics */

/* --- GET /cron/next (api_cron.c) ------------------------------------- */

/*
 * GET /cron/next?expr=&dialect=&tz=&from=&n=: the next n fire instants
 * of expr, with its description in words and what the zone's next
 * offset change does to it (README.md, "The HTTP API").  Reads nothing
 * of the spool; the caller is authenticated.  Returns the status sent.
 */
int api_cron_next(struct api_ctx *c, struct buf *out);

/* --- GET /tasks/{id}/logs (api_logs.c) ------------------------------- */

/*
 * GET /tasks/{id}/logs?attempt=&stream=&offset=&limit=: one page (at
 * most limit bytes, default 64 KiB, at most 256 KiB) of what attempt
 * (default the latest) of the caller's task id (borrowed, valid) wrote
 * to stream (stdout or stderr) from byte offset on, from
 * logs/<id>/<attempt>.out or .err: {"requestId", "attempt", "stream",
 * "offset", "length", "nextOffset", "size", "complete", "encoding",
 * "data"}, data a JSON string when the page is UTF-8 without NUL, else
 * base64.  Another app's task is 404 TASK_NOT_FOUND.  Returns the status
 * sent.
 */
int api_logs(struct api_ctx *c, struct buf *out, const char *id);

/* --- POST /tasks/{id}/retry (api_retry.c) ---------------------------- */

/*
 * POST /tasks/{id}/retry: the caller's FAILED or CANCELLED task id
 * (borrowed, valid) back to incoming/ with its history (coord/retry.h):
 * 202 and the task's view; 409 TASK_NOT_RETRYABLE with "taskStatus" for
 * a task in another state; 404 TASK_NOT_FOUND for another app's or an
 * unknown one.  The body is empty or {}.  Returns the status sent.
 */
int api_retry(struct api_ctx *c, struct buf *out, const char *id);

/* --- /jobs (api_jobs.c) --------------------------------------------- */

/*
 * The recurring jobs of the caller's task codes (README.md, "Recurring
 * jobs over HTTP"), by method (c->method) and path: code NULL is /jobs
 * (GET: a page of views, ?limit= 1..1000, default 100, &after=<jobCode>;
 * POST: create, 201, 409 JOB_EXISTS); code (borrowed, valid) with action
 * NULL is /jobs/{code} (GET: the view with the next 5 fires; PUT: create
 * 201 or replace 200, idempotent, the body's jobCode that of the path;
 * DELETE: 200); action "run", "enable" or "disable" (POST, empty body):
 * `taskspool jobs run-now` (202, the caller's task; 409
 * JOB_RUN_IN_PROGRESS for a forbid job's live run), enable, disable.  A
 * job of a task code not granted is 404 JOB_NOT_FOUND.  Returns the
 * status sent.
 */
int api_jobs(struct api_ctx *c, struct buf *out, const char *code,
    const char *action);

/*
 * The next n fires of job j (borrowed) after now, or after its createdAt
 * when that is later (the leader fires only after it), in the zone it
 * fires in (its timezone, else the host's) and in UTC: a new array of
 * {"local", "utc"} (RFC 3339 with ms when not whole), empty when j is
 * disabled, fixed-delay or its zone does not load; zone (zlen bytes) gets
 * the zone's name, "" when it does not load.  NULL on ENOMEM.
 */
json_t *api_job_fires(const struct job *j, int n, char *zone, size_t zlen);

/* --- the web console (api_console.c, api_console_pages.c) ----------- */

#define CONSOLE_SESSION_S	28800	/* a console session lasts 8 h */

/* The logged-in app of one console request. */
struct console_session {
	char app_id[APPS_ID_MAX + 1];
	char csrf[65];			/* the session's CSRF token, hex */
	char sid_name[96];		/* its file in state/console/ */
	long long expires;		/* Unix s */
	int role;			/* APPS_ROLE_READ or _OPERATE */
	struct app app;			/* its rights now (secrets wiped) */
};

/*
 * /console and everything under it (c->path starts with "/console"):
 * answers GET and POST with HTML (README.md, "The web console"); not
 * TS1-signed: a login makes a session cookie.  Returns the status sent.
 */
int api_console(struct api_ctx *c, struct buf *out);

/* Send html (borrowed) as text/html with the console's security
 * headers.  Returns status. */
int console_page(struct api_ctx *c, struct buf *out, int status,
    const struct buf *html);

/* 303 See Other to the path to (borrowed).  Returns 303. */
int console_redirect(struct api_ctx *c, struct buf *out, const char *to);

/* A page with title and one message text (both escaped); s (may be
 * NULL) for the header.  Returns status. */
int console_message(struct api_ctx *c, struct buf *out, int status,
    const struct console_session *s, const char *title, const char *text);

/*
 * The value of name in the form-encoded s (len bytes; WHATWG URL
 * application/x-www-form-urlencoded: '+' is a space, %XX a byte) into
 * out (outlen bytes).  Returns 0, -1 when absent, 1 when it does not
 * fit, holds a bad escape or a NUL.
 */
int console_field(const char *s, size_t len, const char *name, char *out,
    size_t outlen);

/* 503 as a console page (with its headers and Retry-After: 1) after a
 * store failure: what and strerror(errno) logged on stderr, not shown.
 * s may be NULL.  Returns 503. */
int console_unavailable(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *what);

/* A GET page p (the path after "/console") for s.  Returns the status. */
int console_get(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *p);

/* A POST action p for s, form body (len bytes; its csrf checked).
 * Returns the status sent. */
int console_action(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *p, const char *body,
    size_t len);

/* --- HTML (api_html.c) ----------------------------------------------- */

/* Append the n bytes at s (borrowed) to b as HTML text, safe in element
 * content and in a quoted attribute: & < > " ' escaped, bad UTF-8 as
 * U+FFFD, controls but tab and LF as their control pictures. */
void html_text_n(struct buf *b, const char *s, size_t n);
void html_text(struct buf *b, const char *s);	/* NULL: nothing */

/* Append markup of this file's callers (never outside bytes), printf
 * style, at most 2047 bytes. */
void html_raw(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The stylesheet (static) and its length. */
const char *html_css(size_t *len);

/* The page's start: doctype, title, stylesheet, the header with the
 * navigation, the app and its role (may be NULL) and the logout form
 * when app (borrowed) is not NULL. */
void html_head(struct buf *b, const char *title, const char *app,
    const char *role, const char *csrf);
void html_foot(struct buf *b);

#endif
