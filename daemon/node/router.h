/*
 * router — the leader's dispatcher (DESIGN §6): moves due tasks whose
 * route is not "any" from incoming/ into queue/<node>/, turns a
 * broadcast task into one shard per live node, and sends the queue of an
 * offline node back to incoming/.  The executor side, router_owns(), is
 * the check a node makes before it runs a task from its own queue.
 *
 * Live nodes are the registry (coord_nodes) entries whose heartbeat is
 * younger than 3 x heartbeat_ms (the offline threshold), in id order.
 * Node choice is dispatch.h's; this module does the file moves (rename,
 * without replacing: the rename is the fence) and logs them with the
 * requestId.  Single-threaded; never exits.
 */
#ifndef TASKSPOOL_ROUTER_H
#define TASKSPOOL_ROUTER_H

#include <stdint.h>

#include "coord/coord.h"
#include "spool/spool.h"
#include "core/task.h"

struct router;

/*
 * A router for spool sp and coordination c (both borrowed, outliving
 * it); heartbeat_ms sets the offline threshold.  Returns a new router or
 * NULL (ENOMEM).
 */
struct router *router_new(const struct spool *sp, struct coord *c,
    long heartbeat_ms);

void router_free(struct router *r);	/* NULL allowed */

/*
 * One pass over incoming/ (leader only): every file that is a valid,
 * due task with a route other than "any", and whose flock is free, is
 * moved to queue/<chosen node>/<requestId>.json (broadcast: one shard
 * <requestId>.<i> per live node, shardIndex i, shardTotal n, route
 * node:<that node>, then the original is removed).  Files with route
 * "any", not due, or invalid are left to the claim path and not read
 * again until a pass with full set (the periodic rescan), unless the
 * name then holds another file (another inode: a retry, a second copy).  now_ms: wall
 * clock, Unix ms.  Returns the number of files moved or published.
 */
int router_pass(struct router *r, int64_t now_ms, int full);

/*
 * Leader: move every file of queue/<n>/ back to incoming/ when node n is
 * offline (no fresh heartbeat), so that it is routed again.  Nothing is
 * moved when the registry cannot be read.  Returns the number moved.
 */
int router_reap_offline(struct router *r, int64_t now_ms);

/*
 * Executor check of a task t found in queue/<self>/: 1 when it is this
 * node's to run (node:<id> names self, or the route is not node:<id>),
 * 0 when it must go back to incoming/ to be routed again.
 */
int router_owns(const struct task *t, const char *self);

#endif
