/*
 * check_priority.c — unit tests for daemon/core/priority.c.
 *
 * Expectations from the formula of priority.h and README.md
 * ("Priorities"): effective = min(9, priority + floor(waited / aging)),
 * waited = now - due (negative taken as 0), aging <= 0 = no aging.  The
 * clock is injected: every instant is an argument.  Each row's value is
 * worked out by hand in its comment.
 */
#include <stdint.h>

#include <check.h>

#include "core/priority.h"
#include "unit.h"

/* A fixed "now": 2024-06-01T12:00:00Z in ms (1717243200 s). */
#define NOW	1717243200000LL

START_TEST(test_effective_table)
{
	static const struct {
		int prio;
		int64_t due, now, aging;
		int want;
	} cases[] = {
		/* aging 60 s (the default) */
		{ 5, NOW, NOW, 60000, 5 },		/* waited 0 */
		{ 5, NOW - 59999, NOW, 60000, 5 },	/* floor(59999/60000)=0 */
		{ 5, NOW - 60000, NOW, 60000, 6 },	/* floor(1) = 1: 5+1 */
		{ 5, NOW - 119999, NOW, 60000, 6 },	/* floor(1.99) = 1 */
		{ 5, NOW - 120000, NOW, 60000, 7 },	/* 5+2 */
		{ 5, NOW - 240000, NOW, 60000, 9 },	/* 5+4 = 9 */
		{ 5, NOW - 300000, NOW, 60000, 9 },	/* 5+5 = 10 -> 9 */
		{ 0, NOW - 539999, NOW, 60000, 8 },	/* floor(8.99)=8 */
		{ 0, NOW - 540000, NOW, 60000, 9 },	/* 9 * 60 s: 0+9 */
		{ 9, NOW - 3600000, NOW, 60000, 9 },	/* already 9 */
		{ 9, NOW, NOW, 60000, 9 },
		/* aging 1 s (the scenario's) */
		{ 0, NOW - 1000, NOW, 1000, 1 },
		{ 0, NOW - 4500, NOW, 1000, 4 },	/* floor(4.5) = 4 */
		{ 3, NOW - 2999, NOW, 1000, 5 },	/* 3 + 2 */
		/* a future due (clock stepped back): no aging, no negative */
		{ 2, NOW + 600000, NOW, 60000, 2 },
		/* aging off */
		{ 1, NOW - 3600000, NOW, 0, 1 },
		{ 1, NOW - 3600000, NOW, -5, 1 },
		/* out-of-range input clamped (the codec refuses it before) */
		{ -3, NOW, NOW, 60000, 0 },
		{ 12, NOW, NOW, 60000, 9 },
		/* huge waits do not overflow */
		{ 0, INT64_MIN, INT64_MAX, 1, 9 },
		{ 0, 0, INT64_MAX, INT64_MAX, 1 },	/* floor(1) */
		{ 4, INT64_MIN, 0, INT64_MAX, 5 },	/* 2^63/(2^63-1) = 1 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = priority_effective(cases[i].prio, cases[i].due,
		    cases[i].now, cases[i].aging);

		ck_assert_msg(got == cases[i].want,
		    "row %zu: priority_effective(%d, %lld, %lld, %lld) = %d, "
		    "want %d", i, cases[i].prio, (long long)cases[i].due,
		    (long long)cases[i].now, (long long)cases[i].aging, got,
		    cases[i].want);
	}
}
END_TEST

START_TEST(test_before_table)
{
	static const struct {
		int pa;
		int64_t da;
		int pb;
		int64_t db;
		int64_t aging;
		int want;
	} cases[] = {
		/* 9 fresh before 5 waiting 1 min: 9 > 5+1 */
		{ 9, NOW, 5, NOW - 60000, 60000, 1 },
		{ 5, NOW - 60000, 9, NOW, 60000, 0 },
		/* 0 waiting 9 min (= 9) before a fresh 9: equal, older */
		{ 0, NOW - 540000, 9, NOW, 60000, 1 },
		{ 9, NOW, 0, NOW - 540000, 60000, 0 },
		/* 0 waiting 8 min 59.999 s (= 8) after a fresh 9 */
		{ 0, NOW - 539999, 9, NOW, 60000, 0 },
		/* equal priority: the earlier due first (today's order) */
		{ 5, NOW - 1, 5, NOW, 60000, 1 },
		{ 5, NOW, 5, NOW - 1, 60000, 0 },
		/* the same: neither before the other */
		{ 5, NOW, 5, NOW, 60000, 0 },
		/* 5 waited 30 s (=5), 6 waited 0 (=6): 6 first */
		{ 5, NOW - 30000, 6, NOW, 60000, 0 },
		/* 5 waited 60 s (=6), 6 waited 30 s (=6): equal, older 5 */
		{ 5, NOW - 60000, 6, NOW - 30000, 60000, 1 },
		/* aging off: a low priority never climbs */
		{ 0, NOW - 3600000, 1, NOW, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = priority_before(cases[i].pa, cases[i].da,
		    cases[i].pb, cases[i].db, NOW, cases[i].aging);

		ck_assert_msg(got == cases[i].want,
		    "row %zu: priority_before = %d, want %d", i, got,
		    cases[i].want);
	}
}
END_TEST

static Suite *
priority_suite(void)
{
	Suite *s = suite_create("priority");
	TCase *tc = tcase_create("priority");

	tcase_add_test(tc, test_effective_table);
	tcase_add_test(tc, test_before_table);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(priority_suite)
