/*
 * check_ssrf.c — unit tests for daemon/core/ssrf.c.
 *
 * Expectations are the ranges of API.md §7.3 (from the IANA IPv4/IPv6
 * special-purpose registries), checked at and just outside their edges
 * (hand-computed: 172.16.0.0/12 ends at 172.31.255.255; 198.18.0.0/15 at
 * 198.19.255.255; 2001::/23 at 2001:1ff:ffff:...), plus public addresses
 * (8.8.8.8, 2001:4860:4860::8888) that must pass.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/ssrf.h"
#include "unit.h"

static int
denied(const char *ip, const struct ssrf_allow *a)
{
	struct sockaddr_in s4;
	struct sockaddr_in6 s6;

	memset(&s4, 0, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	if (inet_pton(AF_INET, ip, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		return ssrf_denied((struct sockaddr *)&s4, sizeof(s4), a);
	}
	ck_assert_msg(inet_pton(AF_INET6, ip, &s6.sin6_addr) == 1, "%s", ip);
	s6.sin6_family = AF_INET6;
	return ssrf_denied((struct sockaddr *)&s6, sizeof(s6), a);
}

/*
 * The three IPv6 blocks added for issue 10, at their edges (hand-computed
 * from the prefix lengths): 3fff::/20 (RFC 9637) spans 3fff:0000:: ..
 * 3fff:0fff:ffff:...; 5f00::/16 (RFC 9602) spans 5f00:: .. 5f00:ffff:...;
 * ::/96 (IPv4-compatible, RFC 4291 §2.5.5.1) spans :: .. ::ffff:ffff.
 */
START_TEST(test_new_v6_edges)
{
	static const char *const in[] = {
		"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
		"5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"::", "::2", "::ffff:ffff", "::10.0.0.1", "::8.8.8.8",
	};
	static const char *const out[] = {
		"3fff:1000::", "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"5f01::", "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"::1:0:0",
	};

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		ck_assert_msg(denied(in[i], NULL) == 1, "%s allowed", in[i]);
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++)
		ck_assert_msg(denied(out[i], NULL) == 0, "%s denied", out[i]);
}
END_TEST

START_TEST(test_ranges)
{
	static const char *const bad[] = {
		"0.0.0.0", "10.1.2.3", "100.64.0.1", "100.100.100.200",
		"100.127.255.255", "127.0.0.1", "169.254.169.254",
		"172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1",
		"192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255",
		"198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250",
		"240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8",
		"64:ff9b::a00:1", "64:ff9b:1::1", "100::1", "2001::1",
		"2001:1ff:ffff::1", "2001:db8::1", "2002:a00:1::1", "fc00::1",
		"fd12:3456::1", "fe80::1", "febf::1", "fec0::1", "ff02::1",
	};
	static const char *const good[] = {
		"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0",
		"172.15.255.255", "172.32.0.0", "198.17.255.255", "198.20.0.0",
		"223.255.255.255", "2001:4860:4860::8888", "2001:200::1",
		"2606:4700::1111", "2a00:1450::1",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(denied(bad[i], NULL) == 1, "%s allowed", bad[i]);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(denied(good[i], NULL) == 0, "%s denied", good[i]);
}
END_TEST

START_TEST(test_allow)
{
	struct ssrf_allow a;
	char why[256];

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(ssrf_parse_cidrs(&a, "127.0.0.0/8,fd00::/8,"
	    "192.168.7.7", why, sizeof(why)), 0);
	ck_assert_uint_eq(a.ncidr, 3);
	ck_assert_int_eq(denied("127.0.0.1", &a), 0);
	ck_assert_int_eq(denied("127.255.0.9", &a), 0);
	ck_assert_int_eq(denied("10.0.0.1", &a), 1);
	ck_assert_int_eq(denied("fd00::5", &a), 0);
	ck_assert_int_eq(denied("fc00::5", &a), 1);
	ck_assert_int_eq(denied("192.168.7.7", &a), 0);
	ck_assert_int_eq(denied("192.168.7.8", &a), 1);
	ck_assert_int_eq(ssrf_parse_cidrs(&a, "", why, sizeof(why)), 0);
	ck_assert_uint_eq(a.ncidr, 0);
	ck_assert_int_eq(ssrf_parse_cidrs(&a, "127.0.0.0/33", why,
	    sizeof(why)), -1);
	ck_assert(strstr(why, "127.0.0.0/33") != NULL);
	ck_assert_int_eq(ssrf_parse_cidrs(&a, "127.0.0.0/8, 10.0.0.0/8", why,
	    sizeof(why)), -1);
	ck_assert_int_eq(ssrf_parse_cidrs(&a, "localhost", why,
	    sizeof(why)), -1);
	ck_assert_int_eq(ssrf_parse_cidrs(&a, "10.0.0.0/8,,", why,
	    sizeof(why)), -1);
}
END_TEST

START_TEST(test_ports)
{
	struct ssrf_allow a;
	char why[256];

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(ssrf_parse_ports(&a, "443,8443", why, sizeof(why)),
	    0);
	ck_assert(ssrf_port_ok(&a, 443));
	ck_assert(ssrf_port_ok(&a, 8443));
	ck_assert(!ssrf_port_ok(&a, 80));
	ck_assert_int_eq(ssrf_parse_ports(&a, "0", why, sizeof(why)), -1);
	ck_assert_int_eq(ssrf_parse_ports(&a, "65536", why, sizeof(why)), -1);
	ck_assert_int_eq(ssrf_parse_ports(&a, "443,x", why, sizeof(why)), -1);
}
END_TEST

START_TEST(test_not_ip)
{
	struct sockaddr sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_family = AF_UNIX;
	ck_assert_int_eq(ssrf_denied(&sa, sizeof(sa), NULL), 1);
}
END_TEST

static Suite *
ssrf_suite(void)
{
	Suite *s = suite_create("ssrf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_new_v6_edges);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_allow);
	tcase_add_test(tc, test_ports);
	tcase_add_test(tc, test_not_ip);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(ssrf_suite)
