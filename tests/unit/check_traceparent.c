/*
 * check_traceparent.c — unit tests for daemon/core/traceparent.c.
 *
 * The valid values are the examples of W3C Trace Context Level 1 §3.2.2
 * (trace-id 4bf92f3577b34da6a3ce929d0e0e4736, parent-id 00f067aa0ba902b7,
 * flags 01 "sampled" and 00 "not sampled"); the invalid ones are the
 * spec's rules broken one at a time by hand (version ff, all-zero ids,
 * uppercase, a wrong length, a misplaced dash), and §3.2.4's rule for a
 * higher version (at least 55 characters, more fields after a '-').
 */
#include <string.h>

#include <check.h>

#include "core/traceparent.h"
#include "unit.h"

#define EX_TRACE	"4bf92f3577b34da6a3ce929d0e0e4736"
#define EX_PARENT	"00f067aa0ba902b7"

START_TEST(test_parse_valid)
{
	static const struct {
		const char *in;
		const char *canon;	/* traceparent_format of it */
		unsigned flags;
	} cases[] = {
		{ "00-" EX_TRACE "-" EX_PARENT "-01",
		  "00-" EX_TRACE "-" EX_PARENT "-01", 0x01 },
		{ "00-" EX_TRACE "-" EX_PARENT "-00",
		  "00-" EX_TRACE "-" EX_PARENT "-00", 0x00 },
		/* unknown flags are kept (§3.2.2.5: a bit field) */
		{ "00-" EX_TRACE "-" EX_PARENT "-09",
		  "00-" EX_TRACE "-" EX_PARENT "-09", 0x09 },
		/* a higher version: exactly 55, or more after a '-' */
		{ "01-" EX_TRACE "-" EX_PARENT "-01",
		  "00-" EX_TRACE "-" EX_PARENT "-01", 0x01 },
		{ "cc-" EX_TRACE "-" EX_PARENT "-01-what-the-future-holds",
		  "00-" EX_TRACE "-" EX_PARENT "-01", 0x01 },
		/* ids with a single non-zero digit */
		{ "00-00000000000000000000000000000001-0000000000000001-01",
		  "00-00000000000000000000000000000001-0000000000000001-01",
		  0x01 },
	};
	struct traceparent tp;
	const char *why;
	char out[TRACEPARENT_LEN + 1];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = NULL;
		ck_assert_msg(traceparent_parse(cases[i].in,
		    strlen(cases[i].in), &tp, &why) == 0, "%s refused: %s",
		    cases[i].in, why ? why : "?");
		ck_assert_uint_eq(tp.flags, cases[i].flags);
		traceparent_format(&tp, out);
		ck_assert_str_eq(out, cases[i].canon);
	}
	ck_assert_uint_eq(tp.trace_id[15], 1);
	ck_assert_uint_eq(tp.parent_id[7], 1);
}
END_TEST

START_TEST(test_parse_invalid)
{
	static const struct {
		const char *in;
		const char *why;	/* the start of the reason */
	} cases[] = {
		{ "", "version" },
		{ "0", "version" },
		{ "ff-" EX_TRACE "-" EX_PARENT "-01", "version ff" },
		{ "0A-" EX_TRACE "-" EX_PARENT "-01", "version must" },
		{ "00-00000000000000000000000000000000-" EX_PARENT "-01",
		  "trace-id must not" },
		{ "00-" EX_TRACE "-0000000000000000-01",
		  "parent-id must not" },
		{ "00-4BF92F3577B34DA6A3CE929D0E0E4736-" EX_PARENT "-01",
		  "trace-id must be" },
		{ "00-" EX_TRACE "-00F067AA0BA902B7-01", "parent-id must be" },
		{ "00-" EX_TRACE "-" EX_PARENT "-0A", "trace-flags" },
		{ "00-" EX_TRACE "-" EX_PARENT "-1", "version 00" },
		{ "00-" EX_TRACE "-" EX_PARENT "-01-", "version 00" },
		{ "00-" EX_TRACE "-" EX_PARENT "-01 ", "version 00" },
		{ "01-" EX_TRACE "-" EX_PARENT "-01x", "a field after" },
		{ "01-" EX_TRACE "-" EX_PARENT "-1", "shorter" },
		{ "00_" EX_TRACE "-" EX_PARENT "-01", "must be version" },
		{ "00-" EX_TRACE "_" EX_PARENT "-01", "must be version" },
		{ "00-" EX_TRACE "-" EX_PARENT "_01", "must be version" },
		{ "00-" EX_TRACE "0-" EX_PARENT "01", "must be version" },
		{ "00-" EX_TRACE "-" EX_PARENT "-g1", "trace-flags" },
		{ "00-" "4bf92f3577b34da6a3ce929d0e0e473g" "-" EX_PARENT "-01",
		  "trace-id must be" },
	};
	struct traceparent tp;
	const char *why;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = NULL;
		ck_assert_msg(traceparent_parse(cases[i].in,
		    strlen(cases[i].in), &tp, &why) == -1, "%s accepted",
		    cases[i].in);
		ck_assert_msg(why != NULL && strncmp(why, cases[i].why,
		    strlen(cases[i].why)) == 0, "%s: reason %s, want %s...",
		    cases[i].in, why ? why : "(none)", cases[i].why);
	}
}
END_TEST

START_TEST(test_parse_no_nul_and_caps)
{
	/* a value inside a larger buffer: only len bytes count */
	static const char buf[] = "00-" EX_TRACE "-" EX_PARENT "-01trailing";
	char big[TRACEPARENT_INPUT_MAX + 2];
	struct traceparent tp;

	ck_assert_int_eq(traceparent_parse(buf, TRACEPARENT_LEN, &tp, NULL),
	    0);
	/* a higher version of 512 characters is the longest accepted */
	memset(big, 'a', sizeof(big));
	memcpy(big, "01-" EX_TRACE "-" EX_PARENT "-01-", 56);
	ck_assert_int_eq(traceparent_parse(big, TRACEPARENT_INPUT_MAX, &tp,
	    NULL), 0);
	ck_assert_int_eq(traceparent_parse(big, TRACEPARENT_INPUT_MAX + 1,
	    &tp, NULL), -1);
}
END_TEST

START_TEST(test_child_and_new)
{
	static const uint8_t r8[8] = { 0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20,
	    0x33, 0x31 };
	static const uint8_t zero[TRACEPARENT_RANDOM_MAX];
	uint8_t r24[TRACEPARENT_RANDOM_MAX];
	static const char *ex = "00-" EX_TRACE "-" EX_PARENT "-01";
	struct traceparent p, c;
	char out[TRACEPARENT_LEN + 1], out2[TRACEPARENT_LEN + 1];

	ck_assert_int_eq(traceparent_parse(ex, strlen(ex), &p, NULL), 0);
	ck_assert_int_eq(traceparent_child(&p, r8, &c), 0);
	traceparent_format(&c, out);
	ck_assert_str_eq(out, "00-" EX_TRACE "-b7ad6b7169203331-01");
	ck_assert_int_eq(traceparent_child(&p, zero, &c), -1);

	for (int i = 0; i < TRACEPARENT_RANDOM_MAX; i++)
		r24[i] = (uint8_t)(i + 1);
	ck_assert_int_eq(traceparent_new(r24, &p), 0);
	traceparent_format(&p, out);
	ck_assert_str_eq(out, "00-0102030405060708090a0b0c0d0e0f10-"
	    "1112131415161718-01");
	ck_assert_int_eq(traceparent_new(zero, &p), -1);
	memset(r24 + 16, 0, 8);
	ck_assert_int_eq(traceparent_new(r24, &p), -1);

	/* the RAND_bytes helpers: valid, the child keeps the trace-id */
	ck_assert_int_eq(traceparent_fresh(out), 0);
	ck_assert_int_eq(traceparent_parse(out, strlen(out), &p, NULL), 0);
	ck_assert_int_eq(traceparent_child_fresh(out, out2), 0);
	ck_assert_int_eq(memcmp(out, out2, 36), 0);
	ck_assert_str_ne(out, out2);
	ck_assert_int_eq(traceparent_child_fresh("00-zz", out2), -1);
	ck_assert_int_eq(traceparent_child_fresh(NULL, out2), -1);

	traceparent_trace_id(ex, out);
	ck_assert_str_eq(out, EX_TRACE);
	traceparent_trace_id("nonsense", out);
	ck_assert_str_eq(out, "");
	traceparent_trace_id(NULL, out);
	ck_assert_str_eq(out, "");
}
END_TEST

static Suite *
traceparent_suite(void)
{
	Suite *s = suite_create("traceparent");
	TCase *tc = tcase_create("traceparent");

	tcase_add_test(tc, test_parse_valid);
	tcase_add_test(tc, test_parse_invalid);
	tcase_add_test(tc, test_parse_no_nul_and_caps);
	tcase_add_test(tc, test_child_and_new);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(traceparent_suite)
