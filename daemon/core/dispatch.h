/*
 * dispatch — the choice of node for a task's route (DESIGN §6).  Pure:
 * no I/O, no clock, no logging; the caller (the leader) gives the live
 * nodes and their load and moves the task.
 *
 * Routes: "any" (no choice: any node claims from incoming/), "round_robin"
 * (the live nodes in id order, in turn), "least_active" (the live node
 * with the most free slots, free = slots - running - already assigned;
 * ties to the smallest id), "consistent_hash" (the owner of shardKey on
 * a ring of the live nodes, ring.h), "broadcast" (one copy per live
 * node, shard i of n in id order), "node:<id>" (that node, while live).
 */
#ifndef TASKSPOOL_DISPATCH_H
#define TASKSPOOL_DISPATCH_H

#include <stddef.h>

#include "core/ring.h"

enum dispatch_route {
	DISPATCH_ANY,
	DISPATCH_ROUND_ROBIN,
	DISPATCH_LEAST_ACTIVE,
	DISPATCH_CONSISTENT_HASH,
	DISPATCH_BROADCAST,
	DISPATCH_NODE
};

struct dispatch_node {
	const char *id;		/* borrowed */
	long slots;		/* hooks it runs at once */
	long running;		/* running now (heartbeat) + assigned since */
};

/*
 * Parse route (NULL = "any").  For "node:<id>", *node receives a pointer
 * to the id inside route (borrowed).  Returns the route, or -1 for text
 * that is not a route (task.c has already rejected those).
 */
int dispatch_parse(const char *route, const char **node);

/*
 * The index in nodes[0..n-1] (live nodes, sorted by id) of the node that
 * gets one task of route r; -1 when none can (no live node; node:<id> not
 * live; ANY or BROADCAST, which are not single choices).  *rr is the
 * round-robin position, advanced by one for each ROUND_ROBIN choice.
 * ring (borrowed) must hold exactly these nodes for CONSISTENT_HASH, with
 * key the task's shardKey (NULL is hashed as "").  target is node:<id>'s
 * id.  For LEAST_ACTIVE the caller adds 1 to the chosen node's running
 * before the next call, so a batch spreads.
 */
int dispatch_pick(enum dispatch_route r, const struct dispatch_node *nodes,
    size_t n, unsigned long *rr, const struct ring *ring, const char *key,
    const char *target);

#endif
