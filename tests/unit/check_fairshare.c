/*
 * check_fairshare.c — unit tests for daemon/core/fairshare.c and the
 * claim order of daemon/core/nameset.c with flows.
 *
 * Expectations from fairshare.h (start-time fair queueing, Goyal, Vin
 * and Cheng 1996): the flow with the smallest start tag goes first,
 * ties to the smaller key; serving a flow adds FAIR_SCALE / weight to
 * its tag; a flow that becomes backlogged starts at max(its tag, V);
 * priorities come before flows.  Every expected order below is worked
 * out by hand in the comment above it (S = FAIR_SCALE = 1048576).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/fairshare.h"
#include "core/nameset.h"
#include "core/task.h"
#include "unit.h"

static struct nameset ns;
static struct fairshare fs;

static void
setup(void)
{
	ck_assert_int_eq(nameset_init(&ns), 0);
	ns.levels = 1;
	fair_init(&fs);
	ns.fair = &fs;
}

static void
teardown(void)
{
	nameset_fini(&ns);
}

/* Add name with key and prio to flow (name, weight). */
static void
add(const char *name, int64_t key, const char *flow, int weight, int prio)
{
	int added = 0;
	struct nameset_node *c = nameset_add_ordered(&ns, name, key, 4096,
	    &added);

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(added, 1);
	nameset_set_prio(&ns, c, prio);
	nameset_set_flow(&ns, c, fair_flow_of(&fs, flow, weight));
}

/* Pop everything; the names joined by ' '. */
static void
drain(char *out, size_t len)
{
	struct nameset_node *p;

	out[0] = '\0';
	while ((p = nameset_pop_priority(&ns, 4096, 0, 60000)) != NULL) {
		if (out[0] != '\0')
			strncat(out, " ", len - strlen(out) - 1);
		strncat(out, p->name, len - strlen(out) - 1);
		free(p);
	}
}

/*
 * Two flows of weight 1, A with 10 tasks (keys 1..10) queued before B's
 * 3 (keys 11..13).  Tags: A 0, B 0.  Pop 1: tie, A1's key is smaller;
 * A 1S.  Pop 2: B1 (0).  B 1S.  Pop 3: tie at 1S, A2.  Pop 4: B2.  Pop 5:
 * tie at 2S, A3.  Pop 6: B3.  Then A alone: A4..A10.  FIFO would have
 * run all ten of A first.
 */
START_TEST(test_equal_weights)
{
	char got[512], name[16];

	for (int i = 1; i <= 10; i++) {
		snprintf(name, sizeof(name), "A%d", i);
		add(name, i, "app:a", 1, 5);
	}
	for (int i = 1; i <= 3; i++) {
		snprintf(name, sizeof(name), "B%d", i);
		add(name, 10 + i, "app:b", 1, 5);
	}
	ck_assert_uint_eq(fs.backlogged, 2);
	drain(got, sizeof(got));
	ck_assert_str_eq(got, "A1 B1 A2 B2 A3 B3 A4 A5 A6 A7 A8 A9 A10");
	ck_assert_uint_eq(fs.backlogged, 0);
}
END_TEST

/*
 * Weight 3 (A, 8 tasks) against 1 (B, 4 tasks); S/3 = 349525.
 * A:0 B:0 -> A1 (tie, key); A 349525.  B1 (0); B 1048576.  A2 (349525),
 * A 699050.  A3, A 1048575.  A4 (1048575 < 1048576), A 1398100.  B2
 * (1048576), B 2097152.  A5, A 1747625.  A6, A 2097150.  A7 (2097150 <
 * 2097152), A 2446675.  B3, B 3145728.  A8.  B4.  Three of A per B.
 */
START_TEST(test_weights)
{
	char got[512], name[16];

	for (int i = 1; i <= 8; i++) {
		snprintf(name, sizeof(name), "A%d", i);
		add(name, i, "app:a", 3, 5);
	}
	for (int i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), "B%d", i);
		add(name, 100 + i, "app:b", 1, 5);
	}
	drain(got, sizeof(got));
	ck_assert_str_eq(got, "A1 B1 A2 A3 A4 B2 A5 A6 A7 B3 A8 B4");
}
END_TEST

/*
 * No credit for idleness: A alone is served 5 times (V = 4S, A = 5S);
 * then B's two tasks arrive (keys after A's) and start at V = 4S, not 0.
 * B1 (4S) before A6 (5S); then A6 and B2 tie at 5S: A6 by key; then B2;
 * then A7.  Had B kept tag 0, B1 and B2 would both have gone first.
 */
START_TEST(test_no_idle_credit)
{
	char got[512], name[16];
	struct nameset_node *p;

	for (int i = 1; i <= 7; i++) {
		snprintf(name, sizeof(name), "A%d", i);
		add(name, i, "app:a", 1, 5);
	}
	got[0] = '\0';
	for (int i = 0; i < 5; i++) {
		p = nameset_pop_priority(&ns, 4096, 0, 60000);
		ck_assert_ptr_nonnull(p);
		strncat(got, p->name, sizeof(got) - strlen(got) - 1);
		strncat(got, " ", sizeof(got) - strlen(got) - 1);
		free(p);
	}
	ck_assert_str_eq(got, "A1 A2 A3 A4 A5 ");
	ck_assert(fs.vclock == 4 * FAIR_SCALE);
	add("B1", 20, "app:b", 1, 5);
	add("B2", 21, "app:b", 1, 5);
	drain(got, sizeof(got));
	ck_assert_str_eq(got, "B1 A6 B2 A7");
}
END_TEST

/*
 * Priorities first: a priority-9 task of the flooding flow goes before
 * the other flow's priority-5 ones; among equal priorities the flows
 * share.  A: A1 (9), A2..A4 (5); B: B1, B2 (5).  Pop 1: A1 (9).  Then
 * A 1S, B 0: B1; tie at 1S: A2 (key); B2; A3; A4.
 */
START_TEST(test_priority_first)
{
	char got[512];

	add("A1", 1, "app:a", 1, 9);
	add("A2", 2, "app:a", 1, 5);
	add("A3", 3, "app:a", 1, 5);
	add("A4", 4, "app:a", 1, 5);
	add("B1", 5, "app:b", 1, 5);
	add("B2", 6, "app:b", 1, 5);
	drain(got, sizeof(got));
	ck_assert_str_eq(got, "A1 B1 A2 B2 A3 A4");
}
END_TEST

/* Removal leaves the flow: a flow whose last task is removed is not
 * backlogged; one flow left is the plain order (the O(1) path). */
START_TEST(test_remove_and_table)
{
	char got[512];

	add("A1", 1, "app:a", 1, 5);
	add("B1", 2, "retry", 1, 5);
	ck_assert_uint_eq(fs.backlogged, 2);
	ck_assert_int_eq(nameset_remove(&ns, "B1"), 0);
	ck_assert_uint_eq(fs.backlogged, 1);
	drain(got, sizeof(got));
	ck_assert_str_eq(got, "A1");
	/* the table: "local" is 0; names past it share "(other)" */
	ck_assert_int_eq(fair_flow_of(&fs, "local", 1), FAIR_LOCAL);
	for (int i = (int)fs.n; i < FAIR_FLOWS_MAX + 10; i++) {
		char name[16];

		snprintf(name, sizeof(name), "app:%d", i);
		ck_assert_int_lt(fair_flow_of(&fs, name, 1), FAIR_FLOWS_MAX);
	}
	ck_assert_str_eq(fs.flow[FAIR_FLOWS_MAX - 1].name, "(other)");
	ck_assert_int_eq(fair_flow_of(&fs, "app:zzz", 7), FAIR_FLOWS_MAX - 1);
	ck_assert_int_eq(fs.flow[FAIR_FLOWS_MAX - 1].weight, 1);
	/* weights are clamped into 1..100 */
	fair_init(&fs);
	ck_assert_int_eq(fs.flow[fair_flow_of(&fs, "app:x", 0)].weight, 1);
	ck_assert_int_eq(fs.flow[fair_flow_of(&fs, "app:x", 500)].weight,
	    FAIR_WEIGHT_MAX);
}
END_TEST

/* The task codec's appWeight: 1..100, only with appId, written back. */
START_TEST(test_task_app_weight)
{
	static const char ok[] = "{\"taskCode\":\"x\",\"appId\":\"shop\","
	    "\"appWeight\":7}";
	static const char *const bad[] = {
		"{\"taskCode\":\"x\",\"appWeight\":7}",	/* no appId */
		"{\"taskCode\":\"x\",\"appId\":\"s\",\"appWeight\":0}",
		"{\"taskCode\":\"x\",\"appId\":\"s\",\"appWeight\":101}",
		"{\"taskCode\":\"x\",\"appId\":\"s\",\"appWeight\":\"2\"}",
	};
	struct task t;
	struct task_error err;
	struct buf b;

	task_init(&t);
	ck_assert_int_eq(task_decode(ok, sizeof(ok) - 1, &t, &err), 0);
	ck_assert_int_eq(t.app_weight, 7);
	buf_init(&b, 0);
	ck_assert_int_eq(task_encode(&t, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "\"appWeight\":7"));
	buf_fini(&b);
	task_fini(&t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(task_decode(bad[i], strlen(bad[i]), &t, &err),
		    -1);
		ck_assert_str_eq(err.field, "appWeight");
	}
}
END_TEST

static Suite *
fairshare_suite(void)
{
	Suite *s = suite_create("fairshare");
	TCase *tc = tcase_create("fairshare");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_equal_weights);
	tcase_add_test(tc, test_weights);
	tcase_add_test(tc, test_no_idle_credit);
	tcase_add_test(tc, test_priority_first);
	tcase_add_test(tc, test_remove_and_table);
	tcase_add_test(tc, test_task_app_weight);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(fairshare_suite)
