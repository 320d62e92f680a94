/*
 * check_nameset.c — unit tests for daemon/core/nameset.c.
 *
 * Contract (nameset.h): each name once; nameset_add returns the existing
 * node and *added = 0 for a duplicate; nameset_pop returns the oldest
 * (FIFO) and detaches it; remove/find by name; the set keeps working past
 * any size (10,000+ names here, so the bucket array must grow).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/nameset.h"
#include "unit.h"

/* Pop everything and compare with want[] (n names), in order. */
static void
expect_pop_order(struct nameset *ns, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct nameset_node *p = nameset_pop(ns);

		ck_assert_msg(p != NULL, "pop %zu: empty, want %s", i, want[i]);
		ck_assert_msg(strcmp(p->name, want[i]) == 0,
		    "pop %zu: %s, want %s", i, p->name, want[i]);
		ck_assert_ptr_null(nameset_find(ns, want[i]));
		free(p);
	}
	ck_assert_ptr_null(nameset_pop(ns));
	ck_assert_uint_eq(ns->count, 0);
}

START_TEST(test_add_find_pop_fifo)
{
	static const char *const names[] = { "c.json", "a.json", "b.json",
		"z", "0", "a.json.1" };
	static const char *const order[] = { "c.json", "a.json", "b.json",
		"z", "0", "a.json.1" };
	struct nameset ns;
	int added;

	ck_assert_int_eq(nameset_init(&ns), 0);
	ck_assert_ptr_null(nameset_pop(&ns));
	ck_assert_ptr_null(nameset_find(&ns, "a.json"));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct nameset_node *n = nameset_add(&ns, names[i], &added);

		ck_assert_ptr_nonnull(n);
		ck_assert_int_eq(added, 1);
		ck_assert_str_eq(n->name, names[i]);
		ck_assert_ptr_eq(nameset_find(&ns, names[i]), n);
		n->key = (int64_t)i * 1000;	/* caller's value is kept */
		n->flags = (int)i;
	}
	ck_assert_uint_eq(ns.count, 6);
	ck_assert_int_eq(nameset_find(&ns, "b.json")->key, 2000);
	ck_assert_int_eq(nameset_find(&ns, "b.json")->flags, 2);
	ck_assert_ptr_null(nameset_find(&ns, "a"));
	ck_assert_ptr_null(nameset_find(&ns, "a.json.2"));
	/* insertion order, not name order */
	expect_pop_order(&ns, order, 6);
	nameset_fini(&ns);
	nameset_fini(NULL);	/* NULL-safe */
}
END_TEST

START_TEST(test_duplicates)
{
	struct nameset ns;
	struct nameset_node *first, *again;
	int added = -1;
	static const char *const order[] = { "x", "y" };

	ck_assert_int_eq(nameset_init(&ns), 0);
	first = nameset_add(&ns, "x", &added);
	ck_assert_int_eq(added, 1);
	first->key = 42;
	ck_assert_ptr_nonnull(nameset_add(&ns, "y", NULL));	/* NULL ok */
	again = nameset_add(&ns, "x", &added);
	ck_assert_int_eq(added, 0);
	ck_assert_ptr_eq(again, first);		/* the existing node */
	ck_assert_int_eq(again->key, 42);	/* untouched */
	ck_assert_uint_eq(ns.count, 2);
	/* a duplicate does not move x behind y */
	expect_pop_order(&ns, order, 2);
	/* once popped, the name may be added again */
	ck_assert_ptr_nonnull(nameset_add(&ns, "x", &added));
	ck_assert_int_eq(added, 1);
	ck_assert_uint_eq(ns.count, 1);
	nameset_fini(&ns);
}
END_TEST

START_TEST(test_remove)
{
	struct nameset ns;
	int added;

	ck_assert_int_eq(nameset_init(&ns), 0);
	ck_assert_int_eq(nameset_remove(&ns, "nope"), -1);
	nameset_add(&ns, "a", NULL);
	nameset_add(&ns, "b", NULL);
	nameset_add(&ns, "c", NULL);
	nameset_add(&ns, "d", NULL);
	nameset_add(&ns, "e", NULL);
	/* middle, head, tail */
	ck_assert_int_eq(nameset_remove(&ns, "c"), 0);
	ck_assert_int_eq(nameset_remove(&ns, "c"), -1);
	ck_assert_ptr_null(nameset_find(&ns, "c"));
	ck_assert_int_eq(nameset_remove(&ns, "a"), 0);
	ck_assert_int_eq(nameset_remove(&ns, "e"), 0);
	ck_assert_uint_eq(ns.count, 2);
	/* a name added after removing the tail goes to the new tail */
	ck_assert_ptr_nonnull(nameset_add(&ns, "f", &added));
	ck_assert_int_eq(added, 1);
	/* a removed name comes back at the tail */
	ck_assert_ptr_nonnull(nameset_add(&ns, "a", &added));
	ck_assert_int_eq(added, 1);
	{
		static const char *const order[] = { "b", "d", "f", "a" };

		expect_pop_order(&ns, order, 4);
	}
	/* remove the only element, then reuse the empty set */
	nameset_add(&ns, "solo", NULL);
	ck_assert_int_eq(nameset_remove(&ns, "solo"), 0);
	ck_assert_ptr_null(nameset_pop(&ns));
	nameset_add(&ns, "g", NULL);
	nameset_add(&ns, "h", NULL);
	{
		static const char *const order[] = { "g", "h" };

		expect_pop_order(&ns, order, 2);
	}
	nameset_fini(&ns);
}
END_TEST

START_TEST(test_growth)
{
	enum { N = 25000 };	/* well past 10,000 and the first buckets */
	struct nameset ns;
	char name[32];
	int added;

	ck_assert_int_eq(nameset_init(&ns), 0);
	for (int i = 0; i < N; i++) {
		struct nameset_node *n;

		snprintf(name, sizeof(name), "req-%06d.json", i);
		n = nameset_add(&ns, name, &added);
		ck_assert_ptr_nonnull(n);
		ck_assert_int_eq(added, 1);
		n->key = i;
	}
	ck_assert_uint_eq(ns.count, N);
	/* every name is found with its key, none twice */
	for (int i = 0; i < N; i++) {
		struct nameset_node *n;

		snprintf(name, sizeof(name), "req-%06d.json", i);
		n = nameset_find(&ns, name);
		ck_assert_msg(n != NULL && n->key == i, "lost %s", name);
		ck_assert_ptr_eq(nameset_add(&ns, name, &added), n);
		ck_assert_int_eq(added, 0);
	}
	ck_assert_uint_eq(ns.count, N);
	ck_assert_ptr_null(nameset_find(&ns, "req-025000.json"));
	/* remove every third name, then pop: the rest in FIFO order */
	for (int i = 0; i < N; i += 3) {
		snprintf(name, sizeof(name), "req-%06d.json", i);
		ck_assert_int_eq(nameset_remove(&ns, name), 0);
	}
	for (int i = 0; i < N; i++) {
		struct nameset_node *p;

		if (i % 3 == 0)
			continue;
		p = nameset_pop(&ns);
		snprintf(name, sizeof(name), "req-%06d.json", i);
		ck_assert_msg(p != NULL && strcmp(p->name, name) == 0,
		    "pop: %s, want %s", p != NULL ? p->name : "(null)", name);
		ck_assert_int_eq(p->key, i);
		free(p);
	}
	ck_assert_ptr_null(nameset_pop(&ns));
	ck_assert_uint_eq(ns.count, 0);
	nameset_fini(&ns);
}
END_TEST

START_TEST(test_fini_with_contents)
{
	/* fini frees nodes still held (checked by LeakSanitizer). */
	struct nameset ns;
	char name[16];

	ck_assert_int_eq(nameset_init(&ns), 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ck_assert_ptr_nonnull(nameset_add(&ns, name, NULL));
	}
	nameset_fini(&ns);
	/* usable again after a new init */
	ck_assert_int_eq(nameset_init(&ns), 0);
	ck_assert_ptr_null(nameset_find(&ns, "n1"));
	nameset_fini(&ns);
}
END_TEST

/* Pop every name of ns into out, joined by spaces. */
static void
drain_names(struct nameset *ns, char *out, size_t len)
{
	struct nameset_node *c;

	out[0] = '\0';
	while ((c = nameset_pop(ns)) != NULL) {
		size_t l = strlen(out);

		snprintf(out + l, len - l, "%s%s", l > 0 ? " " : "", c->name);
		free(c);
	}
}

START_TEST(test_add_ordered)
{
	struct nameset ns;
	char got[256];
	int added = 0;

	/* Keys 10 20 30 40 arrive in order; a released 25 goes between 20
	 * and 30, a 5 to the head, an equal 30 after the first 30, a 50 to
	 * the tail, a present name stays where it is. */
	ck_assert_int_eq(nameset_init(&ns), 0);
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "a", 10, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "b", 20, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "c", 30, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "d", 40, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "r", 25, 100, &added));
	ck_assert_int_eq(added, 1);
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "z", 5, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "e", 30, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "f", 50, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "a", 1, 100, &added));
	ck_assert_int_eq(added, 0);
	ck_assert_int_eq(ns.count, 8);
	ck_assert_ptr_nonnull(nameset_find(&ns, "r"));
	drain_names(&ns, got, sizeof(got));
	ck_assert_str_eq(got, "z a b r c e d f");
	/* Equal keys: by name ("d" < "e", "b" < "c"). */
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "e", 7, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "c", 7, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "d", 7, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "b", 7, 100, NULL));
	drain_names(&ns, got, sizeof(got));
	ck_assert_str_eq(got, "b c d e");
	/* A late one just before the tail; the tail is right after. */
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "x", 10, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "y", 30, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "w", 20, 100, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "v", 40, 100, NULL));
	drain_names(&ns, got, sizeof(got));
	ck_assert_str_eq(got, "x w y v");
	/* maxwalk 1: key 15 would go after "b" (2 steps): left at the tail;
	 * key 5 goes before the head (0 steps). */
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "a", 10, 1, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "b", 12, 1, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "c", 30, 1, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "m", 15, 1, NULL));
	ck_assert_ptr_nonnull(nameset_add_ordered(&ns, "h", 5, 1, NULL));
	drain_names(&ns, got, sizeof(got));
	ck_assert_str_eq(got, "h a b c m");
	ck_assert_ptr_null(ns.tail);
	nameset_fini(&ns);
}
END_TEST

/* nameset_pop_priority, the claim order (priority.h): names added in
 * mtime order a..e with keys 1000..5000 ms and priorities 5 5 9 0 9, at
 * now = 10000 with aging 60000 (nobody climbs: waits < 60 s): the 9s
 * first (c, then e: equal, earlier key), then 5s in order (a, b), then
 * the 0 (d).  With aging 2000 at now 10000: a waited 9000 -> 5+4 = 9,
 * b 8000 -> 5+4 = 9, c 9, d 6000 -> 0+3 = 3, e 5000 -> 9: all but d at
 * 9, taken by key: a b c e, then d. */
static void
expect_prio_order(int64_t aging, size_t walk, const char *want)
{
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	static const int prios[] = { 5, 5, 9, 0, 9 };
	struct nameset ns;
	char got[8];
	size_t k = 0;

	ck_assert_int_eq(nameset_init(&ns), 0);
	ns.levels = 1;	/* the claim order's lists */
	for (size_t i = 0; i < 5; i++) {
		struct nameset_node *c = nameset_add_ordered(&ns, names[i],
		    (int64_t)(i + 1) * 1000, 4096, NULL);

		ck_assert_ptr_nonnull(c);
		nameset_set_prio(&ns, c, prios[i]);
	}
	for (struct nameset_node *p; (p = nameset_pop_priority(&ns, walk,
	    10000, aging)) != NULL; free(p))
		got[k++] = p->name[0];
	got[k] = '\0';
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(ns.count, 0);
	ck_assert_ptr_null(ns.head);
	ck_assert_ptr_null(ns.tail);
	nameset_fini(&ns);
}

START_TEST(test_pop_priority)
{
	expect_prio_order(60000, 4096, "ceabd");
	expect_prio_order(2000, 4096, "abced");
	expect_prio_order(0, 4096, "ceabd");	/* aging off */
	/* maxwalk bounds only the walk of two flows or more: the first of
	 * each level competes, however far back (a walk of 2 would have
	 * compared a and b only) */
	expect_prio_order(60000, 2, "ceabd");
}
END_TEST

/* One priority everywhere: FIFO (the O(1) path), as nameset_pop. */
START_TEST(test_pop_priority_uniform)
{
	struct nameset ns;
	char got[8];
	size_t k = 0;

	ck_assert_int_eq(nameset_init(&ns), 0);
	ns.levels = 1;	/* the claim order's lists */
	ck_assert_ptr_nonnull(nameset_add(&ns, "x", NULL));
	ck_assert_ptr_nonnull(nameset_add(&ns, "y", NULL));
	ck_assert_ptr_nonnull(nameset_add(&ns, "z", NULL));
	for (struct nameset_node *p; (p = nameset_pop_priority(&ns, 4096,
	    0, 1000)) != NULL; free(p))
		got[k++] = p->name[0];
	got[k] = '\0';
	ck_assert_str_eq(got, "xyz");
	nameset_fini(&ns);
}
END_TEST


/*
 * nameset_pop_priority against its definition, by brute force: 3,000
 * random adds (keys out of order, priorities 0..9), removes and pops;
 * each pop must be the node of highest effective priority over the
 * whole set (aging 500 ms at now 4000: keys 0..3999), ties to the
 * smaller key, then the higher priority, then the smaller name (equal
 * keys are placed by name).  And a priority-9 name behind 5,000 of
 * priority 5 is the first one taken.
 */
START_TEST(test_pop_priority_bruteforce)
{
	struct nameset ns;
	struct nameset_node *p, *want;
	char name[32];
	unsigned seed = 12345;
	int live = 0;

	ck_assert_int_eq(nameset_init(&ns), 0);
	ns.levels = 1;	/* the claim order's lists */
	for (int i = 0; i < 3000; i++) {
		int op = (int)(rand_r(&seed) % 10);

		if (op < 6 || live == 0) {
			snprintf(name, sizeof(name), "t%05d", i);
			p = nameset_add_ordered(&ns, name,
			    rand_r(&seed) % 4000, 64, NULL);
			ck_assert_ptr_nonnull(p);
			nameset_set_prio(&ns, p, (int)(rand_r(&seed) % 10));
			live++;
		} else if (op < 7) {
			ck_assert_int_eq(nameset_remove(&ns, ns.tail->name),
			    0);
			live--;
		} else {
			want = NULL;
			for (p = ns.head; p != NULL; p = p->fnext) {
				int ep = priority_effective(p->prio, p->key,
				    4000, 500), ew;

				if (want == NULL)
					goto take;
				ew = priority_effective(want->prio, want->key,
				    4000, 500);
				if (ep != ew ? ep > ew : p->key != want->key ?
				    p->key < want->key : p->prio != want->prio ?
				    p->prio > want->prio :
				    strcmp(p->name, want->name) < 0)
				take:
					want = p;
			}
			snprintf(name, sizeof(name), "%s", want->name);
			p = nameset_pop_priority(&ns, 4096, 4000, 500);
			ck_assert_str_eq(p->name, name);
			free(p);
			live--;
		}
		ck_assert_uint_eq(ns.count, (size_t)live);
	}
	nameset_fini(&ns);

	ck_assert_int_eq(nameset_init(&ns), 0);
	ns.levels = 1;	/* the claim order's lists */
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "f%05d", i);
		ck_assert_ptr_nonnull(nameset_add_ordered(&ns, name, i, 4096,
		    NULL));
	}
	p = nameset_add_ordered(&ns, "urgent", 5000, 4096, NULL);
	nameset_set_prio(&ns, p, 9);
	p = nameset_pop_priority(&ns, 4096, 5000, 60000);
	ck_assert_str_eq(p->name, "urgent");
	free(p);
	p = nameset_pop_priority(&ns, 4096, 5000, 60000);
	ck_assert_str_eq(p->name, "f00000");
	free(p);
	nameset_fini(&ns);
}
END_TEST

/* A set without levels (nameset_init's): priorities are recorded, not
 * ordered on; pop_priority is the FIFO head; adds of unordered names
 * with key 0 (20,000 of them, names counting down, which would each walk
 * a level's list) keep arrival order. */
START_TEST(test_no_levels)
{
	struct nameset ns;
	struct nameset_node *p;
	char name[16];

	ck_assert_int_eq(nameset_init(&ns), 0);
	ck_assert_int_eq(ns.levels, 0);
	for (int i = 20000; i > 0; i--) {
		snprintf(name, sizeof(name), "n%05d", i);
		ck_assert_ptr_nonnull(p = nameset_add(&ns, name, NULL));
		nameset_set_prio(&ns, p, i == 1 ? 9 : i % 10);
	}
	ck_assert_int_eq(nameset_find(&ns, "n00001")->prio, 9);
	ck_assert_int_eq(nameset_find(&ns, "n00013")->prio, 3);
	for (int i = PRIORITY_MIN; i <= PRIORITY_MAX; i++)
		ck_assert_ptr_null(ns.lhead[i]);
	p = nameset_pop_priority(&ns, 4096, 0, 60000);
	ck_assert_str_eq(p->name, "n20000");	/* the head, not the 9 */
	free(p);
	ck_assert_int_eq(nameset_remove(&ns, "n00001"), 0);
	p = nameset_pop(&ns);
	ck_assert_str_eq(p->name, "n19999");
	free(p);
	ck_assert_uint_eq(ns.count, 19997);
	nameset_fini(&ns);
}
END_TEST

static Suite *
nameset_suite(void)
{
	Suite *s = suite_create("nameset");
	TCase *tc = tcase_create("nameset");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_add_find_pop_fifo);
	tcase_add_test(tc, test_duplicates);
	tcase_add_test(tc, test_remove);
	tcase_add_test(tc, test_growth);
	tcase_add_test(tc, test_fini_with_contents);
	tcase_add_test(tc, test_add_ordered);
	tcase_add_test(tc, test_pop_priority);
	tcase_add_test(tc, test_pop_priority_uniform);
	tcase_add_test(tc, test_pop_priority_bruteforce);
	tcase_add_test(tc, test_no_levels);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(nameset_suite)
