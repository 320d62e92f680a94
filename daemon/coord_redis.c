/*
 * coord_redis — the cluster backend of coord (see coord.h), on hiredis's
 * blocking API with short timeouts.
 *
 * Keys (all under redis_prefix, default "taskspool:"):
 *   lease:<requestId>  "<node>:<epoch>:<attempt>", PX lease_ms
 *   fence              INCR counter: the fencing tokens of leases, kept
 *                      at or above the server's TIME in microseconds so
 *                      that a lost counter never makes tokens go back
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
 */
#include "coord_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "tstime.h"

#define RETRY_MS	500	/* no reconnection attempt for this long */
#define POLICY_MS	60000	/* maxmemory-policy read again this often */
#define KEY_MAX		(64 + 16 + TASK_ID_MAX + 1)

enum script { S_ACQUIRE, S_RENEW, S_RELEASE, S_LEADER, S_COUNT };

_Static_assert(S_COUNT == COORD_NSCRIPTS, "coord_impl.h: COORD_NSCRIPTS");

static const char *const script_src[S_COUNT] = {
	/* KEYS: lease, fence counter; ARGV: token, px → fence or 0.  The
	 * counter never falls below the server's clock in microseconds
	 * (TIME), so tokens keep growing after the counter is lost
	 * (FLUSHALL, a restart without persistence).  Lua 5.1 numbers are
	 * doubles (exact below 2^53, about 285 years of microseconds) that
	 * tostring() would print as 1.7e+15: string.format('%d') keeps
	 * every digit. */
	"if redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then "
	"local t=redis.call('TIME') local f=t[1]*1000000+t[2] "
	"local v=redis.call('INCR',KEYS[2]) "
	"if v<f then redis.call('SET',KEYS[2],string.format('%d',f)) v=f end "
	"return v end return 0",
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
	c->retry_mono = tstime_mono_ms() + RETRY_MS;
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

static redisContext *
connect_to(const struct coord *c, const char *host, int port)
{
	redisContext *rc = redisConnectWithTimeout(host, port, io_timeout(c));

	if (rc == NULL)
		return NULL;
	if (rc->err) {
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
		char sh[256];
		int sp;
		redisContext *rc;
		redisReply *r;

		if (split_addr(a, sh, sizeof(sh), &sp) != 0 ||
		    (rc = connect_to(c, sh, sp)) == NULL)
			continue;
		r = redisCommand(rc, "SENTINEL get-master-addr-by-name %s",
		    c->sentinel_master);
		if (r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 2 &&
		    r->element[0]->type == REDIS_REPLY_STRING &&
		    r->element[1]->type == REDIS_REPLY_STRING &&
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

/* A reply of the wanted type, else NULL (freed; connection dropped on
 * I/O errors). */
static redisReply *
checked(struct coord *c, redisReply *r, int type)
{
	if (r == NULL) {
		drop(c);
		return NULL;
	}
	if (r->type != type) {
		freeReplyObject(r);
		return NULL;
	}
	return r;
}

/* AUTH and SELECT on rc as configured; 0, or -1 (c->redis dropped
 * when rc is it). */
static int
login(struct coord *c, redisContext *rc)
{
	redisReply *r = NULL;

	if (c->password[0] != '\0') {
		r = redisCommand(rc, "AUTH %s", c->password);
		if (r == NULL || r->type != REDIS_REPLY_STATUS)
			goto fail;
		freeReplyObject(r);
	}
	if (c->db != 0) {
		r = redisCommand(rc, "SELECT %ld", c->db);
		if (r == NULL || r->type != REDIS_REPLY_STATUS)
			goto fail;
		freeReplyObject(r);
	}
	return 0;
fail:
	if (r != NULL)
		freeReplyObject(r);
	if (rc == c->redis)
		drop(c);
	return -1;
}

/* Connected, authenticated, db selected, scripts loaded; 0 or -1. */
static int
ensure(struct coord *c, char *why, size_t whylen)
{
	char host[256];
	int port;
	redisContext *rc;
	redisReply *r;

	if (c->redis != NULL)
		return 0;
	if (tstime_mono_ms() < c->retry_mono) {
		snprintf(why, whylen, "redis %s: unreachable (retrying)",
		    c->sentinel[0] ? c->sentinel : c->addr);
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
	if ((rc = connect_to(c, host, port)) == NULL) {
		snprintf(why, whylen, "redis %s:%d: cannot connect", host,
		    port);
		c->retry_mono = tstime_mono_ms() + RETRY_MS;
		return -1;
	}
	c->redis = rc;
	if (login(c, rc) != 0)
		goto fail;
	for (int i = 0; i < S_COUNT; i++) {
		r = checked(c, redisCommand(c->redis, "SCRIPT LOAD %s",
		    script_src[i]), REDIS_REPLY_STRING);
		if (r == NULL || r->len != 40) {
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
	snprintf(why, whylen, "redis %s:%d: AUTH, SELECT or SCRIPT LOAD "
	    "refused", host, port);
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
	r = redisCommand(c->redis, "CONFIG GET maxmemory-policy");
	if (r == NULL) {
		drop(c);
		return;
	}
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
	const char *argv[8];
	char nk[16];
	redisReply *r;
	int argc = 0;

	if (c->redis == NULL)
		return -1;
	snprintf(nk, sizeof(nk), "%d", nkeys);
	argv[argc++] = "EVALSHA";
	argv[argc++] = c->sha[s];
	argv[argc++] = nk;
	for (int i = 0; i < nkeys; i++)
		argv[argc++] = keys[i];
	for (int i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	r = redisCommandArgv(c->redis, argc, argv, NULL);
	if (r == NULL) {
		drop(c);
		return -1;
	}
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) ==
	    0) {
		/* The server restarted or flushed its script cache. */
		freeReplyObject(r);
		argv[0] = "EVAL";
		argv[1] = script_src[s];
		r = redisCommandArgv(c->redis, argc, argv, NULL);
		if (r == NULL) {
			drop(c);
			return -1;
		}
	}
	if (r->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(r);
		return -1;
	}
	*out = r->integer;
	freeReplyObject(r);
	return 0;
}

void *
coord_redis_conn(struct coord *c, char *why, size_t whylen)
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
	char host[256];
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
	if ((rc = connect_to(c, host, port)) == NULL) {
		snprintf(why, whylen, "redis %s:%d: cannot connect", host,
		    port);
		return NULL;
	}
	if (login(c, rc) != 0) {
		snprintf(why, whylen, "redis %s:%d: AUTH or SELECT refused",
		    host, port);
		redisFree(rc);
		return NULL;
	}
	return rc;
}

void
coord_redis_drop(struct coord *c)
{
	drop(c);
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
	if (c->redis != NULL && c->node[0] != '\0') {
		key(c, k, sizeof(k), "node:", c->node);
		rep = redisCommand(c->redis, "DEL %s", k);
		if (rep != NULL)
			freeReplyObject(rep);
	}
	if (c->redis != NULL)
		redisFree(c->redis);
	c->redis = NULL;
	coord_file_ops.close(c);	/* the heartbeat file */
}

static enum coord_status
redis_acquire(struct coord *c, struct coord_lease *l, char *why,
    size_t whylen)
{
	char k[KEY_MAX], f[KEY_MAX], px[32];
	const char *keys[2] = { k, f }, *args[2] = { l->token, px };
	long long fence;

	if (ensure(c, why, whylen) != 0)
		return COORD_ERR;
	key(c, k, sizeof(k), "lease:", l->id);
	key(c, f, sizeof(f), "fence", "");
	snprintf(px, sizeof(px), "%ld", c->lease_ms);
	if (run(c, S_ACQUIRE, 2, keys, 2, args, &fence) != 0) {
		snprintf(why, whylen, "redis: lease %s: no answer", l->id);
		return COORD_ERR;
	}
	if (fence == 0)
		return COORD_BUSY;
	l->fence = fence;
	return COORD_OK;
}

static enum coord_status
redis_renew(struct coord *c, struct coord_lease *l)
{
	char k[KEY_MAX], px[32], why[256];
	const char *keys[1] = { k }, *args[2] = { l->token, px };
	long long r;

	if (ensure(c, why, sizeof(why)) != 0)
		return COORD_ERR;
	key(c, k, sizeof(k), "lease:", l->id);
	snprintf(px, sizeof(px), "%ld", c->lease_ms);
	if (run(c, S_RENEW, 1, keys, 2, args, &r) != 0)
		return COORD_ERR;
	return r == 1 ? COORD_OK : COORD_LOST;
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
	char k[KEY_MAX], v[9][32], px[32];
	const char *argv[22];
	size_t argvlen[22];
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
	argv[argc++] = "HSET";
	argv[argc++] = k;
	{
		static const char *const f[9] = { "pid", "slots", "running",
			"claimed", "finished", "leader", "at_ms",
			"started_ms", "load1" };

		for (int i = 0; i < 9; i++) {
			argv[argc++] = f[i];
			argv[argc++] = v[i];
		}
	}
	/* The task codes it can run (hookset.h), for the dispatcher and
	 * the claimers of other hosts. */
	argv[argc++] = "hooks";
	argv[argc++] = info->hooks;
	for (int i = 0; i < argc; i++)
		argvlen[i] = strnlen(argv[i], HOOKSET_MAX - 1);
	r = checked(c, redisCommandArgv(c->redis, argc, argv, argvlen),
	    REDIS_REPLY_INTEGER);
	if (r == NULL) {
		snprintf(why, whylen, "redis: HSET %s failed", k);
		return -1;
	}
	freeReplyObject(r);
	snprintf(px, sizeof(px), "%ld", 3 * c->heartbeat_ms);
	r = checked(c, redisCommand(c->redis, "PEXPIRE %s %s", k, px),
	    REDIS_REPLY_INTEGER);
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
		const char *f = r->element[i]->str, *v = r->element[i + 1]->str;

		if (r->element[i]->type != REDIS_REPLY_STRING ||
		    r->element[i + 1]->type != REDIS_REPLY_STRING)
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
 * key without expiry (-1) or a failed PTTL keeps the written at_ms.
 */
static void
restamp(struct coord *c, const redisReply *k, struct coord_node *nd)
{
	redisReply *r = c->redis == NULL ? NULL : checked(c, redisCommand(
	    c->redis, "PTTL %b", k->str, k->len), REDIS_REPLY_INTEGER);
	long long age;

	if (r == NULL)
		return;
	if (r->integer >= 0) {
		age = 3LL * c->heartbeat_ms - r->integer;
		nd->at_ms = tstime_now_ms() - (age > 0 ? age : 0);
	}
	freeReplyObject(r);
}

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
		redisReply *r = checked(c, redisCommand(c->redis,
		    "SCAN %s MATCH %s COUNT 100", cursor, pat),
		    REDIS_REPLY_ARRAY);

		if (r == NULL || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			if (r != NULL)
				freeReplyObject(r);
			free(v);
			snprintf(why, whylen, "redis: SCAN failed");
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		for (size_t i = 0; i < r->element[1]->elements; i++) {
			const redisReply *k = r->element[1]->element[i];
			redisReply *h;

			if (k->type != REDIS_REPLY_STRING || k->len <= plen ||
			    k->len - plen > CONFIG_NODE_MAX)
				continue;
			h = checked(c, redisCommand(c->redis, "HGETALL %b",
			    k->str, k->len), REDIS_REPLY_ARRAY);
			if (h == NULL)
				continue;
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
			restamp(c, k, &v[len]);
			len++;
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0 && c->redis != NULL);
	coord_nodes_sort(v, len);
	*out = v;
	*n = len;
	return 0;
}

const struct coord_ops coord_redis_ops = {
	.kind = "redis",
	.expires = 1,
	.open = redis_open,
	.close = redis_close,
	.acquire = redis_acquire,
	.renew = redis_renew,
	.release = redis_release,
	.leader = redis_leader,
	.heartbeat = redis_heartbeat,
	.nodes = redis_nodes,
};
