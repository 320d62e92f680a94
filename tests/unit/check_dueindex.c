/*
 * check_dueindex — the delayed/ index: names on a timing wheel.
 * Expected values are hand-computed from the calls made.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dueindex.h"
#include "unit.h"

struct rec {
	char names[16][32];
	uint64_t dues[16];
	int n;
	struct due_index *di;	/* for re-setting inside fire */
	int reset_once;
};

static void
record(const char *name, uint64_t due, void *arg)
{
	struct rec *r = arg;

	if (r->n < 16) {
		snprintf(r->names[r->n], sizeof(r->names[0]), "%s", name);
		r->dues[r->n] = due;
		r->n++;
	}
	if (r->reset_once && strcmp(name, "again") == 0) {
		r->reset_once = 0;
		ck_assert_int_eq(due_index_set(r->di, "again", due + 100), 0);
	}
}

START_TEST(test_order_and_move)
{
	struct due_index *di = due_index_new(1000);
	struct rec r;
	uint64_t d;

	memset(&r, 0, sizeof(r));
	ck_assert_ptr_nonnull(di);
	ck_assert_int_eq(due_index_next(di, &d), 0);
	ck_assert_int_eq(due_index_set(di, "c.json", 5000), 0);
	ck_assert_int_eq(due_index_set(di, "a.json", 1500), 0);
	ck_assert_int_eq(due_index_set(di, "b.json", 70000), 0);
	ck_assert_uint_eq(due_index_count(di), 3);
	/* moving b earlier than c: 70000 -> 3000 */
	ck_assert_int_eq(due_index_set(di, "b.json", 3000), 0);
	ck_assert_uint_eq(due_index_count(di), 3);
	ck_assert_int_eq(due_index_next(di, &d), 1);
	ck_assert_uint_le(d, 1500);
	/* nothing is due at 1499 */
	ck_assert_uint_eq(due_index_expire(di, 1499, record, &r), 0);
	/* at 4000: a (1500) then b (3000); c (5000) stays */
	ck_assert_uint_eq(due_index_expire(di, 4000, record, &r), 2);
	ck_assert_str_eq(r.names[0], "a.json");
	ck_assert_uint_eq(r.dues[0], 1500);
	ck_assert_str_eq(r.names[1], "b.json");
	ck_assert_uint_eq(r.dues[1], 3000);
	ck_assert_uint_eq(due_index_count(di), 1);
	ck_assert_int_eq(due_index_remove(di, "c.json"), 0);
	ck_assert_int_eq(due_index_remove(di, "c.json"), -1);
	ck_assert_uint_eq(due_index_expire(di, 10000, record, &r), 0);
	ck_assert_uint_eq(due_index_count(di), 0);
	due_index_free(di);
}
END_TEST

START_TEST(test_reset_inside_fire)
{
	struct due_index *di = due_index_new(0);
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.di = di;
	r.reset_once = 1;
	ck_assert_int_eq(due_index_set(di, "again", 10), 0);
	ck_assert_uint_eq(due_index_expire(di, 50, record, &r), 1);
	/* re-set at 10 + 100 = 110 from inside the callback */
	ck_assert_uint_eq(due_index_count(di), 1);
	ck_assert_uint_eq(due_index_expire(di, 109, record, &r), 0);
	ck_assert_uint_eq(due_index_expire(di, 110, record, &r), 1);
	ck_assert_uint_eq(r.dues[1], 110);
	due_index_free(di);
}
END_TEST

START_TEST(test_many_and_never_early)
{
	struct due_index *di = due_index_new(0);
	struct rec r;
	char name[32];
	size_t fired = 0;

	memset(&r, 0, sizeof(r));
	/* 20,000 names due at 7*i ms (i = 0..19999): by t = 7*k exactly
	 * k + 1 of them are due. */
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "t%05d.json", i);
		ck_assert_int_eq(due_index_set(di, name, (uint64_t)i * 7), 0);
	}
	ck_assert_uint_eq(due_index_count(di), 20000);
	fired += due_index_expire(di, 7 * 99, record, &r);
	ck_assert_uint_eq(fired, 100);
	fired += due_index_expire(di, 7 * 99 + 6, record, &r);
	ck_assert_uint_eq(fired, 100);
	fired += due_index_expire(di, 7 * 19999, record, &r);
	ck_assert_uint_eq(fired, 20000);
	ck_assert_uint_eq(due_index_count(di), 0);
	due_index_free(di);
}
END_TEST

static Suite *
dueindex_suite(void)
{
	Suite *s = suite_create("dueindex");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_order_and_move);
	tcase_add_test(tc, test_reset_inside_fire);
	tcase_add_test(tc, test_many_and_never_early);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(dueindex_suite)
