/*
 * wheel — a hierarchical timing wheel for millisecond due times (pure: no
 * I/O, no clock of its own, no logging).
 *
 * Source: G. Varghese and T. Lauck, "Hashed and Hierarchical Timing Wheels:
 * Data Structures for the Efficient Implementation of a Timer Facility",
 * SOSP 1987 (scheme 7, the hierarchical wheel with cascading).
 *
 * What it owns.  A wheel holds intrusive entries that the caller embeds in
 * its own structures (a job, a delayed task): the wheel never allocates,
 * copies or frees an entry, it only links and unlinks it.  Time is whatever
 * 64-bit millisecond clock the caller passes in (the daemon passes
 * CLOCK_MONOTONIC); the wheel's time only moves when the caller advances it.
 *
 * Layout.  Six levels of 64 slots.  Level l has slots 64^l ms wide, so the
 * levels together span 2^36 ms (about 795 days).  An entry sits at the
 * lowest level whose slot can tell its due time apart from the wheel's time;
 * when the wheel's time reaches the start of a slot above level 0, that slot
 * is cascaded: its entries are re-placed at lower levels.  An entry is
 * therefore moved at most five times in its life, whatever its delay (six
 * if it started on the overflow list).  Due times beyond the top level's
 * span wait on an overflow list, which is re-examined when the wheel's time
 * reaches the start of the 2^36 ms block that holds the earliest of them.
 * A bitmap per level finds the next non-empty slot with one
 * count-trailing-zeros, so an advance over hours or years costs one step
 * per non-empty slot, never one per millisecond.  Every due time from 0 to
 * UINT64_MAX is valid.
 *
 * Memory (LP64).  sizeof(struct wheel_entry) is 24 bytes.  A realistic
 * caller's record, the entry plus a 64-bit id, is 32 bytes, or 48 bytes of
 * heap when each record is malloc'ed on its own (glibc's chunk header and
 * 16-byte rounding); the due time is the entry's own due_ms.  The wheel
 * itself is one fixed allocation of 9,352 bytes (386 list heads of 24 bytes
 * plus six 64-bit bitmaps and counters), whatever the number of entries.
 * tests/tools/wheelbench.c measures both.
 *
 * Order guarantee.  One wheel_advance() fires entries in nondecreasing
 * due_ms order, and entries with equal due_ms in the order they were
 * inserted (an entry's place among equal due times is that of its latest
 * wheel_insert).  Entries inserted past due between two advances are
 * sorted into that order too.  The one exception: while a callback runs,
 * wheel_now() is the time being expired, and an entry the callback inserts
 * with due_ms <= wheel_now() can no longer fire in its place; it joins the
 * end of the entries already due and fires in the same advance, possibly
 * after entries with a later due time.  An entry a callback inserts with a
 * later due time takes its place in the order like any other.
 *
 * Invariants.  Every entry in a level slot has due_ms > the wheel's time;
 * entries with due_ms <= the wheel's time wait on a ready list and fire at
 * the next wheel_advance().  No entry ever fires before its due time.
 *
 * Errors.  No function can fail except wheel_new (ENOMEM).  Misuse is a
 * programming error and aborts: inserting an entry that is already
 * scheduled, or calling wheel_advance() from inside its own callback.
 *
 * Thread safety: none.  A wheel and its entries belong to one thread; the
 * caller serialises every call.
 */
#ifndef TASKSPOOL_WHEEL_H
#define TASKSPOOL_WHEEL_H

#include <stddef.h>
#include <stdint.h>

/*
 * The intrusive entry.  Embed it in your own struct and get back to the
 * struct with WHEEL_ENTRY_OWNER().  next and prev are private to the wheel
 * (next is NULL exactly when the entry is not scheduled); due_ms is set by
 * wheel_insert() and may be read, not written, while the entry is scheduled.
 */
struct wheel_entry {
	struct wheel_entry *next;	/* private; NULL = not scheduled */
	struct wheel_entry *prev;	/* private */
	uint64_t due_ms;		/* absolute due time, ms */
};

/* The struct of type `type` whose member `member` is the entry e. */
#define WHEEL_ENTRY_OWNER(e, type, member) \
	((type *)(void *)((char *)(e) - offsetof(type, member)))

struct wheel;

/*
 * Every function below: not thread-safe (one thread per wheel, see the top
 * of this file); all times are absolute milliseconds on the caller's clock.
 */

/*
 * Mark e (the caller's) as not scheduled.  An entry must be initialised by
 * this call, or be all-zero as calloc'ed or static memory is, before its
 * first wheel_insert(), and again before reuse after wheel_free() of the
 * wheel that held it.  Never call it on a scheduled entry.  No errors.
 */
void wheel_entry_init(struct wheel_entry *e);

/*
 * Returns 1 if e is scheduled (inserted, not yet fired or cancelled), 0 if
 * not.  O(1); no errors.
 */
int wheel_entry_pending(const struct wheel_entry *e);

/*
 * Returns a new, empty wheel (caller frees with wheel_free()) whose time is
 * now_ms, or NULL with errno ENOMEM.  One allocation of the fixed size
 * given at the top; nothing is ever allocated afterwards.
 */
struct wheel *wheel_new(uint64_t now_ms);

/*
 * Free the wheel.  NULL is accepted.  Entries still scheduled are neither
 * touched nor freed (they are the caller's, and may already be gone); they
 * must be re-initialised with wheel_entry_init() before any reuse.  Must
 * not be called from a wheel_advance() callback.  No errors.
 */
void wheel_free(struct wheel *w);

/*
 * Schedule e to fire at due_ms.  e is borrowed: it must stay valid and
 * unmoved until it fires or is cancelled.  O(1) (V&L scheme 7: hash by
 * the bits of due_ms, at the level where they differ from the wheel's
 * time); never allocates.  A due_ms not later than the wheel's time
 * (wheel_now()) is accepted: the entry fires at the next wheel_advance(),
 * even one whose now_ms does not move the time forward, or, when inserted
 * from a callback, in the advance that is running.  May be called from
 * inside a wheel_advance() callback.  No errors; aborts if e is already
 * scheduled (cancel it first to reschedule it).
 */
void wheel_insert(struct wheel *w, struct wheel_entry *e, uint64_t due_ms);

/*
 * Unschedule e; it is the caller's again.  Returns 1 if e was scheduled in
 * w and is now cancelled, 0 if it was not scheduled (already fired,
 * already cancelled, or never inserted): 0 is not an error.  O(1): unlink
 * from a doubly linked slot list.  e must not be scheduled in another
 * wheel.  Safe from inside a wheel_advance() callback, on any entry,
 * including one already due in the same advance: it then does not fire.
 */
int wheel_cancel(struct wheel *w, struct wheel_entry *e);

/*
 * Move the wheel's time to now_ms and fire every entry with due_ms <=
 * now_ms, calling fire(entry, arg) once for each, in the order given at
 * the top of this file (V&L scheme 7: expire level-0 slots, cascade higher
 * slots as the time reaches them).  arg is passed through unchanged.
 *
 * Before fire is called the entry is unscheduled, so the callback owns it
 * again: it may free it, or re-insert it (a recurring job).  The callback
 * may also insert and cancel other entries.  An entry it inserts with
 * due_ms <= now_ms fires in this same advance; so a callback that keeps
 * inserting due entries keeps the advance from returning, and must
 * schedule retries in the future.  While a callback runs, wheel_now() is
 * the time being expired (the entry's due time, or the old time for
 * entries inserted past due); it reaches now_ms when the call returns.
 * fire must not call wheel_advance() (that aborts) or wheel_free() on w.
 *
 * A now_ms earlier than the wheel's time does not move the time back; the
 * call then only fires entries inserted past due.  Returns the number of
 * entries fired; no errors.  Cost: O(entries fired + entries cascaded +
 * non-empty slots passed), independent of how far the time jumps.
 */
size_t wheel_advance(struct wheel *w, uint64_t now_ms,
    void (*fire)(struct wheel_entry *e, void *arg), void *arg);

/*
 * The earliest time worth waking up for, for an epoll timeout.  Returns 0
 * if nothing is scheduled (*due_ms untouched); otherwise returns 1 and sets
 * *due_ms to a lower bound of the earliest due time, never later than it:
 *   - exact when that entry is at level 0 (its due time is in the same
 *     aligned 64 ms block as the wheel's time), or waits past due (then
 *     it is in the past: "advance now");
 *   - otherwise the start of its slot, at most 64^l - 1 ms early at level
 *     l (V&L's hierarchical wheel keeps no finer order above level 0);
 *   - for the overflow list, the earliest due time put there, or earlier
 *     if that entry was cancelled.
 * Waking at the bound and advancing moves the earliest entry down at least
 * one level, so a loop of "wait until wheel_next_due(), wheel_advance()"
 * wakes at most seven times per distinct due time it fires (six levels and
 * the overflow list) and never after a due time.  O(levels): reads the
 * bitmaps, no entry.  No errors.
 */
int wheel_next_due(const struct wheel *w, uint64_t *due_ms);

/* The number of scheduled entries, those already due included.  O(1). */
size_t wheel_count(const struct wheel *w);

/*
 * The wheel's time: the latest now_ms advanced to, or given to
 * wheel_new(); during a callback, see wheel_advance().  O(1).
 */
uint64_t wheel_now(const struct wheel *w);

#endif
