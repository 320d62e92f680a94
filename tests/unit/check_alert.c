/*
 * check_alert.c — unit tests for daemon/core/alert.c.
 *
 * Expectations from the issue 14 item 5 design, restated in alert.h: the
 * decision table (mode x previous outcome x this outcome, alert tasks
 * never alert), and the alert requestId: id + ".onfailure" when it fits
 * in 128 bytes, else a prefix, "-", 16 hex digits of SHA-256(id) and the
 * suffix.  The hashes were computed outside the code (Python hashlib and
 * sha256sum(1) of the same bytes).
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "core/alert.h"
#include "unit.h"

/* Short names for the table: modes, previous outcomes, kinds. */
#define EV	ALERT_MODE_EVERY
#define TR	ALERT_MODE_TRANSITION
#define PN	ALERT_PREV_NONE
#define PS	ALERT_PREV_SUCCESS
#define PF	ALERT_PREV_FAILED
#define KN	ALERT_KIND_NONE
#define KF	ALERT_KIND_FAILED
#define KR	ALERT_KIND_RECOVERED

START_TEST(test_decide_table)
{
	static const struct {
		enum alert_mode mode;
		enum alert_prev prev;
		int failed, is_alert;
		enum alert_kind want;
	} c[] = {
		{ EV, PN, 1, 0, KF }, { EV, PF, 1, 0, KF }, { EV, PS, 1, 0, KF },
		{ EV, PF, 0, 0, KN }, { EV, PN, 0, 0, KN }, { EV, PS, 0, 0, KN },
		{ TR, PN, 1, 0, KF }, { TR, PS, 1, 0, KF }, { TR, PF, 1, 0, KN },
		{ TR, PF, 0, 0, KR }, { TR, PS, 0, 0, KN }, { TR, PN, 0, 0, KN },
		/* an alert task never alerts */
		{ EV, PN, 1, 1, KN }, { TR, PS, 1, 1, KN }, { TR, PF, 0, 1, KN },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ck_assert_msg(alert_decide(c[i].mode, c[i].prev, c[i].failed,
		    c[i].is_alert) == c[i].want, "case %zu", i);
}
END_TEST

START_TEST(test_decide_sequence)
{
	/* fail, fail, ok, fail -> failed, none, recovered, failed */
	static const int seq[] = { 1, 1, 0, 1 };
	static const enum alert_kind want[] = { ALERT_KIND_FAILED,
	    ALERT_KIND_NONE, ALERT_KIND_RECOVERED, ALERT_KIND_FAILED };
	enum alert_prev prev = ALERT_PREV_NONE;

	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(alert_decide(ALERT_MODE_TRANSITION, prev,
		    seq[i], 0), want[i]);
		prev = seq[i] ? ALERT_PREV_FAILED : ALERT_PREV_SUCCESS;
	}
}
END_TEST

START_TEST(test_mode_parse)
{
	enum alert_mode m = ALERT_MODE_TRANSITION;

	ck_assert_int_eq(alert_mode_parse("every", &m), 0);
	ck_assert_int_eq(m, ALERT_MODE_EVERY);
	ck_assert_int_eq(alert_mode_parse("transition", &m), 0);
	ck_assert_int_eq(m, ALERT_MODE_TRANSITION);
	ck_assert_int_eq(alert_mode_parse("Every", &m), -1);
	ck_assert_int_eq(alert_mode_parse("", &m), -1);
	ck_assert_int_eq(alert_mode_parse(NULL, &m), -1);
}
END_TEST

START_TEST(test_request_id_short)
{
	char out[129];

	ck_assert_int_eq(alert_request_id("job1.20261202T1350",
	    ALERT_KIND_FAILED, 128, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "job1.20261202T1350.onfailure");
	ck_assert_int_eq(alert_request_id("r-1", ALERT_KIND_RECOVERED, 128,
	    out, sizeof(out)), 0);
	ck_assert_str_eq(out, "r-1.onrecovery");
	ck_assert_int_eq(alert_request_id("r-1", ALERT_KIND_NONE, 128,
	    out, sizeof(out)), -1);
}
END_TEST

START_TEST(test_request_id_long)
{
	/* keep = bytes of id kept; tail = what follows them.  Hashes:
	 * sha256("x" * 119)[:16] = 000b48d4edf0fa7b,
	 * sha256("x" * 130)[:16] = 3afbb132863c57f0,
	 * sha256("y" * 200)[:16] = 8ca9bfd43d61bf0a. */
	static const struct {
		size_t len;
		char ch;
		enum alert_kind kind;
		size_t keep;
		const char *tail;
	} c[] = {
		{ 118, 'x', ALERT_KIND_FAILED, 118, ".onfailure" }, /* 128 */
		{ 119, 'x', ALERT_KIND_FAILED, 101,
		    "-000b48d4edf0fa7b.onfailure" },
		{ 130, 'x', ALERT_KIND_FAILED, 101,
		    "-3afbb132863c57f0.onfailure" },
		{ 200, 'y', ALERT_KIND_RECOVERED, 100,
		    "-8ca9bfd43d61bf0a.onrecovery" },
	};
	char id[201], out[129], want[129];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(id, c[i].ch, c[i].len);
		id[c[i].len] = '\0';
		memset(want, c[i].ch, c[i].keep);
		strcpy(want + c[i].keep, c[i].tail);
		ck_assert_int_eq(alert_request_id(id, c[i].kind, 128, out,
		    sizeof(out)), 0);
		ck_assert_str_eq(out, want);
		ck_assert_uint_eq(strlen(out), 128);
	}
	/* too small an output buffer for the hashed form */
	ck_assert_int_eq(alert_request_id(id, ALERT_KIND_FAILED, 128, out,
	    100), -1);
}
END_TEST

/* The state file: exactly "SUCCESS\n" or "FAILED\n" (alert.h). */
START_TEST(test_prev_parse)
{
	static const char *const bad[] = { "SUCCESS", "FAILED", "failed\n",
	    "SUCCESS\n\n", " FAILED\n", "", "NONE\n", "SUCCESS\0" };
	enum alert_prev p = ALERT_PREV_NONE;

	ck_assert_int_eq(alert_prev_parse("SUCCESS\n", 8, &p), 0);
	ck_assert_int_eq(p, PS);
	ck_assert_int_eq(alert_prev_parse("FAILED\n", 7, &p), 0);
	ck_assert_int_eq(p, PF);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = strlen(bad[i]) + (i == 7 ? 1 : 0);

		p = PN;
		ck_assert_int_eq(alert_prev_parse(bad[i], n, &p), -1);
		ck_assert_int_eq(p, PN);
	}
	ck_assert_str_eq(alert_prev_word(1), "FAILED\n");
	ck_assert_str_eq(alert_prev_word(0), "SUCCESS\n");
}
END_TEST

/* The params: the envelope with "alert" added before its last brace. */
START_TEST(test_params)
{
	static const struct {
		const char *env;
		enum alert_kind kind;
		const char *want;
	} c[] = {
		{ "{\"requestId\":\"a\",\"status\":\"FAILED\"}\n", KF,
		  "{\"requestId\":\"a\",\"status\":\"FAILED\","
		  "\"alert\":\"failed\"}" },
		{ "  {\"status\":\"SUCCESS\"} ", KR,
		  "{\"status\":\"SUCCESS\",\"alert\":\"recovered\"}" },
		{ "{ }", KF, "{ \"alert\":\"failed\"}" },
		{ "{}", KR, "{\"alert\":\"recovered\"}" },
	};
	static const char *const bad[] = { "", "[]", "{", "}", "x{}", "{}x",
	    "  " };
	struct buf b;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		buf_init(&b, 0);
		ck_assert_int_eq(alert_params(c[i].env, strlen(c[i].env),
		    c[i].kind, &b), 0);
		ck_assert_uint_eq(b.len, strlen(c[i].want));
		ck_assert_int_eq(memcmp(b.data, c[i].want, b.len), 0);
		buf_fini(&b);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		buf_init(&b, 0);
		errno = 0;
		ck_assert_int_eq(alert_params(bad[i], strlen(bad[i]), KF, &b),
		    -1);
		ck_assert_int_eq(errno, EINVAL);
		buf_fini(&b);
	}
	buf_init(&b, 0);
	ck_assert_int_eq(alert_params("{}", 2, KN, &b), -1);
	buf_fini(&b);
}
END_TEST

static Suite *
alert_suite(void)
{
	Suite *s = suite_create("alert");
	TCase *tc = tcase_create("alert");

	tcase_add_test(tc, test_decide_table);
	tcase_add_test(tc, test_decide_sequence);
	tcase_add_test(tc, test_mode_parse);
	tcase_add_test(tc, test_request_id_short);
	tcase_add_test(tc, test_request_id_long);
	tcase_add_test(tc, test_prev_parse);
	tcase_add_test(tc, test_params);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(alert_suite)
