/*
 * node_cancel — cancel markers (state/cancel/<id>): a running hook is
 * killed (SIGTERM, then SIGKILL after kill_grace_ms) and concluded as
 * CANCELLED; a pending task of incoming/, delayed/ or hold/ (held) is
 * claimed like any task (flock, claim marker, duplicate check, lease,
 * rename into active/<self>/) and concluded as CANCELLED; a marker
 * whose task is finished, or unknown for a day, is removed.
 *
 * Invariant: cancelling a pending task is a claim, so it waits while
 * claims are held (n->cancel_wait).  Removes markers only.
 */
#include "node/node_impl.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "coord/claimmark.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "spool/hook.h"
#include "spool/log.h"
#include "coord/maxconc.h"
#include "core/nameset.h"
#include "spool/readfd.h"
#include "spool/spool.h"
#include "core/task.h"

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
 * Cancel a task that is still pending in incoming/, delayed/ or hold/
 * (held, coord/hold.h): claim it like any task (lock, verify, move into
 * active/<self>/), then conclude it as CANCELLED, which writes its
 * result before the move into cancelled/.  Returns 1 when done here, 0 when the task was not pending
 * (or someone else holds it: their claim sees the marker).
 */
static int
cancel_pending(struct node *n, const char *id)
{
	static const enum spool_dir from[] = { SPOOL_INCOMING, SPOOL_DELAYED,
		SPOOL_HOLD, SPOOL_BLOCKED };
	char file[SPOOL_NAME_MAX], why[512];

	(void)limits_mark_waiting(&n->sp, id, 0);
	snprintf(file, sizeof(file), "%s.json", id);
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		int dfd = n->sp.dir[from[i]], fd, mfd;
		struct task t;
		struct task_error te;
		struct task_attempt a;
		struct stat st;
		struct buf b;

		fd = spool_open_safe(dfd, file, TASK_FILE_MAX, &st, why,
		    sizeof(why));
		if (fd < 0 && node_fd_short(n, errno, "cancel")) {
			(void)nameset_add(&n->cancel_wait, id, NULL);
			return 1;	/* again when descriptors are back */
		}
		if (fd < 0)
			continue;
		if (coord_flock_verify(fd, dfd, file) != 0) {
			node_lease_end(n, fd);
			continue;
		}
		/* A claim like any other: under the claim marker, and a
		 * second copy of a task that runs or ran is a duplicate. */
		mfd = claimmark_take(&n->sp, id, n->sp.node, tstime_now_ms(),
		    NULL, NULL, 0);
		if (mfd < 0) {
			node_lease_end(n, fd);
			return 0;		/* looked at again later */
		}
		switch (node_other_copy(n, id, dfd, file, file, from[i] ==
		    SPOOL_DELAYED, why, sizeof(why))) {
		case 1:
			node_quarantine(n, dfd, file, why);
			claimmark_release(&n->sp, id, mfd);
			node_lease_end(n, fd);
			return 0;
		case 2:		/* a retry beside its stale copy: later */
			claimmark_release(&n->sp, id, mfd);
			node_lease_end(n, fd);
			(void)nameset_add(&n->cancel_wait, id, NULL);
			return 1;
		}
		task_init(&t);
		buf_init(&b, TASK_FILE_MAX);
		if (buf_read_fd(&b, fd) != 0 || task_decode(b.data != NULL ?
		    b.data : "", b.len, &t, &te) != 0 ||
		    node_lease_take(n, fd, id, (int)t.nattempts + 1) != 0 ||
		    spool_move_excl(dfd, file, n->sp.self, file) != 0) {
			/* Malformed files are the claim path's business. */
			claimmark_release(&n->sp, id, mfd);
			node_lease_end(n, fd);
			task_fini(&t);
			buf_fini(&b);
			return 0;
		}
		claimmark_release(&n->sp, id, mfd);
		buf_fini(&b);
		node_attempt_unstarted(n, &t, &a);
		snprintf(a.reason, sizeof(a.reason), "cancelled before it "
		    "started (was in %s/)", spool_dir_name(from[i]));
		node_conclude(n, &t, n->sp.self, file, fd, &a, 1, NULL, 0,
		    NULL);
		task_fini(&t);
		return 1;
	}
	return 0;
}

void
node_attempt_unstarted(const struct node *n, const struct task *t,
    struct task_attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->attempt = (int)t->nattempts + 1;
	snprintf(a->node, sizeof(a->node), "%s", n->sp.node);
	a->start_ms = -1;
	a->end_ms = tstime_now_ms();
	a->exit_code = -1;
	a->retry_at_ms = -1;
	a->outcome = TASK_OUTCOME_CANCELLED;
}

void
node_handle_cancel(struct node *n, const char *id)
{
	enum spool_dir where;
	struct stat st;

	(void)nameset_add(&n->cancels, id, NULL);
	if (cancel_running(n, id))
		return;
	if (node_claims_held(n)) {
		/* Cancelling a pending task claims it: later
		 * (node_cancel_more). */
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

void
node_cancel_more(struct node *n)
{
	struct nameset_node *c;

	while (n->cancel_wait.head != NULL && !node_claims_held(n) &&
	    (c = nameset_pop(&n->cancel_wait)) != NULL) {
		node_handle_cancel(n, c->name);
		free(c);
	}
}

void
node_scan_cancels(struct node *n)
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
			node_handle_cancel(n, de->d_name);
	closedir(dp);
}
