/*
 * check_ring.c — unit tests for daemon/core/ring.c (consistent hashing).
 *
 * Sources of the expected values:
 *  - SHA-256 test vectors of FIPS 180-2 appendix B.1 ("abc") and the
 *    well-known digest of the empty string; ring_hash is their first 8
 *    bytes, big-endian.
 *  - A hand-checkable ring: nodes a, b, c with 2 points each.  The points
 *    (first 8 bytes of SHA-256 of "<node>#<i>", computed with Python's
 *    hashlib, an implementation independent of ours), in ring order:
 *        0x0ab14df98e9ade65 b      0x1362ad7ec170f91f c
 *        0x38f8c89003c6dd20 b      0x9fd357443296a7d1 a
 *        0xa090a256cb93456a a      0xe82df9db569b7728 c
 *    and keys: user-1 0xc6c289e49e9c05b2, user-2 0xd92b69cfb82cecab,
 *    user-4 0xbeb218091d95bc1c (all between 0xa090.. and 0xe82d..: c),
 *    user-3 0x92303aa084836e18 and order-17 0x72a90ea3da8b5dd0 (before
 *    0x9fd3..: a), x 0x2d711642b726b044 (before 0x38f8..: b).  Without
 *    c, the c keys go to the next point, which wraps to 0x0ab1.. (b).
 *  - The consistent-hashing property (Karger et al. 1997): when a node
 *    leaves, only its keys move; when one joins, keys move only to it;
 *    with many virtual nodes each of n nodes owns about 1/n of the keys
 *    (the bound: 1/3 ± 0.1 for 3 nodes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/ring.h"
#include "unit.h"

#define NKEYS	10000

START_TEST(hash_vectors)
{
	ck_assert_uint_eq(ring_hash("abc"), 0xba7816bf8f01cfeaULL);
	ck_assert_uint_eq(ring_hash(""), 0xe3b0c44298fc1c14ULL);
}
END_TEST

START_TEST(small_ring_by_hand)
{
	const char *abc[] = { "a", "b", "c" }, *ab[] = { "a", "b" };
	static const struct {
		const char *key, *with_c, *without_c;
	} cases[] = {
		{ "user-1", "c", "b" }, { "user-2", "c", "b" },
		{ "user-4", "c", "b" }, { "user-3", "a", "a" },
		{ "order-17", "a", "a" }, { "x", "b", "b" },
	};
	struct ring *r3 = ring_new(abc, 3, 2), *r2 = ring_new(ab, 2, 2);

	ck_assert_ptr_nonnull(r3);
	ck_assert_ptr_nonnull(r2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_str_eq(ring_lookup(r3, cases[i].key),
		    cases[i].with_c);
		ck_assert_str_eq(ring_lookup(r2, cases[i].key),
		    cases[i].without_c);
	}
	ring_free(r3);
	ring_free(r2);
}
END_TEST

START_TEST(order_and_duplicates_do_not_matter)
{
	const char *x[] = { "a", "b", "c" }, *y[] = { "c", "a", "b", "a" };
	struct ring *r1 = ring_new(x, 3, RING_VNODES);
	struct ring *r2 = ring_new(y, 4, RING_VNODES);
	char key[32];

	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		ck_assert_str_eq(ring_lookup(r1, key), ring_lookup(r2, key));
	}
	ring_free(r1);
	ring_free(r2);
}
END_TEST

/*
 * Look up NKEYS keys in both rings; every key that changed owner must
 * have been from's (when not NULL) and go to to (when not NULL); a key of
 * from's must move.  Returns how many moved.
 */
static int
moves(const struct ring *before, const struct ring *after, const char *from,
    const char *to)
{
	char key[32];
	int moved = 0;

	for (int i = 0; i < NKEYS; i++) {
		const char *o, *nw;

		snprintf(key, sizeof(key), "shard-%d", i);
		o = ring_lookup(before, key);
		nw = ring_lookup(after, key);
		if (strcmp(o, nw) == 0) {
			if (from != NULL)
				ck_assert_str_ne(o, from);
			continue;
		}
		if (from != NULL)
			ck_assert_str_eq(o, from);
		if (to != NULL)
			ck_assert_str_eq(nw, to);
		moved++;
	}
	return moved;
}

/* A node leaves: only its keys move, and it owned about a third. */
START_TEST(node_leaves_moves_only_its_keys)
{
	const char *abc[] = { "n1", "n2", "n3" }, *ac[] = { "n1", "n3" };
	struct ring *before = ring_new(abc, 3, RING_VNODES);
	struct ring *after = ring_new(ac, 2, RING_VNODES);
	int moved = moves(before, after, "n2", NULL);

	ck_assert_msg(moved >= NKEYS * 233 / 1000 && moved <= NKEYS * 433 /
	    1000, "moved %d of %d", moved, NKEYS);
	ring_free(before);
	ring_free(after);
}
END_TEST

/* A node joins: keys move only to it, about a quarter of them. */
START_TEST(node_joins_takes_only)
{
	const char *three[] = { "n1", "n2", "n3" };
	const char *four[] = { "n1", "n2", "n3", "n4" };
	struct ring *before = ring_new(three, 3, RING_VNODES);
	struct ring *after = ring_new(four, 4, RING_VNODES);
	int moved = moves(before, after, NULL, "n4");

	ck_assert_msg(moved >= NKEYS * 150 / 1000 && moved <= NKEYS * 350 /
	    1000, "moved %d of %d", moved, NKEYS);
	ring_free(before);
	ring_free(after);
}
END_TEST

/* FIELD-FAILURES B42: 1000 keys over two nodes, 500 ± 75 each. */
START_TEST(two_nodes_balanced)
{
	const char *ab[] = { "A", "B" };
	struct ring *r = ring_new(ab, 2, RING_VNODES);
	char key[32];
	int na = 0;

	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "job-%d", i);
		na += strcmp(ring_lookup(r, key), "A") == 0;
	}
	ck_assert_msg(na >= 425 && na <= 575, "A has %d of 1000", na);
	ring_free(r);
}
END_TEST

START_TEST(edges)
{
	const char *one[] = { "solo" }, *lng[] = {
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "4" };
	struct ring *r = ring_new(NULL, 0, 4);

	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_null(ring_lookup(r, "k"));
	ring_free(r);
	r = ring_new(one, 1, 1);
	ck_assert_str_eq(ring_lookup(r, "anything"), "solo");
	ring_free(r);
	errno = 0;
	ck_assert_ptr_null(ring_new(one, 1, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ring_new(lng, 1, 4));	/* 65 characters */
	ck_assert_int_eq(errno, EINVAL);
	ring_free(NULL);
}
END_TEST

static Suite *
ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("ring");

	tcase_add_test(tc, hash_vectors);
	tcase_add_test(tc, small_ring_by_hand);
	tcase_add_test(tc, order_and_duplicates_do_not_matter);
	tcase_add_test(tc, node_leaves_moves_only_its_keys);
	tcase_add_test(tc, node_joins_takes_only);
	tcase_add_test(tc, two_nodes_balanced);
	tcase_add_test(tc, edges);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(ring_suite)
