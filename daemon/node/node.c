/*
 * node — the node daemon's start and stop (node.h: node_run), and the
 * small spool helpers every file of node/ uses.  See node_impl.h for
 * the state and node_loop.c for the loop.
 *
 * Coordination (leases, leader lock, heartbeats) goes through coord.h:
 * flock and files in embedded mode, Redis in cluster mode; routed tasks
 * go through router.h (the leader's dispatcher, queue/<node>/).
 *
 * The files of node/, by concept: node_loop.c (the event loop),
 * node_claim.c (claiming), node_slots.c and node_stream.c (hook slots
 * and their output), node_hooks.c (the hooks this node has),
 * node_conclude.c (concluding an attempt, the group commit hand-off),
 * node_cancel.c (cancel markers), node_recover.c (recovery and the
 * reaper), node_leader.c (leader duties besides scheduler.c, router.c
 * and resrepair.c), node_coord.c (leases, heartbeats, index, wake-ups),
 * node_pressure.c (back-pressure, descriptors), node_reload.c (SIGHUP).
 *
 * Owns: setup (node id, the spool, hooks_dir, the node lock, coord, the
 * slots and their work directories, signals, epoll, inotify), the
 * start-up recovery of active/<self>/ (everything there is from a
 * previous life), and the release of all of it after the drain.
 *
 * Invariants (of the whole daemon):
 *  - A task file is claimed only while its flock is held: open + flock in
 *    incoming/, verify the inode is still the one at that name, then
 *    rename into active/<self>/.  Whoever holds the flock of a file in
 *    active/<n>/ owns it; a file there whose flock is free is an orphan.
 *  - The next state is published before the previous copy is removed
 *    (retry: delayed/<id> before unlinking active/<self>/<id>; terminal:
 *    results/<id> before the rename into done|failed|cancelled/).  Recovery
 *    therefore resolves an orphan by looking for a newer copy first.
 *  - Completion is decided by waiting on the hook process, never by EOF
 *    on its output pipes; when the hook exits, what is left of its process
 *    group is killed.
 * Never: deletes an input file it could not parse (it goes to corrupt/),
 * exits on a transient error, or blocks on a hook's pipe.
 */
#include "node/node.h"
#include "node/node_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "callback/callback.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "callback/callback_sender.h"
#include "coord/coord_open.h"
#include "core/dueindex.h"
#include "core/version.h"
#include "spool/sdnotify.h"
#include "spool/groupsync.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "core/nameset.h"
#include "records/records.h"
#include "node/resrepair.h"
#include "node/router.h"
#include "node/scheduler.h"
#include "spool/spool.h"
#include "coord/wakeup.h"

void
node_record(struct node *n, enum records_kind k, const char *id,
    const struct task *t, const struct task_attempt *a, const char *env,
    size_t len)
{
	if (n->rec != NULL &&
	    records_append(n->rec, k, id, t, a, env, len) != 0) {
		log_warn("%s: cannot write its record to outbox/records/%s",
		    id, k == RECORDS_RESULT ? " (the reconcile pass writes "
		    "the row from results/)" : "");
		(void)node_spool_full(n, errno, "outbox/records/");
	}
}

int
node_name_to_id(const char *name, char *out)
{
	size_t n = strlen(name);

	if (n <= 5 || strcmp(name + n - 5, ".json") != 0 ||
	    n - 5 > TASK_ID_MAX)
		return -1;
	memcpy(out, name, n - 5);
	out[n - 5] = '\0';
	return spool_id_ok(out) ? 0 : -1;
}

int64_t
node_mtime_ms(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec /
	    1000000;
}

void
node_mark_dirty(struct node *n, enum spool_dir d)
{
	n->dirty[d] = 1;
}

void
node_flush_dirty(struct node *n)
{
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (n->dirty[d]) {
			if (spool_sync_dir(&n->sp, n->sp.dir[d]) != 0)
				log_warn("fsync %s/", spool_dir_name(
				    (enum spool_dir)d));
			n->dirty[d] = 0;
		}
	if (n->dirty_self) {
		if (spool_sync_dir(&n->sp, n->sp.self) != 0)
			log_warn("fsync active/%s/", n->sp.node);
		n->dirty_self = 0;
	}
}

void
node_quarantine(struct node *n, int dirfd, const char *name, const char *reason)
{
	char safe[SPOOL_NAME_MAX * 4 + 1];

	log_safe(safe, sizeof(safe), name);
	if (spool_quarantine(&n->sp, dirfd, name, reason) != 0) {
		if (errno != ENOENT)
			log_warn("cannot move %s to corrupt/ (%s)", safe,
			    reason);
		return;
	}
	log_warnx("rejected %s → corrupt/: %s", safe, reason);
	metrics_corrupt();
}

void
node_write_metrics(struct node *n, int stopped)
{
	struct metrics_node self = { n->nslots, n->nrunning, n->leader,
		stopped, n->bp_err, n->cfg->metrics_interval_ms, n->drained };

	if (n->cfg->metrics_interval_ms > 0 && metrics_write(&n->sp,
	    tstime_now_ms(), &self) != 0)
		log_warn("metrics/%s.prom", n->sp.node);
}

/*
 * node_id was not configured: take <host>-<yyyymmdd>-<nn>, the host name
 * (as config_finish chose it), the start date (UTC) and the first
 * sequence number 01..99 whose state/node.<id>.lock is free (held from
 * now on), so that two daemons of one host get distinct ids and logs
 * tell which day's incarnation ran what.  Returns 0 or a sysexits code.
 */
void
node_ready(struct node *n)
{
	if (sdnotify("READY=1\nSTATUS=node %s: %ld slot(s), %s coordination"
	    "\nMAINPID=%d", n->sp.node, n->nslots, coord_kind(n->coord),
	    (int)getpid()) < 0)
		log_warn("NOTIFY_SOCKET=%s: READY=1 not sent",
		    getenv("NOTIFY_SOCKET"));
}

/*
 * n->spool_id: the spool's identity for its hooks' TASKSPOOL_SPOOL_ID
 * (node_impl.h), the 32 hex digits of state/spool-id, made once by the
 * first daemon (random, published with O_EXCL semantics: two daemons
 * starting at once read the one that won).  A copy or a restore of the
 * spool keeps it, unlike the directory's inode.  A file that is not 32
 * lowercase hex digits is refused, logged, and the directory's
 * <st_dev>:<st_ino> used instead.
 */
static void
spool_identity(struct node *n)
{
	for (int i = 0; i < 2; i++) {
		size_t len = 0;
		char *data = spool_read_file(n->sp.dir[SPOOL_STATE],
		    "spool-id", 64, &len);
		unsigned char r[16];
		char hex[33];

		if (data != NULL) {
			if (len >= 32 && strspn(data, "0123456789abcdef") ==
			    32 && (len == 32 || (len == 33 && data[32] ==
			    '\n'))) {
				memcpy(n->spool_id, data, 32);
				n->spool_id[32] = '\0';
				free(data);
				return;
			}
			free(data);
			log_warnx("state/spool-id: not 32 hex digits; the "
			    "spool directory's inode names the spool to its "
			    "hooks instead");
			break;
		}
		if (errno != ENOENT || getrandom(r, sizeof(r), 0) !=
		    (ssize_t)sizeof(r))
			break;
		for (int k = 0; k < 16; k++)
			snprintf(hex + 2 * k, 3, "%02x", r[k]);
		hex[32] = '\n';
		if (spool_publish(&n->sp, n->sp.dir[SPOOL_STATE], "spool-id",
		    hex, 33, -1, SPOOL_PUBLISH_EXCL) != 0 && errno != EEXIST)
			break;
	}
	{
		struct stat rs;

		if (fstat(n->sp.root, &rs) == 0)
			snprintf(n->spool_id, sizeof(n->spool_id), "%llx:%llx",
			    (unsigned long long)rs.st_dev,
			    (unsigned long long)rs.st_ino);
	}
}

static int
auto_node_id(struct node *n)
{
	struct spool sp;
	char why[512], id[128], lname[160];
	time_t now = (time_t)(tstime_now_ms() / 1000);
	struct tm tm;

	if (spool_open(&sp, n->cfg->spool, NULL, 0, why, sizeof(why)) != 0) {
		log_warnx("%s", why);
		return EX_CONFIG;
	}
	gmtime_r(&now, &tm);
	for (int seq = 1; seq <= 99; seq++) {
		int fd;

		snprintf(id, sizeof(id), "%.52s-%04d%02d%02d-%02d",
		    n->cfg->node_id, tm.tm_year + 1900, tm.tm_mon + 1,
		    tm.tm_mday, seq);
		if (strlen(id) > CONFIG_NODE_MAX)
			break;		/* cannot happen: 52 + 12 */
		snprintf(lname, sizeof(lname), "node.%s.lock", id);
		fd = openat(sp.dir[SPOOL_STATE], lname, O_RDWR | O_CREAT |
		    O_CLOEXEC | O_NOFOLLOW, 0640);
		if (fd < 0)
			break;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			n->nodelock = fd;
			memcpy(n->cfg->node_id, id, strlen(id) + 1); /* <= 64 */
			spool_close(&sp);
			return 0;
		}
		close(fd);
	}
	log_warnx("no free node id %.52s-<date>-01..99 (state/node.*.lock); "
	    "set node_id", n->cfg->node_id);
	spool_close(&sp);
	return EX_TEMPFAIL;
}

/*
 * The loop's event sources: the signals taken by signalfd (and the
 * child subreaper set), epoll, inotify with its watches (set before the
 * first scan, so nothing slips between them), the group commit's
 * descriptor.  Returns 0 or a sysexits code (logged).
 */
static int
setup_events(struct node *n)
{
	sigset_t mask;
	struct epoll_event ev;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		log_warn("PR_SET_CHILD_SUBREAPER (processes that leave a "
		    "hook's process group will not be found)");
	n->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	n->ep = epoll_create1(EPOLL_CLOEXEC);
	n->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (n->sigfd < 0 || n->ep < 0 || n->ino < 0) {
		log_warn("signalfd/epoll/inotify");
		return EX_OSERR;
	}
	/* Watch before the first scan, so nothing slips between them. */
	{
		char p[CONFIG_PATH_MAX + 96];

		snprintf(p, sizeof(p), "%s/incoming", n->cfg->spool);
		n->wd_incoming = inotify_add_watch(n->ino, p, IN_MOVED_TO |
		    IN_CLOSE_WRITE | IN_CREATE | IN_ONLYDIR);
		snprintf(p, sizeof(p), "%s/delayed", n->cfg->spool);
		n->wd_delayed = inotify_add_watch(n->ino, p, IN_MOVED_TO |
		    IN_CREATE | IN_CLOSE_WRITE | IN_ONLYDIR);
		snprintf(p, sizeof(p), "%s/jobs", n->cfg->spool);
		n->wd_jobs = inotify_add_watch(n->ino, p, IN_MOVED_TO |
		    IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE | IN_ONLYDIR);
		snprintf(p, sizeof(p), "%s/queue/%s", n->cfg->spool,
		    n->sp.node);
		n->wd_queue = inotify_add_watch(n->ino, p, IN_MOVED_TO |
		    IN_CLOSE_WRITE | IN_ONLYDIR);
		snprintf(p, sizeof(p), "%s/state/cancel", n->cfg->spool);
		n->wd_cancel = inotify_add_watch(n->ino, p, IN_MOVED_TO |
		    IN_CREATE | IN_ONLYDIR);
		/* Dependencies (node_depend.c): blocked/ and where a
		 * parent ends. */
		snprintf(p, sizeof(p), "%s/blocked", n->cfg->spool);
		n->wd_blocked = inotify_add_watch(n->ino, p, IN_MOVED_TO |
		    IN_CLOSE_WRITE | IN_ONLYDIR);
		for (int i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s/%s", n->cfg->spool,
			    spool_dir_name(i == 0 ? SPOOL_DONE : i == 1 ?
			    SPOOL_FAILED : SPOOL_CANCELLED));
			n->wd_ended[i] = inotify_add_watch(n->ino, p,
			    IN_MOVED_TO | IN_ONLYDIR);
		}
		if (n->wd_incoming < 0 || n->wd_delayed < 0)
			log_warn("inotify watch (falling back to rescans "
			    "every %ld ms)", n->cfg->scan_interval_ms);
	}
	/* inotify sees only this kernel's changes: on NFS the rescans are
	 * what finds other hosts' files (B58). */
	{
		struct statfs sf;

		if (fstatfs(n->sp.root, &sf) == 0 && sf.f_type == 0x6969)
			log_warnx("spool %s is on NFS: files written by other "
			    "hosts are found by the rescan every %ld ms, not "
			    "by inotify", n->cfg->spool,
			    n->cfg->scan_interval_ms);
	}
	ev.events = EPOLLIN;
	ev.data.u64 = EV_SIGNAL;
	epoll_ctl(n->ep, EPOLL_CTL_ADD, n->sigfd, &ev);
	ev.data.u64 = EV_INOTIFY;
	if (n->cfg->inotify)
		epoll_ctl(n->ep, EPOLL_CTL_ADD, n->ino, &ev);
	else
		log_warnx("inotify = 0: new files are found by rescans and "
		    "wake-ups only");
	if ((n->gs = groupsync_new(&n->sp)) == NULL) {
		log_warn("group commit");
		return EX_OSERR;
	}
	ev.data.u64 = EV_GROUPSYNC;
	epoll_ctl(n->ep, EPOLL_CTL_ADD, groupsync_fd(n->gs), &ev);
	return 0;
}

static int
setup(struct node *n)
{
	char why[512], lname[128];
	int rc;

	if (n->cfg->node_id_auto && (rc = auto_node_id(n)) != 0)
		return rc;
	log_set_node(n->cfg->node_id);	/* the id this incarnation uses */
	if (spool_open(&n->sp, n->cfg->spool, n->cfg->node_id,
	    (int)n->cfg->fsync, why, sizeof(why)) != 0) {
		log_warnx("%s", why);
		return EX_CONFIG;
	}
	spool_identity(n);
	n->hooksfd = open(n->cfg->hooks_dir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	if (n->hooksfd < 0) {
		log_warn("hooks_dir %s", n->cfg->hooks_dir);
		return EX_CONFIG;
	}
	/* One daemon per node id. */
	snprintf(lname, sizeof(lname), "node.%.64s.lock", n->sp.node);
	if (n->nodelock < 0)		/* (auto_node_id holds it already) */
		n->nodelock = openat(n->sp.dir[SPOOL_STATE], lname, O_RDWR |
		    O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (n->nodelock < 0 || flock(n->nodelock, LOCK_EX | LOCK_NB) != 0) {
		log_warnx("node id \"%s\" is already in use by a running "
		    "daemon on this spool (state/%s is locked); give each "
		    "daemon its own node_id", n->sp.node, lname);
		return EX_TEMPFAIL;
	}
	n->coord = coord_open(n->cfg, n->sp.node, &n->sp, why, sizeof(why));
	if (n->coord == NULL) {
		log_warnx("%s", why);
		return EX_CONFIG;
	}
	coord_on_reestablished(n->coord, node_lease_reestablished, n);
	n->qself = spool_node_dir(&n->sp, SPOOL_QUEUE, n->sp.node);
	n->router = router_new(&n->sp, n->coord, n->cfg->heartbeat_ms);
	n->repair = resrepair_new(&n->sp);
	if (n->qself < 0 || n->router == NULL || n->repair == NULL) {
		log_warn("queue/%s/", n->sp.node);
		return EX_CANTCREAT;
	}
	n->slots = calloc((size_t)n->cfg->slots, sizeof(*n->slots));
	if (n->slots == NULL)
		return EX_OSERR;
	n->nslots = n->cfg->slots;
	n->work = calloc((size_t)n->nslots, sizeof(*n->work));
	if (n->work == NULL)
		return EX_OSERR;
	for (long i = 0; i < n->nslots; i++)
		if (node_work_prepare(n, i) != 0) {
			log_warn("workdirs/%s.%ld", n->sp.node, i);
			return EX_CANTCREAT;
		}
	if (nameset_init(&n->cand) != 0 || nameset_init(&n->qcand) != 0 ||
	    nameset_init(&n->waiting) != 0 ||
	    nameset_init(&n->waitnames) != 0 ||
	    nameset_init(&n->ratewait) != 0 ||
	    nameset_init(&n->ratepark) != 0 ||
	    nameset_init(&n->hookcache) != 0 ||
	    nameset_init(&n->nohook) != 0 ||
	    nameset_init(&n->cancels) != 0 ||
	    nameset_init(&n->cancel_wait) != 0)
		return EX_OSERR;
	/* Claims shared fairly between sources (README.md, "Fair
	 * sharing"): retries, job fires, each API app, the rest. */
	fair_init(&n->fair_cand);
	fair_init(&n->fair_q);
	n->cand.fair = &n->fair_cand;
	n->qcand.fair = &n->fair_q;
	n->cand.levels = n->qcand.levels = 1;	/* the claim order */
	(void)node_hooks_rescan(n, 0);	/* before the first heartbeat */

	if ((rc = setup_events(n)) != 0)
		return rc;
	n->wake = wakeup_new(n->coord);
	return 0;
}

/*
 * After setup: the metrics, the callback sender and the records writer
 * start, active/<self>/ is recovered (everything there is from a
 * previous life), and the first leader, scan and heartbeat passes run.
 * Returns 0 or a sysexits code (logged).
 */
static int
start(struct node *n)
{
	struct config *cfg = n->cfg;

	if (metrics_init(n->sp.node) != 0)
		log_warn("metrics");
	{
		char why[512];

		if ((n->cbs = callback_sender_start(cfg, &n->sp, why,
		    sizeof(why))) == NULL) {
			log_warnx("callback sender: %s", why);
			return EX_CONFIG;
		}
	}
	log_info("node %s started: taskspool %s, spool %s, hooks %s, %ld "
	    "slot(s), pid %d, %s coordination", n->sp.node, TASKSPOOL_VERSION,
	    cfg->spool, cfg->hooks_dir, n->nslots, (int)getpid(),
	    coord_kind(n->coord));
	{
		char why[512] = "";

		if ((n->rec = records_new(cfg, &n->sp, why, sizeof(why))) ==
		    NULL || records_start(n->rec) != 0) {
			log_warnx("records: cannot start: %s", why[0] ? why :
			    strerror(errno));
			return EX_OSERR;
		}
	}
	/* Our own active/ first: everything there is from a previous life. */
	node_recover_dir(n, n->sp.self, n->sp.node);
	node_wake_connect(n);
	node_leader_tick(n);
	node_scan_incoming(n);
	node_drain_poll(n, 1);	/* a node drained while offline starts so */
	node_heartbeat(n);
	n->next_scan = tstime_mono_ms() + cfg->scan_interval_ms;
	n->next_reap = tstime_mono_ms() + cfg->reap_interval_ms;
	n->next_hb = tstime_mono_ms() + cfg->heartbeat_ms;
	n->next_metrics = tstime_mono_ms();
	n->next_lease = INT64_MAX;
	return 0;
}

/*
 * After the loop: the batch in flight finishes, the directory fsyncs it
 * did not report and those still to do are made, and everything setup
 * and start made is released.
 */
static void
stop(struct node *n)
{
	/* A batch in flight finishes; the directory fsyncs it did not
	 * report, and those still to do, are made here. */
	groupsync_free(n->gs);
	for (size_t i = 0; i < n->ngdirs; i++)
		n->dirty[n->gdir[i]] = 1;
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (n->gdirty[d])
			n->dirty[d] = 1;
	free(n->gitems);
	node_flush_dirty(n);
	n->leader = 0;		/* released at exit */
	node_deps_stop(n);
	node_write_metrics(n, 1);
	metrics_fini();
	log_flush();		/* the "(repeated ...)" lines still due */
	log_info("node %s stopped: %llu claimed, %llu attempts concluded",
	    n->sp.node, n->claimed, n->finished);
	/* Leases still held (commits not written) end; the leader lock and
	 * the heartbeat go. */
	wakeup_free(n->wake);
	coord_close(n->coord);
	nameset_fini(&n->cand);
	nameset_fini(&n->qcand);
	nameset_fini(&n->waiting);
	nameset_fini(&n->waitnames);
	nameset_fini(&n->ratewait);
	nameset_fini(&n->ratepark);
	router_free(n->router);
	resrepair_free(n->repair);
	if (n->qself >= 0)
		close(n->qself);
	due_index_free(n->delayed);
	scheduler_free(n->sched);
	nameset_fini(&n->hookcache);
	nameset_fini(&n->nohook);
	nameset_fini(&n->cancels);
	nameset_fini(&n->cancel_wait);
	for (long i = 0; i < n->nslots; i++) {
		if (n->work[i].fd > 0) {
			node_work_reset(&n->work[i]);
			close(n->work[i].fd);
		}
		(void)unlinkat(n->sp.work, n->work[i].name,
		    AT_REMOVEDIR);
	}
	free(n->work);
	free(n->slots);
	callback_sender_stop(n->cbs);
	records_free(n->rec);
	spool_close(&n->sp);
	close(n->ep);
	close(n->sigfd);
	close(n->ino);
	close(n->hooksfd);
	close(n->nodelock);
}

int
node_run(struct config *cfg, const char *config_path,
    const char *const *overrides, int noverrides)
{
	struct node node, *n = &node;
	int rc;

	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->config_path = config_path;
	n->overrides = overrides;
	n->noverrides = noverrides;
	n->sigfd = n->ep = n->ino = n->hooksfd = n->nodelock = n->qself = -1;
	n->wake_fd = -1;
	if ((rc = setup(n)) != 0 || (rc = start(n)) != 0)
		return rc;
	n->watchdog_ms = sdnotify_watchdog_ms();
	n->next_watchdog = tstime_mono_ms();
	node_ready(n);
	node_loop(n);
	stop(n);
	return 0;
}
