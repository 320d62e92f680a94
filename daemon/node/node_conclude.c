/*
 * node_conclude — concluding an attempt: a retry into delayed/ with
 * backoff (conclude_retry), or the terminal move with its result
 * (commit_new, then the group commit of groupsync.h: results/ written
 * and fsynced in batches, then the rename into done|failed|cancelled/
 * and the callback delivery published first).
 *
 * Invariants: the next state is published before the previous copy is
 * removed (delayed/<id> before the unlink of active/<self>/<id>;
 * results/<id>.json durable before the rename into the terminal
 * directory), so a task is never in done|failed|cancelled/ without a
 * durable result.  A commit holds the task's lease (c->lockfd) until its
 * move is done; one whose lease is lost before its result is written is
 * dropped (a stale attempt), one whose result cannot be written stays
 * queued and is retried every second, never acknowledged without it.
 *
 * Longest: node_conclude (about 100 lines) stays one function: the
 * checks, the retry-or-terminal choice and the result's fields read as
 * one sequence, with one out-of-memory exit that closes the lease.
 */
#include "node/node_impl.h"

#include <errno.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backoff.h"
#include "core/buf.h"
#include "callback/callback.h"
#include "callback/callback_sender.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "spool/groupsync.h"
#include "coord/index.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "core/nameset.h"
#include "core/result.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/traceparent.h"

static uint32_t
rand32(void)
{
	uint32_t r;

	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (uint32_t)tstime_mono_ms() * 2654435761u;
	return r;
}

int
node_effective_retries(const struct node *n, const struct task *t)
{
	return t->max_retries >= 0 ? t->max_retries : (int)n->cfg->max_retries;
}

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
			(void)node_spool_full(n, e, "outbox/callbacks/");
			c->next_try_mono = tstime_mono_ms() + 1000;
			return -1;
		}
		buf_reset(&c->cb);
		callback_sender_wake(n->cbs);
	}
	/* The alert task too is published before the move (O_EXCL). */
	if (node_alert_conclude(n, c) != 0) {
		c->next_try_mono = tstime_mono_ms() + 1000;
		return -1;
	}
	if (renameat(c->from_self ? n->sp.self : c->srcfd, c->name,
	    n->sp.dir[c->dest], c->name) == 0) {
		if (c->dest == SPOOL_FAILED)	/* once: this move did it */
			node_alert_hook(n, c->id, c->code,
			    c->alert.traceparent, c->result.data,
			    c->result.len);
	} else if (errno != ENOENT) {
		int e = errno;

		if (!c->warned_move)
			log_warn("%s: move to %s/ (retried every second)",
			    c->id, spool_dir_name(c->dest));
		(void)node_spool_full(n, e, spool_dir_name(c->dest));
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
	/* The leader on another host sees the end now, not at its next
	 * poll: its dependents are released at once (node_depend.c). */
	if (!n->leader)
		node_wake_others(n, spool_dir_name(c->dest), c->name);
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
		node_lease_end(n, c->lockfd);
	if (c->srcfd >= 0)
		close(c->srcfd);
	buf_fini(&c->result);
	buf_fini(&c->cb);
	free(c);
}

void
node_commits_synced(struct node *n)
{
	int derr[GROUPSYNC_DIRS_MAX], results_ok = 1;

	if (!groupsync_poll(n->gs, derr))
		return;
	for (size_t i = 0; i < n->ngdirs; i++) {
		if (derr[i] == 0)
			continue;
		errno = derr[i];
		log_warn("fsync %s/", spool_dir_name(n->gdir[i]));
		(void)node_spool_full(n, derr[i], spool_dir_name(n->gdir[i]));
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
				if (!node_spool_full(n, c->gi.err, "results/"))
					(void)node_fd_short(n, c->gi.err,
					    "results/");
				c->next_try_mono = tstime_mono_ms() + 1000;
				continue;
			}
			c->renamed = 1;
			node_record(n, RECORDS_RESULT, c->id, NULL, NULL,
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

int
node_commits_pending(struct node *n)
{
	if (n->commits != NULL || groupsync_busy(n->gs))
		return 1;
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (n->gdirty[d])
			return 1;
	return 0;
}

void
node_commits_flush(struct node *n)
{
	struct commit **pp;
	int64_t now = tstime_mono_ms();
	int dirs[GROUPSYNC_DIRS_MAX], renamed = 0;
	size_t ni = 0, nd = 0;

	node_commits_synced(n);
	for (pp = &n->commits; *pp != NULL;) {
		struct commit *c = *pp;

		if (!c->written && !c->renamed && !c->syncing &&
		    coord_lease_valid(n->coord, c->lockfd, now) != COORD_OK) {
			node_record_stale(n, c->id, c->attempt,
			    coord_lease_fence(n->coord, c->lockfd), "result not "
			    "written before the lease was lost");
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
		node_commits_synced(n);
		commits_move(n, now);
	}
}

/*
 * The retry of attempt a of t (file srcfd/name, lease on lockfd, taken
 * over) with retries allowed: t with a added goes to delayed/, due after
 * the backoff; then the active/ copy is removed (the next state is
 * published before the previous copy goes).  Returns 0, or -1 when out
 * of memory (the caller's nomem path; lockfd still held).
 */
static int
conclude_retry(struct node *n, struct task *t, int srcfd, const char *name,
    int lockfd, struct task_attempt *a, int retries)
{
	int64_t delay = backoff_jittered_ms((int)t->nattempts + 1,
	    n->cfg->retry_base_ms, n->cfg->retry_max_ms,
	    (int)n->cfg->retry_jitter_pct, rand32());
	struct buf enc;
	enum spool_dir to = node_hold_retry_dir(n, t->request_id);

	a->retry_at_ms = tstime_now_ms() + delay;
	t->not_before_ms = a->retry_at_ms;
	if (task_add_attempt(t, a) != 0)
		return -1;
	buf_init(&enc, 0);
	if (task_encode(t, &enc) != 0 || spool_publish(&n->sp,
	    n->sp.dir[to], name, enc.data, enc.len, a->retry_at_ms, 0) != 0) {
		/* Leave it in active/ unlocked: it is recovered again as a
		 * lost attempt — ours by our own recovery pass once claims
		 * resume (the leader's reaper skips its own node's
		 * directory), another node's by the reaper. */
		int e = errno;

		log_warn("%s: cannot queue retry", t->request_id);
		(void)node_spool_full(n, e, spool_dir_name(to));
		if (srcfd == n->sp.self)
			n->recover_self = 1;
		buf_fini(&enc);
		if (lockfd >= 0)
			node_lease_end(n, lockfd);
		return 0;
	}
	buf_fini(&enc);
	if (unlinkat(srcfd, name, 0) != 0 && errno != ENOENT)
		log_warn("%s: unlink after retry queued",
		    t->request_id);
	if (srcfd == n->sp.self)
		n->dirty_self = 1;
	if (lockfd >= 0)
		node_lease_end(n, lockfd);
	if (n->leader && to == SPOOL_DELAYED)
		node_delayed_note(n, name);
	node_index_note(n, t->request_id, to, NULL, NULL, t,
	    a->retry_at_ms);
	metrics_retry();
	log_task(LOG_LEVEL_INFO, "task.retry", t->request_id,
	    t->task_code, a->attempt, "%s: attempt %d %s (%s); retry "
	    "%d of %d in %lld ms%s", t->request_id, a->attempt,
	    task_outcome_name(a->outcome),
	    a->reason, a->attempt, retries, (long long)delay, to ==
	    SPOOL_HOLD ? ", held in hold/ (state/hold/ marker)" : "");
	node_record(n, RECORDS_RETRY, t->request_id, t, a, NULL, 0);
	return 0;
}

/*
 * A new commit (struct commit) of t's terminal move from srcfd/name to
 * dest, its lease on lockfd, with the result encoded from ri and a
 * callback delivery prepared.  Returns it (new: queued by the caller),
 * or NULL when out of memory or descriptors (lockfd not taken over).
 */
static struct commit *
commit_new(struct node *n, const struct task *t, int srcfd, const char *name,
    int lockfd, const struct task_attempt *a, enum spool_dir dest,
    const struct result_info *ri)
{
	struct commit *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->srcfd = srcfd == n->sp.self ? -1 : dup(srcfd);
	if (c->srcfd < 0 && srcfd != n->sp.self) {
		buf_fini(&c->result);
		free(c);
		return NULL;
	}
	c->from_self = srcfd == n->sp.self;
	c->lockfd = lockfd;
	c->attempt = a->attempt;
	c->dest = dest;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->id, sizeof(c->id), "%s", t->request_id);
	snprintf(c->code, sizeof(c->code), "%s", t->task_code);
	c->nattempts = (long)t->nattempts;
	node_alert_prepare(n, t, &c->alert);
	buf_init(&c->result, 0);
	buf_init(&c->cb, 0);
	if (result_encode(t, ri, &c->result) != 0) {
		buf_fini(&c->result);
		free(c);
		return NULL;
	}
	return c;
}

/*
 * The terminal state of final attempt a: returns its directory, with
 * *status the result's status ("SUCCESS", "CANCELLED", "FAILED") and
 * *code its failureCode (NULL unless FAILED); both static strings.
 */
static enum spool_dir
conclude_status(const struct task_attempt *a, const char **status,
    const char **code)
{
	*code = NULL;
	switch (a->outcome) {
	case TASK_OUTCOME_SUCCESS:
		*status = "SUCCESS";
		return SPOOL_DONE;
	case TASK_OUTCOME_CANCELLED:
		*status = "CANCELLED";
		return SPOOL_CANCELLED;
	default:
		*status = "FAILED";
		*code = a->outcome == TASK_OUTCOME_TIMEOUT ? "TIMEOUT" :
		    a->outcome == TASK_OUTCOME_LOST ? "LOST" :
		    a->outcome == TASK_OUTCOME_ERROR ? "HOOK_ERROR" :
		    a->signal > 0 ? "WORKER_SIGNAL" : "WORKER_EXIT";
		return SPOOL_FAILED;
	}
}

void
node_conclude(struct node *n, struct task *t, int srcfd, const char *name,
    int lockfd, struct task_attempt *a, int permanent,
    const char *hook_result, size_t hrlen, const struct slot *sl)
{
	int retries = node_effective_retries(n, t);
	const char *status, *code = NULL;
	struct result_info ri;
	struct commit *c;
	char *otail = NULL, *etail = NULL;
	size_t olen = 0, elen = 0;
	char msg[TASK_REASON_MAX + 64];
	char tid[33];
	enum spool_dir dest;

	if (node_name_to_id(name, t->request_id) != 0) {
		log_warnx("conclude: bad name %s", name);
		if (lockfd >= 0)
			node_lease_end(n, lockfd);
		return;
	}
	if (coord_lease_valid(n->coord, lockfd, tstime_mono_ms()) !=
	    COORD_OK) {
		node_record_stale(n, t->request_id, a->attempt,
		    coord_lease_fence(n->coord, lockfd), a->reason);
		node_lease_end(n, lockfd);
		return;
	}
	n->finished++;
	metrics_attempt_ended(t->task_code, task_outcome_name(a->outcome),
	    a->start_ms >= 0 && a->outcome != TASK_OUTCOME_LOST ?
	    (double)(a->end_ms - a->start_ms) / 1000.0 : -1);
	if (a->outcome != TASK_OUTCOME_SUCCESS &&
	    a->outcome != TASK_OUTCOME_CANCELLED && !permanent &&
	    (int)t->nattempts + 1 <= retries) {
		if (conclude_retry(n, t, srcfd, name, lockfd, a, retries) != 0)
			goto nomem;
		return;
	}
	if (task_add_attempt(t, a) != 0)
		goto nomem;
	dest = conclude_status(a, &status, &code);
	node_hold_ended(n, t->request_id);
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
		otail = node_stream_tail(&sl->out, sl->out.tail_cap,
		    &olen);
		etail = node_stream_tail(&sl->err, sl->err.tail_cap,
		    &elen);
	}
	ri.stdout_tail = otail;
	ri.stdout_len = olen;
	ri.stderr_tail = etail;
	ri.stderr_len = elen;
	ri.max_retries = retries;
	ri.fence = coord_lease_fence(n->coord, lockfd);
	c = commit_new(n, t, srcfd, name, lockfd, a, dest, &ri);
	free(otail);
	free(etail);
	if (c == NULL)
		goto nomem;
	metrics_task_finished(t->task_code, status);
	if (callback_prepare(&n->sp, t, c->result.data, c->result.len,
	    tstime_now_ms(), &c->cb) < 0)
		log_warn("%s: no callback delivery can be made", t->request_id);
	traceparent_trace_id(t->traceparent, tid);
	if (code != NULL)
		log_task(LOG_LEVEL_INFO, "task.failed", t->request_id,
		    t->task_code, a->attempt, "%s: %s after %zu attempt(s): "
		    "%s%s%s", t->request_id, status, t->nattempts, a->reason,
		    tid[0] != '\0' ? " trace=" : "", tid);
	else
		log_task(LOG_LEVEL_INFO, dest == SPOOL_DONE ? "task.success" :
		    "task.cancelled", t->request_id, t->task_code, a->attempt,
		    "%s: %s (attempt %d)%s%s", t->request_id, status,
		    a->attempt, tid[0] != '\0' ? " trace=" : "", tid);
	c->cancel_marker = a->outcome == TASK_OUTCOME_CANCELLED ||
	    (sl != NULL && sl->cancelled);
	/* Queue at the tail: node_commits_flush() runs once per loop pass. */
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
		node_lease_end(n, lockfd);
}
