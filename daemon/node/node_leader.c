/*
 * node_leader — the leader's duties besides scheduler.c (recurring
 * jobs), router.c (routed tasks) and resrepair.c (the results/ repair
 * pass), which it drives: taking and losing the leader lock
 * (node_leader_tick), the due index of delayed/ and the promotion of
 * due tasks into incoming/, the reaper of other nodes' orphans, the
 * cleaning of tmp/ and of claim markers, and the pass run each loop
 * (node_leader_pass).
 *
 * Invariants: only the holder of the leader lock promotes, routes,
 * fires jobs, repairs and reaps; a leader resumed after a stop renews
 * the lock before it acts, and a draining leader fires no more jobs.
 * Writes: incoming/ (promotions, by rename from delayed/), tmp/ and
 * state/claims/ (removals).
 */
#include "node/node_impl.h"
#include "callback/callback_sender.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callback/callback.h"
#include "coord/claimmark.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "coord/maxconc.h"
#include "core/dueindex.h"
#include "spool/log.h"
#include "node/resrepair.h"
#include "node/router.h"
#include "node/scheduler.h"
#include "spool/spool.h"

void
node_delayed_note(struct node *n, const char *name)
{
	struct stat st;

	if (name[0] == '.' || n->delayed == NULL)
		return;
	if (fstatat(n->sp.dir[SPOOL_DELAYED], name, &st,
	    AT_SYMLINK_NOFOLLOW) != 0) {
		(void)due_index_remove(n->delayed, name);
		return;
	}
	if (due_index_set(n->delayed, name, (uint64_t)(node_mtime_ms(&st) > 0 ?
	    node_mtime_ms(&st) : 0)) != 0)
		log_warn("delayed/%s: not indexed (next rescan retries)", name);
}

void
node_scan_delayed(struct node *n)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(n->sp.dir[SPOOL_DELAYED])) == NULL)
		return;
	while ((de = readdir(dp)) != NULL)
		node_delayed_note(n, de->d_name);
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
	if (node_mtime_ms(&st) > now) {
		(void)due_index_set(n->delayed, name,
		    (uint64_t)node_mtime_ms(&st));
		return;
	}
	if (spool_move_excl(n->sp.dir[SPOOL_DELAYED], name,
	    n->sp.dir[SPOOL_INCOMING], name) == 0) {
		node_mark_dirty(n, SPOOL_INCOMING);
		node_mark_dirty(n, SPOOL_DELAYED);
		node_cand_add(n, name, 1);
		node_wake_others(n, "incoming", name);
		{
			char id[TASK_ID_MAX + 1];

			if (node_name_to_id(name, id) == 0)
				node_index_note(n, id, SPOOL_INCOMING, NULL,
				    NULL, NULL, -1);
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
	node_record(n, RECORDS_RESULT, id, f->task, NULL, f->result, f->len);
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

void
node_leader_tick(struct node *n)
{
	unsigned long long epoch;
	int r = coord_leader(n->coord, tstime_mono_ms(), &epoch);

	/* With expiring leases, what this node left in its own active/
	 * (self-fenced attempts) is recovered once their leases are gone. */
	if (coord_leases_expire(n->coord))
		node_recover_dir(n, n->sp.self, n->sp.node);
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
			node_deps_stop(n);
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
		node_scan_delayed(n);
		node_deps_scan(n);
		if (limits_sweep_keys(&n->sp) > 0)
			log_info("removed max_concurrent_per_key slot files "
			    "of state/limits/ left by daemons before 0.14");
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
	node_reap_others(n);
}

void
node_clean_tmp(struct node *n)
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
		    S_ISDIR(st.st_mode) ||
		    now - node_mtime_ms(&st) < 3600 * 1000)
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

void
node_leader_pass(struct node *n, int64_t now)
{
	/* A leader resumed after a stop renews before it acts: it
	 * may have been deposed meanwhile (chaos: two leaders firing
	 * one forbid job). */
	if (n->leader && !n->draining &&
	    !coord_leader_fresh(n->coord, now))
		node_leader_tick(n);
	if (n->leader)
		promote_delayed(n);
	if (n->leader && !n->draining)
		node_batch_pass(n);
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
			node_wake_others(n, "incoming", NULL);
	}
	if (n->leader && !n->draining && n->repair != NULL &&
	    now >= n->next_repair)
		repair_step(n, now);
}
