/*
 * check_holdmark.c — unit tests for daemon/core/holdmark.c, the hold
 * marker state/hold/<requestId> (holdmark.h).
 *
 * Instants by hand: 2026-12-02T03:00:00Z is 1970→2026-01-01 = 56 y with
 * 14 leap days (72..2024) = 20454 d, + 334 d (Jan..Nov 2026) + 1 =
 * 20789 d → 1796169600 s, + 3 h = 10800 → 1796180400 s.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "core/buf.h"
#include "core/holdmark.h"
#include "unit.h"

#define T0_MS	1796180400000LL		/* 2026-12-02T03:00:00.000Z */

START_TEST(test_decode_good)
{
	static const char text[] = "{\"requestId\":\"order-1\",\"since\":"
	    "\"2026-12-02T03:00:00Z\",\"from\":\"incoming\",\"by\":\"cli uid "
	    "1000\"}";
	struct holdmark m;
	struct task_error err;

	ck_assert_int_eq(holdmark_decode(text, strlen(text), &m, &err), 0);
	ck_assert_str_eq(m.request_id, "order-1");
	ck_assert_str_eq(m.from, "incoming");
	ck_assert_str_eq(m.by, "cli uid 1000");
	ck_assert_int_eq(m.since_ms, T0_MS);
}
END_TEST

START_TEST(test_round_trip)
{
	struct holdmark m, m2;
	struct task_error err;
	struct buf b;

	memset(&m, 0, sizeof(m));
	strcpy(m.request_id, "req_20261202T030000000Z_0a1b2c3d4e5f");
	strcpy(m.from, "active");
	m.since_ms = T0_MS + 250;
	buf_init(&b, 0);
	ck_assert_int_eq(holdmark_encode(&m, &b), 0);
	ck_assert_int_eq(buf_append(&b, "", 0), 0);
	ck_assert_str_eq(b.data, "{\"requestId\":"
	    "\"req_20261202T030000000Z_0a1b2c3d4e5f\",\"since\":"
	    "\"2026-12-02T03:00:00.250Z\",\"from\":\"active\",\"by\":\"\"}\n");
	ck_assert_int_eq(holdmark_decode(b.data, b.len, &m2, &err), 0);
	ck_assert_str_eq(m2.request_id, m.request_id);
	ck_assert_str_eq(m2.from, "active");
	ck_assert_int_eq(m2.since_ms, T0_MS + 250);
	buf_fini(&b);
}
END_TEST

static const struct {
	const char *text;
	const char *field;
} bad[] = {
	{ "", "json" },
	{ "[]", "json" },
	{ "{\"since\":\"2026-12-02T03:00:00Z\",\"from\":\"hold\"}",
	    "requestId" },
	{ "{\"requestId\":\"a\",\"from\":\"hold\"}", "since" },
	{ "{\"requestId\":\"a\",\"since\":\"2026-12-02T03:00:00Z\"}", "from" },
	{ "{\"requestId\":\"a\",\"since\":\"2026-12-02T03:00:00Z\","
	    "\"from\":\"done\"}", "from" },
	{ "{\"requestId\":\"../x\",\"since\":\"2026-12-02T03:00:00Z\","
	    "\"from\":\"hold\"}", "requestId" },
	{ "{\"requestId\":\"a\",\"since\":\"1969-12-31T23:59:59Z\","
	    "\"from\":\"hold\"}", "since" },
	{ "{\"requestId\":\"a\",\"since\":\"2026-12-02T03:00:00Z\","
	    "\"from\":\"hold\",\"by\":\"a\\u001b[2J\"}", "by" },
	{ "{\"requestId\":\"a\",\"since\":\"2026-12-02T03:00:00Z\","
	    "\"from\":\"hold\",\"extra\":1}", "extra" },
	{ "{\"requestId\":\"a\",\"requestId\":\"b\",\"since\":"
	    "\"2026-12-02T03:00:00Z\",\"from\":\"hold\"}", "json" },
};

START_TEST(test_decode_bad)
{
	struct holdmark m;
	struct task_error err;

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(holdmark_decode(bad[_i].text, strlen(bad[_i].text),
	    &m, &err), -1);
	ck_assert_msg(strcmp(err.field, bad[_i].field) == 0, "%s: field %s, "
	    "want %s (%s)", bad[_i].text, err.field, bad[_i].field, err.rule);
	ck_assert_str_eq(m.request_id, "");
}
END_TEST

START_TEST(test_encode_bad)
{
	struct holdmark m;
	struct buf b;

	memset(&m, 0, sizeof(m));
	strcpy(m.request_id, "a");
	strcpy(m.from, "done");
	buf_init(&b, 0);
	errno = 0;
	ck_assert_int_eq(holdmark_encode(&m, &b), -1);
	ck_assert_int_eq(errno, EINVAL);
	strcpy(m.from, "hold");
	strcpy(m.by, "bell\a");
	ck_assert_int_eq(holdmark_encode(&m, &b), -1);
	ck_assert_int_eq(b.len, 0);
	buf_fini(&b);
}
END_TEST

static Suite *
holdmark_suite(void)
{
	Suite *s = suite_create("holdmark");
	TCase *tc = tcase_create("holdmark");

	tcase_add_test(tc, test_decode_good);
	tcase_add_test(tc, test_round_trip);
	tcase_add_loop_test(tc, test_decode_bad, 0, sizeof(bad) /
	    sizeof(bad[0]));
	tcase_add_test(tc, test_encode_bad);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(holdmark_suite)
