/*
 * execrate — execution rate limits, the shared GCRA state (see
 * execrate.h).  Redis documentation: EVAL, TIME, SET PX; the file
 * backend follows ratelimit.c's read-modify-write under flock.
 */
#include "coord/execrate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coord/coord_impl.h"
#include "coord/coord_redis.h"
#include "core/conckey.h"

/* Tries to lock a state file that a sweep unlinks meanwhile. */
#define EXECRATE_OPEN_TRIES	8

/* The largest TAT read back (ms; far past any real clock): more is
 * garbage. */
#define EXECRATE_TAT_MAX	(INT64_C(1) << 53)

/*
 * KEYS[1] = execrate:<code>[:<hex>]; ARGV[1] = T ms, ARGV[2] = tau ms →
 * {1, 0} (allowed) or {0, wait ms}.  The rule of gcra.h, on the server's
 * clock (Redis >= 5 replicates a script's effects, so TIME may be read
 * in it).  A value that is not a number (tonumber nil, or NaN) counts as
 * no state; one past now + tau + T (the server's clock went back, or
 * garbage) is clamped, and the clamp stored.  The key expires at its TAT: an idle limit has
 * no key.  Lua numbers are doubles: ms instants (< 2^53) are exact, and
 * written with %.0f, never in exponent form.
 */
static const char take_lua[] =
	"local t=redis.call('TIME') "
	"local now=tonumber(t[1])*1000+math.floor(tonumber(t[2])/1000) "
	"local T=tonumber(ARGV[1]) local tau=tonumber(ARGV[2]) "
	"local tat=tonumber(redis.call('GET',KEYS[1]) or '') "
	"if tat==nil or tat~=tat or tat<now then tat=now end "
	"local clamped=tat>now+tau+T "
	"if clamped then tat=now+tau+T end "
	"local allow=tat-tau "
	"if now<allow then "
	"if clamped then redis.call('SET',KEYS[1],string.format('%.0f',tat),"
	"'PX',string.format('%.0f',tat-now)) end "
	"return {0,allow-now} end "
	"local new=tat+T "
	"redis.call('SET',KEYS[1],string.format('%.0f',new),'PX',"
	"string.format('%.0f',new-now)) "
	"return {1,0}";

void
execrate_name(const char *code, const char *key, char *out)
{
	char hex[CONCKEY_HASH_LEN + 1];

	if (key == NULL || key[0] == '\0') {
		snprintf(out, EXECRATE_NAME_MAX, "%.64s", code);
		return;
	}
	/* The key's digest of core/conckey.h, as the per-key slots use;
	 * should OpenSSL fail, every key shares one bucket (fewer starts,
	 * never more). */
	if (conckey_hash(key, hex) != 0) {
		memset(hex, '0', CONCKEY_HASH_LEN);
		hex[CONCKEY_HASH_LEN] = '\0';
	}
	snprintf(out, EXECRATE_NAME_MAX, "%.64s@%s", code, hex);
}

/*
 * The TAT in the n bytes at s: 1..20 decimal digits and an optional LF,
 * nothing else, at most EXECRATE_TAT_MAX.  Returns 0 with *tat, or -1.
 */
static int
parse_tat(const char *s, size_t n, int64_t *tat)
{
	int64_t v = 0;
	size_t i = 0;

	if (n > 0 && s[n - 1] == '\n')
		n--;
	if (n == 0 || n > 20)
		return -1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > EXECRATE_TAT_MAX / 10)
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v > EXECRATE_TAT_MAX)
		return -1;
	*tat = v;
	return 0;
}

/* state/rates/, created when missing: a new descriptor or -1 (errno). */
static int
rates_dir(const struct spool *sp, int create)
{
	int fd = openat(sp->dir[SPOOL_STATE], "rates", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(sp->dir[SPOOL_STATE], "rates", 0755) != 0 &&
		    errno != EEXIST)
			return -1;
		fd = openat(sp->dir[SPOOL_STATE], "rates", O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return fd;
}

/* Whether fd is still the file dfd/name (same inode): 1, or 0. */
static int
same_file(int fd, int dfd, const char *name)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstatat(dfd, name, &b,
	    AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
	    a.st_dev == b.st_dev;
}

/*
 * Open and lock dfd/name (created when missing), the lock held on the
 * file the name refers to.  Returns the descriptor, or -1 with why.
 */
static int
open_locked(int dfd, const char *name, char *why, size_t whylen)
{
	for (int i = 0; i < EXECRATE_OPEN_TRIES; i++) {
		int fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK, 0644);
		struct stat st;

		if (fd < 0) {
			snprintf(why, whylen, "state/rates/%s: open: %s", name,
			    strerror(errno));
			return -1;
		}
		while (flock(fd, LOCK_EX) != 0)
			if (errno != EINTR) {
				snprintf(why, whylen, "state/rates/%s: flock: "
				    "%s", name, strerror(errno));
				close(fd);
				return -1;
			}
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			snprintf(why, whylen, "state/rates/%s: not a regular "
			    "file", name);
			close(fd);
			return -1;
		}
		if (same_file(fd, dfd, name))
			return fd;
		close(fd);	/* swept while we waited: open it again */
	}
	snprintf(why, whylen, "state/rates/%s: replaced %d times while "
	    "locking", name, EXECRATE_OPEN_TRIES);
	return -1;
}

/* Read the TAT of the locked fd: GCRA_NONE when empty or garbage (*bad
 * = 1 for garbage).  Returns 0, or -1 on a read error (why). */
static int
read_tat(int fd, const char *name, int64_t *tat, int *bad, char *why,
    size_t whylen)
{
	char b[EXECRATE_STATE_MAX + 1];
	ssize_t n;

	do
		n = pread(fd, b, sizeof(b), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		snprintf(why, whylen, "state/rates/%s: read: %s", name,
		    strerror(errno));
		return -1;
	}
	*tat = GCRA_NONE;
	if (n > 0 && ((size_t)n > EXECRATE_STATE_MAX ||
	    parse_tat(b, (size_t)n, tat) != 0)) {
		*tat = GCRA_NONE;
		if (bad != NULL)
			*bad = 1;
	}
	return 0;
}

static enum execrate_status
file_take(struct coord *c, const char *name, const struct gcra_params *p,
    int64_t now_ms, int64_t *wait_ms, int *bad, char *why, size_t whylen)
{
	enum execrate_status st = EXECRATE_ERR;
	char b[EXECRATE_STATE_MAX];
	int64_t tat, nt;
	int dfd, fd, len;
	ssize_t n;

	if ((dfd = rates_dir(c->sp, 1)) < 0) {
		snprintf(why, whylen, "state/rates/: %s", strerror(errno));
		return EXECRATE_ERR;
	}
	fd = open_locked(dfd, name, why, whylen);
	close(dfd);
	if (fd < 0)
		return EXECRATE_ERR;
	if (read_tat(fd, name, &tat, bad, why, whylen) != 0)
		goto out;
	if (!gcra_take(p, tat, now_ms, &nt, wait_ms)) {
		st = EXECRATE_WAIT;
		if (nt == tat)
			goto out;	/* a refusal writes nothing ... */
		/* ... but a clamped TAT (gcra.h, "Clock steps back") */
	}
	len = snprintf(b, sizeof(b), "%020" PRId64 "\n", nt);
	do
		n = pwrite(fd, b, (size_t)len, 0);
	while (n < 0 && errno == EINTR);
	if (n != len) {
		snprintf(why, whylen, "state/rates/%s: write: %s", name,
		    n < 0 ? strerror(errno) : "short write");
		st = EXECRATE_ERR;
		goto out;
	}
	/* A shorter text than the file held (a hand-edited one). */
	if (ftruncate(fd, len) != 0) {
		snprintf(why, whylen, "state/rates/%s: ftruncate: %s", name,
		    strerror(errno));
		st = EXECRATE_ERR;
		goto out;
	}
	if (st != EXECRATE_WAIT)
		st = EXECRATE_OK;
out:
	close(fd);	/* drops the lock */
	return st;
}

static enum execrate_status
redis_take(struct coord *c, const char *code, const char *key,
    const struct gcra_params *p, int64_t *wait_ms, char *why, size_t whylen)
{
	char k[sizeof(c->prefix) + EXECRATE_NAME_MAX + 16], t[24], tau[24];
	char name[EXECRATE_NAME_MAX];
	const char *argv[] = { "EVAL", take_lua, "1", k, t, tau };
	enum execrate_status st = EXECRATE_ERR;
	redisReply *r;

	execrate_name(code, key, name);
	if (key != NULL && key[0] != '\0')
		name[strlen(code)] = ':';	/* <code>:<hex> */
	snprintf(k, sizeof(k), "%sexecrate:%s", c->prefix, name);
	snprintf(t, sizeof(t), "%" PRId64, p->interval_ms);
	snprintf(tau, sizeof(tau), "%" PRId64, p->tolerance_ms);
	if ((r = coord_redis_command(c, REDIS_REPLY_ARRAY, 6, argv, why,
	    whylen)) == NULL)
		return EXECRATE_ERR;
	if (r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER)
		snprintf(why, whylen, "redis: EVAL %s: unexpected answer", k);
	else if (r->element[0]->integer == 1)
		st = EXECRATE_OK;
	else {
		*wait_ms = r->element[1]->integer < 1 ? 1 :
		    r->element[1]->integer;
		st = EXECRATE_WAIT;
	}
	freeReplyObject(r);
	return st;
}

enum execrate_status
execrate_take(struct coord *c, const char *code, const char *key,
    const struct gcra_params *p, int64_t now_ms, int64_t *wait_ms, int *bad,
    char *why, size_t whylen)
{
	char name[EXECRATE_NAME_MAX];

	*wait_ms = 0;
	if (c->ops->expires)
		return redis_take(c, code, key, p, wait_ms, why, whylen);
	execrate_name(code, key, name);
	return file_take(c, name, p, now_ms, wait_ms, bad, why, whylen);
}

/*
 * Remove dfd/name when it is idle at now_ms (or garbage), holding its
 * lock and checking that the name still refers to the locked inode, so
 * that no taker holds it and none can have written a TAT into the inode
 * unlinked.  Returns 1 when removed, else 0.
 */
static int
sweep_one(int dfd, const char *name, int64_t now_ms)
{
	int64_t tat;
	int fd, bad = 0, gone = 0;
	char why[128];

	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK)) < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && same_file(fd, dfd, name) &&
	    read_tat(fd, name, &tat, &bad, why, sizeof(why)) == 0 &&
	    gcra_idle(tat, now_ms))
		gone = unlinkat(dfd, name, 0) == 0;
	close(fd);
	return gone;
}

size_t
execrate_sweep(struct coord *c, int64_t now_ms)
{
	DIR *dp;
	struct dirent *de;
	size_t removed = 0;
	int dfd;

	if (c->ops->expires || (dfd = rates_dir(c->sp, 0)) < 0)
		return 0;
	if ((dp = fdopendir(dfd)) == NULL) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(dp)) != NULL)
		if (de->d_name[0] != '.')
			removed += (size_t)sweep_one(dfd, de->d_name, now_ms);
	closedir(dp);	/* closes dfd */
	return removed;
}
