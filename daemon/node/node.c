/*
 * node — the node daemon; see node.h.
 *
 * Coordination (leases, leader lock, heartbeats) goes through coord.h:
 * flock and files in embedded mode, Redis in cluster mode; routed tasks
 * go through router.h (the leader's dispatcher, queue/<node>/).
 *
 * Owns: the claim loop over incoming/, the slots (running hooks), attempt
 * conclusion (retry with backoff into delayed/, or the terminal move with
 * its result), recovery of active/<self>/ at start, and — while it holds
 * state/leader.lock — promotion of due delayed/ tasks and the reaper of
 * other nodes' orphaned active/ files.
 *
 * Invariants:
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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "core/backoff.h"
#include "callback/callback.h"
#include "callback/callback_sender.h"
#include "core/buf.h"
#include "spool/readfd.h"
#include "coord/claimmark.h"
#include "coord/coord.h"
#include "coord/coord_open.h"
#include "core/dispatch.h"
#include "core/dueindex.h"
#include "spool/groupsync.h"
#include "spool/hook.h"
#include "spool/hooklimit.h"
#include "spool/hookset.h"
#include "node/resrepair.h"
#include "coord/index.h"
#include "spool/log.h"
#include "coord/maxconc.h"
#include "spool/metrics.h"
#include "core/nameset.h"
#include "records/records.h"
#include "core/result.h"
#include "node/router.h"
#include "node/scheduler.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "coord/wakeup.h"

#define EV_SIGNAL	((uint64_t)-1)
#define EV_INOTIFY	((uint64_t)-2)
#define EV_WAKEUP	((uint64_t)-3)
#define EV_GROUPSYNC	((uint64_t)-4)
#define CAND_ANNOUNCED	1	/* writer closed or renamed it in */
#define REPAIR_SCANS	720	/* results/ repair pass: every 720 scan
				 * intervals (an hour by default) */
#define ENV_MAX		24
#define ENV_BUF		8192
/*
 * Claimed-but-unfinished tasks whose results wait for the writer (struct
 * commit): each holds its lease, the claimed file's descriptor.  At this
 * many, nothing new is claimed (tasks, cancels of pending tasks, orphans)
 * until the writer catches up; hooks that end meanwhile still conclude,
 * so at most COMMITS_MAX + slots commits exist.  This bounds the
 * daemon's descriptors (README.md, "Descriptors").
 */
#define COMMITS_MAX	32
#define PROBE_BYTES	65536	/* back-pressure probe write (a result) */

struct stream {
	int fd;			/* pipe read end, -1 when closed */
	int logfd;		/* logs/<id>/<attempt>.<ext>, opened lazily */
	long long written;	/* bytes written to logfd */
	long long dropped;	/* bytes over log_cap_bytes */
	int lost_err;		/* errno of the first failed log write */
	char *tail;		/* ring buffer of tail_cap bytes */
	size_t tail_cap;	/* fixed at start: SIGHUP may change config */
	size_t tail_len, tail_pos;
};

struct slot {
	int used;
	pid_t pid;
	int lockfd;			/* the lease: flock on the task */
	int fenced;			/* lease lost: killed, no outcome */
	char name[SPOOL_NAME_MAX];	/* <id>.json in active/<self>/ */
	struct task t;
	int attempt;
	int64_t start_ms, start_mono, deadline_mono, kill_mono;
	int timed_out, cancelled;
	struct stream out, err;
	int64_t cpu_ms;			/* CPU used (wait4) */
};

struct workdir {
	int fd;				/* tmp/work.<node>.<slot> */
	struct timespec mtime;		/* as left clean */
	char name[96];
};

/* A terminal transition waiting for its result to be written. */
struct commit {
	struct commit *next;
	int srcfd;			/* own dup of the source directory,
					 * -1 for active/<self>/ (from_self) */
	int from_self;			/* source is active/<self>/ */
	int lockfd;			/* held until the move is done */
	char name[SPOOL_NAME_MAX];
	char id[TASK_ID_MAX + 1];
	enum spool_dir dest;
	struct buf result;
	int64_t next_try_mono;
	int warned;
	int written;			/* results/<id>.json is durable */
	int renamed;			/* ... in place, results/ not fsynced */
	int syncing;			/* gi is in the group commit in flight */
	struct groupsync_item gi;	/* result → results/<id>.json */
	int warned_move;		/* a failed move was logged */
	int cancel_marker;		/* state/cancel/<id> to remove */
	struct buf cb;			/* callback delivery to publish first */
	int attempt;			/* the attempt concluded */
	char code[TASK_CODE_MAX + 1];	/* for the index (index.h) */
	long nattempts;			/* attempts with this one */
};

struct node {
	struct config *cfg;
	const char *config_path;
	const char *const *overrides;	/* command-line key=value */
	int noverrides;
	struct spool sp;
	int hooksfd;
	int ep, sigfd, ino;
	int wd_incoming, wd_delayed, wd_cancel, wd_jobs, wd_queue;
	int qself;			/* queue/<self>/ */
	struct nameset qcand;		/* names waiting in queue/<self>/ */
	struct router *router;		/* leader: the dispatcher */
	int route_dirty;		/* incoming/ changed: route pass due */
	int64_t next_route;		/* mono ms: no route pass before */
	struct sched *sched;		/* leader: recurring jobs */
	int jobs_dirty;			/* jobs/ changed: rescan */
	int nodelock, leader;
	struct coord *coord;		/* leases, leader lock, heartbeats */
	struct wakeup *wake;		/* redis: wake-ups from other hosts */
	int wake_fd;			/* its socket in epoll, -1 = none */
	struct slot *slots;
	struct workdir *work;		/* one per slot */
	long nslots, nrunning;
	struct nameset cand;		/* names waiting in incoming/ */
	struct nameset waiting;		/* over maxConcurrent (maxconc.h) */
	int64_t next_wait;		/* mono ms: retry waiting/ names */
	struct due_index *delayed;	/* leader: delayed/ names by due */
	struct nameset hookcache;	/* codes with a hook, key = checked */
	char hooks[HOOKSET_MAX];	/* advertised in the heartbeat */
	struct nameset nohook;		/* incoming/ names without our hook */
	struct resrepair *repair;	/* leader: results/ repair pass */
	int64_t next_repair;		/* mono ms: its next step */
	struct nameset cancels;		/* ids with a cancel marker seen */
	struct commit *commits;
	long ncommits;			/* in commits (COMMITS_MAX) */
	struct nameset cancel_wait;	/* cancels deferred: claims held */
	int recover_self;		/* active/<self>/ not all recovered */
	int bp_err;			/* back-pressure: errno of a failed
					 * spool write (ENOSPC...), 0 none */
	int64_t bp_since, bp_probe;	/* mono ms: began; next probe */
	int64_t fd_warn;		/* mono ms: last out-of-fds warning */
	struct groupsync *gs;		/* group commit of results (thread) */
	struct groupsync_item **gitems;	/* the batch being built */
	size_t gcap;
	enum spool_dir gdir[GROUPSYNC_DIRS_MAX];	/* ... its directories */
	size_t ngdirs;
	int gdirty[SPOOL_NDIRS];	/* terminal dirs to fsync in a batch */
	struct callback_sender *cbs;	/* callback sender thread */
	struct records *rec;		/* history records (records.h) */
	int dirty[SPOOL_NDIRS], dirty_self;
	int draining, quitting, reload;
	int64_t next_scan, next_reap, next_hb, quit_deadline;
	int64_t next_metrics;		/* mono ms: metrics/<node>.prom */
	int64_t claim_pause;		/* mono ms: no claims before this */
	int64_t next_lease;		/* mono ms: next lease renewal */
	int coord_down;			/* backend unreachable was logged */
	unsigned long long claimed, finished, scans;
	unsigned long hbs;		/* heartbeats sent */
};

/* --- resources: descriptors and back-pressure --- */

/*
 * A write into the spool failed with e (what: the file or directory, for
 * the log).  ENOSPC, EDQUOT and EROFS mean the spool cannot take writes:
 * back-pressure starts — no claims (which would run hooks whose results
 * cannot be written) until a probe write succeeds (bp_check).  Returns 1
 * when e was one of those, else 0 (the caller's own handling applies).
 */
static int
spool_full(struct node *n, int e, const char *what)
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

/*
 * While in back-pressure, once a second: publish PROBE_BYTES into state/
 * by the writer protocol (tmp + fsync + rename) and remove it.  When that
 * works, claims resume.
 */
static void
bp_check(struct node *n)
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

/*
 * e is EMFILE or ENFILE (what: the failed call): no claims for a second
 * while what is held finishes and gives its descriptors back; one
 * warning per 10 s.  Returns 1 for those errors, else 0.
 */
static int
fd_short(struct node *n, int e, const char *what)
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

/*
 * Whether new claims wait: of pending tasks, of pending tasks to cancel,
 * of orphans to recover.  Each would hold a descriptor until its result
 * is written.
 */
static int
claims_held(const struct node *n)
{
	return n->ncommits >= COMMITS_MAX || n->bp_err != 0 ||
	    tstime_mono_ms() < n->claim_pause;
}

/* Append a history record (records.h); a failure is logged, never fatal. */
static void
record(struct node *n, enum records_kind k, const char *id,
    const struct task *t, const struct task_attempt *a, const char *env,
    size_t len)
{
	if (n->rec != NULL &&
	    records_append(n->rec, k, id, t, a, env, len) != 0) {
		log_warn("%s: cannot write its record to outbox/records/%s",
		    id, k == RECORDS_RESULT ? " (the reconcile pass writes "
		    "the row from results/)" : "");
		(void)spool_full(n, errno, "outbox/records/");
	}
}

static void heartbeat(struct node *);
static int hook_ok(struct node *, const char *);
static int hooks_rescan(struct node *, int);
static void node_conclude(struct node *, struct task *, int srcfd,
    const char *name, int lockfd, struct task_attempt *, int permanent,
    const char *hook_result, size_t hrlen, const struct slot *);

static uint32_t
rand32(void)
{
	uint32_t r;

	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (uint32_t)tstime_mono_ms() * 2654435761u;
	return r;
}

/* --- names --- */

/* "<id>.json" → id in out; 0, or -1 when name is not such a file name. */
static int
name_to_id(const char *name, char *out)
{
	size_t n = strlen(name);

	if (n <= 5 || strcmp(name + n - 5, ".json") != 0 ||
	    n - 5 > TASK_ID_MAX)
		return -1;
	memcpy(out, name, n - 5);
	out[n - 5] = '\0';
	return spool_id_ok(out) ? 0 : -1;
}

/*
 * A requestId for a file dropped without one: time-ordered by the file's
 * mtime, and a function of (name, inode, mtime, size) so that a crash and
 * retry of the claim gives the same id (no duplicate).
 */
static void
generated_id(char *out, size_t len, const char *name, const struct stat *st)
{
	uint64_t h = 1469598103934665603ULL;
	uint64_t parts[4] = { (uint64_t)st->st_ino, (uint64_t)st->st_mtim.tv_sec,
		(uint64_t)st->st_mtim.tv_nsec, (uint64_t)st->st_size };
	struct tm tm;
	time_t t = st->st_mtim.tv_sec;

	for (const char *p = name; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((parts[i] >> (8 * b)) & 0xff)) *
			    1099511628211ULL;
	gmtime_r(&t, &tm);
	snprintf(out, len, "req_%04d%02d%02dT%02d%02d%02d%03ldZ_%012llx",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, st->st_mtim.tv_nsec / 1000000,
	    (unsigned long long)(h & 0xffffffffffffULL));
}

/* --- small helpers --- */

static int64_t
mtime_ms(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec /
	    1000000;
}

static int
effective_retries(const struct node *n, const struct task *t)
{
	return t->max_retries >= 0 ? t->max_retries : (int)n->cfg->max_retries;
}

static void
mark_dirty(struct node *n, enum spool_dir d)
{
	n->dirty[d] = 1;
}

static void
flush_dirty(struct node *n)
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

static void
quarantine(struct node *n, int dirfd, const char *name, const char *reason)
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

/* --- leases (coord) --- */

/*
 * Lease request id for attempt on fd, whose flock is held.  Returns 0, or
 * -1: another node's lease (a copy runs or is being reaped there), or the
 * coordination backend is unreachable (n->coord_down set, logged once).
 */
static int
lease_take(struct node *n, int fd, const char *id, int attempt)
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

/*
 * What a fenced attempt (its lease lost) ended with goes to
 * logs/<id>/<attempt>.stale, never into results/: the reaper concludes
 * that attempt as LOST.  Best effort (a missing record loses nothing).
 */
static void
record_stale(struct node *n, const char *id, int attempt, long long fence,
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

/*
 * coord_tick's report: the lease on fd is lost or could not be renewed
 * in time.  Self-fencing: the hook holding it is killed at once (its
 * whole process group) and will not be concluded; a queued commit is
 * dropped by commits_flush.
 */
static void
lease_lost(void *arg, int fd)
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

/*
 * coord_tick's notice: Redis had lost the lease of id (FLUSHALL, a
 * restart or failover without the data) and the renewal set it again,
 * with a greater fencing token; the hook runs on (issue 11 item 2).
 */
static void
lease_reestablished(void *arg, const char *id, long long old,
    long long fence)
{
	(void)arg;
	log_warnx("%s: the lease was gone from Redis (its data lost); set "
	    "again with fencing token %lld (was %lld), the hook runs on", id,
	    fence, old);
}

/* --- candidates from incoming/ --- */

static void
cand_add(struct node *n, const char *name, int announced)
{
	struct nameset_node *c;

	if (name[0] == '.' || name[0] == '\0')
		return;		/* editor/NFS temporaries, never tasks */
	if (nameset_find(&n->nohook, name) != NULL)
		return;		/* for another node: hooks_rescan() */
	c = nameset_add(&n->cand, name, NULL);
	if (c != NULL && announced)
		c->flags |= CAND_ANNOUNCED;
}

/* Again later: name in dfd (incoming/ or queue/<self>/). */
static void
cand_again(struct node *n, int dfd, const char *name, int announced)
{
	struct nameset_node *c;

	if (dfd != n->qself) {
		cand_add(n, name, announced);
		return;
	}
	c = nameset_add(&n->qcand, name, NULL);
	if (c != NULL && announced)
		c->flags |= CAND_ANNOUNCED;
}

static void
scan_incoming(struct node *n)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(n->sp.dir[SPOOL_INCOMING])) == NULL) {
		log_warn("scan incoming/");
		return;
	}
	while ((de = readdir(dp)) != NULL)
		cand_add(n, de->d_name, 0);
	closedir(dp);
	/* And what the dispatcher put in our queue/<self>/. */
	if (n->qself >= 0 && (dp = spool_opendir(n->qself)) != NULL) {
		while ((de = readdir(dp)) != NULL)
			if (de->d_name[0] != '.')
				cand_again(n, n->qself, de->d_name, 0);
		closedir(dp);
	}
	n->route_dirty = 1;
}

/* --- the index (index.h) --- */

/* Index that id is now in d (state NULL: the directory's); t NULL keeps
 * the indexed code and attempts.  Cluster mode only; best effort. */
static void
index_note(struct node *n, const char *id, enum spool_dir d,
    const char *state, const char *node, const struct task *t, int64_t nb)
{
	if (!coord_leases_expire(n->coord))
		return;
	(void)index_put(n->coord, id, d, state != NULL ? state :
	    spool_state_name(d), node, t != NULL ? t->task_code : NULL,
	    t != NULL ? (long)t->nattempts : -1, nb, d >= SPOOL_DONE &&
	    d <= SPOOL_CANCELLED ? n->cfg->index_ttl_sec : 0);
}

/* --- wake-ups across hosts (wakeup.h) --- */

/* Tell the other daemons that dir/name (name NULL: dir) has work. */
static void
wake_others(struct node *n, const char *dir, const char *name)
{
	char path[SPOOL_NAME_MAX + CONFIG_NODE_MAX + 16], why[256];

	if (n->wake == NULL)
		return;
	snprintf(path, sizeof(path), "%s%s%s", dir, name != NULL ? "/" : "",
	    name != NULL ? name : "");
	if (wakeup_publish(n->coord, path, why, sizeof(why)) != 0)
		log_debug("wake-up %s not sent: %s", path, why);
}

static void delayed_note(struct node *, const char *);

/* A wake-up message (wakeup.h): note the file as inotify would. */
static void
on_wake(void *arg, const char *path)
{
	struct node *n = arg;
	const char *name = strrchr(path, '/');
	size_t ql = strlen(n->sp.node);

	if (strncmp(path, "incoming", 8) == 0) {
		if (name != NULL && path[8] == '/')
			cand_add(n, name + 1, 1);
		else
			scan_incoming(n);
		n->route_dirty = 1;
	} else if (strncmp(path, "queue/", 6) == 0 && strncmp(path + 6,
	    n->sp.node, ql) == 0 && path[6 + ql] == '/' && n->qself >= 0)
		cand_again(n, n->qself, path + 7 + ql, 1);
	else if (strncmp(path, "delayed/", 8) == 0 && n->leader &&
	    name != NULL)
		delayed_note(n, name + 1);
}

/* (Re)subscribe when not connected and put the socket in epoll. */
static void
wake_connect(struct node *n)
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
	scan_incoming(n);	/* what was published while unsubscribed */
}

/* --- delayed/ (leader) --- */

/*
 * The leader indexes every delayed/ file by its due time (the file's
 * mtime, set by whoever wrote it) on a timing wheel, fed by inotify and by
 * a scan when it becomes leader; promotion happens at the due instant.
 */
static void
delayed_note(struct node *n, const char *name)
{
	struct stat st;

	if (name[0] == '.' || n->delayed == NULL)
		return;
	if (fstatat(n->sp.dir[SPOOL_DELAYED], name, &st,
	    AT_SYMLINK_NOFOLLOW) != 0) {
		(void)due_index_remove(n->delayed, name);
		return;
	}
	if (due_index_set(n->delayed, name, (uint64_t)(mtime_ms(&st) > 0 ?
	    mtime_ms(&st) : 0)) != 0)
		log_warn("delayed/%s: not indexed (next rescan retries)", name);
}

static void
scan_delayed(struct node *n)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(n->sp.dir[SPOOL_DELAYED])) == NULL)
		return;
	while ((de = readdir(dp)) != NULL)
		delayed_note(n, de->d_name);
	closedir(dp);
}

static void
promote_one(const char *name, uint64_t due, void *arg)
{
	struct node *n = arg;
	struct stat st;
	int64_t now = tstime_now_ms();

	/* Re-read the due time: the file may have been replaced by a later
	 * retry since it was indexed. */
	if (fstatat(n->sp.dir[SPOOL_DELAYED], name, &st,
	    AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if (mtime_ms(&st) > now) {
		(void)due_index_set(n->delayed, name, (uint64_t)mtime_ms(&st));
		return;
	}
	if (spool_move_excl(n->sp.dir[SPOOL_DELAYED], name,
	    n->sp.dir[SPOOL_INCOMING], name) == 0) {
		mark_dirty(n, SPOOL_INCOMING);
		mark_dirty(n, SPOOL_DELAYED);
		cand_add(n, name, 1);
		wake_others(n, "incoming", name);
		{
			char id[TASK_ID_MAX + 1];

			if (name_to_id(name, id) == 0)
				index_note(n, id, SPOOL_INCOMING, NULL, NULL,
				    NULL, -1);
		}
		if (now - (int64_t)due > 500)
			log_warnx("delayed/%s promoted %lld ms late", name,
			    (long long)(now - (int64_t)due));
		else
			log_debug("promoted delayed/%s", name);
	} else if (errno == EEXIST) {
		/* A second copy of the id waits in incoming/: its claimant
		 * sends it to corrupt/ (this one is the task); until then
		 * this one waits, looked at again each second. */
		log_debug("delayed/%s: incoming/ holds a copy; promoted later",
		    name);
		(void)due_index_set(n->delayed, name, (uint64_t)now + 1000);
	} else if (errno != ENOENT)
		log_warn("promote delayed/%s", name);
}

/* Move every due delayed/ file to incoming/. */
static void
promote_delayed(struct node *n)
{
	if (n->delayed != NULL)
		due_index_expire(n->delayed, (uint64_t)tstime_now_ms(),
		    promote_one, n);
}

/* --- the hook runner --- */

static void
stream_init(struct stream *s, size_t tail)
{
	s->fd = s->logfd = -1;
	s->written = s->dropped = 0;
	s->lost_err = 0;
	s->tail = tail > 0 ? malloc(tail) : NULL;
	s->tail_cap = s->tail != NULL ? tail : 0;
	s->tail_len = s->tail_pos = 0;
}

static void
stream_fini(struct stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->logfd >= 0)
		close(s->logfd);
	free(s->tail);
	s->fd = s->logfd = -1;
	s->tail = NULL;
}

/* Copy the tail ring into a new linear buffer (caller frees). */
static char *
stream_tail(const struct stream *s, size_t cap, size_t *len)
{
	char *p;

	*len = 0;
	if (s->tail == NULL || s->tail_len == 0)
		return NULL;
	p = malloc(s->tail_len);
	if (p == NULL)
		return NULL;
	if (s->tail_len < cap)
		memcpy(p, s->tail, s->tail_len);
	else {
		size_t first = cap - s->tail_pos;

		memcpy(p, s->tail + s->tail_pos, first);
		memcpy(p + first, s->tail, s->tail_pos);
	}
	*len = s->tail_len;
	return p;
}

/* Output of s could not be written to logs/ (error e): the attempt's
 * reason names it (stream_lost_reason); the spool may be full. */
static void
stream_lost(struct node *n, struct stream *s, int e)
{
	if (s->lost_err == 0)
		s->lost_err = e != 0 ? e : EIO;
	(void)spool_full(n, s->lost_err, "logs/");
}

/* Append "; stdout lost: logs/ write failed: <error>" (and stderr) to
 * reason (of size len) for the streams of sl that lost output. */
static void
stream_lost_reason(const struct slot *sl, char *reason, size_t len)
{
	const struct stream *s[] = { &sl->out, &sl->err };
	static const char *const nm[] = { "stdout", "stderr" };

	for (size_t i = 0; i < 2; i++) {
		size_t l = strlen(reason);

		if (s[i]->lost_err != 0 && l < len)
			snprintf(reason + l, len - l, "; %s lost: logs/ write "
			    "failed: %s", nm[i], strerror(s[i]->lost_err));
	}
}

static void
stream_keep(struct node *n, struct slot *sl, struct stream *s,
    const char *ext, const char *p, size_t len)
{
	size_t cap = s->tail_cap;

	/* The tail ring: the last cap bytes seen. */
	if (s->tail != NULL) {
		const char *q = p;
		size_t m = len;

		if (m > cap) {
			q += m - cap;
			m = cap;
		}
		for (size_t i = 0; i < m; i++) {
			s->tail[s->tail_pos] = q[i];
			s->tail_pos = (s->tail_pos + 1) % cap;
		}
		s->tail_len = s->tail_len + m > cap ? cap : s->tail_len + m;
	}
	/* The log file, capped; created on first output.  After a failed
	 * write nothing more is written (no log with a hole in it). */
	if (s->written >= n->cfg->log_cap_bytes || s->lost_err != 0) {
		s->dropped += (long long)len;
		return;
	}
	if (s->logfd < 0) {
		char id[TASK_ID_MAX + 1], lname[64];
		int dfd;

		name_to_id(sl->name, id);
		if (mkdirat(n->sp.dir[SPOOL_LOGS], id, 0750) != 0 &&
		    errno != EEXIST) {
			stream_lost(n, s, errno);
			return;
		}
		dfd = openat(n->sp.dir[SPOOL_LOGS], id, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0) {
			stream_lost(n, s, errno);
			return;
		}
		snprintf(lname, sizeof(lname), "%d.%s", sl->attempt, ext);
		s->logfd = openat(dfd, lname, O_WRONLY | O_CREAT | O_TRUNC |
		    O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (s->logfd < 0)
			stream_lost(n, s, errno);
		close(dfd);
		if (s->logfd < 0)
			return;
	}
	if ((long long)len > n->cfg->log_cap_bytes - s->written) {
		s->dropped += (long long)len - (n->cfg->log_cap_bytes -
		    s->written);
		len = (size_t)(n->cfg->log_cap_bytes - s->written);
	}
	{
		ssize_t w = write(s->logfd, p, len);

		if (w > 0)
			s->written += (long long)w;
		if (w != (ssize_t)len) {
			/* ENOSPC on a short write is the usual cause. */
			stream_lost(n, s, w < 0 ? errno : ENOSPC);
			s->dropped += (long long)len - (w > 0 ? w : 0);
		}
	}
}

/* Read what is available on a hook pipe; close it at EOF. */
static void
stream_drain(struct node *n, struct slot *sl, struct stream *s,
    const char *ext)
{
	char chunk[16384];

	while (s->fd >= 0) {
		ssize_t r = read(s->fd, chunk, sizeof(chunk));

		if (r > 0) {
			stream_keep(n, sl, s, ext, chunk, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		close(s->fd);	/* also leaves the epoll set */
		s->fd = -1;
	}
}

static int
env_put(char **envp, int *ne, char *buf, size_t *off, const char *k,
    const char *v)
{
	int w = snprintf(buf + *off, ENV_BUF - *off, "%s=%s", k, v);

	if (w < 0 || (size_t)w >= ENV_BUF - *off || *ne >= ENV_MAX - 1)
		return -1;
	envp[(*ne)++] = buf + *off;
	*off += (size_t)w + 1;
	return 0;
}

/*
 * Remove everything inside directory dfd (not dfd itself), depth-first,
 * never following symbolic links.  Best effort: what cannot be removed
 * is left (and logged by the caller's next check).
 */
static void
clean_dir(int dfd, int depth)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(dfd)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		int sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0
		    || unlinkat(dfd, de->d_name, 0) == 0)
			continue;
		if (depth >= 64)
			continue;
		sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		clean_dir(sub, depth + 1);
		close(sub);
		(void)unlinkat(dfd, de->d_name, AT_REMOVEDIR);
	}
	closedir(dp);
}

/*
 * Each slot has a persistent scratch directory tmp/work.<node>.<slot>,
 * the hook's working directory and $TASKSPOOL_WORK_DIR.  After an attempt
 * it is emptied only when its mtime shows something was created in it,
 * so a hook that writes nothing costs one fstat, not a mkdir and rmdir.
 */
static int
work_prepare(struct node *n, long i)
{
	struct workdir *w = &n->work[i];
	struct stat st;

	snprintf(w->name, sizeof(w->name), "work.%s.%ld", n->sp.node, i);
	if (mkdirat(n->sp.dir[SPOOL_TMP], w->name, 0750) != 0 &&
	    errno != EEXIST)
		return -1;
	w->fd = openat(n->sp.dir[SPOOL_TMP], w->name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (w->fd < 0)
		return -1;
	clean_dir(w->fd, 0);
	if (fstat(w->fd, &st) != 0)
		return -1;
	w->mtime = st.st_mtim;
	return 0;
}

/* Whether the hook created or removed anything in its work directory. */
static int
work_touched(struct workdir *w)
{
	struct stat st;

	if (fstat(w->fd, &st) != 0)
		return 1;
	return st.st_mtim.tv_sec != w->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != w->mtime.tv_nsec;
}

static void
work_reset(struct workdir *w)
{
	struct stat st;

	clean_dir(w->fd, 0);
	if (fstat(w->fd, &st) == 0)
		w->mtime = st.st_mtim;
}

static void
slot_free(struct node *n, struct slot *sl)
{
	stream_fini(&sl->out);
	stream_fini(&sl->err);
	task_fini(&sl->t);
	memset(sl, 0, sizeof(*sl));
	sl->out.fd = sl->err.fd = sl->out.logfd = sl->err.logfd = -1;
	sl->lockfd = -1;
	n->nrunning--;
}

/*
 * Start attempt t->nattempts + 1 of the task claimed as active/<self>/name
 * (lock held on lockfd).  On failure to start, the attempt is concluded
 * at once (ERROR), so the task is never stranded.
 */
static void
start_hook(struct node *n, struct task *t, const char *name, int lockfd)
{
	struct slot *sl = NULL;
	char id[TASK_ID_MAX + 1], path[CONFIG_PATH_MAX + TASK_CODE_MAX + 2];
	char envbuf[ENV_BUF], num[64], when[TSTIME_BUF];
	char rfile[CONFIG_PATH_MAX + SPOOL_NAME_MAX + 64];
	char wdir[CONFIG_PATH_MAX + SPOOL_NAME_MAX + 40];
	char *envp[ENV_MAX], *argv[2];
	int ne = 0, outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, in = -1;
	size_t off = 0;
	pid_t pid, failed_child = -1;
	struct hook_spec spec;
	struct hook_rlimit rlim[HOOKLIMIT_MAX];
	struct task_attempt a;
	struct epoll_event ev;
	const char *val;
	int e;

	for (long i = 0; i < n->nslots; i++)
		if (!n->slots[i].used) {
			sl = &n->slots[i];
			break;
		}
	if (sl == NULL)
		abort();	/* callers check nrunning < nslots */
	name_to_id(name, id);
	memset(sl, 0, sizeof(*sl));
	sl->used = 1;
	n->nrunning++;
	sl->lockfd = lockfd;
	snprintf(sl->name, sizeof(sl->name), "%s", name);
	sl->t = *t;			/* steals t's allocations */
	task_init(t);
	sl->attempt = (int)sl->t.nattempts + 1;
	stream_init(&sl->out, (size_t)n->cfg->tail_bytes);
	stream_init(&sl->err, (size_t)n->cfg->tail_bytes);
	sl->start_ms = tstime_now_ms();
	sl->start_mono = tstime_mono_ms();
	sl->deadline_mono = sl->start_mono + 1000LL * (sl->t.timeout_sec > 0 ?
	    sl->t.timeout_sec : n->cfg->timeout_sec);

	snprintf(wdir, sizeof(wdir), "%s/tmp/%s", n->sp.path,
	    n->work[sl - n->slots].name);
	snprintf(rfile, sizeof(rfile), "%s/result.json", wdir);
	snprintf(path, sizeof(path), "%s/%s", n->cfg->hooks_dir,
	    sl->t.task_code);

	/* stdin: the raw executeParams in a memory file. */
	in = memfd_create("taskspool-params", MFD_CLOEXEC);
	if (in < 0 || pwrite(in, sl->t.params, sl->t.params_len, 0) !=
	    (ssize_t)sl->t.params_len)	/* the offset stays at 0 */
		goto fail;
	if (pipe2(outp, O_CLOEXEC | O_NONBLOCK) != 0 ||
	    pipe2(errp, O_CLOEXEC | O_NONBLOCK) != 0)
		goto fail;
	/* The hook's ends must block like an ordinary stdout. */
	fcntl(outp[1], F_SETFL, 0);
	fcntl(errp[1], F_SETFL, 0);

	if ((val = getenv("PATH")) == NULL)
		val = "/usr/local/bin:/usr/bin:/bin";
	env_put(envp, &ne, envbuf, &off, "PATH", val);
	env_put(envp, &ne, envbuf, &off, "HOME", wdir);
	if ((val = getenv("TZ")) != NULL)
		env_put(envp, &ne, envbuf, &off, "TZ", val);
	if ((val = getenv("LANG")) != NULL)
		env_put(envp, &ne, envbuf, &off, "LANG", val);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_REQUEST_ID", id);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_TASK_CODE",
	    sl->t.task_code);
	snprintf(num, sizeof(num), "%d", sl->attempt);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_ATTEMPT", num);
	snprintf(num, sizeof(num), "%d", effective_retries(n, &sl->t) + 1);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_MAX_ATTEMPTS", num);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_NODE", n->sp.node);
	snprintf(num, sizeof(num), "%lld", coord_lease_fence(n->coord, lockfd));
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_FENCE", num);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_TRIGGER_TIME",
	    sl->t.trigger_ms >= 0 ? tstime_format_ms(when, sizeof(when),
	    sl->t.trigger_ms) : "");
	snprintf(num, sizeof(num), "%lld", (long long)((sl->start_ms +
	    (sl->deadline_mono - sl->start_mono)) / 1000));
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_DEADLINE", num);
	snprintf(num, sizeof(num), "%d", sl->t.shard_index >= 0 ?
	    sl->t.shard_index : 0);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_SHARD_INDEX", num);
	snprintf(num, sizeof(num), "%d", sl->t.shard_total >= 1 ?
	    sl->t.shard_total : 1);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_SHARD_TOTAL", num);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_RESULT_FILE", rfile);
	if (env_put(envp, &ne, envbuf, &off, "TASKSPOOL_WORK_DIR", wdir)) {
		errno = E2BIG;
		goto fail;
	}
	envp[ne] = NULL;
	argv[0] = sl->t.task_code;
	argv[1] = NULL;
	spec.path = path;
	spec.argv = argv;
	spec.envp = envp;
	spec.stdin_fd = in;
	spec.stdout_fd = outp[1];
	spec.stderr_fd = errp[1];
	spec.workdir = wdir;
	spec.rlimits = rlim;
	spec.nrlimits = hooklimit_from_config(n->cfg, rlim);
	pid = hook_spawn(&spec, &failed_child);
	e = errno;
	close(in);
	in = -1;
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;
	if (pid < 0) {
		if (failed_child > 0)
			(void)waitpid(failed_child, NULL, 0);
		errno = e;
		goto fail;
	}
	sl->pid = pid;
	sl->out.fd = outp[0];
	sl->err.fd = errp[0];
	ev.events = EPOLLIN;
	ev.data.u64 = ((uint64_t)(sl - n->slots) << 2) | 1;
	epoll_ctl(n->ep, EPOLL_CTL_ADD, sl->out.fd, &ev);
	ev.data.u64 = ((uint64_t)(sl - n->slots) << 2) | 2;
	epoll_ctl(n->ep, EPOLL_CTL_ADD, sl->err.fd, &ev);
	log_task(LOG_LEVEL_INFO, "task.running", id, sl->t.task_code,
	    sl->attempt, "%s: attempt %d started, pid %d", id, sl->attempt,
	    (int)pid);
	metrics_attempt_started(sl->t.task_code, sl->t.not_before_ms >= 0 ?
	    sl->t.not_before_ms : sl->t.trigger_ms >= 0 ? sl->t.trigger_ms :
	    sl->t.created_ms, sl->start_ms);
	log_debug("%s: attempt %d started, pid %d", id, sl->attempt, (int)pid);
	record(n, RECORDS_RUNNING, id, &sl->t, NULL, NULL, 0);
	return;
fail:
	e = errno;
	if (in >= 0)
		close(in);
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	/* A hook removed since hook_ok() said yes is the node's trouble
	 * too: the task goes back for a node that has it. */
	if (e == ENOENT || e == EACCES) {
		nameset_remove(&n->hookcache, sl->t.task_code);
		if (!hook_ok(n, sl->t.task_code) && hooks_rescan(n, 0))
			heartbeat(n);
	}
	/* An execve ENOMEM under hook_limit_as_bytes is the limit's doing:
	 * the hook's error (below), not a requeue. */
	if ((e == EMFILE || e == ENFILE || e == ENOMEM || e == EAGAIN ||
	    ((e == ENOENT || e == EACCES) && !hookset_has(n->hooks,
	    sl->t.task_code))) && !(e == ENOMEM && failed_child > 0 &&
	    n->cfg->hook_limit_as_bytes > 0)) {
		/* The node's trouble, not the task's: no attempt is used.
		 * Hand the task back to incoming/ and claim nothing more for
		 * a second (fewer hooks run until resources come back). */
		char nm[SPOOL_NAME_MAX];

		log_task(LOG_LEVEL_WARN, "task.requeued", id, sl->t.task_code,
		    sl->attempt, "%s: cannot start hook now (%s); back to "
		    "incoming/, claims paused for 1 s", id, strerror(e));
		snprintf(nm, sizeof(nm), "%s", sl->name);
		work_reset(&n->work[sl - n->slots]);
		slot_free(n, sl);
		if (spool_move_excl(n->sp.self, nm, n->sp.dir[SPOOL_INCOMING],
		    nm) != 0)
			log_warn("%s: move back to incoming/ (recovered as a "
			    "lost attempt instead)", id);
		coord_lease_close(n->coord, lockfd);
		n->claim_pause = tstime_mono_ms() + 1000;
		return;
	}
	log_warnx("%s: cannot start hook %s: %s", id, path, strerror(e));
	memset(&a, 0, sizeof(a));
	a.attempt = sl->attempt;
	snprintf(a.node, sizeof(a.node), "%s", n->sp.node);
	a.start_ms = sl->start_ms;
	a.end_ms = tstime_now_ms();
	a.exit_code = -1;
	a.retry_at_ms = -1;
	a.outcome = TASK_OUTCOME_ERROR;
	snprintf(a.reason, sizeof(a.reason), "cannot start hook %s: %s%s",
	    sl->t.task_code, strerror(e), e == ENOENT ? " (the file, or the "
	    "interpreter named on its #! line, is missing)" : e == ENOMEM ?
	    " (hook_limit_as_bytes may be too small)" : "");
	{
		struct task tt = sl->t;
		char nm[SPOOL_NAME_MAX];

		task_init(&sl->t);
		snprintf(nm, sizeof(nm), "%s", sl->name);
		work_reset(&n->work[sl - n->slots]);
		slot_free(n, sl);
		/* An exec error is the hook's: final. */
		node_conclude(n, &tt, n->sp.self, nm, lockfd, &a, 1, NULL, 0,
		    NULL);
		task_fini(&tt);
	}
}

/*
 * Whether hooks_dir/code is a regular executable file.  Positive answers
 * are cached for a second per code (the claim path runs this per task);
 * negative ones are always checked again.
 */
static int
hook_ok(struct node *n, const char *code)
{
	struct nameset_node *h = nameset_find(&n->hookcache, code);
	int64_t now = tstime_mono_ms();
	struct stat hs;

	if (h != NULL && now - h->key < 1000)
		return 1;
	if (fstatat(n->hooksfd, code, &hs, 0) != 0 || !S_ISREG(hs.st_mode) ||
	    (hs.st_mode & 0111) == 0 || faccessat(n->hooksfd, code, X_OK,
	    AT_EACCESS) != 0) {
		nameset_remove(&n->hookcache, code);
		return 0;
	}
	if (h == NULL && n->hookcache.count < 4096)
		h = nameset_add(&n->hookcache, code, NULL);
	if (h != NULL)
		h->key = now;
	return 1;
}

/*
 * Read hooks_dir again (hookset.h) for the list the heartbeat
 * advertises.  When it changed, the incoming/ names parked for lack of
 * a hook (n->nohook) become candidates again, so a hook that appears
 * gets its tasks; all: do that anyway (the periodic pass that forgets
 * names claimed elsewhere meanwhile).  Returns 1 when the list changed.
 */
static int
hooks_rescan(struct node *n, int all)
{
	char list[HOOKSET_MAX];
	size_t count;
	int rc = hookset_scan(n->hooksfd, list, sizeof(list), &count), changed;

	if (rc < 0) {
		log_warn("hooks_dir %s: cannot list its hooks (advertising "
		    "the previous list)", n->cfg->hooks_dir);
		return 0;
	}
	changed = strcmp(list, n->hooks) != 0;
	if (changed) {
		memcpy(n->hooks, list, strlen(list) + 1);
		log_info("hooks: %zu in %s%s", count, n->cfg->hooks_dir, rc == 1 ?
		    " (more than the heartbeat holds: advertised as \"*\")" :
		    "");
	}
	if (changed || all) {
		struct nameset_node *c;

		while ((c = nameset_pop(&n->nohook)) != NULL) {
			cand_add(n, c->name, c->flags & CAND_ANNOUNCED);
			free(c);
		}
	}
	return changed;
}

/*
 * The result of unfinished task id is damaged (a crash before its
 * conclusion, resrepair.h): keep it in corrupt/ and remove it, so that
 * the task runs again or is concluded.  Returns 1 when a damaged result
 * was moved away (or is gone), 0 when results/<id>.json is a valid
 * result (or cannot be read now).
 */
static int
torn_result(struct node *n, const char *id)
{
	char file[TASK_ID_MAX + 8], why[256], kept[TASK_ID_MAX + 40] = "";
	size_t len;
	char *data;
	int rc = 0;

	snprintf(file, sizeof(file), "%s.json", id);
	if ((data = spool_read_file(n->sp.dir[SPOOL_RESULTS], file, 64 << 20,
	    &len)) == NULL)
		return errno == ENOENT;
	if (!result_valid(data, len, why, sizeof(why))) {
		if (resrepair_drop(&n->sp, id, data, len, why, kept,
		    sizeof(kept)) != 0)
			log_warn("%s: results/%s is damaged (%s) and cannot "
			    "be moved to corrupt/", id, file, why);
		else {
			log_warnx("%s: results/%s is damaged (%s); kept as "
			    "corrupt/%s, the task goes on without it", id,
			    file, why, kept);
			rc = 1;
		}
	}
	free(data);
	return rc;
}

/* --- claim --- */

/*
 * The number of finished attempts the task file name in dirfd holds, or
 * -1 when it cannot be read or decoded (it is then not called newer).
 */
static long
copy_attempts(int dirfd, const char *name)
{
	size_t len;
	char *data = spool_read_file(dirfd, name, TASK_FILE_MAX, &len);
	struct task t;
	struct task_error te;
	long na = -1;

	if (data == NULL)
		return -1;
	task_init(&t);
	if (task_decode(data, len, &t, &te) == 0)
		na = (long)t.nattempts;
	task_fini(&t);
	free(data);
	return na;
}

/*
 * Whether another copy of request id (file name final) exists, the claim
 * marker being held (claimmark.h): one in some node's active/ (claimed,
 * running or being concluded), or — having left active/ — one waiting in
 * delayed/ (a retry is published there before the active/ copy is
 * removed; not looked at when the copy at hand is the delayed/ one) or
 * finished (its result is written before the move out of active/).
 * Looked at in that order, so a copy concluding meanwhile is always seen.
 * The copy at hand is name in dirfd.  Returns 1 with the reason for
 * corrupt/ in why; 2 when the copy at hand has more attempts than the
 * one in active/<node>/: it is that task's retry, published before its
 * owner removes the stale active/ copy (the retry crash state of
 * spool-layout/README.md; the owner may be stopped or dead), so it is
 * neither a duplicate nor to be claimed yet — it waits until the owner,
 * or recovery rule 1, removes the stale copy (why says so, for the log);
 * else 0.
 */
static int
other_copy(struct node *n, const char *id, int dirfd, const char *name,
    const char *final, int from_delayed, char *why, size_t whylen)
{
	struct stat ts;
	char other[65];

	if (spool_in_active(&n->sp, final, NULL, other)) {
		int afd = openat(n->sp.dir[SPOOL_ACTIVE], other, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		long mine = copy_attempts(dirfd, name), theirs = -1;

		if (afd >= 0) {
			theirs = copy_attempts(afd, final);
			close(afd);
		}
		if (mine >= 0 && theirs >= 0 && mine > theirs) {
			snprintf(why, whylen, "%s: its retry (attempt %ld) "
			    "waits until the stale copy in active/%s/ "
			    "(attempt %ld) is removed", id, mine + 1, other,
			    theirs + 1);
			return 2;
		}
		snprintf(why, whylen, "requestId: duplicate: \"%s\" is already "
		    "running on node %s (a second copy)", id, other);
		return 1;
	}
	if (!from_delayed && fstatat(n->sp.dir[SPOOL_DELAYED], final, &ts,
	    AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(why, whylen, "requestId: duplicate: \"%s\" already "
		    "waits in delayed/ (a second copy)", id);
		return 1;
	}
	if (fstatat(n->sp.dir[SPOOL_RESULTS], final, &ts,
	    AT_SYMLINK_NOFOLLOW) == 0 && !torn_result(n, id)) {
		snprintf(why, whylen, "requestId: duplicate: \"%s\" already "
		    "used (results/%s exists)", id, final);
		return 1;
	}
	return 0;
}

/* maxConcurrent (maxconc.h): 0 when t may start (its code's slot taken
 * with the lease on fd), 1 when it waits (kept in n->waiting). */
static int
limit_wait(struct node *n, int fd, const struct task *t, int dfd,
    const char *name, int announced)
{
	long max = limits_max(n->cfg->max_concurrent, t->task_code);
	char why[256];
	enum coord_status st;

	if (max <= 0)
		return 0;
	st = coord_limit_acquire(n->coord, fd, t->task_code, max, why,
	    sizeof(why));
	if (st == COORD_OK) {
		(void)limits_mark_waiting(&n->sp, t->request_id, 0);
		return 0;
	}
	if (st == COORD_ERR)
		log_warnx("%s: maxConcurrent: %s", t->request_id, why);
	else if (!limits_is_waiting(&n->sp, t->request_id)) {
		log_info("%s: WAITING: maxConcurrent %s=%ld reached",
		    t->request_id, t->task_code, max);
		if (limits_mark_waiting(&n->sp, t->request_id, 1) != 0)
			log_warn("%s: state/waiting/", t->request_id);
		index_note(n, t->request_id, dfd == n->qself ? SPOOL_QUEUE :
		    SPOOL_INCOMING, "WAITING", dfd == n->qself ? n->sp.node :
		    NULL, t, -1);
	}
	(void)limits_wait(&n->waiting, t->task_code, name, (announced ?
	    CAND_ANNOUNCED : 0) | (dfd == n->qself ? LIMITS_FROM_QUEUE : 0));
	return 1;
}


/*
 * Try to claim dfd/name, dfd being incoming/ or queue/<self>/.
 * announced: the writer closed or renamed it in, so a parse failure is
 * final (else it may still be being written).
 */
static void
claim(struct node *n, int dfd, const char *name, int announced)
{
	int fd;
	struct stat st;
	char why[512], id[TASK_ID_MAX + 1], final[SPOOL_NAME_MAX];
	struct task t;
	struct task_error te;
	struct buf b;
	int64_t now, due;
	int mfd = -1;			/* the claim marker, held */

	memset(&st, 0, sizeof(st));
	fd = spool_open_safe(dfd, name, TASK_FILE_MAX, &st, why, sizeof(why));
	if (fd < 0) {
		if (errno == ENOENT)
			return;		/* claimed or cancelled meanwhile */
		/* A link(2)-publishing writer has two links for a moment. */
		if (errno == EINVAL && st.st_nlink > 1 && S_ISREG(st.st_mode) &&
		    tstime_now_ms() - (int64_t)st.st_ctim.tv_sec * 1000 -
		    st.st_ctim.tv_nsec / 1000000 < n->cfg->settle_ms)
			return;
		if (errno == EFBIG || errno == ELOOP || errno == EINVAL ||
		    errno == EACCES || errno == EPERM)
			quarantine(n, dfd, name, why);
		else if (fd_short(n, errno, "open incoming/"))
			cand_again(n, dfd, name, announced);
		else
			log_warn("open incoming/%s", name);
		return;
	}
	if (coord_flock_verify(fd, dfd, name) != 0) {
		close(fd);		/* another daemon is claiming it */
		return;
	}
	task_init(&t);
	buf_init(&b, TASK_FILE_MAX);
	if (buf_read_fd(&b, fd) != 0) {
		log_warn("read incoming/%s", name);
		goto out;
	}
	now = tstime_now_ms();
	if (task_decode(b.data != NULL ? b.data : "", b.len, &t, &te) != 0) {
		if (!announced && now - mtime_ms(&st) < n->cfg->settle_ms)
			goto out;	/* may still be being written */
		snprintf(why, sizeof(why), "%s: %s", te.field, te.rule);
		quarantine(n, dfd, name, why);
		goto out;
	}
	/* The requestId is the body's, and the file must then be named
	 * <requestId>.json; a body without one gets a generated time-ordered
	 * id (the file, any *.json name, is renamed to it when claimed). */
	if (name_to_id(name, id) != 0 && t.request_id[0] == '\0' &&
	    (strlen(name) <= 5 || strcmp(name + strlen(name) - 5, ".json"))) {
		quarantine(n, dfd, name, "file name: must be <requestId>.json "
		    "or end in .json");
		goto out;
	}
	if (t.request_id[0] != '\0') {
		size_t il = strlen(t.request_id);

		if (strlen(name) != il + 5 || strncmp(name, t.request_id,
		    il) != 0 || strcmp(name + il, ".json") != 0) {
			quarantine(n, dfd, name, "requestId: does not match "
			    "the file name (must be <requestId>.json)");
			goto out;
		}
	} else {
		generated_id(t.request_id, sizeof(t.request_id), name, &st);
	}
	snprintf(id, sizeof(id), "%s", t.request_id);
	snprintf(final, sizeof(final), "%s.json", id);
	/* One copy of a requestId is claimed at a time (claimmark.h): the
	 * marker is held from here until after the rename into active/ (or
	 * the decision not to claim), so two copies of one id (in incoming/
	 * and queue/<n>/, a re-drop, a crash in the delay path below) can
	 * never both pass the checks that follow. */
	{
		char prev[CLAIMMARK_INFO_MAX];
		int over;

		mfd = claimmark_take(&n->sp, id, n->sp.node, now, &over, prev,
		    sizeof(prev));
		if (mfd < 0) {
			if (errno == EWOULDBLOCK || errno == EAGAIN)
				log_debug("%s: another copy is being claimed "
				    "now; looked at again later", id);
			else
				log_warn("%s: state/claims/%s", id, id);
			goto out;	/* the next rescan tries again */
		}
		if (over && prev[0] != '\0')
			log_info("%s: claim marker left by a claimant that "
			    "died mid-claim (%s) taken over", id, prev);
	}
	/* A requestId is used once: another copy means this one is a
	 * duplicate, kept in corrupt/ with a reason naming the other copy,
	 * never run (two runs could overlap).  (A crash in the delay path
	 * below can leave the user's original here beside the published
	 * delayed/ copy; that one is the task.) */
	switch (other_copy(n, id, dfd, name, final, 0, why, sizeof(why))) {
	case 1:
		quarantine(n, dfd, name, why);
		goto out;
	case 2:
		log_debug("%s", why);
		goto out;	/* the next rescan looks again */
	}
	if (t.created_ms < 0)
		t.created_ms = mtime_ms(&st);
	/* Not due yet: delay/at triggers and retries wait in delayed/. */
	due = t.not_before_ms;
	if (due < 0 && t.trigger == TASK_TRIGGER_DELAY)
		due = t.created_ms + t.delay_ms;
	if (due < 0 && t.trigger == TASK_TRIGGER_AT)
		due = t.run_at_ms;
	if (due > now + 1) {
		struct buf enc;

		t.not_before_ms = due;
		buf_init(&enc, 0);
		if (task_encode(&t, &enc) != 0 ||
		    spool_publish(&n->sp, n->sp.dir[SPOOL_DELAYED], final,
		    enc.data, enc.len, due, 0) != 0) {
			int e = errno;

			log_warn("%s: cannot move to delayed/", id);
			buf_fini(&enc);
			if (spool_full(n, e, "delayed/"))
				cand_again(n, dfd, name, announced);
			goto out;
		}
		buf_fini(&enc);
		if (unlinkat(dfd, name, 0) != 0)
			log_warn("%s: unlink incoming/%s", id, name);
		mark_dirty(n, SPOOL_INCOMING);
		if (n->leader)
			delayed_note(n, final);
		index_note(n, id, SPOOL_DELAYED, NULL, NULL, &t, due);
		log_debug("%s: delayed until %lld", id, (long long)due);
		goto out;
	}
	if (t.not_before_ms < 0 && due >= 0)
		t.not_before_ms = due;
	/* Routed tasks (DESIGN §6): the leader's dispatcher moves them to
	 * queue/<node>/; from our queue we run only what is still ours. */
	{
		const char *tg;

		if (dfd != n->qself && dispatch_parse(t.route, &tg) >
		    DISPATCH_ANY)
			goto out;
		if (dfd == n->qself && !router_owns(&t, n->sp.node)) {
			log_info("%s: in queue/%s/ but routed to %s; back to "
			    "incoming/", id, n->sp.node, t.route);
			if (spool_move_excl(dfd, name, n->sp.dir[
			    SPOOL_INCOMING], name) != 0)
				log_warn("%s: move back to incoming/", id);
			else
				index_note(n, id, SPOOL_INCOMING, NULL, NULL,
				    &t, -1);
			goto out;
		}
	}
	/* Placement: a missing hook is this node's, not the task's.  A
	 * task of incoming/ is left to the nodes that have the hook (parked
	 * here until our hooks change); one routed to us goes back to be
	 * routed again (the dispatcher offers it to nodes that advertise
	 * the hook, or marks it WAITING). */
	if (!hook_ok(n, t.task_code)) {
		if (hookset_has(n->hooks, t.task_code) && hooks_rescan(n, 0))
			heartbeat(n);	/* we advertised it: correct that */
		if (dfd != n->qself) {
			struct nameset_node *p = nameset_add(&n->nohook, name,
			    NULL);

			if (p != NULL && announced)
				p->flags |= CAND_ANNOUNCED;
			log_debug("%s: no hook \"%s\" in %s; left to the "
			    "nodes that have it", id, t.task_code,
			    n->cfg->hooks_dir);
		} else if (spool_move_excl(dfd, name, n->sp.dir[
		    SPOOL_INCOMING], name) != 0)
			log_warn("%s: move back to incoming/", id);
		else {
			log_info("%s: in queue/%s/ but no hook \"%s\" in %s; "
			    "back to incoming/", id, n->sp.node, t.task_code,
			    n->cfg->hooks_dir);
			index_note(n, id, SPOOL_INCOMING, NULL, NULL, &t, -1);
		}
		goto out;
	}
	if (lease_take(n, fd, id, (int)t.nattempts + 1) != 0) {
		if (n->coord_down) {
			cand_again(n, dfd, name, announced);
			n->claim_pause = tstime_mono_ms() + 1000;
		}
		goto out;		/* leased elsewhere, or no backend */
	}
	if (limit_wait(n, fd, &t, dfd, name, announced))
		goto out;
	if (spool_move_excl(dfd, name, n->sp.self, final) != 0) {
		if (errno == EEXIST) {
			snprintf(why, sizeof(why), "requestId: \"%s\" is "
			    "already running on this node", id);
			quarantine(n, dfd, name, why);
		} else if (errno != ENOENT && errno != ESTALE) {
			int e = errno;

			log_warn("%s: claim rename", id);
			if (spool_full(n, e, "active/") || fd_short(n, e,
			    "claim rename"))
				cand_again(n, dfd, name, announced);
		}
		goto out;		/* ENOENT/ESTALE: another node won */
	}
	/* The rename moved a name, not our locked inode: if the file was
	 * replaced after lock_verify (a writer's mv over it), what is now in
	 * active/<self>/ is a file nobody holds.  Put it back to be claimed
	 * on its own; the replaced version is gone, as its writer meant. */
	{
		struct stat locked, moved;

		if (fstat(fd, &locked) != 0 || fstatat(n->sp.self, final,
		    &moved, AT_SYMLINK_NOFOLLOW) != 0 ||
		    locked.st_ino != moved.st_ino ||
		    locked.st_dev != moved.st_dev) {
			log_warnx("%s: replaced while being claimed; claiming "
			    "the new version separately", id);
			if (spool_move_excl(n->sp.self, final, dfd, name) != 0)
				log_warn("%s: move back to incoming/", id);
			else
				cand_again(n, dfd, name, 1);
			goto out;
		}
	}
	/* No fsync: a claim lost in a crash leaves the task in incoming/,
	 * to be claimed again (delivery is at-least-once anyway). */
	n->claimed++;
	/* A WAITING marker (the dispatcher's, router.h) ends with the wait. */
	{
		char stem[TASK_ID_MAX + 1];

		if (limits_is_waiting(&n->sp, id))
			(void)limits_mark_waiting(&n->sp, id, 0);
		if (name_to_id(name, stem) == 0 && strcmp(stem, id) != 0 &&
		    limits_is_waiting(&n->sp, stem))
			(void)limits_mark_waiting(&n->sp, stem, 0);
	}
	{
		struct stat cs;

		/* A cancel may have been asked for before we claimed. */
		if (n->sp.cancel >= 0 && fstatat(n->sp.cancel, id, &cs, 0) ==
		    0) {
			struct task_attempt a;

			memset(&a, 0, sizeof(a));
			a.attempt = (int)t.nattempts + 1;
			snprintf(a.node, sizeof(a.node), "%s", n->sp.node);
			a.start_ms = -1;	/* never started */
			a.end_ms = now;
			a.exit_code = -1;
			a.retry_at_ms = -1;
			a.outcome = TASK_OUTCOME_CANCELLED;
			snprintf(a.reason, sizeof(a.reason), "cancelled "
			    "before it started");
			node_conclude(n, &t, n->sp.self, final, fd, &a, 1,
			    NULL, 0, NULL);
			fd = -1;
			goto out;
		}
	}
	index_note(n, id, SPOOL_ACTIVE, NULL, n->sp.node, &t, -1);
	start_hook(n, &t, final, fd);
	fd = -1;		/* the slot (or the conclusion) owns it */
out:
	/* After the rename: the copy in active/<self>/ is the mark now. */
	claimmark_release(&n->sp, id, mfd);
	if (fd >= 0)
		coord_lease_close(n->coord, fd);
	task_fini(&t);
	buf_fini(&b);
}

/* --- conclusion of an attempt --- */

/*
 * Terminal commits are a group commit (groupsync.h).  The worker thread
 * writes the result of every attempt concluded since the last batch to a
 * tmp/ file, fsyncs it, renames it into results/, and fsyncs results/
 * once for them all, while the loop goes on claiming and running hooks.
 * When that batch is done, each task whose result is durable is renamed
 * into its terminal directory, and those directories are fsynced by the
 * next batch.  So a task is never in
 * done|failed|cancelled/ without a durable result, and whatever finished
 * while the disk was busy shares one batch: under load a few fsyncs cover
 * many tasks.  A commit whose result cannot be written (ENOSPC, EACCES,
 * ...) stays queued, its lock held and the task in active/, and is
 * retried every second (never acknowledged without its result).
 */
static int
commit_move(struct node *n, struct commit *c)
{
	/* The delivery is durable before the task is terminal (DESIGN §7). */
	if (c->cb.len > 0) {
		if (callback_publish(&n->sp, c->id, &c->cb) != 0) {
			int e = errno;

			log_warn("%s: cannot write its callback delivery "
			    "(retried every second)", c->id);
			(void)spool_full(n, e, "outbox/callbacks/");
			c->next_try_mono = tstime_mono_ms() + 1000;
			return -1;
		}
		buf_reset(&c->cb);
		callback_sender_wake(n->cbs);
	}
	if (renameat(c->from_self ? n->sp.self : c->srcfd, c->name,
	    n->sp.dir[c->dest], c->name) != 0 &&
	    errno != ENOENT) {
		int e = errno;

		if (!c->warned_move)
			log_warn("%s: move to %s/ (retried every second)",
			    c->id, spool_dir_name(c->dest));
		(void)spool_full(n, e, spool_dir_name(c->dest));
		c->warned_move = 1;
		c->next_try_mono = tstime_mono_ms() + 1000;
		return -1;
	}
	if (n->sp.do_fsync)
		n->gdirty[c->dest] = 1;	/* fsynced by the next batch */
	if (coord_leases_expire(n->coord))
		(void)index_put(n->coord, c->id, c->dest, spool_state_name(
		    c->dest), NULL, c->code, c->nattempts, -1,
		    n->cfg->index_ttl_sec);
	if (!c->from_self)
		(void)spool_sync_dir(&n->sp, c->srcfd);
	if (n->sp.cancel >= 0 && (c->cancel_marker ||
	    nameset_find(&n->cancels, c->id) != NULL)) {
		(void)unlinkat(n->sp.cancel, c->id, 0);
		nameset_remove(&n->cancels, c->id);
	}
	if (c->warned)
		log_info("%s: result written after earlier failures", c->id);
	return 0;
}

static void
commit_free(struct node *n, struct commit *c)
{
	n->ncommits--;
	if (c->lockfd >= 0)
		coord_lease_close(n->coord, c->lockfd);
	if (c->srcfd >= 0)
		close(c->srcfd);
	buf_fini(&c->result);
	buf_fini(&c->cb);
	free(c);
}

/* The batch in flight, if any, is done: advance its commits. */
static void
commits_synced(struct node *n)
{
	int derr[GROUPSYNC_DIRS_MAX], results_ok = 1;

	if (!groupsync_poll(n->gs, derr))
		return;
	for (size_t i = 0; i < n->ngdirs; i++) {
		if (derr[i] == 0)
			continue;
		errno = derr[i];
		log_warn("fsync %s/", spool_dir_name(n->gdir[i]));
		(void)spool_full(n, derr[i], spool_dir_name(n->gdir[i]));
		if (n->gdir[i] == SPOOL_RESULTS)
			results_ok = 0;	/* moves wait for durable names */
		else
			n->gdirty[n->gdir[i]] = 1;	/* next batch */
	}
	n->ngdirs = 0;
	for (struct commit *c = n->commits; c != NULL; c = c->next) {
		if (c->syncing) {
			c->syncing = 0;
			if (c->gi.err != 0) {
				errno = c->gi.err;
				if (!c->warned)
					log_warn("%s: cannot write results/%s;"
					    " the task stays in active/ and is "
					    "retried", c->id, c->gi.to);
				c->warned = 1;
				if (!spool_full(n, c->gi.err, "results/"))
					(void)fd_short(n, c->gi.err,
					    "results/");
				c->next_try_mono = tstime_mono_ms() + 1000;
				continue;
			}
			c->renamed = 1;
			record(n, RECORDS_RESULT, c->id, NULL, NULL,
			    c->result.data, c->result.len);
		}
		if (c->renamed && results_ok) {
			c->renamed = 0;
			c->written = 1;
		}
	}
}

/* Move every commit whose result is durable into its terminal dir. */
static void
commits_move(struct node *n, int64_t now)
{
	struct commit **pp;

	for (pp = &n->commits; *pp != NULL;) {
		struct commit *c = *pp;

		if (c->written && c->next_try_mono <= now &&
		    commit_move(n, c) == 0) {
			*pp = c->next;
			commit_free(n, c);
			continue;
		}
		pp = &c->next;
	}
}

/* Whether c's result is still to be written (and may be tried now). */
static int
commit_unwritten(const struct commit *c, int64_t now)
{
	return !c->written && !c->renamed && !c->syncing &&
	    c->next_try_mono <= now;
}

/* Whether commits or directory fsyncs wait for commits_flush(). */
static int
commits_pending(struct node *n)
{
	if (n->commits != NULL || groupsync_busy(n->gs))
		return 1;
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (n->gdirty[d])
			return 1;
	return 0;
}

static void
commits_flush(struct node *n)
{
	struct commit **pp;
	int64_t now = tstime_mono_ms();
	int dirs[GROUPSYNC_DIRS_MAX], renamed = 0;
	size_t ni = 0, nd = 0;

	commits_synced(n);
	for (pp = &n->commits; *pp != NULL;) {
		struct commit *c = *pp;

		if (!c->written && !c->renamed && !c->syncing &&
		    coord_lease_valid(n->coord, c->lockfd, now) != COORD_OK) {
			record_stale(n, c->id, c->attempt, coord_lease_fence(
			    n->coord, c->lockfd), "result not written before "
			    "the lease was lost");
			*pp = c->next;
			commit_free(n, c);
			continue;
		}
		pp = &c->next;
	}
	commits_move(n, now);
	if (groupsync_busy(n->gs))
		return;		/* the rest goes into the next batch */
	for (struct commit *c = n->commits; c != NULL; c = c->next) {
		if (commit_unwritten(c, now))
			ni++;
		renamed |= c->renamed;
	}
	if (ni > n->gcap) {
		size_t cap = ni < 64 ? 64 : 2 * ni;
		struct groupsync_item **gi = reallocarray(n->gitems, cap,
		    sizeof(*gi));

		if (gi == NULL) {
			log_warn("group commit");
			return;		/* tried again next pass */
		}
		n->gitems = gi;
		n->gcap = cap;
	}
	ni = 0;
	for (struct commit *c = n->commits; c != NULL; c = c->next)
		if (commit_unwritten(c, now)) {
			c->syncing = 1;
			c->gi.data = c->result.data;
			c->gi.len = c->result.len;
			c->gi.todir = n->sp.dir[SPOOL_RESULTS];
			snprintf(c->gi.to, sizeof(c->gi.to), "%s.json", c->id);
			n->gitems[ni++] = &c->gi;
		}
	if (ni > 0 || renamed) {
		n->gdir[nd] = SPOOL_RESULTS;
		dirs[nd++] = n->sp.dir[SPOOL_RESULTS];
	}
	for (int d = 0; d < SPOOL_NDIRS && nd < GROUPSYNC_DIRS_MAX; d++)
		if (n->gdirty[d] && d != SPOOL_RESULTS) {
			n->gdirty[d] = 0;
			n->gdir[nd] = (enum spool_dir)d;
			dirs[nd++] = n->sp.dir[d];
		}
	if (ni == 0 && nd == 0)
		return;
	n->ngdirs = nd;
	if (groupsync_start(n->gs, n->gitems, ni, dirs, nd,
	    n->sp.do_fsync) != 0) {
		log_warn("group commit");	/* again next pass */
		for (struct commit *c = n->commits; c != NULL; c = c->next)
			c->syncing = 0;
		for (size_t i = 0; i < nd; i++)
			if (n->gdir[i] != SPOOL_RESULTS)
				n->gdirty[n->gdir[i]] = 1;
		n->ngdirs = 0;
		return;
	}
	if (!n->sp.do_fsync) {
		/* Without fsync the batch ran at once: move now. */
		commits_synced(n);
		commits_move(n, now);
	}
}

/*
 * Record attempt a of task t (file srcfd/name, flock held on lockfd, which
 * this function takes over) and move the task on: retry into delayed/
 * with backoff, or the terminal directory with its result.  permanent
 * forbids a retry.  sl (may be NULL) supplies the output tails.
 */
static void
node_conclude(struct node *n, struct task *t, int srcfd, const char *name,
    int lockfd, struct task_attempt *a, int permanent,
    const char *hook_result, size_t hrlen, const struct slot *sl)
{
	int retries = effective_retries(n, t);
	const char *status, *code = NULL;
	struct result_info ri;
	struct commit *c;
	char *otail = NULL, *etail = NULL;
	size_t olen = 0, elen = 0;
	char msg[TASK_REASON_MAX + 64];
	enum spool_dir dest;

	if (name_to_id(name, t->request_id) != 0) {
		log_warnx("conclude: bad name %s", name);
		if (lockfd >= 0)
			coord_lease_close(n->coord, lockfd);
		return;
	}
	if (coord_lease_valid(n->coord, lockfd, tstime_mono_ms()) !=
	    COORD_OK) {
		record_stale(n, t->request_id, a->attempt, coord_lease_fence(
		    n->coord, lockfd), a->reason);
		coord_lease_close(n->coord, lockfd);
		return;
	}
	n->finished++;
	metrics_attempt_ended(t->task_code, task_outcome_name(a->outcome),
	    a->start_ms >= 0 && a->outcome != TASK_OUTCOME_LOST ?
	    (double)(a->end_ms - a->start_ms) / 1000.0 : -1);
	if (a->outcome != TASK_OUTCOME_SUCCESS &&
	    a->outcome != TASK_OUTCOME_CANCELLED && !permanent &&
	    (int)t->nattempts + 1 <= retries) {
		int64_t delay = backoff_jittered_ms((int)t->nattempts + 1,
		    n->cfg->retry_base_ms, n->cfg->retry_max_ms,
		    (int)n->cfg->retry_jitter_pct, rand32());
		struct buf enc;

		a->retry_at_ms = tstime_now_ms() + delay;
		t->not_before_ms = a->retry_at_ms;
		if (task_add_attempt(t, a) != 0)
			goto nomem;
		buf_init(&enc, 0);
		if (task_encode(t, &enc) != 0 || spool_publish(&n->sp,
		    n->sp.dir[SPOOL_DELAYED], name, enc.data, enc.len,
		    a->retry_at_ms, 0) != 0) {
			/* Leave it in active/ unlocked: the reaper (or our
			 * restart) retries the conclusion as a lost attempt. */
			int e = errno;

			log_warn("%s: cannot queue retry", t->request_id);
			(void)spool_full(n, e, "delayed/");
			buf_fini(&enc);
			if (lockfd >= 0)
				coord_lease_close(n->coord, lockfd);
			return;
		}
		buf_fini(&enc);
		if (unlinkat(srcfd, name, 0) != 0 && errno != ENOENT)
			log_warn("%s: unlink after retry queued",
			    t->request_id);
		if (srcfd == n->sp.self)
			n->dirty_self = 1;
		if (lockfd >= 0)
			coord_lease_close(n->coord, lockfd);
		if (n->leader)
			delayed_note(n, name);
		index_note(n, t->request_id, SPOOL_DELAYED, NULL, NULL, t,
		    a->retry_at_ms);
		metrics_retry();
		log_task(LOG_LEVEL_INFO, "task.retry", t->request_id,
		    t->task_code, a->attempt, "%s: attempt %d %s (%s); retry "
		    "%d of %d in %lld ms", t->request_id, a->attempt,
		    task_outcome_name(a->outcome),
		    a->reason, a->attempt, retries, (long long)delay);
		record(n, RECORDS_RETRY, t->request_id, t, a, NULL, 0);
		return;
	}
	if (task_add_attempt(t, a) != 0)
		goto nomem;
	switch (a->outcome) {
	case TASK_OUTCOME_SUCCESS:
		status = "SUCCESS";
		dest = SPOOL_DONE;
		break;
	case TASK_OUTCOME_CANCELLED:
		status = "CANCELLED";
		dest = SPOOL_CANCELLED;
		break;
	default:
		status = "FAILED";
		dest = SPOOL_FAILED;
		code = a->outcome == TASK_OUTCOME_TIMEOUT ? "TIMEOUT" :
		    a->outcome == TASK_OUTCOME_LOST ? "LOST" :
		    a->outcome == TASK_OUTCOME_ERROR ? "HOOK_ERROR" :
		    a->signal > 0 ? "WORKER_SIGNAL" : "WORKER_EXIT";
		break;
	}
	memset(&ri, 0, sizeof(ri));
	ri.status = status;
	ri.failure_code = code;
	if (code != NULL) {
		snprintf(msg, sizeof(msg), "attempt %d of %d: %s", a->attempt,
		    retries + 1, a->reason);
		ri.failure_message = msg;
	}
	ri.hook_result = hook_result;
	ri.hook_result_len = hrlen;
	if (sl != NULL) {
		otail = stream_tail(&sl->out, sl->out.tail_cap,
		    &olen);
		etail = stream_tail(&sl->err, sl->err.tail_cap,
		    &elen);
	}
	ri.stdout_tail = otail;
	ri.stdout_len = olen;
	ri.stderr_tail = etail;
	ri.stderr_len = elen;
	ri.max_retries = retries;
	ri.fence = coord_lease_fence(n->coord, lockfd);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto nomem;
	c->srcfd = srcfd == n->sp.self ? -1 : dup(srcfd);
	if (c->srcfd < 0 && srcfd != n->sp.self) {
		buf_fini(&c->result);
		free(c);
		goto nomem;
	}
	c->from_self = srcfd == n->sp.self;
	c->lockfd = lockfd;
	c->attempt = a->attempt;
	c->dest = dest;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->id, sizeof(c->id), "%s", t->request_id);
	snprintf(c->code, sizeof(c->code), "%s", t->task_code);
	c->nattempts = (long)t->nattempts;
	buf_init(&c->result, 0);
	buf_init(&c->cb, 0);
	if (result_encode(t, &ri, &c->result) != 0) {
		buf_fini(&c->result);
		free(c);
		free(otail);
		free(etail);
		goto nomem;
	}
	free(otail);
	free(etail);
	metrics_task_finished(t->task_code, status);
	if (callback_prepare(&n->sp, t, c->result.data, c->result.len,
	    tstime_now_ms(), &c->cb) < 0)
		log_warn("%s: no callback delivery can be made", t->request_id);
	if (code != NULL)
		log_task(LOG_LEVEL_INFO, "task.failed", t->request_id,
		    t->task_code, a->attempt, "%s: %s after %zu attempt(s): %s",
		    t->request_id, status, t->nattempts, a->reason);
	else
		log_task(LOG_LEVEL_INFO, dest == SPOOL_DONE ? "task.success" :
		    "task.cancelled", t->request_id, t->task_code, a->attempt,
		    "%s: %s (attempt %d)", t->request_id, status, a->attempt);
	c->cancel_marker = a->outcome == TASK_OUTCOME_CANCELLED ||
	    (sl != NULL && sl->cancelled);
	/* Queue at the tail: commits_flush() runs once per loop pass. */
	{
		struct commit **pp = &n->commits;

		while (*pp != NULL)
			pp = &(*pp)->next;
		*pp = c;
		n->ncommits++;
	}
	return;
nomem:
	log_warn("%s: cannot conclude the attempt now (out of memory or "
	    "descriptors); left in active/ for recovery", t->request_id);
	if (lockfd >= 0)
		coord_lease_close(n->coord, lockfd);
}

/*
 * The daemon is a child subreaper (PR_SET_CHILD_SUBREAPER): a hook's
 * descendant that left its process group (setpgid, setsid, a double
 * fork) is re-parented to us when its parent dies, instead of escaping
 * to init.  Each such child is matched by its environment to the attempt
 * it came from: when that attempt is over, it is killed, so no process
 * of a finished attempt can overlap the next one.  id == NULL sweeps:
 * every stray whose attempt no longer runs here.  Costs one read of
 * /proc/thread-self/children (the main thread's) when there are none.
 */
static void
kill_strays(struct node *n, const char *id, int attempt)
{
	char path[64], list[8192];
	ssize_t len;
	int fd;

	/* The children of the calling (main) thread, the hooks' parent. */
	fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = read(fd, list, sizeof(list) - 1);
	close(fd);
	if (len <= 0)
		return;
	list[len] = '\0';
	for (char *p = list, *tok; (tok = strtok_r(p, " \n", &p)) != NULL;) {
		pid_t pid = (pid_t)atoi(tok);
		char env[16384], *rid = NULL, *att = NULL;
		int is_slot = 0, ours;

		for (long i = 0; i < n->nslots; i++)
			if (n->slots[i].used && n->slots[i].pid == pid)
				is_slot = 1;
		if (pid <= 1 || is_slot)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, env, sizeof(env) - 1);
		close(fd);
		if (len < 0)
			continue;
		env[len] = '\0';
		for (char *e = env; e < env + len; e += strlen(e) + 1) {
			if (strncmp(e, "TASKSPOOL_REQUEST_ID=", 21) == 0)
				rid = e + 21;
			else if (strncmp(e, "TASKSPOOL_ATTEMPT=", 18) == 0)
				att = e + 18;
		}
		if (id != NULL)
			ours = rid != NULL && att != NULL && strcmp(rid, id) ==
			    0 && atoi(att) == attempt;
		else {
			/* Sweep: kill unless its attempt still runs here. */
			ours = 1;
			for (long i = 0; rid != NULL && i < n->nslots; i++) {
				struct slot *sl = &n->slots[i];
				size_t l = strlen(rid);

				if (sl->used && strncmp(sl->name, rid, l) == 0 &&
				    strcmp(sl->name + l, ".json") == 0 &&
				    att != NULL && atoi(att) == sl->attempt)
					ours = 0;
			}
			if (rid == NULL && n->nrunning > 0)
				ours = 0;	/* untagged: cannot tell yet */
		}
		if (!ours)
			continue;
		log_info("killing process %d left behind by %s attempt %s "
		    "(it left the hook's process group)", (int)pid,
		    rid != NULL ? rid : "a finished", att != NULL ? att : "?");
		(void)kill(pid, SIGKILL);
		(void)kill(-pid, SIGKILL);	/* and its own group, if any */
	}
}

/* The hook of slot sl exited with wait status ws. */
static void
slot_exited(struct node *n, struct slot *sl, int ws)
{
	struct task_attempt a;
	int permanent = 0;
	char *hr = NULL;
	size_t hrlen = 0;
	struct task t;
	char name[SPOOL_NAME_MAX];
	int lockfd;

	/* Whatever the hook left behind in its group dies with it, and so
	 * does what left the group (see kill_strays). */
	(void)hook_kill_group(sl->pid, SIGKILL);
	{
		char sid[TASK_ID_MAX + 1];

		if (name_to_id(sl->name, sid) == 0)
			kill_strays(n, sid, sl->attempt);
		if (sl->fenced) {
			/* The file stays in active/<self>/, unlocked: the
			 * reaper concludes the attempt as LOST. */
			record_stale(n, sid, sl->attempt, coord_lease_fence(
			    n->coord, sl->lockfd), "killed by its node "
			    "(self-fencing)");
			work_reset(&n->work[sl - n->slots]);
			coord_lease_close(n->coord, sl->lockfd);
			sl->lockfd = -1;
			slot_free(n, sl);
			return;
		}
		if (n->quitting && !sl->cancelled && !sl->timed_out &&
		    WIFSIGNALED(ws) && (WTERMSIG(ws) == SIGTERM ||
		    WTERMSIG(ws) == SIGKILL)) {
			/* Killed by a forced stop of this daemon, not by its
			 * own fault: no attempt is used (with maxRetries 0 a
			 * LOST attempt would end the task).  The task goes
			 * back to incoming/ as it was claimed, like a hook that
			 * could not start; the rerun's logs replace this
			 * run's. */
			char nm[SPOOL_NAME_MAX];

			log_task(LOG_LEVEL_INFO, "task.requeued", sid,
			    sl->t.task_code, sl->attempt, "%s: attempt %d "
			    "stopped with the daemon; back to incoming/, no "
			    "attempt used", sid, sl->attempt);
			snprintf(nm, sizeof(nm), "%s", sl->name);
			work_reset(&n->work[sl - n->slots]);
			if (spool_move_excl(n->sp.self, nm,
			    n->sp.dir[SPOOL_INCOMING], nm) != 0)
				log_warn("%s: move back to incoming/ (recovered "
				    "as a lost attempt instead)", sid);
			coord_lease_close(n->coord, sl->lockfd);
			sl->lockfd = -1;
			slot_free(n, sl);
			return;
		}
	}
	stream_drain(n, sl, &sl->out, "out");
	stream_drain(n, sl, &sl->err, "err");
	memset(&a, 0, sizeof(a));
	a.attempt = sl->attempt;
	snprintf(a.node, sizeof(a.node), "%s", n->sp.node);
	a.start_ms = sl->start_ms;
	a.end_ms = tstime_now_ms();
	a.exit_code = -1;
	a.retry_at_ms = -1;
	if (WIFEXITED(ws)) {
		int code = WEXITSTATUS(ws);

		a.exit_code = code;
		if (code == 0) {
			a.outcome = TASK_OUTCOME_SUCCESS;
			snprintf(a.reason, sizeof(a.reason), "exit 0");
		} else if (code == 75) {
			a.outcome = TASK_OUTCOME_TEMPFAIL;
			snprintf(a.reason, sizeof(a.reason), "exit 75 "
			    "(EX_TEMPFAIL: retry)");
		} else if (code >= 64 && code <= 78) {
			a.outcome = TASK_OUTCOME_FAILED;
			permanent = 1;
			snprintf(a.reason, sizeof(a.reason), "exit %d "
			    "(sysexits: permanent failure, no retry)", code);
		} else {
			a.outcome = TASK_OUTCOME_FAILED;
			snprintf(a.reason, sizeof(a.reason), "exit %d", code);
		}
	} else {
		a.signal = WTERMSIG(ws);
		a.outcome = TASK_OUTCOME_FAILED;
		snprintf(a.reason, sizeof(a.reason), "killed by signal %d (%s)",
		    a.signal, strsignal(a.signal));
		{
			size_t l = strlen(a.reason);

			(void)hooklimit_explain(n->cfg, a.signal, sl->cpu_ms,
			    a.reason + l, sizeof(a.reason) - l);
		}
	}
	if (sl->timed_out) {
		a.outcome = TASK_OUTCOME_TIMEOUT;
		snprintf(a.reason, sizeof(a.reason), "timed out after %d s; "
		    "process group killed", sl->t.timeout_sec > 0 ?
		    sl->t.timeout_sec : (int)n->cfg->timeout_sec);
	}
	if (sl->cancelled) {
		a.outcome = TASK_OUTCOME_CANCELLED;
		permanent = 1;
		snprintf(a.reason, sizeof(a.reason), "cancelled while running");
	}
	if (sl->out.dropped > 0 || sl->err.dropped > 0) {
		size_t l = strlen(a.reason);

		if (sl->out.lost_err == 0 && sl->err.lost_err == 0)
			snprintf(a.reason + l, sizeof(a.reason) - l, "; log "
			    "capped, %lld bytes dropped", sl->out.dropped +
			    sl->err.dropped);
	}
	stream_lost_reason(sl, a.reason, sizeof(a.reason));
	/* The hook's own result, if it wrote valid JSON.  The result file
	 * is always looked for (a hook may restore the directory's mtime);
	 * the directory is emptied when its mtime moved or a result was
	 * there. */
	{
		struct workdir *w = &n->work[sl - n->slots];
		struct stat st;
		int fd = openat(w->fd, "result.json", O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		int notreg = fd < 0 && errno == ELOOP;	/* a symlink */
		int touched = work_touched(w) || fd >= 0 || notreg;

		if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
			notreg = 1;
		if (notreg) {
			size_t l = strlen(a.reason);

			snprintf(a.reason + l, sizeof(a.reason) - l, "; result "
			    "file ignored: not a regular file");
		} else if (fd >= 0) {
			if (st.st_size <= n->cfg->result_max_bytes) {
				struct buf rb;

				buf_init(&rb, (size_t)n->cfg->result_max_bytes);
				if (buf_read_fd(&rb, fd) == 0 && rb.len > 0 &&
				    result_json_ok(rb.data, rb.len)) {
					hr = rb.data;
					hrlen = rb.len;
				} else {
					size_t l = strlen(a.reason);

					snprintf(a.reason + l, sizeof(a.reason)
					    - l, "; result file ignored: not "
					    "valid JSON");
					buf_fini(&rb);
				}
			} else {
				size_t l = strlen(a.reason);

				snprintf(a.reason + l, sizeof(a.reason) - l,
				    "; result file ignored: over %ld bytes",
				    n->cfg->result_max_bytes);
			}
		}
		if (fd >= 0)
			close(fd);
		if (touched)
			work_reset(w);
	}
	t = sl->t;
	task_init(&sl->t);
	snprintf(name, sizeof(name), "%s", sl->name);
	lockfd = sl->lockfd;
	sl->lockfd = -1;
	node_conclude(n, &t, n->sp.self, name, lockfd, &a, permanent, hr,
	    hrlen, sl);
	free(hr);
	task_fini(&t);
	slot_free(n, sl);
}

static void
reap_children(struct node *n)
{
	for (;;) {
		int ws;
		struct rusage ru;
		pid_t pid = wait4(-1, &ws, WNOHANG, &ru);

		if (pid <= 0)
			return;
		for (long i = 0; i < n->nslots; i++)
			if (n->slots[i].used && n->slots[i].pid == pid) {
				/* The CPU time tells a SIGKILL of the CPU
				 * limit from others (hooklimit_explain). */
				n->slots[i].cpu_ms = (int64_t)(
				    ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
				    1000 + (ru.ru_utime.tv_usec +
				    ru.ru_stime.tv_usec) / 1000;
				slot_exited(n, &n->slots[i], ws);
				break;
			}
		/* Anything else (a re-parented grandchild when we are a
		 * subreaper or PID 1) is simply reaped. */
	}
}

static void
check_timeouts(struct node *n)
{
	int64_t now = tstime_mono_ms();

	for (long i = 0; i < n->nslots; i++) {
		struct slot *sl = &n->slots[i];

		if (!sl->used || sl->pid <= 0)
			continue;
		if (!sl->timed_out && !sl->cancelled &&
		    now >= sl->deadline_mono) {
			sl->timed_out = 1;
			sl->kill_mono = now + n->cfg->kill_grace_ms;
			log_info("%.*s: timeout; SIGTERM to process group %d",
			    (int)strlen(sl->name) - 5, sl->name, (int)sl->pid);
			(void)hook_kill_group(sl->pid, SIGTERM);
		} else if (sl->kill_mono > 0 && now >= sl->kill_mono) {
			sl->kill_mono = 0;
			log_info("%.*s: grace over; SIGKILL to process group "
			    "%d", (int)strlen(sl->name) - 5, sl->name,
			    (int)sl->pid);
			(void)hook_kill_group(sl->pid, SIGKILL);
		}
	}
}

/* Kill the hook of a task this node runs.  Returns 1 if it runs here. */
static int
cancel_running(struct node *n, const char *id)
{
	char file[SPOOL_NAME_MAX];
	int found = 0;

	snprintf(file, sizeof(file), "%s.json", id);
	for (long i = 0; i < n->nslots; i++) {
		struct slot *sl = &n->slots[i];

		if (!sl->used || strcmp(sl->name, file) != 0)
			continue;
		found = 1;
		if (sl->cancelled)
			continue;
		sl->cancelled = 1;
		sl->kill_mono = tstime_mono_ms() + n->cfg->kill_grace_ms;
		log_info("%s: cancel requested; SIGTERM to process group %d",
		    id, (int)sl->pid);
		(void)hook_kill_group(sl->pid, SIGTERM);
	}
	return found;
}

/*
 * Cancel a task that is still pending in incoming/ or delayed/: claim it
 * like any task (lock, verify, move into active/<self>/), then conclude
 * it as CANCELLED, which writes its result before the move into
 * cancelled/.  Returns 1 when done here, 0 when the task was not pending
 * (or someone else holds it: their claim sees the marker).
 */
static int
cancel_pending(struct node *n, const char *id)
{
	static const enum spool_dir from[] = { SPOOL_INCOMING, SPOOL_DELAYED };
	char file[SPOOL_NAME_MAX], why[512];

	(void)limits_mark_waiting(&n->sp, id, 0);
	snprintf(file, sizeof(file), "%s.json", id);
	for (size_t i = 0; i < 2; i++) {
		int dfd = n->sp.dir[from[i]], fd, mfd;
		struct task t;
		struct task_error te;
		struct task_attempt a;
		struct stat st;
		struct buf b;

		fd = spool_open_safe(dfd, file, TASK_FILE_MAX, &st, why,
		    sizeof(why));
		if (fd < 0 && fd_short(n, errno, "cancel")) {
			(void)nameset_add(&n->cancel_wait, id, NULL);
			return 1;	/* again when descriptors are back */
		}
		if (fd < 0)
			continue;
		if (coord_flock_verify(fd, dfd, file) != 0) {
			coord_lease_close(n->coord, fd);
			continue;
		}
		/* A claim like any other: under the claim marker, and a
		 * second copy of a task that runs or ran is a duplicate. */
		mfd = claimmark_take(&n->sp, id, n->sp.node, tstime_now_ms(),
		    NULL, NULL, 0);
		if (mfd < 0) {
			coord_lease_close(n->coord, fd);
			return 0;		/* looked at again later */
		}
		switch (other_copy(n, id, dfd, file, file, from[i] ==
		    SPOOL_DELAYED, why, sizeof(why))) {
		case 1:
			quarantine(n, dfd, file, why);
			claimmark_release(&n->sp, id, mfd);
			coord_lease_close(n->coord, fd);
			return 0;
		case 2:		/* a retry beside its stale copy: later */
			claimmark_release(&n->sp, id, mfd);
			coord_lease_close(n->coord, fd);
			(void)nameset_add(&n->cancel_wait, id, NULL);
			return 1;
		}
		task_init(&t);
		buf_init(&b, TASK_FILE_MAX);
		if (buf_read_fd(&b, fd) != 0 || task_decode(b.data != NULL ?
		    b.data : "", b.len, &t, &te) != 0 ||
		    lease_take(n, fd, id, (int)t.nattempts + 1) != 0 ||
		    spool_move_excl(dfd, file, n->sp.self, file) != 0) {
			/* Malformed files are the claim path's business. */
			claimmark_release(&n->sp, id, mfd);
			coord_lease_close(n->coord, fd);
			task_fini(&t);
			buf_fini(&b);
			return 0;
		}
		claimmark_release(&n->sp, id, mfd);
		buf_fini(&b);
		memset(&a, 0, sizeof(a));
		a.attempt = (int)t.nattempts + 1;
		snprintf(a.node, sizeof(a.node), "%s", n->sp.node);
		a.start_ms = -1;
		a.end_ms = tstime_now_ms();
		a.exit_code = -1;
		a.retry_at_ms = -1;
		a.outcome = TASK_OUTCOME_CANCELLED;
		snprintf(a.reason, sizeof(a.reason), "cancelled before it "
		    "started (was in %s/)", spool_dir_name(from[i]));
		node_conclude(n, &t, n->sp.self, file, fd, &a, 1, NULL, 0,
		    NULL);
		task_fini(&t);
		return 1;
	}
	return 0;
}

/*
 * A cancel marker state/cancel/<id> was seen: kill the hook if it runs
 * here, else cancel the task if it is pending, else drop a marker whose
 * task is finished or unknown for a day.
 */
static void
handle_cancel(struct node *n, const char *id)
{
	enum spool_dir where;
	struct stat st;

	(void)nameset_add(&n->cancels, id, NULL);
	if (cancel_running(n, id))
		return;
	if (claims_held(n)) {
		/* Cancelling a pending task claims it: later (cancel_more). */
		(void)nameset_add(&n->cancel_wait, id, NULL);
		return;
	}
	if (cancel_pending(n, id))
		return;
	if (spool_locate(&n->sp, id, &where, NULL) == 0) {
		if (where != SPOOL_DONE && where != SPOOL_FAILED &&
		    where != SPOOL_CANCELLED)
			return;		/* running elsewhere: its owner acts */
	} else if (fstatat(n->sp.cancel, id, &st, 0) != 0 ||
	    tstime_now_ms() / 1000 - st.st_mtim.tv_sec < 86400)
		return;			/* may not be published yet */
	(void)unlinkat(n->sp.cancel, id, 0);
	nameset_remove(&n->cancels, id);
}

/* The cancels deferred while claims were held, as far as they may go. */
static void
cancel_more(struct node *n)
{
	struct nameset_node *c;

	while (n->cancel_wait.head != NULL && !claims_held(n) &&
	    (c = nameset_pop(&n->cancel_wait)) != NULL) {
		handle_cancel(n, c->name);
		free(c);
	}
}

static void
scan_cancels(struct node *n)
{
	int fd;
	DIR *dp;
	struct dirent *de;

	if (n->sp.cancel < 0)
		return;
	fd = dup(n->sp.cancel);
	if (fd < 0 || (dp = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dp);
	while ((de = readdir(dp)) != NULL)
		if (spool_id_ok(de->d_name))
			handle_cancel(n, de->d_name);
	closedir(dp);
}

/* --- recovery and the reaper --- */

/*
 * Resolve an orphan: dirfd/name in active/<owner>/, whose flock we now
 * hold on fd.  A newer published copy wins; a written result completes
 * the terminal move; otherwise the attempt was lost and is concluded as
 * such (retry or FAILED).
 */
static void
recover_orphan(struct node *n, int dirfd, const char *owner,
    const char *name, int fd)
{
	static const enum spool_dir newer[] = { SPOOL_DONE, SPOOL_FAILED,
		SPOOL_CANCELLED };
	static const enum spool_dir pending[] = { SPOOL_DELAYED,
		SPOOL_INCOMING };
	char id[TASK_ID_MAX + 1], why[512], rname[TASK_ID_MAX + 8];
	struct task t;
	struct task_error te;
	struct task_attempt a;
	struct stat st;
	struct buf b;
	char *res;
	size_t rlen;

	if (name_to_id(name, id) != 0) {
		quarantine(n, dirfd, name, "file name: not <requestId>.json");
		coord_lease_close(n->coord, fd);
		return;
	}
	for (size_t i = 0; i < sizeof(newer) / sizeof(newer[0]); i++)
		if (fstatat(n->sp.dir[newer[i]], name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0) {
			log_info("%s: stale copy in active/%s/ removed (%s/ "
			    "has the newer one)", id, owner,
			    spool_dir_name(newer[i]));
			(void)unlinkat(dirfd, name, 0);
			(void)spool_sync_dir(&n->sp, dirfd);
			coord_lease_close(n->coord, fd);
			return;
		}
	/* A newer copy may already be running on another node. */
	{
		char other[65];

		if (spool_in_active(&n->sp, name, owner, other)) {
			log_info("%s: stale copy in active/%s/ removed (active/"
			    "%s/ runs the newer one)", id, owner, other);
			(void)unlinkat(dirfd, name, 0);
			(void)spool_sync_dir(&n->sp, dirfd);
			coord_lease_close(n->coord, fd);
			return;
		}
	}
	task_init(&t);
	buf_init(&b, TASK_FILE_MAX);
	if (fstat(fd, &st) != 0 || buf_read_fd(&b, fd) != 0) {
		log_warn("%s: read orphan", id);
		goto out;
	}
	if (task_decode(b.data != NULL ? b.data : "", b.len, &t, &te) != 0) {
		snprintf(why, sizeof(why), "%s: %s", te.field, te.rule);
		quarantine(n, dirfd, name, why);
		goto out;
	}
	snprintf(t.request_id, sizeof(t.request_id), "%s", id);
	/* A pending copy with more attempts than the orphan is its retry
	 * (published before the active/ copy is removed): the orphan is
	 * stale.  One with no more attempts is not newer: a second copy of
	 * the requestId (claimmark.h), which its claimant will find to be a
	 * duplicate; the orphan's attempt is recovered below. */
	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++) {
		if (copy_attempts(n->sp.dir[pending[i]], name) <=
		    (long)t.nattempts)
			continue;
		log_info("%s: stale copy in active/%s/ removed (%s/ has the "
		    "newer one)", id, owner, spool_dir_name(pending[i]));
		(void)unlinkat(dirfd, name, 0);
		(void)spool_sync_dir(&n->sp, dirfd);
		goto out;
	}
	/* Result already written: the terminal move was all that was left. */
	snprintf(rname, sizeof(rname), "%s.json", id);
	res = spool_read_file(n->sp.dir[SPOOL_RESULTS], rname, 64 << 20,
	    &rlen);
	if (res != NULL) {
		char status[16];
		size_t na;

		if (result_peek(res, rlen, status, &na) == 0 &&
		    na == t.nattempts + 1) {
			enum spool_dir dest = strcmp(status, "SUCCESS") == 0 ?
			    SPOOL_DONE : strcmp(status, "CANCELLED") == 0 ?
			    SPOOL_CANCELLED : SPOOL_FAILED;

			/* Its delivery may not have been written yet. */
			if (callback_enqueue(&n->sp, &t, res, rlen) != 0) {
				log_warn("%s: callback delivery", id);
				free(res);
				goto out;
			}
			/* Its record may have been lost with the crash. */
			record(n, RECORDS_RESULT, id, &t, NULL, res, rlen);
			free(res);
			if (renameat(dirfd, name, n->sp.dir[dest], name) == 0) {
				mark_dirty(n, dest);
				(void)spool_sync_dir(&n->sp, dirfd);
				log_info("%s: completed the interrupted move "
				    "to %s/", id, spool_dir_name(dest));
				if (coord_leases_expire(n->coord))
					(void)index_forget(n->coord, id);
			}
			goto out;
		}
		free(res);
		/* A damaged result is a missing one: the attempt is
		 * concluded as lost (run again, or FAILED) below. */
		(void)torn_result(n, id);
	}
	memset(&a, 0, sizeof(a));
	a.attempt = (int)t.nattempts + 1;
	snprintf(a.node, sizeof(a.node), "%s", owner);
	/* The claim rename set the file's ctime: the attempt's start. */
	a.start_ms = (int64_t)st.st_ctim.tv_sec * 1000 + st.st_ctim.tv_nsec /
	    1000000;
	a.end_ms = tstime_now_ms();
	a.exit_code = -1;
	a.retry_at_ms = -1;
	a.outcome = TASK_OUTCOME_LOST;
	snprintf(a.reason, sizeof(a.reason), "attempt lost: node %s died or "
	    "lost its lease (found by %s)", owner, n->sp.node);
	log_task(LOG_LEVEL_WARN, "task.lost", id, t.task_code, a.attempt,
	    "%s: attempt %d on node %s lost; recovering", id, a.attempt, owner);
	/* Whatever of that attempt still runs on this host (grandchildren
	 * outlive the hook's PDEATHSIG) dies before the task runs again. */
	{
		char t1[TASK_ID_MAX + 32], t2[TASK_CODE_MAX + 32];
		int k;

		snprintf(t1, sizeof(t1), "TASKSPOOL_REQUEST_ID=%s", id);
		snprintf(t2, sizeof(t2), "TASKSPOOL_NODE=%s", owner);
		if ((k = hook_kill_tagged(t1, t2)) > 0)
			log_warnx("%s: killed %d leftover process(es) of the "
			    "lost attempt", id, k);
	}
	{
		struct stat cs;

		if (n->sp.cancel >= 0 && fstatat(n->sp.cancel, id, &cs, 0) ==
		    0) {
			a.outcome = TASK_OUTCOME_CANCELLED;
			snprintf(a.reason, sizeof(a.reason), "cancelled; its "
			    "attempt on node %s was lost", owner);
		}
	}
	node_conclude(n, &t, dirfd, name, fd, &a, 0, NULL, 0, NULL);
	fd = -1;
out:
	if (fd >= 0)
		coord_lease_close(n->coord, fd);
	task_fini(&t);
	buf_fini(&b);
}

/* Recover every unlocked file of active/<owner>/ (dirfd). */
static void
recover_dir(struct node *n, int dirfd, const char *owner)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(dirfd)) == NULL) {
		if (dirfd == n->sp.self && fd_short(n, errno, "recovery"))
			n->recover_self = 1;
		return;
	}
	if (dirfd == n->sp.self)
		n->recover_self = 0;
	while ((de = readdir(dp)) != NULL) {
		int tf;

		if (de->d_name[0] == '.')
			continue;
		if (n->ncommits >= COMMITS_MAX || n->bp_err != 0) {
			/* Each recovered orphan holds a descriptor until its
			 * result is written: the rest waits (the reaper's next
			 * pass; our own, from the loop). */
			if (dirfd == n->sp.self)
				n->recover_self = 1;
			break;
		}
		if (dirfd == n->sp.self) {
			int busy = 0;

			for (long i = 0; i < n->nslots; i++)
				if (n->slots[i].used && strcmp(
				    n->slots[i].name, de->d_name) == 0)
					busy = 1;
			for (struct commit *c = n->commits; c; c = c->next)
				if (c->from_self && strcmp(c->name,
				    de->d_name) == 0)
					busy = 1;
			if (busy)
				continue;
		}
		tf = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		if (tf < 0 && fd_short(n, errno, "recovery")) {
			if (dirfd == n->sp.self)
				n->recover_self = 1;
			break;
		}
		if (tf < 0) {
			if (errno == ELOOP)
				quarantine(n, dirfd, de->d_name,
				    "file: is a symbolic link (not allowed)");
			continue;
		}
		{
			char oid[TASK_ID_MAX + 1], why[512];
			enum coord_status st;

			if (name_to_id(de->d_name, oid) != 0)
				oid[0] = '\0';
			st = coord_orphan_take(n->coord, tf, dirfd, de->d_name,
			    oid[0] != '\0' ? oid : "-", tstime_mono_ms(), why,
			    sizeof(why));
			if (st != COORD_OK) {
				close(tf);	/* its owner is alive */
				if (st == COORD_ERR)
					break;	/* cannot tell now */
				continue;
			}
		}
		recover_orphan(n, dirfd, owner, de->d_name, tf);
	}
	closedir(dp);
}

static void
reap_others(struct node *n)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(n->sp.dir[SPOOL_ACTIVE])) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		int nd;

		if (de->d_name[0] == '.' || strcmp(de->d_name, n->sp.node) == 0
		    || !spool_code_ok(de->d_name))
			continue;
		nd = openat(n->sp.dir[SPOOL_ACTIVE], de->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nd < 0)
			continue;
		recover_dir(n, nd, de->d_name);
		close(nd);
	}
	closedir(dp);
}

/*
 * Leader: remove what dead writers left in tmp/ (regular files untouched
 * for an hour; the work directories of live daemons are directories).
 */
static void
clean_tmp(struct node *n)
{
	int64_t now = tstime_now_ms();
	struct dirent *de;
	DIR *dp;

	if ((dp = spool_opendir(n->sp.dir[SPOOL_TMP])) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.' || fstatat(n->sp.dir[SPOOL_TMP],
		    de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    S_ISDIR(st.st_mode) || now - mtime_ms(&st) < 3600 * 1000)
			continue;
		if (unlinkat(n->sp.dir[SPOOL_TMP], de->d_name, 0) == 0)
			log_info("removed stale tmp/%s (a writer died before "
			    "publishing it)", de->d_name);
	}
	closedir(dp);
	/* Claim markers nobody holds (claimants that died mid-claim): the
	 * next claimant would take each over anyway; this is tidying. */
	{
		size_t k = claimmark_sweep(&n->sp, now, 60 * 1000);

		if (k > 0)
			log_info("removed %zu claim marker(s) of state/claims/ "
			    "left by claimants that died mid-claim", k);
	}
}

/* --- leader, heartbeat --- */

/* resrepair_step: a finished task's result was rebuilt. */
static void
repaired(void *arg, const struct resrepair_fix *f)
{
	struct node *n = arg;
	const char *id = f->task->request_id;

	log_task(LOG_LEVEL_WARN, "task.result_rebuilt", id,
	    f->task->task_code, (int)f->task->nattempts + 1, "%s: results/%s."
	    "json was %s; rebuilt from %s/%s.json%s%s", id, id, f->damage,
	    spool_dir_name(f->dir), id, f->kept[0] ? ", damaged copy kept "
	    "as corrupt/" : "", f->kept);
	/* The delivery, if none was made before the damage, and the
	 * record (MariaDB's row is corrected by the new envelope). */
	if (callback_enqueue_missing(&n->sp, f->task, f->result, f->len) != 0)
		log_warn("%s: callback delivery", id);
	else
		callback_sender_wake(n->cbs);
	record(n, RECORDS_RESULT, id, f->task, NULL, f->result, f->len);
}

static void
repair_failed(void *arg, const char *id, int e)
{
	errno = e;
	log_warn("%s: cannot repair its result", id);
}

/* Leader: one step of the results/ repair pass (resrepair.h), 256
 * task files at a time; a new pass every REPAIR_SCANS scan intervals:
 * a crash's torn results are found by the pass made when a daemon
 * becomes the leader, the periodic one is for hand edits and costs one
 * read and parse per finished task. */
static void
repair_step(struct node *n, int64_t now)
{
	if (resrepair_step(n->repair, 256, (int)n->cfg->max_retries,
	    tstime_now_ms(), repaired, repair_failed, n))
		n->next_repair = now;
	else
		n->next_repair = now + REPAIR_SCANS * n->cfg->scan_interval_ms;
}

static void
leader_tick(struct node *n)
{
	unsigned long long epoch;
	int r = coord_leader(n->coord, tstime_mono_ms(), &epoch);

	/* With expiring leases, what this node left in its own active/
	 * (self-fenced attempts) is recovered once their leases are gone. */
	if (coord_leases_expire(n->coord))
		recover_dir(n, n->sp.self, n->sp.node);
	if (r != 1) {
		if (n->leader) {
			log_warnx("node %s is no longer the leader (%s)",
			    n->sp.node, r == 0 ? "deposed: another node holds "
			    "the lock" : "coordination backend unreachable");
			n->leader = 0;
			scheduler_free(n->sched);
			n->sched = NULL;
			due_index_free(n->delayed);
			n->delayed = NULL;
		}
		return;
	}
	if (!n->leader) {
		n->leader = 1;
		n->next_repair = 0;	/* a repair pass at once */
		log_info("node %s is now the leader (%s lock, epoch %llu)",
		    n->sp.node, coord_kind(n->coord), epoch);
		due_index_free(n->delayed);
		n->delayed = due_index_new((uint64_t)tstime_now_ms());
		if (n->delayed == NULL)
			log_warn("delayed/ index");
		scan_delayed(n);
		scheduler_free(n->sched);
		n->sched = scheduler_new(&n->sp, n->cfg, tstime_now_ms());
		if (n->sched == NULL)
			log_warn("recurring jobs: scheduler not started");
		else {
			scheduler_scan(n->sched, tstime_now_ms());
			log_info("recurring jobs: %d loaded from jobs/",
			    scheduler_count(n->sched));
		}
	}
	reap_others(n);
}

static void
heartbeat(struct node *n)
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
	info.hooks_known = 1;
	memcpy(info.hooks, n->hooks, sizeof(info.hooks));
	if (coord_heartbeat(n->coord, &info, why, sizeof(why)) != 0)
		log_warnx("heartbeat: %s", why);
}

/* metrics/<node>.prom; stopped: a final write without spool gauges. */
static void
write_metrics(struct node *n, int stopped)
{
	struct metrics_node self = { n->nslots, n->nrunning, n->leader,
		stopped, n->bp_err, n->cfg->metrics_interval_ms };

	if (n->cfg->metrics_interval_ms > 0 && metrics_write(&n->sp,
	    tstime_now_ms(), &self) != 0)
		log_warn("metrics/%s.prom", n->sp.node);
}

/* --- events --- */

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
				scan_incoming(n);
				if (n->leader)
					scan_delayed(n);
				scan_cancels(n);
				continue;
			}
			if (ev->len == 0)
				continue;
			if (ev->wd == n->wd_incoming) {
				cand_add(n, ev->name, (ev->mask &
				    (IN_MOVED_TO | IN_CLOSE_WRITE)) != 0);
				n->route_dirty = 1;
			} else if (ev->wd == n->wd_queue && ev->name[0] != '.')
				cand_again(n, n->qself, ev->name, (ev->mask &
				    (IN_MOVED_TO | IN_CLOSE_WRITE)) != 0);
			else if (ev->wd == n->wd_delayed && n->leader)
				delayed_note(n, ev->name);
			else if (ev->wd == n->wd_jobs)
				n->jobs_dirty = 1;
			else if (ev->wd == n->wd_cancel &&
			    spool_id_ok(ev->name))
				handle_cancel(n, ev->name);
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

static void
reload_config(struct node *n)
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
					if (work_prepare(n, i) != 0)
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
	*n->cfg = c;
	log_set_level((enum log_level)log_level_parse(c.log_level));
	log_set_format((enum log_format)log_format_parse(c.log_format));
	log_info("configuration reloaded (%s)", c.source[0] ? c.source :
	    "defaults");
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
	if (n->claim_pause > now && (n->cand.head != NULL ||
	    n->qcand.head != NULL || n->cancel_wait.head != NULL ||
	    n->recover_self) && n->claim_pause < t)
		t = n->claim_pause;
	if (n->bp_err != 0 && n->bp_probe < t)
		t = n->bp_probe;
	t -= now;
	return t < 0 ? 0 : t > 60000 ? 60000 : t;
}

/*
 * node_id was not configured: take <host>-<yyyymmdd>-<nn>, the host name
 * (as config_finish chose it), the start date (UTC) and the first
 * sequence number 01..99 whose state/node.<id>.lock is free (held from
 * now on), so that two daemons of one host get distinct ids and logs
 * tell which day's incarnation ran what.  Returns 0 or a sysexits code.
 */
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

static int
setup(struct node *n)
{
	char why[512], lname[128];
	sigset_t mask;
	struct epoll_event ev;
	int rc;

	if (n->cfg->node_id_auto && (rc = auto_node_id(n)) != 0)
		return rc;
	log_set_node(n->cfg->node_id);	/* the id this incarnation uses */
	if (spool_open(&n->sp, n->cfg->spool, n->cfg->node_id,
	    (int)n->cfg->fsync, why, sizeof(why)) != 0) {
		log_warnx("%s", why);
		return EX_CONFIG;
	}
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
	coord_on_reestablished(n->coord, lease_reestablished, n);
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
		if (work_prepare(n, i) != 0) {
			log_warn("tmp/work.%s.%ld", n->sp.node, i);
			return EX_CANTCREAT;
		}
	if (nameset_init(&n->cand) != 0 || nameset_init(&n->qcand) != 0 ||
	    nameset_init(&n->waiting) != 0 ||
	    nameset_init(&n->hookcache) != 0 ||
	    nameset_init(&n->nohook) != 0 ||
	    nameset_init(&n->cancels) != 0 ||
	    nameset_init(&n->cancel_wait) != 0)
		return EX_OSERR;
	(void)hooks_rescan(n, 0);	/* before the first heartbeat */

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
	n->wake = wakeup_new(n->coord);
	return 0;
}

int
node_run(struct config *cfg, const char *config_path,
    const char *const *overrides, int noverrides)
{
	struct node node, *n = &node;
	struct epoll_event evs[64];
	int rc;

	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->config_path = config_path;
	n->overrides = overrides;
	n->noverrides = noverrides;
	n->sigfd = n->ep = n->ino = n->hooksfd = n->nodelock = n->qself = -1;
	n->wake_fd = -1;
	if ((rc = setup(n)) != 0)
		return rc;
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
	log_info("node %s started: spool %s, hooks %s, %ld slot(s), pid %d, "
	    "%s coordination", n->sp.node, cfg->spool, cfg->hooks_dir,
	    n->nslots, (int)getpid(), coord_kind(n->coord));
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
	recover_dir(n, n->sp.self, n->sp.node);
	wake_connect(n);
	leader_tick(n);
	scan_incoming(n);
	heartbeat(n);
	n->next_scan = tstime_mono_ms() + cfg->scan_interval_ms;
	n->next_reap = tstime_mono_ms() + cfg->reap_interval_ms;
	n->next_hb = tstime_mono_ms() + cfg->heartbeat_ms;
	n->next_metrics = tstime_mono_ms();
	n->next_lease = INT64_MAX;

	for (;;) {
		int nev, sigchld = 0;
		int64_t now;

		if (n->waiting.head != NULL && tstime_mono_ms() >=
		    n->next_wait) {
			(void)limits_requeue(&n->waiting, cfg->max_concurrent,
			    &n->cand, &n->qcand);
			n->next_wait = tstime_mono_ms() + 100;
		}
		bp_check(n);
		log_tick();
		if (n->recover_self && !n->draining && !claims_held(n))
			recover_dir(n, n->sp.self, n->sp.node);
		cancel_more(n);
		while (!n->draining && n->nrunning < n->nslots &&
		    (n->cand.head != NULL || n->qcand.head != NULL) &&
		    !claims_held(n)) {
			int q = n->qcand.head != NULL;	/* routed to us first */
			struct nameset_node *c = nameset_pop(q ? &n->qcand :
			    &n->cand);

			claim(n, q ? n->qself : n->sp.dir[SPOOL_INCOMING],
			    c->name, c->flags & CAND_ANNOUNCED);
			free(c);
		}
		if (commits_pending(n))
			commits_flush(n);
		flush_dirty(n);
		if (n->draining && n->nrunning == 0 && (n->commits == NULL ||
		    (n->quitting && tstime_mono_ms() >= n->quit_deadline))) {
			if (n->commits != NULL)
				log_warnx("stopping with results not yet "
				    "written; those tasks stay in active/%s/ and "
				    "are recovered at the next start",
				    n->sp.node);
			break;
		}
		if (n->quitting && tstime_mono_ms() >= n->quit_deadline) {
			for (long i = 0; i < n->nslots; i++)
				if (n->slots[i].used && n->slots[i].pid > 0)
					hook_kill_group(n->slots[i].pid,
					    SIGKILL);
		}
		nev = epoll_wait(n->ep, evs, 64, (int)next_wakeup(n));
		if (nev < 0 && errno != EINTR) {
			log_warn("epoll_wait");
			sleep(1);
			continue;
		}
		for (int i = 0; i < nev; i++) {
			uint64_t d = evs[i].data.u64;

			if (d == EV_SIGNAL)
				handle_signals(n, &sigchld);
			else if (d == EV_INOTIFY)
				handle_inotify(n);
			else if (d == EV_GROUPSYNC)
				commits_synced(n);	/* drains it, always */
			else if (d == EV_WAKEUP) {
				if (wakeup_read(n->wake, on_wake, n) < 0) {
					log_warnx("wake-up channel lost");
					n->wake_fd = -1;
				}
			}
			else {
				struct slot *sl = &n->slots[d >> 2];

				if (sl->used)
					stream_drain(n, sl, (d & 3) == 1 ?
					    &sl->out : &sl->err, (d & 3) == 1 ?
					    "out" : "err");
			}
		}
		if (sigchld)
			reap_children(n);
		if (n->reload) {
			reload_config(n);
			(void)hooks_rescan(n, 1);	/* and advertise it now */
			heartbeat(n);
		}
		check_timeouts(n);
		n->next_lease = coord_tick(n->coord, tstime_mono_ms(),
		    lease_lost, n);
		now = tstime_mono_ms();
		/* A leader resumed after a stop renews before it acts: it
		 * may have been deposed meanwhile (chaos: two leaders firing
		 * one forbid job). */
		if (n->leader && !n->draining &&
		    !coord_leader_fresh(n->coord, now))
			leader_tick(n);
		if (n->leader)
			promote_delayed(n);
		if (n->leader && !n->draining && n->route_dirty &&
		    now >= n->next_route) {
			n->route_dirty = 0;
			n->next_route = now + 20;	/* batch bursts */
			(void)router_pass(n->router, tstime_now_ms(),
			    now >= n->next_scan);
		}
		/* A draining leader fires no more jobs: its successor (or
		 * its restart) picks up from the saved progress. */
		if (n->leader && n->sched != NULL && !n->draining) {
			if (n->jobs_dirty) {
				n->jobs_dirty = 0;
				scheduler_scan(n->sched, tstime_now_ms());
			}
			unsigned long long fired = scheduler_published(n->sched);

			scheduler_tick(n->sched, tstime_now_ms(), tstime_mono_ms());
			if (scheduler_published(n->sched) != fired)
				wake_others(n, "incoming", NULL);
		}
		if (n->leader && !n->draining && n->repair != NULL &&
		    now >= n->next_repair)
			repair_step(n, now);
		if (now >= n->next_scan) {
			scan_incoming(n);
			scan_cancels(n);
			kill_strays(n, NULL, 0);
			n->jobs_dirty = 1;	/* safety net under inotify */
			n->next_scan = now + cfg->scan_interval_ms;
			if (n->leader && ++n->scans % 12 == 0) {
				scan_delayed(n);
				clean_tmp(n);
			}
		}
		if (now >= n->next_reap) {
			/* A draining daemon claims and reaps nothing, but the
			 * deadline still moves, or epoll would never sleep. */
			if (!n->draining)
				leader_tick(n);
			wake_connect(n);
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
			(void)hooks_rescan(n, ++n->hbs % 12 == 0);
			heartbeat(n);
			n->next_hb = now + cfg->heartbeat_ms;
		}
		if (now >= n->next_metrics) {
			write_metrics(n, 0);
			n->next_metrics = now + cfg->metrics_interval_ms;
		}
	}
	/* A batch in flight finishes; the directory fsyncs it did not
	 * report, and those still to do, are made here. */
	groupsync_free(n->gs);
	for (size_t i = 0; i < n->ngdirs; i++)
		n->dirty[n->gdir[i]] = 1;
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (n->gdirty[d])
			n->dirty[d] = 1;
	free(n->gitems);
	flush_dirty(n);
	n->leader = 0;		/* released at exit */
	write_metrics(n, 1);
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
			work_reset(&n->work[i]);
			close(n->work[i].fd);
		}
		(void)unlinkat(n->sp.dir[SPOOL_TMP], n->work[i].name,
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
	return 0;
}
