/*
 * node_claim — claiming: the candidates of incoming/ and queue/<self>/,
 * and the claim of one task file, in steps: open and lock (claim_open),
 * decode and settle the requestId (claim_decode), the claim marker
 * (claim_mark), duplicates (node_other_copy), not due yet (claim_delay,
 * into delayed/), not ours (claim_placement: routed elsewhere, no
 * hook), the lease (node_lease_take), maxConcurrent (limit_wait), the
 * execution rate limits (rate_wait), the fencing rename (claim_rename)
 * and the run (claim_run).
 *
 * The fence rule: a task file is claimed only while its flock is held
 * (coord_flock_verify: the locked inode is the one at that name) and
 * its lease taken; the rename into active/<self>/ is the claim, and
 * after it the inode that moved is checked to be the locked one (a
 * writer's mv over the file puts the new version back).  One copy of a
 * requestId is claimed at a time (claimmark.h), and a second copy of a
 * requestId that runs or ran goes to corrupt/, never runs.
 * Writes: active/<self>/ (the rename), delayed/ (not due yet), corrupt/
 * (refused files), state/claims/ and state/waiting/ markers; moves a task
 * of queue/<self>/ back to incoming/ when it is not ours.  The
 * descriptor of a claimed task passes to its slot or its conclusion.
 */
#include "node/node_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "coord/claimmark.h"
#include "spool/clock.h"
#include "coord/coord.h"
#include "core/dispatch.h"
#include "spool/hookset.h"
#include "core/limitspec.h"
#include "spool/log.h"
#include "coord/maxconc.h"
#include "core/conckey.h"
#include "core/nameset.h"
#include "core/priority.h"
#include "core/ratespec.h"
#include "coord/execrate.h"
#include "spool/metrics.h"
#include "core/tags.h"
#include "spool/readfd.h"
#include "node/router.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/tstime.h"

/* Past the settle time before a file is looked at again (ms): its mtime
 * is in ms, the clock that compares it too. */
#define SETTLE_SLACK_MS	50

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

/*
 * What the claim order needs of task file name in dfd, read when it
 * becomes a candidate: its priority (core/priority.h) and its flow
 * (core/fairshare.h): "retry" for a task with attempts behind it,
 * "app:<appId>" (weight appWeight) for the API's, "jobs" for the fires
 * of recurring jobs, else "local".  A file that cannot be read or
 * decoded is PRIORITY_DEFAULT and "local" (its claim refuses it, with
 * the reason).  Sets c's priority and flow in ns (task_flow: the index
 * of t's flow in fair, added when new).
 * XXX one read and decode per candidate, besides the claim's own.
 */
static int
task_flow(struct fairshare *fair, const struct task *t)
{
	char flow[FAIR_NAME_MAX] = "local";
	int weight = 1;

	if (t->nattempts > 0)
		snprintf(flow, sizeof(flow), "retry");
	else if (t->app_id != NULL) {
		snprintf(flow, sizeof(flow), "app:%s", t->app_id);
		weight = t->app_weight > 0 ? t->app_weight : 1;
	} else if (t->job_code != NULL)
		snprintf(flow, sizeof(flow), "jobs");
	return fair_flow_of(fair, flow, weight);
}

static void
cand_meta(struct nameset *ns, struct nameset_node *c, int dfd,
    const char *name)
{
	size_t len;
	char *data = spool_read_file(dfd, name, TASK_FILE_MAX, &len);
	struct task t;
	struct task_error err;
	int prio = PRIORITY_DEFAULT, flow = FAIR_LOCAL;

	if (data != NULL) {
		task_init(&t);
		if (task_decode(data, len, &t, &err) == 0) {
			if (t.priority >= 0)
				prio = t.priority;
			if (ns->fair != NULL)
				flow = task_flow(ns->fair, &t);
		}
		task_fini(&t);
		free(data);
	}
	nameset_set_prio(ns, c, prio);
	if (ns->fair != NULL)
		nameset_set_flow(ns, c, flow);
}

/*
 * Whether name waits for a rate limit until an instant still to come
 * (n->ratepark): it is not a candidate before (a rescan would only
 * take its lease to find it waiting); n->ratewait brings it back.
 */
static int
rate_parked(struct node *n, const char *name)
{
	struct nameset_node *p = nameset_find(&n->ratepark, name);

	return p != NULL && p->key > tstime_mono_ms();
}

void
node_cand_add(struct node *n, const char *name, int announced)
{
	struct nameset_node *c, *w;
	struct stat st;
	int64_t key;
	int added = 0;

	if (name[0] == '.' || name[0] == '\0')
		return;		/* editor/NFS temporaries, never tasks */
	if (nameset_find(&n->nohook, name) != NULL)
		return;		/* for another node: node_hooks_rescan() */
	if (rate_parked(n, name))
		return;		/* node_rate_requeue() brings it back */
	/* Claim order is the files' mtime order (their submit or due
	 * time): a released held task keeps its place (coord/hold.h). */
	key = fstatat(n->sp.dir[SPOOL_INCOMING], name, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 ? node_mtime_ms(&st) : INT64_MAX;
	if ((w = nameset_find(&n->waitnames, name)) != NULL) {
		/* Waits for a slot (limits_requeue brings it back) — unless
		 * the file was replaced since: then it is a new task file,
		 * claimed as such (its old place in waiting/ is only tried
		 * once more, in vain). */
		if (key == INT64_MAX || key == w->key)
			return;
		(void)nameset_remove(&n->waitnames, name);
	}
	c = nameset_add_ordered(&n->cand, name, key, CAND_ORDER_WALK, &added);
	if (c != NULL && added)
		cand_meta(&n->cand, c, n->sp.dir[SPOOL_INCOMING], name);
	if (c != NULL && announced)
		c->flags |= CAND_ANNOUNCED;
}

void
node_cand_again(struct node *n, int dfd, const char *name, int announced)
{
	struct nameset_node *c;
	struct stat st;
	int added = 0;

	if (dfd != n->qself) {
		node_cand_add(n, name, announced);
		return;
	}
	if (rate_parked(n, name))
		return;		/* node_rate_requeue() brings it back */
	/* Routed tasks too: by priority, aging from the mtime (kept in
	 * arrival order: a walk of 0). */
	if ((c = nameset_find(&n->qcand, name)) == NULL) {
		c = nameset_add_ordered(&n->qcand, name, fstatat(dfd, name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 ? node_mtime_ms(&st) : INT64_MAX,
		    0, &added);
		if (c != NULL && added)
			cand_meta(&n->qcand, c, dfd, name);
	}
	if (c != NULL && announced)
		c->flags |= CAND_ANNOUNCED;
}

void
node_scan_incoming(struct node *n)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(n->sp.dir[SPOOL_INCOMING])) == NULL) {
		log_warn("scan incoming/");
		return;
	}
	while ((de = readdir(dp)) != NULL)
		node_cand_add(n, de->d_name, 0);
	closedir(dp);
	/* And what the dispatcher put in our queue/<self>/. */
	if (n->qself >= 0 && (dp = spool_opendir(n->qself)) != NULL) {
		while ((de = readdir(dp)) != NULL)
			if (de->d_name[0] != '.')
				node_cand_again(n, n->qself, de->d_name, 0);
		closedir(dp);
	}
	n->route_dirty = 1;
}

long
node_copy_attempts(int dirfd, const char *name)
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

int
node_other_copy(struct node *n, const char *id, int dirfd, const char *name,
    const char *final, int from_delayed, char *why, size_t whylen)
{
	struct stat ts;
	char other[65];

	if (spool_in_active(&n->sp, final, NULL, other)) {
		int afd = openat(n->sp.dir[SPOOL_ACTIVE], other, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		long mine = node_copy_attempts(dirfd, name), theirs = -1;

		if (afd >= 0) {
			theirs = node_copy_attempts(afd, final);
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
	if (dirfd != n->sp.dir[SPOOL_HOLD] && fstatat(n->sp.dir[SPOOL_HOLD],
	    final, &ts, AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(why, whylen, "requestId: duplicate: \"%s\" is held "
		    "in hold/ (a second copy)", id);
		return 1;
	}
	if (!from_delayed && fstatat(n->sp.dir[SPOOL_DELAYED], final, &ts,
	    AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(why, whylen, "requestId: duplicate: \"%s\" already "
		    "waits in delayed/ (a second copy)", id);
		return 1;
	}
	if (fstatat(n->sp.dir[SPOOL_RESULTS], final, &ts,
	    AT_SYMLINK_NOFOLLOW) == 0 && !node_torn_result(n, id)) {
		snprintf(why, whylen, "requestId: duplicate: \"%s\" already "
		    "used (results/%s exists)", id, final);
		return 1;
	}
	return 0;
}

/* The per-key limit of t (README.md, "Per-key concurrency"): its
 * maxConcurrentPerKey, else max_concurrent_per_key's for its code; 0
 * when t has no concurrencyKey or no limit applies. */
static long
key_max(const struct node *n, const struct task *t)
{
	if (t->conc_key == NULL)
		return 0;
	if (t->max_per_key > 0)
		return t->max_per_key;
	return limits_max(n->cfg->max_concurrent_per_key, t->task_code);
}

/*
 * t (file name in dfd, of status st) waits for a limit: kept in
 * n->waiting under group (its code, or "<code>@<keyhash>") with its
 * place in the claim order; with a reason (NULL: the store failed, nothing
 * to show) marked WAITING with it, logged and announced to the index
 * when the reason is new.
 */
static void
limit_park(struct node *n, const struct task *t, int dfd, const char *name,
    const struct stat *st, int announced, const char *group,
    const char *reason)
{
	char old[LIMITS_REASON_MAX];
	int had, q = dfd == n->qself;
	struct nameset *to = q ? &n->qcand : &n->cand;

	if (reason != NULL && (!(had = limits_waiting_reason(&n->sp,
	    t->request_id, old, sizeof(old))) || strcmp(old, reason) != 0)) {
		log_info("%s: WAITING: %s", t->request_id, reason);
		if (limits_mark_waiting_why(&n->sp, t->request_id, reason) !=
		    0)
			log_warn("%s: state/waiting/", t->request_id);
		if (!had)
			node_index_note(n, t->request_id, dfd == n->qself ?
			    SPOOL_QUEUE : SPOOL_INCOMING, "WAITING",
			    dfd == n->qself ? n->sp.node : NULL, t, -1);
	}
	/* It goes back with its place in the claim order (its priority,
	 * its mtime, its flow), as cand_meta gave it. */
	(void)limits_wait(&n->waiting, &n->waitnames, group, name,
	    (announced ? CAND_ANNOUNCED : 0) | (q ? LIMITS_FROM_QUEUE : 0),
	    node_mtime_ms(st), t->priority >= 0 ? t->priority :
	    PRIORITY_DEFAULT, to->fair != NULL ? task_flow(to->fair, t) :
	    FAIR_LOCAL);
}

/* maxConcurrent and max_concurrent_per_key (maxconc.h): 0 when t may
 * start (its slots taken with the lease on fd), 1 when it waits (kept
 * in n->waiting; the lease's close frees a slot taken). */
static int
limit_wait(struct node *n, int fd, const struct task *t, int dfd,
    const char *name, const struct stat *sb, int announced)
{
	long max = limits_max(n->cfg->max_concurrent, t->task_code);
	long kmax = key_max(n, t);
	char why[256], reason[LIMITS_REASON_MAX], hash[CONCKEY_HASH_LEN + 1];
	char group[TASK_CODE_MAX + CONCKEY_HASH_LEN + 2];
	enum coord_status st;

	if (max <= 0 && kmax <= 0)
		return 0;
	if (max > 0) {
		st = coord_limit_acquire(n->coord, fd, t->task_code, max,
		    why, sizeof(why));
		if (st != COORD_OK) {
			if (st == COORD_ERR)
				log_warnx("%s: maxConcurrent: %s",
				    t->request_id, why);
			snprintf(reason, sizeof(reason), "maxConcurrent "
			    "%s=%ld reached", t->task_code, max);
			limit_park(n, t, dfd, name, sb, announced,
			    t->task_code,
			    st == COORD_ERR ? NULL : reason);
			return 1;
		}
	}
	if (kmax > 0) {
		if (conckey_hash(t->conc_key, hash) != 0) {
			log_warnx("%s: concurrencyKey: cannot digest the key "
			    "(OpenSSL); tried again later", t->request_id);
			node_cand_again(n, dfd, name, announced);
			return 1;
		}
		st = coord_limit_acquire_key(n->coord, fd, t->task_code, hash,
		    kmax, why, sizeof(why));
		if (st != COORD_OK) {
			if (st == COORD_ERR)
				log_warnx("%s: max_concurrent_per_key: %s",
				    t->request_id, why);
			if (t->max_per_key > 0)	/* the task's own limit */
				snprintf(reason, sizeof(reason),
				    "maxConcurrentPerKey %ld reached for key "
				    "'%.120s'", kmax, t->conc_key);
			else
				snprintf(reason, sizeof(reason),
				    "max_concurrent_per_key %s=%ld reached for "
				    "key '%.120s'", t->task_code, kmax,
				    t->conc_key);
			snprintf(group, sizeof(group), "%s@%s", t->task_code,
			    hash);
			limit_park(n, t, dfd, name, sb, announced, group,
			    reason);
			return 1;
		}
	}
	/* The marker stays until claim_run: a rate limit's wait after
	 * these slots keeps its reason (rate_wait says it once). */
	return 0;
}

/* n->ratewait flag: held by a per-key limit (no cap per code when
 * tried again: node_rate_requeue). */
#define RATE_BY_KEY	0x200

/* When the rate limit's store fails (Redis, state/rates/): the task
 * waits this long (ms) and is tried again; never more starts. */
#define RATE_ERR_WAIT_MS	1000

/* Bytes of a key shown in a WAITING reason. */
#define RATE_KEY_SHOWN	64

/*
 * One execution rate limit of spec (rate_limit or rate_limit_per_key,
 * which: the key's name) for t, per key when key is not NULL.  Returns
 * 0 when t's code has no limit in spec or a start was allowed (and
 * counted), 1 when t must wait *wait_ms, with the WAITING reason in
 * reason (rlen bytes).
 */
static int
rate_one(struct node *n, const struct task *t, const char *which,
    const char *spec, const char *key, int64_t *wait_ms, char *reason,
    size_t rlen)
{
	struct ratespec_item it;
	struct gcra_params p;
	enum execrate_status st;
	char why[256], at[TSTIME_BUF], shown[RATE_KEY_SHOWN + 1] = "";
	int64_t now = tstime_now_ms();
	int bad = 0;

	if (spec[0] == '\0' || ratespec_find(spec, t->task_code, &it) != 1 ||
	    gcra_params(it.n, it.period_ms, it.burst, &p) != 0)
		return 0;
	st = execrate_take(n->coord, t->task_code, key, &p, now, wait_ms,
	    &bad, why, sizeof(why));
	if (bad && !n->rate_bad_logged) {
		n->rate_bad_logged = 1;
		log_warnx("state/rates/: a state file of %s did not parse; "
		    "taken as no state (said once)", t->task_code);
	}
	if (st == EXECRATE_OK)
		return 0;
	if (key != NULL) {
		/* Text only: the reason is shown by status and the API. */
		size_t i;

		for (i = 0; key[i] != '\0' && i < RATE_KEY_SHOWN; i++)
			shown[i] = (unsigned char)key[i] < 0x20 ||
			    key[i] == 0x7f ? '?' : key[i];
		shown[i] = '\0';
	}
	if (st == EXECRATE_ERR) {
		*wait_ms = RATE_ERR_WAIT_MS;
		/* A long why is cut: the reason is for people. */
		if (snprintf(reason, rlen, "%s %s: cannot decide (%s); tried "
		    "again in %d ms", which, it.text, why, RATE_ERR_WAIT_MS) < 0)
			reason[0] = '\0';
		return 1;
	}
	metrics_rate_limited(t->task_code);
	tstime_format_ms(at, sizeof(at), now + *wait_ms);
	if (snprintf(reason, rlen, "%s %s%s%s%s: next start at %s", which,
	    it.text, key != NULL ? " (key \"" : "", shown, key != NULL ?
	    "\")" : "", at) < 0)
		reason[0] = '\0';
	return 1;
}

/* name waits for a rate limit until mono ms at (n->ratepark; ENOMEM:
 * not parked, rescans then try it as any candidate). */
static void
rate_park(struct node *n, const char *name, int64_t at)
{
	struct nameset_node *p = nameset_add(&n->ratepark, name, NULL);

	if (p != NULL)
		p->key = at;
}

/*
 * Execution rate limits (coord/execrate.h, README.md "Execution rate
 * limits"): 0 when t may start now (a token of each limit that applies
 * taken: per key first, then per code; a token taken is not given back,
 * so a later refusal or a failed claim rename costs one start of that
 * limit, fewer runs, never more), 1 when it waits: it stays in dfd
 * (incoming/ or queue/<self>/), marked WAITING with the reason
 * (limits_mark_waiting_why; the dispatcher clears only its own
 * reasons, claim_run this one), logged once, and kept in n->ratewait
 * until the instant a start may be allowed (node_rate_requeue), its
 * name in n->ratepark so that rescans skip it until then (it is not
 * lost: n->ratewait holds it; when memory ran out for that entry, the
 * periodic rescan is the fallback).
 */
static int
rate_wait(struct node *n, const struct task *t, int dfd, const char *name,
    int announced)
{
	/* The expanded concurrencyKey (core/conckey.h): NULL, no per-key
	 * rate limit applies. */
	const char *key = t->conc_key;
	char ent[TASK_CODE_MAX + SPOOL_NAME_MAX + 2];
	char reason[LIMITS_REASON_MAX], old[LIMITS_REASON_MAX];
	struct nameset_node *w;
	int64_t mono = tstime_mono_ms(), wait_ms = 0;
	int bykey = 0;

	if (key != NULL && key[0] == '\0')
		key = NULL;
	if (n->cfg->rate_limit[0] == '\0' && (key == NULL ||
	    n->cfg->rate_limit_per_key[0] == '\0'))
		return 0;
	snprintf(ent, sizeof(ent), "%s/%s", t->task_code, name);
	w = nameset_find(&n->ratewait, ent);
	if (w != NULL && w->key > mono)
		return 1;	/* waiting: no decision before its instant */
	if (key != NULL && rate_one(n, t, "rate_limit_per_key",
	    n->cfg->rate_limit_per_key, key, &wait_ms, reason,
	    sizeof(reason)))
		bykey = 1;
	else if (!rate_one(n, t, "rate_limit", n->cfg->rate_limit, NULL,
	    &wait_ms, reason, sizeof(reason))) {
		if (w != NULL)
			(void)nameset_remove(&n->ratewait, ent);
		(void)nameset_remove(&n->ratepark, name);
		return 0;
	}
	/* Said once per wait: while the marker holds a rate reason (its
	 * next start time moves, the wait goes on). */
	if (limits_waiting_reason(&n->sp, t->request_id, old,
	    sizeof(old)) != 1 || strncmp(old, "rate_limit", 10) != 0) {
		log_info("%s: WAITING: %s", t->request_id, reason);
		node_index_note(n, t->request_id, dfd == n->qself ?
		    SPOOL_QUEUE : SPOOL_INCOMING, "WAITING", dfd == n->qself ?
		    n->sp.node : NULL, t, -1);
	}
	if (limits_mark_waiting_why(&n->sp, t->request_id, reason) != 0)
		log_warn("%s: state/waiting/", t->request_id);
	if (w == NULL)
		w = nameset_add(&n->ratewait, ent, NULL);
	if (w == NULL)
		return 1;	/* ENOMEM: the next rescan finds it */
	w->key = mono + wait_ms;
	w->flags = (announced ? CAND_ANNOUNCED : 0) | (dfd == n->qself ?
	    LIMITS_FROM_QUEUE : 0) | (bykey ? RATE_BY_KEY : 0);
	if (w->key < n->next_rate)
		n->next_rate = w->key;
	rate_park(n, name, w->key);
	return 1;
}

static int
by_wait_name(const void *a, const void *b)
{
	return strcmp((*(struct nameset_node *const *)a)->name,
	    (*(struct nameset_node *const *)b)->name);
}

void
node_rate_requeue(struct node *n, int64_t now_mono)
{
	size_t k = 0, cnt = n->ratewait.count, run = 0;
	struct nameset_node **v, *w;
	char prev[TASK_CODE_MAX + 1] = "";
	struct ratespec_item it;
	struct gcra_params p = { 1, 0 };
	long cap = 0;
	int64_t next = INT64_MAX;

	if (cnt == 0 || (v = calloc(cnt, sizeof(*v))) == NULL) {
		n->next_rate = cnt == 0 ? INT64_MAX : now_mono + 100;
		return;
	}
	while (k < cnt && (w = nameset_pop(&n->ratewait)) != NULL)
		v[k++] = w;
	/* "<code>/<name>": by code, then requestId (time-ordered). */
	qsort(v, k, sizeof(*v), by_wait_name);
	for (size_t i = 0; i < k; i++) {
		const char *slash = strchr(v[i]->name, '/');
		char code[TASK_CODE_MAX + 1];
		int64_t key = v[i]->key;
		int flags = v[i]->flags;

		snprintf(code, sizeof(code), "%.*s", slash != NULL ?
		    (int)(slash - v[i]->name) : 0, v[i]->name);
		if (strcmp(code, prev) != 0) {
			memcpy(prev, code, sizeof(prev));
			run = 0;
			cap = ratespec_find(n->cfg->rate_limit, code, &it) == 1
			    && gcra_params(it.n, it.period_ms, it.burst, &p) ==
			    0 ? it.burst : 0;	/* 0: no limit now */
		}
		if (slash != NULL && key <= now_mono && ((flags & RATE_BY_KEY)
		    || cap == 0 || run < (size_t)cap)) {
			run += !(flags & RATE_BY_KEY);
			(void)nameset_remove(&n->ratepark, slash + 1);
			node_cand_again(n, flags & LIMITS_FROM_QUEUE ? n->qself :
			    n->sp.dir[SPOOL_INCOMING], slash + 1,
			    flags & CAND_ANNOUNCED);
			free(v[i]);
			continue;
		}
		if (slash != NULL) {
			/* Not yet, or past the cap: one interval later. */
			if (key <= now_mono)
				key = now_mono + p.interval_ms;
			if ((w = nameset_add(&n->ratewait, v[i]->name, NULL)) !=
			    NULL) {
				w->key = key;
				w->flags = flags;
				if (key < next)
					next = key;
				rate_park(n, slash + 1, key);
			} else
				(void)nameset_remove(&n->ratepark, slash + 1);
		}
		free(v[i]);
	}
	free(v);
	n->next_rate = next;
}

/*
 * Open dfd/name (incoming/ or queue/<self>/) for a claim: a descriptor
 * whose flock is held and verified to be on the file of that name, with
 * its stat in *st; or -1 when there is nothing to claim now (gone, being
 * written, another claimant's, quarantined, or again later).
 */
static int
claim_open(struct node *n, int dfd, const char *name, int announced,
    struct stat *st)
{
	char why[512];
	int fd;

	memset(st, 0, sizeof(*st));
	fd = spool_open_safe(dfd, name, TASK_FILE_MAX, st, why, sizeof(why));
	if (fd < 0) {
		if (errno == ENOENT) {
			char id[TASK_ID_MAX + 1];
			enum spool_dir where;

			/* Claimed or cancelled meanwhile; a WAITING marker
			 * of a task that is nowhere now (its file deleted
			 * while it waited) goes too. */
			if (node_name_to_id(name, id) == 0 &&
			    limits_is_waiting(&n->sp, id) &&
			    spool_locate(&n->sp, id, &where, NULL) != 0)
				(void)limits_mark_waiting(&n->sp, id, 0);
			return -1;
		}
		/* A link(2)-publishing writer has two links for a moment. */
		if (errno == EINVAL && st->st_nlink > 1 && S_ISREG(st->st_mode)
		    && tstime_now_ms() - (int64_t)st->st_ctim.tv_sec * 1000 -
		    st->st_ctim.tv_nsec / 1000000 < n->cfg->settle_ms)
			return -1;
		if (errno == EFBIG || errno == ELOOP || errno == EINVAL ||
		    errno == EACCES || errno == EPERM)
			node_quarantine(n, dfd, name, why);
		else if (node_fd_short(n, errno, "open incoming/"))
			node_cand_again(n, dfd, name, announced);
		else
			log_warn("open incoming/%s", name);
		return -1;
	}
	if (coord_flock_verify(fd, dfd, name) != 0) {
		close(fd);		/* another daemon is claiming it */
		return -1;
	}
	return fd;
}

/*
 * A file of incoming/ not settled yet is looked at again in ms
 * milliseconds (and a little): the next full rescan is brought forward
 * to then, so an unsettled file waits settle_ms, not scan_interval_ms.
 * Rescans come at least SETTLE_SLACK_MS apart, so a writer leaving a new
 * cut-short file every millisecond costs at most 20 rescans of
 * incoming/ a second (a rescan of only the files due would cost less).
 */
static void
settle_later(struct node *n, int64_t ms)
{
	int64_t at = tstime_mono_ms() + (ms > 0 ? ms : 0) + SETTLE_SLACK_MS;

	if (at < n->next_scan)
		n->next_scan = at;
}

/*
 * Decode the task read from dfd/name (bytes in b, file stat st) into t
 * and settle its requestId: the body's, matching the file name, or one
 * generated for a body without one.  Returns 0 with t->request_id set,
 * or -1 (quarantined, or not settled yet).
 */
static int
claim_decode(struct node *n, int dfd, const char *name, int announced,
    const struct stat *st, const struct buf *b, struct task *t, int64_t now)
{
	char why[512], id[TASK_ID_MAX + 1];
	struct task_error te;

	if (task_decode(b->data != NULL ? b->data : "", b->len, t, &te) != 0) {
		/* May still be being written: not announced complete, or
		 * announced but ending early (`echo ... > f; echo ... >> f`
		 * closes the file twice).  Young enough: looked at again
		 * once the settle time is over. */
		if ((!announced || te.truncated) &&
		    now - node_mtime_ms(st) < n->cfg->settle_ms) {
			settle_later(n, node_mtime_ms(st) +
			    n->cfg->settle_ms - now);
			return -1;
		}
		snprintf(why, sizeof(why), "%s: %s%s", te.field, te.rule,
		    te.truncated ? " (the file ends early and was not "
		    "completed within settle_ms)" : "");
		node_quarantine(n, dfd, name, why);
		return -1;
	}
	/* The requestId is the body's, and the file must then be named
	 * <requestId>.json; a body without one gets a generated time-ordered
	 * id (the file, any *.json name, is renamed to it when claimed). */
	if (node_name_to_id(name, id) != 0 && t->request_id[0] == '\0' &&
	    (strlen(name) <= 5 || strcmp(name + strlen(name) - 5, ".json"))) {
		node_quarantine(n, dfd, name, "file name: must be "
		    "<requestId>.json or end in .json");
		return -1;
	}
	if (t->request_id[0] != '\0') {
		size_t il = strlen(t->request_id);

		if (strlen(name) != il + 5 || strncmp(name, t->request_id,
		    il) != 0 || strcmp(name + il, ".json") != 0) {
			node_quarantine(n, dfd, name, "requestId: does not "
			    "match the file name (must be <requestId>.json)");
			return -1;
		}
	} else {
		generated_id(t->request_id, sizeof(t->request_id), name, st);
	}
	return 0;
}

/*
 * One copy of a requestId is claimed at a time (claimmark.h): the
 * marker is held from here until after the rename into active/ (or the
 * decision not to claim), so two copies of one id (in incoming/ and
 * queue/<n>/, a re-drop, a crash in the delay path) can never both pass
 * the checks that follow.  Returns the marker's descriptor, or -1 (the
 * next rescan tries again).
 */
static int
claim_mark(struct node *n, const char *id, int64_t now)
{
	char prev[CLAIMMARK_INFO_MAX];
	int over, mfd;

	mfd = claimmark_take(&n->sp, id, n->sp.node, now, &over, prev,
	    sizeof(prev));
	if (mfd < 0) {
		if (errno == EWOULDBLOCK || errno == EAGAIN)
			log_debug("%s: another copy is being claimed "
			    "now; looked at again later", id);
		else
			log_warn("%s: state/claims/%s", id, id);
		return -1;
	}
	if (over && prev[0] != '\0')
		log_info("%s: claim marker left by a claimant that "
		    "died mid-claim (%s) taken over", id, prev);
	return mfd;
}

/*
 * Not due yet: delay/at triggers and retries wait in delayed/.  Returns
 * 1 when t (from dfd/name, final = <id>.json) is not due and was moved
 * there (or is to be tried again), 0 when it is due now (its
 * not_before_ms set from the trigger).
 */
static int
claim_delay(struct node *n, int dfd, const char *name, int announced,
    struct task *t, const char *final, int64_t now)
{
	const char *id = t->request_id;
	int64_t due;

	due = t->not_before_ms;
	if (due < 0 && t->trigger == TASK_TRIGGER_DELAY)
		due = t->created_ms + t->delay_ms;
	if (due < 0 && t->trigger == TASK_TRIGGER_AT)
		due = t->run_at_ms;
	if (due > now + 1) {
		struct buf enc;

		t->not_before_ms = due;
		buf_init(&enc, 0);
		if (task_encode(t, &enc) != 0 ||
		    spool_publish(&n->sp, n->sp.dir[SPOOL_DELAYED], final,
		    enc.data, enc.len, due, 0) != 0) {
			int e = errno;

			log_warn("%s: cannot move to delayed/", id);
			buf_fini(&enc);
			if (node_spool_full(n, e, "delayed/"))
				node_cand_again(n, dfd, name, announced);
			return 1;
		}
		buf_fini(&enc);
		if (unlinkat(dfd, name, 0) != 0)
			log_warn("%s: unlink incoming/%s", id, name);
		node_mark_dirty(n, SPOOL_INCOMING);
		if (n->leader)
			node_delayed_note(n, final);
		node_index_note(n, id, SPOOL_DELAYED, NULL, NULL, t, due);
		log_debug("%s: delayed until %lld", id, (long long)due);
		return 1;
	}
	if (t->not_before_ms < 0 && due >= 0)
		t->not_before_ms = due;
	return 0;
}

/*
 * t (dfd/name) cannot run here for what (a phrase for the log: "no hook
 * ..." or "not all of its tags ..."), which is this node's trouble, not
 * the task's: a task of incoming/ is left to the other nodes (parked in
 * n->nohook until our hooks or tags change: node_hooks_rescan()); one
 * routed to us goes back to incoming/ to be routed again (the
 * dispatcher offers it to the nodes that advertise what it needs, or
 * marks it WAITING).
 */
static void
claim_not_here(struct node *n, int dfd, const char *name, int announced,
    const struct task *t, const char *what)
{
	const char *id = t->request_id;

	if (dfd != n->qself) {
		struct nameset_node *p = nameset_add(&n->nohook, name, NULL);

		if (p != NULL && announced)
			p->flags |= CAND_ANNOUNCED;
		log_debug("%s: %s; left to the nodes that have it", id, what);
	} else if (spool_move_excl(dfd, name, n->sp.dir[
	    SPOOL_INCOMING], name) != 0)
		log_warn("%s: move back to incoming/", id);
	else {
		log_info("%s: in queue/%s/ but %s; back to incoming/", id,
		    n->sp.node, what);
		node_index_note(n, id, SPOOL_INCOMING, NULL, NULL, t, -1);
	}
}

/*
 * Whether t (dfd/name) is for this node: routed tasks (DESIGN §6) are
 * the dispatcher's until it moves them to queue/<node>/, and a task
 * whose hook or one of whose tags (core/tags.h) this node lacks is left
 * to the nodes that have them.  Returns 1 when this node does not run
 * it (left, parked or sent back), 0 when it may.
 */
static int
claim_placement(struct node *n, int dfd, const char *name, int announced,
    const struct task *t)
{
	const char *id = t->request_id, *tg;
	char what[TAGS_TEXT_MAX + CONFIG_PATH_MAX + 64];

	/* Routed tasks (DESIGN §6): the leader's dispatcher moves them to
	 * queue/<node>/; from our queue we run only what is still ours. */
	if (dfd != n->qself && dispatch_parse(t->route, &tg) > DISPATCH_ANY)
		return 1;
	if (dfd == n->qself && !router_owns(t, n->sp.node)) {
		log_info("%s: in queue/%s/ but routed to %s; back to "
		    "incoming/", id, n->sp.node, t->route);
		if (spool_move_excl(dfd, name, n->sp.dir[
		    SPOOL_INCOMING], name) != 0)
			log_warn("%s: move back to incoming/", id);
		else
			node_index_note(n, id, SPOOL_INCOMING, NULL, NULL, t,
			    -1);
		return 1;
	}
	/* Placement: a missing hook or tag is this node's, not the
	 * task's (README "Where a task runs", "Node tags"). */
	if (!tags_has_all(n->cfg->tags, t->require_tags)) {
		snprintf(what, sizeof(what), "this node lacks some of its "
		    "tags \"%s\" (tags = %s)", t->require_tags,
		    n->cfg->tags[0] != '\0' ? n->cfg->tags : "none");
		claim_not_here(n, dfd, name, announced, t, what);
		return 1;
	}
	if (node_hook_ok(n, t->task_code))
		return 0;
	if (hookset_has(n->hooks, t->task_code) && node_hooks_rescan(n, 0))
		node_heartbeat(n);	/* we advertised it: correct that */
	snprintf(what, sizeof(what), "no hook \"%s\" in %s", t->task_code,
	    n->cfg->hooks_dir);
	claim_not_here(n, dfd, name, announced, t, what);
	return 1;
}

/*
 * The claim itself: rename dfd/name into active/<self>/final, the flock
 * being held on fd, and verify that the locked inode is what moved.
 * Returns 0 when active/<self>/final is ours, -1 when not (another node
 * won, a duplicate quarantined, or again later).
 */
static int
claim_rename(struct node *n, int dfd, const char *name, int announced,
    int fd, const char *id, const char *final)
{
	char why[512];

	if (spool_move_excl(dfd, name, n->sp.self, final) != 0) {
		if (errno == EEXIST) {
			snprintf(why, sizeof(why), "requestId: \"%s\" is "
			    "already running on this node", id);
			node_quarantine(n, dfd, name, why);
		} else if (errno != ENOENT && errno != ESTALE) {
			int e = errno;

			log_warn("%s: claim rename", id);
			if (node_spool_full(n, e, "active/") ||
			    node_fd_short(n, e, "claim rename"))
				node_cand_again(n, dfd, name, announced);
		}
		return -1;		/* ENOENT/ESTALE: another node won */
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
				node_cand_again(n, dfd, name, 1);
			return -1;
		}
	}
	return 0;
}

/*
 * Claimed: t is active/<self>/final (first named name), its lease on fd,
 * which this function takes over.  WAITING markers end, a cancel asked
 * for before the claim concludes it at once, else its hook starts.
 */
static void
claim_run(struct node *n, struct task *t, const char *name,
    const char *final, int fd, int64_t now)
{
	const char *id = t->request_id;

	/* No fsync: a claim lost in a crash leaves the task in incoming/,
	 * to be claimed again (delivery is at-least-once anyway). */
	n->claimed++;
	/* A WAITING marker (the dispatcher's, router.h) ends with the wait. */
	{
		char stem[TASK_ID_MAX + 1];

		if (limits_is_waiting(&n->sp, id))
			(void)limits_mark_waiting(&n->sp, id, 0);
		if (node_name_to_id(name, stem) == 0 && strcmp(stem, id) != 0 &&
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
			a.attempt = (int)t->nattempts + 1;
			snprintf(a.node, sizeof(a.node), "%s", n->sp.node);
			a.start_ms = -1;	/* never started */
			a.end_ms = now;
			a.exit_code = -1;
			a.retry_at_ms = -1;
			a.outcome = TASK_OUTCOME_CANCELLED;
			snprintf(a.reason, sizeof(a.reason), "cancelled "
			    "before it started");
			node_conclude(n, t, n->sp.self, final, fd, &a, 1,
			    NULL, 0, NULL);
			return;
		}
	}
	node_index_note(n, id, SPOOL_ACTIVE, NULL, n->sp.node, t, -1);
	/* The slot (or the conclusion) owns fd. */
	node_start_hook(n, t, final, fd);
}

void
node_claim(struct node *n, int dfd, const char *name, int announced)
{
	int fd;
	struct stat st;
	char why[512], id[TASK_ID_MAX + 1] = "", final[SPOOL_NAME_MAX];
	struct task t;
	struct buf b;
	int64_t now;
	int mfd = -1;			/* the claim marker, held */

	if ((fd = claim_open(n, dfd, name, announced, &st)) < 0)
		return;
	task_init(&t);
	buf_init(&b, TASK_FILE_MAX);
	if (buf_read_fd(&b, fd) != 0) {
		log_warn("read incoming/%s", name);
		goto out;
	}
	now = tstime_now_ms();
	if (claim_decode(n, dfd, name, announced, &st, &b, &t, now) != 0)
		goto out;
	if (t.created_ms < 0)
		t.created_ms = node_mtime_ms(&st);
	if (node_deps_divert(n, dfd, name, &t) != 0)
		goto out;	/* into blocked/, or refused */
	snprintf(id, sizeof(id), "%s", t.request_id);
	snprintf(final, sizeof(final), "%s.json", id);
	if ((mfd = claim_mark(n, id, now)) < 0)
		goto out;	/* the next rescan tries again */
	/* A requestId is used once: another copy means this one is a
	 * duplicate, kept in corrupt/ with a reason naming the other copy,
	 * never run (two runs could overlap).  (A crash in the delay path
	 * can leave the user's original here beside the published
	 * delayed/ copy; that one is the task.) */
	switch (node_other_copy(n, id, dfd, name, final, 0, why, sizeof(why))) {
	case 1:
		node_quarantine(n, dfd, name, why);
		goto out;
	case 2:
		log_debug("%s", why);
		goto out;	/* the next rescan looks again */
	}
	if (node_hold_claim(n, dfd, name, final, &t))
		goto out;	/* held (coord/hold.h) */
	if (t.created_ms < 0)
		t.created_ms = node_mtime_ms(&st);
	if (claim_delay(n, dfd, name, announced, &t, final, now) ||
	    claim_placement(n, dfd, name, announced, &t))
		goto out;
	if (node_lease_take(n, fd, id, (int)t.nattempts + 1) != 0) {
		if (n->coord_down) {
			node_cand_again(n, dfd, name, announced);
			n->claim_pause = tstime_mono_ms() + 1000;
		}
		goto out;		/* leased elsewhere, or no backend */
	}
	if (limit_wait(n, fd, &t, dfd, name, &st, announced) ||
	    rate_wait(n, &t, dfd, name, announced) ||
	    claim_rename(n, dfd, name, announced, fd, id, final) != 0)
		goto out;
	claim_run(n, &t, name, final, fd, now);
	fd = -1;		/* the slot (or the conclusion) owns it */
out:
	/* After the rename: the copy in active/<self>/ is the mark now. */
	claimmark_release(&n->sp, id, mfd);
	if (fd >= 0)
		coord_lease_close(n->coord, fd);
	task_fini(&t);
	buf_fini(&b);
}
