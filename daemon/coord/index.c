/*
 * index — requestId → state index in Redis (see index.h).  Redis
 * commands: HSET, EXPIRE/PERSIST (pipelined), HGETALL, SCAN MATCH, DEL,
 * SET (Redis command reference), all through coord_redis.h's wrapper.
 */
#include "coord/index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord/coord_open.h"
#include "coord/coord_redis.h"
#include "coord/maxconc.h"
#include "spool/clock.h"

#define KEY_LEN		(64 + 8 + TASK_ID_MAX + 1)

static int lost_update;		/* an update failed: rebuild */

static void
key(const struct coord *c, char *out, size_t len, const char *id)
{
	snprintf(out, len, "%sidx:%s", c->prefix, id);
}

/* Whether c has Redis (cluster mode): without it there is no index. */
static int
cluster(const struct coord *c)
{
	return coord_leases_expire(c);
}

/* One command (NUL-terminated argv) whose reply is of type type; the
 * reply (free it) or NULL. */
static redisReply *
cmd(struct coord *c, int type, int argc, const char **argv)
{
	char why[256];

	return coord_redis_command(c, type, argc, argv, why, sizeof(why));
}

/* Append argv (argvlen as coord_redis_append) to the pipeline; 0 or -1. */
static int
append(struct coord *c, int argc, const char **argv, const size_t *argvlen)
{
	char why[256];

	return coord_redis_append(c, argc, argv, argvlen, why, sizeof(why));
}

/* Send the pipeline and read its replies; 0 when none failed, or -1. */
static int
replies(struct coord *c)
{
	char why[256];

	return coord_redis_flush(c, why, sizeof(why));
}

int
index_put(struct coord *c, const char *id, enum spool_dir d,
    const char *state, const char *node, const char *code, long attempts,
    int64_t not_before_ms, long ttl_sec)
{
	char k[KEY_LEN], att[32], nb[32], at[32], ttl[32];
	const char *argv[20], *tail[3] = { "PERSIST", k, ttl };
	int argc = 0, sent;

	if (!cluster(c))
		return -1;
	key(c, k, sizeof(k), id);
	snprintf(att, sizeof(att), "%ld", attempts);
	snprintf(nb, sizeof(nb), "%lld", (long long)not_before_ms);
	snprintf(at, sizeof(at), "%lld", (long long)tstime_now_ms());
	argv[argc++] = "HSET";
	argv[argc++] = k;
	argv[argc++] = "state";
	argv[argc++] = state;
	argv[argc++] = "dir";
	argv[argc++] = spool_dir_name(d);
	argv[argc++] = "node";
	argv[argc++] = node != NULL ? node : "";
	argv[argc++] = "nb";
	argv[argc++] = nb;
	argv[argc++] = "at";
	argv[argc++] = at;
	if (code != NULL) {
		argv[argc++] = "code";
		argv[argc++] = code;
	}
	if (attempts >= 0) {
		argv[argc++] = "attempts";
		argv[argc++] = att;
	}
	snprintf(ttl, sizeof(ttl), "%ld", ttl_sec);
	if (ttl_sec > 0)
		tail[0] = "EXPIRE";
	sent = append(c, argc, argv, NULL) == 0 && append(c, ttl_sec > 0 ?
	    3 : 2, tail, NULL) == 0;
	if (replies(c) != 0 || !sent) {
		lost_update = 1;
		return -1;
	}
	return 0;
}

int
index_forget(struct coord *c, const char *id)
{
	char k[KEY_LEN];
	const char *argv[2] = { "DEL", k };
	redisReply *r;

	if (!cluster(c))
		return -1;
	key(c, k, sizeof(k), id);
	if ((r = cmd(c, -1, 2, argv)) != NULL && r->type ==
	    REDIS_REPLY_ERROR) {
		freeReplyObject(r);
		r = NULL;
	}
	if (r != NULL)
		freeReplyObject(r);
	else {
		lost_update = 1;
		return -1;
	}
	return 0;
}

/* The directory named name, or SPOOL_NDIRS. */
static enum spool_dir
dir_named(const char *name)
{
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (strcmp(spool_dir_name((enum spool_dir)d), name) == 0)
			return (enum spool_dir)d;
	return SPOOL_NDIRS;
}

int
index_get(struct coord *c, const char *id, struct index_entry *e)
{
	redisReply *r;
	char k[KEY_LEN];
	const char *argv[2] = { "HGETALL", k };
	int have = 0;

	if (!cluster(c))
		return -1;
	key(c, k, sizeof(k), id);
	if ((r = cmd(c, -1, 2, argv)) == NULL)
		return -1;
	memset(e, 0, sizeof(*e));
	e->dir = SPOOL_NDIRS;
	e->attempts = 0;
	e->not_before_ms = -1;
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -1;
	}
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const char *f = coord_reply_text(r->element[i]);
		const char *v = coord_reply_text(r->element[i + 1]);

		if (f == NULL || v == NULL)
			continue;
		if (strcmp(f, "state") == 0) {
			snprintf(e->state, sizeof(e->state), "%s", v);
			have |= 1;
		} else if (strcmp(f, "dir") == 0) {
			e->dir = dir_named(v);
			if (e->dir != SPOOL_NDIRS)
				have |= 2;
		} else if (strcmp(f, "code") == 0) {
			snprintf(e->code, sizeof(e->code), "%s", v);
			have |= 4;
		} else if (strcmp(f, "node") == 0)
			snprintf(e->node, sizeof(e->node), "%s", v);
		else if (strcmp(f, "attempts") == 0)
			e->attempts = strtol(v, NULL, 10);
		else if (strcmp(f, "nb") == 0)
			e->not_before_ms = strtoll(v, NULL, 10);
		else if (strcmp(f, "at") == 0)
			e->at_ms = strtoll(v, NULL, 10);
	}
	freeReplyObject(r);
	return have == 7;
}

/* Delete every idx:* hash (SCAN, DEL); 0 or -1. */
static int
drop_all(struct coord *c)
{
	char cursor[32] = "0", pattern[80];
	const char *scan[6] = { "SCAN", cursor, "MATCH", pattern, "COUNT",
	    "1000" };

	snprintf(pattern, sizeof(pattern), "%sidx:*", c->prefix);
	do {
		redisReply *r = cmd(c, -1, 6, scan);
		int sent = 1;

		if (r == NULL)
			return -1;
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			freeReplyObject(r);
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		/* with the reply's length: the key as Redis holds it,
		 * never a shorter one cut at a NUL */
		for (size_t i = 0; sent && i < r->element[1]->elements; i++) {
			const char *del[2] = { "DEL",
			    r->element[1]->element[i]->str };
			size_t len[2] = { 3, r->element[1]->element[i]->len };

			sent = append(c, 2, del, len) == 0;
		}
		if (replies(c) != 0 || !sent) {
			freeReplyObject(r);
			return -1;
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	return 0;
}

/*
 * Index every task file of dfd (directory d, node for queue/active)
 * that has no hash yet (a daemon's update since the drop wins).  Returns
 * the number written, -1 on a Redis error.
 */
static long
rebuild_dir(struct coord *c, const struct spool *sp,
    int dfd, enum spool_dir d, const char *node)
{
	static const char script[] =
	    "if redis.call('EXISTS',KEYS[1])==1 then return 0 end "
	    "redis.call('HSET',KEYS[1],'state',ARGV[1],'dir',ARGV[2],"
	    "'node',ARGV[3],'code',ARGV[4],'attempts',ARGV[5],'nb',ARGV[6],"
	    "'at',ARGV[7]) return 1";
	DIR *dp = spool_opendir(dfd);
	struct dirent *de;
	long n = 0, pending = 0;
	char at[32];

	if (dp == NULL)
		return 0;
	snprintf(at, sizeof(at), "%lld", (long long)tstime_now_ms());
	while ((de = readdir(dp)) != NULL) {
		size_t len = strlen(de->d_name), flen;
		char id[TASK_ID_MAX + 1], k[KEY_LEN], att[32], nb[32], *data;
		struct task t;
		struct task_error te;
		const char *state;

		if (de->d_name[0] == '.' || len <= 5 || len - 5 > TASK_ID_MAX ||
		    strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		memcpy(id, de->d_name, len - 5);
		id[len - 5] = '\0';
		if ((data = spool_read_file(dfd, de->d_name, TASK_FILE_MAX,
		    &flen)) == NULL)
			continue;
		task_init(&t);
		if (task_decode(data, flen, &t, &te) == 0) {
			const char *argv[] = { "EVAL", script, "1", k, NULL,
			    spool_dir_name(d), node != NULL ? node : "",
			    t.task_code, att, nb, at };

			state = limits_state_name(sp, d, id);
			argv[4] = state;
			key(c, k, sizeof(k), id);
			snprintf(att, sizeof(att), "%zu", t.nattempts);
			snprintf(nb, sizeof(nb), "%lld", d == SPOOL_DELAYED ?
			    (long long)t.not_before_ms : -1LL);
			if (append(c, 11, argv, NULL) != 0)
				n = -1;
			pending++;
			if (n >= 0)
				n++;
		}
		task_fini(&t);
		free(data);
		if (pending == 256 || n < 0) {
			if (replies(c) != 0)
				n = -1;
			pending = 0;
			if (n < 0)
				break;
		}
	}
	closedir(dp);
	if (pending > 0 && replies(c) != 0)
		n = -1;
	return n;
}

/* Every node directory of d (queue/, active/): rebuild_dir each. */
static long
rebuild_nodes(struct coord *c, const struct spool *sp,
    enum spool_dir d)
{
	DIR *dp = spool_opendir(sp->dir[d]);
	struct dirent *de;
	long n = 0;

	if (dp == NULL)
		return 0;
	while (n >= 0 && (de = readdir(dp)) != NULL) {
		int nd;
		long k;

		if (!spool_code_ok(de->d_name) ||
		    (nd = spool_node_dir(sp, d, de->d_name)) < 0)
			continue;
		k = rebuild_dir(c, sp, nd, d, de->d_name);
		close(nd);
		n = k < 0 ? -1 : n + k;
	}
	closedir(dp);
	return n;
}

long
index_tick(struct coord *c, const struct spool *sp, int leader,
    int64_t now_ms)
{
	redisReply *r;
	char k[80], kd[80], now[32];
	const char *stale[3] = { "SET", kd, "1" }, *del_built[2] = { "DEL",
	    k }, *exists[2] = { "EXISTS", k }, *del_stale[2] = { "DEL", kd },
	    *built[3] = { "SET", k, now };
	long n = 0, m;

	if (!cluster(c))
		return -1;
	snprintf(k, sizeof(k), "%sidx_built", c->prefix);
	snprintf(kd, sizeof(kd), "%sidx_stale", c->prefix);
	if (lost_update) {
		int sent = append(c, 3, stale, NULL) == 0 && append(c, 2,
		    del_built, NULL) == 0;

		if (replies(c) != 0 || !sent)
			return -1;
		lost_update = 0;
	}
	if (!leader)
		return 0;
	if ((r = cmd(c, -1, 2, exists)) == NULL)
		return -1;
	m = r->type == REDIS_REPLY_INTEGER ? (long)r->integer : -1;
	freeReplyObject(r);
	if (m != 0)
		return m < 0 ? -1 : 0;
	/* Hashes may be stale only after a lost update (after a FLUSHALL
	 * there are none). */
	if ((r = cmd(c, -1, 2, del_stale)) == NULL)
		return -1;
	m = r->type == REDIS_REPLY_INTEGER ? (long)r->integer : 0;
	freeReplyObject(r);
	if (m > 0 && drop_all(c) != 0)
		return -1;
	n = rebuild_dir(c, sp, sp->dir[SPOOL_INCOMING], SPOOL_INCOMING,
	    NULL);
	if (n >= 0 && (m = rebuild_dir(c, sp, sp->dir[SPOOL_DELAYED],
	    SPOOL_DELAYED, NULL)) >= 0)
		n += m;
	else
		n = -1;
	if (n >= 0 && (m = rebuild_nodes(c, sp, SPOOL_QUEUE)) >= 0)
		n += m;
	else
		n = -1;
	if (n >= 0 && (m = rebuild_nodes(c, sp, SPOOL_ACTIVE)) >= 0)
		n += m;
	else
		n = -1;
	if (n < 0)
		return -1;
	snprintf(now, sizeof(now), "%lld", (long long)now_ms);
	if ((r = cmd(c, -1, 3, built)) == NULL)
		return -1;
	freeReplyObject(r);
	return n;
}

int
index_client(const struct config *cfg, const struct spool *sp,
    const char *id, int forget, struct index_entry *e)
{
	char why[256];
	struct coord *c;
	int rc;

	if (cfg->redis[0] == '\0' && cfg->sentinel[0] == '\0')
		return -1;
	if ((c = coord_open(cfg, "", sp, why, sizeof(why))) == NULL)
		return -1;
	rc = forget ? index_forget(c, id) : index_get(c, id, e);
	coord_close(c);
	return rc;
}
