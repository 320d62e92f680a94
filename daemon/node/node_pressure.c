/*
 * node_pressure — back-pressure and descriptor shortage: when the spool
 * cannot take writes (ENOSPC, EDQUOT, EROFS) or the process is out of
 * descriptors, claims stop until a probe write succeeds or a second
 * has passed.
 *
 * Invariant: nothing new is claimed (tasks, cancels of pending tasks,
 * orphans) while node_claims_held() says so; hooks that end meanwhile
 * still conclude, so at most COMMITS_MAX + slots commits hold
 * descriptors.  Writes only state/probe.<node> (and removes it).
 */
#include "node/node_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool/clock.h"
#include "spool/log.h"
#include "spool/spool.h"

int
node_spool_full(struct node *n, int e, const char *what)
{
	if (e != ENOSPC && e != EDQUOT && e != EROFS)
		return 0;
	if (n->bp_err == 0) {
		n->bp_err = e;
		n->bp_since = tstime_mono_ms();
		log_warnx("spool cannot take writes (%s: %s): back-pressure, "
		    "no new claims until a probe write succeeds", what,
		    strerror(e));
		n->next_metrics = n->bp_since;	/* the gauge at once */
	}
	n->bp_probe = tstime_mono_ms() + 1000;
	return 1;
}

void
node_bp_check(struct node *n)
{
	char name[SPOOL_NAME_MAX], *zero;
	int64_t now = tstime_mono_ms();
	int rc, e;

	if (n->bp_err == 0 || now < n->bp_probe)
		return;
	n->bp_probe = now + 1000;
	if ((zero = calloc(1, PROBE_BYTES)) == NULL)
		return;
	snprintf(name, sizeof(name), "probe.%s", n->sp.node);
	rc = spool_publish(&n->sp, n->sp.dir[SPOOL_STATE], name, zero,
	    PROBE_BYTES, -1, 0);
	e = errno;
	free(zero);
	(void)unlinkat(n->sp.dir[SPOOL_STATE], name, 0);
	if (rc != 0) {
		if (e != ENOSPC && e != EDQUOT && e != EROFS)
			log_warnx("back-pressure probe: %s", strerror(e));
		return;
	}
	log_info("spool takes writes again after %lld s of back-pressure "
	    "(%s); claims resume", (long long)(now - n->bp_since) / 1000,
	    strerror(n->bp_err));
	n->bp_err = 0;
	n->next_metrics = now;
}

int
node_fd_short(struct node *n, int e, const char *what)
{
	int64_t now = tstime_mono_ms();

	if (e != EMFILE && e != ENFILE)
		return 0;
	n->claim_pause = now + 1000;
	if (n->fd_warn == 0 || now - n->fd_warn >= 10000) {
		n->fd_warn = now;
		log_warnx("out of descriptors (%s: %s); claims paused while "
		    "%ld running and %ld finished tasks complete", what,
		    strerror(e), n->nrunning, n->ncommits);
	}
	return 1;
}

int
node_claims_held(const struct node *n)
{
	return n->ncommits >= COMMITS_MAX || n->bp_err != 0 ||
	    tstime_mono_ms() < n->claim_pause;
}
