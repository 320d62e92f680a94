/*
 * check_callback.c — unit tests for the pure parts of daemon/callback/callback.c:
 * the §6.2 envelope built from a result envelope, and the delivery file.
 *
 * Expected bytes are the "body" members of callback_signing C01, C03 and
 * C05 in $TESTDATA/api-vectors.json (serialised once, compact, raw UTF-8,
 * API.md §6.2).  The input is a result envelope (result.h) holding the
 * same values plus members the callback must leave out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "apivectors.h"

#include "core/buf.h"
#include "callback/callback.h"
#include "callback/callback_impl.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/whsign.h"
#include "unit.h"

/* A result envelope (results/<id>.json) carrying the vector's data, with
 * the members in another order and the ones a callback leaves out. */
static char *
result_from(json_t *data)
{
	json_t *r = json_object();
	char *text;

	json_object_set_new(r, "taskName", json_string("monthly report"));
	json_object_set_new(r, "attempts", json_array());
	json_object_set_new(r, "stdoutTail", json_string("out"));
	json_object_set(r, "durationMs", json_object_get(data, "durationMs"));
	json_object_set(r, "finishedAt", json_object_get(data, "finishedAt"));
	json_object_set(r, "startedAt", json_object_get(data, "startedAt"));
	json_object_set(r, "failureReason", json_object_get(data,
	    "failureReason"));
	json_object_set(r, "result", json_object_get(data, "result"));
	json_object_set(r, "status", json_object_get(data, "status"));
	json_object_set(r, "taskCode", json_object_get(data, "taskCode"));
	json_object_set(r, "requestId", json_object_get(data, "requestId"));
	text = json_dumps(r, JSON_PRESERVE_ORDER | JSON_INDENT(1));
	json_decref(r);
	ck_assert(text != NULL);
	return text;
}

START_TEST(test_envelope_bytes)
{
	static const size_t which[] = { 0, 2, 4 };	/* C01, C03, C05 */
	json_t *all = api_vectors(), *cs = json_object_get(all, "callback_signing");
	struct spool sp;

	memset(&sp, 0, sizeof(sp));
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		json_t *c = json_array_get(cs, which[i]);
		const char *want = json_string_value(json_object_get(c, "body"));
		json_t *env = json_loads(want, 0, NULL), *d, *body;
		struct task t;
		struct buf out;
		char *res;

		ck_assert(env != NULL);
		res = result_from(json_object_get(env, "data"));
		task_init(&t);
		snprintf(t.request_id, sizeof(t.request_id), "%s",
		    json_string_value(json_object_get(json_object_get(env,
		    "data"), "requestId")));
		t.callback_url = strdup("https://hooks.example.com/cb");
		buf_init(&out, 0);
		ck_assert_int_eq(callback_prepare(&sp, &t, res, strlen(res),
		    1717243208000LL, &out), 1);
		d = json_loadb(out.data, out.len, 0, NULL);
		ck_assert(d != NULL);
		body = json_object_get(d, "body");
		ck_assert_msg(json_string_length(body) == strlen(want) &&
		    memcmp(json_string_value(body), want, strlen(want)) == 0,
		    "%s: got %s", json_string_value(json_object_get(c, "id")),
		    json_string_value(body));
		ck_assert(whsign_id_ok(json_string_value(json_object_get(d,
		    "webhookId"))));
		ck_assert_str_eq(json_string_value(json_object_get(d, "status")),
		    "PENDING");
		ck_assert_int_eq(json_integer_value(json_object_get(d,
		    "attempts")), 0);
		ck_assert_str_eq(json_string_value(json_object_get(d, "url")),
		    "https://hooks.example.com/cb");
		ck_assert_str_eq(json_string_value(json_object_get(d,
		    "nextAttemptAt")), "2024-06-01T12:00:08.000Z");
		json_decref(d);
		json_decref(env);
		buf_fini(&out);
		task_fini(&t);
		free(res);
	}
	json_decref(all);
}
END_TEST

/* No callbackUrl and no appId: no delivery (NOT_REGISTERED). */
START_TEST(test_none)
{
	struct spool sp;
	struct task t;
	struct buf out;
	const char *res = "{\"requestId\":\"a\",\"finishedAt\":"
	    "\"2024-06-01T12:00:00.000Z\"}";

	memset(&sp, 0, sizeof(sp));
	task_init(&t);
	snprintf(t.request_id, sizeof(t.request_id), "a");
	buf_init(&out, 0);
	ck_assert_int_eq(callback_prepare(&sp, &t, res, strlen(res), 0, &out),
	    0);
	ck_assert_uint_eq(out.len, 0);
	/* Not a result envelope: an error, not a delivery. */
	t.callback_url = strdup("https://x.example/cb");
	ck_assert_int_eq(callback_prepare(&sp, &t, "[1]", 3, 0, &out), -1);
	buf_fini(&out);
	task_fini(&t);
}
END_TEST

/* A result over the 256 KiB body limit is sent thin (API.md §6.2). */
START_TEST(test_truncated)
{
	struct spool sp;
	struct task t;
	struct buf out;
	size_t big = CALLBACK_BODY_MAX + 10;
	const char *head = "{\"requestId\":\"a\",\"status\":\"SUCCESS\","
	    "\"finishedAt\":\"2024-06-01T12:00:00.000Z\",\"result\":\"";
	char *res = malloc(strlen(head) + big + 3);
	json_t *d, *env;

	ck_assert(res != NULL);
	memset(&sp, 0, sizeof(sp));
	/* {"requestId":"a",...,"result":"xxx...x"} */
	memcpy(res, head, strlen(head));
	memset(res + strlen(head), 'x', big);
	memcpy(res + strlen(head) + big, "\"}", 3);
	task_init(&t);
	snprintf(t.request_id, sizeof(t.request_id), "a");
	t.callback_url = strdup("https://x.example/cb");
	buf_init(&out, 0);
	ck_assert_int_eq(callback_prepare(&sp, &t, res, strlen(res), 0, &out),
	    1);
	d = json_loadb(out.data, out.len, 0, NULL);
	ck_assert(d != NULL);
	env = json_loads(json_string_value(json_object_get(d, "body")), 0,
	    NULL);
	ck_assert(env != NULL);
	ck_assert(json_is_null(json_object_get(json_object_get(env, "data"),
	    "result")));
	ck_assert(json_is_true(json_object_get(json_object_get(env, "data"),
	    "resultTruncated")));
	json_decref(env);
	json_decref(d);
	buf_fini(&out);
	task_fini(&t);
	free(res);
}
END_TEST

/*
 * The delivery file codec's round trip (issue 10, item 2), through
 * cbdel_roundtrip(): hand-made files in each state pass; a time before
 * 1970 (written back as null, so decode(encode(x)) would differ) and a
 * raw NUL after a number are refused at decode, the latter naming the
 * byte (offset counted by hand: {"version":1, is 13 bytes, the webhookId
 * member 45 with its comma, "attempts":0 12, so the NUL is offset 70).
 */
START_TEST(test_delivery_roundtrip)
{
#define WH "\"webhookId\":\"whk_0123456789abcdefghijklmnop\","
	static const char *const good[] = {
		"{\"version\":1," WH "\"requestId\":\"r1\",\"appId\":null,"
		"\"url\":null,\"createdAt\":\"2024-06-01T12:00:00Z\","
		"\"status\":\"PENDING\",\"reason\":null,\"attempts\":0,"
		"\"nextAttemptAt\":null,\"lastAttemptAt\":null,"
		"\"lastHttpStatus\":null,\"lastError\":null,"
		"\"finishedAt\":null,\"body\":\"{\\\"a\\\":1}\"}",
		"{\"version\":1," WH "\"requestId\":\"r1\",\"appId\":\"app-1\","
		"\"url\":\"https://example.org/h?\\u00e9\",\"createdAt\":"
		"\"2024-06-01T12:00:00.5+02:00\",\"status\":\"CALLBACK_FAILED\","
		"\"reason\":\"RETRIES_EXHAUSTED\",\"attempts\":6,"
		"\"nextAttemptAt\":null,\"lastAttemptAt\":"
		"\"2024-06-01T13:00:00Z\",\"lastHttpStatus\":503,"
		"\"lastError\":null,\"finishedAt\":\"2024-06-01T13:00:01Z\","
		"\"body\":\"\"}",
	};
	static const char before_1970[] = "{\"version\":1," WH
	    "\"requestId\":\"r1\",\"createdAt\":\"1969-12-31T23:59:59.998Z\","
	    "\"status\":\"PENDING\",\"attempts\":0,\"body\":\"\"}";
	static const char nul[] = "{\"version\":1," WH "\"attempts\":0\0}";
	char why[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(cbdel_roundtrip(good[i], strlen(good[i]), why,
		    sizeof(why)) == 0, "good[%zu]: %s", i, why);
	ck_assert_int_eq(cbdel_roundtrip(before_1970, sizeof(before_1970) - 1,
	    why, sizeof(why)), 1);
	ck_assert_msg(strstr(why, "createdAt") != NULL, "%s", why);
	ck_assert_int_eq(cbdel_roundtrip(nul, sizeof(nul) - 1, why,
	    sizeof(why)), 1);
	ck_assert_msg(strstr(why, "raw NUL byte at offset 70 outside") !=
	    NULL, "%s", why);
#undef WH
}
END_TEST

static Suite *
callback_suite(void)
{
	Suite *s = suite_create("callback");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_envelope_bytes);
	tcase_add_test(tc, test_none);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_delivery_roundtrip);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(callback_suite)
