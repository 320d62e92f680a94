/*
 * api — routes and checks of taskspool.cgi; see api.h and API.md.
 *
 * The order of checks is API.md §3.4's and tests rely on it: route and
 * method, query syntax, CONTENT_LENGTH and media type, the body, the four
 * auth headers, the app, the timestamp window, the signature, the nonce,
 * the AppId's rate limit, then the endpoint.  The nonce is recorded only
 * after the signature verified, so unauthenticated traffic cannot fill
 * the store or burn a caller's nonces; the rate limit counts only
 * authenticated requests with a fresh nonce, so neither forged nor
 * replayed requests can use up an AppId's budget.
 */
#include "api/api.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "api/apps.h"
#include "callback/callback.h"
#include "coord/coord.h"
#include "coord/coord_open.h"
#include "core/freshness.h"
#include "core/jsontext.h"
#include "coord/maxconc.h"
#include "spool/metrics.h"
#include "core/promtext.h"
#include "coord/ratelimit.h"
#include "core/result.h"
#include "records/records_mariadb.h"
#include "core/sign.h"
#include "spool/spool.h"
#include "core/ssrf.h"
#include "core/task.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "callback/urlcheck.h"
#include "coord/wakeup.h"

#define API_MARKER_MAX	4096	/* bytes of a requests/ record */
#define API_REG_MAX	65536	/* bytes of a callbacks/ record */
#define API_RESULT_MAX	(64 << 20)
#define API_METRICS_MAX	(16 << 20)
#define API_LIST_MAX	500
#define API_LIST_DEFAULT 50
#define API_TWIN_WAIT_MS	1000	/* how long a replay waits for the
					 * task of a record to appear */
#define API_ORPHAN_SEC	60	/* a record without its task this old was
				 * left by a writer that died */

struct ctx {
	const struct api_request *rq;
	const char *method, *path;	/* path = PATH_INFO */
	char instance[512];		/* "/api" + PATH_INFO, for problems */
	char trace[33];
	struct buf hdr;			/* extra header lines, CRLF each */
	struct spool sp;
	int sp_open;
	char app_id[APPS_ID_MAX + 1];
	struct app app;			/* the caller, once authenticated */
	char body_hex[SIGN_HEX_LEN + 1];
	const char *body;
	size_t body_len;
};

/* --- responses ------------------------------------------------------ */

static const char *
reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
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

static int
respond(struct ctx *c, struct buf *out, int status, const char *ctype,
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
static int
respond_json(struct ctx *c, struct buf *out, int status, json_t *o)
{
	char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	int rc;

	json_decref(o);
	if (s == NULL)
		return respond(c, out, 500, "application/problem+json",
		    "{\"code\":\"INTERNAL_ERROR\"}", 25);
	rc = respond(c, out, status, "application/json", s, strlen(s));
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
		{ "METHOD_NOT_ALLOWED", "Method not allowed" },
		{ "LENGTH_REQUIRED", "Content-Length required" },
		{ "PAYLOAD_TOO_LARGE", "Request body too large" },
		{ "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be "
		    "application/json" },
		{ "VALIDATION_FAILED", "Request body failed validation" },
		{ "UNKNOWN_TASK_CODE", "Unknown task code" },
		{ "IDEMPOTENCY_KEY_REUSED", "requestId reused with a "
		    "different body" },
		{ "INVALID_CALLBACK_URL", "Invalid callback URL" },
		{ "CALLBACK_URL_FORBIDDEN", "Callback URL not allowed" },
		{ "CALLBACK_URL_UNRESOLVABLE", "Callback host does not "
		    "resolve" },
		{ "RATE_LIMITED", "Too many requests for this AppId" },
		{ "SERVICE_UNAVAILABLE", "Service unavailable" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(t[i][0], code) == 0)
			return t[i][1];
	return "Internal error";
}

/*
 * A problem response (RFC 9457; API.md §5): code in UPPER_SNAKE, type
 * urn:ts:problem:<kebab-case>, extras (stolen, may be NULL) merged in.
 */
static int
problem(struct ctx *c, struct buf *out, int status, const char *code,
    json_t *extras, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int
problem(struct ctx *c, struct buf *out, int status, const char *code,
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
	rc = respond(c, out, status, "application/problem+json", s,
	    s != NULL ? strlen(s) : 0);
	free(s);
	return rc;
}

/* 503 after a store failure: logged once here, without secrets. */
static int
unavailable(struct ctx *c, struct buf *out, const char *what)
{
	fprintf(stderr, "taskspool.cgi: trace %s: %s: %s\n", c->trace, what,
	    strerror(errno));
	return problem(c, out, 503, "SERVICE_UNAVAILABLE", NULL, "the task "
	    "store cannot be used right now; retry shortly");
}

static json_t *
one_member(const char *k, json_t *v)
{
	json_t *o = json_object();

	json_object_set_new(o, k, v);
	return o;
}

/* 422 VALIDATION_FAILED naming field; title NULL = the code's title. */
static int
invalid_field(struct ctx *c, struct buf *out, const char *title,
    const char *field, const char *reason)
{
	json_t *e = json_object(), *a = json_array();
	json_t *x = one_member("errors", a);

	json_object_set_new(e, "field", json_string(field));
	json_object_set_new(e, "reason", json_string(reason));
	json_array_append_new(a, e);
	if (title != NULL)
		json_object_set_new(x, "title", json_string(title));
	return problem(c, out, 422, "VALIDATION_FAILED", x, "%s: %s", field,
	    reason);
}

static int
validation(struct ctx *c, struct buf *out, const char *field,
    const char *reason)
{
	return invalid_field(c, out, NULL, field, reason);
}

/* A query parameter of a list request is invalid: same code, own title. */
static int
query_invalid(struct ctx *c, struct buf *out, const char *field,
    const char *reason)
{
	return invalid_field(c, out, "Query parameter failed validation",
	    field, reason);
}

/* --- request parts --------------------------------------------------- */

static const char *
env(struct ctx *c, const char *name)
{
	return c->rq->getenv(c->rq->ctx, name);
}

/* Copy the value of name with leading/trailing spaces and tabs removed
 * into out; returns 0, or -1 when unset, 1 when too long. */
static int
header(struct ctx *c, const char *name, char *out, size_t outlen)
{
	const char *v = env(c, name), *e;

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
static int
read_body(const struct api_request *rq, char *b, size_t n)
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
static int
state_subdir(struct ctx *c, const char *name)
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
static void
copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static char *
fmt_time(char *b, int64_t ms)
{
	return tstime_format_ms(b, TSTIME_BUF, ms);
}

static json_t *
time_or_null(int64_t ms)
{
	char b[TSTIME_BUF];

	return ms < 0 ? json_null() : json_string(fmt_time(b, ms));
}

/* --- nonce store (§3.4 step 9) --------------------------------------- */

/* Remove expired markers; run on about one request in 64. */
static void
nonce_prune(int dfd, int64_t now)
{
	DIR *d = spool_opendir(dfd);
	struct dirent *de;
	struct stat st;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && fstatat(dfd, de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtime < now)
			(void)unlinkat(dfd, de->d_name, 0);
	closedir(d);
}

/*
 * Record (app, nonce) until expires (Unix s): 1 recorded, 0 replayed (an
 * unexpired marker exists), -1 store error (errno).
 */
static int
nonce_record(struct ctx *c, const char *nonce, int64_t expires)
{
	char name[APPS_ID_MAX + 80];
	int dfd = state_subdir(c, "nonces"), fd = -1, rc = -1;
	unsigned char r;

	if (dfd < 0)
		return -1;
	copy(name, sizeof(name), c->app_id);
	strcat(name, ".");
	strncat(name, nonce, sizeof(name) - strlen(name) - 1);
	for (int tries = 0; tries < 2; tries++) {
		struct stat st;

		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0)
			break;
		if (errno != EEXIST)
			goto out;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				continue;
			goto out;
		}
		if (st.st_mtime >= c->rq->now) {
			rc = 0;
			goto out;
		}
		/* Expired: the nonce may be used again. */
		(void)unlinkat(dfd, name, 0);
	}
	if (fd < 0) {
		rc = 0;
		goto out;
	}
	{
		struct timespec ts[2] = { { (time_t)expires, 0 },
		    { (time_t)expires, 0 } };

		if (futimens(fd, ts) != 0)
			goto out;
	}
	/* XXX no fsync: after a power failure a nonce of the last few
	 * seconds may be accepted once more (its request is still bound
	 * by the ±300 s window and by idempotency). */
	rc = 1;
	if (getrandom(&r, 1, 0) == 1 && r < 4)
		nonce_prune(dfd, c->rq->now);
out:
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}

/* --- task records and views ------------------------------------------ */

struct marker {
	char app_id[APPS_ID_MAX + 1];
	char request_id[TASK_ID_MAX + 1];
	char task_code[TASK_CODE_MAX + 1];
	char fingerprint[SIGN_HEX_LEN + 1];
	int64_t created_ms;
	int64_t mtime;			/* of the record file, Unix s */
};

static int
copy_member(json_t *o, const char *k, char *out, size_t len)
{
	const char *v = json_string_value(json_object_get(o, k));

	if (v == NULL || strlen(v) >= len)
		return -1;
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/*
 * Decode an idempotency record (state/requests/<id>.json) into m, mtime
 * left 0.  Every member is required and checked against the grammar
 * marker_encode() writes (names, 64 hex digits, a time not before 1970),
 * so decode(encode(decode(x))) == decode(x).  Returns 0, or -1 (EINVAL).
 */
static int
marker_decode(const char *data, size_t len, struct marker *m)
{
	json_t *o;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	o = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	if (o != NULL && copy_member(o, "appId", m->app_id,
	    sizeof(m->app_id)) == 0 && apps_id_ok(m->app_id) &&
	    copy_member(o, "requestId", m->request_id,
	    sizeof(m->request_id)) == 0 && spool_id_ok(m->request_id) &&
	    copy_member(o, "taskCode", m->task_code,
	    sizeof(m->task_code)) == 0 && spool_code_ok(m->task_code) &&
	    copy_member(o, "fingerprint", m->fingerprint,
	    sizeof(m->fingerprint)) == 0 &&
	    strlen(m->fingerprint) == SIGN_HEX_LEN &&
	    strspn(m->fingerprint, "0123456789abcdef") == SIGN_HEX_LEN &&
	    json_string_value(json_object_get(o, "createdAt")) != NULL &&
	    tstime_parse_rfc3339(json_string_value(json_object_get(o,
	    "createdAt")), &m->created_ms) == 0 && m->created_ms >= 0)
		rc = 0;
	else
		errno = EINVAL;
	json_decref(o);
	return rc;
}

/* Append the record of m to out.  Returns 0, or -1 (ENOMEM, EFBIG). */
static int
marker_encode(const struct marker *m, struct buf *out)
{
	char b[TSTIME_BUF];
	json_t *r = json_object();
	char *s;
	int rc;

	if (r == NULL)
		return -1;
	json_object_set_new(r, "appId", json_string(m->app_id));
	json_object_set_new(r, "requestId", json_string(m->request_id));
	json_object_set_new(r, "taskCode", json_string(m->task_code));
	json_object_set_new(r, "fingerprint", json_string(m->fingerprint));
	json_object_set_new(r, "createdAt", json_string(fmt_time(b,
	    m->created_ms)));
	s = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	if (s == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rc = buf_puts(out, s);
	free(s);
	return rc;
}

int
api_marker_roundtrip(const char *data, size_t len)
{
	struct marker a, b;
	struct buf out;
	int rc = -1;

	if (marker_decode(data, len, &a) != 0)
		return 1;
	buf_init(&out, 0);
	if (marker_encode(&a, &out) == 0 &&
	    marker_decode(out.data, out.len, &b) == 0 &&
	    strcmp(a.app_id, b.app_id) == 0 &&
	    strcmp(a.request_id, b.request_id) == 0 &&
	    strcmp(a.task_code, b.task_code) == 0 &&
	    strcmp(a.fingerprint, b.fingerprint) == 0 &&
	    a.created_ms == b.created_ms)
		rc = 0;
	buf_fini(&out);
	return rc;
}

/* Read requests/<id>.json: 0, -1 with ENOENT when absent, -1 on error. */
static int
marker_read(int dfd, const char *id, struct marker *m)
{
	char file[SPOOL_NAME_MAX];
	size_t len;
	char *data;
	struct stat st;
	int rc;

	snprintf(file, sizeof(file), "%s.json", id);
	data = spool_read_file(dfd, file, API_MARKER_MAX, &len);
	if (data == NULL)
		return -1;
	rc = marker_decode(data, len, m);
	free(data);
	if (rc == 0 && fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0)
		m->mtime = st.st_mtime;
	return rc;
}

static const char *
state_of(enum spool_dir d)
{
	return d == SPOOL_CORRUPT ? NULL : spool_state_name(d);
}

static int
terminal(const char *status)
{
	return strcmp(status, "SUCCESS") == 0 || strcmp(status, "FAILED") ==
	    0 || strcmp(status, "CANCELLED") == 0;
}

/*
 * The callback member of §4.2 for task id of app: the delivery's state
 * from outbox/callbacks/ (callback_info_read) once the task is terminal;
 * before that PENDING when the task has its own callbackUrl or its app a
 * registration, else NOT_REGISTERED.
 */
static json_t *
callback_view(struct ctx *c, const char *app, const char *id, int has_url)
{
	json_t *o = json_object();
	struct callback_info ci;
	char t[TSTIME_BUF];

	if (callback_info_read(&c->sp, id, &ci) == 0) {
		json_object_set_new(o, "status", json_string(ci.status));
		json_object_set_new(o, "attempts", json_integer(ci.attempts));
		json_object_set_new(o, "lastAttemptAt",
		    ci.last_attempt_ms >= 0 ? json_string(tstime_format_ms(t,
		    sizeof(t), ci.last_attempt_ms)) : json_null());
		json_object_set_new(o, "lastHttpStatus", ci.last_http > 0 ?
		    json_integer(ci.last_http) : json_null());
		json_object_set_new(o, "lastError", ci.last_error[0] != '\0' ?
		    json_string(ci.last_error) : json_null());
		return o;
	}
	json_object_set_new(o, "status", json_string(has_url ||
	    callback_registered(&c->sp, app) ? "PENDING" : "NOT_REGISTERED"));
	json_object_set_new(o, "attempts", json_integer(0));
	json_object_set_new(o, "lastAttemptAt", json_null());
	json_object_set_new(o, "lastHttpStatus", json_null());
	json_object_set_new(o, "lastError", json_null());
	return o;
}

/*
 * The §4.2 view of task id (whose record is m) as a new object, or NULL
 * with errno ENOENT when the task is in no state directory.  with_result:
 * include "result" (single GET) or not (list).
 */
static json_t *
task_view(struct ctx *c, const struct marker *m, int with_result)
{
	char file[SPOOL_NAME_MAX], node[65] = "";
	enum spool_dir where;
	json_t *o = NULL;

	snprintf(file, sizeof(file), "%s.json", m->request_id);
	int damaged = 0;		/* its result file does not parse */

	/* A task can move while it is read: try again a few times. */
	for (int tries = 0; tries < 5 && o == NULL; tries++) {
		const char *st;

		if (spool_locate(&c->sp, m->request_id, &where, node) != 0)
			return NULL;
		st = state_of(where);
		if (st == NULL)
			return NULL;
		st = limits_state_name(&c->sp, where, m->request_id);
		if (terminal(st)) {
			size_t len;
			char *data = spool_read_file(c->sp.dir[SPOOL_RESULTS],
			    file, API_RESULT_MAX, &len);
			json_t *r = data != NULL && result_valid(data, len,
			    NULL, 0) ? jsontext_loadb(data, len, 0, NULL) : NULL;
			static const char *const keep[] = { "requestId",
			    "taskCode", "taskName", "status", "createdAt",
			    "startedAt", "finishedAt", "durationMs", "attempt",
			    "maxRetries", "node", "triggerTime", "result",
			    "failureReason" };

			damaged = data != NULL && r == NULL;
			free(data);
			if (r == NULL)
				continue;
			o = json_object();
			for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]);
			    i++) {
				json_t *v = json_object_get(r, keep[i]);

				if (strcmp(keep[i], "result") == 0 &&
				    !with_result)
					continue;
				json_object_set(o, keep[i], v != NULL ? v :
				    json_null());
			}
			json_decref(r);
		} else {
			int dfd = c->sp.dir[where], own = 0;
			size_t len;
			char *data;
			struct task t;
			struct task_error te;
			int64_t now_ms = c->rq->now * 1000;

			if (where == SPOOL_ACTIVE || where == SPOOL_QUEUE) {
				dfd = spool_node_dir(&c->sp, where, node);
				own = 1;
			}
			data = dfd >= 0 ? spool_read_file(dfd, file,
			    TASK_FILE_MAX, &len) : NULL;
			if (own && dfd >= 0)
				close(dfd);
			task_init(&t);
			if (data == NULL || task_decode(data, len, &t, &te)) {
				free(data);
				task_fini(&t);
				continue;
			}
			free(data);
			o = json_object();
			json_object_set_new(o, "requestId",
			    json_string(m->request_id));
			json_object_set_new(o, "taskCode",
			    json_string(t.task_code));
			json_object_set_new(o, "taskName", t.task_name != NULL
			    ? json_string(t.task_name) : json_null());
			json_object_set_new(o, "status", json_string(st));
			json_object_set_new(o, "createdAt",
			    time_or_null(t.created_ms));
			json_object_set_new(o, "startedAt", json_null());
			json_object_set_new(o, "finishedAt", json_null());
			json_object_set_new(o, "durationMs", json_null());
			json_object_set_new(o, "attempt", json_integer((
			    json_int_t)t.nattempts + (where ==
			    SPOOL_ACTIVE)));
			json_object_set_new(o, "maxRetries", json_integer(
			    t.max_retries >= 0 ? t.max_retries :
			    c->rq->cfg->max_retries));
			json_object_set_new(o, "node", node[0] != '\0' ?
			    json_string(node) : json_null());
			json_object_set_new(o, "triggerTime",
			    time_or_null(t.trigger_ms));
			if (strcmp(st, "PENDING") == 0)
				json_object_set_new(o, "estimatedDelay",
				    json_integer(t.not_before_ms > now_ms ?
				    (t.not_before_ms - now_ms + 999) / 1000 :
				    0));
			if (with_result)
				json_object_set_new(o, "result", json_null());
			json_object_set_new(o, "failureReason", json_null());
			json_object_set_new(o, "callback", callback_view(c,
			    m->app_id, m->request_id, t.callback_url != NULL));
			task_fini(&t);
			return o;
		}
	}
	if (o == NULL) {
		/* A torn result is a missing one (issue 11 item 5): the
		 * daemons rebuild it; the caller says so. */
		errno = damaged ? EBADMSG : EAGAIN;
		return NULL;
	}
	{
		/* The finished task's file tells whether it had its own
		 * callbackUrl. */
		int dfd = c->sp.dir[where];
		size_t len;
		char *data = spool_read_file(dfd, file, TASK_FILE_MAX, &len);
		struct task t;
		struct task_error te;
		int has_url = 0;

		task_init(&t);
		if (data != NULL && task_decode(data, len, &t, &te) == 0)
			has_url = t.callback_url != NULL;
		task_fini(&t);
		free(data);
		json_object_set_new(o, "callback", callback_view(c, m->app_id,
		    m->request_id, has_url));
	}
	return o;
}

/*
 * The §4.1 202 body: a short summary of the task's current state; fresh
 * (not NULL) for a task just published, whose state is known: PENDING,
 * due in *fresh ms from now.
 */
static json_t *
summary(struct ctx *c, const struct marker *m, const int64_t *fresh)
{
	json_t *v = fresh == NULL ? task_view(c, m, 0) : NULL;
	json_t *o = json_object(), *links;
	char self[TASK_ID_MAX + 16];
	char b[TSTIME_BUF];

	snprintf(self, sizeof(self), "/api/tasks/%s", m->request_id);
	json_object_set_new(o, "requestId", json_string(m->request_id));
	json_object_set_new(o, "taskCode", json_string(m->task_code));
	json_object_set_new(o, "status", json_string(v != NULL ?
	    json_string_value(json_object_get(v, "status")) : "PENDING"));
	json_object_set_new(o, "estimatedDelay", json_integer(v != NULL ?
	    json_integer_value(json_object_get(v, "estimatedDelay")) :
	    fresh != NULL && *fresh > 0 ? (*fresh + 999) / 1000 : 0));
	json_object_set_new(o, "createdAt", json_string(fmt_time(b,
	    m->created_ms)));
	links = json_object();
	json_object_set_new(links, "self", json_string(self));
	json_object_set_new(o, "links", links);
	json_decref(v);
	return o;
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
static json_t *
parse_body(struct ctx *c, struct buf *out)
{
	json_error_t e;
	json_t *o;

	if (c->body_len >= 3 && memcmp(c->body, "\xef\xbb\xbf", 3) == 0) {
		problem(c, out, 400, "INVALID_JSON", one_member("offset",
		    json_integer(0)), "the body starts with a byte order mark");
		return NULL;
	}
	o = jsontext_loadb(c->body, c->body_len, JSON_REJECT_DUPLICATES, &e);
	if (o == NULL) {
		problem(c, out, 400, "INVALID_JSON", one_member("offset",
		    json_integer(e.position)), "%s", e.text);
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		problem(c, out, 400, "INVALID_JSON", NULL, "the body must be "
		    "a JSON object");
		return NULL;
	}
	if (!depth_ok(o, 0)) {
		json_decref(o);
		problem(c, out, 400, "INVALID_JSON", NULL, "nested deeper "
		    "than %d levels", TASK_DEPTH_MAX);
		return NULL;
	}
	return o;
}

static int
url_problem(struct ctx *c, struct buf *out, const char *url,
    const char *field)
{
	struct ssrf_allow allow;
	struct urlcheck_policy pol = { (int)c->rq->cfg->callback_allow_http,
	    &allow };
	char why[256];

	/* the daemon's keys (config_finish checked them) */
	memset(&allow, 0, sizeof(allow));
	if (ssrf_parse_ports(&allow, c->rq->cfg->callback_allowed_ports, why,
	    sizeof(why)) != 0 || ssrf_parse_cidrs(&allow,
	    c->rq->cfg->callback_allow_cidrs, why, sizeof(why)) != 0)
		return unavailable(c, out, why);

	switch (urlcheck_url(url, &pol, why, sizeof(why))) {
	case URLCHECK_OK:
		return 0;
	case URLCHECK_INVALID:
		return problem(c, out, 422, "INVALID_CALLBACK_URL", NULL,
		    "%s: %s", field, why);
	case URLCHECK_FORBIDDEN:
		return problem(c, out, 422, "CALLBACK_URL_FORBIDDEN", NULL,
		    "%s: %s", field, why);
	case URLCHECK_UNAVAILABLE:
		errno = ENOSYS;
		return unavailable(c, out, why);
	default:
		return problem(c, out, 422, "CALLBACK_URL_UNRESOLVABLE", NULL,
		    "%s: %s", field, why);
	}
}

/* --- POST /tasks ------------------------------------------------------ */

static const char *const submit_members[] = {
	"requestId", "taskCode", "taskName", "triggerType", "delayMs", "runAt",
	"executeParams", "callbackUrl", "maxRetries", "timeoutSec", "route",
	"shardKey", NULL
};


/* The size in bytes of t's task file as it will be stored (with the
 * members the server adds to the body), or 0 if it cannot be encoded. */
static size_t
stored_size(struct task *t)
{
	struct buf b;
	size_t n;

	(void)task_set_not_before(t);
	buf_init(&b, 0);
	n = task_encode(t, &b) == 0 ? b.len : 0;
	buf_fini(&b);
	return n;
}

/* Publish the task file for t (appId, createdAt set by the caller). */
static int
publish_task(struct ctx *c, struct task *t)
{
	struct buf b;
	char file[SPOOL_NAME_MAX];
	int64_t due = task_set_not_before(t);
	int rc;

	buf_init(&b, 0);
	if (task_encode(t, &b) != 0) {
		buf_fini(&b);
		return -1;
	}
	snprintf(file, sizeof(file), "%s.json", t->request_id);
	rc = spool_publish(&c->sp, c->sp.dir[due >= 0 ? SPOOL_DELAYED :
	    SPOOL_INCOMING], file, b.data, b.len, due, SPOOL_PUBLISH_EXCL);
	buf_fini(&b);
	if (rc == 0)
		wakeup_notify(c->rq->cfg, &c->sp, due >= 0 ? SPOOL_DELAYED :
		    SPOOL_INCOMING, file);
	return rc;
}

/* Answer a submission whose record m exists (§4.1 step 2). */
static int
answer_existing(struct ctx *c, struct buf *out, const struct marker *m,
    struct task *t, int rdfd)
{
	char file[SPOOL_NAME_MAX];
	enum spool_dir where;
	int found;

	if (strcmp(m->app_id, c->app_id) != 0)
		return problem(c, out, 409, "REQUEST_ID_CONFLICT", NULL,
		    "requestId %s is already used by another AppId",
		    m->request_id);
	if (strcmp(m->fingerprint, c->body_hex) != 0)
		return problem(c, out, 422, "IDEMPOTENCY_KEY_REUSED",
		    one_member("requestId", json_string(m->request_id)),
		    "requestId %s was first used with a different body",
		    m->request_id);
	found = spool_locate(&c->sp, m->request_id, &where, NULL) == 0;
	if (!found && c->rq->now - m->mtime > API_ORPHAN_SEC) {
		/* The writer died between the record and the task: this
		 * retry carries the same bytes, so it completes the task. */
		t->created_ms = m->created_ms;
		snprintf(t->request_id, sizeof(t->request_id), "%s",
		    m->request_id);
		if (publish_task(c, t) != 0 && errno != EEXIST)
			return unavailable(c, out, "re-publish task");
	} else if (!found) {
		/* Younger than API_ORPHAN_SEC: the first writer publishes
		 * its task within milliseconds, or died (a killed CGI or
		 * FastCGI process).  Wait a moment for the task; never
		 * answer 202 for a task that does not exist. */
		int64_t until = tstime_mono_ms() + API_TWIN_WAIT_MS;

		do {
			if (tstime_mono_ms() >= until) {
				fprintf(stderr, "taskspool.cgi: trace %s: "
				    "record of %s without its task\n",
				    c->trace, m->request_id);
				return problem(c, out, 503,
				    "SERVICE_UNAVAILABLE", NULL, "the first "
				    "request with requestId %s has not "
				    "published its task (it is being written, "
				    "or was interrupted); retry: %d s after "
				    "the first request a retry completes it",
				    m->request_id, API_ORPHAN_SEC);
			}
			usleep(20000);
		} while (spool_locate(&c->sp, m->request_id, &where,
		    NULL) != 0);
	}
	(void)rdfd;
	(void)file;
	buf_printf(&c->hdr, "Location: /api/tasks/%s\r\nIdempotent-Replayed: "
	    "true\r\n", m->request_id);
	return respond_json(c, out, 202, summary(c, m, NULL));
}

static int
do_submit(struct ctx *c, struct buf *out)
{
	json_t *o = parse_body(c, out), *v;
	const char *k;
	struct task t;
	struct task_error te;
	char hdr_key[TASK_ID_MAX + 2], hook[CONFIG_PATH_MAX + 80];
	char file[SPOOL_NAME_MAX];
	struct marker m;
	int rdfd = -1, rc, hk;
	struct buf rec;

	if (o == NULL)
		return 400;
	json_object_foreach(o, k, v) {
		int known = 0;

		for (int i = 0; submit_members[i] != NULL; i++)
			known |= strcmp(k, submit_members[i]) == 0;
		if (!known) {
			char field[128];

			snprintf(field, sizeof(field), "%s", k);
			json_decref(o);
			return validation(c, out, field, "unknown member");
		}
	}
	json_decref(o);
	task_init(&t);
	if (task_decode(c->body, c->body_len, &t, &te) != 0) {
		task_fini(&t);
		if (strcmp(te.field, "json") == 0 || strcmp(te.field,
		    "file") == 0)
			return problem(c, out, 400, "INVALID_JSON", NULL, "%s",
			    te.rule);
		/* A callbackUrl string that breaks the URL rules (scheme,
		 * length) gets the code of §4.3, as the registration's url
		 * does; a wrong type stays VALIDATION_FAILED. */
		if (strcmp(te.field, "callbackUrl") == 0 &&
		    strstr(te.rule, "string") == NULL)
			return problem(c, out, 422, "INVALID_CALLBACK_URL",
			    NULL, "callbackUrl: %s", te.rule);
		return validation(c, out, te.field, te.rule);
	}
	/* §13.3: Idempotency-Key is an alias of requestId. */
	hk = header(c, "HTTP_IDEMPOTENCY_KEY", hdr_key, sizeof(hdr_key));
	if (hk == 1 || (hk == 0 && !spool_id_ok(hdr_key))) {
		task_fini(&t);
		return validation(c, out, "Idempotency-Key", "must match "
		    "[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
	}
	if (hk == 0) {
		if (t.request_id[0] != '\0' && strcmp(t.request_id,
		    hdr_key) != 0) {
			task_fini(&t);
			return validation(c, out, "requestId", "differs from "
			    "the Idempotency-Key header");
		}
		copy(t.request_id, sizeof(t.request_id), hdr_key);
	}
	if (t.callback_url != NULL && (rc = url_problem(c, out,
	    t.callback_url, "callbackUrl")) != 0) {
		task_fini(&t);
		return rc;
	}
	if ((rdfd = state_subdir(c, "requests")) < 0) {
		task_fini(&t);
		return unavailable(c, out, "state/requests");
	}
	if (t.request_id[0] != '\0') {
		enum spool_dir where;

		if (marker_read(rdfd, t.request_id, &m) == 0) {
			rc = answer_existing(c, out, &m, &t, rdfd);
			goto out;
		}
		if (errno != ENOENT) {
			rc = unavailable(c, out, "state/requests record");
			goto out;
		}
		if (spool_locate(&c->sp, t.request_id, &where, NULL) == 0) {
			/* A concurrent twin may have published its record and
			 * its task between our marker_read and spool_locate:
			 * read the record again before calling it a task of
			 * another writer. */
			if (marker_read(rdfd, t.request_id, &m) == 0) {
				rc = answer_existing(c, out, &m, &t, rdfd);
				goto out;
			}
			rc = problem(c, out, 409, "REQUEST_ID_CONFLICT", NULL,
			    "requestId %s is already used by a task not "
			    "submitted by this AppId", t.request_id);
			goto out;
		}
	} else
		spool_new_request_id(t.request_id, sizeof(t.request_id),
		    c->rq->now * 1000 + tstime_now_ms() % 1000);
	/* §4.1 step 3: the task code exists (a hook) and is granted. */
	snprintf(hook, sizeof(hook), "%s/%s", c->rq->cfg->hooks_dir,
	    t.task_code);
	if (access(hook, X_OK) != 0) {
		rc = problem(c, out, 422, "UNKNOWN_TASK_CODE", one_member(
		    "taskCode", json_string(t.task_code)), "no task code %s",
		    t.task_code);
		goto out;
	}
	if (!apps_code_allowed(&c->app, t.task_code)) {
		rc = problem(c, out, 403, "TASK_CODE_FORBIDDEN", NULL,
		    "task code %s is not granted to AppId %s", t.task_code,
		    c->app_id);
		goto out;
	}
	/* §4.1 step 4: the record's exclusive create decides the race. */
	t.created_ms = tstime_now_ms();
	if (t.created_ms / 1000 != c->rq->now)
		t.created_ms = c->rq->now * 1000 + t.created_ms % 1000;
	free(t.app_id);
	t.app_id = strdup(c->app_id);
	/* A body under the 1 MiB limit can still make a task file over it
	 * once appId, createdAt and the rest are added: the daemons would
	 * send that file to corrupt/, so it is refused here, before any
	 * record exists. */
	{
		size_t n = t.app_id != NULL ? stored_size(&t) : 0;

		if (n > TASK_FILE_MAX) {
			rc = problem(c, out, 413, "PAYLOAD_TOO_LARGE", one_member(
			    "limit", json_integer(TASK_FILE_MAX)), "the task "
			    "file would be %zu bytes with the members the "
			    "server adds (requestId, appId, createdAt...); at "
			    "most %d", n, TASK_FILE_MAX);
			goto out;
		}
	}
	memset(&m, 0, sizeof(m));
	snprintf(m.app_id, sizeof(m.app_id), "%s", c->app_id);
	snprintf(m.request_id, sizeof(m.request_id), "%s", t.request_id);
	snprintf(m.task_code, sizeof(m.task_code), "%s", t.task_code);
	memcpy(m.fingerprint, c->body_hex, sizeof(m.fingerprint));
	m.created_ms = t.created_ms;
	buf_init(&rec, 0);
	if (marker_encode(&m, &rec) != 0)
		buf_reset(&rec);
	snprintf(file, sizeof(file), "%s.json", t.request_id);
	if (t.app_id == NULL || rec.len == 0 || spool_publish(&c->sp, rdfd,
	    file, rec.data, rec.len, -1, SPOOL_PUBLISH_EXCL) != 0) {
		buf_fini(&rec);
		if (errno == EEXIST && marker_read(rdfd, t.request_id,
		    &m) == 0) {
			/* A concurrent twin won: answer as a replay. */
			rc = answer_existing(c, out, &m, &t, rdfd);
			goto out;
		}
		rc = unavailable(c, out, "state/requests publish");
		goto out;
	}
	buf_fini(&rec);
	if (publish_task(c, &t) != 0) {
		int e = errno;

		(void)unlinkat(rdfd, file, 0);
		errno = e;
		if (e == EEXIST)
			rc = problem(c, out, 409, "REQUEST_ID_CONFLICT", NULL,
			    "requestId %s is already used by a task not "
			    "submitted by this AppId", t.request_id);
		else
			rc = unavailable(c, out, "publish task");
		goto out;
	}
	buf_printf(&c->hdr, "Location: /api/tasks/%s\r\n", t.request_id);
	{
		int64_t due = t.not_before_ms >= 0 ? t.not_before_ms -
		    c->rq->now * 1000 : 0;

		rc = respond_json(c, out, 202, summary(c, &m, &due));
	}
out:
	task_fini(&t);
	if (rdfd >= 0)
		close(rdfd);
	return rc;
}

/* --- GET/DELETE /tasks/{id} ----------------------------------------- */

/* The caller's record of id, or a 404 already sent (returns -1). */
static int
own_marker(struct ctx *c, struct buf *out, const char *id, struct marker *m,
    int *status)
{
	int dfd = openat(c->sp.dir[SPOOL_STATE], "requests", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = dfd >= 0 ? marker_read(dfd, id, m) : -1;

	if (dfd >= 0)
		close(dfd);
	if (rc != 0 || strcmp(m->app_id, c->app_id) != 0) {
		*status = problem(c, out, 404, "TASK_NOT_FOUND", one_member(
		    "requestId", json_string(id)), "no task %s for AppId %s",
		    id, c->app_id);
		return -1;
	}
	return 0;
}

static int
do_get(struct ctx *c, struct buf *out, const char *id)
{
	struct marker m;
	json_t *v;
	int st;

	if (own_marker(c, out, id, &m, &st) != 0)
		return st;
	if ((v = task_view(c, &m, 1)) == NULL) {
		if (errno == ENOENT)
			return problem(c, out, 404, "TASK_NOT_FOUND",
			    one_member("requestId", json_string(id)),
			    "no task %s for AppId %s", id, c->app_id);
		if (errno == EBADMSG) {
			fprintf(stderr, "taskspool.cgi: trace %s: results/"
			    "%s.json is not a valid result (torn or edited); "
			    "the daemons rebuild it\n", c->trace, id);
			return problem(c, out, 503, "SERVICE_UNAVAILABLE",
			    one_member("requestId", json_string(id)), "the "
			    "result of task %s is damaged and is being "
			    "rebuilt; retry shortly", id);
		}
		return unavailable(c, out, "read task");
	}
	return respond_json(c, out, 200, v);
}

static int
do_cancel(struct ctx *c, struct buf *out, const char *id)
{
	struct marker m;
	json_t *v;
	const char *s;
	int st;
	int64_t until;

	if (own_marker(c, out, id, &m, &st) != 0)
		return st;
	if ((v = task_view(c, &m, 1)) == NULL)
		return errno == ENOENT ? problem(c, out, 404, "TASK_NOT_FOUND",
		    one_member("requestId", json_string(id)), "no task %s",
		    id) : unavailable(c, out, "read task");
	s = json_string_value(json_object_get(v, "status"));
	if (s != NULL && terminal(s)) {
		json_t *x = one_member("taskStatus", json_string(s));

		json_decref(v);
		return problem(c, out, 409, "TASK_FINISHED", x, "task %s "
		    "already finished", id);
	}
	json_decref(v);
	/* The cancel mechanism of `taskspool cancel`: a marker that the
	 * daemons act on (the owner kills a running hook; any daemon
	 * concludes a pending task CANCELLED, result first). */
	if (c->sp.cancel < 0 || spool_publish(&c->sp, c->sp.cancel, id, "",
	    0, -1, 0) != 0)
		return unavailable(c, out, "state/cancel");
	until = tstime_mono_ms() + 2000;
	for (;;) {
		v = task_view(c, &m, 1);
		s = v != NULL ? json_string_value(json_object_get(v,
		    "status")) : NULL;
		if (s != NULL && terminal(s))
			return respond_json(c, out, 200, v);
		if (tstime_mono_ms() >= until || (v == NULL && errno ==
		    ENOENT))
			break;
		json_decref(v);
		usleep(20000);
	}
	if (v == NULL)
		return unavailable(c, out, "read task");
	return respond_json(c, out, 202, v);
}

/* --- GET /tasks (list) ----------------------------------------------- */

struct item {
	struct marker m;
};

static int
item_cmp(const void *a, const void *b)
{
	const struct marker *x = &((const struct item *)a)->m;
	const struct marker *y = &((const struct item *)b)->m;

	if (x->created_ms != y->created_ms)
		return x->created_ms > y->created_ms ? -1 : 1;
	return -strcmp(x->request_id, y->request_id);
}

/* Percent-decode [s, e) into out (outlen); -1 if it does not fit. */
static int
qdecode(const char *s, const char *e, char *out, size_t outlen)
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

/*
 * GET /tasks answered from MariaDB (the `mariadb` key is set): the same
 * filters, order and cursor as the spool's answer, from task_execution
 * (records_db_list_app, keyset pagination).  A task appears once a node
 * has recorded it (claimed or finished); the callback member still comes
 * from the spool's delivery files; taskName is not recorded (null).
 */
static int
list_from_db(struct ctx *c, struct buf *out, const char *statuses,
    const char *code, int64_t since, int64_t cursor_ms, const char *cursor_id,
    long limit)
{
	struct records_task *rows = calloc((size_t)limit + 1, sizeof(*rows));
	struct records_db *db;
	char why[512];
	size_t n = 0;
	json_t *arr, *o;
	int rc = -1;

	if (rows != NULL && (db = records_db_connect(c->rq->cfg, why,
	    sizeof(why))) != NULL) {
		rc = records_db_list_app(db, c->app_id, statuses, code,
		    since >= 0 ? since : RECORDS_NULL, cursor_ms,
		    cursor_id[0] != '\0' ? cursor_id : NULL, rows,
		    (size_t)limit + 1, &n, why, sizeof(why));
		records_db_close(db);
	}
	if (rc != 0) {
		free(rows);
		errno = EIO;
		return unavailable(c, out, rows != NULL ? why : "list");
	}
	arr = json_array();
	o = json_object();
	for (size_t i = 0; i < n && i < (size_t)limit; i++) {
		const struct records_task *r = &rows[i];
		json_t *v = json_object(), *fr = json_null();

		json_object_set_new(v, "requestId", json_string(r->request_id));
		json_object_set_new(v, "taskCode", json_string(r->task_code));
		json_object_set_new(v, "taskName", json_null());
		json_object_set_new(v, "status", json_string(r->status));
		json_object_set_new(v, "createdAt", time_or_null(r->created_at));
		json_object_set_new(v, "startedAt", time_or_null(r->started_at));
		json_object_set_new(v, "finishedAt",
		    time_or_null(r->finished_at));
		json_object_set_new(v, "durationMs", r->duration_ms ==
		    RECORDS_NULL ? json_null() : json_integer(r->duration_ms));
		json_object_set_new(v, "attempt", json_integer(r->attempt));
		json_object_set_new(v, "maxRetries", r->max_retries ==
		    RECORDS_NULL ? json_null() : json_integer(r->max_retries));
		json_object_set_new(v, "node", r->node[0] != '\0' ?
		    json_string(r->node) : json_null());
		json_object_set_new(v, "triggerTime",
		    time_or_null(r->trigger_time));
		if (r->failure_code[0] != '\0')
			fr = json_pack("{s:s,s:s}", "code", r->failure_code,
			    "message", r->failure_reason);
		json_object_set_new(v, "failureReason", fr);
		json_object_set_new(v, "callback", callback_view(c, c->app_id,
		    r->request_id, 0));
		json_array_append_new(arr, v);
	}
	if (n > (size_t)limit) {
		char cur[TASK_ID_MAX + 32];

		snprintf(cur, sizeof(cur), "%lld_%s",
		    (long long)rows[limit - 1].created_at,
		    rows[limit - 1].request_id);
		json_object_set_new(o, "nextCursor", json_string(cur));
	} else
		json_object_set_new(o, "nextCursor", json_null());
	free(rows);
	json_object_set_new(o, "items", arr);
	return respond_json(c, out, 200, o);
}

static int
do_list(struct ctx *c, struct buf *out)
{
	const char *q = env(c, "QUERY_STRING");
	char statuses[8][16], code[TASK_CODE_MAX + 1] = "";
	char cursor_id[TASK_ID_MAX + 1] = "";
	int nstatus = 0;
	long limit = API_LIST_DEFAULT;
	int64_t since = -1, cursor_ms = -1;
	struct item *items = NULL;
	size_t n = 0, cap = 0, shown = 0;
	json_t *arr, *o;
	DIR *d;
	struct dirent *de;
	int dfd;

	for (const char *s = q != NULL ? q : ""; *s != '\0';) {
		const char *e = s + strcspn(s, "&"), *eq = memchr(s, '=',
		    (size_t)(e - s));
		char name[32], val[256];

		if (e > s && eq != NULL && qdecode(s, eq, name,
		    sizeof(name)) == 0) {
			if (qdecode(eq + 1, e, val, sizeof(val)) != 0)
				return query_invalid(c, out, name, "value too "
				    "long or not decodable");
			if (strcmp(name, "status") == 0) {
				static const char *const ok[] = { "PENDING",
				    "WAITING", "DISPATCHED", "RUNNING",
				    "SUCCESS", "FAILED", "CANCELLED" };
				int good = 0;

				for (size_t i = 0; i < 7; i++)
					good |= strcmp(val, ok[i]) == 0;
				if (!good || nstatus == 8)
					return query_invalid(c, out, "status",
					    "must be one of PENDING WAITING "
					    "DISPATCHED RUNNING SUCCESS FAILED "
					    "CANCELLED");
				copy(statuses[nstatus++], 16, val);
			} else if (strcmp(name, "taskCode") == 0) {
				if (!spool_code_ok(val))
					return query_invalid(c, out, "taskCode",
					    "not a task code");
				copy(code, sizeof(code), val);
			} else if (strcmp(name, "since") == 0) {
				if (tstime_parse_rfc3339(val, &since) != 0)
					return query_invalid(c, out, "since",
					    "must be an RFC 3339 date-time");
			} else if (strcmp(name, "limit") == 0) {
				char *end;

				limit = strtol(val, &end, 10);
				if (val[0] == '\0' || *end != '\0' ||
				    limit < 1 || limit > API_LIST_MAX)
					return query_invalid(c, out, "limit",
					    "must be an integer 1..500");
			} else if (strcmp(name, "cursor") == 0) {
				char *end;
				long long ms = strtoll(val, &end, 10);

				if (end == val || *end != '_' ||
				    !spool_id_ok(end + 1))
					return query_invalid(c, out, "cursor",
					    "not a cursor from a previous "
					    "page");
				cursor_ms = ms;
				snprintf(cursor_id, sizeof(cursor_id), "%s",
				    end + 1);
			}
		}
		s = *e == '&' ? e + 1 : e;
	}
	if (c->rq->cfg->mariadb[0] != '\0') {
		char sl[8 * 17] = "";

		for (int i = 0; i < nstatus; i++)
			snprintf(sl + strlen(sl), sizeof(sl) - strlen(sl),
			    "%s%s", i ? "," : "", statuses[i]);
		return list_from_db(c, out, sl, code, since, cursor_ms,
		    cursor_id, limit);
	}
	dfd = openat(c->sp.dir[SPOOL_STATE], "requests", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = dfd >= 0 ? spool_opendir(dfd) : NULL;
	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char id[TASK_ID_MAX + 1];
		struct marker m;

		if (de->d_name[0] == '.' || l < 6 || l - 5 > TASK_ID_MAX ||
		    strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		memcpy(id, de->d_name, l - 5);
		id[l - 5] = '\0';
		if (marker_read(dfd, id, &m) != 0 || strcmp(m.app_id,
		    c->app_id) != 0 || (code[0] != '\0' &&
		    strcmp(m.task_code, code) != 0) || (since >= 0 &&
		    m.created_ms < since))
			continue;
		if (cursor_ms >= 0 && (m.created_ms > cursor_ms ||
		    (m.created_ms == cursor_ms && strcmp(m.request_id,
		    cursor_id) >= 0)))
			continue;
		if (n == cap) {
			struct item *ni = reallocarray(items, cap ? cap * 2 :
			    64, sizeof(*ni));

			if (ni == NULL)
				break;
			items = ni;
			cap = cap ? cap * 2 : 64;
		}
		items[n++].m = m;
	}
	if (d != NULL)
		closedir(d);
	if (dfd >= 0)
		close(dfd);
	if (n > 0)
		qsort(items, n, sizeof(*items), item_cmp);
	arr = json_array();
	o = json_object();
	for (size_t i = 0; i < n && shown < (size_t)limit; i++) {
		json_t *v = task_view(c, &items[i].m, 0);
		const char *s;
		int keep = nstatus == 0;

		if (v == NULL)
			continue;
		s = json_string_value(json_object_get(v, "status"));
		for (int j = 0; j < nstatus && s != NULL; j++)
			keep |= strcmp(s, statuses[j]) == 0;
		if (!keep) {
			json_decref(v);
			continue;
		}
		json_array_append_new(arr, v);
		if (++shown == (size_t)limit && i + 1 < n) {
			char cur[TASK_ID_MAX + 32];

			snprintf(cur, sizeof(cur), "%lld_%s",
			    (long long)items[i].m.created_ms,
			    items[i].m.request_id);
			json_object_set_new(o, "nextCursor", json_string(cur));
		}
	}
	free(items);
	json_object_set_new(o, "items", arr);
	if (json_object_get(o, "nextCursor") == NULL)
		json_object_set_new(o, "nextCursor", json_null());
	return respond_json(c, out, 200, o);
}

/* --- POST /callbacks/register (§4.3) -------------------------------- */

static int
new_whsec(char *out, size_t len)
{
	unsigned char r[32];
	char b64[64];

	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	EVP_EncodeBlock((unsigned char *)b64, r, sizeof(r));
	OPENSSL_cleanse(r, sizeof(r));
	snprintf(out, len, "whsec_%s", b64);
	OPENSSL_cleanse(b64, sizeof(b64));
	return 0;
}

static int
do_register(struct ctx *c, struct buf *out)
{
	json_t *o = parse_body(c, out), *v, *reg = NULL, *secrets, *resp;
	const char *k, *url;
	int rotate = 0, dfd, created, rc;
	char file[APPS_ID_MAX + 8], secret[80] = "", b[TSTIME_BUF];
	char *data, *s;
	size_t len;
	int64_t now_ms = c->rq->now * 1000;

	if (o == NULL)
		return 400;
	json_object_foreach(o, k, v)
		if (strcmp(k, "url") != 0 && strcmp(k, "rotateSecret") != 0) {
			char field[128];

			snprintf(field, sizeof(field), "%s", k);
			json_decref(o);
			return validation(c, out, field, "unknown member");
		}
	v = json_object_get(o, "rotateSecret");
	if (v != NULL && !json_is_boolean(v)) {
		json_decref(o);
		return validation(c, out, "rotateSecret", "must be a boolean");
	}
	rotate = json_is_true(v);
	url = json_string_value(json_object_get(o, "url"));
	if (url == NULL) {
		json_decref(o);
		return validation(c, out, "url", "required string");
	}
	if ((rc = url_problem(c, out, url, "url")) != 0) {
		json_decref(o);
		return rc;
	}
	if ((dfd = state_subdir(c, "callbacks")) < 0 || flock(dfd,
	    LOCK_EX) != 0) {
		json_decref(o);
		if (dfd >= 0)
			close(dfd);
		return unavailable(c, out, "state/callbacks");
	}
	snprintf(file, sizeof(file), "%s.json", c->app_id);
	data = spool_read_file(dfd, file, API_REG_MAX, &len);
	if (data != NULL)
		reg = jsontext_loadb(data, len, 0, NULL);
	free(data);
	created = reg == NULL || !json_is_array(json_object_get(reg,
	    "secrets"));
	if (created) {
		json_decref(reg);
		reg = json_object();
		json_object_set_new(reg, "appId", json_string(c->app_id));
		json_object_set_new(reg, "createdAt", json_string(fmt_time(b,
		    now_ms)));
		json_object_set_new(reg, "secrets", json_array());
	}
	json_object_set_new(reg, "url", json_string(url));
	json_object_set_new(reg, "status", json_string("ACTIVE"));
	json_object_set_new(reg, "updatedAt", json_string(fmt_time(b, now_ms)));
	secrets = json_object_get(reg, "secrets");
	if (created || rotate) {
		json_t *e = json_object(), *kept = json_array();
		size_t i;
		json_t *x;

		if (new_whsec(secret, sizeof(secret)) != 0) {
			json_decref(e);
			json_decref(kept);
			json_decref(reg);
			json_decref(o);
			close(dfd);
			return unavailable(c, out, "RAND_bytes");
		}
		json_object_set_new(e, "secret", json_string(secret));
		json_object_set_new(e, "expiresAt", json_null());
		json_array_append_new(kept, e);
		/* The previous current secret stays valid for 24 h; older
		 * ones are dropped. */
		json_array_foreach(secrets, i, x) {
			if (!json_is_null(json_object_get(x, "expiresAt")))
				continue;
			json_object_set_new(x, "expiresAt", json_string(
			    fmt_time(b, now_ms + API_ROTATE_OVERLAP * 1000LL)));
			json_array_append(kept, x);
			break;
		}
		json_object_set_new(reg, "secrets", kept);
		secrets = kept;
	}
	s = json_dumps(reg, JSON_COMPACT);
	if (s == NULL || spool_publish(&c->sp, dfd, file, s, strlen(s), -1,
	    0) != 0) {
		if (s != NULL)
			OPENSSL_cleanse(s, strlen(s));
		free(s);
		json_decref(reg);
		json_decref(o);
		close(dfd);
		return unavailable(c, out, "state/callbacks publish");
	}
	OPENSSL_cleanse(s, strlen(s));
	free(s);
	close(dfd);
	resp = json_object();
	json_object_set_new(resp, "appId", json_string(c->app_id));
	json_object_set_new(resp, "url", json_string(url));
	json_object_set_new(resp, "status", json_string("ACTIVE"));
	if (secret[0] != '\0')
		json_object_set_new(resp, "secret", json_string(secret));
	{
		const char *cur = json_string_value(json_object_get(
		    json_array_get(secrets, 0), "secret"));
		size_t cl = cur != NULL ? strlen(cur) : 0;

		json_object_set_new(resp, "secretHint", json_string(cl >= 4 ?
		    cur + cl - 4 : ""));
	}
	if (rotate && !created && json_array_size(secrets) > 1)
		json_object_set(resp, "previousSecretExpiresAt",
		    json_object_get(json_array_get(secrets, 1), "expiresAt"));
	json_object_set(resp, "createdAt", json_object_get(reg, "createdAt"));
	json_object_set(resp, "updatedAt", json_object_get(reg, "updatedAt"));
	json_decref(reg);
	json_decref(o);
	OPENSSL_cleanse(secret, sizeof(secret));
	return respond_json(c, out, created ? 201 : 200, resp);
}

/* --- GET /health, GET /metrics (unsigned) ---------------------------- */

static int
do_health(struct ctx *c, struct buf *out)
{
	DIR *d = spool_opendir(c->sp.dir[SPOOL_STATE]);
	struct dirent *de;
	int nodes = 0;
	char leader[65] = "";
	int64_t now_ms = tstime_now_ms();
	json_t *o;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct stat st;
		int64_t m;
		char *data;

		if (strncmp(de->d_name, "heartbeat.", 10) != 0 ||
		    fstatat(c->sp.dir[SPOOL_STATE], de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		m = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec /
		    1000000;
		if (now_ms - m > 3 * c->rq->cfg->heartbeat_ms)
			continue;
		nodes++;
		data = spool_read_text(c->sp.dir[SPOOL_STATE], de->d_name,
		    4096, NULL, NULL, 0);
		if (data != NULL && strstr(data, "\nleader=1\n") != NULL)
			snprintf(leader, sizeof(leader), "%s",
			    de->d_name + 10);
		free(data);
	}
	if (d != NULL)
		closedir(d);
	if (nodes == 0)
		return problem(c, out, 503, "SERVICE_UNAVAILABLE", NULL,
		    "no node has a fresh heartbeat");
	o = json_object();
	json_object_set_new(o, "status", json_string("ok"));
	json_object_set_new(o, "nodes", json_integer(nodes));
	json_object_set_new(o, "leader", leader[0] != '\0' ?
	    json_string(leader) : json_null());
	return respond_json(c, out, 200, o);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * One node's file as GET /metrics serves it (appended to view): as
 * written while it is fresh; when it is stale (freshness.h: older than 3
 * of its own taskspool_metrics_interval_seconds, else of this
 * configuration's metrics_interval_ms) its gauges are dropped — a dead
 * daemon's last taskspool_leader 1, busy slots, queue depth and view of
 * the heartbeats are not the present — but its counters and histograms
 * (true totals still) and its own taskspool_metrics_* gauges stay, so
 * that Prometheus can alert on the written-at time.  Then the marker
 * taskspool_metrics_stale{node} 0 or 1, for a file named <node>.prom.
 */
static int
metrics_view(struct ctx *c, const char *name, const char *text, size_t len,
    int64_t mtime_ms, int64_t newest_ms, int64_t now_ms, struct buf *view)
{
	struct freshness f = { -1, mtime_ms,
		3 * (int64_t)c->rq->cfg->metrics_interval_ms };
	char node[80];
	double v;
	int stale, rc;

	if (promtext_value(text, len, METRICS_WRITTEN, &v) == 0 && v > 0 &&
	    v < 1e13)
		f.written_ms = (int64_t)(v * 1000.0);
	if (promtext_value(text, len, METRICS_INTERVAL, &v) == 0 && v > 0 &&
	    v <= 3600)
		f.limit_ms = 3 * (int64_t)(v * 1000.0);
	stale = freshness_stale(&f, newest_ms, now_ms);
	rc = stale ? promtext_drop_type(text, len, "gauge",
	    METRICS_SELF_PREFIX, view) : buf_append(view, text, len);
	if (rc == 0 && len > 0 && text[len - 1] != '\n')
		rc = buf_puts(view, "\n");
	snprintf(node, sizeof(node), "%s", name);
	node[strlen(node) - 5] = '\0';		/* ".prom" */
	if (rc == 0 && spool_code_ok(node))
		rc = buf_printf(view, "# HELP taskspool_metrics_stale 1 when "
		    "this node's file is older than 3 rewrite intervals (its "
		    "daemon is dead or frozen): its gauges are left out.\n"
		    "# TYPE taskspool_metrics_stale gauge\n"
		    "taskspool_metrics_stale{node=\"%s\"} %d\n", node, stale);
	return rc;
}

static int
do_metrics(struct ctx *c, struct buf *out)
{
	DIR *d = spool_opendir(c->sp.dir[SPOOL_METRICS]);
	int dfd = c->sp.dir[SPOOL_METRICS];
	struct dirent *de;
	char **names = NULL, **texts;
	size_t n = 0, nt = 0, *lens;
	int64_t *mtimes, newest = -1, now_ms = tstime_now_ms();
	struct buf b, *views;
	static char empty[1];
	int rc;

	buf_init(&b, API_METRICS_MAX);
	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5,
		    ".prom") != 0)
			continue;
		if ((nn = reallocarray(names, n + 1, sizeof(*nn))) == NULL)
			break;
		names = nn;
		if ((names[n] = strdup(de->d_name)) != NULL)
			n++;
	}
	if (d != NULL)
		closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), name_cmp);
	texts = calloc(n + 1, sizeof(*texts));
	lens = calloc(n + 1, sizeof(*lens));
	mtimes = calloc(n + 1, sizeof(*mtimes));
	views = calloc(n + 1, sizeof(*views));
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char why[256] = "";
		int gone;

		if (texts == NULL || lens == NULL || mtimes == NULL ||
		    views == NULL) {
			free(names[i]);
			continue;
		}
		/* A text file: a NUL or control byte in it, a byte that is
		 * not UTF-8 or a line outside the exposition grammar (a
		 * broken writer) leaves that node out, so the others'
		 * samples stay readable. */
		texts[nt] = spool_read_text(dfd, names[i], API_METRICS_MAX,
		    &lens[nt], why, sizeof(why));
		gone = texts[nt] == NULL && errno == ENOENT;
		if (texts[nt] == NULL && why[0] == '\0')
			snprintf(why, sizeof(why), "%s", strerror(errno));
		if (texts[nt] != NULL && promtext_check(texts[nt], lens[nt],
		    why, sizeof(why)) != 0) {
			free(texts[nt]);
			texts[nt] = NULL;
		}
		if (texts[nt] == NULL) {
			if (!gone)
				fprintf(stderr, "taskspool.cgi: trace %s: "
				    "metrics/%s left out: %s\n", c->trace,
				    names[i], why);
			free(names[i]);
			continue;
		}
		/* Read, then stat: a file replaced in between has a newer
		 * mtime than its text, which errs towards fresh for one
		 * scrape only. */
		mtimes[nt] = fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW)
		    == 0 ? (int64_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000 : 0;
		if (mtimes[nt] > newest)
			newest = mtimes[nt];
		names[nt] = names[i];
		nt++;
	}
	for (size_t i = 0; i < nt; i++) {
		buf_init(&views[i], API_METRICS_MAX);
		(void)metrics_view(c, names[i], texts[i], lens[i], mtimes[i],
		    newest, now_ms, &views[i]);
		free(texts[i]);
		free(names[i]);
		texts[i] = views[i].data != NULL ? views[i].data : empty;
		lens[i] = views[i].len;
	}
	free(names);
	/* one HELP/TYPE per family across the nodes' files */
	if (texts != NULL && lens != NULL)
		promtext_merge((const char *const *)texts, lens, nt, &b);
	for (size_t i = 0; i < nt; i++)
		buf_fini(&views[i]);
	free(views);
	free(texts);
	free(lens);
	free(mtimes);
	rc = respond(c, out, 200, "text/plain; version=0.0.4; charset=utf-8",
	    b.data != NULL ? b.data : "", b.len);
	buf_fini(&b);
	return rc;
}

/* --- the entry point ------------------------------------------------- */

enum route { R_NONE, R_TASKS, R_TASK, R_HEALTH, R_METRICS, R_REGISTER };

static int
authenticate(struct ctx *c, struct buf *out)
{
	static const char *const var[4] = { "HTTP_X_APP_ID",
	    "HTTP_X_TIMESTAMP", "HTTP_X_NONCE", "HTTP_X_SIGNATURE" };
	static const char *const name[4] = { "X-App-Id", "X-Timestamp",
	    "X-Nonce", "X-Signature" };
	char val[4][80];
	int hr[4];
	struct apps apps;
	struct app *app;
	char why[512], canon_q_empty[1] = "";
	struct buf cq, cs;
	const char *secrets[APPS_SECRETS_MAX];
	int64_t ts;
	int rc, match;

	for (int i = 0; i < 4; i++) {
		hr[i] = header(c, var[i], val[i], sizeof(val[i]));
		if (hr[i] < 0)
			return problem(c, out, 401, "AUTH_HEADER_MISSING",
			    one_member("header", json_string(name[i])),
			    "header %s is required", name[i]);
	}
	for (int i = 0; i < 4; i++) {
		int ok = hr[i] == 0;

		if (ok && i == 0)
			ok = apps_token_ok(val[0], 1, 64, "_-");
		if (ok && i == 1)
			ok = apps_token_ok(val[1], 1, 11, "") && val[1][0] != '0' &&
			    strspn(val[1], "0123456789") == strlen(val[1]);
		if (ok && i == 2)
			ok = apps_token_ok(val[2], 16, 64, "_-");
		if (ok && i == 3)
			ok = apps_token_ok(val[3], 64, 64, "") && strspn(val[3],
			    "0123456789abcdefABCDEF") == 64;
		if (ok)
			continue;
		if (i == 1 && hr[1] == 0 && strlen(val[1]) >= 12 &&
		    strspn(val[1], "0123456789") == strlen(val[1]))
			return problem(c, out, 401, "AUTH_HEADER_MALFORMED",
			    one_member("header", json_string(name[i])),
			    "X-Timestamp must be Unix time in seconds, not "
			    "milliseconds");
		return problem(c, out, 401, "AUTH_HEADER_MALFORMED",
		    one_member("header", json_string(name[i])), "%s does not "
		    "match its grammar%s", name[i], i == 1 ? " (Unix time in "
		    "seconds, 1 to 11 digits)" : "");
	}
	copy(c->app_id, sizeof(c->app_id), val[0]);
	if (apps_load(c->rq->cfg->apps_file, &apps, why, sizeof(why)) != 0) {
		/* A malformed or unreadable apps file stays so until an
		 * operator acts: 500 with the trace id, not 503 "retry". */
		if (errno == EINVAL || errno == EACCES || errno == EPERM) {
			fprintf(stderr, "taskspool.cgi: trace %s: apps file: "
			    "%s\n", c->trace, why);
			return problem(c, out, 500, "INTERNAL_ERROR", NULL,
			    "the server's apps file cannot be used; the web "
			    "server's error log names the problem (trace %s)",
			    c->trace);
		}
		return unavailable(c, out, why);
	}
	app = apps_find(&apps, val[0]);
	if (app == NULL) {
		apps_free(&apps);
		return problem(c, out, 401, "APP_NOT_FOUND", NULL, "unknown "
		    "AppId %s", val[0]);
	}
	c->app = *app;
	if (!app->enabled) {
		apps_free(&apps);
		return problem(c, out, 403, "APP_DISABLED", NULL, "AppId %s is "
		    "disabled", val[0]);
	}
	ts = strtoll(val[1], NULL, 10);
	if (ts - c->rq->now > API_TS_WINDOW || c->rq->now - ts >
	    API_TS_WINDOW) {
		apps_free(&apps);
		return problem(c, out, 401, "TIMESTAMP_EXPIRED", one_member(
		    "serverTime", json_integer(c->rq->now)), "X-Timestamp %s "
		    "is %lld s away from server time; limit is %d s", val[1],
		    (long long)(ts > c->rq->now ? ts - c->rq->now :
		    c->rq->now - ts), API_TS_WINDOW);
	}
	buf_init(&cq, 0);
	buf_init(&cs, 0);
	{
		const char *q = env(c, "QUERY_STRING");
		char path[512];

		snprintf(path, sizeof(path), "/api%s", c->path);
		if (sign_canonical_query(q != NULL ? q : "", &cq) != 0 ||
		    sign_canonical_string(c->method, path, cq.data != NULL ?
		    cq.data : canon_q_empty, val[0], val[1], val[2],
		    c->body_hex, &cs) != 0) {
			buf_fini(&cq);
			buf_fini(&cs);
			apps_free(&apps);
			return unavailable(c, out, "canonical string");
		}
	}
	for (int i = 0; i < app->nsecrets; i++)
		secrets[i] = app->secrets[i];
	match = sign_verify(secrets, (size_t)app->nsecrets, cs.data, cs.len,
	    val[3]);
	apps_free(&apps);
	OPENSSL_cleanse(c->app.secrets, sizeof(c->app.secrets));
	if (match < 0) {
		rc = problem(c, out, 401, "SIGNATURE_MISMATCH", one_member(
		    "canonicalString", json_string(cs.data)), "no active "
		    "secret of AppId %s gives this signature; compare "
		    "canonicalString with yours", val[0]);
		buf_fini(&cq);
		buf_fini(&cs);
		return rc;
	}
	buf_fini(&cq);
	buf_fini(&cs);
	rc = nonce_record(c, val[2], ts + API_NONCE_KEEP);
	if (rc < 0)
		return unavailable(c, out, "state/nonces");
	if (rc == 0)
		return problem(c, out, 401, "NONCE_REPLAYED", NULL, "X-Nonce "
		    "%s was already used by AppId %s", val[2], val[0]);
	return 0;
}

/*
 * The AppId's request limit (ratelimit.h), after authentication: the
 * app's rate=N from apps.conf, else api_rate_limit; 0 = none, and then
 * nothing is read or locked.  Embedded mode counts in
 * state/ratelimit/<appId> (one flock), cluster mode in Redis.  A store
 * that fails lets the request through (logged): the limit protects the
 * service, it must not take it down.  Returns 0 (go on) or the 429 sent.
 */
static int
rate_limit(struct ctx *c, struct buf *out)
{
	const struct config *cfg = c->rq->cfg;
	long limit = c->app.rate != APPS_RATE_DEFAULT ? c->app.rate :
	    cfg->api_rate_limit;
	int64_t win = (int64_t)cfg->api_rate_window_sec * 1000, retry_ms = 0;
	int64_t now_ms = c->rq->now_ms > 0 ? c->rq->now_ms : c->rq->now *
	    1000;
	enum ratelimit_status st = RATELIMIT_ERR;
	char why[512] = "";

	if (limit <= 0)
		return 0;
	if (cfg->redis[0] != '\0' || cfg->sentinel[0] != '\0') {
		struct coord *co = coord_open(cfg, "", &c->sp, why,
		    sizeof(why));

		if (co != NULL)
			st = ratelimit_redis(co, c->app_id, limit, win,
			    &retry_ms, why, sizeof(why));
		coord_close(co);
	} else {
		int dfd = state_subdir(c, "ratelimit");

		if (dfd < 0)
			snprintf(why, sizeof(why), "state/ratelimit: %s",
			    strerror(errno));
		else {
			st = ratelimit_file(dfd, c->app_id, limit, win, now_ms,
			    &retry_ms, why, sizeof(why));
			close(dfd);
		}
	}
	if (st == RATELIMIT_ERR) {
		fprintf(stderr, "taskspool.cgi: trace %s: rate limit of %s not "
		    "applied: %s\n", c->trace, c->app_id, why);
		return 0;
	}
	if (st == RATELIMIT_OK)
		return 0;
	buf_printf(&c->hdr, "Retry-After: %ld\r\n",
	    ratelimit_retry_after(retry_ms));
	{
		json_t *x = json_object();

		json_object_set_new(x, "limit", json_integer(limit));
		json_object_set_new(x, "windowSec",
		    json_integer(cfg->api_rate_window_sec));
		return problem(c, out, 429, "RATE_LIMITED", x, "AppId %s may "
		    "make %ld requests per %ld s; retry after %ld s",
		    c->app_id, limit, cfg->api_rate_window_sec,
		    ratelimit_retry_after(retry_ms));
	}
}

static int
handle(struct ctx *c, struct buf *out)
{
	const char *p = c->path, *allow = NULL, *m = c->method, *q, *cl;
	enum route r = R_NONE;
	int post = strcmp(m, "POST") == 0, get = strcmp(m, "GET") == 0;
	int del = strcmp(m, "DELETE") == 0, ok = 0, rc;
	char *body = NULL;
	size_t n = 0;
	const char *id = NULL;

	/* 1. Route and method (§2.1). */
	if (strcmp(p, "/tasks") == 0) {
		r = R_TASKS;
		allow = "GET, POST";
		ok = get || post;
	} else if (strncmp(p, "/tasks/", 7) == 0 && spool_id_ok(p + 7)) {
		r = R_TASK;
		id = p + 7;
		allow = "GET, DELETE";
		ok = get || del;
	} else if (strcmp(p, "/health") == 0) {
		r = R_HEALTH;
		allow = "GET";
		ok = get;
	} else if (strcmp(p, "/metrics") == 0) {
		r = R_METRICS;
		allow = "GET";
		ok = get;
	} else if (strcmp(p, "/callbacks/register") == 0) {
		r = R_REGISTER;
		allow = "POST";
		ok = post;
	}
	if (r == R_NONE)
		return problem(c, out, 404, "NOT_FOUND", NULL, "no resource "
		    "%s", c->instance);
	if (!ok) {
		buf_printf(&c->hdr, "Allow: %s\r\n", allow);
		return problem(c, out, 405, "METHOD_NOT_ALLOWED", NULL,
		    "%s is not allowed here; allowed: %s", m, allow);
	}
	/* 2. Query syntax (§3.3 step 2). */
	q = env(c, "QUERY_STRING");
	if (q != NULL && !sign_query_ok(q))
		return problem(c, out, 400, "INVALID_QUERY", NULL, "the query "
		    "string holds '+', a byte outside the allowed set, or a "
		    "bad %% escape; encode space as %%20 and plus as %%2B");
	/* 3. Content-Length and media type (§2.3). */
	cl = env(c, "CONTENT_LENGTH");
	if (cl != NULL && cl[0] == '\0')
		cl = NULL;
	if (cl == NULL && post)
		return problem(c, out, 411, "LENGTH_REQUIRED", NULL, "a POST "
		    "needs Content-Length (chunked bodies are not accepted)");
	if (cl != NULL) {
		if (strlen(cl) > 10 || strspn(cl, "0123456789") != strlen(cl))
			return problem(c, out, 400, "INVALID_CONTENT_LENGTH",
			    NULL, "Content-Length must be 1 to 10 digits");
		if (strtoull(cl, NULL, 10) > API_BODY_MAX)
			return problem(c, out, 413, "PAYLOAD_TOO_LARGE",
			    one_member("limit", json_integer(API_BODY_MAX)),
			    "the body may be at most %d bytes", API_BODY_MAX);
		n = (size_t)strtoull(cl, NULL, 10);
	}
	if (post && !json_media_type(env(c, "CONTENT_TYPE")))
		return problem(c, out, 415, "UNSUPPORTED_MEDIA_TYPE", NULL,
		    "Content-Type must be application/json");
	/* 4. The body: exactly CONTENT_LENGTH bytes, never to EOF. */
	if ((body = malloc(n + 1)) == NULL)
		return unavailable(c, out, "body buffer");
	if (read_body(c->rq, body, n) != 0) {
		free(body);
		return problem(c, out, 400, "INCOMPLETE_BODY", NULL, "the body "
		    "ended before Content-Length bytes");
	}
	body[n] = '\0';
	c->body = body;
	c->body_len = n;
	if (sign_sha256_hex(body, n, c->body_hex) != 0) {
		free(body);
		return unavailable(c, out, "SHA-256");
	}
	{
		char why[1024];

		if (spool_open(&c->sp, c->rq->cfg->spool, NULL,
		    (int)c->rq->cfg->fsync, why, sizeof(why)) != 0) {
			free(body);
			return unavailable(c, out, why);
		}
		c->sp_open = 1;
	}
	if (r == R_HEALTH)
		rc = do_health(c, out);
	else if (r == R_METRICS)
		rc = do_metrics(c, out);
	else if ((rc = authenticate(c, out)) != 0 ||
	    (rc = rate_limit(c, out)) != 0)
		;
	else if (r == R_TASKS && post)
		rc = do_submit(c, out);
	else if (r == R_TASKS)
		rc = do_list(c, out);
	else if (r == R_TASK && get)
		rc = do_get(c, out, id);
	else if (r == R_TASK)
		rc = do_cancel(c, out, id);
	else
		rc = do_register(c, out);
	free(body);
	return rc;
}

int
api_handle(const struct api_request *rq, struct buf *out)
{
	struct ctx c;
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
	if (rq->config_error != NULL) {
		/* Permanent until an operator acts: 500, not 503. */
		fprintf(stderr, "taskspool.cgi: trace %s: configuration: %s\n",
		    c.trace, rq->config_error);
		rc = problem(&c, out, 500, "INTERNAL_ERROR", NULL, "the "
		    "server's configuration cannot be used; the web server's "
		    "error log names the problem (trace %s)", c.trace);
	} else
		rc = handle(&c, out);
	OPENSSL_cleanse(&c.app, sizeof(c.app));
	if (c.sp_open)
		spool_close(&c.sp);
	buf_fini(&c.hdr);
	return rc;
}
