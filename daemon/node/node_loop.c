/*
 * node_loop — the event loop: one thread, one epoll over signalfd,
 * inotify, the wake-up socket, the group commit's descriptor and the
 * hooks' pipes.  Each pass: work (maxConcurrent waiters, the
 * back-pressure probe, deferred recovery and cancels, claims, the group
 * commit), sleep until the next deadline (next_wakeup) or an event,
 * dispatch the events, reap hooks, reload on SIGHUP, timeouts, lease
 * renewals (coord_tick), the leader's pass, the periodic duties.
 *
 * Invariants: nothing here blocks but epoll_wait; the sleep is at most
 * 60 s and never past a deadline (a hook's timeout, a due delayed/ task,
 * a lease renewal, a job).  SIGTERM/SIGINT drain (no new claims, running
 * hooks finish); a second one stops the hooks, SIGKILL after
 * kill_grace_ms.
 */
#include "node/node_impl.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <time.h>

#include "spool/clock.h"
#include "coord/coord.h"
#include "coord/execrate.h"
#include "core/dueindex.h"
#include "spool/hook.h"
#include "coord/index.h"
#include "spool/log.h"
#include "coord/maxconc.h"
#include "spool/metrics.h"
#include "spool/sdnotify.h"
#include "core/nameset.h"
#include "node/router.h"
#include "node/scheduler.h"
#include "spool/spool.h"
#include "coord/wakeup.h"

/* How many candidates, from the oldest, a claim compares by priority:
 * the bound on the claim's cost (O(this) when priorities are mixed, O(1)
 * when all are equal), like CAND_ORDER_WALK (node_impl.h). */
#define CAND_PRIO_WALK	4096

static void
handle_inotify(struct node *n)
{
	char evbuf[65536] __attribute__((aligned(8)));

	for (;;) {
		ssize_t len = read(n->ino, evbuf, sizeof(evbuf));

		if (len <= 0)
			return;
		for (char *p = evbuf; p < evbuf + len;) {
			struct inotify_event *ev = (struct inotify_event *)
			    (void *)p;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				log_warnx("inotify queue overflow: full rescan");
				node_scan_incoming(n);
				if (n->leader)
					node_scan_delayed(n);
				node_deps_scan(n);
				node_scan_cancels(n);
				continue;
			}
			if (ev->len == 0)
				continue;
			if (ev->wd == n->wd_incoming) {
				node_cand_add(n, ev->name, (ev->mask &
				    (IN_MOVED_TO | IN_CLOSE_WRITE)) != 0);
				n->route_dirty = 1;
			} else if (ev->wd == n->wd_queue && ev->name[0] != '.')
				node_cand_again(n, n->qself, ev->name,
				    (ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE))
				    != 0);
			else if (ev->wd == n->wd_delayed && n->leader)
				node_delayed_note(n, ev->name);
			else if (ev->wd == n->wd_blocked &&
			    (ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE)))
				node_deps_note(n, ev->name);
			else if (ev->wd == n->wd_ended[0] ||
			    ev->wd == n->wd_ended[1] ||
			    ev->wd == n->wd_ended[2])
				node_deps_ended(n, ev->name);
			else if (ev->wd == n->wd_jobs)
				n->jobs_dirty = 1;
			else if (ev->wd == n->wd_cancel &&
			    spool_id_ok(ev->name))
				node_handle_cancel(n, ev->name);
		}
	}
}

static void
handle_signals(struct node *n, int *sigchld)
{
	struct signalfd_siginfo si;

	while (read(n->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			*sigchld = 1;
			break;
		case SIGHUP:
			n->reload = 1;
			break;
		case SIGTERM:
		case SIGINT:
			if (!n->draining) {
				n->draining = 1;
				log_info("draining: no new claims; waiting "
				    "for %ld running hook(s) (signal again to "
				    "stop them)", n->nrunning);
				(void)sdnotify("STOPPING=1\nSTATUS=draining: "
				    "waiting for %ld running hook(s)",
				    n->nrunning);
			} else if (!n->quitting) {
				n->quitting = 1;
				n->quit_deadline = tstime_mono_ms() +
				    n->cfg->kill_grace_ms;
				log_info("stopping: SIGTERM to running hooks");
				for (long i = 0; i < n->nslots; i++)
					if (n->slots[i].used &&
					    n->slots[i].pid > 0)
						hook_kill_group(n->slots[i].pid,
						    SIGTERM);
			}
			break;
		default:
			break;
		}
	}
}

static int64_t
next_wakeup(struct node *n)
{
	int64_t now = tstime_mono_ms(), wall = tstime_now_ms(), t;

	t = n->next_scan;
	if (n->next_reap < t)
		t = n->next_reap;
	if (n->next_hb < t)
		t = n->next_hb;
	if (n->cfg->metrics_interval_ms > 0 && n->next_metrics < t)
		t = n->next_metrics;
	if (n->next_lease < t)
		t = n->next_lease;
	if (n->watchdog_ms > 0 && n->next_watchdog < t)
		t = n->next_watchdog;
	if (n->leader && !n->draining && n->route_dirty && n->next_route < t)
		t = n->next_route;
	if (n->leader && !n->draining && n->repair != NULL &&
	    n->next_repair < t)
		t = n->next_repair;
	for (long i = 0; i < n->nslots; i++) {
		struct slot *sl = &n->slots[i];

		if (!sl->used)
			continue;
		if (!sl->timed_out && !sl->cancelled && sl->deadline_mono < t)
			t = sl->deadline_mono;
		if (sl->kill_mono > 0 && sl->kill_mono < t)
			t = sl->kill_mono;
	}
	{
		uint64_t due;

		int64_t jd;

		if (n->leader && n->delayed != NULL &&
		    due_index_next(n->delayed, &due) &&
		    now + ((int64_t)due - wall) < t)
			t = now + ((int64_t)due - wall);
		if (n->leader && n->sched != NULL && !n->draining &&
		    scheduler_next(n->sched, &jd) && now + (jd - wall) < t)
			t = now + (jd - wall);
	}
	if (n->commits != NULL && now + 1000 < t)
		t = now + 1000;
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (n->gdirty[d] && now + 1000 < t)
			t = now + 1000;	/* a batch could not start */
	if (n->waiting.head != NULL && n->next_wait < t)
		t = n->next_wait;
	if (n->ratewait.head != NULL && n->next_rate < t)
		t = n->next_rate;	/* a rate-limited task may start */
	if (n->claim_pause > now && (n->cand.head != NULL ||
	    n->qcand.head != NULL || n->cancel_wait.head != NULL ||
	    n->recover_self) && n->claim_pause < t)
		t = n->claim_pause;
	if (n->bp_err != 0 && n->bp_probe < t)
		t = n->bp_probe;
	if (node_deps_pending(n))
		t = now;	/* dependents to release: no sleep */
	t -= now;
	return t < 0 ? 0 : t > 60000 ? 60000 : t;
}

/*
 * How long until the waiting tasks are tried again, for slots other
 * daemons free (this node's own frees try again at once: node_lease_end):
 * 100 ms; with more than 1,000 waiting, 1 ms per 10 of them, at most 1 s,
 * so that the poll (a sort of them all) stays a bounded share of the
 * loop.
 */
static int64_t
wait_poll_ms(size_t waiting)
{
	if (waiting <= 1000)
		return 100;
	return waiting / 10 < 1000 ? (int64_t)(waiting / 10) : 1000;
}

/*
 * The work of one pass before the loop sleeps: maxConcurrent waiters,
 * the back-pressure probe, deferred recovery and cancels, the claims
 * the free slots allow, the group commit.  Returns 1 when the drain is
 * over and the loop ends.
 */
static int
loop_work(struct node *n)
{
	if (n->waiting.head != NULL && tstime_mono_ms() >= n->next_wait) {
		(void)limits_requeue(&n->waiting, &n->waitnames,
		    n->cfg->max_concurrent,
		    n->cfg->max_concurrent_per_key,
		    &n->cand, &n->qcand, CAND_ORDER_WALK, tstime_now_ms(),
		    (int64_t)n->cfg->priority_aging_sec * 1000);
		n->next_wait = tstime_mono_ms() + wait_poll_ms(
		    n->waiting.count);
	}
	if (n->ratewait.head != NULL && tstime_mono_ms() >= n->next_rate)
		node_rate_requeue(n, tstime_mono_ms());
	node_bp_check(n);
	log_tick();
	if (n->recover_self && !n->draining && !node_claims_held(n))
		node_recover_dir(n, n->sp.self, n->sp.node);
	node_cancel_more(n);
	node_drain_poll(n, 0);
	for (;;) {
		while (!n->draining && !n->drained && n->nrunning < n->nslots &&
		    (n->cand.head != NULL || n->qcand.head != NULL) &&
		    !node_claims_held(n)) {
			int q = n->qcand.head != NULL;	/* routed to us */
			/* The highest effective priority first (README.md,
			 * "Priorities"), among the first CAND_PRIO_WALK. */
			struct nameset_node *c = nameset_pop_priority(q ?
			    &n->qcand : &n->cand, CAND_PRIO_WALK,
			    tstime_now_ms(),
			    (int64_t)n->cfg->priority_aging_sec * 1000);

			node_claim(n, q ? n->qself : n->sp.dir[SPOOL_INCOMING],
			    c->name, c->flags & CAND_ANNOUNCED);
			free(c);
		}
		/* A slot still free: release one dependent (its claim
		 * comes next), so the first start after their own
		 * release (node_depend.c, "Pacing"). */
		if (n->nrunning >= n->nslots || node_claims_held(n) ||
		    node_deps_work(n, 1) == 0)
			break;
	}
	/* Slots full: some more, ready for the slots that free up. */
	(void)node_deps_work(n, DEPS_DECIDE_BUSY);
	if (node_commits_pending(n))
		node_commits_flush(n);
	node_flush_dirty(n);
	if (n->draining && n->nrunning == 0 && (n->commits == NULL ||
	    (n->quitting && tstime_mono_ms() >= n->quit_deadline))) {
		if (n->commits != NULL)
			log_warnx("stopping with results not yet "
			    "written; those tasks stay in active/%s/ and "
			    "are recovered at the next start",
			    n->sp.node);
		return 1;
	}
	if (n->quitting && tstime_mono_ms() >= n->quit_deadline) {
		for (long i = 0; i < n->nslots; i++)
			if (n->slots[i].used && n->slots[i].pid > 0)
				hook_kill_group(n->slots[i].pid,
				    SIGKILL);
	}
	return 0;
}

/* Dispatch the nev events of evs; *sigchld set when SIGCHLD came. */
static void
loop_dispatch(struct node *n, const struct epoll_event *evs, int nev,
    int *sigchld)
{
	for (int i = 0; i < nev; i++) {
		uint64_t d = evs[i].data.u64;

		if (d == EV_SIGNAL)
			handle_signals(n, sigchld);
		else if (d == EV_INOTIFY)
			handle_inotify(n);
		else if (d == EV_GROUPSYNC)
			node_commits_synced(n);	/* drains it, always */
		else if (d == EV_WAKEUP) {
			if (wakeup_read(n->wake, node_on_wake, n) < 0) {
				log_warnx("wake-up channel lost");
				n->wake_fd = -1;
			}
		}
		else {
			struct slot *sl = &n->slots[d >> 2];

			if (sl->used)
				node_stream_drain(n, sl, (d & 3) == 1 ?
				    &sl->out : &sl->err, (d & 3) == 1 ?
				    "out" : "err");
		}
	}
}

/* The periodic duties whose instant (mono ms) has come at now. */
static void
loop_timers(struct node *n, int64_t now)
{
	struct config *cfg = n->cfg;

	if (now >= n->next_scan) {
		/* First: a file the scan finds unsettled brings it forward
		 * (node_claim.c, settle_later). */
		n->next_scan = now + cfg->scan_interval_ms;
		node_scan_incoming(n);
		node_scan_cancels(n);
		node_kill_strays(n, NULL, 0);
		n->jobs_dirty = 1;	/* safety net under inotify */
		node_deps_poll(n);
		if (n->leader && ++n->scans % 12 == 0) {
			node_scan_delayed(n);
			node_deps_scan(n);
			node_clean_tmp(n);
			/* Idle rate limits' files (execrate.h). */
			(void)execrate_sweep(n->coord, tstime_now_ms());
		}
	}
	if (now >= n->next_reap) {
		/* A draining daemon claims and reaps nothing, but the
		 * deadline still moves, or epoll would never sleep. */
		if (!n->draining)
			node_leader_tick(n);
		node_wake_connect(n);
		if (coord_leases_expire(n->coord) && index_tick(
		    n->coord, &n->sp, n->leader && !n->draining,
		    tstime_now_ms()) > 0)
			log_info("index rebuilt from the spool");
		if (n->leader && !n->draining)
			(void)router_reap_offline(n->router,
			    tstime_now_ms());
		n->next_reap = now + cfg->reap_interval_ms;
	}
	if (now >= n->next_hb) {
		(void)node_hooks_rescan(n, ++n->hbs % 12 == 0);
		node_heartbeat(n);
		n->next_hb = now + cfg->heartbeat_ms;
	}
	if (now >= n->next_metrics) {
		node_write_metrics(n, 0);
		n->next_metrics = now + cfg->metrics_interval_ms;
	}
	/* The main loop turns: systemd's watchdog, every half period
	 * (sd_watchdog_enabled(3)). */
	if (n->watchdog_ms > 0 && now >= n->next_watchdog) {
		(void)sdnotify("WATCHDOG=1");
		/* At most every 100 ms, whatever WATCHDOG_USEC says. */
		n->next_watchdog = now + (n->watchdog_ms / 2 > 100 ?
		    n->watchdog_ms / 2 : 100);
	}
}

void
node_loop(struct node *n)
{
	struct epoll_event evs[64];

	for (;;) {
		int nev, sigchld = 0;
		int64_t now;

		if (loop_work(n))
			break;
		nev = epoll_wait(n->ep, evs, 64, (int)next_wakeup(n));
		if (nev < 0 && errno != EINTR) {
			log_warn("epoll_wait");
			sleep(1);
			continue;
		}
		loop_dispatch(n, evs, nev, &sigchld);
		if (sigchld)
			node_reap_children(n);
		if (n->reload) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			(void)sdnotify("RELOADING=1\nMONOTONIC_USEC=%lld",
			    (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
			node_reload(n);
			node_drain_poll(n, 1);
			node_ready(n);
			/* And advertise it now. */
			(void)node_hooks_rescan(n, 1);
			node_heartbeat(n);
		}
		node_check_timeouts(n);
		n->next_lease = coord_tick(n->coord, tstime_mono_ms(),
		    node_lease_lost, n);
		now = tstime_mono_ms();
		node_leader_pass(n, now);
		loop_timers(n, now);
	}
}
