/*
 * maxconc — maxConcurrent per task code (see maxconc.h).
 */
#include "coord/maxconc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coord/coord_impl.h"
#include "coord/coord_redis.h"
#include "core/conckey.h"
#include "core/priority.h"
#include "core/task.h"


/*
 * Redis scripts (EVAL; Redis >= 5 replicates a script's effects, so
 * TIME may be read in it).  KEYS[1] = limit:<code>; ARGV[1] = holder
 * token, ARGV[2] = ttl ms, ARGV[3] = max.  The server's clock scores
 * every member, so the nodes' clocks do not matter.
 */
#define NOW_MS	"local t=redis.call('TIME') " \
		"local now=t[1]*1000+math.floor(t[2]/1000) " \
		"redis.call('ZREMRANGEBYSCORE',KEYS[1],'-inf',now) "
static const char acquire_lua[] = NOW_MS
	"local ttl=tonumber(ARGV[2]) "
	"if redis.call('ZSCORE',KEYS[1],ARGV[1]) or "
	"redis.call('ZCARD',KEYS[1])<tonumber(ARGV[3]) then "
	"redis.call('ZADD',KEYS[1],now+ttl,ARGV[1]) "
	"redis.call('PEXPIRE',KEYS[1],2*ttl) return 1 end return 0";
/* Renewal follows a successful renewal of the task's lease, so the
 * holder is still the rightful one: a member that is gone (Redis lost
 * the set: FLUSHALL, a restart or failover without the data) is added
 * again rather than fencing a running hook (issue 11 item 2).  XXX
 * Claims made between the loss and the holders' next renewals may run
 * more than max hooks at once for that while. */
static const char renew_lua[] = NOW_MS
	"local ttl=tonumber(ARGV[2]) "
	"redis.call('ZADD',KEYS[1],now+ttl,ARGV[1]) "
	"redis.call('PEXPIRE',KEYS[1],2*ttl) return 1";

/* dirfd's subdirectory sub, created when missing: a new descriptor or
 * -1 (errno). */
static int
subdir_at(int dirfd, const char *sub)
{
	int fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(dirfd, sub, 0755) != 0 && errno != EEXIST)
			return -1;
		fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	return fd;
}

/* state/<sub>/, created when missing: a new descriptor or -1. */
static int
state_subdir(const struct spool *sp, const char *sub)
{
	return subdir_at(sp->dir[SPOOL_STATE], sub);
}

static enum coord_status limit_renew(struct coord *, struct coord_lease *);
static void limit_release(struct coord *, struct coord_lease *);

/* A limit slot held with a lease: renewed and freed by the lease table
 * (coord.c) through this rider. */
static const struct coord_rider limit_rider = {
	limit_renew, limit_release
};

/* Hex digits of a key's digest that place its slots in the lock file
 * of its code (48 bits: the offset of a slot stays below 2^60). */
#define KEY_OFFSET_HEX	12

/*
 * File mode, per key: the byte offset of slot 0 of the key whose digest
 * is keyhash in state/limits/keys/<code> (slot i is at it + i): the first
 * KEY_OFFSET_HEX hex digits of keyhash times CONCKEY_LIMIT_MAX.  Returns
 * the offset, or -1 when keyhash does not start with that many lowercase
 * hex digits.
 */
static off_t
key_base(const char *keyhash)
{
	uint64_t h = 0;

	for (int k = 0; k < KEY_OFFSET_HEX; k++) {
		int c = (unsigned char)keyhash[k], v;

		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else
			return -1;
		h = h << 4 | (uint64_t)v;
	}
	return (off_t)(h * CONCKEY_LIMIT_MAX);
}

/* state/limits/keys/<code>, opened (O_RDWR, created with its
 * directories when missing): a new descriptor, or -1 (errno). */
static int
key_file_open(const struct spool *sp, const char *code)
{
	char path[TASK_CODE_MAX + 16];
	int dfd, kfd, fd;

	snprintf(path, sizeof(path), "limits/keys/%s", code);
	fd = openat(sp->dir[SPOOL_STATE], path, O_RDWR | O_CREAT | O_CLOEXEC |
	    O_NOFOLLOW, 0644);
	if (fd >= 0 || errno != ENOENT)
		return fd;	/* the usual case: one call */
	if ((dfd = state_subdir(sp, "limits")) < 0)
		return -1;
	kfd = subdir_at(dfd, "keys");
	close(dfd);
	if (kfd < 0)
		return -1;
	fd = openat(kfd, code, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	close(kfd);
	return fd;
}

/*
 * File mode, per key: take one of max slots of (code, keyhash) as an
 * open file description lock (fcntl(2) F_OFD_SETLK, a write lock of one
 * byte) on state/limits/keys/<code>, a file created once and never
 * removed: a slot held is a lock of the kernel (dropped when its holder
 * closes it or dies), an idle key is nothing at all (maxconc.h).
 */
static enum coord_status
file_acquire_key(struct coord *c, struct coord_lease *l, const char *code,
    const char *keyhash, long max, char *why, size_t whylen)
{
	off_t base = key_base(keyhash);
	int fd;

	if (max > CONCKEY_LIMIT_MAX)
		max = CONCKEY_LIMIT_MAX;	/* checked before; never more */
	if (base < 0) {
		snprintf(why, whylen, "max_concurrent_per_key: not a key "
		    "digest: '%.40s'", keyhash);
		return COORD_ERR;
	}
	if ((fd = key_file_open(c->sp, code)) < 0) {
		snprintf(why, whylen, "state/limits/keys/%s: %s", code,
		    strerror(errno));
		return COORD_ERR;
	}
	for (long i = 0; i < max; i++) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		    .l_start = base + i, .l_len = 1 };

		if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
			l->key_fd = fd + 1;
			l->rider = &limit_rider;
			return COORD_OK;
		}
		if (errno != EAGAIN && errno != EACCES) {
			snprintf(why, whylen, "state/limits/keys/%s: lock: "
			    "%s", code, strerror(errno));
			close(fd);
			return COORD_ERR;
		}
	}
	close(fd);
	return COORD_BUSY;
}

/*
 * File mode: flock one of state/limits/<code>.<0..max-1> (keyhash NULL);
 * a key's slot is file_acquire_key's.
 */
static enum coord_status
file_acquire(struct coord *c, struct coord_lease *l, const char *code,
    const char *keyhash, long max, char *why, size_t whylen)
{
	int dfd;

	if (keyhash != NULL)
		return file_acquire_key(c, l, code, keyhash, max, why, whylen);
	if ((dfd = state_subdir(c->sp, "limits")) < 0) {
		snprintf(why, whylen, "state/limits/: %s", strerror(errno));
		return COORD_ERR;
	}
	for (long i = 0; i < max; i++) {
		char name[TASK_CODE_MAX + 24];
		int fd;

		snprintf(name, sizeof(name), "%s.%ld", code, i);
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_CLOEXEC |
		    O_NOFOLLOW, 0644);
		if (fd < 0) {
			snprintf(why, whylen, "state/limits/%s: %s", name,
			    strerror(errno));
			close(dfd);
			return COORD_ERR;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			close(fd);	/* held */
			continue;
		}
		l->limit_fd = fd + 1;
		l->rider = &limit_rider;
		close(dfd);
		return COORD_OK;
	}
	close(dfd);
	return COORD_BUSY;
}

/* "<requestId>:<lease token>": unique per task attempt. */
static void
holder(const struct coord_lease *l, char *out, size_t len)
{
	snprintf(out, len, "%s:%s", l->id, l->token);
}

/* Run script src; its integer reply in *out; 0 or -1 (why). */
static int
eval(struct coord *c, const char *src, const char *k, const char *token,
    long max, long long *out, char *why, size_t whylen)
{
	redisReply *r;
	char ttl[32], mx[32];
	const char *argv[7];

	snprintf(ttl, sizeof(ttl), "%ld", c->lease_ms);
	snprintf(mx, sizeof(mx), "%ld", max);
	argv[0] = "EVAL";
	argv[1] = src;
	argv[2] = "1";
	argv[3] = k;
	argv[4] = token;
	argv[5] = ttl;
	argv[6] = mx;
	if ((r = coord_redis_command(c, REDIS_REPLY_INTEGER, 7, argv, why,
	    whylen)) == NULL)
		return -1;
	*out = r->integer;
	freeReplyObject(r);
	return 0;
}

/* The slot of code (keyhash NULL) or of (code, keyhash): see
 * coord_limit_acquire and coord_limit_acquire_key. */
static enum coord_status
acquire(struct coord *c, int fd, const char *code, const char *keyhash,
    long max, char *why, size_t whylen)
{
	struct coord_lease *l;
	char k[sizeof(l->key_limit)], tok[TASK_ID_MAX + COORD_TOKEN_MAX + 2];
	char *held;
	long long got;

	if (fd < 0 || (size_t)fd >= c->nleases || !c->leases[fd].used) {
		snprintf(why, whylen, "%s: no lease on the task", keyhash ==
		    NULL ? "max_concurrent" : "max_concurrent_per_key");
		return COORD_ERR;
	}
	l = &c->leases[fd];
	held = keyhash == NULL ? l->limit_key : l->key_limit;
	if ((keyhash == NULL ? l->limit_fd : l->key_fd) > 0 || held[0] != '\0')
		return COORD_OK;
	if (!c->ops->expires)
		return file_acquire(c, l, code, keyhash, max, why, whylen);
	if (keyhash == NULL)
		snprintf(k, sizeof(k), "%slimit:%s", c->prefix, code);
	else
		snprintf(k, sizeof(k), "%slimit:%s:k:%s", c->prefix, code,
		    keyhash);
	holder(l, tok, sizeof(tok));
	if (eval(c, acquire_lua, k, tok, max, &got, why, whylen) != 0)
		return COORD_ERR;
	if (got != 1)
		return COORD_BUSY;
	snprintf(held, keyhash == NULL ? sizeof(l->limit_key) :
	    sizeof(l->key_limit), "%s", k);
	l->rider = &limit_rider;
	return COORD_OK;
}

enum coord_status
coord_limit_acquire(struct coord *c, int fd, const char *code, long max,
    char *why, size_t whylen)
{
	return acquire(c, fd, code, NULL, max, why, whylen);
}

enum coord_status
coord_limit_acquire_key(struct coord *c, int fd, const char *code,
    const char *keyhash, long max, char *why, size_t whylen)
{
	return acquire(c, fd, code, keyhash, max, why, whylen);
}

/* Renew the slots held with l after the lease (COORD_OK, COORD_LOST,
 * COORD_ERR); file mode: nothing to renew. */
static enum coord_status
limit_renew(struct coord *c, struct coord_lease *l)
{
	char why[256], tok[TASK_ID_MAX + COORD_TOKEN_MAX + 2];
	long long got;

	holder(l, tok, sizeof(tok));
	if (l->limit_key[0] != '\0') {
		if (eval(c, renew_lua, l->limit_key, tok, 0, &got, why,
		    sizeof(why)) != 0)
			return COORD_ERR;
		if (got != 1)
			return COORD_LOST;
	}
	if (l->key_limit[0] != '\0') {
		if (eval(c, renew_lua, l->key_limit, tok, 0, &got, why,
		    sizeof(why)) != 0)
			return COORD_ERR;
		if (got != 1)
			return COORD_LOST;
	}
	return COORD_OK;
}

/* ZREM of l's member from the sorted set k (a failure is ignored: the
 * member expires by itself). */
static void
redis_free(struct coord *c, struct coord_lease *l, const char *k)
{
	char why[256], tok[TASK_ID_MAX + COORD_TOKEN_MAX + 2];
	const char *argv[3];
	redisReply *r;

	holder(l, tok, sizeof(tok));
	argv[0] = "ZREM";
	argv[1] = k;
	argv[2] = tok;
	if ((r = coord_redis_command(c, -1, 3, argv, why, sizeof(why))) !=
	    NULL)
		freeReplyObject(r);
}

int
coord_limit_fds(struct coord *c, int fd, int out[2])
{
	const struct coord_lease *l = coord_lease_of(c, fd);
	int k = 0;

	if (l == NULL)
		return 0;
	if (l->limit_fd > 0)
		out[k++] = l->limit_fd - 1;
	if (l->key_fd > 0)
		out[k++] = l->key_fd - 1;
	return k;
}

int
coord_limit_held(const struct coord *c, int fd)
{
	const struct coord_lease *l = coord_lease_of(c, fd);

	return l != NULL && (l->limit_fd > 0 || l->key_fd > 0 ||
	    l->limit_key[0] != '\0' || l->key_limit[0] != '\0');
}

/* Free the slots held with l (the locks, or the ZREMs of its member).
 * A lock is dropped explicitly, not by the close: a hook's leftover may
 * keep the descriptor (coord_limit_fds). */
static void
limit_release(struct coord *c, struct coord_lease *l)
{
	if (l->key_fd > 0) {
		struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET,
		    .l_start = 0, .l_len = 0 };	/* this description's */

		(void)fcntl(l->key_fd - 1, F_OFD_SETLK, &fl);
		close(l->key_fd - 1);
		l->key_fd = 0;
	}
	if (l->limit_fd > 0) {
		(void)flock(l->limit_fd - 1, LOCK_UN);
		close(l->limit_fd - 1);
		l->limit_fd = 0;
	}
	if (l->key_limit[0] != '\0') {
		redis_free(c, l, l->key_limit);
		l->key_limit[0] = '\0';
	}
	if (l->limit_key[0] != '\0') {
		redis_free(c, l, l->limit_key);
		l->limit_key[0] = '\0';
	}
}

size_t
limits_sweep_keys(const struct spool *sp)
{
	struct dirent *de;
	size_t k = 0;
	DIR *dp;
	int dfd = openat(sp->dir[SPOOL_STATE], "limits", O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return 0;
	if ((dp = fdopendir(dfd)) == NULL) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(dp)) != NULL) {
		int fd;

		if (de->d_name[0] == '.' || strchr(de->d_name, '@') == NULL)
			continue;
		fd = openat(dfd, de->d_name, O_RDONLY | O_CLOEXEC |
		    O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (coord_flock_verify(fd, dfd, de->d_name) == 0 &&
		    unlinkat(dfd, de->d_name, 0) == 0)
			k++;	/* (a directory is not unlinked: EISDIR) */
		close(fd);
	}
	closedir(dp);
	return k;
}

int
limits_mark_waiting(const struct spool *sp, const char *id, int on)
{
	int dfd, fd, rc = 0;

	if (!on) {
		dfd = openat(sp->dir[SPOOL_STATE], "waiting", O_RDONLY |
		    O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return errno == ENOENT ? 0 : -1;
		if (unlinkat(dfd, id, 0) != 0 && errno != ENOENT)
			rc = -1;
		close(dfd);
		return rc;
	}
	if ((dfd = state_subdir(sp, "waiting")) < 0)
		return -1;
	fd = openat(dfd, id, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	if (fd < 0)
		rc = -1;
	else
		close(fd);
	close(dfd);
	return rc;
}

int
limits_is_waiting(const struct spool *sp, const char *id)
{
	char path[TASK_ID_MAX + 16];
	struct stat st;

	snprintf(path, sizeof(path), "waiting/%s", id);
	return fstatat(sp->dir[SPOOL_STATE], path, &st, AT_SYMLINK_NOFOLLOW)
	    == 0;
}

int
limits_mark_waiting_why(const struct spool *sp, const char *id,
    const char *reason)
{
	struct spool quiet = *sp;
	int dfd, rc;

	if ((dfd = state_subdir(sp, "waiting")) < 0)
		return -1;
	quiet.do_fsync = 0;	/* what status shows, not data */
	rc = spool_publish(&quiet, dfd, id, reason, strnlen(reason,
	    LIMITS_REASON_MAX - 1), -1, 0);
	close(dfd);
	return rc;
}

int
limits_waiting_reason(const struct spool *sp, const char *id, char *reason,
    size_t len)
{
	char path[TASK_ID_MAX + 16], *data;
	size_t dl;

	reason[0] = '\0';
	if (!limits_is_waiting(sp, id))
		return 0;
	snprintf(path, sizeof(path), "waiting/%s", id);
	if ((data = spool_read_file(sp->dir[SPOOL_STATE], path,
	    LIMITS_REASON_MAX, &dl)) == NULL)
		return errno == ENOENT ? 0 : 1;	/* empty, or no reason */
	/* Text only: a hand-made marker holding other bytes shows none. */
	for (size_t i = 0; i < dl; i++)
		if ((unsigned char)data[i] < 0x20 || data[i] == 0x7f) {
			dl = 0;
			break;
		}
	if (dl >= len)
		dl = len - 1;
	memcpy(reason, data, dl);
	reason[dl] = '\0';
	free(data);
	return 1;
}

const char *
limits_state_name(const struct spool *sp, enum spool_dir d, const char *id)
{
	if ((d == SPOOL_INCOMING || d == SPOOL_QUEUE) &&
	    limits_is_waiting(sp, id))
		return "WAITING";
	return spool_state_name(d);
}

int
limits_wait(struct nameset *waiting, struct nameset *names,
    const char *code, const char *name, int flags, int64_t key, int prio,
    int flow)
{
	char k[TASK_CODE_MAX + SPOOL_NAME_MAX + 2];
	struct nameset_node *w;

	snprintf(k, sizeof(k), "%s/%s", code, name);
	if ((w = nameset_add_ordered(waiting, k, key, 0, NULL)) == NULL)
		return -1;
	w->flags = flags;
	nameset_set_prio(waiting, w, prio);
	nameset_set_flow(waiting, w, flow);	/* recorded: no fair share */
	if (names != NULL) {
		struct nameset_node *m = nameset_add(names, name, NULL);

		if (m == NULL) {
			(void)nameset_remove(waiting, k);
			return -1;
		}
		m->key = key;	/* the file as parked (names keeps no
				 * levels: the key is only a value) */
	}
	return 0;
}

/* Length of the group of a waiting name ("<group>/<file name>"). */
static size_t
group_len(const char *name)
{
	const char *slash = strchr(name, '/');

	return slash != NULL ? (size_t)(slash - name) : strlen(name);
}

/* A waiting name with what its order needs, computed once per try. */
struct waiter {
	struct nameset_node *w;
	size_t glen;			/* its group's length */
	int eff;			/* its effective priority now */
};

/* By group, then in claim order (core/priority.h): the higher effective
 * priority (aging from the key), the older key, the higher priority, the
 * file name. */
static int
by_group_order(const void *pa, const void *pb)
{
	const struct waiter *a = pa, *b = pb;
	int c = memcmp(a->w->name, b->w->name, a->glen < b->glen ? a->glen :
	    b->glen);

	if (c != 0 || a->glen != b->glen)
		return c != 0 ? c : a->glen < b->glen ? -1 : 1;
	if (a->eff != b->eff)
		return a->eff > b->eff ? -1 : 1;
	if (a->w->key != b->w->key)
		return a->w->key < b->w->key ? -1 : 1;
	if (a->w->prio != b->w->prio)
		return a->w->prio > b->w->prio ? -1 : 1;
	return strcmp(a->w->name + a->glen, b->w->name + b->glen);
}

size_t
limits_requeue(struct nameset *waiting, struct nameset *names,
    const char *spec,
    const char *key_spec, struct nameset *cand, struct nameset *qcand,
    size_t walk, int64_t now_ms, int64_t aging_ms)
{
	size_t n = waiting->count, k = 0, moved = 0, run = 0;
	struct waiter *v;
	struct nameset_node *w;
	char group[TASK_CODE_MAX + 48] = "";
	long mx = 0;

	if (n == 0)
		return 0;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return 0;
	/* Sorted in place of a copy of the list: the names that stay are
	 * not touched (no allocation, no hashing: O(n log n) compares). */
	for (w = waiting->head; w != NULL && k < n; w = w->fnext, k++) {
		v[k].w = w;
		v[k].glen = group_len(w->name);
		v[k].eff = priority_effective(w->prio, w->key, now_ms,
		    aging_ms);
	}
	qsort(v, k, sizeof(*v), by_group_order);
	for (size_t i = 0; i < k; i++) {
		struct nameset_node *const x = v[i].w;
		const char *slash = strchr(x->name, '/');
		size_t gl = v[i].glen;
		char name[TASK_CODE_MAX + SPOOL_NAME_MAX + 2];

		if (i == 0 || strlen(group) != gl || memcmp(group, x->name,
		    gl) != 0) {
			char code[sizeof(group)], *at;

			/* A new group: its limit, parsed once. */
			snprintf(group, sizeof(group), "%.*s", (int)gl,
			    x->name);
			memcpy(code, group, sizeof(code));
			run = 0;
			if ((at = strchr(code, '@')) != NULL) {
				/* "<code>@<keyhash>": that key's limit (a
				 * task's own maxConcurrentPerKey is not known
				 * here: 1) */
				*at = '\0';
				mx = limits_max(key_spec, code);
				if (mx <= 0)
					mx = 1;
			} else
				mx = limits_max(spec, code);
		}
		if (slash != NULL && mx > 0 && run >= (size_t)mx)
			continue;	/* stays, untouched */
		if (slash != NULL) {
			int q = x->flags & LIMITS_FROM_QUEUE, added = 0;
			struct nameset *to = q ? qcand : cand;
			struct nameset_node *c = nameset_add_ordered(to,
			    slash + 1, x->key, q ? 0 : walk, &added);

			if (c != NULL) {
				c->flags |= x->flags & ~LIMITS_FROM_QUEUE;
				if (added) {
					nameset_set_prio(to, c, x->prio);
					nameset_set_flow(to, c, x->flow);
				}
			}
			run++;
			moved++;
		}
		/* Moved (or not a waiting name at all): out of waiting. */
		snprintf(name, sizeof(name), "%s", x->name);
		if (names != NULL && slash != NULL)
			(void)nameset_remove(names, slash + 1);
		(void)nameset_remove(waiting, name);
	}
	free(v);
	return moved;
}
