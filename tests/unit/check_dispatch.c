/*
 * check_dispatch.c — unit tests for daemon/core/dispatch.c (node choice per
 * route, DESIGN §6).  Expected choices are worked out by hand from the
 * rules in dispatch.h; the consistent-hash case uses the hand-checkable
 * ring of check_ring.c (nodes a, b, c with 2 points: user-3 → a, x → b,
 * user-1 → c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/dispatch.h"
#include "unit.h"

START_TEST(parse_routes)
{
	const char *node;

	ck_assert_int_eq(dispatch_parse(NULL, &node), DISPATCH_ANY);
	ck_assert_int_eq(dispatch_parse("any", &node), DISPATCH_ANY);
	ck_assert_int_eq(dispatch_parse("round_robin", &node),
	    DISPATCH_ROUND_ROBIN);
	ck_assert_int_eq(dispatch_parse("least_active", &node),
	    DISPATCH_LEAST_ACTIVE);
	ck_assert_int_eq(dispatch_parse("consistent_hash", &node),
	    DISPATCH_CONSISTENT_HASH);
	ck_assert_int_eq(dispatch_parse("broadcast", &node),
	    DISPATCH_BROADCAST);
	ck_assert_ptr_null(node);
	ck_assert_int_eq(dispatch_parse("node:web-2", &node), DISPATCH_NODE);
	ck_assert_str_eq(node, "web-2");
	ck_assert_int_eq(dispatch_parse("node:", &node), -1);
	ck_assert_int_eq(dispatch_parse("Round_Robin", &node), -1);
}
END_TEST

/* 10 tasks over 3 nodes: a b c a b c a b c a → 4, 3, 3 (within ±1). */
START_TEST(round_robin_spreads)
{
	struct dispatch_node nd[3] = { { "a", 2, 0 }, { "b", 2, 0 },
		{ "c", 2, 0 } };
	static const int want[10] = { 0, 1, 2, 0, 1, 2, 0, 1, 2, 0 };
	unsigned long rr = 0;

	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(dispatch_pick(DISPATCH_ROUND_ROBIN, nd, 3, &rr,
		    NULL, NULL, NULL), want[i]);
	ck_assert_uint_eq(rr, 10);
}
END_TEST

/*
 * Free slots a 1, b 4, c 2.  Picks: b (4) → b 3; b (3) → b 2; b and c
 * tie at 2, smaller id → b → b 1; c (2) → c 1; a, b, c tie at 1 → a →
 * a 0; b and c tie at 1 → b.
 */
START_TEST(least_active_most_free_first)
{
	struct dispatch_node nd[3] = { { "a", 4, 3 }, { "b", 4, 0 },
		{ "c", 2, 0 } };
	static const int want[6] = { 1, 1, 1, 2, 0, 1 };
	unsigned long rr = 0;

	for (int i = 0; i < 6; i++) {
		int k = dispatch_pick(DISPATCH_LEAST_ACTIVE, nd, 3, &rr, NULL,
		    NULL, NULL);

		ck_assert_int_eq(k, want[i]);
		/* Never a node while another has more free slots. */
		for (int j = 0; j < 3; j++)
			ck_assert_int_ge(nd[k].slots - nd[k].running,
			    nd[j].slots - nd[j].running);
		nd[k].running++;
	}
	ck_assert_uint_eq(rr, 0);
}
END_TEST

START_TEST(consistent_hash_owner)
{
	const char *ids[] = { "a", "b", "c" };
	struct dispatch_node nd[3] = { { "a", 1, 0 }, { "b", 1, 0 },
		{ "c", 1, 0 } };
	struct ring *r = ring_new(ids, 3, 2);
	unsigned long rr = 0;

	ck_assert_int_eq(dispatch_pick(DISPATCH_CONSISTENT_HASH, nd, 3, &rr, r,
	    "user-3", NULL), 0);
	ck_assert_int_eq(dispatch_pick(DISPATCH_CONSISTENT_HASH, nd, 3, &rr, r,
	    "x", NULL), 1);
	ck_assert_int_eq(dispatch_pick(DISPATCH_CONSISTENT_HASH, nd, 3, &rr, r,
	    "user-1", NULL), 2);
	/* The ring names a node not in the list: no choice. */
	ck_assert_int_eq(dispatch_pick(DISPATCH_CONSISTENT_HASH, nd, 2, &rr, r,
	    "user-1", NULL), -1);
	ring_free(r);
}
END_TEST

START_TEST(named_node_and_non_choices)
{
	struct dispatch_node nd[2] = { { "a", 1, 0 }, { "b", 1, 0 } };
	unsigned long rr = 0;

	ck_assert_int_eq(dispatch_pick(DISPATCH_NODE, nd, 2, &rr, NULL, NULL,
	    "b"), 1);
	ck_assert_int_eq(dispatch_pick(DISPATCH_NODE, nd, 2, &rr, NULL, NULL,
	    "z"), -1);
	ck_assert_int_eq(dispatch_pick(DISPATCH_ANY, nd, 2, &rr, NULL, NULL,
	    NULL), -1);
	ck_assert_int_eq(dispatch_pick(DISPATCH_BROADCAST, nd, 2, &rr, NULL,
	    NULL, NULL), -1);
	ck_assert_int_eq(dispatch_pick(DISPATCH_ROUND_ROBIN, nd, 0, &rr, NULL,
	    NULL, NULL), -1);
	ck_assert_uint_eq(rr, 0);
}
END_TEST

static Suite *
dispatch_suite(void)
{
	Suite *s = suite_create("dispatch");
	TCase *tc = tcase_create("dispatch");

	tcase_add_test(tc, parse_routes);
	tcase_add_test(tc, round_robin_spreads);
	tcase_add_test(tc, least_active_most_free_first);
	tcase_add_test(tc, consistent_hash_owner);
	tcase_add_test(tc, named_node_and_non_choices);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(dispatch_suite)
