/*
 * coord_impl — what coord.c shares with its two backends (coord_file.c,
 * coord_redis.c), with the choice between them (coord_open.c) and with
 * the modules of coord/ that hold something with a lease (maxconc.c):
 * the state of a coord, its lease table and the backends' ops table.
 * Declares only functions of coord.c.  Not for other modules: they use
 * coord.h.
 */
#ifndef TASKSPOOL_COORD_IMPL_H
#define TASKSPOOL_COORD_IMPL_H

#include "coord/coord.h"
#include "core/task.h"

struct coord_lease;

/*
 * What another module of coord/ holds with a lease (maxconc.c: a limit
 * slot), registered in the lease's entry by that module: the lease
 * table renews it after each successful renewal of the lease (renew:
 * COORD_OK, COORD_LOST or COORD_ERR, as the lease's own) and releases it
 * first when the lease ends, so the table calls no module above it.
 */
struct coord_rider {
	enum coord_status (*renew)(struct coord *, struct coord_lease *);
	void (*release)(struct coord *, struct coord_lease *);
};

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
	const struct coord_rider *rider;	/* NULL = nothing held */
	/* maxConcurrent slot (maxconc.c) held with this lease */
	int limit_fd;			/* file mode: flocked slot fd + 1 */
	char limit_key[96];		/* redis: limit:<code>, "" = none */
	/* max_concurrent_per_key slot (maxconc.c) held with this lease */
	int key_fd;			/* file mode: fd + 1 of the OFD lock */
	char key_limit[160];		/* redis: limit:<code>:k:<hash> */
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
	int pipelined;			/* commands appended to it whose
					 * replies are not read yet */
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

/*
 * A new coord over the backend ops (static, borrowed) with the settings
 * of cfg (borrowed during the call) for node (copied; "" for a client)
 * on the open spool sp (borrowed; must outlive the coord): the lease
 * deadlines derived (coord.c, "the two lease deadlines"), then the
 * backend's open.  For coord_open.c, which chooses ops.  Returns the
 * coord (free with coord_close), or NULL with why (no memory, the
 * backend's refusal).
 */
struct coord *coord_new(const struct coord_ops *ops,
    const struct config *cfg, const char *node, const struct spool *sp,
    char *why, size_t whylen);

/* Copy the Redis server settings of cfg (borrowed) into c: redis,
 * redis_password, sentinel, sentinel_master, redis_db (not the prefix,
 * which never changes while c lives). */
void coord_server_settings(struct coord *c, const struct config *cfg);

/* Set the member of nd named field (heartbeat field name) from text
 * value; unknown fields are ignored (a newer node may write more). */
void coord_node_field(struct coord_node *nd, const char *field,
    const char *value);

/* The lease table entry of fd (borrowed), or NULL when fd holds no
 * lease. */
struct coord_lease *coord_lease_of(const struct coord *c, int fd);

/* Sort helper shared by the backends: by id. */
void coord_nodes_sort(struct coord_node *v, size_t n);

#endif
