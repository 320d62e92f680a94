/*
 * router — the leader's dispatcher; see router.h.
 */
#include "router.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "dispatch.h"
#include "index.h"
#include "log.h"
#include "nameset.h"
#include "ring.h"
#include "tstime.h"
#include "wakeup.h"

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
	r->live = NULL;
	r->dn = NULL;
	r->ring = NULL;
	r->nlive = 0;
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
	for (size_t i = 0; i < n; i++)	/* keep the live ones, in order */
		if (now_ms - v[i].at_ms < 3 * r->heartbeat_ms)
			v[k++] = v[i];
	r->live = v;
	r->nlive = k;
	r->dn = calloc(k > 0 ? k : 1, sizeof(*r->dn));
	ids = calloc(k > 0 ? k : 1, sizeof(*ids));
	if (r->dn == NULL || ids == NULL) {
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
	for (size_t i = 0; i < r->nlive; i++) {
		struct buf enc;
		int qfd;

		snprintf(sid, sizeof(sid), "%s.%zu", id, i);
		snprintf(fname, sizeof(fname), "%s.json", sid);
		snprintf(route, sizeof(route), "node:%s", r->live[i].id);
		if (strlen(sid) > TASK_ID_MAX)
			return done;	/* checked above: cannot happen */
		memcpy(t->request_id, sid, strlen(sid) + 1);
		free(t->route);
		t->route = strdup(route);
		t->shard_index = (int)i;
		t->shard_total = (int)r->nlive;
		buf_init(&enc, 0);
		qfd = spool_node_dir(r->sp, SPOOL_QUEUE, r->live[i].id);
		if (t->route == NULL || qfd < 0 || task_encode(t, &enc) != 0 ||
		    (spool_publish(r->sp, qfd, fname, enc.data, enc.len, -1,
		    SPOOL_PUBLISH_EXCL) != 0 && errno != EEXIST)) {
			log_warn("%s: broadcast shard %zu to %s", id, i,
			    r->live[i].id);
			buf_fini(&enc);
			if (qfd >= 0)
				close(qfd);
			return done;	/* the original stays: tried again */
		}
		buf_fini(&enc);
		close(qfd);
		wake_node(r, r->live[i].id, fname);
		done++;
	}
	if (unlinkat(r->sp->dir[SPOOL_INCOMING], name, 0) != 0)
		log_warn("%s: remove broadcast original", id);
	index_move(r, name, SPOOL_NDIRS, NULL);
	(void)spool_sync_dir(r->sp, r->sp->dir[SPOOL_INCOMING]);
	log_info("%s: broadcast as %d shard(s) %s.0 .. %s.%d", id, done, id,
	    id, done - 1);
	return done;
}

/* Route incoming/name if it is a due routed task; returns files moved. */
static int
route_one(struct router *r, const char *name, int64_t now_ms)
{
	int fd, dfd = r->sp->dir[SPOOL_INCOMING], route, k, moved = 0;
	const char *target;
	char why[512], final[SPOOL_NAME_MAX];
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
	    "", b.len, &t, &te) != 0 || t.request_id[0] == '\0')
		goto out;		/* the claim path deals with it */
	route = dispatch_parse(t.route, &target);
	due = t.not_before_ms;
	if (due < 0 && t.trigger == TASK_TRIGGER_DELAY)
		due = (t.created_ms >= 0 ? t.created_ms : (int64_t)st.st_mtim.
		    tv_sec * 1000) + t.delay_ms;
	if (due < 0 && t.trigger == TASK_TRIGGER_AT)
		due = t.run_at_ms;
	if (route <= DISPATCH_ANY || due > now_ms + 1) {
		struct nameset_node *p = nameset_add(&r->plain, name, NULL);

		/* Keyed by inode: a file replaced under the same name (a
		 * retry, another copy of the id) is read again. */
		if (p != NULL)
			p->key = (int64_t)st.st_ino;
		goto out;		/* the claim path (or delayed/) */
	}
	snprintf(final, sizeof(final), "%s.json", t.request_id);
	if (strcmp(final, name) != 0)
		goto out;	/* a name mismatch is quarantined there */
	if (route == DISPATCH_BROADCAST) {
		moved = broadcast(r, &t, name);
		goto out;
	}
	k = dispatch_pick((enum dispatch_route)route, r->dn, r->nlive, &r->rr,
	    r->ring, t.shard_key, target);
	if (k < 0) {
		log_debug("%s: route %s: no live node for it yet; waiting",
		    t.request_id, t.route);
		goto out;
	}
	if (to_queue(r, name, r->dn[k].id, final) != 0) {
		if (errno != ENOENT)
			log_warn("%s: move to queue/%s/", t.request_id,
			    r->dn[k].id);
		goto out;
	}
	r->dn[k].running++;	/* least_active: count what was assigned */
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
					log_info("%s: node %s is offline; back "
					    "to incoming/ to be routed again",
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
