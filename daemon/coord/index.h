/*
 * index — the requestId index of cluster mode (issue 4 item 8): for
 * every task the daemons have moved, the Redis hash idx:<requestId>
 * (under redis_prefix) with the fields
 *
 *   state     PENDING WAITING DISPATCHED RUNNING SUCCESS FAILED CANCELLED
 *   dir       the spool directory holding it (incoming, delayed, queue,
 *             active, done, failed, cancelled)
 *   node      the node of queue/<node>/ or active/<node>/, "" elsewhere
 *   code      its taskCode
 *   attempts  attempts recorded so far (for RUNNING: before this one;
 *             for a finished task: all of them)
 *   nb        notBefore, Unix ms (delayed/ only), -1 when none
 *   at        time of this update, Unix ms
 *
 * written by the daemon that makes each move (claim, delay, retry,
 * promotion, dispatch, conclusion, WAITING).  A finished task's hash
 * expires after index_ttl_sec; the others do not expire.
 *
 * The spool stays the truth: the index is an accelerator for `taskspool
 * status` and can be lost.  When the key idx_built is missing (FLUSHALL,
 * a Redis restart without persistence) or after a daemon could not
 * write an update (it then also sets idx_stale), the leader rebuilds
 * it: when idx_stale is set it first deletes every idx:* hash, then it
 * writes one for each task of incoming/, delayed/, queue/<node>/ and
 * active/<node>/ that has none yet (finished tasks get none: status
 * reads them from the spool), then sets idx_built.  A hash that lacks
 * state, dir or code (a partial update after a loss) counts as missing.
 * A move whose update is lost in a crash leaves the hash one move behind
 * until the task's next move or the next rebuild.
 *
 * Every function is a no-op returning -1 in embedded mode (no redis).
 * Errors are reported by the return value only; the daemon logs.
 */
#ifndef TASKSPOOL_INDEX_H
#define TASKSPOOL_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "coord/coord.h"
#include "spool/spool.h"
#include "core/task.h"

struct index_entry {
	char state[16];
	enum spool_dir dir;
	char node[CONFIG_NODE_MAX + 1];
	char code[TASK_CODE_MAX + 1];
	long attempts;
	int64_t not_before_ms;		/* -1 = none */
	int64_t at_ms;			/* Unix ms of the update */
};

/*
 * Record that request id is now in directory d with state (a static
 * string, e.g. spool_state_name(d) or "WAITING"); node: queue/active's
 * node, NULL for none.  code NULL and attempts < 0 keep the values
 * already indexed (a move by a module that did not read the task).
 * not_before_ms: -1 for none.  ttl_sec > 0 sets the hash's expiry
 * (finished tasks), 0 removes it.  Returns 0, or -1 (embedded mode, or
 * Redis unreachable: the next rebuild corrects the index).
 */
int index_put(struct coord *c, const char *id, enum spool_dir d,
    const char *state, const char *node, const char *code, long attempts,
    int64_t not_before_ms, long ttl_sec);

/* Delete the hash of id (the task left the spool or was re-queued by a
 * client).  Returns 0 or -1 as index_put. */
int index_forget(struct coord *c, const char *id);

/*
 * Read the hash of id into *e.  Returns 1 (found and complete), 0 (no
 * complete hash: read the spool), -1 (embedded mode or Redis
 * unreachable).
 */
int index_get(struct coord *c, const char *id, struct index_entry *e);

/*
 * For a client without a coord (the CLI): when cfg names a Redis
 * server, open a coord on sp and index_get (returns as it) or
 * index_forget (forget != 0; returns 0 or -1) id, then close it.
 * Embedded mode: returns -1.
 */
int index_client(const struct config *cfg, const struct spool *sp,
    const char *id, int forget, struct index_entry *e);

/*
 * Periodic work of a daemon: after a failed update, remove idx_built so
 * the leader rebuilds; on the leader (leader != 0), rebuild from the
 * spool sp when idx_built is missing.  now_ms: Unix ms.  Returns the
 * number of hashes written by a rebuild, 0 when none was due, -1 on a
 * Redis error.
 */
long index_tick(struct coord *c, const struct spool *sp, int leader,
    int64_t now_ms);

#endif
