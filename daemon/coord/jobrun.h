/*
 * jobrun — the per-job run marker (issue 11 item 1): the overlap
 * decision of a recurring job (`overlap: forbid` or `replace`) is fenced
 * by the spool, not by who believes it leads.  Two leaders at once (a
 * Redis that lost the leader key, until the old leader's next renewal),
 * a deposed leader, a restarted one and `taskspool jobs run-now` all go
 * through the same marker, so a forbid job never has two runs at once
 * and one instant is never published twice.
 *
 * state/jobruns/<jobCode>.run holds the id of the job's current run:
 * "<taskId> token=<writer> node=<node> at_ms=<Unix ms>\n", written with
 * the writer protocol (tmp + fsync + rename + fsync(dir); the scheduler
 * batches the fsyncs with its pass's, before any publish).  Every read,
 * decision and change of it, and every publication of the run it names,
 * happens inside the per-job critical section: flock(2) on
 * state/jobruns/<jobCode>.lock (a file that stays; the kernel drops the
 * lock when its holder dies, and for a spool on NFS the lock manager
 * does, as for the claim markers of claimmark.h).  The two suffixes
 * keep the names of different job codes apart (a code may hold '.').
 *
 * A fire of instant id first asks jobrun_begin(); only on JOBRUN_FIRE is
 * the task staged, and it is moved into incoming/ or delayed/ with
 * jobrun_publish(), which moves it only while the marker still names it
 * (a slower writer whose marker was taken over publishes nothing).
 *
 * The marker's run is "live" when the task is pending, dispatched or
 * running (jobrun_task_live), "finished" when it has a result or sits in
 * a terminal directory, "unpublished" otherwise: its writer is between
 * the marker and the publish, or died there.  An unpublished run is
 * respected for JOBRUN_PUBLISH_MS after at_ms (its writer's clock),
 * then the marker is stale and taken over.
 *
 * Mechanism only: no logging.  Errors are -1 with errno.
 */
#ifndef TASKSPOOL_JOBRUN_H
#define TASKSPOOL_JOBRUN_H

#include <stddef.h>
#include <stdint.h>

#include "spool/spool.h"

/* How long an unpublished run's marker is respected (ms): above the
 * time from the marker to the publish of a scheduler pass (a few ms per
 * forbid fire: a pass of thousands of them on a loaded disk may take
 * longer), and small beside how long a leader crash may block the job.
 * Safety does not depend on it: a writer slower than this whose marker
 * was taken over publishes nothing (jobrun_publish). */
#define JOBRUN_PUBLISH_MS	10000

#define JOBRUN_TOKEN_MAX	33	/* a writer's token, with the NUL */

enum jobrun_verdict {
	JOBRUN_FIRE,	/* the marker now names id: stage and publish it */
	JOBRUN_LIVE,	/* forbid: the run in prev is live or unpublished */
	JOBRUN_MADE	/* id itself is published or being published */
};

/*
 * Open (creating it, mode 02770: the CGI in the spool's group takes
 * markers too; for spools made before it existed)
 * state/jobruns/ of sp.  Returns the directory's descriptor (the caller
 * closes it) or -1 with errno.
 */
int jobrun_open(const struct spool *sp);

/*
 * A new writer token into out (JOBRUN_TOKEN_MAX bytes: 32 hex digits
 * from RAND_bytes, NUL-terminated), one per scheduler or CLI run.
 * Returns 0, or -1 with errno EIO when the generator fails.
 */
int jobrun_token(char *out);

/*
 * Whether task id (borrowed) is pending or running on sp: in delayed/,
 * incoming/, queue/<node>/ or active/<node>/ (DESIGN §3).  The
 * directories are looked at in the order a task moves through them,
 * twice, so that a task moving on (a claim, a dispatch) or back (a retry
 * into delayed/, a give-back) while we look is still seen.  Returns 1 or
 * 0 (0 too for a name that is not a requestId).
 */
int jobrun_task_live(const struct spool *sp, const char *id);

/*
 * Decide the fire of run id (borrowed, "<job>.<instant>") of job job
 * (borrowed, a valid code) at now_ms (Unix ms), for writer token
 * (borrowed, at most JOBRUN_TOKEN_MAX - 1 bytes of [0-9a-f]; one per
 * scheduler or CLI invocation) on node (borrowed, for the operator),
 * inside the job's critical section; dirfd is jobrun_open()'s.
 *   - no marker, or a stale one (its run finished, or unpublished for
 *     JOBRUN_PUBLISH_MS): the marker is made to name id; JOBRUN_FIRE.
 *   - the marker names id: JOBRUN_MADE when that task exists anywhere
 *     or is unpublished by another writer within the bound; JOBRUN_FIRE
 *     (marker renewed) when it is this token's own unpublished fire (a
 *     publish that failed, tried again) or stale.
 *   - the marker names another run that is live or unpublished within
 *     the bound: with replace = 0 (forbid) JOBRUN_LIVE; with replace = 1
 *     the marker is made to name id and JOBRUN_FIRE (the caller cancels
 *     the run in prev when it is live).
 * flags: 0 writes the marker by the writer protocol (tmp + fsync +
 * rename + fsync of the directory); JOBRUN_NOSYNC leaves out both fsyncs,
 * for a caller that batches them (jobrun_sync) before the publish;
 * JOBRUN_WAIT waits up to 2 s for the critical section instead of
 * 100 ms.
 * prev (prevlen bytes, may be NULL) gets the run the marker named before
 * ("" when none).  Returns the verdict, or -1 with errno: EWOULDBLOCK
 * (another writer kept the critical section: try again later), EINVAL
 * (a bad job or id), or the errno of the marker's write.
 */
#define JOBRUN_NOSYNC	1	/* jobrun_begin: the caller syncs */
#define JOBRUN_WAIT	2	/* jobrun_begin: wait up to 2 s for the
				 * critical section (a manual run or a
				 * retry), not 100 ms (a fire) */
int jobrun_begin(const struct spool *sp, int dirfd, const char *job,
    const char *id, const char *token, const char *node, int replace,
    int flags, int64_t now_ms, char *prev, size_t prevlen);

/*
 * Make job's marker durable (fsync of state/jobruns/<job>.run; nothing
 * when sp does not fsync), for a marker written with JOBRUN_NOSYNC: the
 * caller calls it (or syncfs(2) of the spool), then fsyncs dirfd, before
 * it publishes the run, so that after a power failure no published run
 * is missing from its marker.  Returns 0, or -1 with errno.
 */
int jobrun_sync(const struct spool *sp, int dirfd, const char *job);

/*
 * Publish run id (borrowed) of job (borrowed), dirfd being
 * jobrun_open()'s: inside the job's critical section, check that the
 * marker still names id, then move fromfd/from (the staged, synced
 * task file) exclusively to tofd/to (spool_move_excl; the caller fsyncs
 * tofd).  Returns 0, or -1 with errno ESTALE (the marker names another
 * run now: the caller removes its staged file and does not fire),
 * EWOULDBLOCK (critical section kept by another writer), EEXIST (to
 * exists: published before), or the errno of the move.
 */
int jobrun_publish(int dirfd, const char *job, const char *id,
    int fromfd, const char *from, int tofd, const char *to);

/*
 * The run the marker of job names, into id (idlen bytes; "" when there
 * is no marker or it does not parse).  Returns 1 when a marker names a
 * run, 0 when none, -1 with errno on a read error.  For status and tests;
 * outside the critical section, so only a snapshot.
 */
int jobrun_read(int dirfd, const char *job, char *id, size_t idlen);

#endif
