/*
 * freshness — whether a file a daemon rewrites every period
 * (metrics/<node>.prom, state/heartbeat.<node>) still speaks for a live
 * daemon.  A daemon killed with -9 leaves its last file behind, and a
 * reader that took it at its word would see a dead node as the leader.
 *
 * A file is stale past limit_ms (3 periods: one write missed is a slow
 * daemon, three a dead or frozen one).  Two clocks can say how old a file
 * is, and on a spool shared over NFS they belong to different hosts: the
 * file's mtime is set by the file server's clock, the written-at value
 * inside it by the writer's clock, and "now" is the reader's clock.  The
 * rule therefore prefers comparisons within one clock:
 *
 *   1. against the freshest file of the same set: newest_mtime_ms −
 *      mtime_ms > limit_ms.  Both mtimes come from the file system's one
 *      clock, so no skew between hosts enters.  This judges every node of
 *      a cluster while at least one of them still writes.
 *   2. when every file of the set is old (a single-node install whose
 *      daemon crashed, a whole cluster down), only the reader's clock is
 *      left: stale when now_ms − mtime_ms > limit_ms AND now_ms −
 *      written_ms > limit_ms.  Both must agree, so one clock off by more
 *      than the limit (the file server's, or the writer's — daemons under
 *      a skewed clock still write fresh mtimes) cannot make a live node
 *      stale; only a reader whose own clock runs ahead of both can.
 *
 * A time in the future (a clock behind the reader's) never makes a file
 * stale.  Pure: no I/O, no clock.  Source: DESIGN.md (spool shared over
 * NFS; heartbeat expiry at 3 periods), FIELD-FAILURES.md B31 (clock skew).
 */
#ifndef TASKSPOOL_FRESHNESS_H
#define TASKSPOOL_FRESHNESS_H

#include <stdint.h>

/* One file as a reader found it. */
struct freshness {
	int64_t written_ms;	/* the writer's clock at writing, epoch ms;
				 * < 0 when the file does not say */
	int64_t mtime_ms;	/* the file's mtime, epoch ms */
	int64_t limit_ms;	/* stale past this age (3 periods); <= 0:
				 * never stale */
};

/*
 * Whether f is stale, by the rule above: newest_mtime_ms is the greatest
 * mtime of the set f belongs to (f's own included; epoch ms), now_ms the
 * reader's clock (epoch ms).  A file that does not give written_ms is
 * judged by its mtime alone in step 2.  Returns 1 stale, 0 fresh.
 */
int freshness_stale(const struct freshness *f, int64_t newest_mtime_ms,
    int64_t now_ms);

#endif
