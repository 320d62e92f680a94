/*
 * node_slots — the hook slots: a slot per running hook (struct slot)
 * with its work directory workdirs/<node>.<slot>; starting a hook
 * (slot_take, hook_env, hook_spawn, start_failed), its timeouts, the
 * reaping of exited hooks and of processes that left their group
 * (node_kill_strays), and what an exited hook's status and result file
 * make of the attempt (slot_exited_early, slot_outcome, slot_result),
 * handed to node_conclude.
 *
 * Invariants: a slot holds its task's lease (sl->lockfd) from the start
 * of the hook until its conclusion; completion is decided by waiting on
 * the hook process, never by EOF on its pipes, and when the hook exits
 * what is left of its process group is killed.  A hook that cannot start
 * for the node's reasons (descriptors, memory, a hook gone) uses no
 * attempt: the task goes back to incoming/.  A fenced slot (lease lost)
 * ends with no outcome.  Writes only its work directories.
 *
 * With hook_user (hookcred.h) a work directory is the daemon's, group
 * hook_group, mode 2770: the hook writes there, and the daemon empties
 * it and reads its result file with the hook's filesystem identity
 * (setfsuid), so whatever the hook made there (a 0700 directory, a
 * symbolic link, a hard link) gives the daemon no more than the hook
 * itself has.
 *
 * Longest: node_start_hook (about 90 lines) keeps the descriptors of
 * the spawn (stdin memfd, two pipes) and their one cleanup path in one
 * function; node_kill_strays (about 70) is one walk over /proc.
 */
#include "node/node_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/priority.h"
#include "core/buf.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "coord/maxconc.h"
#include "spool/hook.h"
#include "spool/hookcred.h"
#include "spool/hooklimit.h"
#include "spool/hookset.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "core/nameset.h"
#include "spool/readfd.h"
#include "core/result.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/traceparent.h"
#include "core/tstime.h"

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
 * never following symbolic links.  A directory its hook left without
 * permissions for its owner (chmod 000, 0500) gets u+rwx first: the
 * caller acts as the hook's account (work_clean), so that is a change
 * the hook could have made itself.  Returns the number of entries that
 * could not be removed (0: empty).
 */
static long
clean_dir(int dfd, int depth)
{
	DIR *dp;
	struct dirent *de;
	long left = 0;

	if (depth > 0)		/* one the hook made: r-x is not enough */
		(void)fchmod(dfd, S_IRWXU);
	if ((dp = spool_opendir(dfd)) == NULL)
		return 1;
	while ((de = readdir(dp)) != NULL) {
		int sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0
		    || unlinkat(dfd, de->d_name, 0) == 0)
			continue;
		if (depth >= 64) {
			left++;
			continue;
		}
		sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 && errno == EACCES &&
		    fchmodat(dfd, de->d_name, S_IRWXU, 0) == 0)
			sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			left++;
			continue;
		}
		left += clean_dir(sub, depth + 1);
		close(sub);
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) != 0)
			left++;
	}
	closedir(dp);
	return left;
}

/* Empty w's directory as its hooks' account (the daemon's when none);
 * what stays is logged. */
static void
work_clean(struct workdir *w)
{
	struct hookcred_saved s;
	long left = -1;

	if (hookcred_enter(w->cred, HOOKCRED_USER, &s) == 0)
		left = clean_dir(w->fd, 0);
	hookcred_leave(&s);
	if (left != 0)
		log_warnx("workdirs/%s: %s; the next hook starts with what is "
		    "left there", w->name, left < 0 ? "cannot act as the "
		    "hooks' account to empty it" : "not emptied (an entry "
		    "that cannot be removed)");
}

/*
 * With hook_user: the hook user, in neither the daemon's group nor the
 * spool's, must pass through the spool root and workdirs/ (o+x; spools made
 * before privilege separation have the root 2750).  Adds the x where we
 * own the directory, as taskspool init now sets it.  Returns 0, or -1
 * (EACCES) after a warning naming the command to run.
 */
static int
work_reachable(struct node *n)
{
	const int fds[2] = { n->sp.root, n->sp.work };
	const char *names[2] = { "", "/workdirs" };

	for (int k = 0; k < 2; k++) {
		struct stat st;

		if (fstat(fds[k], &st) != 0)
			return -1;
		if (st.st_mode & S_IXOTH)
			continue;
		if (st.st_uid == geteuid() && fchmod(fds[k], (st.st_mode &
		    07777) | S_IXOTH) == 0) {
			log_info("%s%s: others may now pass through (o+x), "
			    "for hook_user %s", n->sp.path, names[k],
			    n->cfg->hookcred.user);
			continue;
		}
		log_warnx("%s%s: hook_user %s cannot pass through it; run: "
		    "chmod o+x %s%s", n->sp.path, names[k],
		    n->cfg->hookcred.user, n->sp.path, names[k]);
		errno = EACCES;
		return -1;
	}
	return 0;
}

int
node_work_prepare(struct node *n, long i)
{
	struct workdir *w = &n->work[i];
	const struct hook_cred *hc = &n->cfg->hookcred;
	struct hookcred_saved s;
	struct stat st;
	int rc = 0;

	snprintf(w->name, sizeof(w->name), "%s.%ld", n->sp.node, i);
	w->cred = hc;
	if (mkdirat(n->sp.work, w->name, 0750) != 0 && errno != EEXIST)
		return -1;
	w->fd = openat(n->sp.work, w->name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (w->fd < 0)
		return -1;
	clean_dir(w->fd, 0);	/* what the daemon itself left there */
	if (fstat(w->fd, &st) != 0)
		return -1;
	if (hc->active && i == 0 && work_reachable(n) != 0)
		return -1;
	if (hc->active) {
		/* Group hook_group, rwx for it, set-group-ID so what the hook
		 * makes stays in its group.  With our fsgid = that group the
		 * owner may chgrp and keep S_ISGID without CAP_CHOWN. */
		if (st.st_uid != geteuid()) {
			errno = EPERM;	/* not ours: cannot set it up */
			return -1;
		}
		if (hookcred_enter(hc, HOOKCRED_GROUP, &s) != 0)
			return -1;
		if ((st.st_gid != hc->gid && fchown(w->fd, (uid_t)-1, hc->gid)
		    != 0) || fchmod(w->fd, 02770) != 0)
			rc = -1;
		hookcred_leave(&s);
		if (rc != 0)
			return -1;
		work_clean(w);	/* what a hook left there */
		if (fstat(w->fd, &st) != 0)
			return -1;
	}
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

void
node_work_reset(struct workdir *w)
{
	struct stat st;

	work_clean(w);
	if (fstat(w->fd, &st) == 0)
		w->mtime = st.st_mtim;
}

static void
slot_free(struct node *n, struct slot *sl)
{
	node_stream_fini(&sl->out);
	node_stream_fini(&sl->err);
	task_fini(&sl->t);
	memset(sl, 0, sizeof(*sl));
	sl->out.fd = sl->err.fd = sl->out.logfd = sl->err.logfd = -1;
	sl->lockfd = -1;
	n->nrunning--;
}

/*
 * A free slot for attempt t->nattempts + 1 of the task claimed as
 * active/<self>/name (lease on lockfd): taken, with t's allocations
 * (stolen: t is left empty), its streams and its deadline.
 */
static struct slot *
slot_take(struct node *n, struct task *t, const char *name, int lockfd)
{
	struct slot *sl = NULL;

	for (long i = 0; i < n->nslots; i++)
		if (!n->slots[i].used) {
			sl = &n->slots[i];
			break;
		}
	if (sl == NULL)
		abort();	/* callers check nrunning < nslots */
	memset(sl, 0, sizeof(*sl));
	sl->used = 1;
	n->nrunning++;
	sl->lockfd = lockfd;
	snprintf(sl->name, sizeof(sl->name), "%s", name);
	sl->t = *t;			/* steals t's allocations */
	task_init(t);
	sl->attempt = (int)sl->t.nattempts + 1;
	/* The attempt is a span of the task's trace (README.md, "Trace
	 * context"); a parent that no longer parses leaves it "". */
	if (sl->t.traceparent != NULL &&
	    traceparent_child_fresh(sl->t.traceparent, sl->traceparent) != 0)
		sl->traceparent[0] = '\0';
	node_stream_init(&sl->out, (size_t)n->cfg->tail_bytes);
	node_stream_init(&sl->err, (size_t)n->cfg->tail_bytes);
	sl->start_ms = tstime_now_ms();
	sl->start_mono = tstime_mono_ms();
	sl->deadline_mono = sl->start_mono + 1000LL * (sl->t.timeout_sec > 0 ?
	    sl->t.timeout_sec : n->cfg->timeout_sec);
	return sl;
}

/*
 * The hook's environment (README.md, "The hook contract") for the
 * attempt of sl, request id, into envp (ENV_MAX entries, NULL-ended)
 * over envbuf (ENV_BUF bytes); wdir is its work directory, rfile its
 * result file.  Returns 0, or -1 with errno E2BIG when it does not fit.
 */
static int
hook_env(struct node *n, const struct slot *sl, const char *id,
    char **envp, char *envbuf, const char *wdir, const char *rfile)
{
	char num[64], when[TSTIME_BUF];
	const char *val;
	size_t off = 0;
	int ne = 0;

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
	snprintf(num, sizeof(num), "%d", node_effective_retries(n, &sl->t) + 1);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_MAX_ATTEMPTS", num);
	env_put(envp, &ne, envbuf, &off, "TASKSPOOL_NODE", n->sp.node);
	if (n->spool_id[0] != '\0')
		env_put(envp, &ne, envbuf, &off, "TASKSPOOL_SPOOL_ID",
		    n->spool_id);
	snprintf(num, sizeof(num), "%lld", coord_lease_fence(n->coord,
	    sl->lockfd));
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
	if (sl->traceparent[0] != '\0') {
		char tid[33];

		traceparent_trace_id(sl->traceparent, tid);
		env_put(envp, &ne, envbuf, &off, "TRACEPARENT",
		    sl->traceparent);
		env_put(envp, &ne, envbuf, &off, "TASKSPOOL_TRACE_ID", tid);
	}
	if (sl->t.depends.n > 0) {	/* node_depend.c */
		char plist[ENV_PARENTS_MAX];
		char pdir[CONFIG_PATH_MAX + SPOOL_NAME_MAX + 56];

		(void)node_deps_parents(n, &n->work[sl - n->slots], wdir,
		    &sl->t, plist, sizeof(plist));
		snprintf(pdir, sizeof(pdir), "%s/parents", wdir);
		env_put(envp, &ne, envbuf, &off, "TASKSPOOL_PARENTS_DIR", pdir);
		env_put(envp, &ne, envbuf, &off, "TASKSPOOL_PARENT_RESULTS",
		    plist);
	}
	if (env_put(envp, &ne, envbuf, &off, "TASKSPOOL_WORK_DIR", wdir)) {
		errno = E2BIG;
		return -1;
	}
	envp[ne] = NULL;
	return 0;
}

/*
 * The hook of sl (request id, hook file path) could not start (error e;
 * failed_child: the child that failed its execve, or -1; step: where the
 * child failed).  The node's trouble (descriptors, memory, a hook gone,
 * hook_user it could not become, its work directory) hands the task
 * back to incoming/ with no attempt used; else the attempt is concluded
 * at once as ERROR.  The slot is freed either way.
 */
static void
start_failed(struct node *n, struct slot *sl, const char *id,
    const char *path, int e, pid_t failed_child, enum hook_step step)
{
	int lockfd = sl->lockfd;
	struct task_attempt a;
	int node_step = step == HOOK_STEP_CRED || step == HOOK_STEP_CHDIR;

	if (node_step)
		log_warnx("%s: cannot %s: %s", id, step == HOOK_STEP_CRED ?
		    "become hook_user for the hook (setgroups/setresgid/"
		    "setresuid/capset)" : "enter the hook's work directory",
		    strerror(e));

	/* A hook removed since node_hook_ok() said yes is the node's trouble
	 * too: the task goes back for a node that has it. */
	if (!node_step && (e == ENOENT || e == EACCES)) {
		nameset_remove(&n->hookcache, sl->t.task_code);
		if (!node_hook_ok(n, sl->t.task_code) &&
		    node_hooks_rescan(n, 0))
			node_heartbeat(n);
	}
	/* An execve ENOMEM under hook_limit_as_bytes is the limit's doing:
	 * the hook's error (below), not a requeue. */
	if (node_step || ((e == EMFILE || e == ENFILE || e == ENOMEM ||
	    e == EAGAIN || ((e == ENOENT || e == EACCES) &&
	    !hookset_has(n->hooks, sl->t.task_code))) && !(e == ENOMEM &&
	    failed_child > 0 && n->cfg->hook_limit_as_bytes > 0))) {
		/* The node's trouble, not the task's: no attempt is used.
		 * Hand the task back to incoming/ and claim nothing more for
		 * a second (fewer hooks run until resources come back). */
		char nm[SPOOL_NAME_MAX];

		log_task(LOG_LEVEL_WARN, "task.requeued", id, sl->t.task_code,
		    sl->attempt, "%s: cannot start hook now (%s); back to "
		    "incoming/, claims paused for 1 s", id, strerror(e));
		snprintf(nm, sizeof(nm), "%s", sl->name);
		node_work_reset(&n->work[sl - n->slots]);
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
	memcpy(a.traceparent, sl->traceparent, sizeof(a.traceparent));
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
		node_work_reset(&n->work[sl - n->slots]);
		slot_free(n, sl);
		/* An exec error is the hook's: final. */
		node_conclude(n, &tt, n->sp.self, nm, lockfd, &a, 1, NULL, 0,
		    NULL);
		task_fini(&tt);
	}
}

void
node_start_hook(struct node *n, struct task *t, const char *name, int lockfd)
{
	struct slot *sl;
	char id[TASK_ID_MAX + 1], path[CONFIG_PATH_MAX + TASK_CODE_MAX + 2];
	char envbuf[ENV_BUF];
	char rfile[CONFIG_PATH_MAX + SPOOL_NAME_MAX + 64];
	char wdir[CONFIG_PATH_MAX + SPOOL_NAME_MAX + 40];
	char *envp[ENV_MAX], *argv[2];
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, in = -1;
	pid_t pid, failed_child = -1;
	struct hook_spec spec;
	struct hook_rlimit rlim[HOOKLIMIT_MAX];
	struct epoll_event ev;
	enum hook_step step = HOOK_STEP_NONE;
	int e, keep[2];

	sl = slot_take(n, t, name, lockfd);
	node_name_to_id(name, id);
	snprintf(wdir, sizeof(wdir), "%s/workdirs/%s", n->sp.path,
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
	if (hook_env(n, sl, id, envp, envbuf, wdir, rfile) != 0)
		goto fail;
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
	spec.cred = &n->cfg->hookcred;
	spec.failed_step = &step;
	/* The hook's tree holds the limit slots too: a kill -9 of this
	 * daemon does not free them while a leftover runs. */
	spec.keep_fds = keep;
	spec.nkeep = coord_limit_fds(n->coord, lockfd, keep);
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
	{
		char tid[33];

		traceparent_trace_id(sl->traceparent, tid);
		log_task(LOG_LEVEL_INFO, "task.running", id, sl->t.task_code,
		    sl->attempt, "%s: attempt %d started, pid %d%s%s", id,
		    sl->attempt, (int)pid, tid[0] != '\0' ? " trace=" : "",
		    tid);
	}
	metrics_attempt_started(sl->t.task_code, sl->t.not_before_ms >= 0 ?
	    sl->t.not_before_ms : sl->t.trigger_ms >= 0 ? sl->t.trigger_ms :
	    sl->t.created_ms, sl->start_ms);
	if (sl->attempt == 1)
		metrics_priority_wait(sl->t.priority >= 0 ? sl->t.priority :
		    PRIORITY_DEFAULT, sl->t.not_before_ms >= 0 ?
		    sl->t.not_before_ms : sl->t.trigger_ms >= 0 ?
		    sl->t.trigger_ms : sl->t.created_ms, sl->start_ms);
	log_debug("%s: attempt %d started, pid %d", id, sl->attempt, (int)pid);
	{
		/* The attempt starting now, with its span for the
		 * task_attempt row (records.h: RECORDS_RUNNING). */
		struct task_attempt run;

		memset(&run, 0, sizeof(run));
		run.attempt = sl->attempt;
		snprintf(run.node, sizeof(run.node), "%s", n->sp.node);
		run.start_ms = sl->start_ms;
		run.end_ms = run.retry_at_ms = -1;
		run.exit_code = -1;
		memcpy(run.traceparent, sl->traceparent,
		    sizeof(run.traceparent));
		node_record(n, RECORDS_RUNNING, id, &sl->t, &run, NULL, 0);
	}
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
	start_failed(n, sl, id, path, e, failed_child, step);
}

void
node_kill_strays(struct node *n, const char *id, int attempt)
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
		struct hookcred_saved hs;
		int is_slot = 0, ours, system_hook = 0;

		for (long i = 0; i < n->nslots; i++)
			if (n->slots[i].used && n->slots[i].pid == pid)
				is_slot = 1;
		if (pid <= 1 || is_slot)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
		/* A hook_user process's environ is readable by its own
		 * fsuid only (ptrace access mode PTRACE_MODE_READ_FSCREDS). */
		if (hookcred_enter(&n->cfg->hookcred, HOOKCRED_USER, &hs) != 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		hookcred_leave(&hs);
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
			else if (strncmp(e, "TASKSPOOL_SYSTEM_HOOK=", 22) == 0)
				system_hook = 1;
		}
		if (system_hook)
			continue;	/* _on_task_failed (node_alert.c) */
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

/*
 * The first step when the hook of sl exited (wait status ws): what is
 * left of its process group, and what left the group, is killed.
 * Returns 1 when the attempt ends here with no outcome, the slot freed:
 * fenced (its lease lost: the file stays in active/<self>/ for the
 * reaper) or killed by a forced stop of this daemon (back to incoming/,
 * no attempt used); else 0.
 */
static int
slot_exited_early(struct node *n, struct slot *sl, int ws)
{
	char sid[TASK_ID_MAX + 1] = "";

	/* Whatever the hook left behind in its group dies with it, and so
	 * does what left the group (see node_kill_strays). */
	(void)hook_kill_group(sl->pid, SIGKILL);
	if (node_name_to_id(sl->name, sid) == 0)
		node_kill_strays(n, sid, sl->attempt);
	if (sl->fenced) {
		/* The file stays in active/<self>/, unlocked: the
		 * reaper concludes the attempt as LOST. */
		node_record_stale(n, sid, sl->attempt, coord_lease_fence(
		    n->coord, sl->lockfd), "killed by its node "
		    "(self-fencing)");
		node_work_reset(&n->work[sl - n->slots]);
		coord_lease_close(n->coord, sl->lockfd);
		sl->lockfd = -1;
		slot_free(n, sl);
		return 1;
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
		node_work_reset(&n->work[sl - n->slots]);
		if (spool_move_excl(n->sp.self, nm,
		    n->sp.dir[SPOOL_INCOMING], nm) != 0)
			log_warn("%s: move back to incoming/ (recovered "
			    "as a lost attempt instead)", sid);
		coord_lease_close(n->coord, sl->lockfd);
		sl->lockfd = -1;
		slot_free(n, sl);
		return 1;
	}
	return 0;
}

/*
 * The attempt of sl from the hook's wait status ws (README.md, "The
 * hook contract": 0 success, 75 retry, 64..78 permanent, else a
 * failure), then a timeout, a cancel and lost or capped output.  Fills
 * *a; *permanent set when no retry is allowed.
 */
static void
slot_outcome(struct node *n, const struct slot *sl, int ws,
    struct task_attempt *a, int *permanent)
{
	memset(a, 0, sizeof(*a));
	a->attempt = sl->attempt;
	memcpy(a->traceparent, sl->traceparent, sizeof(a->traceparent));
	snprintf(a->node, sizeof(a->node), "%s", n->sp.node);
	a->start_ms = sl->start_ms;
	a->end_ms = tstime_now_ms();
	a->exit_code = -1;
	a->retry_at_ms = -1;
	if (WIFEXITED(ws)) {
		int code = WEXITSTATUS(ws);

		a->exit_code = code;
		if (code == 0) {
			a->outcome = TASK_OUTCOME_SUCCESS;
			snprintf(a->reason, sizeof(a->reason), "exit 0");
		} else if (code == 75) {
			a->outcome = TASK_OUTCOME_TEMPFAIL;
			snprintf(a->reason, sizeof(a->reason), "exit 75 "
			    "(EX_TEMPFAIL: retry)");
		} else if (code >= 64 && code <= 78) {
			a->outcome = TASK_OUTCOME_FAILED;
			*permanent = 1;
			snprintf(a->reason, sizeof(a->reason), "exit %d "
			    "(sysexits: permanent failure, no retry)", code);
		} else {
			a->outcome = TASK_OUTCOME_FAILED;
			snprintf(a->reason, sizeof(a->reason), "exit %d", code);
		}
	} else {
		a->signal = WTERMSIG(ws);
		a->outcome = TASK_OUTCOME_FAILED;
		snprintf(a->reason, sizeof(a->reason), "killed by signal %d "
		    "(%s)", a->signal, strsignal(a->signal));
		{
			size_t l = strlen(a->reason);

			(void)hooklimit_explain(n->cfg, a->signal, sl->cpu_ms,
			    a->reason + l, sizeof(a->reason) - l);
		}
	}
	if (sl->timed_out) {
		a->outcome = TASK_OUTCOME_TIMEOUT;
		snprintf(a->reason, sizeof(a->reason), "timed out after %d s; "
		    "process group killed", sl->t.timeout_sec > 0 ?
		    sl->t.timeout_sec : (int)n->cfg->timeout_sec);
	}
	if (sl->cancelled) {
		a->outcome = TASK_OUTCOME_CANCELLED;
		*permanent = 1;
		snprintf(a->reason, sizeof(a->reason), "cancelled while "
		    "running");
	}
	if (sl->out.dropped > 0 || sl->err.dropped > 0) {
		size_t l = strlen(a->reason);

		if (sl->out.lost_err == 0 && sl->err.lost_err == 0)
			snprintf(a->reason + l, sizeof(a->reason) - l, "; log "
			    "capped, %lld bytes dropped", sl->out.dropped +
			    sl->err.dropped);
	}
	node_stream_lost_reason(sl, a->reason, sizeof(a->reason));
}

/*
 * The hook's own result, if it wrote valid JSON to result.json in the
 * work directory of sl: *hr (new, caller frees) and *hrlen, else NULL;
 * why a result file was ignored is appended to a->reason.  The result
 * file is always looked for (a hook may restore the directory's mtime);
 * the directory is emptied when its mtime moved or a result was there.
 */
static void
slot_result(struct node *n, struct slot *sl, struct task_attempt *a,
    char **hr, size_t *hrlen)
{
	struct workdir *w = &n->work[sl - n->slots];
	struct hookcred_saved hs;
	struct stat st;
	int fd = -1, notreg, notown = 0, touched;

	/* Opened as the hook: no more than it can read itself. */
	if (hookcred_enter(w->cred, HOOKCRED_USER, &hs) == 0)
		fd = openat(w->fd, "result.json", O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
	hookcred_leave(&hs);
	notreg = fd < 0 && errno == ELOOP;	/* a symlink */
	touched = work_touched(w) || fd >= 0 || notreg;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
		notreg = 1;
	/* A hard link to a file the daemon's own groups may read (the
	 * daemon keeps them under setfsuid) is not the hook's result. */
	else if (fd >= 0 && w->cred->active && st.st_uid != w->cred->uid)
		notown = 1;
	if (notown) {
		size_t l = strlen(a->reason);

		snprintf(a->reason + l, sizeof(a->reason) - l, "; result "
		    "file ignored: not owned by hook_user %s", w->cred->user);
	} else if (notreg) {
		size_t l = strlen(a->reason);

		snprintf(a->reason + l, sizeof(a->reason) - l, "; result "
		    "file ignored: not a regular file");
	} else if (fd >= 0) {
		if (st.st_size <= n->cfg->result_max_bytes) {
			struct buf rb;

			buf_init(&rb, (size_t)n->cfg->result_max_bytes);
			if (buf_read_fd(&rb, fd) == 0 && rb.len > 0 &&
			    result_json_ok(rb.data, rb.len)) {
				*hr = rb.data;
				*hrlen = rb.len;
			} else {
				size_t l = strlen(a->reason);

				snprintf(a->reason + l, sizeof(a->reason)
				    - l, "; result file ignored: not "
				    "valid JSON");
				buf_fini(&rb);
			}
		} else {
			size_t l = strlen(a->reason);

			snprintf(a->reason + l, sizeof(a->reason) - l,
			    "; result file ignored: over %ld bytes",
			    n->cfg->result_max_bytes);
		}
	}
	if (fd >= 0)
		close(fd);
	if (touched)
		node_work_reset(w);
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

	if (slot_exited_early(n, sl, ws))
		return;
	node_stream_drain(n, sl, &sl->out, "out");
	node_stream_drain(n, sl, &sl->err, "err");
	slot_outcome(n, sl, ws, &a, &permanent);
	slot_result(n, sl, &a, &hr, &hrlen);
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

void
node_reap_children(struct node *n)
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

void
node_check_timeouts(struct node *n)
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
