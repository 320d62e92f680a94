/*
 * dueindex — names with due times, on a hierarchical timing wheel (pure:
 * no I/O, no clock of its own, no logging).
 *
 * The leader keeps one entry per file in delayed/ (the name, due = the
 * file's mtime, epoch ms), so promotion happens at the due instant rather
 * than by polling, and finding what is due costs O(due entries), not
 * O(all entries).  Setting a name that is present moves it (O(1)).
 *
 * Memory per entry: one allocation of 41 bytes + the name's length + 1
 * (wheel entry 24, hash link 8, due copy 8, length byte 1), plus one
 * 8-byte hash bucket per entry at full load; a 40-character requestId
 * file name costs about 96 bytes with malloc's overhead.  See
 * tests/tools/wheelbench.c for the wheel's own figures.
 *
 * Time is whatever millisecond clock the caller passes (the leader passes
 * wall-clock epoch ms, since due times are wall-clock instants; the wheel
 * never moves backwards, so a clock stepped back fires nothing early).
 * Thread safety: none.
 */
#ifndef TASKSPOOL_DUEINDEX_H
#define TASKSPOOL_DUEINDEX_H

#include <stddef.h>
#include <stdint.h>

struct due_index;

/* New empty index whose time starts at now_ms.  NULL with ENOMEM. */
struct due_index *due_index_new(uint64_t now_ms);

/* Free the index and every entry.  NULL is accepted. */
void due_index_free(struct due_index *di);

/*
 * Schedule name (copied; at most 255 bytes) at due_ms, moving it when
 * already present.  Returns 0, or -1 with errno ENOMEM / ENAMETOOLONG.
 */
int due_index_set(struct due_index *di, const char *name, uint64_t due_ms);

/* Remove name.  Returns 0, or -1 (ENOENT) when it was not there. */
int due_index_remove(struct due_index *di, const char *name);

/*
 * Remove every entry due at or before now_ms and call fire(name, due_ms,
 * arg) for each, in due order (ties in insertion order), after all of
 * them have left the index, so fire may set names again (including the
 * one it is given).  The name is valid during the call only.  Returns the
 * number fired.
 */
size_t due_index_expire(struct due_index *di, uint64_t now_ms,
    void (*fire)(const char *name, uint64_t due_ms, void *arg), void *arg);

/*
 * Earliest due time, possibly a lower bound (never later than the true
 * earliest; see wheel_next_due).  Returns 0 when empty, 1 and *due_ms.
 */
int due_index_next(const struct due_index *di, uint64_t *due_ms);

/* Number of entries. */
size_t due_index_count(const struct due_index *di);

#endif
