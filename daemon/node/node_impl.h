/*
 * node_impl.h — the node daemon's private interface, shared by the files
 * of node/ (node.c and node_*.c) and by nothing else: node/node.h is the
 * public one (node_run, for programs/taskspoold.c).
 *
 * Holds struct node (the daemon's one state, owned by node_run and
 * passed to every function), the slots (struct slot: a running hook and
 * the lease it holds), the work directories, the commits waiting for
 * the group commit (struct commit), and the functions one file of node/
 * offers the others, grouped by the file that defines them.
 *
 * Descriptors: a claimed task's lease is its file's descriptor (the
 * flock, coord.h); it is held by exactly one of a slot (sl->lockfd), a
 * commit (c->lockfd), or the function concluding it, and closed with
 * coord_lease_close.  Functions documented as taking lockfd over close
 * it on every path.
 */
#ifndef TASKSPOOL_NODE_IMPL_H
#define TASKSPOOL_NODE_IMPL_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "core/buf.h"
#include "core/drainmark.h"
#include "core/fairshare.h"
#include "core/nameset.h"
#include "core/task.h"
#include "records/records.h"
#include "spool/config.h"
#include "spool/groupsync.h"
#include "spool/hookset.h"
#include "spool/spool.h"

#define EV_SIGNAL	((uint64_t)-1)
#define EV_INOTIFY	((uint64_t)-2)
#define EV_WAKEUP	((uint64_t)-3)
#define EV_GROUPSYNC	((uint64_t)-4)
#define CAND_ANNOUNCED	1	/* writer closed or renamed it in */
/* How far back into the candidates a late arrival (older mtime than the
 * newest candidate) is placed by its mtime: beyond, it waits at the
 * tail, so a large unordered backlog (a start-up rescan) costs a bounded
 * walk per file. */
#define CAND_ORDER_WALK	4096
#define REPAIR_SCANS	720	/* results/ repair pass: every 720 scan
				 * intervals (an hour by default) */
#define ENV_MAX		24
#define ENV_BUF		8192
#define ENV_PARENTS_MAX	2048	/* TASKSPOOL_PARENT_RESULTS bytes */
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
	char traceparent[TRACEPARENT_LEN + 1];	/* the attempt's span: a
					 * child of t.traceparent; "" none */
};

struct workdir {
	int fd;				/* workdirs/<node>.<slot> */
	struct timespec mtime;		/* as left clean */
	const struct hook_cred *cred;	/* its hooks' account: emptied and
					 * read as that account */
	char name[96];
};

/* A terminal transition waiting for its result to be written. */
/* What a conclusion needs to raise the onFailure alert (node_alert.c). */
struct node_alert_req {
	char code[TASK_CODE_MAX + 1];	/* onFailure, or the config's; "" */
	int mode;			/* enum alert_mode */
	int is_alert;			/* the task has alertFor: no alert */
	int done;			/* raised, or none due, once */
	char job[TASK_CODE_MAX + 1];	/* jobCode; "" = none */
	char traceparent[TRACEPARENT_LEN + 1];	/* the task's; "" = none */
};

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
	struct node_alert_req alert;	/* onFailure (node_alert.c) */
};

struct node {
	struct config *cfg;
	const char *config_path;
	const char *const *overrides;	/* command-line key=value */
	int noverrides;
	struct spool sp;
	char spool_id[48];		/* state/spool-id (node.c,
					 * spool_identity): TASKSPOOL_SPOOL_ID
					 * of its hooks, so that a recovery
					 * kills leftovers of this spool only */
	int hooksfd;
	int ep, sigfd, ino;
	int wd_incoming, wd_delayed, wd_cancel, wd_jobs, wd_queue;
	int wd_blocked, wd_ended[3];	/* blocked/; done/ failed/ cancelled/ */
	struct depidx *deps;		/* leader: blocked/'s reverse index */
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
	struct fairshare fair_cand, fair_q;	/* the flows of cand and
					 * qcand (core/fairshare.h) */
	struct nameset waiting;		/* over maxConcurrent (maxconc.h) */
	struct nameset waitnames;	/* their file names alone: a rescan
					 * leaves them to limits_requeue */
	int64_t next_wait;		/* mono ms: retry waiting/ names */
	struct nameset ratewait;	/* over a rate limit: "<code>/<file>",
					 * key = mono ms it may start */
	int64_t next_rate;		/* mono ms: the earliest of them */
	struct nameset ratepark;	/* their file names, key = the same
					 * instant: rescans skip them */
	int rate_bad_logged;		/* a bad state/rates/ file was said */
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
	int drained;			/* an operator's drain marker is there */
	char drain_reason[DRAINMARK_REASON_MAX + 1];	/* ... its reason */
	int64_t drain_next;		/* mono ms: next read of the marker */
	int64_t batch_next;		/* mono ms: next batch pass (leader) */
	int64_t next_scan, next_reap, next_hb, quit_deadline;
	int64_t next_metrics;		/* mono ms: metrics/<node>.prom */
	int64_t watchdog_ms;		/* systemd's WatchdogSec=, 0 none */
	int64_t next_watchdog;		/* mono ms: next WATCHDOG=1 */
	int64_t claim_pause;		/* mono ms: no claims before this */
	int64_t next_lease;		/* mono ms: next lease renewal */
	int coord_down;			/* backend unreachable was logged */
	unsigned long long claimed, finished, scans;
	unsigned long hbs;		/* heartbeats sent */
};

/*
 * In every function below, n is the daemon's state (borrowed, the one
 * struct node of node_run); times named *_ms or mono are milliseconds,
 * mono ones on the monotonic clock (tstime_mono_ms).  None of them
 * blocks on a hook; none exits the daemon on a transient error.
 */

/* --- node.c: start, stop, shared spool helpers --- */

/* Append a history record (records.h) of kind k for request id (t, a,
 * env of len bytes as records_append takes them, all borrowed); a
 * failure is logged and may start back-pressure, never fatal. */
void node_record(struct node *n, enum records_kind k, const char *id,
    const struct task *t, const struct task_attempt *a, const char *env,
    size_t len);

/* "<id>.json" → id in out (TASK_ID_MAX + 1 bytes); 0, or -1 when name
 * is not such a file name or the id is not a valid one. */
int node_name_to_id(const char *name, char *out);

/* The mtime of st in ms since the epoch. */
int64_t node_mtime_ms(const struct stat *st);

/* Directory d of the spool is to be fsynced by node_flush_dirty. */
void node_mark_dirty(struct node *n, enum spool_dir d);

/* fsync the directories marked dirty (and active/<self>/ when
 * n->dirty_self); a failure is logged.  Once per loop pass. */
void node_flush_dirty(struct node *n);

/* Move dirfd/name to corrupt/ with reason (logged with a safe name,
 * counted in the metrics); ENOENT (gone meanwhile) is silent. */
void node_quarantine(struct node *n, int dirfd, const char *name,
    const char *reason);

/* Write metrics/<node>.prom (when metrics_interval_ms > 0); stopped: the
 * final write without spool gauges.  A failure is logged. */
void node_write_metrics(struct node *n, int stopped);

/* --- node_pressure.c: back-pressure and descriptors --- */

/*
 * A write into the spool failed with e (what: the file or directory, for
 * the log).  ENOSPC, EDQUOT and EROFS mean the spool cannot take writes:
 * back-pressure starts — no claims (which would run hooks whose results
 * cannot be written) until a probe write succeeds (node_bp_check).
 * Returns 1 when e was one of those, else 0 (the caller's own handling
 * applies).
 */
int node_spool_full(struct node *n, int e, const char *what);

/* node_alert.c: run hooks/_on_task_failed for a task concluded FAILED
 * (tp: its traceparent or ""; result: its envelope; both borrowed);
 * best-effort, errors logged. */
void node_alert_hook(struct node *n, const char *id, const char *code,
    const char *tp, const void *result, size_t len);

/* node_alert.c: fill r from the task t and the config (onFailure,
 * onFailureMode, on_failure, on_failure_mode); see there. */
void node_alert_prepare(const struct node *n, const struct task *t,
    struct node_alert_req *r);

/* node_alert.c: publish the alert task the conclusion of c raises, if
 * any, before its terminal move.  Returns 0, or -1 (retry later). */
int node_alert_conclude(struct node *n, struct commit *c);

/* node_alert.c: the same for a move a crash interrupted (node_recover.c);
 * res: the durable envelope (borrowed).  Returns 0 or -1. */
int node_alert_interrupted(struct node *n, const struct task *t,
    enum spool_dir dest, const char *res, size_t len);

/*
 * While in back-pressure, once a second: publish PROBE_BYTES into state/
 * by the writer protocol (tmp + fsync + rename) and remove it.  When that
 * works, claims resume.
 */
void node_bp_check(struct node *n);

/*
 * e is EMFILE or ENFILE (what: the failed call): no claims for a second
 * while what is held finishes and gives its descriptors back; one
 * warning per 10 s.  Returns 1 for those errors, else 0.
 */
int node_fd_short(struct node *n, int e, const char *what);

/*
 * Whether new claims wait (1) or not (0): of pending tasks, of pending
 * tasks to cancel, of orphans to recover.  Each would hold a descriptor
 * until its result is written (COMMITS_MAX, back-pressure, a pause).
 */
int node_claims_held(const struct node *n);

/* --- node_coord.c: leases, heartbeats, the index, wake-ups --- */

/*
 * Lease request id for attempt on fd, whose flock is held.  Returns 0, or
 * -1: another node's lease (a copy runs or is being reaped there), or the
 * coordination backend is unreachable (n->coord_down set, logged once).
 */
int node_lease_take(struct node *n, int fd, const char *id, int attempt);

/*
 * End the lease on fd of an attempt that ran (coord_lease_close: the
 * task's flock, its Redis lease, its max_concurrent and per-key slots;
 * a claim that did not start closes its own with coord_lease_close, or
 * a task waiting for its key behind a free code slot would be tried
 * again at once, again and again).  When it held a slot and
 * tasks wait for one here, they are tried again at the loop's next pass
 * (LIMITS_FREED_MS: before its claims) instead of at the next poll, so that a slot freed on this node goes to them in claim
 * order before newer arrivals (README.md, "Concurrency limits").
 */
#define LIMITS_FREED_MS	0
void node_lease_end(struct node *n, int fd);

/*
 * What a fenced attempt (its lease lost, fencing token fence) ended with
 * (what, for the log) goes to logs/<id>/<attempt>.stale, never into
 * results/: the reaper concludes that attempt as LOST.  Best effort (a
 * missing record loses nothing).
 */
void node_record_stale(struct node *n, const char *id, int attempt,
    long long fence, const char *what);

/*
 * coord_tick's report (arg: the struct node): the lease on fd is lost or
 * could not be renewed in time.  Self-fencing: the hook holding it is
 * killed at once (its whole process group) and will not be concluded; a
 * queued commit is dropped by node_commits_flush.
 */
void node_lease_lost(void *arg, int fd);

/*
 * coord_tick's notice (arg unused): Redis had lost the lease of id
 * (FLUSHALL, a restart or failover without the data) and the renewal set
 * it again, with fencing token fence greater than old; the hook runs on
 * (issue 11 item 2).  Logs only.
 */
void node_lease_reestablished(void *arg, const char *id, long long old,
    long long fence);

/* Index (index.h) that id is now in d (state NULL: the directory's
 * state), on node (NULL: none), not before nb ms (-1: none); t NULL
 * keeps the indexed code and attempts.  Cluster mode only; best effort. */
void node_index_note(struct node *n, const char *id, enum spool_dir d,
    const char *state, const char *node, const struct task *t, int64_t nb);

/* Tell the other daemons (wakeup.h) that dir/name (name NULL: dir) has
 * work.  Best effort: the rescans find it anyway. */
void node_wake_others(struct node *n, const char *dir, const char *name);

/* wakeup_read's callback (arg: the struct node): path (borrowed,
 * "incoming/<name>", "queue/<node>/<name>", "delayed/<name>", and
 * "done|failed|cancelled/<name>" from a daemon that concluded a task)
 * is noted as inotify would note it. */
void node_on_wake(void *arg, const char *path);

/* (Re)subscribe to the wake-up channel when not connected and put its
 * socket in epoll; what was published meanwhile is found by a scan. */
void node_wake_connect(struct node *n);

/* Publish this node's heartbeat (coord_node: slots, counters, leader,
 * the hooks it has); a failure is logged (coord retries next time). */
void node_heartbeat(struct node *n);

/* --- node_drain.c: the operator's drain --- */

/*
 * Read this node's drain marker (spool/drain.h) when DRAIN_POLL_MS have
 * passed since the last read, or now when force; on a change set
 * n->drained and n->drain_reason, log it, write the heartbeat and bring
 * the metrics forward.  A marker this host cannot read keeps the state
 * (a warning).  The claim loop claims nothing while n->drained.
 */
void node_drain_poll(struct node *n, int force);

/* --- node_batch.c: the leader's completion of batches --- */

/*
 * As leader, at most every BATCH_POLL_MS: each closed batch not yet
 * completed whose members are all terminal (spool/batchdir.h) gets its
 * onComplete task <batchId>.complete (once: exclusive, and not made
 * again when it exists anywhere), its callback delivery
 * <batchId>.batch, then its completed mark.  Failures are logged and
 * tried again next pass.
 */
void node_batch_pass(struct node *n);

/* --- node_loop.c: the event loop --- */

/*
 * The event loop: work, sleep in epoll until the next deadline or an
 * event, dispatch, then the reaping of hooks, a reload, timeouts, the
 * lease renewals, the leader's pass and the periodic duties.  Returns
 * when the drain is over (SIGTERM/SIGINT and every hook done).
 */
void node_loop(struct node *n);

/* --- node_claim.c: candidates and the claim --- */

/* name (borrowed) of incoming/ is a candidate for a claim (announced:
 * its writer closed or renamed it in); dot-files and names parked for
 * lack of a hook are not. */
void node_cand_add(struct node *n, const char *name, int announced);

/* Again later: name in dfd (incoming/ or queue/<self>/). */
void node_cand_again(struct node *n, int dfd, const char *name,
    int announced);

/* Every name of incoming/ and queue/<self>/ becomes a candidate; a
 * route pass is due. */
void node_scan_incoming(struct node *n);

/*
 * The number of finished attempts the task file name in dirfd holds, or
 * -1 when it cannot be read or decoded (it is then not called newer).
 */
long node_copy_attempts(int dirfd, const char *name);

/*
 * Whether another copy of request id (file name final) exists, the claim
 * marker being held (claimmark.h): one in some node's active/ (claimed,
 * running or being concluded), or — having left active/ — one waiting in
 * delayed/ (a retry is published there before the active/ copy is
 * removed; not looked at when the copy at hand is the delayed/ one:
 * from_delayed) or finished (its result is written before the move out
 * of active/).  Looked at in that order, so a copy concluding meanwhile
 * is always seen.  The copy at hand is name in dirfd.  Returns 1 with
 * the reason for corrupt/ in why (whylen bytes); 2 when the copy at hand
 * has more attempts than the one in active/<node>/: it is that task's
 * retry, published before its owner removes the stale active/ copy (the
 * retry crash state of spool-layout/README.md; the owner may be stopped
 * or dead), so it is neither a duplicate nor to be claimed yet — it
 * waits until the owner, or recovery rule 1, removes the stale copy (why
 * says so, for the log); else 0.
 */
int node_other_copy(struct node *n, const char *id, int dirfd,
    const char *name, const char *final, int from_delayed, char *why,
    size_t whylen);

/*
 * Try to claim dfd/name, dfd being incoming/ or queue/<self>/.
 * announced: the writer closed or renamed it in, so a parse failure is
 * final (else it may still be being written).  Outcomes: the hook
 * started (or the attempt concluded), the task delayed, parked,
 * quarantined, or left for a later pass; errors are logged.  See
 * node_claim.c for the steps and the fence rule.
 */
void node_claim(struct node *n, int dfd, const char *name, int announced);

/*
 * The candidates waiting for a rate limit (n->ratewait, README.md
 * "Execution rate limits") whose instant has come at now_mono are
 * candidates again (incoming/ or queue/<self>/ as they came): of those
 * waiting for a per-code limit, at most its burst per code and pass,
 * oldest requestId first (the others are tried one interval later); of
 * those waiting for a per-key limit, all.  n->next_rate becomes the
 * earliest instant left (INT64_MAX when none).
 */
void node_rate_requeue(struct node *n, int64_t now_mono);

/* --- node_hooks.c: the hooks this node has --- */

/*
 * Whether hooks_dir/code is a regular executable file (1) or not (0).
 * Positive answers are cached for a second per code (the claim path runs
 * this per task); negative ones are always checked again.
 */
int node_hook_ok(struct node *n, const char *code);

/*
 * Read hooks_dir again (hookset.h) for the list the heartbeat
 * advertises.  When it changed, the incoming/ names parked for lack of
 * a hook (n->nohook) become candidates again, so a hook that appears
 * gets its tasks; all: do that anyway (the periodic pass that forgets
 * names claimed elsewhere meanwhile).  Returns 1 when the list changed.
 */
int node_hooks_rescan(struct node *n, int all);

/* --- node_stream.c: a hook's stdout and stderr --- */

/* s starts closed with a tail ring of tail bytes (none when 0 or out of
 * memory: the result then has no tail). */
void node_stream_init(struct stream *s, size_t tail);

/* Close s's pipe and log file, free its ring; s may be finished twice. */
void node_stream_fini(struct stream *s);

/* The tail ring of s (of capacity cap) in a new linear buffer (caller
 * frees) of *len bytes; NULL with *len 0 when empty or out of memory. */
char *node_stream_tail(const struct stream *s, size_t cap, size_t *len);

/* Append "; stdout lost: logs/ write failed: <error>" (and stderr) to
 * reason (of size len) for the streams of sl that lost output. */
void node_stream_lost_reason(const struct slot *sl, char *reason,
    size_t len);

/* Read what is available on s, a pipe of the hook of sl, into its tail
 * and logs/<id>/<attempt>.<ext> (ext "out" or "err"); close it at EOF.
 * Never blocks (the pipe is non-blocking). */
void node_stream_drain(struct node *n, struct slot *sl, struct stream *s,
    const char *ext);

/* --- node_slots.c: hook slots --- */

/*
 * Each slot i has a persistent scratch directory tmp/work.<node>.<i>,
 * the hook's working directory and $TASKSPOOL_WORK_DIR, made (or emptied)
 * here; its descriptor is held in n->work[i].fd until the daemon stops.
 * After an attempt it is emptied only when its mtime shows something was
 * created in it, so a hook that writes nothing costs one fstat, not a
 * mkdir and rmdir.  Returns 0, or -1 with errno set.
 */
int node_work_prepare(struct node *n, long i);

/* Empty the work directory w and note its mtime as clean. */
void node_work_reset(struct workdir *w);

/*
 * Start attempt t->nattempts + 1 of the task claimed as active/<self>/name
 * (lock held on lockfd, taken over; t's allocations are stolen, t is
 * left empty).  The caller checked n->nrunning < n->nslots.  On failure
 * to start, the task goes back to incoming/ (the node's trouble) or the
 * attempt is concluded at once (ERROR), so the task is never stranded.
 */
void node_start_hook(struct node *n, struct task *t, const char *name,
    int lockfd);

/*
 * The daemon is a child subreaper (PR_SET_CHILD_SUBREAPER): a hook's
 * descendant that left its process group (setpgid, setsid, a double
 * fork) is re-parented to us when its parent dies, instead of escaping
 * to init.  Each such child is matched by its environment to the attempt
 * it came from: when that attempt is over, it is killed, so no process
 * of a finished attempt can overlap the next one.  id == NULL sweeps:
 * every stray whose attempt no longer runs here; else the strays of
 * attempt of id.  Costs one read of /proc/thread-self/children (the
 * main thread's) when there are none.
 */
void node_kill_strays(struct node *n, const char *id, int attempt);

/* After SIGCHLD: wait for every exited child; a slot's hook is
 * concluded (slot_exited), anything else is simply reaped. */
void node_reap_children(struct node *n);

/* Hooks over their deadline get SIGTERM (to the process group), and
 * SIGKILL kill_grace_ms after a SIGTERM of a timeout or cancel. */
void node_check_timeouts(struct node *n);

/* --- node_conclude.c: concluding an attempt, the group commit --- */

/* The maxRetries of t, or the configured default when t has none. */
int node_effective_retries(const struct node *n, const struct task *t);

/* The group commit batch in flight, if any, is done: advance its
 * commits (written results move on; failed ones are retried). */
void node_commits_synced(struct node *n);

/* Whether commits or directory fsyncs wait for node_commits_flush(). */
int node_commits_pending(struct node *n);

/* Once per loop pass: drop the commits whose lease was lost, move those
 * whose result is durable into their terminal directory, and start the
 * next group commit batch with the results still to write. */
void node_commits_flush(struct node *n);

/*
 * Record attempt a of task t (file srcfd/name, flock held on lockfd, which
 * this function takes over; t borrowed, its request_id set from name)
 * and move the task on: retry into delayed/ with backoff, or the
 * terminal directory with its result (queued for the group commit).
 * permanent forbids a retry.  hook_result (hrlen bytes, borrowed, may be
 * NULL) is the hook's own result; sl (may be NULL) supplies the output
 * tails.  A lost lease makes the attempt stale (no outcome); out of
 * memory leaves the task in active/ for recovery (logged).
 */
void node_conclude(struct node *n, struct task *t, int srcfd,
    const char *name, int lockfd, struct task_attempt *a, int permanent,
    const char *hook_result, size_t hrlen, const struct slot *sl);

/* --- node_depend.c: dependencies (blocked/) --- */

/* Leader: blocked/name was written or renamed in (inotify): released,
 * cancelled (DEPENDENCY_NEVER_SATISFIED) or indexed to wait. */
void node_deps_note(struct node *n, const char *name);

/* Leader: "<id>.json" reached a terminal directory: the dependents it
 * lets be decided are queued for node_deps_work. */
void node_deps_ended(struct node *n, const char *name);

/*
 * Leader: decide (release or cancel) up to max of the dependents queued
 * by node_deps_ended, oldest first.  Returns how many were decided (0
 * when none waits, or not the leader, or draining).  The loop calls it
 * with 1 while a slot is free, claiming in between, so that the first
 * released start at once (node_loop.c).
 */
size_t node_deps_work(struct node *n, size_t max);

/* Dependents decided per pass once no slot is free: released ahead of
 * the slots, more per pass amortizing the directory fsyncs. */
#define DEPS_DECIDE_BUSY	16

/* 1 when dependents wait in the queue of node_deps_work (the loop then
 * does not sleep), else 0. */
int node_deps_pending(const struct node *n);

/* Leader: the index rebuilt from a scan of blocked/ (at promotion, after
 * an inotify overflow, every 12 scans), each task decided. */
void node_deps_scan(struct node *n);

/* Leader, each scan interval: the indexed parents that ended unseen by
 * inotify (on another host) are handled as node_deps_ended. */
void node_deps_poll(struct node *n);

/* The index freed (leadership lost, exit). */
void node_deps_stop(struct node *n);

/*
 * The claim path's check of t (decoded from dfd/name): a task with
 * dependsOn and no releasedBy is moved into blocked/ (renamed, or for a
 * body without requestId written there whole and the drop removed), or
 * quarantined when a parent is nowhere in the spool.  Returns 0 (not
 * such a task: claim it), 1 (moved), -1 (quarantined, or again later).
 */
int node_deps_divert(struct node *n, int dfd, const char *name,
    const struct task *t);

/*
 * Before a hook of t starts in work directory w (path wdir): each
 * parent's result envelope copied from results/ into
 * wdir/parents/<id>.json (README.md, "Dependencies"), and their paths,
 * colon-separated, into list (len bytes; "" when they do not fit, the
 * hook then reads the directory).  Returns how many were copied (0 for
 * a task without dependsOn).  Best effort: a copy that fails is left
 * out.
 */
size_t node_deps_parents(struct node *n, struct workdir *w, const char *wdir,
    const struct task *t, char *list, size_t len);

/* --- node_cancel.c: cancel markers --- */

/*
 * A cancel marker state/cancel/<id> was seen: kill the hook if it runs
 * here, else cancel the task if it is pending, else drop a marker whose
 * task is finished or unknown for a day.  Deferred (n->cancel_wait)
 * while claims are held.
 */
void node_handle_cancel(struct node *n, const char *id);

/*
 * Fill *a as the attempt of task t (claimed by n) that ends CANCELLED
 * without starting: the next attempt number, this node, no start, ended
 * now, no exit status, no retry; a->reason is "" for the caller to set.
 */
void node_attempt_unstarted(const struct node *n, const struct task *t,
    struct task_attempt *a);

/* The cancels deferred while claims were held, as far as they may go. */
void node_cancel_more(struct node *n);

/* node_handle_cancel for every marker of state/cancel/. */
void node_scan_cancels(struct node *n);

/* --- node_hold.c: hold markers (coord/hold.h) --- */

/*
 * Claim of t (dfd/name, its requestId's file name final; flock and
 * claim marker held): when t has a hold marker, move it into hold/ as
 * final instead of running it (a copy already there: this one is a
 * duplicate, quarantined).  Returns 1 when t is not to be claimed (held,
 * or again later), 0 when it has no marker.
 */
int node_hold_claim(struct node *n, int dfd, const char *name,
    const char *final, const struct task *t);

/*
 * The directory the retry of task id goes to: SPOOL_HOLD when it has a
 * hold marker (its retry is held, the marker stays as the record), else
 * SPOOL_DELAYED.
 */
enum spool_dir node_hold_retry_dir(struct node *n, const char *id);

/* Task id ended terminal: its hold marker, if any, is removed. */
void node_hold_ended(struct node *n, const char *id);

/* --- node_recover.c: recovery and the reaper --- */

/*
 * The result of unfinished task id is damaged (a crash before its
 * conclusion, resrepair.h): keep it in corrupt/ and remove it, so that
 * the task runs again or is concluded.  Returns 1 when a damaged result
 * was moved away (or is gone), 0 when results/<id>.json is a valid
 * result (or cannot be read now).
 */
int node_torn_result(struct node *n, const char *id);

/* Recover every unlocked file of active/<owner>/ (dirfd, borrowed): its
 * owner's lease is gone (coord_orphan_take), so the attempt is resolved
 * (stale copy, interrupted move, or lost).  Stops early while claims are
 * held (n->recover_self notes the rest of our own). */
void node_recover_dir(struct node *n, int dirfd, const char *owner);

/* Leader: node_recover_dir for every other node's active/<node>/. */
void node_reap_others(struct node *n);

/* --- node_leader.c: leader duties --- */

/*
 * The leader indexes every delayed/ file by its due time (the file's
 * mtime, set by whoever wrote it) on a timing wheel, fed by inotify and by
 * a scan when it becomes leader; promotion happens at the due instant.
 * name is a file of delayed/ (gone: removed from the index).
 */
void node_delayed_note(struct node *n, const char *name);

/* node_delayed_note for every file of delayed/. */
void node_scan_delayed(struct node *n);

/* Take or renew the leader lock: on becoming the leader the delayed/
 * index, the scheduler and a repair pass start; on losing it they stop.
 * The leader reaps the other nodes' orphans; every node recovers its own
 * self-fenced files when leases expire. */
void node_leader_tick(struct node *n);

/*
 * Leader: remove what dead writers left in tmp/ (regular files untouched
 * for an hour; the work directories of live daemons are directories),
 * and claim markers nobody holds.
 */
void node_clean_tmp(struct node *n);

/*
 * Leader: what it runs each pass at now (mono ms): its lock renewed
 * first after a stop, due delayed/ tasks promoted, a route pass when
 * incoming/ changed, the recurring jobs, a repair step.  Does nothing
 * on a node that is not the leader.
 */
void node_leader_pass(struct node *n, int64_t now);

/* --- node_reload.c: SIGHUP --- */

/* Re-read the configuration (config_path, then the command-line
 * overrides) and apply what may change while running; what needs a
 * restart is kept (logged).  A bad file keeps the old configuration. */
void node_reload(struct node *n);

/* --- node.c: readiness (sd_notify(3), spool/sdnotify.h) --- */

/* Tell systemd the daemon is ready: READY=1 with STATUS= (node, slots,
 * coordination) once the spool, the locks and the coordination backend
 * are set up, and again after a reload (which sent RELOADING=1).  Does
 * nothing outside systemd; a socket that refuses it is logged. */
void node_ready(struct node *n);

#endif
