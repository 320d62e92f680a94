/*
 * check_promtext.c — unit tests for promtext_check() (daemon/promtext.c),
 * the grammar gate GET /metrics puts before merging a node's
 * metrics/<node>.prom (issue 10: every state file read back is checked).
 *
 * Accepted: the example exposition of the Prometheus documentation
 * ("Exposition formats", text format, "Text format example"), copied
 * line by line below.  Refused: hand-made lines, each with the line and
 * column (1-based) counted by hand next to it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "promtext.h"

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
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_docs_example);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(promtext_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
