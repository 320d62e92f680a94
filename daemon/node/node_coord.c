/*
 * node_coord — the node's side of coordination (coord.h): taking a lease
 * for a claim, self-fencing when one is lost, the stale record of a
 * fenced attempt, the heartbeat, the requestId index (index.h) and the
 * wake-ups between hosts (wakeup.h).
 *
 * Invariants: a lease is taken only on a descriptor whose flock is held;
 * the renewals are coord_tick's (node_loop.c), which calls
 * node_lease_lost, and a hook whose lease is lost is killed at once and
 * never concluded (its outcome goes to logs/<id>/<attempt>.stale, never
 * results/).  Index and wake-ups are best effort: the spool is the truth
 * and the rescans find what a lost message would have announced.
 */
#include "node/node_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "spool/hook.h"
#include "coord/index.h"
#include "spool/log.h"
#include "spool/spool.h"
#include "coord/maxconc.h"
#include "coord/wakeup.h"

void
node_lease_end(struct node *n, int fd)
{
	int held = n->waiting.head != NULL && coord_limit_held(n->coord, fd);

	coord_lease_close(n->coord, fd);
	if (held) {
		int64_t soon = tstime_mono_ms() + LIMITS_FREED_MS;

		if (n->next_wait > soon)
			n->next_wait = soon;
	}
}

int
node_lease_take(struct node *n, int fd, const char *id, int attempt)
{
	char why[512];

	switch (coord_lease_acquire(n->coord, fd, id, attempt,
	    tstime_mono_ms(), why, sizeof(why))) {
	case COORD_OK:
		if (n->coord_down)
			log_info("%s coordination is back", coord_kind(
			    n->coord));
		n->coord_down = 0;
		return 0;
	case COORD_BUSY:
		log_debug("%s: leased by another node", id);
		return -1;
	default:
		if (!n->coord_down)
			log_warnx("%s; no claims until it answers", why);
		n->coord_down = 1;
		return -1;
	}
}

void
node_record_stale(struct node *n, const char *id, int attempt, long long fence,
    const char *what)
{
	char lname[64];
	int dfd, fd;
	struct buf b;

	log_warnx("%s: attempt %d is stale (lease lost): %s; not reported "
	    "as the outcome", id, attempt, what);
	if (mkdirat(n->sp.dir[SPOOL_LOGS], id, 0750) != 0 && errno != EEXIST)
		return;
	dfd = openat(n->sp.dir[SPOOL_LOGS], id, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	snprintf(lname, sizeof(lname), "%d.stale", attempt);
	fd = openat(dfd, lname, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC, 0640);
	close(dfd);
	if (fd < 0)
		return;
	buf_init(&b, 0);
	if (buf_printf(&b, "node=%s attempt=%d fence=%lld at_ms=%lld: %s\n",
	    n->sp.node, attempt, fence, (long long)tstime_now_ms(), what) == 0)
		(void)!write(fd, b.data, b.len);
	buf_fini(&b);
	close(fd);
}

void
node_lease_lost(void *arg, int fd)
{
	struct node *n = arg;

	for (long i = 0; i < n->nslots; i++) {
		struct slot *sl = &n->slots[i];

		if (!sl->used || sl->lockfd != fd || sl->fenced)
			continue;
		sl->fenced = 1;
		log_warnx("%.*s: lease lost or not renewed in time; killing "
		    "process group %d (self-fencing)", (int)strlen(sl->name) -
		    5, sl->name, (int)sl->pid);
		if (sl->pid > 0)
			(void)hook_kill_group(sl->pid, SIGKILL);
	}
}

void
node_lease_reestablished(void *arg, const char *id, long long old,
    long long fence)
{
	(void)arg;
	log_warnx("%s: the lease was gone from Redis (its data lost); set "
	    "again with fencing token %lld (was %lld), the hook runs on", id,
	    fence, old);
}

void
node_index_note(struct node *n, const char *id, enum spool_dir d,
    const char *state, const char *node, const struct task *t, int64_t nb)
{
	if (!coord_leases_expire(n->coord))
		return;
	(void)index_put(n->coord, id, d, state != NULL ? state :
	    spool_state_name(d), node, t != NULL ? t->task_code : NULL,
	    t != NULL ? (long)t->nattempts : -1, nb, d >= SPOOL_DONE &&
	    d <= SPOOL_CANCELLED ? n->cfg->index_ttl_sec : 0);
}

void
node_wake_others(struct node *n, const char *dir, const char *name)
{
	char path[SPOOL_NAME_MAX + CONFIG_NODE_MAX + 16], why[256];

	if (n->wake == NULL)
		return;
	snprintf(path, sizeof(path), "%s%s%s", dir, name != NULL ? "/" : "",
	    name != NULL ? name : "");
	if (wakeup_publish(n->coord, path, why, sizeof(why)) != 0)
		log_debug("wake-up %s not sent: %s", path, why);
}

void
node_on_wake(void *arg, const char *path)
{
	struct node *n = arg;
	const char *name = strrchr(path, '/');
	size_t ql = strlen(n->sp.node);

	if (strncmp(path, "incoming", 8) == 0) {
		if (name != NULL && path[8] == '/')
			node_cand_add(n, name + 1, 1);
		else
			node_scan_incoming(n);
		n->route_dirty = 1;
	} else if (strncmp(path, "queue/", 6) == 0 && strncmp(path + 6,
	    n->sp.node, ql) == 0 && path[6 + ql] == '/' && n->qself >= 0)
		node_cand_again(n, n->qself, path + 7 + ql, 1);
	else if (strncmp(path, "delayed/", 8) == 0 && n->leader &&
	    name != NULL)
		node_delayed_note(n, name + 1);
	else if (n->leader && name != NULL && (strncmp(path, "done/", 5) ==
	    0 || strncmp(path, "failed/", 7) == 0 ||
	    strncmp(path, "cancelled/", 10) == 0))
		node_deps_ended(n, name + 1);	/* a task ended elsewhere */
}

void
node_wake_connect(struct node *n)
{
	char why[256];
	int fd;
	struct epoll_event ev;

	if (n->wake == NULL || wakeup_fd(n->wake) >= 0)
		return;
	n->wake_fd = -1;
	if ((fd = wakeup_connect(n->wake, tstime_mono_ms(), why,
	    sizeof(why))) < 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = EV_WAKEUP;
	if (epoll_ctl(n->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		log_warn("epoll: wake-up channel");
		return;
	}
	n->wake_fd = fd;
	log_info("subscribed to the wake-up channel");
	node_scan_incoming(n);	/* what was published while unsubscribed */
}

void
node_heartbeat(struct node *n)
{
	static int64_t started;
	struct coord_node info;
	char why[512];
	double load[1];

	if (started == 0)
		started = tstime_now_ms();
	memset(&info, 0, sizeof(info));
	snprintf(info.id, sizeof(info.id), "%s", n->sp.node);
	info.pid = (long)getpid();
	info.slots = n->nslots;
	info.running = n->nrunning;
	info.claimed = n->claimed;
	info.finished = n->finished;
	info.leader = n->leader;
	info.at_ms = tstime_now_ms();
	info.started_ms = started;
	info.load1 = getloadavg(load, 1) == 1 ? load[0] : 0;
	info.draining = n->draining ? 2 : n->drained ? 1 : 0;
	info.hooks_known = 1;
	memcpy(info.hooks, n->hooks, sizeof(info.hooks));
	/* config_finish made it a sorted list (core/tags.h) */
	snprintf(info.tags, sizeof(info.tags), "%.*s",
	    (int)sizeof(info.tags) - 1, n->cfg->tags);
	if (coord_heartbeat(n->coord, &info, why, sizeof(why)) != 0)
		log_warnx("heartbeat: %s", why);
}
