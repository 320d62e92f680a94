/*
 * coord — the backend-independent part: the lease table indexed by
 * descriptor, renewal and self-fencing deadlines, the local flock.  See
 * coord.h; the backends are coord_file.c and coord_redis.c, chosen by
 * coord_open.c.  It calls them only through c->ops, and what another
 * module holds with a lease only through the lease's rider
 * (coord_impl.h), so it depends on none of them.
 */
#include "coord/coord_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/tags.h"
#include "spool/clock.h"

/*
 * The two lease deadlines (cluster mode).  Every node of a cluster must
 * use the same heartbeat_ms (h), lease_renew_ms (r) and lease_ms (L).
 *
 *   O = 3h               a node leaves the registry (node:<id> expires)
 *   D = min(L - r, O + r) self-fence: a holder kills its hook's process
 *                        group once D has passed since it *sent* its last
 *                        successful renewal (coord_tick)
 *   M = h                margin
 *   A = D + M            takeover: another node replaces a lease key that
 *                        Redis's clock says was not renewed for A
 *                        (lease_ms - PTTL >= A), or, for a key that is
 *                        absent, that it has seen absent for A
 *
 * Safety: Redis executes a renewal after its holder sent it, so when the
 * key has not been renewed for A by Redis's clock, the holder's own D
 * (counted from the send, on its monotonic clock) ran out at least M
 * earlier, and it killed its hook then: M covers the holder's event
 * loop latency and SIGKILL delivery.  Liveness: D > r (r <= L/2 and O >
 * 0), so a holder that renews on time never self-fences; it rides out a
 * Redis outage of D - r (= O with the defaults).  A dead node's task is
 * taken over at most A after its last renewal, i.e. at most O + r + M
 * after its death: 15 + 30 + 5 = 50 s with the defaults (h 5 s, r 30 s,
 * L 180 s), where it was L = 180 s before.
 */
static void
lease_deadlines(struct coord *c)
{
	long d = c->lease_ms - c->renew_ms, o = 3 * c->heartbeat_ms;

	if (o + c->renew_ms < d)
		d = o + c->renew_ms;
	c->fence_ms = d;
	c->takeover_ms = d + c->heartbeat_ms;
}

void
coord_server_settings(struct coord *c, const struct config *cfg)
{
	snprintf(c->addr, sizeof(c->addr), "%s", cfg->redis);
	snprintf(c->password, sizeof(c->password), "%s", cfg->redis_password);
	snprintf(c->sentinel, sizeof(c->sentinel), "%s", cfg->sentinel);
	snprintf(c->sentinel_master, sizeof(c->sentinel_master), "%s",
	    cfg->sentinel_master);
	c->db = cfg->redis_db;
}

struct coord *
coord_new(const struct coord_ops *ops, const struct config *cfg,
    const char *node, const struct spool *sp, char *why, size_t whylen)
{
	struct coord *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(why, whylen, "coord: %s", strerror(errno));
		return NULL;
	}
	c->ops = ops;
	snprintf(c->node, sizeof(c->node), "%s", node);
	c->sp = sp;
	c->epoch = tstime_now_ms();
	c->lease_ms = cfg->lease_ms;
	c->renew_ms = cfg->lease_renew_ms;
	c->heartbeat_ms = cfg->heartbeat_ms;
	c->reap_ms = cfg->reap_interval_ms;
	lease_deadlines(c);
	c->leaderfd = -1;
	snprintf(c->prefix, sizeof(c->prefix), "%s", cfg->redis_prefix);
	coord_server_settings(c, cfg);
	if (c->ops->open(c, why, whylen) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void
coord_close(struct coord *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nleases; i++)
		if (c->leases[i].used)
			coord_lease_close(c, (int)i);
	c->ops->close(c);
	free(c->leases);
	free(c->absent);
	free(c);
}

const char *
coord_kind(const struct coord *c)
{
	return c->ops->kind;
}

int
coord_leases_expire(const struct coord *c)
{
	return c->ops->expires;
}

int
coord_leader_fresh(const struct coord *c, int64_t now_mono)
{
	if (!c->ops->expires)
		return 1;	/* a flock: held while this process lives */
	return now_mono + c->heartbeat_ms / 2 < c->leader_until;
}

int
coord_flock_verify(int fd, int dirfd, const char *name)
{
	struct stat a, b;

	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return -1;
	if (fstat(fd, &a) != 0 || fstatat(dirfd, name, &b,
	    AT_SYMLINK_NOFOLLOW) != 0 || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		flock(fd, LOCK_UN);
		errno = ESTALE;
		return -1;
	}
	return 0;
}

/* The table entry for fd, growing the table; NULL on ENOMEM. */
static struct coord_lease *
slot_for(struct coord *c, int fd)
{
	if ((size_t)fd >= c->nleases) {
		size_t n = (size_t)fd + 64;
		struct coord_lease *v = reallocarray(c->leases, n, sizeof(*v));

		if (v == NULL)
			return NULL;
		memset(v + c->nleases, 0, (n - c->nleases) * sizeof(*v));
		c->leases = v;
		c->nleases = n;
	}
	return &c->leases[fd];
}

struct coord_lease *
coord_lease_of(const struct coord *c, int fd)
{
	if (fd < 0 || (size_t)fd >= c->nleases || !c->leases[fd].used)
		return NULL;
	return &c->leases[fd];
}

/* A fresh (not yet used) table entry for a lease of id on fd for
 * attempt; NULL with why. */
static struct coord_lease *
lease_init(struct coord *c, int fd, const char *id, int attempt,
    int64_t now_mono, char *why, size_t whylen)
{
	struct coord_lease *l;

	if (fd < 0 || strlen(id) > TASK_ID_MAX) {
		snprintf(why, whylen, "lease: bad descriptor or id");
		return NULL;
	}
	if ((l = slot_for(c, fd)) == NULL) {
		snprintf(why, whylen, "lease: %s", strerror(errno));
		return NULL;
	}
	memset(l, 0, sizeof(*l));
	snprintf(l->id, sizeof(l->id), "%s", id);
	snprintf(l->token, sizeof(l->token), "%s:%lld:%d", c->node, c->epoch,
	    attempt);
	l->renew_at = now_mono + c->renew_ms;
	l->valid_until = c->ops->expires ? now_mono + c->fence_ms :
	    INT64_MAX;
	return l;
}

enum coord_status
coord_lease_acquire(struct coord *c, int fd, const char *id, int attempt,
    int64_t now_mono, char *why, size_t whylen)
{
	struct coord_lease *l = lease_init(c, fd, id, attempt, now_mono, why,
	    whylen);
	enum coord_status st;

	if (l == NULL)
		return COORD_ERR;
	st = c->ops->acquire(c, l, why, whylen);
	if (st == COORD_OK)
		l->used = 1;
	return st;
}

enum coord_status
coord_orphan_take(struct coord *c, int fd, int dirfd, const char *name,
    const char *id, int64_t now_mono, char *why, size_t whylen)
{
	struct coord_lease *l;
	enum coord_status st;

	if (coord_flock_verify(fd, dirfd, name) != 0) {
		if (errno == EWOULDBLOCK || errno == ESTALE ||
		    errno == ENOENT)
			return COORD_BUSY;
		snprintf(why, whylen, "flock: %s", strerror(errno));
		return COORD_ERR;
	}
	/* attempt 0: the reaper's lease, not an attempt of the task. */
	if ((l = lease_init(c, fd, id, 0, now_mono, why, whylen)) == NULL) {
		flock(fd, LOCK_UN);
		return COORD_ERR;
	}
	st = c->ops->take(c, l, c->sp != NULL && dirfd == c->sp->self,
	    now_mono, why, whylen);
	if (st == COORD_OK)
		l->used = 1;
	else
		flock(fd, LOCK_UN);
	return st;
}

/*
 * After a renewal that set the vanished key again: whether fd is still
 * the file active/<self>/<id>.json, i.e. this node's claim stands.  It
 * is checked after the key was set, so a reaper that moved the file
 * away had taken the key before (our SET found it free only after that
 * reaper's release, which follows its rename): we then see the rename.
 */
static int
claim_intact(const struct coord *c, int fd, const struct coord_lease *l)
{
	char name[TASK_ID_MAX + 8];
	struct stat a, b;

	snprintf(name, sizeof(name), "%s.json", l->id);
	return fstat(fd, &a) == 0 && fstatat(c->sp->self, name, &b,
	    AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
	    a.st_dev == b.st_dev;
}

long long
coord_lease_fence(const struct coord *c, int fd)
{
	const struct coord_lease *l = coord_lease_of(c, fd);

	return l != NULL ? l->fence : 0;
}

enum coord_status
coord_lease_valid(const struct coord *c, int fd, int64_t now_mono)
{
	const struct coord_lease *l = coord_lease_of(c, fd);

	if (l == NULL)
		return c->ops->expires ? COORD_LOST : COORD_OK;
	return !l->lost && now_mono < l->valid_until ? COORD_OK : COORD_LOST;
}

void
coord_lease_close(struct coord *c, int fd)
{
	struct coord_lease *l = coord_lease_of(c, fd);

	if (fd < 0)
		return;
	if (l != NULL) {
		if (l->rider != NULL)
			l->rider->release(c, l);
		if (!l->lost)
			c->ops->release(c, l);
		memset(l, 0, sizeof(*l));
	}
	close(fd);
}

int64_t
coord_tick(struct coord *c, int64_t now_mono, void (*lost)(void *, int),
    void *arg)
{
	int64_t next = INT64_MAX;

	if (!c->ops->expires)
		return next;
	for (size_t i = 0; i < c->nleases; i++) {
		struct coord_lease *l = &c->leases[i];

		if (!l->used || l->lost)
			continue;
		/* Past its self-fence deadline (the daemon was frozen, or
		 * renewals failed): fenced, never renewed late — another
		 * node may take over from then on. */
		if (now_mono >= l->valid_until)
			l->lost = 1;
		if (!l->lost && now_mono >= l->renew_at) {
			/* Sent now: the lease is safe for fence_ms from the
			 * send (coord.c, the deadlines). */
			int64_t sent = now_mono;

			long long old = l->fence;
			enum coord_status rs = c->ops->renew(c, l);

			if (rs == COORD_OK && l->refenced) {
				/* The key had vanished (FLUSHALL, a restart
				 * or failover that lost it) and is ours
				 * again: only while our claim stands. */
				l->refenced = 0;
				if (!claim_intact(c, (int)i, l)) {
					c->ops->release(c, l);
					rs = COORD_LOST;
				} else if (c->reestablished != NULL)
					c->reestablished(c->reestablished_arg,
					    l->id, old, l->fence);
			}
			if (rs == COORD_OK && l->rider != NULL)
				rs = l->rider->renew(c, l);
			switch (rs) {
			case COORD_OK:
				l->valid_until = sent + c->fence_ms;
				l->renew_at = sent + c->renew_ms;
				break;
			case COORD_LOST:
			case COORD_BUSY:
				l->lost = 1;
				break;
			default:
				/* Unreachable: try again soon, fence at
				 * valid_until if it stays so. */
				l->renew_at = now_mono + (c->renew_ms < 500 ?
				    c->renew_ms : 500);
				break;
			}
		}
		if (!l->lost && now_mono >= l->valid_until)
			l->lost = 1;
		if (l->lost) {
			lost(arg, (int)i);
			continue;
		}
		if (l->renew_at < next)
			next = l->renew_at;
		if (l->valid_until < next)
			next = l->valid_until;
	}
	return next;
}

void
coord_on_reestablished(struct coord *c, void (*fn)(void *, const char *,
    long long, long long), void *arg)
{
	c->reestablished = fn;
	c->reestablished_arg = arg;
}

int
coord_leader(struct coord *c, int64_t now_mono, unsigned long long *epoch)
{
	return c->ops->leader(c, now_mono, epoch);
}

int
coord_heartbeat(struct coord *c, const struct coord_node *info, char *why,
    size_t whylen)
{
	return c->ops->heartbeat(c, info, why, whylen);
}

int
coord_nodes(struct coord *c, struct coord_node **out, size_t *n, char *why,
    size_t whylen)
{
	*out = NULL;
	*n = 0;
	return c->ops->nodes(c, out, n, why, whylen);
}

static int
node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct coord_node *)a)->id,
	    ((const struct coord_node *)b)->id);
}

void
coord_nodes_sort(struct coord_node *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), node_cmp);
}

void
coord_heartbeat_parse(char *text, struct coord_node *nd)
{
	for (char *p = text, *line; (line = strtok_r(p, "\n", &p)) != NULL;) {
		char *eq = strchr(line, '=');

		if (eq == NULL)
			continue;
		*eq++ = '\0';
		coord_node_field(nd, line, eq);
	}
}

void
coord_node_field(struct coord_node *nd, const char *f, const char *v)
{
	if (strcmp(f, "pid") == 0)
		nd->pid = strtol(v, NULL, 10);
	else if (strcmp(f, "slots") == 0)
		nd->slots = strtol(v, NULL, 10);
	else if (strcmp(f, "running") == 0)
		nd->running = strtol(v, NULL, 10);
	else if (strcmp(f, "claimed") == 0)
		nd->claimed = strtoull(v, NULL, 10);
	else if (strcmp(f, "finished") == 0)
		nd->finished = strtoull(v, NULL, 10);
	else if (strcmp(f, "leader") == 0)
		nd->leader = atoi(v);
	else if (strcmp(f, "at_ms") == 0)
		nd->at_ms = strtoll(v, NULL, 10);
	else if (strcmp(f, "started_ms") == 0)
		nd->started_ms = strtoll(v, NULL, 10);
	else if (strcmp(f, "load1") == 0)
		nd->load1 = strtod(v, NULL);
	else if (strcmp(f, "draining") == 0) {
		long d = strtol(v, NULL, 10);

		nd->draining = d >= 0 && d <= 2 ? (int)d : 0;
	}
	else if (strcmp(f, "hooks") == 0) {
		/* Bounded like the writer's list: a longer one is cut at the
		 * last whole code and marked "*" (may run anything). */
		size_t l = strlen(v);

		nd->hooks_known = 1;
		if (l < sizeof(nd->hooks))
			memcpy(nd->hooks, v, l + 1);
		else {
			const char *cut = v + sizeof(nd->hooks) - 3;

			while (cut > v && *cut != ',')
				cut--;
			memcpy(nd->hooks, v, (size_t)(cut - v));
			memcpy(nd->hooks + (cut - v), cut > v ? ",*" : "*",
			    cut > v ? 3 : 2);
		}
	} else if (strcmp(f, "tags") == 0) {
		/* Another's bytes: only a well-formed list counts (it is
		 * shown by `taskspool nodes`); else none, which can only
		 * keep tasks away from the node. */
		if (tags_list_ok(v))
			memcpy(nd->tags, v, strlen(v) + 1);
		else
			nd->tags[0] = '\0';
	}
}

int
coord_node_runs(const struct coord_node *nd, const char *code)
{
	return !nd->hooks_known || hookset_has(nd->hooks, code);
}

int
coord_node_has_tags(const struct coord_node *nd, const char *need)
{
	return tags_has_all(nd->tags, need);
}

int
coord_node_alive(const struct coord_node *nd, int64_t now_ms,
    long heartbeat_ms)
{
	return now_ms - nd->at_ms < 3 * (int64_t)heartbeat_ms;
}
