/*
 * check_backoff.c — unit tests for daemon/core/backoff.c.
 *
 * Expectations from backoff.h: d = min(cap, base * 2^(n-1)), n < 1 taken
 * as 1; the jittered delay lies in [d - d*pct/100, d], drawn uniformly
 * with the caller's random value; large n never overflows into a zero or
 * negative delay (FIELD-FAILURES B54: Polly's delay turned negative after
 * 1025 tries; test_delay_huge_n goes to n = INT_MAX).  The delays are
 * computed by hand in the table comments.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "core/backoff.h"
#include "unit.h"

START_TEST(test_delay_table)
{
	static const struct {
		int n;
		int64_t base, cap, want;
	} cases[] = {
		/* base 1000, cap 600000 (the config defaults) */
		{ 1, 1000, 600000, 1000 },	/* 1000 * 2^0 */
		{ 2, 1000, 600000, 2000 },	/* 1000 * 2^1 */
		{ 3, 1000, 600000, 4000 },	/* 1000 * 2^2 */
		{ 9, 1000, 600000, 256000 },	/* 1000 * 2^8 = 256000 */
		{ 10, 1000, 600000, 512000 },	/* 1000 * 2^9 = 512000 */
		{ 11, 1000, 600000, 600000 },	/* 1024000 > cap */
		{ 12, 1000, 600000, 600000 },	/* 2048000 > cap */
		{ 0, 1000, 600000, 1000 },	/* n < 1 is taken as 1 */
		{ -7, 1000, 600000, 1000 },
		{ INT_MIN, 1000, 600000, 1000 },
		/* cap below base: min(cap, base) */
		{ 1, 1000, 500, 500 },
		/* exactly at the cap: 5000 * 2^3 = 40000 */
		{ 4, 5000, 40000, 40000 },
		{ 5, 5000, 40000, 40000 },
		/* base 0 → 0 whatever n */
		{ 1, 0, 600000, 0 },
		{ 30, 0, 600000, 0 },
		/* base 1: 2^40 = 1099511627776 */
		{ 41, 1, INT64_MAX, 1099511627776LL },
		/* base 3: 3 * 2^61 = 6917529027641081856 < INT64_MAX */
		{ 62, 3, INT64_MAX, 6917529027641081856LL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t got = backoff_delay_ms(cases[i].n, cases[i].base,
		    cases[i].cap);

		ck_assert_msg(got == cases[i].want,
		    "backoff_delay_ms(%d, %lld, %lld) = %lld, want %lld",
		    cases[i].n, (long long)cases[i].base,
		    (long long)cases[i].cap, (long long)got,
		    (long long)cases[i].want);
	}
}
END_TEST

START_TEST(test_delay_huge_n)
{
	static const int ns[] = { 64, 65, 100, 1000, 100000, INT_MAX - 1,
		INT_MAX };
	static const struct {
		int64_t base, cap;
	} bc[] = {
		{ 1000, 600000 },
		{ 1, INT64_MAX },
		{ 3, INT64_MAX },
		{ 1000, INT64_MAX },
		{ INT64_MAX / 2 + 1, INT64_MAX },
		{ INT64_MAX, INT64_MAX },
	};

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (size_t j = 0; j < sizeof(bc) / sizeof(bc[0]); j++) {
			int64_t got = backoff_delay_ms(ns[i], bc[j].base,
			    bc[j].cap);

			/* n >= 64: 2^(n-1) * base >= 2^63 exceeds every cap
			 * here (cap <= INT64_MAX = 2^63 - 1): the result
			 * is the cap itself, and never <= 0. */
			ck_assert_msg(got == bc[j].cap,
			    "n=%d base=%lld cap=%lld: got %lld", ns[i],
			    (long long)bc[j].base, (long long)bc[j].cap,
			    (long long)got);
		}
	/* Monotone in n up to the cap. */
	{
		int64_t prev = 0;

		for (int n = 1; n <= 80; n++) {
			int64_t d = backoff_delay_ms(n, 7, INT64_MAX);

			ck_assert_msg(d >= prev && d > 0, "n=%d d=%lld", n,
			    (long long)d);
			prev = d;
		}
	}
}
END_TEST

static const uint32_t edge_rnd[] = { 0, 1, 2, 199, 200, 201, 202, 1000,
	65535, 0x7fffffffu, 0x80000000u, UINT32_MAX - 1, UINT32_MAX };

START_TEST(test_jitter_bounds_20)
{
	/* d = 1000, pct 20: [1000 - 1000*20/100, 1000] = [800, 1000] */
	uint32_t x = 2463534242u;	/* xorshift32 seed */
	int64_t lo = INT64_MAX, hi = INT64_MIN, sum = 0;
	const int N = 200000;

	for (size_t i = 0; i < sizeof(edge_rnd) / sizeof(edge_rnd[0]); i++) {
		int64_t j = backoff_jittered_ms(1, 1000, 600000, 20,
		    edge_rnd[i]);

		ck_assert_msg(j >= 800 && j <= 1000, "rnd %u: %lld",
		    edge_rnd[i], (long long)j);
	}
	for (int i = 0; i < N; i++) {
		int64_t j;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		j = backoff_jittered_ms(1, 1000, 600000, 20, x);
		ck_assert_msg(j >= 800 && j <= 1000, "rnd %u: %lld", x,
		    (long long)j);
		lo = j < lo ? j : lo;
		hi = j > hi ? j : hi;
		sum += j;
	}
	/* Uniform over [800, 1000]: both ends are reached and the mean of
	 * 200000 draws is 900 within +-1 (sd of the mean ~ 58/447 = 0.13). */
	ck_assert_int_eq(lo, 800);
	ck_assert_int_eq(hi, 1000);
	ck_assert_msg(sum >= 899LL * N && sum <= 901LL * N, "mean %f",
	    (double)sum / N);

	/* n = 11 → d = cap 600000: [480000, 600000] */
	for (size_t i = 0; i < sizeof(edge_rnd) / sizeof(edge_rnd[0]); i++) {
		int64_t j = backoff_jittered_ms(11, 1000, 600000, 20,
		    edge_rnd[i]);

		ck_assert_msg(j >= 480000 && j <= 600000, "rnd %u: %lld",
		    edge_rnd[i], (long long)j);
	}
	/* d = 7 (not a multiple of 100): [7 - 1.4, 7] → integers 6..7 */
	for (size_t i = 0; i < sizeof(edge_rnd) / sizeof(edge_rnd[0]); i++) {
		int64_t j = backoff_jittered_ms(1, 7, 600000, 20,
		    edge_rnd[i]);

		ck_assert_msg(j >= 6 && j <= 7, "d=7 rnd %u: %lld",
		    edge_rnd[i], (long long)j);
	}
}
END_TEST

START_TEST(test_jitter_pct_0_and_100)
{
	for (size_t i = 0; i < sizeof(edge_rnd) / sizeof(edge_rnd[0]); i++) {
		/* pct 0: exactly d (n=2 → 2000) */
		ck_assert_int_eq(backoff_jittered_ms(2, 1000, 600000, 0,
		    edge_rnd[i]), 2000);
		/* pct 100: [0, d] */
		int64_t j = backoff_jittered_ms(2, 1000, 600000, 100,
		    edge_rnd[i]);

		ck_assert_msg(j >= 0 && j <= 2000, "pct 100 rnd %u: %lld",
		    edge_rnd[i], (long long)j);
	}
	/* pct 100 reaches both ends of [0, 2000] over many draws. */
	{
		int64_t lo = INT64_MAX, hi = INT64_MIN;

		for (uint32_t r = 0; r < 100000; r++) {
			int64_t j = backoff_jittered_ms(2, 1000, 600000, 100,
			    r * 2654435761u);

			lo = j < lo ? j : lo;
			hi = j > hi ? j : hi;
		}
		ck_assert_int_eq(lo, 0);
		ck_assert_int_eq(hi, 2000);
	}
}
END_TEST

START_TEST(test_jitter_base_0_and_huge)
{
	for (size_t i = 0; i < sizeof(edge_rnd) / sizeof(edge_rnd[0]); i++) {
		int64_t d, j;

		/* base 0 → d = 0 → jittered 0 */
		ck_assert_int_eq(backoff_jittered_ms(5, 0, 600000, 20,
		    edge_rnd[i]), 0);
		/* d = INT64_MAX: [d - d/5, d]; the bound d*20/100 = d/5
		 * computed without overflowing. */
		d = INT64_MAX;
		j = backoff_jittered_ms(INT_MAX, 1000, INT64_MAX, 20,
		    edge_rnd[i]);
		ck_assert_msg(j >= d - d / 5 && j <= d, "huge rnd %u: %lld",
		    edge_rnd[i], (long long)j);
		j = backoff_jittered_ms(INT_MAX, 1000, INT64_MAX, 100,
		    edge_rnd[i]);
		ck_assert_msg(j >= 0 && j <= d, "huge 100%% rnd %u: %lld",
		    edge_rnd[i], (long long)j);
	}
}
END_TEST

static Suite *
backoff_suite(void)
{
	Suite *s = suite_create("backoff");
	TCase *tc = tcase_create("backoff");

	tcase_add_test(tc, test_delay_table);
	tcase_add_test(tc, test_delay_huge_n);
	tcase_add_test(tc, test_jitter_bounds_20);
	tcase_add_test(tc, test_jitter_pct_0_and_100);
	tcase_add_test(tc, test_jitter_base_0_and_huge);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(backoff_suite)
