/*
 * wheel — hierarchical timing wheel; see wheel.h for the contract.
 *
 * Placement rule.  Let c be the wheel's time and d > c a due time.  The
 * entry goes to level l = (index of the highest bit in which d and c
 * differ) / 6, slot (d >> 6l) & 63: the lowest level at which d and c
 * agree on every bit above the level's six.  So an entry at level l shares
 * c's bits above 6l + 6 and has a level-l digit strictly greater than c's;
 * the slot's start, c's high bits followed by that digit and zeros, lies in
 * (c, d].  Hence:
 *
 *   - the earliest slot start is on the lowest non-empty level, in its
 *     lowest non-empty slot (ctz of the bitmap: every set bit is above c's
 *     digit), and every entry due soonest lies in that slot;
 *   - when the time reaches a slot's start, the slot's entries agree with
 *     the time on more bits and move strictly down (those due exactly then
 *     go to the ready list);
 *   - as long as the time stays below every slot start, each entry is still
 *     where the rule would put it now, so advancing the time across empty
 *     stretches, however long, needs no work at all.
 *
 * Due times that differ from c above bit 35 go to the overflow list.  The
 * next event is then the start of the 2^36 ms block of the earliest of
 * them; reaching it, the entries of that block are placed by the rule and
 * the others stay.  Due times <= c go to the ready list, which the next
 * advance drains first (sorting it, stably, only if past-due inserts left
 * it out of order).
 *
 * Equal due times stay in insertion order because all scheduled entries
 * with the same due time are always in the same list: the rule places them
 * by (d, c) alone, and a cascade (or overflow rescan) at time t empties the
 * only list that holds any entry sharing t's high bits, so the lists it
 * appends to held no entry of the same due time.  Every list move appends
 * at the tail in list order.
 *
 * Cancel is O(1) without a back pointer to the slot: an entry that is alone
 * in its list has next == prev == the list head, and a head inside the slot
 * array tells its level and slot by its index, so the bitmap stays exact.
 */
#include "core/wheel.h"

#include <stdlib.h>

#define WHEEL_BITS	6			/* slot index bits per level */
#define WHEEL_SLOTS	(1u << WHEEL_BITS)	/* slots per level */
#define WHEEL_LEVELS	6			/* levels: 2^36 ms in all */
#define WHEEL_SPAN_BITS	(WHEEL_BITS * WHEEL_LEVELS)

/* Misuse of the API (see wheel.h): abort with a core, say nothing. */
#define WHEEL_ASSERT(x)	do { if (!(x)) abort(); } while (0)

/*
 * ready_min and overflow_min are lower bounds of their lists' due times:
 * exact until a cancel removes the minimum, then merely low, which only
 * makes wheel_next_due() wake early (and the overflow rescan run early).
 */
struct wheel {
	uint64_t now_ms;	/* the wheel's time */
	uint64_t ready_min;	/* <= every due on ready */
	uint64_t overflow_min;	/* <= every due on overflow */
	size_t count;		/* scheduled entries */
	uint64_t occupied[WHEEL_LEVELS];	/* bit s: slot s non-empty */
	int advancing;		/* inside wheel_advance() */
	int ready_unsorted;	/* ready not in nondecreasing due order */
	struct wheel_entry ready;	/* due <= now_ms: fire next */
	struct wheel_entry overflow;	/* due beyond the levels' span */
	struct wheel_entry slot[WHEEL_LEVELS * WHEEL_SLOTS];	/* heads */
};

static void
wheel_list_init(struct wheel_entry *head)
{
	head->next = head->prev = head;
	head->due_ms = 0;
}

static int
wheel_list_empty(const struct wheel_entry *head)
{
	return head->next == head;
}

static void
wheel_list_append(struct wheel_entry *head, struct wheel_entry *e)
{
	e->prev = head->prev;
	e->next = head;
	head->prev->next = e;
	head->prev = e;
}

static void
wheel_list_unlink(struct wheel_entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->next = e->prev = NULL;
}

/* Move all of src's entries, in order, to the tail of dst; src empties. */
static void
wheel_list_splice(struct wheel_entry *dst, struct wheel_entry *src)
{
	if (wheel_list_empty(src))
		return;
	src->next->prev = dst->prev;
	dst->prev->next = src->next;
	src->prev->next = dst;
	dst->prev = src->prev;
	wheel_list_init(src);
}

static void
wheel_ready_append(struct wheel *w, struct wheel_entry *e)
{
	if (wheel_list_empty(&w->ready)) {
		w->ready_min = e->due_ms;
	} else {
		if (e->due_ms < w->ready.prev->due_ms)
			w->ready_unsorted = 1;
		if (e->due_ms < w->ready_min)
			w->ready_min = e->due_ms;
	}
	wheel_list_append(&w->ready, e);
}

/* Link e (due_ms set; its links are overwritten) where the rule says. */
static void
wheel_place(struct wheel *w, struct wheel_entry *e)
{
	uint64_t diff;
	unsigned level, s;

	if (e->due_ms <= w->now_ms) {
		wheel_ready_append(w, e);
		return;
	}
	diff = e->due_ms ^ w->now_ms;
	if (diff >> WHEEL_SPAN_BITS != 0) {
		if (wheel_list_empty(&w->overflow) ||
		    e->due_ms < w->overflow_min)
			w->overflow_min = e->due_ms;
		wheel_list_append(&w->overflow, e);
		return;
	}
	/* diff != 0 because due_ms > now_ms. */
	level = (unsigned)(63 - __builtin_clzll(diff)) / WHEEL_BITS;
	s = (unsigned)(e->due_ms >> (level * WHEEL_BITS)) & (WHEEL_SLOTS - 1);
	wheel_list_append(&w->slot[level * WHEEL_SLOTS + s], e);
	w->occupied[level] |= (uint64_t)1 << s;
}

/*
 * The next time at which the wheel has work: the start of the earliest
 * non-empty slot, else the start of the overflow block holding
 * overflow_min.  Returns 0 if the levels and the overflow list are empty.
 * The ready list is not considered.
 */
static int
wheel_next_event(const struct wheel *w, uint64_t *t, unsigned *level)
{
	unsigned l, s, shift;
	uint64_t high;

	for (l = 0; l < WHEEL_LEVELS; l++) {
		if (w->occupied[l] == 0)
			continue;
		s = (unsigned)__builtin_ctzll(w->occupied[l]);
		shift = l * WHEEL_BITS;
		/* shift + WHEEL_BITS <= 36: the shifts stay below 64. */
		high = w->now_ms >> (shift + WHEEL_BITS);
		high <<= shift + WHEEL_BITS;
		*t = high | (uint64_t)s << shift;
		*level = l;
		return 1;
	}
	if (!wheel_list_empty(&w->overflow)) {
		*t = w->overflow_min >> WHEEL_SPAN_BITS << WHEEL_SPAN_BITS;
		*level = WHEEL_LEVELS;
		return 1;
	}
	return 0;
}

/* Merge two NULL-terminated chains sorted by due; ties keep a first. */
static struct wheel_entry *
wheel_chain_merge(struct wheel_entry *a, struct wheel_entry *b)
{
	struct wheel_entry head, *t = &head;

	while (a != NULL && b != NULL) {
		if (b->due_ms < a->due_ms) {
			t->next = b;
			b = b->next;
		} else {
			t->next = a;
			a = a->next;
		}
		t = t->next;
	}
	t->next = a != NULL ? a : b;
	return head.next;
}

/*
 * Stable sort of the ready list by due time (bottom-up merge sort: bin[i]
 * holds a sorted run of 2^i entries, older entries in higher bins).  Only
 * entries inserted past due between two advances can leave the list out of
 * order, so this runs rarely and on few entries.
 */
static void
wheel_ready_sort(struct wheel *w)
{
	struct wheel_entry *bin[64] = { NULL };
	struct wheel_entry *e, *carry, *sorted, *prev;
	unsigned i;

	w->ready.prev->next = NULL;
	e = w->ready.next;
	while (e != NULL) {
		carry = e;
		e = e->next;
		carry->next = NULL;
		for (i = 0; bin[i] != NULL; i++) {
			carry = wheel_chain_merge(bin[i], carry);
			bin[i] = NULL;
		}
		bin[i] = carry;
	}
	sorted = NULL;
	for (i = 0; i < 64; i++)
		if (bin[i] != NULL)
			sorted = wheel_chain_merge(bin[i], sorted);

	prev = &w->ready;
	for (e = sorted; e != NULL; e = e->next) {
		prev->next = e;
		e->prev = prev;
		prev = e;
	}
	prev->next = &w->ready;
	w->ready.prev = prev;
	w->ready_unsorted = 0;
}

static size_t
wheel_fire_ready(struct wheel *w,
    void (*fire)(struct wheel_entry *, void *), void *arg)
{
	struct wheel_entry *e;
	size_t n = 0;

	/*
	 * Take the head each time, never a saved next pointer: the callback
	 * may cancel any entry, or append to this list.
	 */
	while (!wheel_list_empty(&w->ready)) {
		e = w->ready.next;
		wheel_list_unlink(e);
		w->count--;
		n++;
		fire(e, arg);
	}
	w->ready_unsorted = 0;
	return n;
}

/* The time has reached t, the start of level l's earliest slot. */
static void
wheel_expire_slot(struct wheel *w, uint64_t t, unsigned l)
{
	struct wheel_entry tmp, *head, *e, *next;
	unsigned s;

	s = (unsigned)(t >> (l * WHEEL_BITS)) & (WHEEL_SLOTS - 1);
	head = &w->slot[l * WHEEL_SLOTS + s];
	w->occupied[l] &= ~((uint64_t)1 << s);
	if (l == 0) {
		/* A level-0 slot is 1 ms wide: all of it is due now. */
		if (wheel_list_empty(&w->ready))
			w->ready_min = t;
		wheel_list_splice(&w->ready, head);
		return;
	}
	/*
	 * Detach the list, then walk it: nothing else can touch it while
	 * wheel_place() relinks each entry (no callback runs here).  The
	 * entries are scattered through the caller's memory, so fetch the
	 * next one while this one is placed.
	 */
	wheel_list_init(&tmp);
	wheel_list_splice(&tmp, head);
	for (e = tmp.next; e != &tmp; e = next) {
		next = e->next;
		__builtin_prefetch(next);
		wheel_place(w, e);
	}
}

/* The time has reached the start of the overflow's earliest block. */
static void
wheel_expire_overflow(struct wheel *w)
{
	struct wheel_entry *e, *next;
	uint64_t block = w->now_ms >> WHEEL_SPAN_BITS;
	int first = 1;

	for (e = w->overflow.next; e != &w->overflow; e = next) {
		next = e->next;
		if (e->due_ms >> WHEEL_SPAN_BITS == block) {
			wheel_list_unlink(e);
			wheel_place(w, e);
		} else if (first || e->due_ms < w->overflow_min) {
			w->overflow_min = e->due_ms;
			first = 0;
		}
	}
}

void
wheel_entry_init(struct wheel_entry *e)
{
	e->next = e->prev = NULL;
	e->due_ms = 0;
}

int
wheel_entry_pending(const struct wheel_entry *e)
{
	return e->next != NULL;
}

struct wheel *
wheel_new(uint64_t now_ms)
{
	struct wheel *w;
	size_t i;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->now_ms = now_ms;
	wheel_list_init(&w->ready);
	wheel_list_init(&w->overflow);
	for (i = 0; i < WHEEL_LEVELS * WHEEL_SLOTS; i++)
		wheel_list_init(&w->slot[i]);
	return w;
}

void
wheel_free(struct wheel *w)
{
	free(w);
}

void
wheel_insert(struct wheel *w, struct wheel_entry *e, uint64_t due_ms)
{
	WHEEL_ASSERT(e->next == NULL);
	e->due_ms = due_ms;
	wheel_place(w, e);
	w->count++;
}

int
wheel_cancel(struct wheel *w, struct wheel_entry *e)
{
	struct wheel_entry *head;
	size_t i;

	if (e->next == NULL)
		return 0;
	if (e->next == e->prev) {
		/* Alone in its list: the neighbour is the head. */
		head = e->next;
		if (head != &w->ready && head != &w->overflow) {
			i = (size_t)(head - w->slot);
			w->occupied[i / WHEEL_SLOTS] &=
			    ~((uint64_t)1 << (i % WHEEL_SLOTS));
		}
	}
	wheel_list_unlink(e);
	w->count--;
	return 1;
}

size_t
wheel_advance(struct wheel *w, uint64_t now_ms,
    void (*fire)(struct wheel_entry *, void *), void *arg)
{
	uint64_t t;
	unsigned l;
	size_t n;

	WHEEL_ASSERT(!w->advancing);
	w->advancing = 1;
	if (now_ms < w->now_ms)
		now_ms = w->now_ms;
	if (w->ready_unsorted)
		wheel_ready_sort(w);
	n = wheel_fire_ready(w, fire, arg);
	while (wheel_next_event(w, &t, &l) && t <= now_ms) {
		w->now_ms = t;
		if (l < WHEEL_LEVELS)
			wheel_expire_slot(w, t, l);
		else
			wheel_expire_overflow(w);
		n += wheel_fire_ready(w, fire, arg);
	}
	/* Every slot start is now past now_ms: see the file comment. */
	w->now_ms = now_ms;
	w->advancing = 0;
	return n;
}

int
wheel_next_due(const struct wheel *w, uint64_t *due_ms)
{
	unsigned l;
	uint64_t t;

	if (!wheel_list_empty(&w->ready)) {
		*due_ms = w->ready_min;
		return 1;
	}
	if (!wheel_next_event(w, &t, &l))
		return 0;
	/* The overflow's own minimum is a tighter bound than its block. */
	*due_ms = l < WHEEL_LEVELS ? t : w->overflow_min;
	return 1;
}

size_t
wheel_count(const struct wheel *w)
{
	return w->count;
}

uint64_t
wheel_now(const struct wheel *w)
{
	return w->now_ms;
}
