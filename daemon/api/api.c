/*
 * api — the entry point of taskspool.cgi (api.h, API.md): api_handle, the
 * route and method of PATH_INFO, the body rules of §2.3, and the answers
 * every endpoint sends (CGI responses, RFC 9457 problems).  The endpoints
 * live in the other api_*.c files (api_impl.h lists them).
 *
 * The order of checks is API.md §3.4's and tests rely on it: route and
 * method, query syntax, CONTENT_LENGTH and media type, the body, the four
 * auth headers, the app, the timestamp window, the signature, the nonce,
 * the AppId's rate limit, then the endpoint.  The nonce is recorded only
 * after the signature verified, so unauthenticated traffic cannot fill
 * the store or burn a caller's nonces; the rate limit counts only
 * authenticated requests with a fresh nonce, so neither forged nor
 * replayed requests can use up an AppId's budget.  /health and /metrics
 * are unsigned.
 *
 * Invariant: every answer, errors included, is one complete response
 * built in out; the body is read exactly CONTENT_LENGTH bytes, never to
 * EOF.  handle() is the §3.4 order of checks read top to bottom (the
 * route from route_match()).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api/api_impl.h"
#include "core/batch.h"
#include "core/jsontext.h"
#include "core/suggest.h"
#include "core/tstime.h"

/* --- responses ------------------------------------------------------ */

static const char *
reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 303: return "See Other";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

int
api_respond(struct api_ctx *c, struct buf *out, int status, const char *ctype,
    const char *body, size_t len)
{
	buf_reset(out);
	buf_printf(out, "Status: %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nCache-Control: no-store\r\n"
	    "X-Trace-Id: %s\r\n", status, reason_phrase(status), ctype, len,
	    c->trace);
	if (c->hdr.len > 0)
		buf_append(out, c->hdr.data, c->hdr.len);
	buf_puts(out, "\r\n");
	buf_append(out, body, len);
	return status;
}

/* Send o (stolen) as application/json with status. */
int
api_respond_json(struct api_ctx *c, struct buf *out, int status, json_t *o)
{
	char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	int rc;

	json_decref(o);
	if (s == NULL)
		return api_respond(c, out, 500, "application/problem+json",
		    "{\"code\":\"INTERNAL_ERROR\"}", 25);
	rc = api_respond(c, out, status, "application/json", s, strlen(s));
	free(s);
	return rc;
}

static const char *
problem_title(const char *code)
{
	static const char *const t[][2] = {
		{ "INVALID_QUERY", "Query string not allowed" },
		{ "INVALID_CONTENT_LENGTH", "Content-Length is not a number" },
		{ "INCOMPLETE_BODY", "Request body shorter than "
		    "Content-Length" },
		{ "INVALID_JSON", "Request body is not valid JSON" },
		{ "AUTH_HEADER_MISSING", "Authentication header missing" },
		{ "AUTH_HEADER_MALFORMED", "Authentication header malformed" },
		{ "APP_NOT_FOUND", "Unknown AppId" },
		{ "TIMESTAMP_EXPIRED", "Timestamp outside the allowed window" },
		{ "SIGNATURE_MISMATCH", "Signature does not match" },
		{ "NONCE_REPLAYED", "Nonce already used" },
		{ "APP_DISABLED", "AppId disabled" },
		{ "TASK_CODE_FORBIDDEN", "Task code not granted to this "
		    "AppId" },
		{ "NOT_FOUND", "No such resource" },
		{ "TASK_NOT_FOUND", "No such task" },
		{ "REQUEST_ID_CONFLICT", "requestId used by another "
		    "submitter" },
		{ "TASK_FINISHED", "Task already finished" },
		{ "TASK_NOT_RETRYABLE", "Task is not failed or cancelled" },
		{ "METHOD_NOT_ALLOWED", "Method not allowed" },
		{ "LENGTH_REQUIRED", "Content-Length required" },
		{ "PAYLOAD_TOO_LARGE", "Request body too large" },
		{ "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be "
		    "application/json" },
		{ "VALIDATION_FAILED", "Request body failed validation" },
		{ "UNKNOWN_TASK_CODE", "Unknown task code" },
		{ "UNKNOWN_DEPENDENCY", "dependsOn names an unknown task" },
		{ "IDEMPOTENCY_KEY_REUSED", "requestId reused with a "
		    "different body" },
		{ "INVALID_CALLBACK_URL", "Invalid callback URL" },
		{ "CALLBACK_URL_FORBIDDEN", "Callback URL not allowed" },
		{ "CALLBACK_URL_UNRESOLVABLE", "Callback host does not "
		    "resolve" },
		{ "RATE_LIMITED", "Too many requests for this AppId" },
		{ "SERVICE_UNAVAILABLE", "Service unavailable" },
		{ "PERMISSION_DENIED", "The server may not use its own "
		    "files" },
		{ "CALLBACK_SECRET_MISSING", "No secret to sign the callback "
		    "with" },
		{ "BATCH_NOT_FOUND", "No such batch" },
		{ "BATCH_CLOSED", "Batch closed" },
		{ "BATCH_ID_TAKEN", "Another app's batch" },
		{ "JOB_NOT_FOUND", "No such job" },
		{ "JOB_EXISTS", "Job already exists" },
		{ "JOB_RUN_IN_PROGRESS", "A run of the job is pending or "
		    "running" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(t[i][0], code) == 0)
			return t[i][1];
	return "Internal error";
}

/* A problem response (RFC 9457; API.md §5); see api_impl.h. */
int
api_problem(struct api_ctx *c, struct buf *out, int status, const char *code,
    json_t *extras, const char *fmt, ...)
{
	char type[96], detail[1024];
	json_t *o = json_object();
	char *s;
	va_list ap;
	size_t i;
	int rc;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	i = (size_t)snprintf(type, sizeof(type), "urn:ts:problem:");
	for (const char *p = code; *p != '\0' && i + 1 < sizeof(type); p++)
		type[i++] = *p == '_' ? '-' : (char)(*p >= 'A' && *p <= 'Z' ?
		    *p + 32 : *p);
	type[i] = '\0';
	json_object_set_new(o, "type", json_string(type));
	json_object_set_new(o, "title", json_string(problem_title(code)));
	json_object_set_new(o, "status", json_integer(status));
	json_object_set_new(o, "detail", json_string(detail));
	json_object_set_new(o, "instance", json_string(c->instance));
	json_object_set_new(o, "code", json_string(code));
	if (extras != NULL) {
		json_object_update(o, extras);
		json_decref(extras);
	}
	json_object_set_new(o, "traceId", json_string(c->trace));
	if (status == 401)
		buf_puts(&c->hdr, "WWW-Authenticate: TS1-HMAC-SHA256\r\n");
	if (status == 503)
		buf_puts(&c->hdr, "Retry-After: 1\r\n");
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL)
		s = strdup("{\"code\":\"INTERNAL_ERROR\"}");
	rc = api_respond(c, out, status, "application/problem+json", s,
	    s != NULL ? strlen(s) : 0);
	free(s);
	return rc;
}

int
api_denied(struct api_ctx *c, struct buf *out, const char *what,
    const char *path)
{
	struct passwd *pw = getpwuid(geteuid());
	struct group *gr;
	struct stat st;
	char user[64], group[64];

	snprintf(user, sizeof(user), "%s", pw != NULL ? pw->pw_name : "?");
	if (stat(path, &st) != 0)
		snprintf(group, sizeof(group), "GROUP");	/* unseen */
	else if ((gr = getgrgid(st.st_gid)) != NULL)
		snprintf(group, sizeof(group), "%s", gr->gr_name);
	else
		snprintf(group, sizeof(group), "%ld", (long)st.st_gid);
	fprintf(stderr, "taskspool.cgi: trace %s: %s (user %s, uid %ld)\n",
	    c->trace, what, user, (long)geteuid());
	/* A file of group root: joining root's group is no fix. */
	if (stat(path, &st) == 0 && st.st_gid == 0)
		return api_problem(c, out, 500, "PERMISSION_DENIED", NULL,
		    "%s (to user %s, uid %ld, which taskspool.cgi runs as); "
		    "this lasts until an operator fixes it (retrying does not "
		    "help). %s belongs to group root, which the user must not "
		    "join: give the spool and its files to a group of the "
		    "user's (taskspool init --group GROUP %s; for a file: "
		    "chgrp GROUP FILE && chmod g+r FILE; usermod -aG GROUP %s, "
		    "then restart the web server)", what, user,
		    (long)geteuid(), path, c->rq->cfg != NULL &&
		    c->rq->cfg->spool[0] != '\0' ? c->rq->cfg->spool : "SPOOL",
		    user);
	return api_problem(c, out, 500, "PERMISSION_DENIED", NULL, "%s (to "
	    "user %s, uid %ld, which taskspool.cgi runs as); this lasts "
	    "until an operator fixes it (retrying does not help). Add the "
	    "user to the group of %s (usermod -aG %s %s, then restart the web "
	    "server), or give the spool and its files to a group of the "
	    "user's (taskspool init --group GROUP %s; for a file: chgrp GROUP "
	    "FILE && chmod g+r FILE)", what, user, (long)geteuid(), path,
	    group, user, c->rq->cfg != NULL && c->rq->cfg->spool[0] != '\0' ?
	    c->rq->cfg->spool : "SPOOL");
}

/* 503 after a store failure: logged once here, without secrets.  A
 * permission error is no passing failure: api_denied. */
int
api_unavailable(struct api_ctx *c, struct buf *out, const char *what)
{
	if ((errno == EACCES || errno == EPERM) && what[0] == '/')
		return api_denied(c, out, what, c->rq->cfg->spool);
	if (errno == EACCES || errno == EPERM) {
		char w[4200];

		snprintf(w, sizeof(w), "%s/%s: %s", c->rq->cfg->spool, what,
		    strerror(errno));
		return api_denied(c, out, w, c->rq->cfg->spool);
	}
	fprintf(stderr, "taskspool.cgi: trace %s: %s: %s\n", c->trace, what,
	    strerror(errno));
	return api_problem(c, out, 503, "SERVICE_UNAVAILABLE", NULL, "the task "
	    "store cannot be used right now; retry shortly");
}

json_t *
api_one_member(const char *k, json_t *v)
{
	json_t *o = json_object();

	json_object_set_new(o, k, v);
	return o;
}

/* 422 VALIDATION_FAILED naming field; title NULL = the code's title. */
static int
invalid_field(struct api_ctx *c, struct buf *out, const char *title,
    const char *field, const char *reason)
{
	json_t *e = json_object(), *a = json_array();
	json_t *x = api_one_member("errors", a);

	json_object_set_new(e, "field", json_string(field));
	json_object_set_new(e, "reason", json_string(reason));
	json_array_append_new(a, e);
	if (title != NULL)
		json_object_set_new(x, "title", json_string(title));
	return api_problem(c, out, 422, "VALIDATION_FAILED", x, "%s: %s", field,
	    reason);
}

int
api_validation(struct api_ctx *c, struct buf *out, const char *field,
    const char *reason)
{
	return invalid_field(c, out, NULL, field, reason);
}

int
api_unknown_member(struct api_ctx *c, struct buf *out, const char *name,
    const char *const *known, size_t n)
{
	char field[128], reason[128];
	const char *near = suggest_name(name, known, n);

	snprintf(field, sizeof(field), "%s", name);
	if (near != NULL)
		snprintf(reason, sizeof(reason), "unknown member (did you mean "
		    "\"%s\"?)", near);
	else
		snprintf(reason, sizeof(reason), "unknown member");
	return invalid_field(c, out, NULL, field, reason);
}

/* A query parameter of a list request is invalid: same code, own title. */
int
api_query_invalid(struct api_ctx *c, struct buf *out, const char *field,
    const char *reason)
{
	return invalid_field(c, out, "Query parameter failed validation",
	    field, reason);
}

/* --- request parts --------------------------------------------------- */

int
api_qdecode(const char *s, const char *e, char *out, size_t outlen)
{
	size_t n = 0;

	while (s < e) {
		int ch = (unsigned char)*s;

		if (ch == '%' && e - s >= 3) {
			unsigned int x;

			if (sscanf(s + 1, "%2x", &x) != 1)
				return -1;
			ch = (int)x;
			s += 3;
		} else
			s++;
		if (n + 1 >= outlen || ch == 0)
			return -1;
		out[n++] = (char)ch;
	}
	out[n] = '\0';
	return 0;
}

int
api_query_read(struct api_ctx *c, struct buf *out,
    const struct api_param *params, size_t n, unsigned *seen)
{
	const char *qs = api_env(c, "QUERY_STRING");
	char why[128];

	*seen = 0;
	for (const char *s = qs != NULL ? qs : ""; *s != '\0';) {
		const char *e = s + strcspn(s, "&"), *eq = memchr(s, '=',
		    (size_t)(e - s));
		char name[32];
		size_t i, used = 0;

		if (e == s) {
			s = *e == '&' ? e + 1 : e;
			continue;
		}
		if (api_qdecode(s, eq != NULL ? eq : e, name, sizeof name) != 0)
			return api_query_invalid(c, out, "query", "a parameter "
			    "name is too long or not decodable");
		if (name[0] == '\0')
			return api_query_invalid(c, out, "query", "a parameter "
			    "without a name (\"=value\")");
		for (i = 0; i < n; i++)
			if (strcmp(name, params[i].name) == 0)
				break;
		/* An unknown name is echoed: printable ASCII only, so it is a
		 * JSON string. */
		for (char *p = name; i == n && *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 ||
			    (unsigned char)*p > 0x7e)
				*p = '?';
		if (i == n) {
			used = (size_t)snprintf(why, sizeof why, "unknown "
			    "parameter; the known ones are");
			for (size_t k = 0; k < n && used < sizeof why; k++)
				used += (size_t)snprintf(why + used,
				    sizeof why - used, "%s %s", k == 0 ? "" :
				    k + 1 == n ? " and" : ",", params[k].name);
			return api_query_invalid(c, out, name, why);
		}
		if (*seen & 1u << i)
			return api_query_invalid(c, out, name, "given more "
			    "than once");
		*seen |= 1u << i;
		/* API.md 3.3: a name without '=' has the empty value. */
		if (api_qdecode(eq != NULL ? eq + 1 : e, e, params[i].val,
		    params[i].room) != 0) {
			(void)snprintf(why, sizeof why, "too long (at most %zu "
			    "bytes, percent-encoded) or holding a NUL byte",
			    params[i].room - 1);
			return api_query_invalid(c, out, name, why);
		}
		s = *e == '&' ? e + 1 : e;
	}
	return 0;
}

const char *
api_env(struct api_ctx *c, const char *name)
{
	return c->rq->getenv(c->rq->ctx, name);
}

/* Copy the value of name with leading/trailing spaces and tabs removed
 * into out; returns 0, or -1 when unset, 1 when too long. */
int
api_header(struct api_ctx *c, const char *name, char *out, size_t outlen)
{
	const char *v = api_env(c, name), *e;

	if (v == NULL)
		return -1;
	v += strspn(v, " \t");
	e = v + strlen(v);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if ((size_t)(e - v) >= outlen)
		return 1;
	memcpy(out, v, (size_t)(e - v));
	out[e - v] = '\0';
	return 0;
}


/* Content-Type application/json, optionally "; charset=utf-8". */
static int
json_media_type(const char *ct)
{
	const char *p;

	if (ct == NULL)
		return 0;
	ct += strspn(ct, " \t");
	if (strncasecmp(ct, "application/json", 16) != 0)
		return 0;
	p = ct + 16;
	p += strspn(p, " \t");
	if (*p == '\0')
		return 1;
	if (*p++ != ';')
		return 0;
	p += strspn(p, " \t");
	if (strncasecmp(p, "charset", 7) != 0)
		return 0;
	p += 7;
	p += strspn(p, " \t");
	if (*p++ != '=')
		return 0;
	p += strspn(p, " \t");
	if (*p == '"') {
		if (strncasecmp(p + 1, "utf-8\"", 6) != 0)
			return 0;
		p += 7;
	} else {
		if (strncasecmp(p, "utf-8", 5) != 0)
			return 0;
		p += 5;
	}
	p += strspn(p, " \t");
	return *p == '\0';
}

/* Read exactly n bytes of the body (§2.3): 0, or -1 on early EOF/error. */
int
api_read_body(const struct api_request *rq, char *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = rq->body_read != NULL ?
		    rq->body_read(rq->ctx, b + got, n - got) :
		    read(rq->in_fd, b + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* --- spool helpers ---------------------------------------------------- */

/* Open (creating when needed) state/<name>/; returns a dirfd or -1. */
int
api_state_subdir(struct api_ctx *c, const char *name)
{
	int fd = openat(c->sp.dir[SPOOL_STATE], name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		int made = mkdirat(c->sp.dir[SPOOL_STATE], name, 02770) == 0;

		if (!made && errno != EEXIST)
			return -1;
		fd = openat(c->sp.dir[SPOOL_STATE], name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* The web server's umask (often 022) must not take the
		 * group's write bit: the daemons' user, in the spool's
		 * group, removes records here (taskspool purge). */
		if (made && fd >= 0)
			(void)fchmod(fd, 02770);
	} else if (fd >= 0) {
		struct stat st;

		/* Repair one made under that umask by an older version. */
		if (fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
		    (st.st_mode & 020) == 0)
			(void)fchmod(fd, (st.st_mode & 07777) | 02070);
	}
	return fd;
}

/* Copy the string src into dst (size bytes), truncating. */
void
api_copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

char *
api_fmt_time(char *b, int64_t ms)
{
	return tstime_format_ms(b, TSTIME_BUF, ms);
}

json_t *
api_time_or_null(int64_t ms)
{
	char b[TSTIME_BUF];

	return ms < 0 ? json_null() : json_string(api_fmt_time(b, ms));
}
/* --- JSON body parsing (§4.1 "JSON rules") ---------------------------- */

static int
depth_ok(json_t *v, int depth)
{
	size_t i;
	const char *k;
	json_t *e;

	if (!json_is_array(v) && !json_is_object(v))
		return 1;
	if (depth > TASK_DEPTH_MAX)
		return 0;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if (!depth_ok(e, depth + 1))
				return 0;
	} else {
		json_object_foreach(v, k, e)
			if (!depth_ok(e, depth + 1))
				return 0;
	}
	return 1;
}

/*
 * Parse the body as a JSON object (UTF-8, no BOM, no duplicate members,
 * no \u0000, depth <= 32 counting the top object).  Returns the new object
 * or NULL after sending 400 INVALID_JSON.
 */
json_t *
api_parse_body(struct api_ctx *c, struct buf *out)
{
	json_error_t e;
	json_t *o;

	if (c->body_len >= 3 && memcmp(c->body, "\xef\xbb\xbf", 3) == 0) {
		api_problem(c, out, 400, "INVALID_JSON",
		    api_one_member("offset", json_integer(0)), "the body "
		    "starts with a byte order mark");
		return NULL;
	}
	o = jsontext_loadb(c->body, c->body_len, JSON_REJECT_DUPLICATES, &e);
	if (o == NULL) {
		api_problem(c, out, 400, "INVALID_JSON",
		    api_one_member("offset", json_integer(e.position)), "%s",
		    e.text);
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		api_problem(c, out, 400, "INVALID_JSON", NULL, "the body must "
		    "be a JSON object");
		return NULL;
	}
	if (!depth_ok(o, 0)) {
		json_decref(o);
		api_problem(c, out, 400, "INVALID_JSON", NULL, "nested deeper "
		    "than %d levels", TASK_DEPTH_MAX);
		return NULL;
	}
	return o;
}
/* --- the entry point ------------------------------------------------- */

enum route { R_NONE, R_TASKS, R_TASK, R_HEALTH, R_METRICS, R_REGISTER,
	R_HOLD, R_RELEASE, R_BATCH, R_BATCH_CLOSE, R_BATCH_HOLD,
	R_BATCH_RELEASE, R_CRON_NEXT, R_LOGS, R_RETRY, R_BULK, R_JOBS, R_JOB,
	R_JOB_ACTION };

/*
 * Whether p (the path after "/tasks/") is "{id}<action>", action being
 * "/hold", "/release", "/retry" or "/logs", with a valid requestId;
 * the id is then copied into idbuf (TASK_ID_MAX + 1 bytes).  Returns 1 or 0.
 */
static int
task_action(const char *p, const char *action, char *idbuf)
{
	const char *slash = strchr(p, '/');
	size_t n = slash != NULL ? (size_t)(slash - p) : 0;

	if (n == 0 || n > TASK_ID_MAX || strcmp(slash, action) != 0)
		return 0;
	memcpy(idbuf, p, n);
	idbuf[n] = '\0';
	return spool_id_ok(idbuf);
}

/* /batches/{batchId} and /batches/{batchId}/close, /hold, /release
 * (api_batches.c):
 * the part after "/batches/" is b; as route_match, *id pointing to b
 * (for the close, the batchId ends at the next '/'). */
static enum route
route_batch(const char *b, int get, int post, const char **allow, int *ok,
    const char **id)
{
	char bid[BATCH_ID_MAX + 1];
	const char *slash = strchr(b, '/');
	size_t n = slash != NULL ? (size_t)(slash - b) : strlen(b);

	if (n == 0 || n > BATCH_ID_MAX)
		return R_NONE;
	memcpy(bid, b, n);
	bid[n] = '\0';
	if (!batch_id_ok(bid))
		return R_NONE;
	*id = b;
	if (slash == NULL) {
		*allow = "GET";
		*ok = get;
		return R_BATCH;
	}
	*allow = "POST";
	*ok = post;
	if (strcmp(slash, "/close") == 0)
		return R_BATCH_CLOSE;
	if (strcmp(slash, "/hold") == 0)
		return R_BATCH_HOLD;
	if (strcmp(slash, "/release") == 0)
		return R_BATCH_RELEASE;
	return R_NONE;
}

/*
 * /jobs/{jobCode} and /jobs/{jobCode}/run, /enable, /disable
 * (api_jobs.c): the part after "/jobs/" is j; the jobCode is copied into
 * code (TASK_CODE_MAX + 1 bytes) and *action points to the action
 * (borrowed from j, without the '/'), NULL for the job itself.
 */
static enum route
route_job(const char *j, int get, int post, int put, int del,
    const char **allow, int *ok, char *code, const char **action)
{
	const char *slash = strchr(j, '/');
	size_t n = slash != NULL ? (size_t)(slash - j) : strlen(j);

	if (n == 0 || n > TASK_CODE_MAX)
		return R_NONE;
	memcpy(code, j, n);
	code[n] = '\0';
	if (!spool_code_ok(code))
		return R_NONE;
	if (slash == NULL) {
		*action = NULL;
		*allow = "GET, PUT, DELETE";
		*ok = get || put || del;
		return R_JOB;
	}
	*action = slash + 1;
	*allow = "POST";
	*ok = post;
	if (strcmp(slash, "/run") == 0)
		return R_JOB_ACTION;
	if (strcmp(slash, "/enable") == 0)
		return R_JOB_ACTION;
	if (strcmp(slash, "/disable") == 0)
		return R_JOB_ACTION;
	return R_NONE;
}

/*
 * The route of the path p (PATH_INFO, borrowed) for a request whose
 * method is GET, POST or DELETE (get, post, del), §2.1: R_NONE when p is
 * no resource; else *allow the methods it allows (a static string), *ok
 * whether the method is one of them (the /jobs/ routes: route_job), and
 * for R_TASK *id the task's id
 * (borrowed from p; for R_HOLD, R_RELEASE, R_RETRY and R_LOGS copied
 * into idbuf, TASK_ID_MAX + 1 bytes; for R_BATCH and R_BATCH_CLOSE, _HOLD and
 * _RELEASE borrowed, the batchId ending at the next '/').
 */
static enum route
route_match(const char *p, int get, int post, int del, const char **allow,
    int *ok, const char **id, char *idbuf)
{
	enum route r = R_NONE;

	if (strcmp(p, "/jobs") == 0) {
		*allow = "GET, POST";
		*ok = get || post;
		return R_JOBS;
	}

	if (strcmp(p, "/tasks") == 0) {
		r = R_TASKS;
		*allow = "GET, POST";
		*ok = get || post;
	} else if (strcmp(p, "/tasks:bulk") == 0) {
		r = R_BULK;
		*allow = "POST";
		*ok = post;
	} else if (strncmp(p, "/tasks/", 7) == 0 && spool_id_ok(p + 7)) {
		r = R_TASK;
		*id = p + 7;
		*allow = "GET, DELETE";
		*ok = get || del;
	} else if (strncmp(p, "/tasks/", 7) == 0 && task_action(p + 7, "/hold",
	    idbuf)) {
		r = R_HOLD;
		*id = idbuf;
		*allow = "POST";
		*ok = post;
	} else if (strncmp(p, "/tasks/", 7) == 0 && task_action(p + 7,
	    "/release", idbuf)) {
		r = R_RELEASE;
		*id = idbuf;
		*allow = "POST";
		*ok = post;
	} else if (strncmp(p, "/tasks/", 7) == 0 && task_action(p + 7,
	    "/retry", idbuf)) {
		r = R_RETRY;
		*id = idbuf;
		*allow = "POST";
		*ok = post;
	} else if (strncmp(p, "/tasks/", 7) == 0 && task_action(p + 7,
	    "/logs", idbuf)) {
		r = R_LOGS;
		*id = idbuf;
		*allow = "GET";
		*ok = get;
	} else if (strcmp(p, "/health") == 0) {
		r = R_HEALTH;
		*allow = "GET";
		*ok = get;
	} else if (strcmp(p, "/metrics") == 0) {
		r = R_METRICS;
		*allow = "GET";
		*ok = get;
	} else if (strcmp(p, "/callbacks/register") == 0) {
		r = R_REGISTER;
		*allow = "POST";
		*ok = post;
	} else if (strcmp(p, "/cron/next") == 0) {
		r = R_CRON_NEXT;
		*allow = "GET";
		*ok = get;
	} else if (strncmp(p, "/batches/", 9) == 0)
		r = route_batch(p + 9, get, post, allow, ok, id);
	return r;
}

static int
handle(struct api_ctx *c, struct buf *out)
{
	const char *p = c->path, *allow = NULL, *m = c->method, *q, *cl;
	enum route r = R_NONE;
	int post = strcmp(m, "POST") == 0, get = strcmp(m, "GET") == 0;
	int del = strcmp(m, "DELETE") == 0, put = strcmp(m, "PUT") == 0;
	int ok = 0, rc;
	char *body = NULL;
	size_t n = 0;
	const char *id = NULL, *action = NULL;
	char idbuf[TASK_ID_MAX + 1], code[TASK_CODE_MAX + 1];

	/* 1. Route and method (§2.1). */
	if (strncmp(p, "/jobs/", 6) == 0)
		r = route_job(p + 6, get, post, put, del, &allow, &ok, code,
		    &action);
	else
		r = route_match(p, get, post, del, &allow, &ok, &id, idbuf);
	if (r == R_NONE)
		return api_problem(c, out, 404, "NOT_FOUND", NULL, "no "
		    "resource %s", c->instance);
	if (!ok) {
		buf_printf(&c->hdr, "Allow: %s\r\n", allow);
		return api_problem(c, out, 405, "METHOD_NOT_ALLOWED", NULL,
		    "%s is not allowed here; allowed: %s", m, allow);
	}
	/* 2. Query syntax (§3.3 step 2). */
	q = api_env(c, "QUERY_STRING");
	if (q != NULL && !sign_query_ok(q))
		return api_problem(c, out, 400, "INVALID_QUERY", NULL, "the "
		    "query string holds '+', a byte outside the allowed set, "
		    "or a bad %% escape; encode space as %%20 and plus as "
		    "%%2B");
	/* 3. Content-Length and media type (§2.3). */
	cl = api_env(c, "CONTENT_LENGTH");
	if (cl != NULL && cl[0] == '\0')
		cl = NULL;
	if (cl == NULL && (post || put))
		return api_problem(c, out, 411, "LENGTH_REQUIRED", NULL, "a "
		    "%s needs Content-Length (chunked bodies are not "
		    "accepted)", m);
	if (cl != NULL) {
		if (strlen(cl) > 10 || strspn(cl, "0123456789") != strlen(cl))
			return api_problem(c, out, 400,
			    "INVALID_CONTENT_LENGTH", NULL, "Content-Length "
			    "must be 1 to 10 digits");
		if (strtoull(cl, NULL, 10) > API_BODY_MAX)
			return api_problem(c, out, 413, "PAYLOAD_TOO_LARGE",
			    api_one_member("limit", json_integer(API_BODY_MAX)),
			    "the body may be at most %d bytes", API_BODY_MAX);
		n = (size_t)strtoull(cl, NULL, 10);
	}
	if ((post || put) && !json_media_type(api_env(c, "CONTENT_TYPE")))
		return api_problem(c, out, 415, "UNSUPPORTED_MEDIA_TYPE", NULL,
		    "Content-Type must be application/json");
	/* 4. The body: exactly CONTENT_LENGTH bytes, never to EOF. */
	if ((body = malloc(n + 1)) == NULL)
		return api_unavailable(c, out, "body buffer");
	if (api_read_body(c->rq, body, n) != 0) {
		free(body);
		return api_problem(c, out, 400, "INCOMPLETE_BODY", NULL, "the "
		    "body ended before Content-Length bytes");
	}
	body[n] = '\0';
	c->body = body;
	c->body_len = n;
	if (sign_sha256_hex(body, n, c->body_hex) != 0) {
		free(body);
		return api_unavailable(c, out, "SHA-256");
	}
	{
		char why[1024];

		if (spool_open(&c->sp, c->rq->cfg->spool, NULL,
		    (int)c->rq->cfg->fsync, why, sizeof(why)) != 0) {
			free(body);
			return api_unavailable(c, out, why);
		}
		c->sp_open = 1;
	}
	if (r == R_HEALTH)
		rc = api_health(c, out);
	else if (r == R_METRICS)
		rc = api_metrics(c, out);
	else if ((rc = api_authenticate(c, out)) != 0 ||
	    (rc = api_rate_check(c, out)) != 0)
		;
	else if (r == R_TASKS && post)
		rc = api_submit(c, out);
	else if (r == R_BULK)
		rc = api_submit_bulk(c, out);
	else if (r == R_TASKS)
		rc = api_list(c, out);
	else if (r == R_TASK && get)
		rc = api_get(c, out, id);
	else if (r == R_TASK)
		rc = api_cancel(c, out, id);
	else if (r == R_HOLD || r == R_RELEASE)
		rc = api_hold(c, out, id, r == R_RELEASE);
	else if (r == R_BATCH)
		rc = api_batch_get(c, out, id);
	else if (r == R_CRON_NEXT)
		rc = api_cron_next(c, out);
	else if (r == R_LOGS)
		rc = api_logs(c, out, id);
	else if (r == R_RETRY)
		rc = api_retry(c, out, id);
	else if (r == R_JOBS)
		rc = api_jobs(c, out, NULL, NULL);
	else if (r == R_JOB || r == R_JOB_ACTION)
		rc = api_jobs(c, out, code, action);
	else if (r == R_BATCH_CLOSE || r == R_BATCH_HOLD ||
	    r == R_BATCH_RELEASE) {
		char bid[BATCH_ID_MAX + 1];

		snprintf(bid, sizeof(bid), "%.*s", (int)strcspn(id, "/"), id);
		rc = r == R_BATCH_CLOSE ? api_batch_close(c, out, bid) :
		    api_batch_hold(c, out, bid, r == R_BATCH_RELEASE);
	}
	else
		rc = api_register(c, out);
	free(body);
	return rc;
}

int
api_handle(const struct api_request *rq, struct buf *out)
{
	struct api_ctx c;
	unsigned char r[16];
	const char *pi;
	int rc;

	memset(&c, 0, sizeof(c));
	c.rq = rq;
	buf_init(&c.hdr, 0);
	/* Not a secret: getrandom(2) directly, which spares the CSPRNG's
	 * start-up on requests that need no secret. */
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		memset(r, 0, sizeof(r));
	for (int i = 0; i < 16; i++)
		snprintf(c.trace + 2 * i, 3, "%02x", r[i]);
	c.method = rq->getenv(rq->ctx, "REQUEST_METHOD");
	if (c.method == NULL)
		c.method = "";
	pi = rq->getenv(rq->ctx, "PATH_INFO");
	c.path = pi != NULL ? pi : "";
	snprintf(c.instance, sizeof(c.instance), "%s%s", strcmp(c.path,
	    "/metrics") == 0 ? "" : "/api", c.path);
	/* The path is echoed in problem bodies: keep it printable ASCII,
	 * so it is always a valid JSON string. */
	for (char *p = c.instance; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	if (rq->config_denied != NULL)
		rc = api_denied(&c, out, rq->config_error, rq->config_denied);
	else if (rq->config_error != NULL) {
		/* Permanent until an operator acts: 500, not 503. */
		fprintf(stderr, "taskspool.cgi: trace %s: configuration: %s\n",
		    c.trace, rq->config_error);
		rc = api_problem(&c, out, 500, "INTERNAL_ERROR", NULL, "the "
		    "server's configuration cannot be used; the web server's "
		    "error log names the problem (trace %s)", c.trace);
	} else if (strncmp(c.path, "/console", 8) == 0 && (c.path[8] ==
	    '\0' || c.path[8] == '/'))
		rc = api_console(&c, out);
	else
		rc = handle(&c, out);
	OPENSSL_cleanse(&c.app, sizeof(c.app));
	if (c.sp_open)
		spool_close(&c.sp);
	buf_fini(&c.hdr);
	return rc;
}
