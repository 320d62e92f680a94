/*
 * check_promtext.c — unit tests for daemon/promtext.c.
 *
 * The rules come from the Prometheus text exposition format 0.0.4
 * ("Exposition formats", prometheus.io): one HELP and one TYPE line per
 * family, a sample line is "name{labels} value [timestamp]", label values
 * are quoted with \\, \" and \n escapes.  Expected outputs are written by
 * hand.
 */
#include <string.h>

#include <check.h>

#include "buf.h"
#include "promtext.h"

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

static Suite *
promtext_suite(void)
{
	Suite *s = suite_create("promtext");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, test_value);
	tcase_add_test(tc, test_drop_type);
	tcase_add_test(tc, test_merge);
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
	return failed == 0 ? 0 : 1;
}
