/*
 * check_journal.c — unit tests for daemon/core/journal.c: entries of
 * systemd-journald's native protocol.
 *
 * The expected bytes are written out by hand from systemd's "Native
 * Journal Protocol" document: a value without a newline is
 * "NAME=value\n"; a value with one is "NAME\n", its length as a 64-bit
 * little-endian integer, the value, "\n" ("foo\nbar" under MESSAGE is
 * "MESSAGE\n", 07 00 00 00 00 00 00 00, "foo\nbar\n").  The scenario
 * t0018 decodes the daemon's entries with an independent reader
 * (tests/tools/journalrecv.py).
 */
#include <check.h>
#include <string.h>

#include "core/journal.h"
#include "unit.h"

START_TEST(test_plain_fields)
{
	static const char want[] = "MESSAGE=r1: attempt 1 started\n"
	    "PRIORITY=6\nREQUEST_ID=r1\n";
	struct journal_field f[] = {
		{ "MESSAGE", "r1: attempt 1 started" }, { "PRIORITY", "6" },
		{ "TASK_CODE", "" },		/* empty: left out */
		{ "NODE", NULL },		/* NULL: left out */
		{ "REQUEST_ID", "r1" },
	};
	char out[256];
	size_t n = journal_encode(out, sizeof(out), f, 5);

	ck_assert_uint_eq(n, sizeof(want) - 1);
	ck_assert(memcmp(out, want, n) == 0);
}
END_TEST

START_TEST(test_newline_value)
{
	/* A value with a newline, then a plain field after it. */
	static const char want[] = "MESSAGE\n\x07\0\0\0\0\0\0\0" "foo\nbar\n"
	    "PRIORITY=4\n";
	struct journal_field f[] = {
		{ "MESSAGE", "foo\nbar" }, { "PRIORITY", "4" },
	};
	char out[256];
	size_t n = journal_encode(out, sizeof(out), f, 2);

	ck_assert_uint_eq(n, sizeof(want) - 1);
	ck_assert(memcmp(out, want, n) == 0);
}
END_TEST

START_TEST(test_too_small)
{
	/* "A=1\n" is 4 bytes, "B\n" + 8 + "x\ny" + "\n" is 14: 18 fit in
	 * 18 and not in 17 or 3. */
	struct journal_field f[] = { { "A", "1" }, { "B", "x\ny" } };
	char out[32];

	ck_assert_uint_eq(journal_encode(out, 18, f, 2), 18);
	ck_assert_uint_eq(journal_encode(out, 17, f, 2), 0);
	ck_assert_uint_eq(journal_encode(out, 3, f, 1), 0);
	ck_assert_uint_eq(journal_encode(out, 0, f, 0), 0);
}
END_TEST

static Suite *
journal_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("encode");

	tcase_add_test(tc, test_plain_fields);
	tcase_add_test(tc, test_newline_value);
	tcase_add_test(tc, test_too_small);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(journal_suite)
