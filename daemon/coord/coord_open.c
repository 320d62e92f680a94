/*
 * coord_open — a coord on the backend the configuration names (see
 * coord_open.h).
 */
#include "coord/coord_open.h"

#include <stdio.h>
#include <string.h>

#include "coord/coord_file.h"
#include "coord/coord_impl.h"
#include "coord/coord_redis.h"

/* Cluster mode: a Redis server or its sentinels are named. */
static int
cluster_mode(const struct config *cfg)
{
	return cfg->redis[0] != '\0' || cfg->sentinel[0] != '\0';
}

struct coord *
coord_open(const struct config *cfg, const char *node,
    const struct spool *sp, char *why, size_t whylen)
{
	if (cfg->redis[0] != '\0' && cfg->lease_renew_ms * 2 >
	    cfg->lease_ms) {
		snprintf(why, whylen, "lease_renew_ms (%ld) must be at most "
		    "half of lease_ms (%ld)", cfg->lease_renew_ms,
		    cfg->lease_ms);
		return NULL;
	}
	return coord_new(cluster_mode(cfg) ? &coord_redis_ops :
	    &coord_file_ops, cfg, node, sp, why, whylen);
}

int
coord_reconfigure(struct coord *c, const struct config *cfg, char *why,
    size_t whylen)
{
	int cluster = cluster_mode(cfg);

	if (cluster != (c->ops == &coord_redis_ops) || strcmp(c->prefix,
	    cfg->redis_prefix) != 0) {
		snprintf(why, whylen, "a change between embedded and cluster "
		    "mode or of redis_prefix needs a restart");
		return -1;
	}
	if (!cluster || (strcmp(c->addr, cfg->redis) == 0 &&
	    strcmp(c->password, cfg->redis_password) == 0 &&
	    c->db == cfg->redis_db && strcmp(c->sentinel, cfg->sentinel) ==
	    0 && strcmp(c->sentinel_master, cfg->sentinel_master) == 0))
		return 0;
	coord_server_settings(c, cfg);
	coord_redis_drop(c);
	c->retry_mono = 0;		/* connect at the next call */
	return 1;
}

