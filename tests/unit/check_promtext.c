/*
 * check_promtext.c — unit tests for daemon/core/promtext.c.
 *
 * The rules come from the Prometheus text exposition format 0.0.4
 * ("Exposition formats", prometheus.io): one HELP and one TYPE line per
 * family, a sample line is "name{labels} value [timestamp]", label values
 * are quoted with \\, \" and \n escapes.  Expected outputs are written by
 * hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/buf.h"
#include "core/promtext.h"
#include "unit.h"

static int
value_of(const char *text, const char *name, double *v)
{
	return promtext_value(text, strlen(text), name, v);
}

START_TEST(test_value)
{
	static const char t[] =
	    "# HELP x_total Things.\n"
	    "# TYPE x_total counter\n"
	    "x_total{node=\"a\"} 3\n"
	    "# HELP x A gauge.\n"
	    "# TYPE x gauge\n"
	    "x{node=\"a\"} 12.5\n"
	    "x{node=\"b\"} 99\n"
	    "y 7\n"
	    "z{a=\"q}\\\"w\",b=\"\\\\\"} -3e2\n"
	    "w{} 4 1700000000000\n"
	    "bad{node=\"a\"} abc\n"
	    "open{a=\"b\" 5";
	double v = 0;

	/* x is the first sample of x, not of x_total. */
	ck_assert_int_eq(value_of(t, "x", &v), 0);
	ck_assert(v == 12.5);
	ck_assert_int_eq(value_of(t, "x_total", &v), 0);
	ck_assert(v == 3);
	ck_assert_int_eq(value_of(t, "y", &v), 0);
	ck_assert(v == 7);
	/* A '}' and escaped quotes inside label values. */
	ck_assert_int_eq(value_of(t, "z", &v), 0);
	ck_assert(v == -300);
	/* The optional timestamp is not the value. */
	ck_assert_int_eq(value_of(t, "w", &v), 0);
	ck_assert(v == 4);
	ck_assert_int_eq(value_of(t, "bad", &v), -1);
	ck_assert_int_eq(value_of(t, "open", &v), -1);
	ck_assert_int_eq(value_of(t, "missing", &v), -1);
	ck_assert_int_eq(value_of(t, "x_", &v), -1);
	ck_assert_int_eq(value_of("", "x", &v), -1);
}
END_TEST

START_TEST(test_drop_type)
{
	static const char t[] =
	    "early 1\n"
	    "# HELP g1 A gauge.\n"
	    "# TYPE g1 gauge\n"
	    "g1{node=\"a\"} 1\n"
	    "g1{node=\"a\",k=\"2\"} 2\n"
	    "# HELP c1_total A counter.\n"
	    "# TYPE c1_total counter\n"
	    "c1_total{node=\"a\"} 5\n"
	    "# HELP keep_me Kept by prefix.\n"
	    "# TYPE keep_me gauge\n"
	    "keep_me{node=\"a\"} 9\n"
	    "# HELP h A histogram.\n"
	    "# TYPE h histogram\n"
	    "h_bucket{le=\"1\"} 1\n"
	    "h_bucket{le=\"+Inf\"} 2\n"
	    "h_sum 3\n"
	    "h_count 2\n"
	    "# TYPE g2 gauge\n"
	    "g2 4";
	static const char want[] =
	    "early 1\n"
	    "# HELP c1_total A counter.\n"
	    "# TYPE c1_total counter\n"
	    "c1_total{node=\"a\"} 5\n"
	    "# HELP keep_me Kept by prefix.\n"
	    "# TYPE keep_me gauge\n"
	    "keep_me{node=\"a\"} 9\n"
	    "# HELP h A histogram.\n"
	    "# TYPE h histogram\n"
	    "h_bucket{le=\"1\"} 1\n"
	    "h_bucket{le=\"+Inf\"} 2\n"
	    "h_sum 3\n"
	    "h_count 2\n";
	struct buf b;

	buf_init(&b, 0);
	ck_assert_int_eq(promtext_drop_type(t, strlen(t), "gauge", "keep_",
	    &b), 0);
	ck_assert_str_eq(b.data, want);
	buf_fini(&b);
	/* No prefix kept: keep_me goes too. */
	buf_init(&b, 0);
	ck_assert_int_eq(promtext_drop_type(t, strlen(t), "gauge", "", &b), 0);
	ck_assert_ptr_null(strstr(b.data, "keep_me"));
	ck_assert_ptr_nonnull(strstr(b.data, "c1_total{node=\"a\"} 5\n"));
	buf_fini(&b);
	/* A type nobody has: the text unchanged (a final newline added). */
	buf_init(&b, 0);
	ck_assert_int_eq(promtext_drop_type(t, strlen(t), "summary", "", &b),
	    0);
	ck_assert_uint_eq(b.len, strlen(t) + 1);
	ck_assert(memcmp(b.data, t, strlen(t)) == 0);
	buf_fini(&b);
}
END_TEST

START_TEST(test_merge)
{
	static const char a[] =
	    "# HELP m Help from a.\n"
	    "# TYPE m gauge\n"
	    "m{node=\"a\"} 1\n"
	    "# a comment\n"
	    "# HELP n_total Only in a.\n"
	    "# TYPE n_total counter\n"
	    "n_total{node=\"a\"} 2\n";
	static const char b[] =
	    "# HELP m Help from b.\n"
	    "# TYPE m gauge\n"
	    "m{node=\"b\"} 3";
	static const char want[] =
	    "# HELP m Help from a.\n"
	    "# TYPE m gauge\n"
	    "m{node=\"a\"} 1\n"
	    "m{node=\"b\"} 3\n"
	    "# HELP n_total Only in a.\n"
	    "# TYPE n_total counter\n"
	    "n_total{node=\"a\"} 2\n";
	const char *texts[] = { a, b };
	size_t lens[] = { strlen(a), strlen(b) };
	struct buf out;

	buf_init(&out, 0);
	ck_assert_int_eq(promtext_merge(texts, lens, 2, &out), 0);
	ck_assert_str_eq(out.data, want);
	buf_fini(&out);
}
END_TEST

START_TEST(test_docs_example)
{
	static const char doc[] =
	    "# HELP http_requests_total The total number of HTTP requests.\n"
	    "# TYPE http_requests_total counter\n"
	    "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
	    "http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\n"
	    "\n"
	    "# Escaping in label values:\n"
	    "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
	    "\n"
	    "# Minimalistic line:\n"
	    "metric_without_timestamp_and_labels 12.47\n"
	    "\n"
	    "# A weird metric from before the epoch:\n"
	    "something_weird{problem=\"division by zero\"} +Inf -3982045\n"
	    "\n"
	    "# A histogram, which has a pretty complex representation in the text format:\n"
	    "# HELP http_request_duration_seconds A histogram of the request duration.\n"
	    "# TYPE http_request_duration_seconds histogram\n"
	    "http_request_duration_seconds_bucket{le=\"0.05\"} 24054\n"
	    "http_request_duration_seconds_bucket{le=\"+Inf\"} 144320\n"
	    "http_request_duration_seconds_sum 53423\n"
	    "http_request_duration_seconds_count 144320\n"
	    "\n"
	    "# Finally a summary, which has a complex representation, too:\n"
	    "# HELP rpc_duration_seconds A summary of the RPC duration in seconds.\n"
	    "# TYPE rpc_duration_seconds summary\n"
	    "rpc_duration_seconds{quantile=\"0.01\"} 3102\n"
	    "rpc_duration_seconds_sum 1.7560473e+07\n"
	    "rpc_duration_seconds_count 2693\n";
	char why[256] = "";

	ck_assert_msg(promtext_check(doc, strlen(doc), why, sizeof(why)) == 0,
	    "%s", why);
	/* also: a trailing comma in a label set, NaN, -Inf, no final LF */
	ck_assert_int_eq(promtext_check("a{b=\"c\",} NaN\nd -Inf", 20, NULL,
	    0), 0);
	ck_assert_int_eq(promtext_check("", 0, why, sizeof(why)), 0);
	/* an underflow is 0 for ParseFloat, not an error */
	ck_assert_int_eq(promtext_check("a 1e-99999\n", 11, why, sizeof(why)),
	    0);
	/* an empty buf has no data at all (found by fuzz_promtext, UBSan) */
	ck_assert_int_eq(promtext_check(NULL, 0, why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_refusals)
{
	static const struct {
		const char *data;
		size_t len;
		const char *why;
	} t[] = {
		/* 0xff is never UTF-8; c0 80 is the overlong NUL */
		{ "\xff 1\n", 4, "line 1 column 1: not UTF-8" },
		{ "a{l=\"\xc0\x80\"} 1\n", 12, "line 1 column 1: not UTF-8" },
		{ "a 1\n\0", 5, "line 1 column 1: a raw NUL byte" },
		/* "a 1" CR: the CR is column 4 */
		{ "a 1\r\n", 5, "line 1 column 4: a CR byte" },
		/* line 2 "9a 1": a name cannot start with a digit */
		{ "a 1\n9a 1\n", 9, "line 2 column 1: a sample line does not "
		    "start with a metric name" },
		/* the label value never ends: the set starts after "a" */
		{ "a{l=\"\\\"} 1\n", 11, "line 1 column 2: a malformed label "
		    "set" },
		/* \x is not one of the three escapes */
		{ "a{l=\"\\x\"} 1\n", 12, "line 1 column 2: a malformed label "
		    "set" },
		{ "a{l=\"x\" m=\"y\"} 1\n", 17, "line 1 column 2: a malformed "
		    "label set" },
		{ "a{9=\"x\"} 1\n", 11, "line 1 column 2: a malformed label "
		    "set" },
		/* "a 0x10": hex is not a float of the format; value at 3 */
		{ "a 0x10\n", 7, "line 1 column 3: the value is not a float" },
		{ "a 1e99999x\n", 11, "line 1 column 3: the value is not a "
		    "float" },
		/* 1e99999 overflows: Go's ParseFloat gives ErrRange */
		{ "a 1e99999\n", 10, "line 1 column 3: the value is not a "
		    "float" },
		{ "a nan\n", 6, "line 1 column 3: the value is not a float" },
		{ "a\n", 2, "line 1 column 2: no value" },
		{ "a{l=\"x\"}\n", 9, "line 1 column 9: no value" },
		/* "a 1 " then "x": the timestamp starts at column 5 */
		{ "a 1 x\n", 6, "line 1 column 5: after the value only an "
		    "integer timestamp" },
		{ "a 1 12 13\n", 10, "line 1 column 5: after the value only an "
		    "integer timestamp" },
		{ "# TYPE a countr\n", 16, "line 1 column 10: TYPE is not "
		    "counter" },
		{ "# TYPE 1a counter\n", 18, "line 1 column 8: a HELP or TYPE "
		    "line names no valid metric" },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(promtext_check(t[i].data, t[i].len, why,
		    sizeof(why)) == -1, "case %zu accepted", i);
		ck_assert_msg(strncmp(why, t[i].why, strlen(t[i].why)) == 0,
		    "case %zu: \"%s\", want \"%s...\"", i, why, t[i].why);
		ck_assert_msg(strstr(why, "(Prometheus text format 0.0.4)") !=
		    NULL, "case %zu: %s", i, why);
	}
}
END_TEST

static Suite *
promtext_suite(void)
{
	Suite *s = suite_create("promtext");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, test_value);
	tcase_add_test(tc, test_drop_type);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_docs_example);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(promtext_suite)
