/*
 * check_result.c — unit tests for daemon/core/result.c (the result envelope).
 *
 * Shape and rules from result.h and API.md §4.2: durationMs = finishedAt
 * − startedAt of the whole task (first attempt's start to the last
 * attempt's end), 0 if it never started; failureReason {code, message}
 * when FAILED, else null; result null when the hook wrote none; tails are
 * JSON strings with invalid UTF-8 replaced by U+FFFD.  The output is read
 * back with jansson as an independent JSON reader.  Times hand-computed:
 *   2024-06-01T12:00:00Z = 1717243200 s (19875 days × 86400 + 12 h;
 *   19875 = 54 × 365 + 13 leap days to 2024, + 152 days Jan..May 2024).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/task.h"
#include "unit.h"

#define T0 1717243200000LL	/* 2024-06-01T12:00:00.000Z */

static void
attempt(struct task *t, int n, const char *node, int64_t s, int64_t e,
    int code, int sig, enum task_outcome o, const char *reason,
    int64_t retry)
{
	struct task_attempt a;

	memset(&a, 0, sizeof(a));
	a.attempt = n;
	snprintf(a.node, sizeof(a.node), "%s", node);
	a.start_ms = s;
	a.end_ms = e;
	a.exit_code = code;
	a.signal = sig;
	a.outcome = o;
	snprintf(a.reason, sizeof(a.reason), "%s", reason);
	a.retry_at_ms = retry;
	ck_assert_int_eq(task_add_attempt(t, &a), 0);
}

/* The task file in failed/: its history holds attempt 1 only. */
static void
failed_task_file(struct task *t)
{
	task_init(t);
	snprintf(t->request_id, sizeof(t->request_id), "order-20240601-0001");
	snprintf(t->task_code, sizeof(t->task_code), "report.generate");
	t->created_ms = T0 + 120;
	t->trigger_ms = T0 + 1000;
	t->params = strdup("{}");
	t->params_len = 2;
	attempt(t, 1, "n1", T0 + 2000, T0 + 3500, 1, 0, TASK_OUTCOME_FAILED,
	    "exit 1", T0 + 5000);
}

/* A two-attempt task: 12:00:02.000-12:00:03.500 on n1 (exit 1, retry at
 * 12:00:05), 12:00:05.000-12:00:07.250 on n2 (exit code given). */
static void
two_attempts(struct task *t, int second_exit, enum task_outcome second)
{
	failed_task_file(t);
	attempt(t, 2, "n2", T0 + 5000, T0 + 7250, second_exit, 0, second,
	    "", -1);
}

static json_t *
encode_load(const struct task *t, const struct result_info *ri,
    struct buf *b)
{
	json_error_t jerr;
	json_t *o;

	buf_init(b, 0);
	ck_assert_int_eq(result_encode(t, ri, b), 0);
	o = json_loadb(b->data, b->len, JSON_REJECT_DUPLICATES |
	    JSON_ALLOW_NUL, &jerr);
	ck_assert_msg(o != NULL, "not JSON: %s\n%s", jerr.text, b->data);
	ck_assert(json_is_object(o));
	return o;
}

static const char *
str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	ck_assert_msg(json_is_string(v), "%s is not a string", k);
	return json_string_value(v);
}

static json_int_t
num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	ck_assert_msg(json_is_integer(v), "%s is not an integer", k);
	return json_integer_value(v);
}

static void
is_null(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	ck_assert_msg(v != NULL && json_is_null(v), "%s is not null", k);
}

START_TEST(test_failed_two_attempts)
{
	struct task t;
	struct result_info ri = { 0 };
	struct buf b;
	json_t *o, *arr, *a, *fr;
	char status[16];
	size_t n = 0;

	two_attempts(&t, 2, TASK_OUTCOME_FAILED);
	ri.status = "FAILED";
	ri.failure_code = "WORKER_EXIT";
	ri.failure_message = "hook exited with status 2";
	ri.max_retries = 1;
	o = encode_load(&t, &ri, &b);
	ck_assert_str_eq(str(o, "requestId"), "order-20240601-0001");
	ck_assert_str_eq(str(o, "taskCode"), "report.generate");
	is_null(o, "taskName");
	ck_assert_str_eq(str(o, "status"), "FAILED");
	ck_assert_str_eq(str(o, "createdAt"), "2024-06-01T12:00:00.120Z");
	ck_assert_str_eq(str(o, "startedAt"), "2024-06-01T12:00:02.000Z");
	ck_assert_str_eq(str(o, "finishedAt"), "2024-06-01T12:00:07.250Z");
	/* last end − first start = 7250 − 2000 = 5250 ms */
	ck_assert_int_eq(num(o, "durationMs"), 5250);
	ck_assert_int_eq(num(o, "attempt"), 2);
	ck_assert_int_eq(num(o, "maxRetries"), 1);
	ck_assert_str_eq(str(o, "node"), "n2");	/* the last attempt's */
	ck_assert_str_eq(str(o, "triggerTime"), "2024-06-01T12:00:01.000Z");
	is_null(o, "result");
	fr = json_object_get(o, "failureReason");
	ck_assert(json_is_object(fr));
	ck_assert_str_eq(str(fr, "code"), "WORKER_EXIT");
	ck_assert_str_eq(str(fr, "message"), "hook exited with status 2");
	arr = json_object_get(o, "attempts");
	ck_assert(json_is_array(arr));
	ck_assert_uint_eq(json_array_size(arr), 2);
	a = json_array_get(arr, 0);
	ck_assert_int_eq(num(a, "attempt"), 1);
	ck_assert_str_eq(str(a, "node"), "n1");
	ck_assert_str_eq(str(a, "startedAt"), "2024-06-01T12:00:02.000Z");
	ck_assert_str_eq(str(a, "finishedAt"), "2024-06-01T12:00:03.500Z");
	ck_assert_int_eq(num(a, "durationMs"), 1500);	/* 3500 − 2000 */
	ck_assert_int_eq(num(a, "exitCode"), 1);
	is_null(a, "signal");
	ck_assert_str_eq(str(a, "outcome"), "FAILED");
	ck_assert_str_eq(str(a, "reason"), "exit 1");
	ck_assert_str_eq(str(a, "retryAt"), "2024-06-01T12:00:05.000Z");
	a = json_array_get(arr, 1);
	ck_assert_int_eq(num(a, "attempt"), 2);
	ck_assert_str_eq(str(a, "node"), "n2");
	ck_assert_int_eq(num(a, "durationMs"), 2250);	/* 7250 − 5000 */
	ck_assert_int_eq(num(a, "exitCode"), 2);
	is_null(a, "retryAt");
	ck_assert_str_eq(str(o, "stdoutTail"), "");
	ck_assert_str_eq(str(o, "stderrTail"), "");

	/* result_peek reads the same envelope */
	ck_assert_int_eq(result_peek(b.data, b.len, status, &n), 0);
	ck_assert_str_eq(status, "FAILED");
	ck_assert_uint_eq(n, 2);
	json_decref(o);
	buf_fini(&b);
	task_fini(&t);
}
END_TEST

START_TEST(test_success_with_result)
{
	static const char hr[] = "{\"fileUrl\":\"https://files.example.com/"
	    "r/42.pdf\",\"pages\":3}";
	struct task t;
	struct result_info ri = { 0 };
	struct buf b;
	json_t *o, *r;
	char status[16];
	size_t n = 0;

	two_attempts(&t, 0, TASK_OUTCOME_SUCCESS);
	t.task_name = strdup("Monthly report");
	ri.status = "SUCCESS";
	ri.hook_result = hr;
	ri.hook_result_len = strlen(hr);
	ri.stdout_tail = "done\n";
	ri.stdout_len = 5;
	ri.stderr_tail = "warning: x\n";
	ri.stderr_len = 11;
	ri.max_retries = 3;
	o = encode_load(&t, &ri, &b);
	ck_assert_str_eq(str(o, "status"), "SUCCESS");
	ck_assert_str_eq(str(o, "taskName"), "Monthly report");
	is_null(o, "failureReason");
	r = json_object_get(o, "result");
	ck_assert(json_is_object(r));
	ck_assert_str_eq(str(r, "fileUrl"),
	    "https://files.example.com/r/42.pdf");
	ck_assert_int_eq(num(r, "pages"), 3);
	ck_assert_int_eq(num(o, "durationMs"), 5250);
	ck_assert_str_eq(str(o, "stdoutTail"), "done\n");
	ck_assert_str_eq(str(o, "stderrTail"), "warning: x\n");
	ck_assert_int_eq(result_peek(b.data, b.len, status, &n), 0);
	ck_assert_str_eq(status, "SUCCESS");
	ck_assert_uint_eq(n, 2);
	json_decref(o);
	buf_fini(&b);

	/* a scalar hook result is kept as that scalar */
	ri.hook_result = "42";
	ri.hook_result_len = 2;
	o = encode_load(&t, &ri, &b);
	ck_assert_int_eq(num(o, "result"), 42);
	json_decref(o);
	buf_fini(&b);
	task_fini(&t);
}
END_TEST

START_TEST(test_never_started)
{
	/* Cancelled before any attempt: durationMs 0 (API.md §4.2), no
	 * startedAt/finishedAt/node, empty attempts. */
	struct task t;
	struct result_info ri = { 0 };
	struct buf b;
	json_t *o;
	char status[16];
	size_t n = 99;

	task_init(&t);
	snprintf(t.request_id, sizeof(t.request_id), "r1");
	snprintf(t.task_code, sizeof(t.task_code), "c");
	ri.status = "CANCELLED";
	ri.max_retries = 3;
	o = encode_load(&t, &ri, &b);
	ck_assert_str_eq(str(o, "status"), "CANCELLED");
	ck_assert_int_eq(num(o, "durationMs"), 0);
	ck_assert_int_eq(num(o, "attempt"), 0);
	is_null(o, "startedAt");
	is_null(o, "finishedAt");
	is_null(o, "createdAt");
	is_null(o, "node");
	is_null(o, "failureReason");
	is_null(o, "result");
	ck_assert_uint_eq(json_array_size(json_object_get(o, "attempts")), 0);
	ck_assert_int_eq(result_peek(b.data, b.len, status, &n), 0);
	ck_assert_str_eq(status, "CANCELLED");
	ck_assert_uint_eq(n, 0);
	json_decref(o);
	buf_fini(&b);
	task_fini(&t);
}
END_TEST

/* Whether s (NUL-terminated, from jansson) is valid UTF-8 holding ref
 * pieces in order. */
static int
has_in_order(const char *s, const char *const *pieces, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = strstr(s, pieces[i]);

		if (p == NULL)
			return 0;
		s = p + strlen(pieces[i]);
	}
	return 1;
}

START_TEST(test_tails_invalid_utf8)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *pieces[3];	/* expected in order */
	} cases[] = {
		/* stray continuation and invalid lead bytes */
		{ "ok\xff\xfe end", 8, { "ok", "\xef\xbf\xbd", " end" } },
		/* a multi-byte sequence cut by the tail window: 3-byte euro
		 * sign E2 82 AC truncated to E2 82 */
		{ "price 5\xe2\x82", 9, { "price 5", "\xef\xbf\xbd", "" } },
		/* the start cut off: 82 AC then text */
		{ "\x82\xac tail", 7, { "\xef\xbf\xbd", " tail", "" } },
		/* overlong encoding of '/' (C0 AF) is invalid */
		{ "a\xc0\xafz", 4, { "a", "\xef\xbf\xbd", "z" } },
		/* UTF-16 surrogate encoded in UTF-8 (ED A0 80) */
		{ "s\xed\xa0\x80t", 5, { "s", "\xef\xbf\xbd", "t" } },
		/* valid multi-byte text is kept as is */
		{ "caf\xc3\xa9 \xe2\x82\xac", 9, { "caf\xc3\xa9 \xe2\x82\xac",
		    "", "" } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct task t;
		struct result_info ri = { 0 };
		struct buf b;
		json_t *o;
		char status[16];
		size_t n;

		two_attempts(&t, 1, TASK_OUTCOME_FAILED);
		ri.status = "FAILED";
		ri.failure_code = "WORKER_EXIT";
		ri.failure_message = "exit 1";
		ri.stdout_tail = cases[i].bytes;
		ri.stdout_len = cases[i].len;
		ri.stderr_tail = cases[i].bytes;
		ri.stderr_len = cases[i].len;
		o = encode_load(&t, &ri, &b);	/* valid JSON */
		ck_assert_msg(has_in_order(str(o, "stdoutTail"),
		    cases[i].pieces, 3), "case %zu: stdoutTail \"%s\"", i,
		    str(o, "stdoutTail"));
		ck_assert_msg(has_in_order(str(o, "stderrTail"),
		    cases[i].pieces, 3), "case %zu: stderrTail", i);
		ck_assert_int_eq(result_peek(b.data, b.len, status, &n), 0);
		json_decref(o);
		buf_fini(&b);
		task_fini(&t);
	}
}
END_TEST

/*
 * Binary hook output: a NUL byte in a tail.  The envelope must stay
 * readable by this module's own reader (result_peek), whatever
 * representation is chosen for the NUL.
 */
START_TEST(test_tails_nul_byte)
{
	static const struct {
		const char *bytes;
		size_t len;
	} cases[] = {
		{ "a\0b", 3 },			/* valid UTF-8 with NUL */
		{ "a\0b\xff", 4 },		/* NUL and invalid UTF-8 */
	};
	char bad[512] = "";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct task t;
		struct result_info ri = { 0 };
		struct buf b;
		json_t *o;
		char status[16] = "";
		size_t n = 0;

		two_attempts(&t, 0, TASK_OUTCOME_SUCCESS);
		ri.status = "SUCCESS";
		ri.stdout_tail = cases[i].bytes;
		ri.stdout_len = cases[i].len;
		o = encode_load(&t, &ri, &b);	/* valid JSON */
		json_decref(o);
		if (result_peek(b.data, b.len, status, &n) != 0 ||
		    strcmp(status, "SUCCESS") != 0 || n != 2)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			    "[case %zu: result_peek cannot read the envelope; "
			    "stdoutTail is written as %.40s] ", i,
			    strstr(b.data, "\"stdoutTail\"") != NULL ?
			    strstr(b.data, "\"stdoutTail\"") : "?");
		buf_fini(&b);
		task_fini(&t);
	}
	ck_assert_msg(bad[0] == '\0', "%s", bad);
}
END_TEST

START_TEST(test_peek_rejects)
{
	static const char *const notenv[] = {
		"", "{", "[]", "{}", "null", "{\"status\":\"SUCCESS\"}",
		"{\"attempts\":[]}", "{\"status\":1,\"attempts\":[]}",
		"{\"status\":\"SUCCESS\",\"attempts\":{}}",
		/* a status that does not fit 16 bytes */
		"{\"status\":\"SUCCESSSUCCESSSUCCESS\",\"attempts\":[]}",
	};
	char status[16];
	size_t n;

	for (size_t i = 0; i < sizeof(notenv) / sizeof(notenv[0]); i++)
		ck_assert_msg(result_peek(notenv[i], strlen(notenv[i]), status,
		    &n) == -1, "accepted %s", notenv[i]);
	{
		static const char env[] =
		    "{\"status\":\"FAILED\",\"attempts\":[{},{},{}]}";

		ck_assert_int_eq(result_peek(env, strlen(env), status, &n), 0);
	}
	ck_assert_str_eq(status, "FAILED");
	ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(test_json_ok)
{
	static const struct {
		const char *s;
		int ok;
	} cases[] = {
		{ "{\"a\":1}", 1 }, { "[1,2]", 1 }, { "1", 1 }, { "\"x\"", 1 },
		{ "null", 1 }, { " true ", 1 }, { "", 0 }, { "{", 0 },
		{ "{\"a\":1,\"a\":2}", 0 }, { "1 2", 0 }, { "\"\xff\"", 0 },
		{ "{'a':1}", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(!!result_json_ok(cases[i].s, strlen(cases[i].s))
		    == cases[i].ok, "result_json_ok(%s) != %d", cases[i].s,
		    cases[i].ok);
}
END_TEST

/*
 * Issue 10: a hook's result file or a result envelope with a raw NUL
 * after a number (which jansson alone swallows) or a raw control byte in
 * a string is not JSON (RFC 8259 §2, §7), for the hook's result check
 * and for the envelope reader alike.
 */
START_TEST(test_raw_bytes)
{
	static const struct { const char *s; size_t len; } bad[] = {
		{ "[1\0]", 4 }, { "{\"a\":true\0}", 11 }, { "1\0", 2 },
		{ "\"a\x01\"", 4 }, { "{\"status\":\"SUCCESS\",\"attempts\":[]}\0",
		  35 },
	};
	char status[16];
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(!result_json_ok(bad[i].s, bad[i].len),
		    "case %zu accepted", i);
		ck_assert_int_eq(result_peek(bad[i].s, bad[i].len, status, &n),
		    -1);
	}
	/* the same envelope without the NUL is read */
	ck_assert_int_eq(result_peek(bad[4].s, 34, status, &n), 0);
	ck_assert_str_eq(status, "SUCCESS");
}
END_TEST

/* Issue 11 item 5: what a torn result file is, and what is rebuilt. */
START_TEST(test_valid)
{
	static const struct {
		const char *s;
		int ok;
		const char *why;	/* a word of the reason */
	} cases[] = {
		{ "{\"status\":\"SUCCESS\",\"attempts\":[]}", 1, NULL },
		{ "{\"status\":\"SUCCESS\",\"attempts\":[{\"attempt\":1}", 0,
		    "line 1" },
		{ "{\n  \"status\": \"FAI", 0, "line 2" },
		{ "", 0, "not valid JSON" },
		{ "[1]", 0, "not a result envelope" },
		{ "{\"status\":\"SUCCESS\"}", 0, "not a result envelope" },
		{ "{\"status\":7,\"attempts\":[]}", 0, "not a result" },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(result_valid(cases[i].s, strlen(cases[i].s), why,
		    sizeof(why)) == cases[i].ok, "result_valid(%s)",
		    cases[i].s);
		if (cases[i].why != NULL)
			ck_assert_msg(strstr(why, cases[i].why) != NULL,
			    "%s: reason \"%s\" lacks \"%s\"", cases[i].s, why,
			    cases[i].why);
	}
}
END_TEST

/* The envelope of a two-attempt FAILED task as the daemon writes it
 * (JSON_INDENT(2)), written here by hand, up to and including the
 * second attempt and the start of stdoutTail: the file was cut there. */
static const char torn_failed[] =
    "{\n"
    "  \"requestId\": \"order-20240601-0001\",\n"
    "  \"taskCode\": \"report.generate\",\n"
    "  \"taskName\": null,\n"
    "  \"status\": \"FAILED\",\n"
    "  \"createdAt\": \"2024-06-01T12:00:00.120Z\",\n"
    "  \"startedAt\": \"2024-06-01T12:00:02.000Z\",\n"
    "  \"finishedAt\": \"2024-06-01T12:00:07.250Z\",\n"
    "  \"durationMs\": 5250,\n"
    "  \"attempt\": 2,\n"
    "  \"maxRetries\": 1,\n"
    "  \"node\": \"n2\",\n"
    "  \"triggerTime\": \"2024-06-01T12:00:01.000Z\",\n"
    "  \"fencingToken\": 17,\n"
    "  \"result\": {\n    \"pages\": 3\n  },\n"
    "  \"failureReason\": {\n"
    "    \"code\": \"WORKER_EXIT\",\n"
    "    \"message\": \"attempt 2 of 2: exit 2\"\n"
    "  },\n"
    "  \"attempts\": [\n"
    "    {\n      \"attempt\": 1,\n      \"node\": \"n1\",\n"
    "      \"startedAt\": \"2024-06-01T12:00:02.000Z\",\n"
    "      \"finishedAt\": \"2024-06-01T12:00:03.500Z\",\n"
    "      \"durationMs\": 1500,\n      \"exitCode\": 1,\n"
    "      \"signal\": null,\n      \"outcome\": \"FAILED\",\n"
    "      \"reason\": \"exit 1\",\n"
    "      \"retryAt\": \"2024-06-01T12:00:05.000Z\"\n    },\n"
    "    {\n      \"attempt\": 2,\n      \"node\": \"n2\",\n"
    "      \"startedAt\": \"2024-06-01T12:00:05.000Z\",\n"
    "      \"finishedAt\": \"2024-06-01T12:00:07.250Z\",\n"
    "      \"durationMs\": 2250,\n      \"exitCode\": 2,\n"
    "      \"signal\": null,\n      \"outcome\": \"FAILED\",\n"
    "      \"reason\": \"exit 2\",\n      \"retryAt\": null\n    }\n"
    "  ],\n"
    "  \"stdoutTail\": \"progress 50%";

START_TEST(test_rebuild_salvaged_attempts)
{
	struct task t;
	struct buf b;
	json_t *o, *a, *fr;

	failed_task_file(&t);
	ck_assert(!result_valid(torn_failed, strlen(torn_failed), NULL, 0));
	buf_init(&b, 0);
	ck_assert_int_eq(result_rebuild(&t, "FAILED", torn_failed,
	    strlen(torn_failed), 5, &b), 0);
	ck_assert(result_valid(b.data, b.len, NULL, 0));
	o = json_loadb(b.data, b.len, 0, NULL);
	ck_assert_str_eq(str(o, "status"), "FAILED");
	ck_assert_int_eq(num(o, "attempt"), 2);
	ck_assert_int_eq(num(o, "maxRetries"), 1);	/* the torn file's */
	ck_assert_int_eq(num(o, "fencingToken"), 17);
	ck_assert_str_eq(str(o, "node"), "n2");
	ck_assert_str_eq(str(o, "startedAt"), "2024-06-01T12:00:02.000Z");
	ck_assert_str_eq(str(o, "finishedAt"), "2024-06-01T12:00:07.250Z");
	ck_assert_int_eq(num(json_object_get(o, "result"), "pages"), 3);
	fr = json_object_get(o, "failureReason");
	ck_assert_str_eq(str(fr, "code"), "WORKER_EXIT");
	ck_assert_str_eq(str(fr, "message"), "attempt 2 of 2: exit 2");
	ck_assert_uint_eq(json_array_size(json_object_get(o, "attempts")), 2);
	a = json_array_get(json_object_get(o, "attempts"), 1);
	ck_assert_int_eq(num(a, "attempt"), 2);
	ck_assert_str_eq(str(a, "node"), "n2");
	ck_assert_int_eq(num(a, "exitCode"), 2);
	ck_assert_str_eq(str(a, "reason"), "exit 2");
	ck_assert_str_eq(str(o, "stdoutTail"), "");	/* cut: not kept */
	json_decref(o);
	buf_fini(&b);
	task_fini(&t);
}
END_TEST

START_TEST(test_rebuild_header_only)
{
	/* Cut inside the hook's result: the header survives, no attempt. */
	size_t cut = (size_t)(strstr(torn_failed, "\"pages\"") - torn_failed);
	struct task t;
	struct buf b;
	json_t *o, *a;

	task_init(&t);
	snprintf(t.request_id, sizeof(t.request_id), "order-20240601-0001");
	snprintf(t.task_code, sizeof(t.task_code), "report.generate");
	t.params = strdup("{}");
	t.params_len = 2;
	buf_init(&b, 0);
	/* As if it had succeeded at its first attempt (done/). */
	ck_assert_int_eq(result_rebuild(&t, "SUCCESS", torn_failed, cut, 0,
	    &b), 0);
	o = json_loadb(b.data, b.len, 0, NULL);
	ck_assert_msg(o != NULL, "%s", b.data);
	ck_assert_str_eq(str(o, "status"), "SUCCESS");
	is_null(o, "failureReason");
	is_null(o, "result");
	ck_assert_uint_eq(json_array_size(json_object_get(o, "attempts")), 1);
	a = json_array_get(json_object_get(o, "attempts"), 0);
	ck_assert_int_eq(num(a, "attempt"), 1);
	ck_assert_str_eq(str(a, "node"), "n2");
	ck_assert_str_eq(str(a, "startedAt"), "2024-06-01T12:00:02.000Z");
	ck_assert_str_eq(str(a, "finishedAt"), "2024-06-01T12:00:07.250Z");
	ck_assert_int_eq(num(a, "exitCode"), 0);
	ck_assert_str_eq(str(a, "outcome"), "SUCCESS");
	ck_assert(strstr(str(a, "reason"), "details lost") != NULL);
	json_decref(o);
	buf_fini(&b);

	/* Nothing of the file left (a missing result): node unknown. */
	buf_init(&b, 0);
	ck_assert_int_eq(result_rebuild(&t, "CANCELLED", NULL, 0, 0, &b), 0);
	o = json_loadb(b.data, b.len, 0, NULL);
	a = json_array_get(json_object_get(o, "attempts"), 0);
	ck_assert_str_eq(str(o, "status"), "CANCELLED");
	ck_assert_str_eq(str(a, "node"), "unknown");
	ck_assert_str_eq(str(a, "outcome"), "CANCELLED");
	is_null(a, "finishedAt");
	json_decref(o);
	buf_fini(&b);
	task_fini(&t);
}
END_TEST

static Suite *
result_suite(void)
{
	Suite *s = suite_create("result");
	TCase *tc = tcase_create("result");

	tcase_add_test(tc, test_failed_two_attempts);
	tcase_add_test(tc, test_success_with_result);
	tcase_add_test(tc, test_never_started);
	tcase_add_test(tc, test_tails_invalid_utf8);
	tcase_add_test(tc, test_tails_nul_byte);
	tcase_add_test(tc, test_peek_rejects);
	tcase_add_test(tc, test_json_ok);
	tcase_add_test(tc, test_raw_bytes);
	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_rebuild_salvaged_attempts);
	tcase_add_test(tc, test_rebuild_header_only);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(result_suite)
