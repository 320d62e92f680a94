/*
 * coord_open — the choice of coord's backend (coord.h) from the
 * configuration: flock files (embedded mode) or Redis (cluster mode,
 * `redis` or `sentinel` set), at start and at SIGHUP.  The one place
 * that knows both backends, so that the lease table (coord.c) depends
 * on neither.
 */
#ifndef TASKSPOOL_COORD_OPEN_H
#define TASKSPOOL_COORD_OPEN_H

#include <stddef.h>

#include "coord/coord.h"
#include "spool/config.h"
#include "spool/spool.h"

/*
 * Open the coordination backend named by cfg (redis when cfg->redis or
 * cfg->sentinel is set, else file) for node (borrowed, copied; "" for a
 * client that holds no lease) on the open spool sp (borrowed; must
 * outlive the coord).
 * A Redis server that is down is not an error here: it is connected
 * lazily and again after every failure.  Returns a new coord (free with
 * coord_close), or NULL with a message in why (bad address, no memory).
 */
struct coord *coord_open(const struct config *cfg, const char *node,
    const struct spool *sp, char *why, size_t whylen);

/*
 * SIGHUP: take the Redis server settings of cfg (borrowed): redis,
 * redis_password, redis_db, sentinel, sentinel_master — for example to
 * point the daemons at a replica promoted after its master was lost.  A
 * change drops the connection; the next call connects to the new
 * server, and the leases held are renewed there (set again with new
 * fencing tokens when that server lacks them).  Returns 1 changed, 0
 * nothing to change, -1 with why when the change needs a restart (a mode
 * change between embedded and cluster, or a new redis_prefix: the keys
 * would no longer be found) — c is then unchanged.
 */
int coord_reconfigure(struct coord *c, const struct config *cfg, char *why,
    size_t whylen);

#endif
