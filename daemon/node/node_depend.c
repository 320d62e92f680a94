/*
 * node_depend — the leader's release of blocked tasks (README.md,
 * "Dependencies"): the reverse index parent -> dependents of blocked/,
 * built by a scan at promotion and kept up by inotify of blocked/ and of
 * the terminal directories (a parent ended) and by a poll of the indexed
 * parents each scan interval (parents ended on other hosts); the release
 * of a task whose every condition holds; the cancel of one with a
 * condition that can never hold (DEPENDENCY_NEVER_SATISFIED); and, on
 * any node, the diversion of a task file with dependsOn dropped into
 * incoming/ into blocked/.
 *
 * Invariants: only the leader releases or cancels.  A release is two
 * steps: blocked/T rewritten with releasedBy (tmp + fsync + rename over
 * itself; blocked/ fsynced with the destination at the end of the
 * pass), then the rename blocked/T -> incoming/T (or
 * delayed/T with a future notBefore).  That rename is the fence: a
 * second leader's fails with ENOENT, and a leader that finds releasedBy
 * already set only moves.  A task never leaves blocked/ but by one of
 * these, or by the cancel (claimed into active/<self>/ and concluded
 * CANCELLED, which writes its result and moves it to cancelled/).
 * Writes: blocked/, incoming/, delayed/, corrupt/, and what
 * node_conclude writes.
 *
 * A parent that ends on another host is seen by the wake-up its daemon
 * publishes after the move ("done/<name>", ...: node_coord.c,
 * node_on_wake; cluster mode), else by the poll (every scan_interval_ms).
 * Pacing: a parent's end only queues the dependents it lets be decided
 * (todo, oldest first); the loop decides them one at a time while a slot
 * is free, each followed by its claim, then DEPS_DECIDE_BUSY more per
 * pass (node_loop.c), so the first dependents' hooks start after their
 * own release, not after every sibling's (each release costs an fsync).  XXX A fan-in of N copies N
 * results into the hook's parents/ at its start (~1.2 s for 10,000).
 * The index keeps, per blocked task (the key of its node in blocked),
 * the count of its edges whose parent had not ended when it was last
 * decided; a parent's end lowers the count of each dependent and decides
 * it from its file (the truth: every parent's state read again) only
 * when the count reaches 0 or that parent's outcome makes its edge never
 * hold.  A fan-in of N parents so costs N lookups to index, one per
 * parent's end, and N at the release.  A rescan rebuilds the counts.
 *
 * A released task without a traceparent of its own continues the trace
 * of its first parent (in dependsOn order) that has one: a child of that
 * parent's traceparent (issue 14 item 6).
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

#include "coord/claimmark.h"
#include "coord/coord.h"
#include "core/buf.h"
#include "core/depend.h"
#include "core/result.h"
#include "core/nameset.h"
#include "core/traceparent.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "spool/depstate.h"
#include "spool/log.h"
#include "spool/readfd.h"
#include "spool/spool.h"

/* The dependents of one parent: file names of blocked/, and the
 * condition each puts on that parent. */
struct kids {
	char **name;
	enum depend_cond *cond;
	size_t n, cap;
};

struct depidx {
	struct nameset parents;	/* parent id, key = index into kids */
	struct nameset blocked;	/* names of blocked/ indexed, key = the
				 * count of its edges still waiting */
	struct kids *kids;
	size_t nkids, capkids;
	struct nameset todo;	/* names of blocked/ to decide, FIFO */
};

static void
depidx_free(struct depidx *x)
{
	if (x == NULL)
		return;
	for (size_t i = 0; i < x->nkids; i++) {
		for (size_t j = 0; j < x->kids[i].n; j++)
			free(x->kids[i].name[j]);
		free(x->kids[i].name);
		free(x->kids[i].cond);
	}
	free(x->kids);
	nameset_fini(&x->parents);
	nameset_fini(&x->blocked);
	nameset_fini(&x->todo);
	free(x);
}

static struct depidx *
depidx_new(void)
{
	struct depidx *x = calloc(1, sizeof(*x));

	if (x == NULL || nameset_init(&x->parents) != 0 ||
	    nameset_init(&x->blocked) != 0 || nameset_init(&x->todo) != 0) {
		depidx_free(x);
		return NULL;
	}
	return x;
}

/* Index name (of blocked/) as a dependent of every parent of l whose
 * state in st is not ended (PENDING or UNKNOWN), its count the number of
 * those.  Indexed already (decided again before its count reached 0: a
 * race with a move), only the count is set again.  Returns 0 or -1
 * (ENOMEM: the poll and the next scan make up). */
static int
depidx_add(struct depidx *x, const char *name, const struct depend_list *l,
    const enum depend_parent *st)
{
	struct nameset_node *b;
	int64_t waiting = 0;
	int added;

	for (size_t i = 0; i < l->n; i++)
		if (st[i] == DEPEND_PARENT_PENDING ||
		    st[i] == DEPEND_PARENT_UNKNOWN)
			waiting++;
	if ((b = nameset_add(&x->blocked, name, &added)) == NULL)
		return -1;
	b->key = waiting;
	if (!added)
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		struct nameset_node *p;
		struct kids *k;
		char *dup;

		if (st[i] != DEPEND_PARENT_PENDING &&
		    st[i] != DEPEND_PARENT_UNKNOWN)
			continue;
		if ((p = nameset_add(&x->parents, l->v[i].id, &added)) ==
		    NULL)
			return -1;

		if (p == NULL)
			return -1;
		if (added) {
			if (x->nkids == x->capkids) {
				size_t c = x->capkids ? 2 * x->capkids : 64;
				struct kids *nk = reallocarray(x->kids, c,
				    sizeof(*nk));

				if (nk == NULL) {
					(void)nameset_remove(&x->parents,
					    l->v[i].id);
					return -1;
				}
				x->kids = nk;
				x->capkids = c;
			}
			memset(&x->kids[x->nkids], 0, sizeof(x->kids[0]));
			p->key = (int64_t)x->nkids++;
		}
		k = &x->kids[p->key];
		if (k->n == k->cap) {
			size_t c = k->cap ? 2 * k->cap : 4;
			char **nn = reallocarray(k->name, c, sizeof(*nn));
			enum depend_cond *nc;

			if (nn == NULL)
				return -1;
			k->name = nn;
			if ((nc = reallocarray(k->cond, c, sizeof(*nc))) ==
			    NULL)
				return -1;
			k->cond = nc;
			k->cap = c;
		}
		if ((dup = strdup(name)) == NULL)
			return -1;
		k->cond[k->n] = l->v[i].cond;
		k->name[k->n++] = dup;
	}
	return 0;
}

/* Read and decode blocked/name into t.  Returns 0, 1 (gone), or -1
 * (quarantined: the writer protocol promised a whole file). */
static int
read_blocked(struct node *n, const char *name, struct task *t)
{
	int dfd = n->sp.dir[SPOOL_BLOCKED], fd;
	char why[512];
	struct task_error te;
	struct stat st;
	struct buf b;
	int rc = 0;

	if ((fd = spool_open_safe(dfd, name, TASK_FILE_MAX, &st, why,
	    sizeof(why))) < 0) {
		if (errno == ENOENT)
			return 1;
		node_quarantine(n, dfd, name, why);
		return -1;
	}
	buf_init(&b, TASK_FILE_MAX);
	if (buf_read_fd(&b, fd) != 0) {
		log_warn("read blocked/%s", name);
		rc = 1;
	} else if (task_decode(b.data != NULL ? b.data : "", b.len, t,
	    &te) != 0) {
		snprintf(why, sizeof(why), "%s: %s", te.field, te.rule);
		node_quarantine(n, dfd, name, why);
		rc = -1;
	} else if (t->depends.n == 0) {
		node_quarantine(n, dfd, name, "dependsOn: required in "
		    "blocked/ (a task without parents belongs in incoming/)");
		rc = -1;
	} else if (t->created_ms < 0)
		t->created_ms = node_mtime_ms(&st);
	buf_fini(&b);
	(void)close(fd);
	return rc;
}

/* The fence: blocked/name (releasedBy written) into incoming/ or
 * delayed/. */
static void
release_move(struct node *n, const char *name, const struct task *t)
{
	int64_t now = tstime_now_ms();
	enum spool_dir to = t->not_before_ms > now ? SPOOL_DELAYED :
	    SPOOL_INCOMING;

	if (spool_move_excl(n->sp.dir[SPOOL_BLOCKED], name, n->sp.dir[to],
	    name) != 0) {
		if (errno == EEXIST)
			node_quarantine(n, n->sp.dir[SPOOL_BLOCKED], name,
			    "requestId: a copy already waits in incoming/ or "
			    "delayed/ (this one was never run)");
		else if (errno != ENOENT)
			log_warn("release blocked/%s", name);
		return;		/* ENOENT: released by another leader */
	}
	node_mark_dirty(n, SPOOL_BLOCKED);
	node_mark_dirty(n, to);
	(void)nameset_remove(&n->deps->blocked, name);
	node_index_note(n, t->request_id, to, NULL, NULL, t,
	    to == SPOOL_DELAYED ? t->not_before_ms : -1);
	if (to == SPOOL_INCOMING) {
		node_cand_add(n, name, 1);
		n->route_dirty = 1;
		node_wake_others(n, "incoming", name);
	} else
		node_delayed_note(n, name);
	log_task(LOG_LEVEL_INFO, "task.released", t->request_id,
	    t->task_code, 0, "%s released into %s/ (%zu parent(s) ended)",
	    t->request_id, spool_dir_name(to), t->released.n);
}

/* The traceparent of ended parent id (its task file in done/, failed/
 * or cancelled/), into out (TRACEPARENT_LEN + 1 bytes).  Returns 0, or
 * -1: none, or not readable (the file is hostile: task_decode checks
 * the value). */
static int
parent_traceparent(struct node *n, const char *id,
    char out[TRACEPARENT_LEN + 1])
{
	char file[SPOOL_NAME_MAX];
	struct task_error te;
	enum spool_dir where;
	struct task p;
	size_t len;
	char *data;
	int rc = -1;

	if (depstate_of(&n->sp, id, &where) == DEPEND_PARENT_UNKNOWN ||
	    (where != SPOOL_DONE && where != SPOOL_FAILED &&
	    where != SPOOL_CANCELLED))
		return -1;
	snprintf(file, sizeof(file), "%s.json", id);
	if ((data = spool_read_file(n->sp.dir[where], file, TASK_FILE_MAX,
	    &len)) == NULL)
		return -1;
	task_init(&p);
	if (task_decode(data, len, &p, &te) == 0 && p.traceparent != NULL &&
	    strlen(p.traceparent) == TRACEPARENT_LEN) {
		memcpy(out, p.traceparent, TRACEPARENT_LEN + 1);
		rc = 0;
	}
	task_fini(&p);
	free(data);
	return rc;
}

/* t has no traceparent: continue that of its first parent (dependsOn
 * order) with one, a child of it (traceparent_child_fresh).  None, or
 * out of memory: t stays without one (its hook then starts a trace). */
static void
release_trace(struct node *n, struct task *t)
{
	char ptp[TRACEPARENT_LEN + 1], tp[TRACEPARENT_LEN + 1];

	if (t->traceparent != NULL)
		return;
	for (size_t i = 0; i < t->depends.n; i++) {
		if (parent_traceparent(n, t->depends.v[i].id, ptp) != 0)
			continue;
		if (traceparent_child_fresh(ptp, tp) == 0)
			t->traceparent = strdup(tp);
		return;
	}
}

/* Every condition of blocked/name (t) holds: record releasedBy (and the
 * traceparent it continues), move. */
static void
release(struct node *n, const char *name, struct task *t,
    const enum depend_parent *st)
{
	struct buf b;

	depend_list_fini(&t->released);
	if ((t->released.v = calloc(t->depends.n,
	    sizeof(*t->released.v))) == NULL)
		return;		/* the poll tries again */
	t->released.n = t->depends.n;
	for (size_t i = 0; i < t->depends.n; i++) {
		t->released.v[i] = t->depends.v[i];
		t->released.v[i].state = st[i];
	}
	release_trace(n, t);
	/* It is due from its release, not from its submission: the fire
	 * lag (taskspool_trigger_delay_seconds) and priority aging count
	 * from here, not the time it waited for its parents. */
	{
		int64_t now = tstime_now_ms();

		if (t->not_before_ms < now)
			t->not_before_ms = now;
	}
	buf_init(&b, TASK_FILE_MAX);
	/* The file is fsynced before its rename; blocked/ itself is synced
	 * with incoming/ at the end of this pass (node_flush_dirty), after
	 * the move: a crash before that leaves the task in blocked/ (old or
	 * new bytes, each whole) or moved, never torn. */
	if (task_encode(t, &b) != 0 || spool_publish(&n->sp,
	    n->sp.dir[SPOOL_BLOCKED], name, b.data, b.len,
	    t->not_before_ms, SPOOL_PUBLISH_NOSYNCDIR) != 0) {
		if (!node_spool_full(n, errno, "blocked/"))
			log_warn("%s: releasedBy not written", name);
		buf_fini(&b);
		return;
	}
	buf_fini(&b);
	node_mark_dirty(n, SPOOL_BLOCKED);
	release_move(n, name, t);
}

/* A condition of blocked/name (t) can never hold (why: the reason after
 * "DEPENDENCY_NEVER_SATISFIED: "): claim it like a pending cancel
 * (node_cancel.c) and conclude it CANCELLED. */
static void
never(struct node *n, const char *name, struct task *t, const char *why_not)
{
	int dfd = n->sp.dir[SPOOL_BLOCKED], fd, mfd;
	struct task_attempt a;
	struct stat st;
	char why[512];

	if ((fd = spool_open_safe(dfd, name, TASK_FILE_MAX, &st, why,
	    sizeof(why))) < 0)
		return;
	if (coord_flock_verify(fd, dfd, name) != 0) {
		coord_lease_close(n->coord, fd);
		return;
	}
	if ((mfd = claimmark_take(&n->sp, t->request_id, n->sp.node,
	    tstime_now_ms(), NULL, NULL, 0)) < 0) {
		coord_lease_close(n->coord, fd);
		return;		/* the poll looks again */
	}
	if (node_lease_take(n, fd, t->request_id, (int)t->nattempts + 1) != 0 ||
	    spool_move_excl(dfd, name, n->sp.self, name) != 0) {
		claimmark_release(&n->sp, t->request_id, mfd);
		coord_lease_close(n->coord, fd);
		return;
	}
	claimmark_release(&n->sp, t->request_id, mfd);
	node_mark_dirty(n, SPOOL_BLOCKED);
	(void)nameset_remove(&n->deps->blocked, name);
	node_attempt_unstarted(n, t, &a);
	snprintf(a.reason, sizeof(a.reason), "%s: %s", RESULT_NEVER_SATISFIED,
	    why_not);
	log_task(LOG_LEVEL_INFO, "task.dependency_never_satisfied",
	    t->request_id, t->task_code, 0, "%s: %s", t->request_id,
	    a.reason);
	node_conclude(n, t, n->sp.self, name, fd, &a, 1, NULL, 0, NULL);
}

/*
 * Whether the parents of blocked task t lead back to t through tasks
 * that wait in blocked/ (a cycle, which only files dropped by hand can
 * make: writers refuse an unknown parent).  A depth-first walk over the
 * files of blocked/, each read once, at most DEPEND_MAX of them.  On a
 * cycle, its first step (the parent of t it goes through) into via.
 * Returns 1 or 0.
 */
static int
in_cycle(struct node *n, const struct task *t, char *via, size_t vialen)
{
	struct nameset seen, todo;
	struct nameset_node *q;
	char file[SPOOL_NAME_MAX];
	int found = 0;

	nameset_init(&seen);
	nameset_init(&todo);
	for (size_t i = 0; i < t->depends.n; i++)
		(void)nameset_add(&todo, t->depends.v[i].id, NULL);
	while (!found && seen.count < DEPEND_MAX &&
	    (q = nameset_pop(&todo)) != NULL) {
		enum spool_dir where = SPOOL_NDIRS;
		struct task p;
		struct task_error te;
		size_t len;
		char *data = NULL;

		if (nameset_find(&seen, q->name) == NULL &&
		    nameset_add(&seen, q->name, NULL) != NULL &&
		    depstate_of(&n->sp, q->name, &where) ==
		    DEPEND_PARENT_PENDING && where == SPOOL_BLOCKED) {
			snprintf(file, sizeof(file), "%s.json", q->name);
			data = spool_read_file(n->sp.dir[SPOOL_BLOCKED], file,
			    TASK_FILE_MAX, &len);
		}
		task_init(&p);
		if (data != NULL && task_decode(data, len, &p, &te) == 0)
			for (size_t i = 0; !found && i < p.depends.n; i++) {
				if (strcmp(p.depends.v[i].id,
				    t->request_id) == 0) {
					snprintf(via, vialen, "%s", q->name);
					found = 1;
				} else if (nameset_find(&seen,
				    p.depends.v[i].id) == NULL)
					(void)nameset_add(&todo,
					    p.depends.v[i].id, NULL);
			}
		task_fini(&p);
		free(data);
		free(q);
	}
	nameset_fini(&seen);
	nameset_fini(&todo);
	return found;
}

/* Decide blocked/name now: release, cancel, or index it to wait. */
static void
decide(struct node *n, const char *name)
{
	struct task t;
	enum depend_parent *st;
	enum depend_verdict v;
	size_t w = 0;
	char why[TASK_REASON_MAX], via[TASK_ID_MAX + 1];

	if (name[0] == '.' || n->deps == NULL)
		return;
	task_init(&t);
	if (read_blocked(n, name, &t) != 0) {
		(void)nameset_remove(&n->deps->blocked, name);
		task_fini(&t);
		return;
	}
	if (t.released.n > 0) {		/* a leader died between the two */
		release_move(n, name, &t);
		task_fini(&t);
		return;
	}
	if ((st = calloc(t.depends.n, sizeof(*st))) == NULL) {
		task_fini(&t);
		return;
	}
	(void)depstate_all(&n->sp, &t.depends, st);
	v = depend_eval(&t.depends, st, &w);
	if (v == DEPEND_NEVER) {
		snprintf(why, sizeof(why), "%s ended %s (condition %s)",
		    t.depends.v[w].id, depend_parent_name(st[w]),
		    depend_cond_name(t.depends.v[w].cond));
		never(n, name, &t, why);
	} else if (v == DEPEND_READY)
		release(n, name, &t, st);
	else if (in_cycle(n, &t, via, sizeof(via))) {
		snprintf(why, sizeof(why), "a cycle through %s (which "
		    "waits for this task in blocked/)", via);
		never(n, name, &t, why);
	} else if (depidx_add(n->deps, name, &t.depends, st) != 0)
		log_warnx("blocked/%s: not indexed (out of memory; the next "
		    "scan retries)", name);
	free(st);
	task_fini(&t);
}

void
node_deps_note(struct node *n, const char *name)
{
	if (n->leader && !n->draining)
		decide(n, name);
}

void
node_deps_ended(struct node *n, const char *name)
{
	char id[TASK_ID_MAX + 1];
	struct nameset_node *p, *b;
	enum depend_parent ps;
	struct kids k;

	if (!n->leader || n->draining || n->deps == NULL ||
	    node_name_to_id(name, id) != 0 ||
	    (p = nameset_find(&n->deps->parents, id)) == NULL)
		return;
	/* Not (yet, or no longer) seen ended: the poll looks again. */
	ps = depstate_of(&n->sp, id, NULL);
	if (ps == DEPEND_PARENT_PENDING || ps == DEPEND_PARENT_UNKNOWN)
		return;
	/* Detach the list: deciding a dependent may index others. */
	k = n->deps->kids[p->key];
	memset(&n->deps->kids[p->key], 0, sizeof(k));
	(void)nameset_remove(&n->deps->parents, id);
	for (size_t i = 0; i < k.n; i++) {
		/* Decided again from its file when nothing else is left
		 * to wait for or this edge can never hold; else one less
		 * to wait for, indexed under its other parents. */
		if ((b = nameset_find(&n->deps->blocked, k.name[i])) !=
		    NULL && (--b->key <= 0 ||
		    depend_cond_eval(k.cond[i], ps) == DEPEND_NEVER) &&
		    nameset_find(&n->deps->todo, k.name[i]) == NULL &&
		    nameset_add(&n->deps->todo, k.name[i], 0) == NULL)
			decide(n, k.name[i]);	/* no memory to queue */
		free(k.name[i]);
	}
	free(k.name);
	free(k.cond);
}

size_t
node_deps_work(struct node *n, size_t max)
{
	struct nameset_node *c;
	size_t done = 0;

	while (done < max && node_deps_pending(n) &&
	    (c = nameset_pop(&n->deps->todo)) != NULL) {
		decide(n, c->name);
		free(c);
		done++;
	}
	return done;
}

int
node_deps_pending(const struct node *n)
{
	return n->leader && !n->draining && n->deps != NULL &&
	    n->deps->todo.head != NULL;
}

void
node_deps_scan(struct node *n)
{
	DIR *dp;
	struct dirent *de;

	if (!n->leader)
		return;
	depidx_free(n->deps);
	if ((n->deps = depidx_new()) == NULL) {
		log_warn("blocked/ index");
		return;
	}
	if ((dp = spool_opendir(n->sp.dir[SPOOL_BLOCKED])) == NULL)
		return;
	while ((de = readdir(dp)) != NULL)
		if (de->d_type == DT_REG || de->d_type == DT_UNKNOWN)
			decide(n, de->d_name);
	closedir(dp);
}

void
node_deps_poll(struct node *n)
{
	struct nameset_node *p, *next;
	char file[SPOOL_NAME_MAX];

	if (!n->leader || n->draining || n->deps == NULL)
		return;
	for (p = n->deps->parents.head; p != NULL; p = next) {
		next = p->fnext;
		if (depstate_of(&n->sp, p->name, NULL) == DEPEND_PARENT_PENDING
		    || depstate_of(&n->sp, p->name, NULL) ==
		    DEPEND_PARENT_UNKNOWN)
			continue;
		snprintf(file, sizeof(file), "%s.json", p->name);
		node_deps_ended(n, file);
		/* The list changed under us: from the start next time. */
		break;
	}
}

void
node_deps_stop(struct node *n)
{
	depidx_free(n->deps);
	n->deps = NULL;
}

int
node_deps_divert(struct node *n, int dfd, const char *name,
    const struct task *t)
{
	char why[512], final[SPOOL_NAME_MAX];
	enum depend_parent *st;
	struct task bare;
	struct buf b;
	size_t w = 0;
	int forged = 0;
	long u;

	if (t->depends.n == 0)
		return 0;
	if ((st = calloc(t->depends.n, sizeof(*st))) == NULL)
		return -1;
	u = depstate_all(&n->sp, &t->depends, st);
	/* releasedBy is the leader's (release()): a task that carries it
	 * runs only while its parents' states still satisfy dependsOn; a
	 * forged one (or a parent retried since) waits in blocked/ again,
	 * without it. */
	if (t->released.n > 0) {
		if (u < 0 && depend_eval(&t->depends, st, &w) ==
		    DEPEND_READY) {
			free(st);
			return 0;
		}
		forged = 1;
	}
	free(st);
	if (u >= 0) {
		snprintf(why, sizeof(why), "dependsOn[%ld].requestId: no task "
		    "%s in the spool (a parent must exist when its dependent "
		    "is written)", u, t->depends.v[u].id);
		node_quarantine(n, dfd, name, why);
		return -1;
	}
	snprintf(final, sizeof(final), "%s.json", t->request_id);
	if (strcmp(final, name) == 0 && !forged) {
		if (spool_move_excl(dfd, name, n->sp.dir[SPOOL_BLOCKED],
		    name) != 0) {
			if (errno == EEXIST)
				node_quarantine(n, dfd, name, "requestId: "
				    "blocked/ already holds this task");
			else if (errno != ENOENT)
				log_warn("%s: into blocked/", name);
			return -1;
		}
	} else {
		/* A body without a requestId (or with a releasedBy to
		 * drop): written whole under its own id, then the dropped
		 * file removed. */
		bare = *t;		/* borrowed members: not freed */
		if (forged) {
			bare.released.n = 0;
			bare.released.v = NULL;
			log_warnx("%s: releasedBy dropped: its parents' states "
			    "do not satisfy dependsOn (only the leader writes "
			    "it)", t->request_id);
		}
		buf_init(&b, TASK_FILE_MAX);
		/* EEXIST: a crash after the publish and before the
		 * unlink (the generated id is the same again). */
		if (task_encode(&bare, &b) != 0 || (spool_publish(&n->sp,
		    n->sp.dir[SPOOL_BLOCKED], final, b.data, b.len,
		    t->not_before_ms, SPOOL_PUBLISH_EXCL) != 0 &&
		    errno != EEXIST)) {
			log_warn("%s: into blocked/%s", name, final);
			buf_fini(&b);
			return -1;
		}
		buf_fini(&b);
		(void)unlinkat(dfd, name, 0);
	}
	node_mark_dirty(n, SPOOL_BLOCKED);
	log_task(LOG_LEVEL_INFO, "task.blocked", t->request_id, t->task_code,
	    0, "%s waits in blocked/ for %zu parent(s)", t->request_id,
	    t->depends.n);
	return 1;
}

size_t
node_deps_parents(struct node *n, struct workdir *w, const char *wdir,
    const struct task *t, char *list, size_t len)
{
	size_t off = 0, copied = 0;
	struct stat st;
	int pfd, full = 0;

	list[0] = '\0';
	if (t->depends.n == 0)
		return 0;
	if (mkdirat(w->fd, "parents", 02750) != 0 && errno != EEXIST)
		return 0;
	if ((pfd = openat(w->fd, "parents", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	{
		/* An earlier task's copies, when nothing emptied it. */
		DIR *dp = spool_opendir(pfd);
		struct dirent *de;

		while (dp != NULL && (de = readdir(dp)) != NULL)
			if (de->d_name[0] != '.')
				(void)unlinkat(pfd, de->d_name, 0);
		if (dp != NULL)
			closedir(dp);
	}
	for (size_t i = 0; i < t->depends.n; i++) {
		char file[SPOOL_NAME_MAX];
		size_t dlen;
		char *data;
		int fd, k;

		snprintf(file, sizeof(file), "%s.json", t->depends.v[i].id);
		if ((data = spool_read_file(n->sp.dir[SPOOL_RESULTS], file,
		    TASK_FILE_MAX, &dlen)) == NULL)
			continue;	/* a parent without result: none */
		fd = openat(pfd, file, O_WRONLY | O_CREAT | O_TRUNC |
		    O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0 && write(fd, data, dlen) == (ssize_t)dlen) {
			copied++;
			/* Too long: the list is left out (the hook reads
			 * TASKSPOOL_PARENTS_DIR); off stays < len. */
			k = full ? -1 : snprintf(list + off, len - off,
			    "%s%s/parents/%s", off > 0 ? ":" : "", wdir, file);
			if (k < 0 || (size_t)k >= len - off)
				full = 1;
			else
				off += (size_t)k;
		}
		if (fd >= 0)
			(void)close(fd);
		free(data);
	}
	(void)close(pfd);
	if (full)
		list[0] = '\0';
	/* What the daemon wrote is not the hook's doing. */
	if (fstat(w->fd, &st) == 0)
		w->mtime = st.st_mtim;
	return copied;
}
