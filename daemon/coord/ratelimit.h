/*
 * ratelimit — the HTTP API's per-AppId request limit (429 RATE_LIMITED,
 * API.md §5).  Mechanism only: count one request against a limit and
 * say whether it is allowed; the caller (api/api_auth.c) decides the limit,
 * answers and logs.
 *
 * Algorithm: a *fixed window counter* whose window starts with the
 * first request after the previous window ended (the "rate limiter 2"
 * pattern of the Redis INCR documentation): at most `limit` requests of
 * one AppId are allowed in each window of `window_ms`; the others are
 * refused until the window ends, and the time left is the Retry-After.
 * Refused requests never move the window, so a caller that keeps
 * retrying is not locked out for longer (Redis counts them past the
 * limit, the file stays at the limit: the answers are the same).  Known
 * weakness of fixed windows: up to 2 x limit requests can pass within
 * one window length around a window's end.
 *
 * Two backends with the same semantics, one process per request (the
 * CGI) sharing the state:
 *   file   state/ratelimit/<appId>: "<window start, Unix ms> <count>\n",
 *          read and rewritten in place under flock(LOCK_EX) (one small
 *          file lock per request).  Not fsynced: a crash can only
 *          forget a count, i.e. allow a few requests more.  A time
 *          at most one window before the window's start (read before
 *          the lock was granted) counts in that window; a start further
 *          in the future (the wall clock stepped back) starts a new
 *          window.
 *   redis  <redis_prefix>rate:<appId>: INCR, and PEXPIRE window_ms when
 *          the key has no expiry yet (the first request of a window),
 *          in one Lua script (EVAL), so the key's TTL is the time left;
 *          the Redis server's clock decides, so the API hosts' clocks
 *          do not matter.
 */
#ifndef TASKSPOOL_RATELIMIT_H
#define TASKSPOOL_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

struct coord;

enum ratelimit_status {
	RATELIMIT_OK,		/* allowed */
	RATELIMIT_LIMITED,	/* over the limit: *retry_ms says how long */
	RATELIMIT_ERR		/* the store failed: why, errno */
};

#define RATELIMIT_STATE_MAX	64	/* bytes of a state file */

/*
 * Count one request of app (an AppId, the apps.conf grammar; borrowed)
 * in the file dirfd/<app> (dirfd borrowed: state/ratelimit/), allowing
 * limit (>= 1) requests per window_ms (>= 1) ms, at now_ms (Unix ms,
 * wall clock; a parameter so tests can drive the clock).  On
 * RATELIMIT_LIMITED *retry_ms is the time until the window ends, in ms
 * (>= 1).  RATELIMIT_ERR: errno from open/flock/read/write, and why
 * says which (a state file that does not parse is not an error: it
 * starts a new window).
 */
enum ratelimit_status ratelimit_file(int dirfd, const char *app, long limit,
    int64_t window_ms, int64_t now_ms, int64_t *retry_ms, char *why,
    size_t whylen);

/*
 * The same against Redis through c (borrowed, a coord opened on a
 * configuration naming redis or sentinel): one connection of its own
 * (connect, AUTH, SELECT), one EVAL, closed again.  RATELIMIT_ERR with
 * why when Redis is unreachable or answers something unexpected.
 */
enum ratelimit_status ratelimit_redis(struct coord *c, const char *app,
    long limit, int64_t window_ms, int64_t *retry_ms, char *why,
    size_t whylen);

/* Retry-After in whole seconds for a wait of retry_ms: rounded up, at
 * least 1 (RFC 9110 §10.2.3 delay-seconds). */
long ratelimit_retry_after(int64_t retry_ms);

#endif
