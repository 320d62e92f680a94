/*
 * claimmark — the per-requestId claim marker (issue 11 item 7): one copy
 * of a requestId is claimed at a time, whatever directory each copy sits
 * in and however many daemons (on one host or over a shared spool) try.
 *
 * The marker of request id is the file state/claims/<id>, created with
 * O_CREAT|O_EXCL and held, for the whole claim critical section, with an
 * flock(2) on its descriptor: from before the claimant looks for another
 * copy of the id (active/<node>/, delayed/, results/) until after its
 * rename into active/<self>/ (or its decision not to claim).  Whoever
 * holds the flock owns the marker; the kernel (for a spool on NFS, the
 * lock manager: Linux emulates flock with whole-file POSIX locks there,
 * see flock(2)) drops it when its holder dies, so a dead claimant's
 * marker is never obeyed: the next claimant locks it, checks that the
 * name still holds that inode, and takes it over.  The file holds
 * "node=<node> pid=<pid> at_ms=<Unix ms>" for the operator and the log;
 * the lock, not the content, decides.
 *
 * After the critical section the copy in active/<node>/ is the mark: a
 * later claimant of another copy finds it there, or — once that copy is
 * concluded — finds its result in results/ or its retry in delayed/,
 * which are published before the copy leaves active/ (node.c).
 *
 * Mechanism only: no logging, no policy.  Errors are -1 with errno.
 * Single-threaded per descriptor; any number of processes.
 */
#ifndef TASKSPOOL_CLAIMMARK_H
#define TASKSPOOL_CLAIMMARK_H

#include <stddef.h>
#include <stdint.h>

#include "spool.h"

#define CLAIMMARK_INFO_MAX 128	/* the content: node=, pid=, at_ms= */

/*
 * Take the marker of request id (borrowed; a valid requestId) on sp,
 * whose state/claims/ directory sp->claims must be open, for node
 * (borrowed) at now_ms (Unix ms, written into the marker).  Returns the
 * marker's descriptor, locked (give it back with claimmark_release), or
 * -1 with errno EWOULDBLOCK (a live claimant holds it: that copy is being
 * claimed now), EAGAIN (the marker kept changing under us: try later),
 * EBADF (no state/claims/), or the errno of open/flock/write.
 * *taken_over (may be NULL) is set to 1 when the marker existed and
 * nobody held it (its claimant died mid-claim), else 0; prev (prevlen
 * bytes, may be NULL) then gets its old content, NUL-terminated, without
 * the newline ("" when it was empty).
 */
int claimmark_take(const struct spool *sp, const char *id,
    const char *node, int64_t now_ms, int *taken_over, char *prev,
    size_t prevlen);

/*
 * End the critical section: remove state/claims/<id> while the lock is
 * still held (so that a claimant waiting on the old inode sees it gone),
 * then close fd.  fd < 0 is allowed (nothing held).  Errors are ignored:
 * a marker left behind is unlocked, hence taken over or swept.
 */
void claimmark_release(const struct spool *sp, const char *id, int fd);

/*
 * Remove the markers nobody holds whose last change is at least
 * min_age_ms before now_ms (what claimants that died mid-claim left);
 * a held marker, and one younger than that (its claimant may be
 * between the create and the lock), is left alone.  Returns how many
 * were removed.
 */
size_t claimmark_sweep(const struct spool *sp, int64_t now_ms,
    int64_t min_age_ms);

#endif
