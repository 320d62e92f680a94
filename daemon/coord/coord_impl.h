/*
 * coord_impl — what coord.c shares with its two backends (coord_file.c,
 * coord_redis.c).  Not for other modules: they use coord.h.
 */
#ifndef TASKSPOOL_COORD_IMPL_H
#define TASKSPOOL_COORD_IMPL_H

#include "coord/coord.h"
#include "core/task.h"

/* One held lease, at index fd of the table. */
struct coord_lease {
	int used;
	int lost;			/* reported to the caller once */
	char id[TASK_ID_MAX + 1];
	char token[COORD_TOKEN_MAX];	/* redis value, "" in file mode */
	long long fence;		/* fencing token, 0 in file mode */
	int64_t renew_at;		/* mono ms: next renewal due */
	int64_t valid_until;		/* mono ms: self-fence at this time */
	int refenced;			/* the last renewal found the key gone
					 * and set it again, with a new fence */
	/* maxConcurrent slot (maxconc.c) held with this lease */
	int limit_fd;			/* file mode: flocked slot fd + 1 */
	char limit_key[96];		/* redis: limit:<code>, "" = none */
};

struct coord_ops {
	const char *kind;
	int expires;			/* leases expire (must be renewed) */
	int (*open)(struct coord *, char *, size_t);
	void (*close)(struct coord *);
	/* Take the lease l->id (l->token set by the caller). */
	enum coord_status (*acquire)(struct coord *, struct coord_lease *,
	    char *, size_t);
	/* Extend l when still ours: COORD_OK, COORD_LOST, COORD_ERR.  A key
	 * found absent (not another owner's) is set again with a new fence
	 * in l->fence, l->refenced set, COORD_OK. */
	enum coord_status (*renew)(struct coord *, struct coord_lease *);
	/* Take the lease l->id of an orphan (coord_orphan_take): own is 1
	 * for a file of this node's own active/ directory.  COORD_OK
	 * (l->fence set), COORD_BUSY (a live owner, or not long enough
	 * without one), COORD_ERR. */
	enum coord_status (*take)(struct coord *, struct coord_lease *, int,
	    int64_t, char *, size_t);
	void (*release)(struct coord *, struct coord_lease *);
	int (*leader)(struct coord *, int64_t, unsigned long long *);
	int (*heartbeat)(struct coord *, const struct coord_node *, char *,
	    size_t);
	int (*nodes)(struct coord *, struct coord_node **, size_t *, char *,
	    size_t);
};

#define COORD_NSCRIPTS	6	/* Lua scripts of coord_redis.c */

/* redis: a lease key seen absent by coord_orphan_take (mono ms). */
struct coord_absent {
	char id[TASK_ID_MAX + 1];
	int64_t first, last;
};

struct coord {
	const struct coord_ops *ops;
	char node[CONFIG_NODE_MAX + 1];
	const struct spool *sp;		/* borrowed */
	long long epoch;		/* this incarnation: start, Unix ms */
	long lease_ms, renew_ms, heartbeat_ms, reap_ms;
	long fence_ms;			/* self-fence this long after the send
					 * of the last renewal (coord.c) */
	long takeover_ms;		/* an orphan's lease is taken when not
					 * renewed for this long (coord.c) */
	struct coord_lease *leases;	/* indexed by descriptor */
	size_t nleases;
	/* file backend */
	int leaderfd;
	/* redis backend */
	void *redis;			/* redisContext *, NULL = none */
	int64_t retry_mono;		/* no reconnect before this */
	char addr[256], password[256], prefix[64];
	char sentinel[256], sentinel_master[64];
	long db;
	char sha[COORD_NSCRIPTS][41];	/* SHA1 of the loaded scripts */
	char leader_token[COORD_TOKEN_MAX];
	unsigned long long leader_epoch;
	int64_t leader_until;		/* mono ms: leadership safe until */
	int64_t policy_mono;		/* mono ms: maxmemory-policy read */
	char policy[32];		/* its value as last logged */
	char io_err[192];		/* why the connection was last dropped */
	struct coord_absent *absent;	/* lease keys seen absent */
	size_t nabsent;
	void (*reestablished)(void *, const char *, long long, long long);
	void *reestablished_arg;
};

extern const struct coord_ops coord_file_ops;
extern const struct coord_ops coord_redis_ops;

/* Set the member of nd named field (heartbeat field name) from text
 * value; unknown fields are ignored (a newer node may write more). */
void coord_node_field(struct coord_node *nd, const char *field,
    const char *value);

/*
 * For the Redis-backed modules beside coord_redis.c (maxconc.c,
 * wakeup.c, index.c): the connected redisContext * of c (connecting,
 * authenticating and selecting the db when needed), or NULL with why
 * when Redis is unreachable or c is not a redis coord.  Borrowed; after
 * an I/O error on it call coord_redis_drop(c).
 */
void *coord_redis_conn(struct coord *c, char *why, size_t whylen);
void coord_redis_drop(struct coord *c);

/*
 * One command on c's connection (connecting when needed), through the
 * single door of coord_redis.c that never hands hiredis a NULL context:
 * argc/argv as redisCommandArgv (argv borrowed, NUL-terminated strings).
 * Returns a new reply (caller frees with freeReplyObject) of type type
 * (a REDIS_REPLY_* value; -1: any type, error replies included), or NULL
 * with why: no connection, an I/O error or timeout (the connection is
 * then dropped: never use a context obtained before this call again), or
 * a reply of another type (freed; the connection is kept).
 */
void *coord_redis_command(struct coord *c, int type, int argc,
    const char **argv, char *why, size_t whylen);

/* A new connection (redisContext *, caller frees with redisFree) to c's
 * server, authenticated and with the db selected, for a subscriber; NULL
 * with why. */
void *coord_redis_connect_new(struct coord *c, char *why, size_t whylen);

/* maxconc.c: renew (COORD_OK, COORD_LOST, COORD_ERR) and free the
 * maxConcurrent slot held with lease l; no-ops when l holds none. */
enum coord_status coord_limit_renew(struct coord *c, struct coord_lease *l);
void coord_limit_release(struct coord *c, struct coord_lease *l);

/*
 * The text of a Redis string or status reply (a redisReply *, borrowed)
 * when it is one C string: its len bytes hold no NUL, so strlen() and
 * the reply's own length agree (issue 10: a binary-safe value must not
 * be read as a shorter string).  Returns reply->str (borrowed, valid
 * while the reply is), or NULL for any other reply.
 */
const char *coord_reply_text(const void *reply);

/* Sort helper shared by the backends: by id. */
void coord_nodes_sort(struct coord_node *v, size_t n);

#endif
