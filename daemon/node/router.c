/*
 * router — the leader's dispatcher; see router.h.
 */
#include "node/router.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "spool/readfd.h"
#include "core/dispatch.h"
#include "coord/index.h"
#include "spool/log.h"
#include "coord/maxconc.h"
#include "core/nameset.h"
#include "core/ring.h"
#include "core/tags.h"
#include "spool/clock.h"
#include "coord/wakeup.h"

#define LIVE_TTL_MS	500	/* registry re-read at most this often */

struct router {
	const struct spool *sp;
	struct coord *co;
	long heartbeat_ms;
	struct coord_node *live;	/* live nodes, id order */
	struct dispatch_node *dn;	/* the same, with assigned counts */
	size_t nlive;
	struct ring *ring;		/* of the live nodes */
	int64_t live_at;		/* mono ms of the last read, 0 never */
	int live_ok;			/* the last read succeeded */
	unsigned long rr;		/* round-robin position */
	struct nameset plain;		/* incoming/ names not to route */
	/* The live nodes that run one task code (placement): */
	struct dispatch_node *cdn;	/* ... as dispatch nodes */
	size_t *cmap;			/* ... their indexes in dn */
	size_t ncap;
	char ccode[TASK_CODE_MAX + 1];	/* ... for this code ("" none) */
	char ctags[TAGS_TEXT_MAX];	/* ... and these required tags */
	struct ring *cring;		/* ... their ring, NULL until used */
};

struct router *
router_new(const struct spool *sp, struct coord *c, long heartbeat_ms)
{
	struct router *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->sp = sp;
	r->co = c;
	r->heartbeat_ms = heartbeat_ms;
	if (nameset_init(&r->plain) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

static void
live_clear(struct router *r)
{
	free(r->live);
	free(r->dn);
	ring_free(r->ring);
	free(r->cdn);
	free(r->cmap);
	ring_free(r->cring);
	r->live = NULL;
	r->dn = NULL;
	r->ring = NULL;
	r->cdn = NULL;
	r->cmap = NULL;
	r->cring = NULL;
	r->ccode[0] = '\0';
	r->ctags[0] = '\0';
	r->nlive = r->ncap = 0;
}

void
router_free(struct router *r)
{
	if (r == NULL)
		return;
	live_clear(r);
	nameset_fini(&r->plain);
	free(r);
}

/* Re-read the registry when older than LIVE_TTL_MS; 0 or -1. */
static int
live_refresh(struct router *r, int64_t now_ms)
{
	struct coord_node *v;
	size_t n, k = 0;
	char why[512];
	int64_t mono = tstime_mono_ms();
	const char **ids;

	if (r->live_at != 0 && mono - r->live_at < LIVE_TTL_MS)
		return r->live_ok ? 0 : -1;
	r->live_at = mono;
	if (coord_nodes(r->co, &v, &n, why, sizeof(why)) != 0) {
		r->live_ok = 0;
		return -1;
	}
	live_clear(r);
	/* Keep the live ones that claim (not drained, not stopping), in
	 * order: a draining node's queue goes back to incoming/. */
	for (size_t i = 0; i < n; i++)
		if (coord_node_alive(&v[i], now_ms, r->heartbeat_ms) &&
		    v[i].draining == 0)
			v[k++] = v[i];
	r->live = v;
	r->nlive = k;
	r->dn = calloc(k > 0 ? k : 1, sizeof(*r->dn));
	r->cdn = calloc(k > 0 ? k : 1, sizeof(*r->cdn));
	r->cmap = calloc(k > 0 ? k : 1, sizeof(*r->cmap));
	ids = calloc(k > 0 ? k : 1, sizeof(*ids));
	if (r->dn == NULL || r->cdn == NULL || r->cmap == NULL || ids ==
	    NULL) {
		free(ids);
		live_clear(r);
		r->live_ok = 0;
		return -1;
	}
	for (size_t i = 0; i < k; i++) {
		r->dn[i].id = v[i].id;
		r->dn[i].slots = v[i].slots;
		r->dn[i].running = v[i].running;
		ids[i] = v[i].id;
	}
	r->ring = ring_new(ids, k, RING_VNODES);
	free(ids);
	log_debug("dispatch: %zu live node(s) of %zu in the registry", k, n);
	r->live_ok = r->ring != NULL;
	return r->live_ok ? 0 : -1;
}

static int
is_live(const struct router *r, const char *id)
{
	for (size_t i = 0; i < r->nlive; i++)
		if (strcmp(r->live[i].id, id) == 0)
			return 1;
	return 0;
}

/*
 * Placement: the live nodes whose heartbeat says they run code and have
 * every tag of the list tags (core/tags.h; NULL: none required), into
 * r->cdn (with their current counts) and r->cmap (indexes in r->dn), in
 * id order.  Returns how many.  The ring of that subset is built on
 * demand (capable_ring) and kept while the code, the tags and the
 * registry stay.
 */
static size_t
capable(struct router *r, const char *code, const char *tags)
{
	if (tags == NULL)
		tags = "";
	if (strcmp(r->ccode, code) != 0 || strcmp(r->ctags, tags) != 0) {
		ring_free(r->cring);
		r->cring = NULL;
		snprintf(r->ccode, sizeof(r->ccode), "%s", code);
		snprintf(r->ctags, sizeof(r->ctags), "%s", tags);
	}
	r->ncap = 0;
	for (size_t i = 0; i < r->nlive; i++)
		if (coord_node_runs(&r->live[i], code) &&
		    coord_node_has_tags(&r->live[i], tags)) {
			r->cdn[r->ncap] = r->dn[i];
			r->cmap[r->ncap++] = i;
		}
	return r->ncap;
}

/*
 * Why no live node can take t (capable() found none): the reason of its
 * WAITING marker, into reason (LIMITS_REASON_MAX bytes).  No live node
 * has the tags: "no live node has tags '<list>'"; else none has the
 * hook: "no live node has hook '<code>'"; else those with the hook lack
 * the tags: "no live node has hook '<code>' and tags '<list>'".  A list
 * too long for the marker is cut, ending "...".
 */
static void
placement_why(const struct router *r, const struct task *t, char *reason)
{
	int hook = 0, tags = 0;
	const char *need = t->require_tags != NULL ? t->require_tags : "";
	int n;

	for (size_t i = 0; i < r->nlive; i++) {
		hook |= coord_node_runs(&r->live[i], t->task_code);
		tags |= coord_node_has_tags(&r->live[i], need);
	}
	if (need[0] == '\0' || (!hook && tags))
		n = snprintf(reason, LIMITS_REASON_MAX, "no live node has "
		    "hook '%s'", t->task_code);
	else if (!tags)
		n = snprintf(reason, LIMITS_REASON_MAX, "no live node has "
		    "tags '%s'", need);
	else
		n = snprintf(reason, LIMITS_REASON_MAX, "no live node has "
		    "hook '%s' and tags '%s'", t->task_code, need);
	if (n >= LIMITS_REASON_MAX)
		memcpy(reason + LIMITS_REASON_MAX - 5, "...'", 5);
}

/* The ring for consistent_hash over r->cdn: the full ring when every
 * live node is capable (affinity unchanged), else the subset's. */
static struct ring *
capable_ring(struct router *r)
{
	const char **ids;

	if (r->ncap == r->nlive)
		return r->ring;
	if (r->cring != NULL)
		return r->cring;
	if ((ids = calloc(r->ncap > 0 ? r->ncap : 1, sizeof(*ids))) == NULL)
		return NULL;
	for (size_t i = 0; i < r->ncap; i++)
		ids[i] = r->cdn[i].id;
	r->cring = ring_new(ids, r->ncap, RING_VNODES);
	free(ids);
	return r->cring;
}

/* Whether a WAITING marker's reason is the dispatcher's (below), not
 * maxConcurrent's (maxconc.h), so that only ours are cleared here. */
static int
placement_reason(const char *reason)
{
	return strncmp(reason, "no live node ", 13) == 0 ||
	    strncmp(reason, "node '", 6) == 0;
}

/*
 * Task t of incoming/ waits: no live node can run it now.  Marked
 * WAITING with reason (kept while it stays the same), logged once.
 */
static void
placement_wait(struct router *r, const struct task *t, const char *reason)
{
	char old[LIMITS_REASON_MAX];

	if (limits_waiting_reason(r->sp, t->request_id, old, sizeof(old)) ==
	    1 && (strcmp(old, reason) == 0 || !placement_reason(old)))
		return;		/* already said, or maxConcurrent's */
	if (limits_mark_waiting_why(r->sp, t->request_id, reason) != 0) {
		log_warn("%s: state/waiting/", t->request_id);
		return;
	}
	log_info("%s: WAITING: %s", t->request_id, reason);
	if (coord_leases_expire(r->co))
		(void)index_put(r->co, t->request_id, SPOOL_INCOMING,
		    "WAITING", NULL, t->task_code, (long)t->nattempts, -1, 0);
}

/* Some live node can run id now: clear the dispatcher's WAITING marker,
 * if any (d: where the task is now, for the index). */
static void
placement_clear(struct router *r, const char *id, enum spool_dir d,
    const char *node)
{
	char old[LIMITS_REASON_MAX];

	if (limits_waiting_reason(r->sp, id, old, sizeof(old)) != 1 ||
	    !placement_reason(old))
		return;
	(void)limits_mark_waiting(r->sp, id, 0);
	if (coord_leases_expire(r->co))
		(void)index_put(r->co, id, d, spool_state_name(d), node, NULL,
		    -1, -1, 0);
}

/* Wake node up (wakeup.h) for queue/<node>/file; best effort. */
static void
wake_node(struct router *r, const char *node, const char *file)
{
	char path[SPOOL_NAME_MAX + 96], why[256];

	if (!coord_leases_expire(r->co))
		return;		/* embedded: inotify sees it */
	snprintf(path, sizeof(path), "queue/%s/%s", node, file);
	(void)wakeup_publish(r->co, path, why, sizeof(why));
}

/* The index (index.h): file name.json is now in dir d (partial: the
 * code and attempts stay as indexed); forget it when d is SPOOL_NDIRS. */
static void
index_move(struct router *r, const char *name, enum spool_dir d,
    const char *node)
{
	char id[TASK_ID_MAX + 1];
	size_t len = strlen(name);

	if (!coord_leases_expire(r->co) || len <= 5 || len - 5 > TASK_ID_MAX)
		return;
	memcpy(id, name, len - 5);
	id[len - 5] = '\0';
	if (d == SPOOL_NDIRS)
		(void)index_forget(r->co, id);
	else
		(void)index_put(r->co, id, d, spool_state_name(d), node, NULL,
		    -1, -1, 0);
}

/* Move incoming/name to queue/<node>/final; 0 or -1. */
static int
to_queue(struct router *r, const char *name, const char *node,
    const char *final)
{
	int qfd = spool_node_dir(r->sp, SPOOL_QUEUE, node), rc;

	if (qfd < 0)
		return -1;
	rc = spool_move_excl(r->sp->dir[SPOOL_INCOMING], name, qfd, final);
	if (rc == 0)
		(void)spool_sync_dir(r->sp, qfd);
	close(qfd);
	if (rc == 0) {
		index_move(r, final, SPOOL_QUEUE, node);
		wake_node(r, node, final);
	}
	return rc;
}

/* One shard per live node, then the original goes; count published. */
static int
broadcast(struct router *r, struct task *t, const char *name)
{
	char id[TASK_ID_MAX + 1], sid[TASK_ID_MAX + 32];
	char fname[TASK_ID_MAX + 48];
	char route[CONFIG_NODE_MAX + 8];
	int done = 0;

	snprintf(id, sizeof(id), "%s", t->request_id);
	if (strlen(id) + 6 > TASK_ID_MAX) {
		log_warnx("%s: requestId too long to add a shard suffix; "
		    "broadcast not done", id);
		return 0;
	}
	/* One shard per live node that runs the code (capable()). */
	for (size_t i = 0; i < r->ncap; i++) {
		const char *nid = r->cdn[i].id;
		struct buf enc;
		int qfd;

		snprintf(sid, sizeof(sid), "%s.%zu", id, i);
		snprintf(fname, sizeof(fname), "%s.json", sid);
		snprintf(route, sizeof(route), "node:%s", nid);
		if (strlen(sid) > TASK_ID_MAX)
			return done;	/* checked above: cannot happen */
		memcpy(t->request_id, sid, strlen(sid) + 1);
		free(t->route);
		t->route = strdup(route);
		t->shard_index = (int)i;
		t->shard_total = (int)r->ncap;
		buf_init(&enc, 0);
		qfd = spool_node_dir(r->sp, SPOOL_QUEUE, nid);
		if (t->route == NULL || qfd < 0 || task_encode(t, &enc) != 0 ||
		    (spool_publish(r->sp, qfd, fname, enc.data, enc.len, -1,
		    SPOOL_PUBLISH_EXCL) != 0 && errno != EEXIST)) {
			log_warn("%s: broadcast shard %zu to %s", id, i, nid);
			buf_fini(&enc);
			if (qfd >= 0)
				close(qfd);
			return done;	/* the original stays: tried again */
		}
		buf_fini(&enc);
		close(qfd);
		wake_node(r, nid, fname);
		done++;
	}
	if (unlinkat(r->sp->dir[SPOOL_INCOMING], name, 0) != 0)
		log_warn("%s: remove broadcast original", id);
	placement_clear(r, id, SPOOL_NDIRS, NULL);
	index_move(r, name, SPOOL_NDIRS, NULL);
	(void)spool_sync_dir(r->sp, r->sp->dir[SPOOL_INCOMING]);
	log_info("%s: broadcast as %d shard(s) %s.0 .. %s.%d", id, done, id,
	    id, done - 1);
	return done;
}

/*
 * Remember incoming/name (st: its fstat) as not to route.  Keyed by
 * inode: a file replaced under the same name (a retry, another copy of
 * the id) is read again.
 */
static void
plain_add(struct router *r, const char *name, const struct stat *st)
{
	struct nameset_node *p = nameset_add(&r->plain, name, NULL);

	if (p != NULL)
		p->key = (int64_t)st->st_ino;
}

/*
 * Why the live node target cannot take t routed node:<target>: the
 * reason of its WAITING marker, into reason (LIMITS_REASON_MAX bytes):
 * "node '<id>' has no hook '<code>'" or "node '<id>' lacks tags
 * '<list>'" (a list too long cut, ending "...").
 */
static void
node_why(const struct router *r, const char *target, const struct task *t,
    char *reason)
{
	for (size_t i = 0; i < r->nlive; i++) {
		const struct coord_node *nd = &r->live[i];

		if (strcmp(nd->id, target) != 0)
			continue;
		if (coord_node_runs(nd, t->task_code)) {
			if (snprintf(reason, LIMITS_REASON_MAX, "node '%s' "
			    "lacks tags '%s'", target, t->require_tags !=
			    NULL ? t->require_tags : "") >= LIMITS_REASON_MAX)
				memcpy(reason + LIMITS_REASON_MAX - 5, "...'",
				    5);
			return;
		}
	}
	snprintf(reason, LIMITS_REASON_MAX, "node '%s' has no hook '%s'",
	    target, t->task_code);
}

/* Route incoming/name if it is a due routed task; returns files moved. */
static int
route_one(struct router *r, const char *name, int64_t now_ms)
{
	int fd, dfd = r->sp->dir[SPOOL_INCOMING], route, k, moved = 0;
	const char *target;
	char why[512], final[SPOOL_NAME_MAX], reason[LIMITS_REASON_MAX] = "";
	size_t ncap;
	struct stat st;
	struct task t;
	struct task_error te;
	struct buf b;
	int64_t due;

	fd = spool_open_safe(dfd, name, TASK_FILE_MAX, &st, why, sizeof(why));
	if (fd < 0)
		return 0;
	if (coord_flock_verify(fd, dfd, name) != 0) {
		close(fd);		/* being claimed or routed */
		return 0;
	}
	task_init(&t);
	buf_init(&b, TASK_FILE_MAX);
	if (buf_read_fd(&b, fd) != 0 || task_decode(b.data != NULL ? b.data :
	    "", b.len, &t, &te) != 0)
		goto out;		/* the claim path deals with it */
	route = dispatch_parse(t.route, &target);
	if (t.request_id[0] == '\0') {
		size_t nl = strlen(name);

		/* Its id is given when it is claimed; until then it is known
		 * (status, the WAITING marker) by its file name. */
		if (route > DISPATCH_ANY || nl <= 5 || nl - 5 > TASK_ID_MAX ||
		    strcmp(name + nl - 5, ".json") != 0)
			goto out;	/* the claim path deals with it */
		memcpy(t.request_id, name, nl - 5);
		t.request_id[nl - 5] = '\0';
		if (!spool_id_ok(t.request_id))
			goto out;
	}
	due = t.not_before_ms;
	if (due < 0 && t.trigger == TASK_TRIGGER_DELAY)
		due = (t.created_ms >= 0 ? t.created_ms : (int64_t)st.st_mtim.
		    tv_sec * 1000) + t.delay_ms;
	if (due < 0 && t.trigger == TASK_TRIGGER_AT)
		due = t.run_at_ms;
	if (due > now_ms + 1) {
		plain_add(r, name, &st);
		goto out;		/* delayed/ */
	}
	snprintf(final, sizeof(final), "%s.json", t.request_id);
	if (strcmp(final, name) != 0)
		goto out;	/* a name mismatch is quarantined there */
	/* Placement: only nodes that advertise the code's hook and have
	 * the task's tags are offered the task; while none is live it
	 * waits (WAITING, with why). */
	ncap = capable(r, t.task_code, t.require_tags);
	if (ncap == 0)
		placement_why(r, &t, reason);
	if (route <= DISPATCH_ANY) {
		if (ncap == 0)
			placement_wait(r, &t, reason);
		else
			placement_clear(r, t.request_id, SPOOL_INCOMING, NULL);
		plain_add(r, name, &st);
		goto out;		/* the claim path */
	}
	if (route == DISPATCH_BROADCAST) {
		if (ncap == 0)
			placement_wait(r, &t, reason);
		else
			moved = broadcast(r, &t, name);
		goto out;
	}
	k = dispatch_pick((enum dispatch_route)route, r->cdn, ncap, &r->rr,
	    route == DISPATCH_CONSISTENT_HASH ? capable_ring(r) : NULL,
	    t.shard_key, target);
	if (k < 0) {
		if (route == DISPATCH_NODE && is_live(r, target)) {
			node_why(r, target, &t, reason);
			placement_wait(r, &t, reason);
		} else if (route != DISPATCH_NODE && ncap == 0)
			placement_wait(r, &t, reason);
		else
			log_debug("%s: route %s: no live node for it yet; "
			    "waiting", t.request_id, t.route);
		goto out;
	}
	k = (int)r->cmap[k];	/* its index among all the live nodes */
	if (to_queue(r, name, r->dn[k].id, final) != 0) {
		if (errno != ENOENT)
			log_warn("%s: move to queue/%s/", t.request_id,
			    r->dn[k].id);
		goto out;
	}
	r->dn[k].running++;	/* least_active: count what was assigned */
	placement_clear(r, t.request_id, SPOOL_QUEUE, r->dn[k].id);
	log_debug("%s: route %s → queue/%s/", t.request_id, t.route,
	    r->dn[k].id);
	moved = 1;
out:
	close(fd);
	task_fini(&t);
	buf_fini(&b);
	return moved;
}

int
router_pass(struct router *r, int64_t now_ms, int full)
{
	DIR *dp;
	struct dirent *de;
	int moved = 0;

	if (full) {			/* forget what was plain: re-read */
		nameset_fini(&r->plain);
		if (nameset_init(&r->plain) != 0)
			return 0;
	}
	if (live_refresh(r, now_ms) != 0)
		return 0;		/* no registry: route nothing now */
	if ((dp = spool_opendir(r->sp->dir[SPOOL_INCOMING])) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		struct nameset_node *p;

		if (de->d_name[0] == '.')
			continue;
		p = nameset_find(&r->plain, de->d_name);
		if (p == NULL || p->key != (int64_t)de->d_ino)
			moved += route_one(r, de->d_name, now_ms);
	}
	closedir(dp);
	return moved;
}

int
router_reap_offline(struct router *r, int64_t now_ms)
{
	DIR *dp, *qp;
	struct dirent *de, *qe;
	int moved = 0;

	if (live_refresh(r, now_ms) != 0)
		return 0;
	if ((dp = spool_opendir(r->sp->dir[SPOOL_QUEUE])) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		int qfd;

		if (de->d_name[0] == '.' || !spool_code_ok(de->d_name) ||
		    is_live(r, de->d_name))
			continue;
		qfd = openat(r->sp->dir[SPOOL_QUEUE], de->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (qfd < 0)
			continue;
		if ((qp = spool_opendir(qfd)) != NULL) {
			while ((qe = readdir(qp)) != NULL) {
				if (qe->d_name[0] == '.')
					continue;
				if (spool_move_excl(qfd, qe->d_name,
				    r->sp->dir[SPOOL_INCOMING], qe->d_name) ==
				    0) {
					log_info("%s: node %s is offline or "
					    "draining; back to incoming/ to be "
					    "routed again",
					    qe->d_name, de->d_name);
					index_move(r, qe->d_name,
					    SPOOL_INCOMING, NULL);
					moved++;
				}
			}
			closedir(qp);
		}
		close(qfd);
	}
	closedir(dp);
	if (moved > 0)
		(void)spool_sync_dir(r->sp, r->sp->dir[SPOOL_INCOMING]);
	return moved;
}

int
router_owns(const struct task *t, const char *self)
{
	const char *target;

	if (dispatch_parse(t->route, &target) == DISPATCH_NODE)
		return strcmp(target, self) == 0;
	return 1;
}
