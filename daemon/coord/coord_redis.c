/*
 * coord_redis — the cluster backend of coord (see coord.h), on hiredis's
 * blocking API with short timeouts.
 *
 * Keys (all under redis_prefix, default "taskspool:"):
 *   lease:<requestId>  "<node>:<epoch>:<attempt>", PX lease_ms; set
 *                      again by its holder's renewal when Redis lost it
 *   fence              INCR counter: the fencing tokens of leases, kept
 *                      at or above the server's TIME in microseconds and
 *                      above the token of a lease set again, so that a
 *                      lost counter does not make tokens go back
 *                      (NEXT_FENCE)
 *   leader             "<node>:<leader epoch>", PX heartbeat_ms
 *   leader_epoch       INCR counter: the leader's fencing epoch (same
 *                      floor)
 *   node:<id>          hash: the node's heartbeat, PX 3 x heartbeat_ms
 *                      (also written to state/heartbeat.<id>, as in
 *                      embedded mode)
 * Every change of a lease or of the leader key is one Lua script (EVALSHA,
 * EVAL when the server lost its script cache), so a check and the change
 * it guards are atomic: a lease is extended or deleted only by the holder
 * of its token (Redis docs, "Distributed Locks with Redis", single
 * instance; EVAL/EVALSHA, SCRIPT LOAD).
 *
 * With `sentinel = host:port[,host:port...]` the master's address is
 * asked of the sentinels (SENTINEL get-master-addr-by-name, Redis
 * Sentinel documentation, "Sentinel API") at every (re)connection.
 *
 * Connection failures never block for long: connect and command timeouts
 * are lease_ms/10 clamped to 100..1000 ms, and after a failure no new
 * connection is tried for 500 ms (calls return COORD_ERR meanwhile).
 *
 * Every command on the shared connection goes through one door,
 * command()/command_argv() (coord_redis_command() and the pipeline of
 * coord_redis_append() for index.c, maxconc.c and wakeup.c): it is the only place that hands c->redis to hiredis, it
 * refuses to when the connection is gone (an earlier command of the
 * same operation failed and freed it), and it frees the connection on
 * an I/O error or a timeout, remembering why in c->io_err.  A caller
 * that issues several commands therefore sees "no reply" for every one
 * after the first failure, never a crash; a listing (redis_nodes) then
 * fails as a whole.
 */
#include "coord/coord_redis.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "coord/coord_file.h"
#include "spool/log.h"
#include "spool/clock.h"

#define RETRY_MS	500	/* no reconnection attempt for this long */
#define POLICY_MS	60000	/* maxmemory-policy read again this often */
#define KEY_MAX		(64 + 16 + TASK_ID_MAX + 1)

enum script { S_ACQUIRE, S_RENEW, S_RELEASE, S_LEADER, S_RENEW_LEASE,
	S_TAKE, S_COUNT };

_Static_assert(S_COUNT == COORD_NSCRIPTS, "coord_impl.h: COORD_NSCRIPTS");

/*
 * The next fencing token, in v: INCR of the counter KEYS[2], raised to
 * at least the server's clock in microseconds (TIME) and, for a lease
 * set again, to the lease's previous token + 1 (ARGV[3]; "0" when none).
 * Tokens must exceed every token issued before, even when the counter
 * was lost with the data (FLUSHALL, a restart without persistence, a
 * replica promoted without the last writes):
 *  - the TIME floor covers a lost counter as long as the server's clock
 *    does not run behind the clock of the server that issued the lost
 *    tokens (one server restarted: its own clock; a promoted replica on
 *    another host: keep the hosts' clocks synchronised, NTP);
 *  - the previous-token floor makes the token of a lease set again after
 *    the loss greater than the one its holder had — whatever the clocks
 *    — and raises the counter above it, so the tokens every live holder
 *    re-establishes re-seed the counter with the highest token of the
 *    running tasks.
 * XXX A token issued in the lost writes to a lease that no longer
 * exists (its task ended, or was requeued) re-seeds nothing: with the
 * new server's clock behind the old one, a later lease — a new attempt
 * of that request among them — may get a smaller token.  Lua 5.1 numbers are doubles (exact below 2^53, about 285
 * years of microseconds) that tostring() would print as 1.7e+15:
 * string.format('%d') keeps every digit.
 */
#define NEXT_FENCE \
	"local t=redis.call('TIME') local f=t[1]*1000000+t[2] " \
	"local v=redis.call('INCR',KEYS[2]) " \
	"local o=tonumber(ARGV[3] or '0')+1 if o>f then f=o end " \
	"if v<f then redis.call('SET',KEYS[2],string.format('%d',f)) v=f end "

static const char *const script_src[S_COUNT] = {
	/* KEYS: lease, fence counter; ARGV: token, px → fence or 0. */
	"if redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then "
	NEXT_FENCE "return v end return 0",
	/* KEYS: key; ARGV: token, px → 1 extended, 0 not ours */
	"if redis.call('GET',KEYS[1])==ARGV[1] then "
	"redis.call('PEXPIRE',KEYS[1],ARGV[2]) return 1 end return 0",
	/* KEYS: key; ARGV: token → 1 deleted, 0 not ours */
	"if redis.call('GET',KEYS[1])==ARGV[1] then "
	"return redis.call('DEL',KEYS[1]) end return 0",
	/* KEYS: leader, epoch counter; ARGV: node, px → new epoch or 0 */
	"if redis.call('EXISTS',KEYS[1])==1 then return 0 end "
	"local t=redis.call('TIME') local f=t[1]*1000000+t[2] "
	"local e=redis.call('INCR',KEYS[2]) "
	"if e<f then redis.call('SET',KEYS[2],string.format('%d',f)) e=f end "
	"redis.call('SET',KEYS[1],ARGV[1]..':'..string.format('%d',e),'PX',"
	"ARGV[2]) return e",
	/* A lease's renewal.  KEYS: lease, fence counter; ARGV: token, px,
	 * the lease's token → 1 extended, 0 held by another owner, -v: the
	 * key was absent (lost by Redis, not taken) and is set again with
	 * the new fencing token v. */
	"local g=redis.call('GET',KEYS[1]) "
	"if g==ARGV[1] then redis.call('PEXPIRE',KEYS[1],ARGV[2]) return 1 end "
	"if g then return 0 end "
	"redis.call('SET',KEYS[1],ARGV[1],'PX',ARGV[2]) " NEXT_FENCE
	"return -v",
	/* An orphan's takeover.  KEYS: lease, fence counter; ARGV: token,
	 * px, "0", age (ms: a present key not renewed for this long is
	 * taken), lease_ms (the px its holder set at each renewal), "1"
	 * when an absent key may be taken → v the new fence, 0 a live
	 * holder, -1 absent (and not allowed). */
	"local g=redis.call('GET',KEYS[1]) if g then "
	"local ttl=redis.call('PTTL',KEYS[1]) "
	"if ttl<0 or tonumber(ARGV[5])-ttl<tonumber(ARGV[4]) then return 0 end "
	"elseif ARGV[6]~='1' then return -1 end "
	"redis.call('SET',KEYS[1],ARGV[1],'PX',ARGV[2]) " NEXT_FENCE
	"return v",
};

static struct timeval
io_timeout(const struct coord *c)
{
	long ms = c->lease_ms / 10;
	struct timeval tv;

	if (ms < 100)
		ms = 100;
	if (ms > 1000)
		ms = 1000;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return tv;
}

static void
drop(struct coord *c)
{
	if (c->redis != NULL)
		redisFree(c->redis);
	c->redis = NULL;
	c->pipelined = 0;
	c->retry_mono = tstime_mono_ms() + RETRY_MS;
}

/*
 * Why the last command on rc got no reply, into out: a timeout (hiredis
 * reports a socket timeout as REDIS_ERR_IO with the text of EAGAIN, a
 * connect timeout with that of ETIMEDOUT) is named a timeout, an EOF a
 * closed connection, anything else an I/O error.
 */
static void
describe_io(const struct coord *c, const redisContext *rc, char *out,
    size_t len)
{
	struct timeval tv = io_timeout(c);
	long ms = (long)tv.tv_sec * 1000 + (long)tv.tv_usec / 1000;

	if (rc->err == REDIS_ERR_IO && (strcmp(rc->errstr,
	    strerror(EAGAIN)) == 0 || strcmp(rc->errstr,
	    strerror(ETIMEDOUT)) == 0))
		snprintf(out, len, "timed out (no answer within %ld ms)", ms);
	else if (rc->err == REDIS_ERR_EOF)
		snprintf(out, len, "connection closed by the server");
	else
		snprintf(out, len, "I/O error: %s", rc->errstr[0] != '\0' ?
		    rc->errstr : "unknown");
}

/*
 * The door's other half: r is what hiredis returned for a command on
 * c->redis.  NULL (no reply: I/O error or timeout) drops the connection
 * and notes why; a reply of another type than type (-1: any) is freed.
 * Returns r or NULL.
 */
static redisReply *
answer(struct coord *c, redisReply *r, int type)
{
	if (r == NULL) {
		describe_io(c, c->redis, c->io_err, sizeof(c->io_err));
		drop(c);
		return NULL;
	}
	if (type >= 0 && r->type != type) {
		freeReplyObject(r);
		return NULL;
	}
	return r;
}

/*
 * The one door to hiredis for commands on the shared connection: fmt
 * and its arguments as redisCommand.  Returns a new reply of type type
 * (-1: any), or NULL: no connection (hiredis is not called), no reply
 * (connection dropped, c->io_err says why) or another type.
 */
static redisReply *
command(struct coord *c, int type, const char *fmt, ...)
{
	redisReply *r;
	va_list ap;

	if (c->redis == NULL)
		return NULL;
	va_start(ap, fmt);
	r = redisvCommand(c->redis, fmt, ap);
	va_end(ap);
	return answer(c, r, type);
}

/* command() with argc/argv as redisCommandArgv (NUL-terminated). */
static redisReply *
command_argv(struct coord *c, int type, int argc, const char **argv)
{
	if (c->redis == NULL)
		return NULL;
	return answer(c, redisCommandArgv(c->redis, argc, argv, NULL), type);
}

/* "host:port" → host (hostlen bytes) and port; 0 or -1. */
static int
split_addr(const char *addr, char *host, size_t hostlen, int *port)
{
	const char *colon = strrchr(addr, ':');
	char *end;
	long p;

	if (colon == NULL || colon == addr || (size_t)(colon - addr) >=
	    hostlen)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (*end != '\0' || p < 1 || p > 65535)
		return -1;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	*port = (int)p;
	return 0;
}

/* A new connection to host:port, or NULL with why in err (errlen). */
static redisContext *
connect_to(const struct coord *c, const char *host, int port, char *err,
    size_t errlen)
{
	redisContext *rc = redisConnectWithTimeout(host, port, io_timeout(c));

	if (rc == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (rc->err) {
		describe_io(c, rc, err, errlen);
		redisFree(rc);
		return NULL;
	}
	/* Hooks must not inherit the connection. */
	(void)fcntl(rc->fd, F_SETFD, FD_CLOEXEC);
	(void)redisSetTimeout(rc, io_timeout(c));
	return rc;
}

/* Ask the sentinels for the master's address; 0 or -1 with why. */
static int
sentinel_master(struct coord *c, char *host, size_t hostlen, int *port,
    char *why, size_t whylen)
{
	char list[sizeof(c->sentinel)], *save = NULL;

	snprintf(list, sizeof(list), "%s", c->sentinel);
	for (char *a = strtok_r(list, ",", &save); a != NULL;
	    a = strtok_r(NULL, ",", &save)) {
		char sh[256], err[128];
		int sp;
		redisContext *rc;
		redisReply *r;

		if (split_addr(a, sh, sizeof(sh), &sp) != 0 ||
		    (rc = connect_to(c, sh, sp, err, sizeof(err))) == NULL)
			continue;
		r = redisCommand(rc, "SENTINEL get-master-addr-by-name %s",
		    c->sentinel_master);
		if (r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 2 &&
		    r->element[0]->type == REDIS_REPLY_STRING &&
		    r->element[1]->type == REDIS_REPLY_STRING &&
		    coord_reply_text(r->element[0]) != NULL &&
		    coord_reply_text(r->element[1]) != NULL &&
		    r->element[0]->len < hostlen) {
			snprintf(host, hostlen, "%s", r->element[0]->str);
			*port = atoi(r->element[1]->str);
			freeReplyObject(r);
			redisFree(rc);
			return 0;
		}
		if (r != NULL)
			freeReplyObject(r);
		redisFree(rc);
	}
	snprintf(why, whylen, "no sentinel of \"%s\" knows master \"%s\"",
	    c->sentinel, c->sentinel_master);
	return -1;
}

/*
 * AUTH and SELECT on rc as configured: rc is c->redis (through the
 * door) or a subscriber's own new context.  Returns 0, or -1 with why
 * in err (a timeout named as such, a refusal with the server's error);
 * c->redis is dropped when rc is it.
 */
static int
login(struct coord *c, redisContext *rc, char *err, size_t errlen)
{
	char db[32];

	snprintf(db, sizeof(db), "%ld", c->db);
	for (int i = 0; i < 2; i++) {
		const char *what = i == 0 ? "AUTH" : "SELECT";
		const char *fmt = i == 0 ? "AUTH %s" : "SELECT %s";
		const char *arg = i == 0 ? c->password : db;
		redisReply *r;

		if (i == 0 ? c->password[0] == '\0' : c->db == 0)
			continue;
		if (rc == c->redis)
			r = command(c, -1, fmt, arg);
		else if ((r = redisCommand(rc, fmt, arg)) == NULL)
			describe_io(c, rc, c->io_err, sizeof(c->io_err));
		if (r == NULL) {
			snprintf(err, errlen, "%s: %s", what, c->io_err);
			return -1;
		}
		if (r->type != REDIS_REPLY_STATUS) {
			snprintf(err, errlen, "%s refused: %.80s", what,
			    r->type == REDIS_REPLY_ERROR ? r->str :
			    "unexpected reply");
			freeReplyObject(r);
			if (rc == c->redis)
				drop(c);
			return -1;
		}
		freeReplyObject(r);
	}
	return 0;
}

/* Connected, authenticated, db selected, scripts loaded; 0 or -1. */
static int
ensure(struct coord *c, char *why, size_t whylen)
{
	char host[256], err[256];
	int port;
	redisContext *rc;
	redisReply *r;

	if (c->redis != NULL)
		return 0;
	if (tstime_mono_ms() < c->retry_mono) {
		snprintf(why, whylen, "redis %s: unreachable (retrying; last: "
		    "%s)", c->sentinel[0] ? c->sentinel : c->addr,
		    c->io_err[0] != '\0' ? c->io_err : "no answer");
		return -1;
	}
	if (c->sentinel[0] != '\0') {
		if (sentinel_master(c, host, sizeof(host), &port, why,
		    whylen) != 0) {
			c->retry_mono = tstime_mono_ms() + RETRY_MS;
			return -1;
		}
	} else if (split_addr(c->addr, host, sizeof(host), &port) != 0) {
		snprintf(why, whylen, "redis: \"%s\" is not host:port",
		    c->addr);
		return -1;
	}
	if ((rc = connect_to(c, host, port, err, sizeof(err))) == NULL) {
		snprintf(why, whylen, "redis %s:%d: cannot connect: %s", host,
		    port, err);
		snprintf(c->io_err, sizeof(c->io_err), "cannot connect: %.160s",
		    err);
		c->retry_mono = tstime_mono_ms() + RETRY_MS;
		return -1;
	}
	c->redis = rc;
	c->io_err[0] = '\0';
	if (login(c, rc, err, sizeof(err)) != 0)
		goto fail;
	for (int i = 0; i < S_COUNT; i++) {
		r = command(c, -1, "SCRIPT LOAD %s", script_src[i]);
		if (r == NULL || r->type != REDIS_REPLY_STRING ||
		    r->len != 40) {
			snprintf(err, sizeof(err), "SCRIPT LOAD: %.80s",
			    r == NULL ? c->io_err : r->type ==
			    REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			if (r != NULL)
				freeReplyObject(r);
			goto fail;
		}
		memcpy(c->sha[i], r->str, 40);
		c->sha[i][40] = '\0';
		freeReplyObject(r);
	}
	c->policy_mono = 0;	/* read the eviction policy again now */
	return 0;
fail:
	snprintf(why, whylen, "redis %s:%d: %s", host, port, err);
	snprintf(c->io_err, sizeof(c->io_err), "%.176s", err);
	drop(c);
	return -1;
}

/*
 * A daemon (not a client) reads the server's maxmemory-policy after each
 * connection and every POLICY_MS: any policy but noeviction lets Redis
 * delete leases, heartbeats and the index under memory pressure (Redis
 * docs, "Key eviction").  The daemon keeps running (the spool is the
 * source of truth: an evicted lease lets its holder self-fence and the
 * task run again, the index is rebuilt) but warns each time the value
 * changes; a server that refuses CONFIG GET is noted once.
 * FIELD-FAILURES B18.
 */
static void
check_policy(struct coord *c)
{
	const char *v = "(CONFIG GET refused)";
	redisReply *r;

	if (c->node[0] == '\0' || c->redis == NULL ||
	    (c->policy_mono != 0 && tstime_mono_ms() < c->policy_mono))
		return;
	c->policy_mono = tstime_mono_ms() + POLICY_MS;
	if ((r = command(c, -1, "CONFIG GET maxmemory-policy")) == NULL)
		return;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[1]->type == REDIS_REPLY_STRING)
		v = r->element[1]->str;
	if (strcmp(v, c->policy) != 0) {
		if (strcmp(v, "noeviction") == 0)
			log_info("redis: maxmemory-policy is noeviction");
		else if (r->type == REDIS_REPLY_ARRAY)
			log_warnx("redis: maxmemory-policy is %s, not "
			    "noeviction: under memory pressure Redis may "
			    "evict leases, heartbeats and the index (tasks "
			    "are then run again, never lost); set "
			    "maxmemory-policy noeviction", v);
		else
			log_info("redis: maxmemory-policy unknown (CONFIG "
			    "GET refused); it should be noeviction");
		snprintf(c->policy, sizeof(c->policy), "%s", v);
	}
	freeReplyObject(r);
}

/*
 * Run script s with nkeys keys then args (argv, all strings).  Returns
 * the integer reply in *out and 0, or -1 (connection dropped, or error
 * reply).
 */
static int
run(struct coord *c, enum script s, int nkeys, const char **keys,
    int nargs, const char **args, long long *out)
{
	const char *argv[12];
	char nk[16];
	redisReply *r;
	int argc = 0;

	snprintf(nk, sizeof(nk), "%d", nkeys);
	argv[argc++] = "EVALSHA";
	argv[argc++] = c->sha[s];
	argv[argc++] = nk;
	for (int i = 0; i < nkeys; i++)
		argv[argc++] = keys[i];
	for (int i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	if ((r = command_argv(c, -1, argc, argv)) == NULL)
		return -1;
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) ==
	    0) {
		/* The server restarted or flushed its script cache. */
		freeReplyObject(r);
		argv[0] = "EVAL";
		argv[1] = script_src[s];
		if ((r = command_argv(c, -1, argc, argv)) == NULL)
			return -1;
	}
	if (r->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(r);
		return -1;
	}
	*out = r->integer;
	freeReplyObject(r);
	return 0;
}

/* c's shared connection, connected when needed; NULL with why (not a
 * redis coord, unreachable). */
static redisContext *
shared_conn(struct coord *c, char *why, size_t whylen)
{
	if (c->ops != &coord_redis_ops) {
		snprintf(why, whylen, "not in cluster mode (no redis)");
		return NULL;
	}
	if (ensure(c, why, whylen) != 0)
		return NULL;
	return c->redis;
}

void *
coord_redis_connect_new(struct coord *c, char *why, size_t whylen)
{
	char host[256], err[256];
	int port;
	redisContext *rc;

	if (c->ops != &coord_redis_ops) {
		snprintf(why, whylen, "not in cluster mode (no redis)");
		return NULL;
	}
	if (c->sentinel[0] != '\0') {
		if (sentinel_master(c, host, sizeof(host), &port, why,
		    whylen) != 0)
			return NULL;
	} else if (split_addr(c->addr, host, sizeof(host), &port) != 0) {
		snprintf(why, whylen, "redis: \"%s\" is not host:port",
		    c->addr);
		return NULL;
	}
	if ((rc = connect_to(c, host, port, err, sizeof(err))) == NULL) {
		snprintf(why, whylen, "redis %s:%d: cannot connect: %s", host,
		    port, err);
		return NULL;
	}
	if (login(c, rc, err, sizeof(err)) != 0) {
		snprintf(why, whylen, "redis %s:%d: %s", host, port, err);
		redisFree(rc);
		return NULL;
	}
	return rc;
}

void
coord_redis_drop(struct coord *c)
{
	if (c->redis != NULL)
		snprintf(c->io_err, sizeof(c->io_err), "dropped after an "
		    "error");
	drop(c);
}

void *
coord_redis_command(struct coord *c, int type, int argc, const char **argv,
    char *why, size_t whylen)
{
	redisReply *r;

	if (shared_conn(c, why, whylen) == NULL)
		return NULL;
	if ((r = command_argv(c, -1, argc, argv)) == NULL) {
		snprintf(why, whylen, "redis: %s: %s", argv[0], c->io_err);
		return NULL;
	}
	if (type >= 0 && r->type != type) {
		snprintf(why, whylen, "redis: %s: %.80s", argv[0], r->type ==
		    REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		freeReplyObject(r);
		return NULL;
	}
	return r;
}

int
coord_redis_append(struct coord *c, int argc, const char **argv,
    const size_t *argvlen, char *why, size_t whylen)
{
	if (c->pipelined == 0 && shared_conn(c, why, whylen) == NULL)
		return -1;
	if (c->redis == NULL) {
		snprintf(why, whylen, "redis: %s: %s", argv[0], c->io_err);
		return -1;
	}
	if (redisAppendCommandArgv(c->redis, argc, argv, argvlen) !=
	    REDIS_OK) {
		snprintf(why, whylen, "redis: %s: out of memory", argv[0]);
		return -1;
	}
	c->pipelined++;
	return 0;
}

int
coord_redis_flush(struct coord *c, char *why, size_t whylen)
{
	int rcode = 0;

	while (c->pipelined > 0) {
		void *r;

		if (c->redis == NULL || redisGetReply(c->redis, &r) !=
		    REDIS_OK) {
			if (c->redis != NULL)
				describe_io(c, c->redis, c->io_err,
				    sizeof(c->io_err));
			snprintf(why, whylen, "redis: pipeline: %s",
			    c->io_err);
			drop(c);
			return -1;
		}
		c->pipelined--;
		if (((redisReply *)r)->type == REDIS_REPLY_ERROR) {
			snprintf(why, whylen, "redis: %.200s",
			    ((redisReply *)r)->str);
			rcode = -1;
		}
		freeReplyObject(r);
	}
	return rcode;
}

void *
coord_redis_command_on(void *conn, int argc, const char **argv, char *why,
    size_t whylen)
{
	redisReply *r;

	if (conn == NULL) {
		snprintf(why, whylen, "redis: %s: no connection", argv[0]);
		return NULL;
	}
	if ((r = redisCommandArgv(conn, argc, argv, NULL)) == NULL)
		snprintf(why, whylen, "redis: %s: no answer", argv[0]);
	return r;
}

static void
key(const struct coord *c, char *out, size_t len, const char *kind,
    const char *id)
{
	snprintf(out, len, "%s%s%s", c->prefix, kind, id);
}

static int
redis_open(struct coord *c, char *why, size_t whylen)
{
	char host[256];
	int port;

	if (c->sentinel[0] == '\0' && split_addr(c->addr, host, sizeof(host),
	    &port) != 0) {
		snprintf(why, whylen, "redis: \"%s\" is not host:port",
		    c->addr);
		return -1;
	}
	if (c->sentinel[0] != '\0' && c->sentinel_master[0] == '\0') {
		snprintf(why, whylen, "sentinel_master: empty");
		return -1;
	}
	c->redis = NULL;
	c->retry_mono = 0;
	return 0;
}

static void
redis_close(struct coord *c)
{
	char k[KEY_MAX];
	const char *keys[1], *args[1];
	long long r;
	redisReply *rep;

	if (c->redis != NULL && c->leader_token[0] != '\0') {
		key(c, k, sizeof(k), "leader", "");
		keys[0] = k;
		args[0] = c->leader_token;
		(void)run(c, S_RELEASE, 1, keys, 1, args, &r);
	}
	if (c->node[0] != '\0') {
		key(c, k, sizeof(k), "node:", c->node);
		if ((rep = command(c, -1, "DEL %s", k)) != NULL)
			freeReplyObject(rep);
	}
	if (c->redis != NULL)
		redisFree(c->redis);
	c->redis = NULL;
	coord_file_ops.close(c);	/* the heartbeat file */
}

/* Connected, and the keys of l's lease scripts in k and f (KEY_MAX
 * bytes) and lease_ms in px (32 bytes); 0 or -1 with why. */
static int
lease_keys(struct coord *c, const struct coord_lease *l, char *k, char *f,
    char *px, char *why, size_t whylen)
{
	if (ensure(c, why, whylen) != 0)
		return -1;
	key(c, k, KEY_MAX, "lease:", l->id);
	key(c, f, KEY_MAX, "fence", "");
	snprintf(px, 32, "%ld", c->lease_ms);
	return 0;
}

static enum coord_status
redis_acquire(struct coord *c, struct coord_lease *l, char *why,
    size_t whylen)
{
	char k[KEY_MAX], f[KEY_MAX], px[32];
	const char *keys[2] = { k, f }, *args[2] = { l->token, px };
	long long fence;

	if (lease_keys(c, l, k, f, px, why, whylen) != 0)
		return COORD_ERR;
	if (run(c, S_ACQUIRE, 2, keys, 2, args, &fence) != 0) {
		snprintf(why, whylen, "redis: lease %s: no answer", l->id);
		return COORD_ERR;
	}
	if (fence == 0)
		return COORD_BUSY;
	l->fence = fence;
	return COORD_OK;
}

/*
 * Renew l.  A key held by another owner is COORD_LOST (fenced).  A key
 * that is absent — Redis lost it (FLUSHALL, a restart or failover
 * without the data), nobody took it — is set again with a fencing token
 * greater than the lease's previous one (l->fence updated, l->refenced
 * set): coord_tick then keeps the lease only while this node's claim on
 * the task file stands (issue 11 item 2).
 */
static enum coord_status
redis_renew(struct coord *c, struct coord_lease *l)
{
	char k[KEY_MAX], f[KEY_MAX], px[32], old[32], why[256];
	const char *keys[2] = { k, f }, *args[3] = { l->token, px, old };
	long long r;

	if (lease_keys(c, l, k, f, px, why, sizeof(why)) != 0)
		return COORD_ERR;
	snprintf(old, sizeof(old), "%lld", l->fence);
	if (run(c, S_RENEW_LEASE, 2, keys, 3, args, &r) != 0)
		return COORD_ERR;
	if (r < 0) {
		l->fence = -r;
		l->refenced = 1;
		return COORD_OK;
	}
	return r == 1 ? COORD_OK : COORD_LOST;
}

#define ABSENT_MAX	4096	/* lease keys seen absent, at most */

/* The entry of id in c->absent, or NULL. */
static struct coord_absent *
absent_find(struct coord *c, const char *id)
{
	for (size_t i = 0; i < c->nabsent; i++)
		if (strcmp(c->absent[i].id, id) == 0)
			return &c->absent[i];
	return NULL;
}

/*
 * How long (ms) the lease key of id has been seen absent without a
 * break: observations more than 3 reaper periods apart (this node was
 * not the leader meanwhile, or stopped looking) start the count again.
 * seen: record this observation (absent now); else forget id (the key
 * exists).  Entries not seen for that long are dropped as the table
 * fills; a full table records nothing (no takeover of an absent key
 * then, which is safe).
 */
static int64_t
absent_note(struct coord *c, const char *id, int seen, int64_t now)
{
	int64_t gap = 3 * (int64_t)c->reap_ms;
	struct coord_absent *e = absent_find(c, id);

	if (!seen) {
		if (e != NULL)
			*e = c->absent[--c->nabsent];
		return 0;
	}
	if (e != NULL && now - e->last > gap)
		e->first = now;
	if (e == NULL) {
		for (size_t i = 0; i < c->nabsent;)
			if (now - c->absent[i].last > gap)
				c->absent[i] = c->absent[--c->nabsent];
			else
				i++;
		if (c->nabsent == ABSENT_MAX)
			return 0;
		if (c->nabsent % 64 == 0) {
			struct coord_absent *v = reallocarray(c->absent,
			    c->nabsent + 64, sizeof(*v));

			if (v == NULL)
				return 0;
			c->absent = v;
		}
		e = &c->absent[c->nabsent++];
		snprintf(e->id, sizeof(e->id), "%s", id);
		e->first = now;
	}
	e->last = now;
	return now - e->first;
}

/*
 * Take an orphan's lease (coord.c explains the deadlines).  A present
 * key is replaced when Redis says it was not renewed for takeover_ms.
 * An absent key is taken at once in this node's own active/ directory
 * (the flock we hold proves no live process of this node has the file:
 * a previous life's attempt); in another node's directory only once it
 * has been seen absent for takeover_ms: right after a FLUSHALL, or a
 * restart or failover that lost the data, the live holder sets the key
 * again at its next renewal (within lease_renew_ms), so a reaper that
 * looked at once would requeue a running task (issue 11 item 2).
 * XXX Two losses of Redis's data within one reaper period, with the
 * holder's renewal in between, look like one absence to this count.
 */
static enum coord_status
redis_take(struct coord *c, struct coord_lease *l, int own,
    int64_t now_mono, char *why, size_t whylen)
{
	char k[KEY_MAX], f[KEY_MAX], px[32], age[32], lease[32];
	const char *keys[2] = { k, f };
	const char *args[6] = { l->token, px, "0", age, lease, "0" };
	struct coord_absent *e;
	long long r;

	if (lease_keys(c, l, k, f, px, why, whylen) != 0)
		return COORD_ERR;
	snprintf(age, sizeof(age), "%ld", c->takeover_ms);
	snprintf(lease, sizeof(lease), "%ld", c->lease_ms);
	e = absent_find(c, l->id);
	if (own || (e != NULL && now_mono - e->last <= 3 * c->reap_ms &&
	    now_mono - e->first >= c->takeover_ms))
		args[5] = "1";
	if (run(c, S_TAKE, 2, keys, 6, args, &r) != 0) {
		snprintf(why, whylen, "redis: lease %s: no answer", l->id);
		return COORD_ERR;
	}
	(void)absent_note(c, l->id, r == -1, now_mono);
	if (r <= 0)
		return COORD_BUSY;
	l->fence = r;
	return COORD_OK;
}

static void
redis_release(struct coord *c, struct coord_lease *l)
{
	char k[KEY_MAX], why[256];
	const char *keys[1] = { k }, *args[1] = { l->token };
	long long r;

	if (ensure(c, why, sizeof(why)) != 0)
		return;		/* it expires by itself */
	key(c, k, sizeof(k), "lease:", l->id);
	(void)run(c, S_RELEASE, 1, keys, 1, args, &r);
}

static int
redis_leader(struct coord *c, int64_t now_mono, unsigned long long *epoch)
{
	char k[KEY_MAX], e[KEY_MAX], px[32], why[256];
	const char *keys[2] = { k, e }, *args[2];
	long long r;

	*epoch = 0;
	if (ensure(c, why, sizeof(why)) != 0) {
		c->leader_token[0] = '\0';
		return -1;
	}
	key(c, k, sizeof(k), "leader", "");
	key(c, e, sizeof(e), "leader_epoch", "");
	snprintf(px, sizeof(px), "%ld", c->heartbeat_ms);
	args[1] = px;
	if (c->leader_token[0] != '\0') {
		args[0] = c->leader_token;
		if (run(c, S_RENEW, 1, keys, 2, args, &r) != 0) {
			c->leader_token[0] = '\0';
			return -1;
		}
		if (r == 1) {
			*epoch = c->leader_epoch;
			c->leader_until = now_mono + c->heartbeat_ms;
			return 1;
		}
		c->leader_token[0] = '\0';	/* deposed */
	}
	args[0] = c->node;
	if (run(c, S_LEADER, 2, keys, 2, args, &r) != 0)
		return -1;
	if (r <= 0)
		return 0;
	c->leader_epoch = (unsigned long long)r;
	snprintf(c->leader_token, sizeof(c->leader_token), "%s:%lld", c->node,
	    r);
	c->leader_until = now_mono + c->heartbeat_ms;
	*epoch = c->leader_epoch;
	return 1;
}

static int
redis_heartbeat(struct coord *c, const struct coord_node *info, char *why,
    size_t whylen)
{
	char k[KEY_MAX], v[10][32], px[32];
	const char *argv[26];	/* HSET key, 10 + 2 field-value pairs */
	int argc = 0;
	redisReply *r;

	/* The file too: local tools and NFS hosts see it without Redis. */
	if (coord_file_ops.heartbeat(c, info, why, whylen) != 0 ||
	    ensure(c, why, whylen) != 0)
		return -1;
	check_policy(c);
	if (ensure(c, why, whylen) != 0)
		return -1;
	key(c, k, sizeof(k), "node:", c->node);
	snprintf(v[0], sizeof(v[0]), "%ld", info->pid);
	snprintf(v[1], sizeof(v[1]), "%ld", info->slots);
	snprintf(v[2], sizeof(v[2]), "%ld", info->running);
	snprintf(v[3], sizeof(v[3]), "%llu", info->claimed);
	snprintf(v[4], sizeof(v[4]), "%llu", info->finished);
	snprintf(v[5], sizeof(v[5]), "%d", info->leader);
	snprintf(v[6], sizeof(v[6]), "%lld", (long long)info->at_ms);
	snprintf(v[7], sizeof(v[7]), "%lld", (long long)info->started_ms);
	snprintf(v[8], sizeof(v[8]), "%.2f", info->load1);
	snprintf(v[9], sizeof(v[9]), "%d", info->draining);
	argv[argc++] = "HSET";
	argv[argc++] = k;
	{
		static const char *const f[10] = { "pid", "slots", "running",
			"claimed", "finished", "leader", "at_ms",
			"started_ms", "load1", "draining" };

		for (int i = 0; i < 10; i++) {
			argv[argc++] = f[i];
			argv[argc++] = v[i];
		}
	}
	/* The task codes it can run (hookset.h), for the dispatcher and
	 * the claimers of other hosts. */
	argv[argc++] = "hooks";
	argv[argc++] = info->hooks;
	/* Its tags (core/tags.h), for the dispatcher the same way. */
	argv[argc++] = "tags";
	argv[argc++] = info->tags;
	r = command_argv(c, REDIS_REPLY_INTEGER, argc, argv);
	if (r == NULL) {
		snprintf(why, whylen, "redis: HSET %s failed", k);
		return -1;
	}
	freeReplyObject(r);
	snprintf(px, sizeof(px), "%ld", 3 * c->heartbeat_ms);
	r = command(c, REDIS_REPLY_INTEGER, "PEXPIRE %s %s", k, px);
	if (r == NULL) {
		snprintf(why, whylen, "redis: PEXPIRE %s failed", k);
		return -1;
	}
	freeReplyObject(r);
	return 0;
}

/* Fill nd from the HGETALL reply r. */
static void
parse_hash(const redisReply *r, struct coord_node *nd)
{
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const char *f = coord_reply_text(r->element[i]);
		const char *v = coord_reply_text(r->element[i + 1]);

		if (f == NULL || v == NULL)
			continue;
		coord_node_field(nd, f, v);
	}
}

/*
 * Liveness is judged with Redis's clock, never with the writer's: the
 * heartbeat's age is 3 x heartbeat_ms minus the key's remaining PTTL
 * (Redis counts expiry on its own clock), and nd->at_ms is rewritten as
 * this reader's now minus that age.  A node whose clock runs 30 s behind
 * or ahead is then neither offline nor immortal (FIELD-FAILURES B31).  A
 * key without expiry (-1) keeps the written at_ms.  Returns 0, or -1
 * when the connection was lost.
 */
static int
restamp(struct coord *c, const redisReply *k, struct coord_node *nd)
{
	redisReply *r = command(c, REDIS_REPLY_INTEGER, "PTTL %b", k->str,
	    k->len);
	long long age;

	if (r == NULL)
		return c->redis == NULL ? -1 : 0;
	if (r->integer >= 0) {
		age = 3LL * c->heartbeat_ms - r->integer;
		nd->at_ms = tstime_now_ms() - (age > 0 ? age : 0);
	}
	freeReplyObject(r);
	return 0;
}

/*
 * The registry listing.  It fails as a whole when the connection is lost
 * at any step (SCAN, HGETALL or PTTL): a partial list would make the
 * router and the reaper treat the nodes not yet listed as offline.  A
 * key that is not a hash (a stranger's) is skipped.
 */
static int
redis_nodes(struct coord *c, struct coord_node **out, size_t *n, char *why,
    size_t whylen)
{
	char pat[KEY_MAX], cursor[32] = "0";
	size_t plen, len = 0, cap = 0;
	struct coord_node *v = NULL;

	if (ensure(c, why, whylen) != 0)
		return -1;
	key(c, pat, sizeof(pat), "node:", "*");
	plen = strlen(pat) - 1;
	do {
		redisReply *r = command(c, REDIS_REPLY_ARRAY,
		    "SCAN %s MATCH %s COUNT 100", cursor, pat);

		if (r == NULL || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			if (r != NULL)
				freeReplyObject(r);
			free(v);
			snprintf(why, whylen, "redis: node listing: SCAN: %s",
			    c->redis == NULL ? c->io_err : "unexpected reply");
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		for (size_t i = 0; i < r->element[1]->elements; i++) {
			const redisReply *k = r->element[1]->element[i];
			redisReply *h;

			/* the node id is the key's bytes after the prefix:
			 * one C string, of the node id grammar */
			if (coord_reply_text(k) == NULL || k->len <= plen ||
			    k->len - plen > CONFIG_NODE_MAX ||
			    !spool_code_ok(k->str + plen))
				continue;
			h = command(c, REDIS_REPLY_ARRAY, "HGETALL %b",
			    k->str, k->len);
			if (h == NULL && c->redis == NULL)
				goto lost;
			if (h == NULL)
				continue;	/* not a hash */
			if (h->elements == 0) {
				freeReplyObject(h);
				continue;	/* expired meanwhile */
			}
			if (len == cap) {
				struct coord_node *nv;

				cap = cap ? cap * 2 : 8;
				nv = reallocarray(v, cap, sizeof(*v));
				if (nv == NULL) {
					freeReplyObject(h);
					freeReplyObject(r);
					free(v);
					snprintf(why, whylen, "nodes: %s",
					    strerror(errno));
					return -1;
				}
				v = nv;
			}
			memset(&v[len], 0, sizeof(v[len]));
			memcpy(v[len].id, k->str + plen, k->len - plen);
			v[len].id[k->len - plen] = '\0';
			parse_hash(h, &v[len]);
			freeReplyObject(h);
			if (restamp(c, k, &v[len]) != 0)
				goto lost;
			len++;
		}
		freeReplyObject(r);
		continue;
lost:
		freeReplyObject(r);
		free(v);
		snprintf(why, whylen, "redis: node listing: connection lost "
		    "(%s); no partial list", c->io_err);
		return -1;
	} while (strcmp(cursor, "0") != 0);
	coord_nodes_sort(v, len);
	*out = v;
	*n = len;
	return 0;
}

const char *
coord_reply_text(const void *reply)
{
	const redisReply *r = reply;

	if (r == NULL || (r->type != REDIS_REPLY_STRING &&
	    r->type != REDIS_REPLY_STATUS) || r->str == NULL ||
	    memchr(r->str, '\0', r->len) != NULL)
		return NULL;
	return r->str;
}

const struct coord_ops coord_redis_ops = {
	.kind = "redis",
	.expires = 1,
	.open = redis_open,
	.close = redis_close,
	.acquire = redis_acquire,
	.renew = redis_renew,
	.take = redis_take,
	.release = redis_release,
	.leader = redis_leader,
	.heartbeat = redis_heartbeat,
	.nodes = redis_nodes,
};
