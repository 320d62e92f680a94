/*
 * ratelimit — fixed window request counter per AppId (see ratelimit.h).
 * Redis documentation: INCR, "Pattern: Rate limiter 2"; PEXPIRE, PTTL;
 * EVAL.  hiredis README for the blocking calls.
 */
#include "coord/ratelimit.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "coord/coord_impl.h"
#include "coord/coord_redis.h"

/*
 * KEYS[1] = rate:<appId>; ARGV[1] = window ms → {count, ms left}.  The
 * expiry is set when the key has none (PTTL -1: the INCR just created
 * it), so the window starts with its first request and a key can never
 * be left without an expiry.
 */
static const char window_lua[] =
	"local n=redis.call('INCR',KEYS[1]) "
	"local t=redis.call('PTTL',KEYS[1]) "
	"if t<0 then redis.call('PEXPIRE',KEYS[1],ARGV[1]) "
	"t=tonumber(ARGV[1]) end "
	"return {n,t}";

long
ratelimit_retry_after(int64_t retry_ms)
{
	int64_t s = (retry_ms + 999) / 1000;

	return s < 1 ? 1 : (long)s;
}

/*
 * Parse the n bytes at s (NUL-terminated after them) as "<start ms>
 * <count>" and an optional LF, nothing else (a NUL or any other byte
 * fails: issue 10); 0, or -1 when they are not that.
 */
static int
parse_state(const char *s, size_t n, int64_t *start, long long *count)
{
	const char *all = s;
	char *end;

	errno = 0;
	*start = strtoll(s, &end, 10);
	if (end == s || *end != ' ' || errno != 0)
		return -1;
	s = end + 1;
	*count = strtoll(s, &end, 10);
	if (end == s || (*end != '\n' && *end != '\0') || errno != 0 ||
	    *count < 0)
		return -1;
	if (*end == '\n')
		end++;
	return (size_t)(end - all) == n ? 0 : -1;
}

enum ratelimit_status
ratelimit_file(int dirfd, const char *app, long limit, int64_t window_ms,
    int64_t now_ms, int64_t *retry_ms, char *why, size_t whylen)
{
	char b[RATELIMIT_STATE_MAX + 1];
	int64_t start = 0;
	long long count = 0;
	enum ratelimit_status st = RATELIMIT_ERR;
	ssize_t n;
	int fd, len, have;

	*retry_ms = 0;
	fd = openat(dirfd, app, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK, 0660);
	if (fd < 0) {
		snprintf(why, whylen, "state/ratelimit/%s: open: %s", app,
		    strerror(errno));
		return RATELIMIT_ERR;
	}
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			snprintf(why, whylen, "state/ratelimit/%s: flock: %s",
			    app, strerror(errno));
			goto out;
		}
	do
		n = pread(fd, b, sizeof(b) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		snprintf(why, whylen, "state/ratelimit/%s: read: %s", app,
		    strerror(errno));
		goto out;
	}
	b[n] = '\0';
	/*
	 * A request whose time was taken a little before the window began
	 * (it read the clock, then waited for the lock while another
	 * request opened the window) belongs to that window: treating it
	 * as a clock step back would open a fresh window per such request
	 * and let several times the limit through under load.  No state
	 * yet, an unreadable one, a window that ended, or one that starts
	 * more than a window ahead (the clock really went back): a new
	 * window.
	 */
	have = parse_state(b, (size_t)n, &start, &count) == 0;
	if (have && now_ms < start && start - now_ms <= window_ms)
		now_ms = start;
	if (!have || now_ms < start || now_ms - start >= window_ms) {
		start = now_ms;
		count = 0;
	}
	if (count < limit) {
		count++;
		st = RATELIMIT_OK;
	} else {
		/* Stays at limit: refusals need no write. */
		*retry_ms = start + window_ms - now_ms;
		if (*retry_ms < 1)
			*retry_ms = 1;
		st = RATELIMIT_LIMITED;
		goto out;
	}
	/* Fixed width, so a rewrite in place never leaves a longer
	 * previous text behind. */
	len = snprintf(b, sizeof(b), "%020" PRId64 " %020lld\n", start,
	    count);
	do
		n = pwrite(fd, b, (size_t)len, 0);
	while (n < 0 && errno == EINTR);
	if (n != len) {
		snprintf(why, whylen, "state/ratelimit/%s: write: %s", app,
		    n < 0 ? strerror(errno) : "short write");
		st = RATELIMIT_ERR;
	}
out:
	close(fd);	/* drops the lock */
	return st;
}

enum ratelimit_status
ratelimit_redis(struct coord *c, const char *app, long limit,
    int64_t window_ms, int64_t *retry_ms, char *why, size_t whylen)
{
	redisContext *rc;
	redisReply *r;
	char key[sizeof(c->prefix) + 8 + 65], win[24];
	const char *argv[5];
	enum ratelimit_status st = RATELIMIT_ERR;

	*retry_ms = 0;
	if ((rc = coord_redis_connect_new(c, why, whylen)) == NULL)
		return RATELIMIT_ERR;
	snprintf(key, sizeof(key), "%srate:%s", c->prefix, app);
	snprintf(win, sizeof(win), "%" PRId64, window_ms);
	argv[0] = "EVAL";
	argv[1] = window_lua;
	argv[2] = "1";
	argv[3] = key;
	argv[4] = win;
	r = coord_redis_command_on(rc, 5, argv, why, whylen);
	if (r == NULL)
		snprintf(why, whylen, "redis: EVAL %s: no answer", key);
	else if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER)
		snprintf(why, whylen, "redis: EVAL %s: unexpected answer%s%s",
		    key, r->type == REDIS_REPLY_ERROR ? ": " : "",
		    r->type == REDIS_REPLY_ERROR ? r->str : "");
	else if (r->element[0]->integer <= limit)
		st = RATELIMIT_OK;
	else {
		*retry_ms = r->element[1]->integer;
		if (*retry_ms < 1)
			*retry_ms = 1;
		st = RATELIMIT_LIMITED;
	}
	if (r != NULL)
		freeReplyObject(r);
	redisFree(rc);
	return st;
}
