/*
 * node_recover — recovery and the reaper: the orphans of active/<owner>/
 * (files whose lease is gone: coord_orphan_take), this node's own at
 * start and after self-fencing, other nodes' for the leader.  An orphan
 * is resolved by looking for a newer copy first (a terminal directory,
 * another node's active/, a retry in delayed/ or incoming/: the orphan
 * is stale and removed), then for its written result (the interrupted
 * terminal move is completed), else its attempt was lost and is
 * concluded as LOST (or CANCELLED).
 *
 * Invariants: an orphan is touched only with its flock held and its
 * owner's lease gone; a damaged result of an unfinished task is kept in
 * corrupt/ and removed (node_torn_result).  Each recovered orphan holds
 * a descriptor until its result is written, so recovery stops while
 * claims are held.
 */
#include "node/node_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "callback/callback.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "spool/hook.h"
#include "spool/hookcred.h"
#include "coord/index.h"
#include "spool/log.h"
#include "spool/readfd.h"
#include "node/resrepair.h"
#include "core/result.h"
#include "spool/spool.h"
#include "core/task.h"

int
node_torn_result(struct node *n, const char *id)
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

/*
 * Whether the orphan dirfd/name (request id, in active/<owner>/) is a
 * stale copy: a terminal directory, or another node's active/, holds
 * the newer one.  Returns 1 when so (the orphan removed), else 0.
 */
static int
orphan_stale(struct node *n, int dirfd, const char *owner, const char *name,
    const char *id)
{
	static const enum spool_dir newer[] = { SPOOL_DONE, SPOOL_FAILED,
		SPOOL_CANCELLED };
	struct stat st;
	char other[65];

	for (size_t i = 0; i < sizeof(newer) / sizeof(newer[0]); i++)
		if (fstatat(n->sp.dir[newer[i]], name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0) {
			log_info("%s: stale copy in active/%s/ removed (%s/ "
			    "has the newer one)", id, owner,
			    spool_dir_name(newer[i]));
			(void)unlinkat(dirfd, name, 0);
			(void)spool_sync_dir(&n->sp, dirfd);
			return 1;
		}
	/* A newer copy may already be running on another node. */
	if (spool_in_active(&n->sp, name, owner, other)) {
		log_info("%s: stale copy in active/%s/ removed (active/"
		    "%s/ runs the newer one)", id, owner, other);
		(void)unlinkat(dirfd, name, 0);
		(void)spool_sync_dir(&n->sp, dirfd);
		return 1;
	}
	return 0;
}

/*
 * The orphan dirfd/name (task t, request id) whose result is already
 * written: the terminal move was all that was left; its delivery and
 * record are made again (they may be lost with the crash).  Returns 1
 * when results/ held its result (the move made, or to be made later),
 * 0 when there is none (a damaged one is moved away): the attempt was
 * lost.
 */
static int
orphan_result(struct node *n, int dirfd, const char *name, const char *id,
    const struct task *t)
{
	char rname[TASK_ID_MAX + 8], status[16];
	size_t rlen, na;
	char *res;

	snprintf(rname, sizeof(rname), "%s.json", id);
	res = spool_read_file(n->sp.dir[SPOOL_RESULTS], rname, 64 << 20,
	    &rlen);
	if (res == NULL)
		return 0;
	if (result_peek(res, rlen, status, &na) == 0 &&
	    na == t->nattempts + 1) {
		enum spool_dir dest = strcmp(status, "SUCCESS") == 0 ?
		    SPOOL_DONE : strcmp(status, "CANCELLED") == 0 ?
		    SPOOL_CANCELLED : SPOOL_FAILED;

		/* Its delivery may not have been written yet. */
		if (callback_enqueue(&n->sp, t, res, rlen) != 0) {
			log_warn("%s: callback delivery", id);
			free(res);
			return 1;
		}
		/* Its alert task too (O_EXCL: once). */
		if (node_alert_interrupted(n, t, dest, res, rlen) != 0) {
			free(res);
			return 1;
		}
		/* Its record may have been lost with the crash. */
		node_record(n, RECORDS_RESULT, id, t, NULL, res, rlen);
		free(res);
		if (renameat(dirfd, name, n->sp.dir[dest], name) == 0) {
			node_mark_dirty(n, dest);
			(void)spool_sync_dir(&n->sp, dirfd);
			log_info("%s: completed the interrupted move "
			    "to %s/", id, spool_dir_name(dest));
			if (coord_leases_expire(n->coord))
				(void)index_forget(n->coord, id);
		}
		return 1;
	}
	free(res);
	/* A damaged result is a missing one: the attempt is
	 * concluded as lost (run again, or FAILED) below. */
	(void)node_torn_result(n, id);
	return 0;
}

/*
 * The attempt of orphan dirfd/name (task t, request id, file stat st)
 * in active/<owner>/ was lost: what still runs of it on this host is
 * killed, and it is concluded as LOST (or CANCELLED when a cancel was
 * asked for), which takes over the lease on fd.
 */
static void
orphan_lost(struct node *n, int dirfd, const char *owner, const char *name,
    const char *id, struct task *t, const struct stat *st, int fd)
{
	struct task_attempt a;

	memset(&a, 0, sizeof(a));
	a.attempt = (int)t->nattempts + 1;
	snprintf(a.node, sizeof(a.node), "%s", owner);
	/* The claim rename set the file's ctime: the attempt's start. */
	a.start_ms = (int64_t)st->st_ctim.tv_sec * 1000 +
	    st->st_ctim.tv_nsec / 1000000;
	a.end_ms = tstime_now_ms();
	a.exit_code = -1;
	a.retry_at_ms = -1;
	a.outcome = TASK_OUTCOME_LOST;
	snprintf(a.reason, sizeof(a.reason), "attempt lost: node %s died or "
	    "lost its lease (found by %s)", owner, n->sp.node);
	log_task(LOG_LEVEL_WARN, "task.lost", id, t->task_code, a.attempt,
	    "%s: attempt %d on node %s lost; recovering", id, a.attempt, owner);
	/* Whatever of that attempt still runs on this host (grandchildren
	 * outlive the hook's PDEATHSIG) dies before the task runs again. */
	{
		char t1[TASK_ID_MAX + 32], t2[TASK_CODE_MAX + 32], t3[80];
		struct hookcred_saved hs;
		int k = 0;

		snprintf(t1, sizeof(t1), "TASKSPOOL_REQUEST_ID=%s", id);
		snprintf(t2, sizeof(t2), "TASKSPOOL_NODE=%s", owner);
		/* Of this spool only: another spool on this host can have a
		 * node and a requestId of the same names. */
		snprintf(t3, sizeof(t3), "TASKSPOOL_SPOOL_ID=%s",
		    n->spool_id);
		/* As the hooks' account: /proc shows its processes'
		 * environment to its fsuid (and, under hidepid, the
		 * processes at all); kill(2) then needs CAP_KILL. */
		if (hookcred_enter(&n->cfg->hookcred, HOOKCRED_USER, &hs) ==
		    0)
			k = hook_kill_tagged(t1, t2, n->spool_id[0] !=
			    '\0' ? t3 : NULL);
		hookcred_leave(&hs);
		if (k > 0)
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
	node_conclude(n, t, dirfd, name, fd, &a, 0, NULL, 0, NULL);
}

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
	static const enum spool_dir pending[] = { SPOOL_DELAYED,
		SPOOL_INCOMING, SPOOL_HOLD };	/* hold/: a held retry, read */
	char id[TASK_ID_MAX + 1], why[512];
	struct task t;
	struct task_error te;
	struct stat st;
	struct buf b;

	if (node_name_to_id(name, id) != 0) {
		node_quarantine(n, dirfd, name,
		    "file name: not <requestId>.json");
		coord_lease_close(n->coord, fd);
		return;
	}
	if (orphan_stale(n, dirfd, owner, name, id)) {
		coord_lease_close(n->coord, fd);
		return;
	}
	task_init(&t);
	buf_init(&b, TASK_FILE_MAX);
	if (fstat(fd, &st) != 0 || buf_read_fd(&b, fd) != 0) {
		log_warn("%s: read orphan", id);
		goto out;
	}
	if (task_decode(b.data != NULL ? b.data : "", b.len, &t, &te) != 0) {
		snprintf(why, sizeof(why), "%s: %s", te.field, te.rule);
		node_quarantine(n, dirfd, name, why);
		goto out;
	}
	snprintf(t.request_id, sizeof(t.request_id), "%s", id);
	/* A pending copy with more attempts than the orphan is its retry
	 * (published before the active/ copy is removed): the orphan is
	 * stale.  One with no more attempts is not newer: a second copy of
	 * the requestId (claimmark.h), which its claimant will find to be a
	 * duplicate; the orphan's attempt is recovered below. */
	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++) {
		if (node_copy_attempts(n->sp.dir[pending[i]], name) <=
		    (long)t.nattempts)
			continue;
		log_info("%s: stale copy in active/%s/ removed (%s/ has the "
		    "newer one)", id, owner, spool_dir_name(pending[i]));
		(void)unlinkat(dirfd, name, 0);
		(void)spool_sync_dir(&n->sp, dirfd);
		goto out;
	}
	/* Result already written: the terminal move was all that was left. */
	if (orphan_result(n, dirfd, name, id, &t))
		goto out;
	orphan_lost(n, dirfd, owner, name, id, &t, &st, fd);
	fd = -1;
out:
	if (fd >= 0)
		coord_lease_close(n->coord, fd);
	task_fini(&t);
	buf_fini(&b);
}

void
node_recover_dir(struct node *n, int dirfd, const char *owner)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(dirfd)) == NULL) {
		if (dirfd == n->sp.self && node_fd_short(n, errno, "recovery"))
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
		if (tf < 0 && node_fd_short(n, errno, "recovery")) {
			if (dirfd == n->sp.self)
				n->recover_self = 1;
			break;
		}
		if (tf < 0) {
			if (errno == ELOOP)
				node_quarantine(n, dirfd, de->d_name,
				    "file: is a symbolic link (not allowed)");
			continue;
		}
		{
			char oid[TASK_ID_MAX + 1], why[512];
			enum coord_status st;

			if (node_name_to_id(de->d_name, oid) != 0)
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

void
node_reap_others(struct node *n)
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
		node_recover_dir(n, nd, de->d_name);
		close(nd);
	}
	closedir(dp);
}
