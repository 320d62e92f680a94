/*
 * check_tstime.c — unit tests for daemon/core/tstime.c.
 *
 * Expected instants come from RFC 3339 §5.8's examples and from hand
 * arithmetic (days since 1970-01-01 × 86400 + seconds of the day − offset,
 * shown per row).  Useful day counts:
 *   1970→1985-01-01: 15 y, leap 72 76 80 84 = 4:      5479 d
 *   1970→1990-01-01: 20 y, leap 72..88 = 5:            7305 d
 *   1970→1996-01-01: 26 y, leap 72..92 = 6:            9496 d
 *   1970→2000-01-01: 30 y, leap 72..96 = 7:           10957 d = 946684800 s
 *   1970→2024-01-01: 54 y, leap 72..2020 = 13:        19723 d = 1704067200 s
 *   1970→10000-01-01:                               2932897 d = 253402300800 s
 * tstime.h: mandatory offset (Z/z, +hh:mm, -hh:mm), 'T', 't' or ' '
 * between date and time, fraction of 1..9 digits kept to ms, years
 * 1970-9999, else -1 with errno EINVAL.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/tstime.h"
#include "spool/clock.h"
#include "unit.h"

static const struct {
	const char *s;
	int64_t ms;
} good[] = {
	/* RFC 3339 §5.8: 5479 + (31+28+31) + 11 = 5580 d → 482112000 s;
	 * 23:20:50 = 84050 s → 482196050 s; .52 → 520 ms */
	{ "1985-04-12T23:20:50.52Z", 482196050520LL },
	/* RFC 3339 §5.8: 9496 + 335 (Jan..Nov 1996, leap) + 18 = 9849 d →
	 * 850953600 s; 16:39:57 = 59997 s, +8 h = 28800 → 851042397 s */
	{ "1996-12-19T16:39:57-08:00", 851042397000LL },
	{ "1970-01-01T00:00:00Z", 0 },
	{ "1970-01-01T00:00:00.001Z", 1 },
	/* 01:00+01:00 is midnight UTC */
	{ "1970-01-01T01:00:00+01:00", 0 },
	/* 1704067200 + 152 d (Jan..May 2024) = 1717200000; + 12 h = 43200,
	 * + 7.250 s */
	{ "2024-06-01T12:00:07.250Z", 1717243207250LL },
	{ "2024-06-01T14:00:07.25+02:00", 1717243207250LL },
	{ "2024-06-01T07:30:07.25-04:30", 1717243207250LL },
	/* "-00:00" is RFC 3339's unknown local offset: UTC */
	{ "2024-06-01T12:00:07.250-00:00", 1717243207250LL },
	/* lower-case t and z, and a space instead of T (§5.6 note) */
	{ "2024-06-01t12:00:07.250z", 1717243207250LL },
	{ "2024-06-01 12:00:07.250Z", 1717243207250LL },
	/* fractions: 1 and 9 digits, kept to ms */
	{ "2024-06-01T12:00:07.2Z", 1717243207200LL },
	{ "2024-06-01T12:00:07.05Z", 1717243207050LL },
	{ "2024-06-01T12:00:07.250000000Z", 1717243207250LL },
	{ "2024-06-01T12:00:07.123000999Z", 1717243207123LL },
	/* largest offsets: 23:59+23:59 is 00:00 UTC the same day */
	{ "2024-06-01T23:59:00+23:59", 1717200000000LL },
	{ "2024-06-01T00:00:00-23:59", 1717200000000LL + 86340000LL },
	/* leap days: 1704067200 + (31 + 28) d * 86400 = 1709164800 */
	{ "2024-02-29T00:00:00Z", 1709164800000LL },
	/* 946684800 + 59 d * 86400 = 951782400 (2000 is a leap year) */
	{ "2000-02-29T00:00:00Z", 951782400000LL },
	/* last instant: 253402300800 s - 1 ms */
	{ "9999-12-31T23:59:59.999Z", 253402300799999LL },
};

START_TEST(test_parse_good)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int64_t got = -12345;

		ck_assert_msg(tstime_parse_rfc3339(good[i].s, &got) == 0,
		    "%s: rejected", good[i].s);
		ck_assert_msg(got == good[i].ms, "%s: %lld, want %lld",
		    good[i].s, (long long)got, (long long)good[i].ms);
	}
}
END_TEST

START_TEST(test_leap_second)
{
	/* RFC 3339 §5.8: "1990-12-31T23:59:60Z" is the leap second inserted
	 * at the end of 1990, and "1990-12-31T15:59:60-08:00" the same
	 * instant in PST.  POSIX time has no leap seconds, so the header's
	 * "epoch ms" can only place it at 23:59:59 or the instant after:
	 * 7305 + 364 = 7669 d → 662601600 s; + 86399 s = 662687999 s. */
	int64_t a = -1, b = -1;

	ck_assert_int_eq(tstime_parse_rfc3339("1990-12-31T23:59:60Z", &a), 0);
	ck_assert_int_eq(tstime_parse_rfc3339("1990-12-31T15:59:60-08:00",
	    &b), 0);
	ck_assert_msg(a >= 662687999000LL && a <= 662688000000LL,
	    "leap second at %lld", (long long)a);
	ck_assert_int_eq(a, b);
}
END_TEST

START_TEST(test_before_1970)
{
	/* RFC 3339 §5.8: 1937-01-01T12:00:27.87+00:20 is 11:40:27.870Z.
	 * 1937-01-01 .. 1970-01-01 = 33 * 365 + 8 leap days = 12053 d;
	 * -12053 * 86400 s + 11:40:27.870 (42027.870 s) = -1041337172.130 s */
	int64_t v = 0;

	ck_assert_int_eq(tstime_parse_rfc3339("1937-01-01T12:00:27.87+00:20",
	    &v), 0);
	ck_assert_int_eq(v, -1041337172130LL);
	ck_assert_int_eq(tstime_parse_rfc3339("1969-12-31T23:59:59.999Z", &v),
	    0);
	ck_assert_int_eq(v, -1);
}
END_TEST

static const char *const bad[] = {
	/* past the header's range (9999-12-31T23:59:59.999Z in UTC) */
	"10000-01-01T00:00:00Z",
	"9999-12-31T23:59:59.999-00:01",
	"0000-01-01T00:00:00Z",
	/* no offset / partial forms */
	"2024-06-01T12:00:00",
	"2024-06-01T12:00:00.250",
	"2024-06-01",
	"2024-06-01T12:00Z",
	"2024-6-01T12:00:00Z",
	"2024-06-1T12:00:00Z",
	"24-06-01T12:00:00Z",
	/* field ranges */
	"2024-13-01T00:00:00Z",
	"2024-00-10T00:00:00Z",
	"2024-06-00T00:00:00Z",
	"2024-06-31T00:00:00Z",
	"2024-04-31T00:00:00Z",
	"2024-02-30T00:00:00Z",
	"2023-02-29T00:00:00Z",	/* 2023 is not a leap year */
	"2100-02-29T00:00:00Z",	/* divisible by 100, not by 400 */
	"2024-06-01T24:00:00Z",
	"2024-06-01T12:60:00Z",
	"2024-06-01T12:00:61Z",
	/* offsets */
	"2024-06-01T12:00:00+24:00",
	"2024-06-01T12:00:00+01:60",
	"2024-06-01T12:00:00+0100",
	"2024-06-01T12:00:00+01",
	"2024-06-01T12:00:00 +01:00",
	"2024-06-01T12:00:00UTC",
	"2024-06-01T12:00:00ZZ",
	"2024-06-01T12:00:00Z ",
	/* fractions */
	"2024-06-01T12:00:00.Z",
	"2024-06-01T12:00:00.1234567890Z",	/* 10 digits */
	"2024-06-01T12:00:00,5Z",		/* ISO 8601 comma */
	/* separators and junk */
	"2024-06-01X12:00:00Z",
	"2024/06/01T12:00:00Z",
	" 2024-06-01T12:00:00Z",
	"+2024-06-01T12:00:00Z",
	"2024-06-01T12:00:00Z\n",
	"",
	"Z",
	"2024-06-01T1a:00:00Z",
};

START_TEST(test_parse_bad)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t got = 777;

		errno = 0;
		ck_assert_msg(tstime_parse_rfc3339(bad[i], &got) == -1,
		    "\"%s\": accepted as %lld", bad[i], (long long)got);
		ck_assert_msg(errno == EINVAL, "\"%s\": errno %d", bad[i],
		    errno);
	}
}
END_TEST

START_TEST(test_format)
{
	static const struct {
		int64_t ms;
		const char *s;
	} cases[] = {
		{ 0, "1970-01-01T00:00:00.000Z" },
		{ 1, "1970-01-01T00:00:00.001Z" },
		{ 482196050520LL, "1985-04-12T23:20:50.520Z" },
		{ 851042397000LL, "1996-12-20T00:39:57.000Z" },
		{ 1717243207250LL, "2024-06-01T12:00:07.250Z" },
		{ 951782400001LL, "2000-02-29T00:00:00.001Z" },
		{ 253402300799999LL, "9999-12-31T23:59:59.999Z" },
	};
	char buf[TSTIME_BUF];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 'x', sizeof(buf));
		ck_assert_ptr_eq(tstime_format_ms(buf, sizeof(buf),
		    cases[i].ms), buf);
		ck_assert_str_eq(buf, cases[i].s);
	}
}
END_TEST

START_TEST(test_format_parse_roundtrip)
{
	/* Every instant 1970..9999 formats to text that parses back to the
	 * same ms.  200000 pseudo-random instants (fixed LCG seed) plus the
	 * ends of the range. */
	uint64_t x = 88172645463325252ULL;
	const int64_t max = 253402300799999LL;
	char buf[TSTIME_BUF];

	for (int i = 0; i < 200000; i++) {
		int64_t ms, back = -1;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		ms = i == 0 ? 0 : i == 1 ? max : (int64_t)((x >> 11) %
		    (uint64_t)(max + 1));
		tstime_format_ms(buf, sizeof(buf), ms);
		ck_assert_msg(strlen(buf) == 24, "%lld → %s", (long long)ms,
		    buf);
		ck_assert_msg(tstime_parse_rfc3339(buf, &back) == 0 &&
		    back == ms, "%lld → %s → %lld", (long long)ms, buf,
		    (long long)back);
	}
}
END_TEST

START_TEST(test_clocks)
{
	int64_t now = tstime_now_ms(), m0 = tstime_mono_ms(), m1;

	/* later than 2023-11-14T22:13:20Z (1700000000 s), before 9999 */
	ck_assert_int_gt(now, 1700000000000LL);
	ck_assert_int_lt(now, 253402300799999LL);
	for (int i = 0; i < 1000; i++) {
		m1 = tstime_mono_ms();
		ck_assert_int_ge(m1, m0);
		m0 = m1;
	}
}
END_TEST

static Suite *
tstime_suite(void)
{
	Suite *s = suite_create("tstime");
	TCase *tc = tcase_create("tstime");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_leap_second);
	tcase_add_test(tc, test_before_1970);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_format_parse_roundtrip);
	tcase_add_test(tc, test_clocks);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(tstime_suite)
