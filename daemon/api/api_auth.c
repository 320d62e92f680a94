/*
 * api_auth — who is asking (API.md §3.4): the four TS1-HMAC-SHA256
 * headers, the app in apps.conf, the timestamp window, the signature over
 * the canonical string (core/sign.c), the nonce store under
 * state/nonces/, and the AppId's rate limit (coord/ratelimit.c) after
 * that.
 *
 * Invariants: the nonce is recorded only after the signature verified;
 * the app's secrets are wiped from the context as soon as the signature
 * is checked; nothing secret is logged or echoed (a mismatch echoes the
 * canonical string, which holds none).  api_authenticate() is §3.4
 * steps 5 to 9 in order, each one early return; auth_headers() checks
 * the headers' grammar.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api/api_impl.h"
#include "coord/coord_open.h"
#include "coord/coord.h"
#include "coord/ratelimit.h"

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
nonce_record(struct api_ctx *c, const char *nonce, int64_t expires)
{
	char name[APPS_ID_MAX + 80];
	int dfd = api_state_subdir(c, "nonces"), fd = -1, rc = -1;
	unsigned char r;

	if (dfd < 0)
		return -1;
	api_copy(name, sizeof(name), c->app_id);
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

/*
 * The four auth headers (§3.4 steps 5 and 6): each present and in its
 * grammar, copied into val (trimmed).  Returns 0, or the 401
 * AUTH_HEADER_MISSING or AUTH_HEADER_MALFORMED sent.
 */
static int
auth_headers(struct api_ctx *c, struct buf *out, char val[4][80])
{
	static const char *const var[4] = { "HTTP_X_APP_ID",
	    "HTTP_X_TIMESTAMP", "HTTP_X_NONCE", "HTTP_X_SIGNATURE" };
	static const char *const name[4] = { "X-App-Id", "X-Timestamp",
	    "X-Nonce", "X-Signature" };
	int hr[4];

	for (int i = 0; i < 4; i++) {
		hr[i] = api_header(c, var[i], val[i], sizeof(val[i]));
		if (hr[i] < 0)
			return api_problem(c, out, 401, "AUTH_HEADER_MISSING",
			    api_one_member("header", json_string(name[i])),
			    "header %s is required", name[i]);
	}
	for (int i = 0; i < 4; i++) {
		int ok = hr[i] == 0;

		if (ok && i == 0)
			ok = apps_token_ok(val[0], 1, 64, "_-");
		if (ok && i == 1)
			ok = apps_token_ok(val[1], 1, 11, "") &&
			    val[1][0] != '0' && strspn(val[1], "0123456789") ==
			    strlen(val[1]);
		if (ok && i == 2)
			ok = apps_token_ok(val[2], 16, 64, "_-");
		if (ok && i == 3)
			ok = apps_token_ok(val[3], 64, 64, "") && strspn(val[3],
			    "0123456789abcdefABCDEF") == 64;
		if (ok)
			continue;
		if (i == 1 && hr[1] == 0 && strlen(val[1]) >= 12 &&
		    strspn(val[1], "0123456789") == strlen(val[1]))
			return api_problem(c, out, 401, "AUTH_HEADER_MALFORMED",
			    api_one_member("header", json_string(name[i])),
			    "X-Timestamp must be Unix time in seconds, not "
			    "milliseconds");
		return api_problem(c, out, 401, "AUTH_HEADER_MALFORMED",
		    api_one_member("header", json_string(name[i])), "%s does "
		    "not match its grammar%s", name[i], i == 1 ? " (Unix time "
		    "in seconds, 1 to 11 digits)" : "");
	}
	return 0;
}

int
api_authenticate(struct api_ctx *c, struct buf *out)
{
	char val[4][80];
	struct apps apps;
	struct app *app;
	char why[512], canon_q_empty[1] = "";
	struct buf cq, cs;
	const char *secrets[APPS_SECRETS_MAX];
	int64_t ts;
	int rc, match;

	if ((rc = auth_headers(c, out, val)) != 0)
		return rc;
	api_copy(c->app_id, sizeof(c->app_id), val[0]);
	if (apps_load(c->rq->cfg->apps_file, &apps, why, sizeof(why)) != 0) {
		/* A malformed or unreadable apps file stays so until an
		 * operator acts: 500 with the trace id, not 503 "retry". */
		if (errno == EACCES || errno == EPERM)
			return api_denied(c, out, why, c->rq->cfg->apps_file);
		if (errno == EINVAL) {
			fprintf(stderr, "taskspool.cgi: trace %s: apps file: "
			    "%s\n", c->trace, why);
			return api_problem(c, out, 500, "INTERNAL_ERROR", NULL,
			    "the server's apps file cannot be used; the web "
			    "server's error log names the problem (trace %s)",
			    c->trace);
		}
		return api_unavailable(c, out, why);
	}
	app = apps_find(&apps, val[0]);
	if (app == NULL) {
		apps_free(&apps);
		return api_problem(c, out, 401, "APP_NOT_FOUND", NULL,
		    "unknown AppId %s", val[0]);
	}
	c->app = *app;
	if (!app->enabled) {
		apps_free(&apps);
		return api_problem(c, out, 403, "APP_DISABLED", NULL, "AppId "
		    "%s is disabled", val[0]);
	}
	ts = strtoll(val[1], NULL, 10);
	if (ts - c->rq->now > API_TS_WINDOW || c->rq->now - ts >
	    API_TS_WINDOW) {
		apps_free(&apps);
		return api_problem(c, out, 401, "TIMESTAMP_EXPIRED",
		    api_one_member("serverTime", json_integer(c->rq->now)),
		    "X-Timestamp %s is %lld s away from server time; limit is "
		    "%d s", val[1], (long long)(ts > c->rq->now ? ts -
		    c->rq->now : c->rq->now - ts), API_TS_WINDOW);
	}
	buf_init(&cq, 0);
	buf_init(&cs, 0);
	{
		const char *q = api_env(c, "QUERY_STRING");
		char path[512];

		snprintf(path, sizeof(path), "/api%s", c->path);
		if (sign_canonical_query(q != NULL ? q : "", &cq) != 0 ||
		    sign_canonical_string(c->method, path, cq.data != NULL ?
		    cq.data : canon_q_empty, val[0], val[1], val[2],
		    c->body_hex, &cs) != 0) {
			buf_fini(&cq);
			buf_fini(&cs);
			apps_free(&apps);
			return api_unavailable(c, out, "canonical string");
		}
	}
	for (int i = 0; i < app->nsecrets; i++)
		secrets[i] = app->secrets[i];
	match = sign_verify(secrets, (size_t)app->nsecrets, cs.data, cs.len,
	    val[3]);
	apps_free(&apps);
	OPENSSL_cleanse(c->app.secrets, sizeof(c->app.secrets));
	if (match < 0) {
		rc = api_problem(c, out, 401, "SIGNATURE_MISMATCH",
		    api_one_member("canonicalString", json_string(cs.data)),
		    "no active secret of AppId %s gives this signature; "
		    "compare canonicalString with yours", val[0]);
		buf_fini(&cq);
		buf_fini(&cs);
		return rc;
	}
	buf_fini(&cq);
	buf_fini(&cs);
	rc = nonce_record(c, val[2], ts + API_NONCE_KEEP);
	if (rc < 0)
		return api_unavailable(c, out, "state/nonces");
	if (rc == 0)
		return api_problem(c, out, 401, "NONCE_REPLAYED", NULL,
		    "X-Nonce %s was already used by AppId %s", val[2], val[0]);
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
int
api_rate_check(struct api_ctx *c, struct buf *out)
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
		int dfd = api_state_subdir(c, "ratelimit");

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
		return api_problem(c, out, 429, "RATE_LIMITED", x, "AppId %s "
		    "may make %ld requests per %ld s; retry after %ld s",
		    c->app_id, limit, cfg->api_rate_window_sec,
		    ratelimit_retry_after(retry_ms));
	}
}
