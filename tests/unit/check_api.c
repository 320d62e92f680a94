/*
 * check_api.c — the request_verification vectors V01-V14 of
 * tests/data/api-vectors.json (API.md §10) through api_handle(), the
 * CGI's entry point, with the vector's server_time as the clock.
 *
 * Each vector starts from the request_signing vector it is based_on (its
 * headers, body bytes, method, path and query), applies the vector's
 * change (header_override, cgi_env_override, raw_query_override,
 * tampered_body, the Content-Length of V14) and expects the vector's
 * status, code and extra members (serverTime, canonicalString, a detail
 * containing a word).  Every vector gets a fresh spool (nonces are
 * per-spool state): apps.conf holds app-test-01 with the S01 secret and,
 * unless the vector is about a revoked secret (V13), the S13 secondary
 * secret.  The body is given on a pipe whose write end stays open, so a
 * handler that read past CONTENT_LENGTH or waited for EOF would hang (and
 * time out) instead of passing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "api/apps.h"
#include "core/buf.h"
#include "spool/config.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/traceparent.h"

#include "apivectors.h"

static json_t *vectors;

#define NVARS 32
struct envmap {
	char *name[NVARS], *value[NVARS];
	int n;
};

static const char *
env_get(void *ctx, const char *name)
{
	struct envmap *e = ctx;

	for (int i = 0; i < e->n; i++)
		if (strcmp(e->name[i], name) == 0)
			return e->value[i];
	return NULL;
}

static void
env_set(struct envmap *e, const char *name, const char *value)
{
	for (int i = 0; i < e->n; i++)
		if (strcmp(e->name[i], name) == 0) {
			free(e->value[i]);
			if (value == NULL) {
				free(e->name[i]);
				e->n--;
				e->name[i] = e->name[e->n];
				e->value[i] = e->value[e->n];
			} else
				e->value[i] = strdup(value);
			return;
		}
	if (value == NULL)
		return;
	ck_assert_int_lt(e->n, NVARS);
	e->name[e->n] = strdup(name);
	e->value[e->n++] = strdup(value);
}

static void
env_free(struct envmap *e)
{
	for (int i = 0; i < e->n; i++) {
		free(e->name[i]);
		free(e->value[i]);
	}
	e->n = 0;
}

/* "X-App-Id" -> "HTTP_X_APP_ID" (RFC 3875 §4.1.18). */
static void
meta_name(const char *h, char *out, size_t len)
{
	size_t i = (size_t)snprintf(out, len, "HTTP_");

	for (; *h != '\0' && i + 1 < len; h++)
		out[i++] = *h == '-' ? '_' : (char)(*h >= 'a' && *h <= 'z' ?
		    *h - 32 : *h);
	out[i] = '\0';
}

static json_t *
by_id(const char *section, const char *id)
{
	json_t *a = json_object_get(vectors, section), *v;
	size_t i;

	json_array_foreach(a, i, v)
		if (strcmp(json_string_value(json_object_get(v, "id")), id) ==
		    0)
			return v;
	return NULL;
}

static char spool_dir[256];
static const char *config_error;	/* api_request.config_error of run() */
static int close_early;		/* close the body's write end before */

/* A fresh spool with apps.conf and the report.generate hook. */
static void
make_spool(struct config *cfg, int with_secondary)
{
	char why[512], path[CONFIG_PATH_MAX + 64];
	const char *s1 = json_string_value(json_object_get(by_id(
	    "request_signing", "S01"), "secret"));
	const char *s13 = json_string_value(json_object_get(by_id(
	    "request_signing", "S13"), "secret"));
	FILE *f;

	snprintf(spool_dir, sizeof(spool_dir), "%s/check_api.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(spool_dir));
	strcat(spool_dir, "/spool");
	ck_assert_msg(spool_create(spool_dir, -1, why, sizeof(why)) == 0,
	    "%s", why);
	config_defaults(cfg);
	ck_assert_int_eq(config_set(cfg, "spool", spool_dir, why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_set(cfg, "fsync", "0", why, sizeof(why)), 0);
	ck_assert_int_eq(config_finish(cfg, why, sizeof(why)), 0);
	snprintf(path, sizeof(path), "%s/apps.conf", spool_dir);
	ck_assert_str_eq(cfg->apps_file, path);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fprintf(f, "# test apps\napp-test-01 enabled report.generate,"
	    "notify.sms %s%s%s\n", s1, with_secondary ? " " : "",
	    with_secondary ? s13 : "");
	fclose(f);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", cfg->hooks_dir, i == 0 ?
		    "report.generate" : "notify.sms");
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		fputs("#!/bin/sh\nexit 0\n", f);
		fclose(f);
		ck_assert_int_eq(chmod(path, 0755), 0);
	}
}

/* Checked fixture: remove the test's spool (its mkdtemp directory, the
 * parent of spool_dir) when make_spool made one. */
static void
drop_spool(void)
{
	char *slash;

	if (spool_dir[0] == '\0')
		return;
	if ((slash = strrchr(spool_dir, '/')) != NULL)
		*slash = '\0';
	unit_rmtree(spool_dir);
	spool_dir[0] = '\0';
}

struct answer {
	int status;
	json_t *body;		/* parsed body */
	char *raw;		/* the whole response */
};

/*
 * Build the request of S-vector base (with the changes of V-vector v, may
 * be NULL), run api_handle at time now, parse the answer.
 */
static int64_t run_now_ms;	/* rq.now_ms of run(); 0 = now * 1000 */

static void
run(const struct config *cfg, json_t *base, json_t *v, int64_t now,
    struct answer *a)
{
	struct envmap e = { { 0 }, { 0 }, 0 };
	const char *k, *bh;
	json_t *x, *ov;
	char name[128], *body;
	size_t blen;
	int p[2];
	struct api_request rq;
	struct buf out;
	const char *path = json_string_value(json_object_get(base, "path"));
	char *sep;

	env_set(&e, "GATEWAY_INTERFACE", "CGI/1.1");
	env_set(&e, "REQUEST_METHOD", json_string_value(json_object_get(base,
	    "method")));
	ck_assert(strncmp(path, "/api", 4) == 0);
	env_set(&e, "PATH_INFO", path + 4);
	env_set(&e, "SCRIPT_NAME", "/api");
	if (json_string_length(json_object_get(base, "raw_query")) > 0)
		env_set(&e, "QUERY_STRING", json_string_value(json_object_get(
		    base, "raw_query")));
	json_object_foreach(json_object_get(base, "headers"), k, x) {
		if (strcasecmp(k, "Content-Type") == 0)
			env_set(&e, "CONTENT_TYPE", json_string_value(x));
		else if (strcasecmp(k, "Content-Length") == 0)
			env_set(&e, "CONTENT_LENGTH", json_string_value(x));
		else {
			meta_name(k, name, sizeof(name));
			env_set(&e, name, json_string_value(x));
		}
	}
	bh = json_string_value(json_object_get(base, "body_hex"));
	blen = strlen(bh) / 2;
	ck_assert_ptr_nonnull(body = malloc(blen + 1));
	for (size_t i = 0; i < blen; i++)
		ck_assert(sscanf(bh + 2 * i, "%2hhx",
		    (unsigned char *)&body[i]) == 1);
	if (v != NULL) {
		json_object_foreach(json_object_get(v, "header_override"), k,
		    ov) {
			meta_name(k, name, sizeof(name));
			env_set(&e, name, json_string_value(ov));
		}
		json_object_foreach(json_object_get(v, "cgi_env_override"), k,
		    ov)
			env_set(&e, k, json_string_value(ov));
		if ((ov = json_object_get(v, "raw_query_override")) != NULL)
			env_set(&e, "QUERY_STRING", json_string_value(ov));
		if ((ov = json_object_get(v, "tampered_body")) != NULL) {
			free(body);
			body = strdup(json_string_value(ov));
			blen = strlen(body);
			snprintf(name, sizeof(name), "%zu", blen);
			env_set(&e, "CONTENT_LENGTH", name);
		}
		/* V14's change is in words: "Content-Length 1048577". */
		if ((sep = strstr(json_string_value(json_object_get(v,
		    "change")), "Content-Length ")) != NULL) {
			long long cl = atoll(sep + 15);

			ck_assert_int_gt(cl, 0);
			snprintf(name, sizeof(name), "%lld", cl);
			env_set(&e, "CONTENT_LENGTH", name);
			blen = 0;
		}
	}
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq((long)write(p[1], body, blen), (long)blen);
	if (close_early) {
		close(p[1]);
		p[1] = -1;
	}
	memset(&rq, 0, sizeof(rq));
	rq.getenv = env_get;
	rq.ctx = &e;
	rq.in_fd = p[0];
	rq.now = now;
	rq.now_ms = run_now_ms;
	rq.cfg = cfg;
	rq.config_error = config_error;
	buf_init(&out, 0);
	a->status = api_handle(&rq, &out);
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	ck_assert_ptr_nonnull(out.data);
	a->raw = out.data;
	{
		char *hb = strstr(out.data, "\r\n\r\n");
		int st = 0;

		ck_assert_ptr_nonnull(hb);
		ck_assert_int_eq(sscanf(out.data, "Status: %d ", &st), 1);
		ck_assert_int_eq(st, a->status);
		a->body = json_loads(hb + 4, 0, NULL);
	}
	free(body);
	env_free(&e);
}

static void
answer_free(struct answer *a)
{
	json_decref(a->body);
	free(a->raw);
}

START_TEST(test_verification_vector)
{
	json_t *v = json_array_get(json_object_get(vectors,
	    "request_verification"), (size_t)_i), *exp, *base;
	const char *id = json_string_value(json_object_get(v, "id"));
	const char *change = json_string_value(json_object_get(v, "change"));
	int64_t now = json_integer_value(json_object_get(v, "server_time"));
	struct config cfg;
	struct answer a;
	json_t *x;

	base = by_id("request_signing", json_string_value(json_object_get(v,
	    "based_on")));
	ck_assert_ptr_nonnull(base);
	exp = json_object_get(v, "expected");
	make_spool(&cfg, strstr(change, "revoked") == NULL);
	if (strstr(change, "second time") != NULL) {
		/* V06: the first delivery is accepted, then replayed. */
		run(&cfg, base, NULL, now, &a);
		ck_assert_int_eq(a.status, 202);
		answer_free(&a);
	}
	run(&cfg, base, v, now, &a);
	ck_assert_msg(a.status == json_integer_value(json_object_get(exp,
	    "status")), "%s: got %d: %s", id, a.status, a.raw);
	if (json_is_true(json_object_get(exp, "accept"))) {
		ck_assert_ptr_nonnull(a.body);
		ck_assert_ptr_nonnull(strstr(a.raw, "\r\nLocation: /api/tasks/"));
		ck_assert_str_eq(json_string_value(json_object_get(a.body,
		    "status")), "PENDING");
	} else {
		ck_assert_ptr_nonnull(a.body);
		ck_assert_ptr_nonnull(strstr(a.raw,
		    "\r\nContent-Type: application/problem+json\r\n"));
		ck_assert_str_eq(json_string_value(json_object_get(a.body,
		    "code")), json_string_value(json_object_get(exp, "code")));
		ck_assert_int_eq(json_integer_value(json_object_get(a.body,
		    "status")), a.status);
		if (a.status == 401)
			ck_assert_ptr_nonnull(strstr(a.raw, "\r\n"
			    "WWW-Authenticate: TS1-HMAC-SHA256\r\n"));
		if ((x = json_object_get(exp, "serverTime")) != NULL)
			ck_assert_int_eq(json_integer_value(json_object_get(
			    a.body, "serverTime")), json_integer_value(x));
		if ((x = json_object_get(exp, "canonicalString")) != NULL)
			ck_assert_str_eq(json_string_value(json_object_get(
			    a.body, "canonicalString")),
			    json_string_value(x));
		if ((x = json_object_get(exp, "detail_contains")) != NULL)
			ck_assert_ptr_nonnull(strstr(json_string_value(
			    json_object_get(a.body, "detail")),
			    json_string_value(x)));
	}
	answer_free(&a);
}
END_TEST

/* S-vectors with distinct nonces, in one spool, each at its own time:
 * submissions are accepted; S11 (empty body) passes authentication and
 * fails JSON parsing (400, not 401); S03 reads the task S01 created;
 * S10 asks for a task that does not exist. */
START_TEST(test_signing_vectors_accepted)
{
	static const struct { const char *id; int status; const char *code; }
	    t[] = { { "S01", 202, NULL }, { "S02", 202, NULL },
	    { "S05", 202, NULL }, { "S11", 400, "INVALID_JSON" },
	    { "S14", 202, NULL },
	    { "S03", 200, NULL },
	    { "S10", 404, "TASK_NOT_FOUND" } };
	struct config cfg;
	struct answer a;

	make_spool(&cfg, 1);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *s = by_id("request_signing", t[i].id);

		run(&cfg, s, NULL, json_integer_value(json_object_get(s,
		    "timestamp")), &a);
		ck_assert_msg(a.status == t[i].status, "%s: %d %s", t[i].id,
		    a.status, a.raw);
		if (t[i].code != NULL)
			ck_assert_str_eq(json_string_value(json_object_get(
			    a.body, "code")), t[i].code);
		answer_free(&a);
	}
}
END_TEST

/*
 * Body rules of API.md §2.3 at the CGI level (a web server in front
 * usually answers these itself): the S01 request with CONTENT_LENGTH
 * changed.  Expected codes from the §5 table.
 */
START_TEST(test_body_rules)
{
	static const struct { const char *cl; int close; int status;
	    const char *code; } t[] = {
		{ NULL, 0, 411, "LENGTH_REQUIRED" },
		{ "11a", 0, 400, "INVALID_CONTENT_LENGTH" },
		{ "-1", 0, 400, "INVALID_CONTENT_LENGTH" },
		{ "12345678901", 0, 400, "INVALID_CONTENT_LENGTH" },
		{ "1048577", 0, 413, "PAYLOAD_TOO_LARGE" },
		{ "112", 1, 400, "INCOMPLETE_BODY" },
	};
	json_t *s01 = by_id("request_signing", "S01");
	struct config cfg;
	struct answer a;

	make_spool(&cfg, 1);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *v = json_object(), *o = json_object();

		json_object_set_new(o, "CONTENT_LENGTH", t[i].cl != NULL ?
		    json_string(t[i].cl) : json_null());
		json_object_set_new(v, "cgi_env_override", o);
		json_object_set_new(v, "change", json_string("body rules"));
		close_early = t[i].close;
		run(&cfg, s01, v, json_integer_value(json_object_get(s01,
		    "timestamp")), &a);
		close_early = 0;
		ck_assert_msg(a.status == t[i].status, "CL %s: %s", t[i].cl,
		    a.raw);
		ck_assert_str_eq(json_string_value(json_object_get(a.body,
		    "code")), t[i].code);
		if (a.status == 413)
			ck_assert_int_eq(json_integer_value(json_object_get(
			    a.body, "limit")), 1048576);
		answer_free(&a);
		json_decref(v);
	}
}
END_TEST

/*
 * A CGI that died between its idempotency record and the task file
 * (spool-layout/README.md, crash-state table, "API submit"): simulated by
 * removing the task file S01 created.  A retry with the same body while
 * the record is young (the first writer may still be publishing) waits
 * up to 1 s for the task, then answers 503 with Retry-After and publishes
 * nothing (never a 202 for a task that does not exist); once the record
 * is older than 60 s the retry publishes the task.  The retry is S01 again: its nonce marker
 * is removed first, which is what a new nonce would give.
 */
START_TEST(test_orphan_record_completed)
{
	json_t *s01 = by_id("request_signing", "S01");
	int64_t now = json_integer_value(json_object_get(s01, "timestamp"));
	const char *nonce = json_string_value(json_object_get(s01, "nonce"));
	char task[512], rec[512], nm[512];
	struct config cfg;
	struct answer a;
	struct stat st;
	struct timespec old[2] = { { (time_t)now - 120, 0 },
	    { (time_t)now - 120, 0 } };

	make_spool(&cfg, 1);
	snprintf(task, sizeof(task), "%s/incoming/order-20240601-0001.json",
	    spool_dir);
	snprintf(rec, sizeof(rec), "%s/state/requests/order-20240601-0001.json",
	    spool_dir);
	snprintf(nm, sizeof(nm), "%s/state/nonces/app-test-01.%s", spool_dir,
	    nonce);
	run(&cfg, s01, NULL, now, &a);
	ck_assert_int_eq(a.status, 202);
	answer_free(&a);
	ck_assert_int_eq(stat(task, &st), 0);
	ck_assert_int_eq(unlink(task), 0);
	/* Young record: 503, retry; nothing published. */
	ck_assert_int_eq(unlink(nm), 0);
	run(&cfg, s01, NULL, now, &a);
	ck_assert_int_eq(a.status, 503);
	ck_assert_ptr_nonnull(strstr(a.raw, "\r\nRetry-After: 1\r\n"));
	ck_assert_ptr_nonnull(strstr(a.raw, "\"code\":\"SERVICE_UNAVAILABLE\""));
	answer_free(&a);
	ck_assert_int_eq(stat(task, &st), -1);
	/* Old record: the retry completes the submission. */
	ck_assert_int_eq(utimensat(AT_FDCWD, rec, old, 0), 0);
	ck_assert_int_eq(unlink(nm), 0);
	run(&cfg, s01, NULL, now, &a);
	ck_assert_int_eq(a.status, 202);
	ck_assert_str_eq(json_string_value(json_object_get(a.body, "status")),
	    "PENDING");
	answer_free(&a);
	ck_assert_int_eq(stat(task, &st), 0);
}
END_TEST

/*
 * Issue 11 item 5: a finished task whose result file is torn is not
 * answered with broken JSON nor as 200: 503 (retry: the daemons rebuild
 * it) with a detail saying so; once the result is whole again, 200.
 */
/* Forget the nonce of vector v (app-test-01), so it may be sent again. */
static int
unlink_nonce(json_t *v)
{
	char nm[512];

	snprintf(nm, sizeof(nm), "%s/state/nonces/app-test-01.%s", spool_dir,
	    json_string_value(json_object_get(v, "nonce")));
	return unlink(nm);
}

/*
 * Issue 14 item 6 (README.md, "Trace context"): S01 with a valid
 * traceparent header (W3C Trace Context §3.2's example) keeps it in the
 * task file and shows it in the 202 body; with an uppercase one (invalid,
 * §3.2.2) the header is ignored and the task gets a new valid trace.
 */
static void
submit_with_traceparent(const char *hdr, char *got, size_t gotlen)
{
	json_t *s01 = by_id("request_signing", "S01");
	int64_t now = json_integer_value(json_object_get(s01, "timestamp"));
	json_t *v = json_pack("{s:{s:s}, s:s}", "header_override",
	    "traceparent", hdr, "change", "a traceparent header");
	char path[600], data[8192];
	struct config cfg;
	struct answer a;
	struct task t;
	struct task_error te;
	size_t n;
	FILE *f;

	make_spool(&cfg, 1);
	run(&cfg, s01, v, now, &a);
	json_decref(v);
	ck_assert_int_eq(a.status, 202);
	ck_assert_ptr_nonnull(json_string_value(json_object_get(a.body,
	    "traceparent")));
	snprintf(got, gotlen, "%s", json_string_value(json_object_get(a.body,
	    "traceparent")));
	answer_free(&a);
	snprintf(path, sizeof(path), "%s/incoming/order-20240601-0001.json",
	    spool_dir);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(data, 1, sizeof(data), f);
	fclose(f);
	task_init(&t);
	ck_assert_int_eq(task_decode(data, n, &t, &te), 0);
	ck_assert_str_eq(t.traceparent, got);
	task_fini(&t);
}

START_TEST(test_traceparent_header)
{
	static const char tp[] =
	    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
	char got[128];
	struct traceparent p;

	submit_with_traceparent(tp, got, sizeof(got));
	ck_assert_str_eq(got, tp);
	submit_with_traceparent(
	    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", got,
	    sizeof(got));
	ck_assert_int_eq(traceparent_parse(got, strlen(got), &p, NULL), 0);
	ck_assert_int_ne(strncmp(got, tp, 35), 0);
}
END_TEST

START_TEST(test_torn_result_get)
{
	json_t *s01 = by_id("request_signing", "S01");
	json_t *s03 = by_id("request_signing", "S03");
	int64_t t1 = json_integer_value(json_object_get(s01, "timestamp"));
	int64_t t3 = json_integer_value(json_object_get(s03, "timestamp"));
	char from[512], to[512], res[512];
	struct config cfg;
	struct answer a;
	FILE *fp;

	make_spool(&cfg, 1);
	run(&cfg, s01, NULL, t1, &a);
	ck_assert_int_eq(a.status, 202);
	answer_free(&a);
	/* As if it had run: the task in done/, its result cut short. */
	snprintf(from, sizeof(from), "%s/incoming/order-20240601-0001.json",
	    spool_dir);
	snprintf(to, sizeof(to), "%s/done/order-20240601-0001.json",
	    spool_dir);
	snprintf(res, sizeof(res), "%s/results/order-20240601-0001.json",
	    spool_dir);
	ck_assert_int_eq(rename(from, to), 0);
	ck_assert_ptr_nonnull(fp = fopen(res, "w"));
	fputs("{\n  \"requestId\": \"order-20240601-0001\",\n  \"sta", fp);
	fclose(fp);
	run(&cfg, s03, NULL, t3, &a);
	ck_assert_int_eq(a.status, 503);
	ck_assert_ptr_nonnull(strstr(a.raw, "\r\nRetry-After: 1\r\n"));
	ck_assert_str_eq(json_string_value(json_object_get(a.body, "code")),
	    "SERVICE_UNAVAILABLE");
	ck_assert_str_eq(json_string_value(json_object_get(a.body,
	    "requestId")), "order-20240601-0001");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(a.body,
	    "detail")), "damaged"));
	answer_free(&a);
	/* Rebuilt (by hand here): the GET answers it. */
	ck_assert_ptr_nonnull(fp = fopen(res, "w"));
	fputs("{\"requestId\":\"order-20240601-0001\",\"status\":\"SUCCESS\","
	    "\"attempts\":[]}", fp);
	fclose(fp);
	ck_assert_int_eq(unlink_nonce(s03), 0);
	run(&cfg, s03, NULL, t3, &a);
	ck_assert_int_eq(a.status, 200);
	ck_assert_str_eq(json_string_value(json_object_get(a.body, "status")),
	    "SUCCESS");
	answer_free(&a);
}
END_TEST

/*
 * A configuration that does not load is permanent until an operator acts:
 * every request, signed or not, is 500 INTERNAL_ERROR (API.md §5) with
 * the traceId of its X-Trace-Id header, and no Retry-After.
 */
START_TEST(test_config_error_is_500)
{
	json_t *s01 = by_id("request_signing", "S01");
	struct config cfg;
	struct answer a;
	char hdr[64];

	make_spool(&cfg, 1);
	config_error = "/etc/taskspool/taskspool.conf: Permission denied";
	run(&cfg, s01, NULL, json_integer_value(json_object_get(s01,
	    "timestamp")), &a);
	config_error = NULL;
	ck_assert_msg(a.status == 500, "%s", a.raw);
	ck_assert_ptr_nonnull(strstr(a.raw, "Status: 500 Internal Server "
	    "Error\r\n"));
	ck_assert_str_eq(json_string_value(json_object_get(a.body, "code")),
	    "INTERNAL_ERROR");
	ck_assert_int_eq(json_integer_value(json_object_get(a.body,
	    "status")), 500);
	ck_assert_int_eq(json_string_length(json_object_get(a.body,
	    "traceId")), 32);
	snprintf(hdr, sizeof(hdr), "\r\nX-Trace-Id: %s\r\n",
	    json_string_value(json_object_get(a.body, "traceId")));
	ck_assert_ptr_nonnull(strstr(a.raw, hdr));
	ck_assert_ptr_null(strcasestr(a.raw, "Retry-After"));
	/* The reason is logged, not shown to the client. */
	ck_assert_ptr_null(strstr(a.raw, "Permission denied"));
	answer_free(&a);
}
END_TEST

/*
 * The rate limit through the entry point (api_rate_limit = 2 per 60 s,
 * embedded store), with the S-vectors' own times as the clock: S01 at
 * 1717243200 opens the window (count 1); S01 again is a replay, 401
 * before the limit is looked at (not counted); S02 at ...201 is the
 * second; S10 at ...200 is the third: 429 with Retry-After = (window
 * start + 60 s - now) = 60; S03 at ...260 is 60 s after the start, so
 * a new window: 200.
 */
START_TEST(test_rate_limit)
{
	static const struct { const char *id; int status; const char *code;
	    const char *retry; } t[] = {
		{ "S01", 202, NULL, NULL },
		{ "S01", 401, "NONCE_REPLAYED", NULL },
		{ "S02", 202, NULL, NULL },
		{ "S10", 429, "RATE_LIMITED", "\r\nRetry-After: 60\r\n" },
		{ "S03", 200, NULL, NULL } };
	struct config cfg;
	struct answer a;
	char why[256];

	make_spool(&cfg, 1);
	ck_assert_int_eq(config_set(&cfg, "api_rate_limit", "2", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_set(&cfg, "api_rate_window_sec", "60", why,
	    sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *s = by_id("request_signing", t[i].id);

		run(&cfg, s, NULL, json_integer_value(json_object_get(s,
		    "timestamp")), &a);
		ck_assert_msg(a.status == t[i].status, "%zu %s: %d %s", i,
		    t[i].id, a.status, a.raw);
		if (t[i].code != NULL)
			ck_assert_str_eq(json_string_value(json_object_get(
			    a.body, "code")), t[i].code);
		if (t[i].retry != NULL) {
			ck_assert_ptr_nonnull(strstr(a.raw, t[i].retry));
			ck_assert_ptr_nonnull(strstr(a.raw, "Status: 429 Too "
			    "Many Requests\r\n"));
			ck_assert_int_eq(json_integer_value(json_object_get(
			    a.body, "limit")), 2);
		} else
			ck_assert_ptr_null(strstr(a.raw, "Retry-After"));
		answer_free(&a);
	}
}
END_TEST

/*
 * Issue 10: a body with a raw NUL byte is 400 INVALID_JSON whose detail
 * and offset name the byte, and nothing reaches the spool.  The requests
 * are S01 with a new body and nonce, signed by hand outside the code
 * under test (Python hmac/hashlib over the API.md §3.3 canonical string
 * "TS1-HMAC-SHA256\nPOST\n/api/tasks\n\napp-test-01\n1717243200\n"
 * "<nonce>\n<sha256 of the body>" with the S01 secret).  Offsets counted
 * by hand: the NUL follows the '1' of "[1" (offset 71 of 74 bytes) and
 * the 'a' of "a<NUL>b" (offset 66 of 70).
 */
START_TEST(test_nul_body)
{
	static const struct {
		const char *hex, *len, *nonce, *sig, *detail;
		int offset;
	} t[] = {
		{ "7b22726571756573744964223a226e756c2d30303031222c227461736b"
		  "436f6465223a227265706f72742e67656e6572617465222c2265786563"
		  "757465506172616d73223a5b31005d7d", "74",
		  "00000000000000000000000000000a01",
		  "9edb9dcc2e3520187597baaaa1098e8df1ac0078d1f865e8c1648bc79b8cb941",
		  "raw NUL byte at offset 71 outside a string", 71 },
		{ "7b22726571756573744964223a226e756c2d30303032222c227461736b"
		  "436f6465223a227265706f72742e67656e6572617465222c227461736b"
		  "4e616d65223a22610062227d", "70",
		  "00000000000000000000000000000a02",
		  "ac4d2877f016cabe3ad1d7e20ef4e4509f9f8948485c5b555b2c8dfabb0ac21b",
		  "raw NUL byte at offset 66 inside a string", 66 },
	};
	json_t *s01 = by_id("request_signing", "S01");
	struct config cfg;
	struct answer a;

	make_spool(&cfg, 1);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *base = json_deep_copy(s01), *h;
		DIR *d;
		struct dirent *de;
		int files = 0;

		h = json_object_get(base, "headers");
		json_object_set_new(base, "body_hex", json_string(t[i].hex));
		json_object_set_new(h, "Content-Length", json_string(t[i].len));
		json_object_set_new(h, "X-Nonce", json_string(t[i].nonce));
		json_object_set_new(h, "X-Signature", json_string(t[i].sig));
		run(&cfg, base, NULL, 1717243200, &a);
		ck_assert_msg(a.status == 400, "%zu: %s", i, a.raw);
		ck_assert_str_eq(json_string_value(json_object_get(a.body,
		    "code")), "INVALID_JSON");
		ck_assert_msg(strstr(json_string_value(json_object_get(a.body,
		    "detail")), t[i].detail) != NULL, "%zu: %s", i, a.raw);
		ck_assert_int_eq(json_integer_value(json_object_get(a.body,
		    "offset")), t[i].offset);
		answer_free(&a);
		json_decref(base);
		/* no task, no idempotency record */
		ck_assert_ptr_nonnull(d = opendir(cfg.spool));
		closedir(d);
		{
			char path[CONFIG_PATH_MAX + 32];

			snprintf(path, sizeof(path), "%s/incoming", cfg.spool);
			ck_assert_ptr_nonnull(d = opendir(path));
			while ((de = readdir(d)) != NULL)
				files += de->d_name[0] != '.';
			closedir(d);
			snprintf(path, sizeof(path), "%s/state/requests",
			    cfg.spool);
			if ((d = opendir(path)) != NULL) {
				while ((de = readdir(d)) != NULL)
					files += de->d_name[0] != '.';
				closedir(d);
			}
		}
		ck_assert_int_eq(files, 0);
	}
}
END_TEST

/*
 * A submission without requestId gets one made from the request's own
 * instant (rq.now_ms): "req_" + UTC yyyymmddThhmmss + ms + "Z_" + 12 hex
 * digits (API.md section 4.1), so generated ids sort in submission order.
 * Once the second came from rq.now and the ms from a later clock read, so
 * an id made at 12:00:00.998 could be followed by one "at" 12:00:00.001.
 * Two bodies without requestId, S01's key and headers, signed by hand
 * outside the code under test (Python hmac/hashlib over the canonical
 * string of API.md section 3.3, timestamp 1717243200 =
 * 2024-06-01T12:00:00Z); the server's clock is 998 and 999 ms past it.
 */
START_TEST(test_generated_request_id)
{
	static const struct {
		const char *hex, *nonce, *sig, *want;
		int64_t now_ms;
	} t[] = {
		{ "7b227461736b436f6465223a227265706f72742e67656e657261746522"
		  "2c227461736b4e616d65223a226e6f2d69642d31227d",
		  "00000000000000000000000000000b01",
		  "5a798a15bf469733de81493fac2ce0fbaa4a1a96643ec14af1e86022bd886df1",
		  "req_20240601T120000998Z_", 1717243200998LL },
		{ "7b227461736b436f6465223a227265706f72742e67656e657261746522"
		  "2c227461736b4e616d65223a226e6f2d69642d32227d",
		  "00000000000000000000000000000b02",
		  "b93d8acb146f3d6092304ae70befdd542dfe7c0feb55904a672d4df7252fa6dd",
		  "req_20240601T120000999Z_", 1717243200999LL },
	};
	json_t *s01 = by_id("request_signing", "S01");
	struct config cfg;
	struct answer a;
	char prev[64] = "";

	make_spool(&cfg, 1);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *base = json_deep_copy(s01), *h;
		const char *id;

		h = json_object_get(base, "headers");
		json_object_set_new(base, "body_hex", json_string(t[i].hex));
		json_object_set_new(h, "Content-Length", json_string("51"));
		json_object_set_new(h, "X-Nonce", json_string(t[i].nonce));
		json_object_set_new(h, "X-Signature", json_string(t[i].sig));
		run_now_ms = t[i].now_ms;
		run(&cfg, base, NULL, 1717243200, &a);
		run_now_ms = 0;
		ck_assert_msg(a.status == 202, "%zu: %s", i, a.raw);
		id = json_string_value(json_object_get(a.body, "requestId"));
		ck_assert_ptr_nonnull(id);
		ck_assert_msg(strncmp(id, t[i].want, strlen(t[i].want)) == 0,
		    "%zu: %s, want %s...", i, id, t[i].want);
		ck_assert_uint_eq(strlen(id), strlen(t[i].want) + 12);
		ck_assert_int_lt(strcmp(prev, id), 0);
		snprintf(prev, sizeof(prev), "%s", id);
		answer_free(&a);
		json_decref(base);
	}
}
END_TEST

/*
 * The idempotency record codec's round trip (issue 10, item 2), by
 * api_marker_roundtrip(): a record as the API writes it passes; bytes the
 * decoder refuses (a NUL after a member, a fingerprint that is not 64
 * lowercase hex digits, a time before 1970, a missing member) give 1.
 */
START_TEST(test_marker_roundtrip)
{
	static const char good[] = "{\"appId\":\"app-test-01\","
	    "\"requestId\":\"order-1\",\"taskCode\":\"report.generate\","
	    "\"fingerprint\":\"fa89c69db7adf26775009467a8f6aaaeb85a04cc3da0"
	    "afb52ef39c3e62abf712\",\"createdAt\":\"2024-06-01T12:00:00Z\"}";
	char nul[sizeof(good) + 1];
	static const char *const bad[] = {
		"{\"appId\":\"app-test-01\",\"requestId\":\"order-1\","
		"\"taskCode\":\"report.generate\",\"fingerprint\":\"FA89\","
		"\"createdAt\":\"2024-06-01T12:00:00Z\"}",
		"{\"appId\":\"app-test-01\",\"requestId\":\"order-1\","
		"\"taskCode\":\"report.generate\",\"fingerprint\":\"fa89c69d"
		"b7adf26775009467a8f6aaaeb85a04cc3da0afb52ef39c3e62abf712\","
		"\"createdAt\":\"1969-12-31T23:59:59Z\"}",
		"{\"appId\":\"app-test-01\",\"requestId\":\"order-1\","
		"\"taskCode\":\"report.generate\"}",
		"{\"appId\":\"app/x\",\"requestId\":\"order-1\","
		"\"taskCode\":\"report.generate\",\"fingerprint\":\"fa89c69d"
		"b7adf26775009467a8f6aaaeb85a04cc3da0afb52ef39c3e62abf712\","
		"\"createdAt\":\"2024-06-01T12:00:00Z\"}",
	};

	ck_assert_int_eq(api_marker_roundtrip(good, strlen(good)), 0);
	/* the NUL after the last member's value, before the '}' */
	memcpy(nul, good, sizeof(good) - 2);
	nul[sizeof(good) - 2] = '\0';
	nul[sizeof(good) - 1] = '}';
	ck_assert_int_eq(api_marker_roundtrip(nul, sizeof(good)), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(api_marker_roundtrip(bad[i], strlen(bad[i])) == 1,
		    "bad[%zu] accepted", i);
}
END_TEST

/*
 * A new AppSecret (API.md §3.1): 43 base64url characters, and never a
 * leading '-' (a CI run saw `req.py --key SECRET` read a secret that began
 * with one as an option).  Old code drew one in 64 that way: 4,000 draws
 * without one would have a chance of (63/64)^4000 < 1e-27.
 */
START_TEST(test_new_secret_shape)
{
	char s[APPS_SECRET_MAX + 1];
	int firsts[128] = { 0 }, distinct = 0;

	for (int i = 0; i < 4000; i++) {
		ck_assert_int_eq(apps_new_secret(s, sizeof(s)), 0);
		ck_assert_uint_eq(strlen(s), 43);
		ck_assert_uint_eq(strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefgh"
		    "ijklmnopqrstuvwxyz0123456789-_"), 43);
		ck_assert_int_ne(s[0], '-');
		if (firsts[(unsigned char)s[0]]++ == 0)
			distinct++;
	}
	/* every other first character still comes up (63 of them) */
	ck_assert_int_eq(distinct, 63);
	ck_assert_int_eq(apps_new_secret(s, 43), -1);
}
END_TEST

/*
 * The console's HTML escaping (api_html.c): the five metacharacters as
 * the HTML Living Standard's named and numeric references; bytes that
 * are not well-formed UTF-8 (RFC 3629 §3 and §4: 0xFF, an overlong
 * C0 AF, a surrogate ED A0 80, a cut E2 82) as U+FFFD (EF BF BD); a C0
 * control as its Unicode control picture (ESC 0x1b -> U+241B, E2 90 9B;
 * DEL -> U+2421, E2 90 A1); tab, LF and valid UTF-8 (C3 A9, F0 9F 98 80)
 * kept.
 */
START_TEST(test_html_escape)
{
	static const char in[] = "<script>a&b\"c'd</script>\t\n"
	    "\x1b[31m\x7f\xff\xc0\xaf\xed\xa0\x80\xc3\xa9\xf0\x9f\x98\x80"
	    "\xe2\x82";
	static const char want[] = "&lt;script&gt;a&amp;b&quot;c&#39;d"
	    "&lt;/script&gt;\t\n\xe2\x90\x9b[31m\xe2\x90\xa1"
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	    "\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9\xf0\x9f\x98\x80"
	    "\xef\xbf\xbd\xef\xbf\xbd";
	struct buf b;

	buf_init(&b, 0);
	html_text_n(&b, in, sizeof(in) - 1);
	ck_assert_uint_eq(b.len, sizeof(want) - 1);
	ck_assert_mem_eq(b.data, want, b.len);
	buf_reset(&b);
	html_text_n(&b, "a\0b", 3);	/* NUL: U+2400 */
	ck_assert_uint_eq(b.len, 5);
	ck_assert_mem_eq(b.data, "a\xe2\x90\x80" "b", 5);
	buf_fini(&b);
}
END_TEST

static Suite *
api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("vectors");
	int n = (int)json_array_size(json_object_get(vectors,
	    "request_verification"));

	if (n != 14) {
		fprintf(stderr, "expected 14 V-vectors, got %d\n", n);
		exit(EXIT_FAILURE);
	}
	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, NULL, drop_spool);
	tcase_add_loop_test(tc, test_verification_vector, 0, n);
	tcase_add_test(tc, test_signing_vectors_accepted);
	tcase_add_test(tc, test_body_rules);
	tcase_add_test(tc, test_orphan_record_completed);
	tcase_add_test(tc, test_torn_result_get);
	tcase_add_test(tc, test_traceparent_header);
	tcase_add_test(tc, test_config_error_is_500);
	tcase_add_test(tc, test_rate_limit);
	tcase_add_test(tc, test_nul_body);
	tcase_add_test(tc, test_generated_request_id);
	tcase_add_test(tc, test_marker_roundtrip);
	tcase_add_test(tc, test_new_secret_shape);
	tcase_add_test(tc, test_html_escape);
	suite_add_tcase(s, tc);
	return s;
}

API_VECTORS_MAIN(api_suite, vectors)
