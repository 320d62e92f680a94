/*
 * check_suggest.c — unit tests for daemon/core/suggest.c: the optimal
 * string alignment distance and the "did you mean" pick.
 *
 * Distances from outside the code: the classic Levenshtein example
 * kitten → sitting is 3 (substitute k→s, e→i, insert g), and the example
 * that tells the optimal string alignment distance from the unrestricted
 * Damerau-Levenshtein one: "CA" → "ABC" is 3 with OSA (2 with
 * unrestricted transpositions), as the Wikipedia article
 * "Damerau–Levenshtein distance" works it out.  The others are counted
 * here by hand.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/suggest.h"
#include "unit.h"

START_TEST(test_distance)
{
	static const struct {
		const char *a, *b;
		size_t d;
	} v[] = {
		{ "kitten", "sitting", 3 },
		{ "CA", "ABC", 3 },		/* OSA, not 2 */
		{ "ca", "ac", 1 },		/* one transposition */
		{ "", "abc", 3 },
		{ "abc", "", 3 },
		{ "same", "same", 0 },
		{ "timeoutsec", "timeoutSec", 0 },	/* case is free */
		{ "tiemoutSec", "timeoutSec", 1 },	/* "ie" swapped */
		{ "maxRetry", "maxRetries", 3 },	/* y→i, +e, +s */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_msg(suggest_distance(v[i].a, v[i].b) == v[i].d,
		    "%s/%s: %zu, want %zu", v[i].a, v[i].b,
		    suggest_distance(v[i].a, v[i].b), v[i].d);
	/* longer than the rows: no distance */
	{
		char longer[SUGGEST_NAME_MAX + 2];

		memset(longer, 'a', sizeof(longer) - 1);
		longer[sizeof(longer) - 1] = '\0';
		ck_assert_uint_eq(suggest_distance(longer, "a"),
		    SUGGEST_NAME_MAX + 1);
	}
}
END_TEST

START_TEST(test_pick)
{
	static const char *const keys[] = { "slots", "max_retries",
		"timeout_sec", "redis", "redis_db", "lease_ms" };
	const size_t n = sizeof(keys) / sizeof(keys[0]);

	ck_assert_str_eq(suggest_name("slot", keys, n), "slots");
	ck_assert_str_eq(suggest_name("max_retry", keys, n), "max_retries");
	ck_assert_str_eq(suggest_name("timeoutsec", keys, n), "timeout_sec");
	ck_assert_str_eq(suggest_name("Redis", keys, n), "redis");
	/* the nearest of two close ones, the first of equals */
	ck_assert_str_eq(suggest_name("redis_d", keys, n), "redis_db");
	/* 1 allowed up to 4 bytes: "rds" is 2 from "redis" (5 bytes, 2
	 * allowed) */
	ck_assert_str_eq(suggest_name("rds", keys, n), "redis");
	ck_assert_ptr_null(suggest_name("xy", keys, n));
	ck_assert_ptr_null(suggest_name("hooks", keys, n));
	ck_assert_ptr_null(suggest_name("", keys, n));
}
END_TEST

static Suite *
suggest_suite(void)
{
	Suite *s = suite_create("suggest");
	TCase *tc = tcase_create("suggest");

	tcase_add_test(tc, test_distance);
	tcase_add_test(tc, test_pick);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suggest_suite)
