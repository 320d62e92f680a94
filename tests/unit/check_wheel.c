/*
 * check_wheel — unit tests for the timing wheel (daemon/core/wheel.c).
 *
 * The expected firing orders and times below are worked out by hand from
 * the due times, never read back from the wheel.  Where a comment names the
 * level an entry lands on, that is the placement rule of wheel.c (six
 * levels of 64 slots, level l = highest bit where due and the wheel's time
 * differ, divided by 6), worked out by hand for that start time; the tests
 * only assert the public contract.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/wheel.h"
#include "unit.h"

#define MS_SEC	1000ULL
#define MS_MIN	(60 * MS_SEC)
#define MS_HOUR	(60 * MS_MIN)
#define MS_DAY	(24 * MS_HOUR)

/* A small deterministic generator (splitmix64), same on every libc. */
static uint64_t
rnd_next(uint64_t *state)
{
	uint64_t z;

	z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the modulo bias is irrelevant here). */
static uint64_t
rnd_below(uint64_t *state, uint64_t n)
{
	return rnd_next(state) % n;
}

/*
 * Directed tests: items with a small id, a recorder of the firing order,
 * and optional actions performed by the callback.
 */
#define REC_MAX	64

struct item {
	struct wheel_entry we;
	int id;
	int fired;
	struct item *cancel[2];		/* cancel these when fired */
	struct item *insert[4];		/* insert these when fired ... */
	uint64_t insert_due[4];		/* ... at these due times */
	uint64_t period;		/* re-insert itself this much later */
	int repeat;			/* that many times */
};

struct rec {
	struct wheel *w;
	int order[REC_MAX];
	uint64_t at[REC_MAX];		/* wheel_now() during the callback */
	size_t n;
	int cancel_ret[REC_MAX];	/* results of callback cancels */
	size_t ncancel;
};

static void
item_init(struct item *it, int id)
{
	memset(it, 0, sizeof(*it));
	wheel_entry_init(&it->we);
	it->id = id;
}

static void
rec_fire(struct wheel_entry *e, void *arg)
{
	struct rec *r = arg;
	struct item *it = WHEEL_ENTRY_OWNER(e, struct item, we);
	size_t i;

	ck_assert(!wheel_entry_pending(e));
	ck_assert_uint_lt(r->n, REC_MAX);
	r->order[r->n] = it->id;
	r->at[r->n] = wheel_now(r->w);
	r->n++;
	it->fired++;
	for (i = 0; i < 2; i++)
		if (it->cancel[i] != NULL) {
			ck_assert_uint_lt(r->ncancel, REC_MAX);
			r->cancel_ret[r->ncancel++] =
			    wheel_cancel(r->w, &it->cancel[i]->we);
		}
	for (i = 0; i < 4; i++)
		if (it->insert[i] != NULL)
			wheel_insert(r->w, &it->insert[i]->we,
			    it->insert_due[i]);
	if (it->repeat > 0) {
		it->repeat--;
		wheel_insert(r->w, e, e->due_ms + it->period);
	}
}

/* A new wheel at now_ms (wheel_new) recorded into r, emptied first. */
static struct wheel *
rec_wheel(struct rec *r, uint64_t now_ms)
{
	memset(r, 0, sizeof(*r));
	r->w = wheel_new(now_ms);
	ck_assert_ptr_nonnull(r->w);
	return r->w;
}

static void
rec_reset(struct rec *r)
{
	r->n = 0;
	r->ncancel = 0;
}

/* Assert that the recorder holds exactly the ids in want[0..n). */
static void
rec_expect(const struct rec *r, const int *want, size_t n, const char *what)
{
	size_t i;

	ck_assert_msg(r->n == n, "%s: %zu fired, want %zu", what, r->n, n);
	for (i = 0; i < n; i++)
		ck_assert_msg(r->order[i] == want[i],
		    "%s: fire %zu was id %d, want %d", what, i, r->order[i],
		    want[i]);
}

/*
 * The brief's ladder of delays, plus 1 h (a level between 70 s and 5 h)
 * and 1000 days (beyond the 2^36 ms ≈ 795 days the levels span).  Seen
 * from a wheel at time 0: 5 ms is level 0; 300 ms (bit 8) level 1; 70 s
 * (bit 16) level 2; 1 h = 3,600,000 (bit 21) level 3; 5 h = 18,000,000
 * (bit 24) level 4; 40 days = 3,456,000,000 (bit 31) level 5; 1000 days =
 * 86,400,000,000 (bit 36) the overflow list.
 */
#define LADDER_N 7
static const uint64_t ladder_delay[LADDER_N] = {
	5, 300, 70 * MS_SEC, MS_HOUR, 5 * MS_HOUR, 40 * MS_DAY, 1000 * MS_DAY
};
/* Inserted out of order, so the fire order is the wheel's doing. */
static const int ladder_insert_order[LADDER_N] = { 5, 0, 6, 2, 4, 1, 3 };

/* Two start times: aligned (the levels above) and a ragged epoch-ish one. */
static const uint64_t ladder_start[] = { 0, 1700000012345ULL };

static void
ladder_setup(struct wheel **wp, struct item *it, struct rec *r, uint64_t t0)
{
	int i;

	*wp = wheel_new(t0);
	ck_assert_ptr_nonnull(*wp);
	memset(r, 0, sizeof(*r));
	r->w = *wp;
	for (i = 0; i < LADDER_N; i++)
		item_init(&it[i], i);
	for (i = 0; i < LADDER_N; i++) {
		int k = ladder_insert_order[i];

		wheel_insert(*wp, &it[k].we, t0 + ladder_delay[k]);
		ck_assert(wheel_entry_pending(&it[k].we));
	}
	ck_assert_uint_eq(wheel_count(*wp), LADDER_N);
}

/* Step to 1 ms before each due time, then onto it: one fire each time. */
START_TEST(test_ladder_steps)
{
	uint64_t t0 = ladder_start[_i];
	struct item it[LADDER_N];
	struct wheel *w;
	struct rec r;
	int i;

	ladder_setup(&w, it, &r, t0);
	for (i = 0; i < LADDER_N; i++) {
		uint64_t due = t0 + ladder_delay[i];

		rec_reset(&r);
		ck_assert_uint_eq(wheel_advance(w, due - 1, rec_fire, &r), 0);
		ck_assert_uint_eq(r.n, 0);
		ck_assert_uint_eq(wheel_advance(w, due, rec_fire, &r), 1);
		ck_assert_int_eq(r.order[0], i);
		ck_assert_uint_eq(r.at[0], due);
		ck_assert_uint_eq(wheel_count(w), (size_t)(LADDER_N - 1 - i));
		ck_assert_uint_eq(wheel_now(w), due);
	}
	ck_assert_uint_eq(wheel_count(w), 0);
	wheel_free(w);
}
END_TEST

/* One jump past all of them: all fire, in due order, at their due times. */
START_TEST(test_ladder_jump)
{
	static const int want[LADDER_N] = { 0, 1, 2, 3, 4, 5, 6 };
	uint64_t t0 = ladder_start[_i];
	struct item it[LADDER_N];
	struct wheel *w;
	struct rec r;
	int i;

	ladder_setup(&w, it, &r, t0);
	ck_assert_uint_eq(wheel_advance(w, t0 + 1001 * MS_DAY, rec_fire, &r),
	    LADDER_N);
	rec_expect(&r, want, LADDER_N, "jump");
	for (i = 0; i < LADDER_N; i++)
		ck_assert_uint_eq(r.at[i], t0 + ladder_delay[i]);
	ck_assert_uint_eq(wheel_now(w), t0 + 1001 * MS_DAY);
	wheel_free(w);
}
END_TEST

/*
 * The epoll loop: wake exactly at wheel_next_due() each time.  Every entry
 * fires at its due time, the bound is never past the true minimum, and no
 * due time costs more than seven wake-ups (wheel.h).
 */
START_TEST(test_ladder_next_due_loop)
{
	uint64_t t0 = ladder_start[_i];
	struct item it[LADDER_N];
	struct wheel *w;
	struct rec r;
	uint64_t nd;
	int i, wakes;

	ladder_setup(&w, it, &r, t0);
	for (i = 0; i < LADDER_N; i++) {
		uint64_t due = t0 + ladder_delay[i];

		rec_reset(&r);
		for (wakes = 1; ; wakes++) {
			ck_assert_int_eq(wheel_next_due(w, &nd), 1);
			ck_assert_uint_le(nd, due);
			ck_assert_uint_gt(nd, wheel_now(w));
			wheel_advance(w, nd, rec_fire, &r);
			if (r.n > 0)
				break;
			ck_assert_int_lt(wakes, 7);
		}
		ck_assert_uint_eq(r.n, 1);
		ck_assert_int_eq(r.order[0], i);
		ck_assert_uint_eq(wheel_now(w), due);
	}
	ck_assert_int_eq(wheel_next_due(w, &nd), 0);
	wheel_free(w);
}
END_TEST

/* Cancel from level 0, level 5 and the overflow list, then expire. */
START_TEST(test_cancel_levels)
{
	static const int want[] = { 1, 2, 3, 4 };
	uint64_t t0 = ladder_start[_i];
	struct item it[LADDER_N];
	struct wheel *w;
	struct rec r;

	ladder_setup(&w, it, &r, t0);
	ck_assert_int_eq(wheel_cancel(w, &it[0].we), 1);	/* 5 ms */
	ck_assert_int_eq(wheel_cancel(w, &it[5].we), 1);	/* 40 days */
	ck_assert_int_eq(wheel_cancel(w, &it[6].we), 1);	/* 1000 days */
	ck_assert_int_eq(wheel_cancel(w, &it[6].we), 0);	/* twice */
	ck_assert(!wheel_entry_pending(&it[0].we));
	ck_assert_uint_eq(wheel_count(w), 4);
	ck_assert_uint_eq(wheel_advance(w, t0 + 2000 * MS_DAY, rec_fire, &r),
	    4);
	rec_expect(&r, want, 4, "after cancel");
	ck_assert_uint_eq(wheel_count(w), 0);
	/* A fired entry is not pending; cancelling it is a harmless 0. */
	ck_assert_int_eq(wheel_cancel(w, &it[1].we), 0);
	wheel_free(w);
}
END_TEST

/* Cancel an entry after it was cascaded down, and one waiting past due. */
START_TEST(test_cancel_cascaded_and_ready)
{
	struct item a, b, c;
	struct wheel *w;
	struct rec r;
	uint64_t nd;

	w = rec_wheel(&r, 0);
	item_init(&a, 1);
	item_init(&b, 2);
	item_init(&c, 3);
	/* 70 s: level 2 from time 0; by 69.99 s it has moved to level 0. */
	wheel_insert(w, &a.we, 70 * MS_SEC);
	wheel_insert(w, &b.we, 70 * MS_SEC + 1);
	ck_assert_uint_eq(wheel_advance(w, 70 * MS_SEC - 10, rec_fire, &r), 0);
	ck_assert_int_eq(wheel_cancel(w, &a.we), 1);
	/* Past due: waits for the next advance; cancel it there. */
	wheel_insert(w, &c.we, 5);
	ck_assert_int_eq(wheel_next_due(w, &nd), 1);
	ck_assert_uint_eq(nd, 5);
	ck_assert_int_eq(wheel_cancel(w, &c.we), 1);
	ck_assert_int_eq(wheel_next_due(w, &nd), 1);
	ck_assert_uint_le(nd, 70 * MS_SEC + 1);
	ck_assert_uint_eq(wheel_advance(w, 80 * MS_SEC, rec_fire, &r), 1);
	ck_assert_int_eq(r.order[0], 2);
	ck_assert_uint_eq(r.at[0], 70 * MS_SEC + 1);
	/* A cancelled entry can be inserted again. */
	wheel_insert(w, &a.we, 90 * MS_SEC);
	ck_assert_uint_eq(wheel_advance(w, 90 * MS_SEC, rec_fire, &r), 1);
	ck_assert_int_eq(r.order[1], 1);
	ck_assert_int_eq(wheel_next_due(w, &nd), 0);
	wheel_free(w);
}
END_TEST

/*
 * Cancel from inside a callback: x (due 100) cancels y (also due 100,
 * inserted after x, so already queued to fire right after x) and z (due
 * 200, still in a slot), and itself (already unscheduled: 0).  w150 due 150
 * is untouched.  Expected: x, w150; cancel results 1, 1, then 0.
 */
START_TEST(test_cancel_in_callback)
{
	static const int want[] = { 1, 4 };
	struct item x, y, z, w150;
	struct wheel *w;
	struct rec r;

	w = rec_wheel(&r, 0);
	item_init(&x, 1);
	item_init(&y, 2);
	item_init(&z, 3);
	item_init(&w150, 4);
	wheel_insert(w, &x.we, 100);
	wheel_insert(w, &y.we, 100);
	wheel_insert(w, &z.we, 200);
	wheel_insert(w, &w150.we, 150);
	x.cancel[0] = &y;
	x.cancel[1] = &z;
	ck_assert_uint_eq(wheel_advance(w, 99, rec_fire, &r), 0);
	ck_assert_uint_eq(wheel_advance(w, 1000, rec_fire, &r), 2);
	rec_expect(&r, want, 2, "cancel in callback");
	ck_assert_uint_eq(r.ncancel, 2);
	ck_assert_int_eq(r.cancel_ret[0], 1);
	ck_assert_int_eq(r.cancel_ret[1], 1);
	ck_assert_int_eq(wheel_cancel(w, &x.we), 0);
	ck_assert_int_eq(y.fired + z.fired, 0);
	ck_assert_uint_eq(wheel_count(w), 0);
	wheel_free(w);
}
END_TEST

/*
 * Equal due times fire in insertion order, whatever level each entry was
 * inserted at.  From time 0, due 10,000 (bit 13) is level 2; at 9,000 the
 * same due time is level 1 (9000 ^ 10000 = 0x438, bit 10); at 9,990 level 0
 * (0x16).  Entries due 9,999 and 10,001 bracket them.
 */
START_TEST(test_equal_due)
{
	static const int want_a[] = { 9, 1, 2, 3, 4, 5, 6, 8 };
	static const int want_b[] = { 7 };
	struct item it[10];
	struct wheel *w;
	struct rec r;
	int i;

	w = rec_wheel(&r, 0);
	for (i = 0; i < 10; i++)
		item_init(&it[i], i);
	wheel_insert(w, &it[7].we, 10001);
	wheel_insert(w, &it[1].we, 10000);
	wheel_insert(w, &it[8].we, 10000);	/* cancelled, re-inserted */
	wheel_insert(w, &it[2].we, 10000);
	ck_assert_uint_eq(wheel_advance(w, 9000, rec_fire, &r), 0);
	wheel_insert(w, &it[3].we, 10000);
	wheel_insert(w, &it[4].we, 10000);
	ck_assert_uint_eq(wheel_advance(w, 9990, rec_fire, &r), 0);
	wheel_insert(w, &it[9].we, 9999);
	wheel_insert(w, &it[5].we, 10000);
	ck_assert_int_eq(wheel_cancel(w, &it[8].we), 1);
	wheel_insert(w, &it[6].we, 10000);
	wheel_insert(w, &it[8].we, 10000);
	ck_assert_uint_eq(wheel_advance(w, 10000, rec_fire, &r), 8);
	rec_expect(&r, want_a, 8, "equal due");
	rec_reset(&r);
	ck_assert_uint_eq(wheel_advance(w, 10001, rec_fire, &r), 1);
	rec_expect(&r, want_b, 1, "after equal due");
	wheel_free(w);
}
END_TEST

/*
 * Equal due times across the overflow list: a is inserted 2^37 + 5 ms
 * ahead (overflow), b after the wheel has reached 2^37 + 1 (level 0).
 */
START_TEST(test_equal_due_overflow)
{
	static const int want[] = { 1, 2 };
	const uint64_t due = (1ULL << 37) + 5;
	struct item a, b;
	struct wheel *w;
	struct rec r;

	w = rec_wheel(&r, 0);
	item_init(&a, 1);
	item_init(&b, 2);
	wheel_insert(w, &a.we, due);
	ck_assert_uint_eq(wheel_advance(w, due - 4, rec_fire, &r), 0);
	wheel_insert(w, &b.we, due);
	ck_assert_uint_eq(wheel_advance(w, due - 1, rec_fire, &r), 0);
	ck_assert_uint_eq(wheel_advance(w, due, rec_fire, &r), 2);
	rec_expect(&r, want, 2, "equal due overflow");
	wheel_free(w);
}
END_TEST

/*
 * The overflow list emptied by a cancel, the time moved past the cancelled
 * entry's block, then refilled: the bound must come from the new entry,
 * never from the stale one (which would be in the past and spin an epoll
 * loop), and the new entry fires exactly at its due time.
 */
START_TEST(test_overflow_refill)
{
	const uint64_t xdue = 1000 * MS_DAY, ydue = 3000 * MS_DAY;
	struct item x, y;
	struct wheel *w;
	struct rec r;
	uint64_t nd;

	w = rec_wheel(&r, 0);
	item_init(&x, 1);
	item_init(&y, 2);
	wheel_insert(w, &x.we, xdue);
	ck_assert_int_eq(wheel_cancel(w, &x.we), 1);
	ck_assert_uint_eq(wheel_advance(w, 2000 * MS_DAY, rec_fire, &r), 0);
	wheel_insert(w, &y.we, ydue);
	ck_assert_int_eq(wheel_next_due(w, &nd), 1);
	ck_assert_uint_gt(nd, 2000 * MS_DAY);
	ck_assert_uint_le(nd, ydue);
	ck_assert_uint_eq(wheel_advance(w, ydue - 1, rec_fire, &r), 0);
	ck_assert_uint_eq(wheel_now(w), ydue - 1);
	ck_assert_uint_eq(wheel_advance(w, ydue, rec_fire, &r), 1);
	ck_assert_uint_eq(r.at[0], ydue);
	wheel_free(w);
}
END_TEST

/*
 * Past-due inserts: a wheel at 1000 gets due 10, 999, 1000, 500, 0, 500.
 * Nothing fires before an advance; an advance that does not move the time
 * (and one that tries to move it back) fires them in due order, the two
 * 500s in insertion order: ids 5, 1, 4, 6, 2, 3.
 */
START_TEST(test_past_due)
{
	static const uint64_t due[] = { 0, 10, 999, 1000, 500, 0, 500 };
	static const int want[] = { 5, 1, 4, 6, 2, 3 };
	struct item it[7];
	struct wheel *w;
	struct rec r;
	uint64_t nd;
	int i;

	w = rec_wheel(&r, 1000);
	for (i = 1; i <= 6; i++) {
		item_init(&it[i], i);
		wheel_insert(w, &it[i].we, due[i]);
	}
	ck_assert_uint_eq(wheel_count(w), 6);
	ck_assert_int_eq(wheel_next_due(w, &nd), 1);
	ck_assert_uint_eq(nd, 0);
	ck_assert_uint_eq(wheel_advance(w, 1000, rec_fire, &r), 6);
	rec_expect(&r, want, 6, "past due");
	ck_assert_uint_eq(wheel_now(w), 1000);

	/* An advance "back" to 400 fires past-due inserts, keeps the time. */
	rec_reset(&r);
	wheel_insert(w, &it[1].we, 700);
	ck_assert_uint_eq(wheel_advance(w, 400, rec_fire, &r), 1);
	ck_assert_int_eq(r.order[0], 1);
	ck_assert_uint_eq(wheel_now(w), 1000);
	wheel_free(w);
}
END_TEST

/*
 * Inserts from a callback.  At 50, a (due 50) inserts c due 50 (equal:
 * after b, also due 50), d due 20 (already past: right after c), e due 60
 * (in order, this advance) and f due 101 (next advance).  Then a recurring
 * entry g every 7 ms from 0 fires at 7, 14, ..., 98 within one advance.
 */
START_TEST(test_insert_in_callback)
{
	static const int want[] = { 1, 2, 3, 4, 5 };
	struct item a, b, c, d, e, f, g;
	struct wheel *w;
	struct rec r;
	uint64_t nd;
	size_t i;

	w = rec_wheel(&r, 0);
	item_init(&a, 1);
	item_init(&b, 2);
	item_init(&c, 3);
	item_init(&d, 4);
	item_init(&e, 5);
	item_init(&f, 6);
	wheel_insert(w, &a.we, 50);
	wheel_insert(w, &b.we, 50);
	a.insert[0] = &c;
	a.insert_due[0] = 50;
	a.insert[1] = &d;
	a.insert_due[1] = 20;
	a.insert[2] = &e;
	a.insert_due[2] = 60;
	a.insert[3] = &f;
	a.insert_due[3] = 101;
	ck_assert_uint_eq(wheel_advance(w, 100, rec_fire, &r), 5);
	rec_expect(&r, want, 5, "insert in callback");
	ck_assert_uint_eq(r.at[0], 50);
	ck_assert_uint_eq(r.at[4], 60);
	ck_assert_uint_eq(wheel_count(w), 1);
	rec_reset(&r);
	ck_assert_uint_eq(wheel_advance(w, 101, rec_fire, &r), 1);
	ck_assert_int_eq(r.order[0], 6);

	rec_reset(&r);
	item_init(&g, 7);
	g.period = 7;
	g.repeat = 1000;
	wheel_insert(w, &g.we, wheel_now(w) + 7);	/* 108 */
	/* 108, 115, ..., 199: (199 - 108) / 7 + 1 = 14 fires. */
	ck_assert_uint_eq(wheel_advance(w, 200, rec_fire, &r), 14);
	for (i = 0; i < 14; i++)
		ck_assert_uint_eq(r.at[i], 108 + 7 * i);
	ck_assert_int_eq(wheel_next_due(w, &nd), 1);
	ck_assert_uint_le(nd, 206);
	ck_assert(wheel_cancel(w, &g.we));
	wheel_free(w);
}
END_TEST

/*
 * Big jumps: from 0 to 2^62 ms in one call (a wheel that stepped each
 * millisecond would never return), then up to the last representable
 * millisecond; and a wheel started just below UINT64_MAX.
 */
START_TEST(test_big_jump)
{
	static const uint64_t due[] = {
		1, MS_HOUR, 40 * MS_DAY, 1000 * MS_DAY, 1ULL << 50,
		(1ULL << 62) - 1, 1ULL << 62, UINT64_MAX - 1, UINT64_MAX
	};
	static const int want_a[] = { 0, 1, 2, 3, 4, 5, 6 };
	static const int want_b[] = { 7, 8 };
	const size_t n = sizeof(due) / sizeof(due[0]);
	struct item it[9];
	struct wheel *w;
	struct rec r;
	size_t i;

	w = rec_wheel(&r, 0);
	for (i = 0; i < n; i++)
		item_init(&it[i], (int)i);
	for (i = 0; i < n; i++)
		wheel_insert(w, &it[n - 1 - i].we, due[n - 1 - i]);
	ck_assert_uint_eq(wheel_advance(w, 1ULL << 62, rec_fire, &r), 7);
	rec_expect(&r, want_a, 7, "jump to 2^62");
	for (i = 0; i < 7; i++)
		ck_assert_uint_eq(r.at[i], due[i]);
	rec_reset(&r);
	ck_assert_uint_eq(wheel_advance(w, UINT64_MAX - 2, rec_fire, &r), 0);
	ck_assert_uint_eq(wheel_advance(w, UINT64_MAX, rec_fire, &r), 2);
	rec_expect(&r, want_b, 2, "jump to the end");
	ck_assert_uint_eq(r.at[0], UINT64_MAX - 1);
	wheel_free(w);

	/* An empty wheel jumps hours, then times a 5 ms entry exactly. */
	w = wheel_new(123);
	rec_reset(&r);
	r.w = w;
	ck_assert_uint_eq(wheel_advance(w, 123 + 7 * MS_HOUR, rec_fire, &r),
	    0);
	item_init(&it[0], 0);
	wheel_insert(w, &it[0].we, 123 + 7 * MS_HOUR + 5);
	ck_assert_uint_eq(wheel_advance(w, 123 + 7 * MS_HOUR + 4, rec_fire,
	    &r), 0);
	ck_assert_uint_eq(wheel_advance(w, 123 + 7 * MS_HOUR + 5, rec_fire,
	    &r), 1);
	wheel_free(w);

	/* Near the end of time. */
	w = wheel_new(UINT64_MAX - 1000);
	rec_reset(&r);
	r.w = w;
	item_init(&it[0], 0);
	item_init(&it[1], 1);
	item_init(&it[2], 2);
	wheel_insert(w, &it[2].we, UINT64_MAX);
	wheel_insert(w, &it[1].we, UINT64_MAX - 1);
	wheel_insert(w, &it[0].we, 7);
	ck_assert_uint_eq(wheel_advance(w, UINT64_MAX, rec_fire, &r), 3);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(r.order[i], (int)i);
	wheel_free(w);
}
END_TEST

START_TEST(test_misc)
{
	struct wheel_entry e = { 0 };
	struct wheel *w;
	uint64_t nd = 42;

	wheel_free(NULL);
	w = wheel_new(77);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(wheel_now(w), 77);
	ck_assert_uint_eq(wheel_count(w), 0);
	ck_assert_int_eq(wheel_next_due(w, &nd), 0);
	ck_assert_uint_eq(nd, 42);
	ck_assert(!wheel_entry_pending(&e));
	ck_assert_int_eq(wheel_cancel(w, &e), 0);	/* never inserted */
	ck_assert_uint_eq(wheel_advance(w, 1000, rec_fire, NULL), 0);
	wheel_insert(w, &e, 5000);
	ck_assert(wheel_entry_pending(&e));
	ck_assert_uint_eq(e.due_ms, 5000);
	ck_assert_uint_eq(wheel_count(w), 1);
	/* The entry's memory is the caller's: free the wheel, reuse it. */
	wheel_free(w);
	wheel_entry_init(&e);
	ck_assert(!wheel_entry_pending(&e));
}
END_TEST

START_TEST(test_double_insert_aborts)
{
	struct wheel_entry e = { 0 };
	struct wheel *w = wheel_new(0);

	wheel_insert(w, &e, 10);
	wheel_insert(w, &e, 20);
}
END_TEST

static void
nested_fire(struct wheel_entry *e, void *arg)
{
	wheel_advance(arg, 10, nested_fire, arg);
}

START_TEST(test_nested_advance_aborts)
{
	struct wheel_entry e = { 0 };
	struct wheel *w = wheel_new(0);

	wheel_insert(w, &e, 1);
	wheel_advance(w, 5, nested_fire, w);
}
END_TEST

/*
 * wheel_next_due() against a brute-force minimum, after every insert,
 * cancel and advance of a random workload (fixed seed), with a wheel that
 * is only ever advanced to the bound itself or by a random step.
 */
#define ND_N	4000

struct nd_item {
	struct wheel_entry we;
};

static void
nd_fire(struct wheel_entry *e, void *arg)
{
	ck_assert_uint_le(e->due_ms, wheel_now(arg));
}

static void
nd_check(struct wheel *w, struct nd_item *it, size_t n)
{
	uint64_t min = UINT64_MAX, nd;
	size_t i, pending = 0;

	for (i = 0; i < n; i++)
		if (wheel_entry_pending(&it[i].we)) {
			pending++;
			if (it[i].we.due_ms < min)
				min = it[i].we.due_ms;
		}
	ck_assert_uint_eq(wheel_count(w), pending);
	if (pending == 0) {
		ck_assert_int_eq(wheel_next_due(w, &nd), 0);
		return;
	}
	ck_assert_int_eq(wheel_next_due(w, &nd), 1);
	ck_assert_msg(nd <= min, "next_due %llu > true minimum %llu",
	    (unsigned long long)nd, (unsigned long long)min);
}

START_TEST(test_next_due_random)
{
	struct nd_item *it;
	struct wheel *w;
	uint64_t seed = 20240611, now = 5000000, nd;
	size_t i, ops;

	it = calloc(ND_N, sizeof(*it));
	ck_assert_ptr_nonnull(it);
	w = wheel_new(now);
	for (ops = 0; ops < 3000; ops++) {
		uint64_t r = rnd_below(&seed, 100);

		i = rnd_below(&seed, ND_N);
		if (r < 50 && !wheel_entry_pending(&it[i].we)) {
			/* 2^0 .. 2^38 ms ahead, or a little in the past. */
			uint64_t k = rnd_below(&seed, 40);
			uint64_t d = k == 39 ? now - rnd_below(&seed, 100) :
			    now + 1 + rnd_below(&seed, 1ULL << k);

			wheel_insert(w, &it[i].we, d);
		} else if (r < 60) {
			wheel_cancel(w, &it[i].we);
		} else if (r < 90 && wheel_next_due(w, &nd)) {
			/* The epoll loop: wake at the bound. */
			if (nd > now)
				now = nd;
			wheel_advance(w, now, nd_fire, w);
		} else {
			now += rnd_below(&seed, 1ULL << rnd_below(&seed, 34));
			wheel_advance(w, now, nd_fire, w);
		}
		nd_check(w, it, ND_N);
	}
	wheel_free(w);
	free(it);
}
END_TEST

/*
 * The big randomised test: 1,000,000 entries spread from a little in the
 * past to 2^39 ms (17 years) ahead, a twentieth of them on a few popular
 * due times; irregular steps from 0 ms to 2^34 ms; random cancels and
 * inserts between advances, and from callbacks (cancels of any entry,
 * inserts of new entries, some already due).  Checked for every entry:
 * fires exactly once unless cancelled, never before its due time, in the
 * first advance allowed to fire it whose now reaches its due time; within
 * an advance in nondecreasing due order and, for equal due times, in
 * insertion order (callback inserts due at once excepted, see wheel.h).
 *
 * The hot path records the first failure instead of calling ck_assert,
 * which in fork mode costs a write per call.
 */
#define BIG_N		1000000
#define BIG_EXTRA	200000

enum big_state { BIG_IDLE, BIG_SCHEDULED, BIG_FIRED, BIG_CANCELLED };

struct big_item {
	struct wheel_entry we;
	uint64_t seq;		/* insertion sequence number */
	uint32_t first_adv;	/* first advance allowed to fire it */
	uint8_t state;		/* enum big_state */
	uint8_t late;		/* callback insert due at once */
};

struct big {
	struct wheel *w;
	struct big_item *it;
	size_t n, next_extra;
	uint64_t *nows;		/* nows[k]: now of advance k; [0] start */
	uint32_t adv;		/* advance in progress (1-based) */
	uint64_t seq;
	uint64_t last_due, last_seq;	/* last in-order fire, this advance */
	uint64_t last_now;	/* wheel_now() at the previous fire */
	int have_last;
	uint64_t seed;
	size_t scheduled, fired, cancelled;
	int fail_line;
	const char *fail_what;
	size_t fail_item;
};

#define BIG_CHECK(b, cond, idx) do {					\
	if (!(cond) && (b)->fail_line == 0) {				\
		(b)->fail_line = __LINE__;				\
		(b)->fail_what = #cond;					\
		(b)->fail_item = (idx);					\
	}								\
} while (0)

static void
big_insert(struct big *b, size_t i, uint64_t due, uint32_t first_adv,
    int late)
{
	struct big_item *it = &b->it[i];

	it->seq = ++b->seq;
	it->first_adv = first_adv;
	it->state = BIG_SCHEDULED;
	it->late = (uint8_t)late;
	wheel_insert(b->w, &it->we, due);
	b->scheduled++;
}

static void
big_cancel(struct big *b, size_t i)
{
	struct big_item *it = &b->it[i];
	int was = it->state == BIG_SCHEDULED;

	BIG_CHECK(b, wheel_cancel(b->w, &it->we) == was, i);
	if (was) {
		it->state = BIG_CANCELLED;
		b->scheduled--;
		b->cancelled++;
	}
}

static void
big_fire(struct wheel_entry *e, void *arg)
{
	struct big *b = arg;
	struct big_item *it = WHEEL_ENTRY_OWNER(e, struct big_item, we);
	size_t i = (size_t)(it - b->it);
	uint64_t due = e->due_ms, now = b->nows[b->adv], r;

	BIG_CHECK(b, it->state == BIG_SCHEDULED, i);
	BIG_CHECK(b, due <= now, i);
	BIG_CHECK(b, due <= wheel_now(b->w), i);
	BIG_CHECK(b, wheel_now(b->w) >= b->last_now, i);	/* never back */
	b->last_now = wheel_now(b->w);
	BIG_CHECK(b, b->adv >= it->first_adv, i);
	BIG_CHECK(b, b->adv == it->first_adv || due > b->nows[b->adv - 1], i);
	if (!it->late) {
		if (b->have_last) {
			BIG_CHECK(b, due >= b->last_due, i);
			BIG_CHECK(b, due != b->last_due ||
			    it->seq > b->last_seq, i);
		}
		b->have_last = 1;
		b->last_due = due;
		b->last_seq = it->seq;
	}
	it->state = BIG_FIRED;
	b->scheduled--;
	b->fired++;

	r = rnd_below(&b->seed, 32);
	if (r == 0) {
		big_cancel(b, rnd_below(&b->seed, b->next_extra));
	} else if (r == 1 && b->next_extra < b->n) {
		/* From 50 ms before this due time to 5 s after. */
		uint64_t d = due - 50 + rnd_below(&b->seed, 5051);

		big_insert(b, b->next_extra++, d, b->adv,
		    d <= wheel_now(b->w));
	}
}

START_TEST(test_random_million)
{
	const uint64_t t0 = 1700000000000ULL + 54321;
	uint64_t now = t0, popular[16];
	size_t i, k, cap_adv = 200000;
	struct big b;

	memset(&b, 0, sizeof(b));
	b.seed = 0x7461736b73706f6fULL;		/* fixed */
	b.n = BIG_N + BIG_EXTRA;
	b.it = calloc(b.n, sizeof(*b.it));
	b.nows = calloc(cap_adv + 1, sizeof(*b.nows));
	ck_assert_ptr_nonnull(b.it);
	ck_assert_ptr_nonnull(b.nows);
	b.w = wheel_new(t0);
	ck_assert_ptr_nonnull(b.w);
	b.nows[0] = t0;
	b.last_now = t0;
	for (k = 0; k < 16; k++)
		popular[k] = t0 + rnd_below(&b.seed, 1ULL << (2 * k + 6));

	for (i = 0; i < BIG_N; i++) {
		uint64_t r = rnd_below(&b.seed, 100), d;

		if (r < 5)
			d = popular[rnd_below(&b.seed, 16)];
		else if (r < 7)
			d = t0 - rnd_below(&b.seed, 100000);	/* past */
		else
			d = t0 + rnd_below(&b.seed,
			    1ULL << rnd_below(&b.seed, 40));
		big_insert(&b, i, d, 1, 0);
	}
	b.next_extra = BIG_N;
	ck_assert_uint_eq(wheel_count(b.w), BIG_N);

	while (b.scheduled > 0) {
		uint64_t r = rnd_below(&b.seed, 100), step;

		ck_assert_uint_lt(b.adv, cap_adv);
		/* Between advances: a few cancels and inserts. */
		for (k = 0; k < 4; k++)
			big_cancel(&b, rnd_below(&b.seed, b.next_extra));
		for (k = 0; k < 4 && b.adv < 4000 && b.next_extra < b.n; k++)
			big_insert(&b, b.next_extra++,
			    now - 100 + rnd_below(&b.seed, 1000000),
			    b.adv + 1, 0);

		/*
		 * Mostly steps of a few ms, a tenth of them 0 ms, and steps
		 * in proportion to the time elapsed (some two hundred
		 * advances per doubling), so every scale from 1 ms to years
		 * is crossed in many advances; rarely a jump of up to the
		 * time elapsed so far.
		 */
		if (r < 10)
			step = 0;
		else if (r < 45)
			step = 1 + rnd_below(&b.seed, 64);
		else if (r < 55)
			step = 1 + rnd_below(&b.seed, 5000);
		else if (r < 99 || rnd_below(&b.seed, 20) != 0)
			step = 1 + rnd_below(&b.seed,
			    (now - t0) / 64 > 64 ? (now - t0) / 64 : 64);
		else
			step = 1 + rnd_below(&b.seed, now - t0 + 1);
		now += step;
		b.adv++;
		b.nows[b.adv] = now;
		b.have_last = 0;
		wheel_advance(b.w, now, big_fire, &b);
		ck_assert_msg(b.fail_line == 0, "line %d: %s (item %zu, "
		    "advance %u)", b.fail_line, b.fail_what, b.fail_item,
		    (unsigned)b.adv);
		ck_assert_uint_eq(wheel_count(b.w), b.scheduled);
	}
	ck_assert_uint_eq(wheel_count(b.w), 0);
	for (i = 0; i < b.next_extra; i++)
		ck_assert_msg(b.it[i].state == BIG_FIRED ||
		    b.it[i].state == BIG_CANCELLED, "item %zu state %d", i,
		    b.it[i].state);
	ck_assert_uint_eq(b.fired + b.cancelled, b.next_extra);
	/* The workload did what it says. */
	ck_assert_uint_gt(b.cancelled, 1000);
	ck_assert_uint_gt(b.next_extra - BIG_N, 10000);
	wheel_free(b.w);
	free(b.nows);
	free(b.it);
}
END_TEST

static Suite *
wheel_suite(void)
{
	Suite *s = suite_create("wheel");
	TCase *tc;
	const int nstart = sizeof(ladder_start) / sizeof(ladder_start[0]);

	tc = tcase_create("directed");
	tcase_add_loop_test(tc, test_ladder_steps, 0, nstart);
	tcase_add_loop_test(tc, test_ladder_jump, 0, nstart);
	tcase_add_loop_test(tc, test_ladder_next_due_loop, 0, nstart);
	tcase_add_loop_test(tc, test_cancel_levels, 0, nstart);
	tcase_add_test(tc, test_cancel_cascaded_and_ready);
	tcase_add_test(tc, test_cancel_in_callback);
	tcase_add_test(tc, test_equal_due);
	tcase_add_test(tc, test_equal_due_overflow);
	tcase_add_test(tc, test_overflow_refill);
	tcase_add_test(tc, test_past_due);
	tcase_add_test(tc, test_insert_in_callback);
	tcase_add_test(tc, test_big_jump);
	tcase_add_test(tc, test_misc);
	tcase_add_test_raise_signal(tc, test_double_insert_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_nested_advance_aborts, SIGABRT);
	suite_add_tcase(s, tc);

	tc = tcase_create("random");
	/* Generous for sanitizer builds; about a second at -O2. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_next_due_random);
	tcase_add_test(tc, test_random_million);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(wheel_suite)
