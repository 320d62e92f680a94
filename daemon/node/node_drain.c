/*
 * node_drain — the operator's drain of this node (spool/drain.h): its
 * marker state/drain/<self>.json polled at most every DRAIN_POLL_MS
 * (and at once after a SIGHUP or at start), the claims it stops, the
 * heartbeat and metrics that show it.  Drained, the node finishes what
 * it runs, claims nothing new from incoming/ or queue/<self>/ (the
 * router sends its queue elsewhere), recovers, cancels and, as leader,
 * still fires jobs and routes: only new hook runs stop.
 */
#include "node/node_impl.h"

#include <stdio.h>
#include <string.h>

#include "spool/clock.h"
#include "spool/drain.h"
#include "spool/log.h"

#define DRAIN_POLL_MS	500	/* marker read at most this often */

void
node_drain_poll(struct node *n, int force)
{
	struct drainmark m;
	char why[512], safe[DRAINMARK_REASON_MAX * 4 + 1];
	int64_t now = tstime_mono_ms();
	int d;

	if (!force && now < n->drain_next)
		return;
	n->drain_next = now + DRAIN_POLL_MS;
	d = drain_read(&n->sp, n->sp.node, &m, why, sizeof(why));
	if (d < 0) {
		/* This host cannot read it: keep the state we had. */
		log_warnx("drain marker: %s; %s as before", why, n->drained ?
		    "drained" : "claiming");
		return;
	}
	if (d == n->drained && (d == 0 || strcmp(m.reason,
	    n->drain_reason) == 0))
		return;
	n->drained = d;
	snprintf(n->drain_reason, sizeof(n->drain_reason), "%s", m.reason);
	if (d)
		log_info("drained by an operator (reason: %s): claiming "
		    "nothing new; %ld hook(s) still running; `taskspool "
		    "nodes resume %s` undoes it", m.reason[0] != '\0' ?
		    log_safe(safe, sizeof(safe), m.reason) : "none given",
		    n->nrunning, n->sp.node);
	else
		log_info("resumed: claiming again");
	/* Show it now: the heartbeat (router, `taskspool nodes`, the
	 * CLI waiting for it) and the gauge. */
	node_heartbeat(n);
	n->next_metrics = now;
}
