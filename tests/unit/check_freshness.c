/*
 * check_freshness.c — unit tests for daemon/core/freshness.c.
 *
 * Contract (freshness.h): stale past limit_ms, judged first against the
 * freshest file of the set (one clock: the file system's), then — only
 * when the reader's clock finds both the mtime and the written-at time
 * older than the limit.  Strictly "more than": exactly the limit is still
 * fresh.  The cases are worked by hand with a 5 s period (limit 15 s) and
 * the clock skews of FIELD-FAILURES.md B31 (±30 s).
 */
#include <stdint.h>

#include <check.h>

#include "core/freshness.h"
#include "unit.h"

#define NOW	1700000000000LL	/* the reader's clock, epoch ms */
#define LIMIT	15000		/* 3 × 5 s */

static int
judge(int64_t written, int64_t mtime, int64_t newest)
{
	struct freshness f = { written, mtime, LIMIT };

	return freshness_stale(&f, newest, NOW);
}

START_TEST(test_cluster_one_clock)
{
	/* A live node: written 1 s ago, the newest file. */
	ck_assert_int_eq(judge(NOW - 1000, NOW - 1000, NOW - 1000), 0);
	/* Killed 20 s ago while another node wrote 1 s ago: 19 s > 15 s,
	 * whatever its written-at says (even a writer clock 30 s ahead). */
	ck_assert_int_eq(judge(NOW + 10000, NOW - 20000, NOW - 1000), 1);
	/* 15 s behind the newest exactly: not more than the limit. */
	ck_assert_int_eq(judge(NOW - 15000, NOW - 15000, NOW), 0);
	/* 15.001 s behind. */
	ck_assert_int_eq(judge(NOW - 15001, NOW - 15001, NOW), 1);
	/* The reader's clock 60 s behind the file server's (mtimes in the
	 * reader's future): the node 20 s behind the newest is still stale,
	 * the newest itself is not. */
	ck_assert_int_eq(judge(NOW + 40000, NOW + 40000, NOW + 60000), 1);
	ck_assert_int_eq(judge(NOW + 60000, NOW + 60000, NOW + 60000), 0);
}
END_TEST

START_TEST(test_alone_reader_clock)
{
	/* The only file (newest = its own mtime), written 16 s ago by both
	 * clocks: a single-node install whose daemon died. */
	ck_assert_int_eq(judge(NOW - 16000, NOW - 16000, NOW - 16000), 1);
	/* 15 s exactly: fresh. */
	ck_assert_int_eq(judge(NOW - 15000, NOW - 15000, NOW - 15000), 0);
	/* A writer under a clock 30 s slow (B31), fresh mtime: fresh. */
	ck_assert_int_eq(judge(NOW - 31000, NOW - 1000, NOW - 1000), 0);
	/* A file server 30 s slow (NFS mtime), the writer on time: fresh. */
	ck_assert_int_eq(judge(NOW - 1000, NOW - 31000, NOW - 31000), 0);
	/* The reader 30 s ahead of both: stale, the documented limit. */
	ck_assert_int_eq(judge(NOW - 31000, NOW - 31000, NOW - 31000), 1);
	/* No written-at time (a file of an older daemon): the mtime alone. */
	ck_assert_int_eq(judge(-1, NOW - 16000, NOW - 16000), 1);
	ck_assert_int_eq(judge(-1, NOW - 1000, NOW - 1000), 0);
	/* Times in the reader's future are never stale. */
	ck_assert_int_eq(judge(NOW + 60000, NOW + 60000, NOW + 60000), 0);
}
END_TEST

START_TEST(test_no_limit)
{
	struct freshness f = { 0, 0, 0 };

	/* limit 0 (no period known): never stale, even 53 years old. */
	ck_assert_int_eq(freshness_stale(&f, NOW, NOW), 0);
	f.limit_ms = -1;
	ck_assert_int_eq(freshness_stale(&f, NOW, NOW), 0);
}
END_TEST

static Suite *
freshness_suite(void)
{
	Suite *s = suite_create("freshness");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, test_cluster_one_clock);
	tcase_add_test(tc, test_alone_reader_clock);
	tcase_add_test(tc, test_no_limit);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(freshness_suite)
