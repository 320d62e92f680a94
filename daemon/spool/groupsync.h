/*
 * groupsync — group commit of the daemon's terminal writes, off its event
 * loop.  One worker thread runs one batch at a time: for each item,
 * write its bytes to a new unnamed file (O_TMPFILE in the spool's tmp/),
 * fsync(2) it and link it into place (an older file of that name is
 * replaced, as by rename(2)); then fsync(2) each directory of the batch.
 * Where O_TMPFILE or /proc is missing, a named tmp/ file (spool_stage)
 * and rename(2) are used instead.  The event loop keeps claiming and starting
 * hooks while the disk works, and everything that finished meanwhile
 * goes into the next batch, so under load one journal commit covers many
 * tasks (the group commit of databases; cf. PostgreSQL's commit_delay,
 * without the delay).
 *
 * Mechanism only: the caller decides what is written and what a failure
 * means.  Items, their bytes and the descriptors belong to the caller and
 * must stay valid (not closed, not freed, not changed) from
 * groupsync_start() until groupsync_poll() reports the batch done.  The
 * module removes only its own tmp/ files (those of failed items) and
 * never logs.
 *
 * Ordering within a batch, which the crash-state table relies on: an
 * item gets its name only after its file's fsync succeeded, and the
 * directory fsyncs come after every item of the batch.
 */
#ifndef TASKSPOOL_GROUPSYNC_H
#define TASKSPOOL_GROUPSYNC_H

#include <stddef.h>

#include "spool/spool.h"

struct groupsync;

struct groupsync_item {
	const void *data;	/* the file's bytes (caller's) */
	size_t len;
	int todir;		/* published as todir/to */
	char to[SPOOL_NAME_MAX];
	int err;		/* out: 0, or the errno of the write, fsync
				 * or rename (then nothing was published
				 * and no tmp/ file is left) */
};

/* The most directories one batch fsyncs. */
#define GROUPSYNC_DIRS_MAX	16

/*
 * A new, idle group committer writing through spool sp (its tmp/; sp is
 * borrowed and must outlive it).  The worker thread is started by the
 * first groupsync_start() that asks for fsyncs.  Returns new (free with
 * groupsync_free), or NULL with errno (eventfd or memory).
 */
struct groupsync *groupsync_new(const struct spool *sp);

/*
 * A descriptor (eventfd, non-blocking, close-on-exec) that becomes
 * readable when a batch is done; add it to the event loop and call
 * groupsync_poll() when it is.  Borrowed: valid until groupsync_free.
 */
int groupsync_fd(const struct groupsync *g);

/* Whether a batch was started and not yet collected by groupsync_poll. */
int groupsync_busy(const struct groupsync *g);

/*
 * Start a batch: the nitems items (pointers borrowed until the batch is
 * collected), then fsync of the ndirs directory descriptors dirs[]
 * (ndirs <= GROUPSYNC_DIRS_MAX; copied).  With do_fsync 0 no fsync is
 * made (the files are still written and renamed) and the batch runs at
 * once in the calling thread; so it does when the worker thread cannot
 * be started.  Returns 0, or -1 with errno EBUSY (a batch is in flight),
 * EINVAL (too many directories) or ENOMEM.
 */
int groupsync_start(struct groupsync *g, struct groupsync_item *const *items,
    size_t nitems, const int *dirs, size_t ndirs, int do_fsync);

/*
 * Collect a finished batch.  Returns 1 when the batch started last is
 * done (then each item's err is set, and dir_err[i], if dir_err is not
 * NULL, gets 0 or the fsync errno of dirs[i]), 0 when none is done yet
 * (or none was started).  Never blocks.
 */
int groupsync_poll(struct groupsync *g, int *dir_err);

/*
 * Wait for a batch in flight, stop the thread and free g.  Takes NULL.
 */
void groupsync_free(struct groupsync *g);

#endif
