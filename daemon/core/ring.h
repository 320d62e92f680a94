/*
 * ring — consistent hashing with virtual nodes (pure: no I/O, no clock,
 * no logging).
 *
 * Each node id n is placed on a 64-bit circle at the points
 * hash("<n>#<i>") for i = 0 .. vnodes-1, where hash(s) is the first 8
 * bytes, big-endian, of SHA-256(s) (FIPS 180-4; the placement the ketama
 * scheme makes with MD5).  A key belongs to the node of the first point
 * at or after hash(key), wrapping around.  So when a node leaves, only
 * the keys it owned move (each to the node of the next point), and when
 * a node joins, keys move only to it: about 1/n of them (Karger et al.,
 * "Consistent Hashing and Random Trees", STOC 1997).  Points that
 * collide are ordered by node id, so the ring does not depend on the
 * order the nodes are given in.
 */
#ifndef TASKSPOOL_RING_H
#define TASKSPOOL_RING_H

#include <stddef.h>
#include <stdint.h>

#define RING_VNODES	160	/* default points per node */
#define RING_NODE_MAX	64	/* node id length (config.h CONFIG_NODE_MAX) */

struct ring;

/* hash(s) as above: the first 8 bytes of SHA-256(s), big-endian. */
uint64_t ring_hash(const char *s);

/*
 * A ring of the n node ids in nodes (borrowed; copied), vnodes points
 * each (1..4096).  Duplicate ids count once.  Returns a new ring (free
 * with ring_free), or NULL with errno EINVAL (bad vnodes, an id longer
 * than RING_NODE_MAX) or ENOMEM.  n == 0 gives an empty ring.
 */
struct ring *ring_new(const char *const *nodes, size_t n, int vnodes);

void ring_free(struct ring *r);	/* NULL allowed */

/*
 * The node that owns key: a pointer into the ring (borrowed, valid until
 * ring_free), or NULL when the ring is empty.
 */
const char *ring_lookup(const struct ring *r, const char *key);

#endif
