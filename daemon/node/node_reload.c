/*
 * node_reload — SIGHUP: the configuration read again (the file, then
 * the command-line overrides) and applied.
 *
 * Invariants: a file that does not parse or check keeps the whole old
 * configuration; node_id and hooks_dir keep their values (a restart
 * changes them), slots only grow, a Redis change that fails keeps the
 * old Redis settings; the callback sender gets the new callback_* keys
 * (callback_sender_reconfigure); tasks waiting for a rate limit are
 * decided again at once when rate_limit or rate_limit_per_key changed.
 *
 * Longest: node_reload (about 90 lines) is one sequence of checks over
 * one new struct config, committed at its end.
 */
#include "node/node_impl.h"
#include "coord/coord_open.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callback/callback_sender.h"
#include "coord/coord.h"
#include "spool/hooklimit.h"
#include "spool/log.h"

void
node_reload(struct node *n)
{
	struct config c;
	char why[512];

	n->reload = 0;
	config_defaults(&c);
	if (config_locate(&c, n->config_path, n->cfg->spool, why,
	    sizeof(why)) != 0) {
		log_warnx("SIGHUP: configuration not reloaded: %s", why);
		return;
	}
	if (c.repeated[0] != '\0')
		log_warnx("SIGHUP: %s", c.repeated);
	for (int i = 0; i < n->noverrides; i++) {
		const char *eq = strchr(n->overrides[i], '=');
		char key[64];

		if (eq == NULL || (size_t)(eq - n->overrides[i]) >= sizeof(key))
			continue;
		memcpy(key, n->overrides[i], (size_t)(eq - n->overrides[i]));
		key[eq - n->overrides[i]] = '\0';
		(void)config_set(&c, key, eq + 1, why, sizeof(why));
	}
	if (strcmp(n->cfg->log_level, "debug") == 0)
		snprintf(c.log_level, sizeof(c.log_level), "debug");
	if (config_finish(&c, why, sizeof(why)) != 0 ||
	    hooklimit_check_process(&c, why, sizeof(why)) != 0) {
		log_warnx("SIGHUP: configuration not reloaded: %s", why);
		return;
	}
	if ((strcmp(c.node_id, n->cfg->node_id) != 0 && !(c.node_id_auto &&
	    n->cfg->node_id_auto)) || strcmp(c.hooks_dir, n->cfg->hooks_dir)
	    != 0)
		log_warnx("SIGHUP: node_id and hooks_dir changes need a "
		    "restart; keeping the old values");
	snprintf(c.node_id, sizeof(c.node_id), "%s", n->cfg->node_id);
	snprintf(c.hooks_dir, sizeof(c.hooks_dir), "%s", n->cfg->hooks_dir);
	/* The hooks' account is looked up again (its groups may have
	 * changed); another account needs a restart: the work directories
	 * and the callback sender are set up for this one. */
	if (hookcred_resolve(c.hook_user, c.hook_group, &c.hookcred, why,
	    sizeof(why)) != 0) {
		log_warnx("SIGHUP: %s; hooks keep running as %s", why,
		    n->cfg->hookcred.active ? n->cfg->hookcred.user :
		    "the daemon's user");
		c.hookcred = n->cfg->hookcred;
	} else if (c.hookcred.active != n->cfg->hookcred.active ||
	    c.hookcred.uid != n->cfg->hookcred.uid ||
	    c.hookcred.gid != n->cfg->hookcred.gid) {
		log_warnx("SIGHUP: hook_user and hook_group changes need a "
		    "restart; keeping the old values");
		c.hookcred = n->cfg->hookcred;
	}
	snprintf(c.hook_user, sizeof(c.hook_user), "%s", n->cfg->hook_user);
	snprintf(c.hook_group, sizeof(c.hook_group), "%s",
	    n->cfg->hook_group);
	if (c.slots != n->nslots) {
		struct slot *ns;

		if (c.slots > n->nslots) {
			ns = reallocarray(n->slots, (size_t)c.slots,
			    sizeof(*ns));
			struct workdir *nw = reallocarray(n->work,
			    (size_t)c.slots, sizeof(*nw));

			if (nw != NULL)
				n->work = nw;
			if (ns != NULL)
				n->slots = ns;
			if (ns != NULL && nw != NULL) {
				long i;

				memset(ns + n->nslots, 0, (size_t)(c.slots -
				    n->nslots) * sizeof(*ns));
				for (i = n->nslots; i < c.slots; i++)
					if (node_work_prepare(n, i) != 0)
						break;
				n->nslots = i;
			}
		} else
			log_warnx("SIGHUP: fewer slots need a restart; "
			    "keeping %ld", n->nslots);
		c.slots = n->nslots;
	}
	/* The Redis server may change (a replica promoted after its master
	 * was lost): the leases held are renewed on the new one. */
	switch (coord_reconfigure(n->coord, &c, why, sizeof(why))) {
	case 1:
		log_info("SIGHUP: Redis is now %s", c.sentinel[0] != '\0' ?
		    c.sentinel : c.redis);
		break;
	case -1:
		log_warnx("SIGHUP: %s; keeping the old Redis settings", why);
		snprintf(c.redis, sizeof(c.redis), "%s", n->cfg->redis);
		snprintf(c.redis_prefix, sizeof(c.redis_prefix), "%s",
		    n->cfg->redis_prefix);
		snprintf(c.sentinel, sizeof(c.sentinel), "%s",
		    n->cfg->sentinel);
		break;
	}
	/* Changed rate limits (README.md "Execution rate limits") apply
	 * to the tasks already waiting too: each is decided again now under
	 * the new value, not at the instant the old one gave it. */
	if (strcmp(c.rate_limit, n->cfg->rate_limit) != 0 ||
	    strcmp(c.rate_limit_per_key, n->cfg->rate_limit_per_key) != 0) {
		for (struct nameset_node *w = n->ratewait.head; w != NULL;
		    w = w->fnext)
			w->key = 0;
		n->next_rate = 0;
		log_info("SIGHUP: rate_limit = %s, rate_limit_per_key = %s",
		    c.rate_limit[0] != '\0' ? c.rate_limit : "(none)",
		    c.rate_limit_per_key[0] != '\0' ? c.rate_limit_per_key :
		    "(none)");
	}
	*n->cfg = c;
	/* The callback sender keeps its own copy: the new callback_* keys
	 * reach its thread before its next pass. */
	if (callback_sender_reconfigure(n->cbs, n->cfg, why, sizeof(why)) !=
	    0)
		log_warnx("SIGHUP: callback sender keeps its old settings: %s",
		    why);
	log_set_level((enum log_level)log_level_parse(c.log_level));
	log_set_format((enum log_format)log_format_parse(c.log_format));
	log_info("configuration reloaded (%s)", c.source[0] ? c.source :
	    "defaults");
}
