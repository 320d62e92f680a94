/*
 * coord — coordination between the daemons of one spool: task leases,
 * the leader lock, heartbeats (the node registry).  Two implementations
 * behind one ops table (DESIGN §1, §3, §5):
 *
 *  - file (embedded mode, the default): a lease is a flock(2) on the
 *    claimed task file, the leader lock a flock on state/leader.lock,
 *    heartbeats are files state/heartbeat.<node>.  A lease ends when its
 *    holder closes the file (or dies): there is no expiry and nothing to
 *    renew.
 *  - redis (cluster mode, `redis = host:port` set): the flock is still
 *    taken (it orders the daemons of one host), and a lease is also the
 *    Redis key lease:<requestId> = "<node>:<epoch>:<attempt>", set with
 *    SET NX PX lease_ms, renewed every lease_renew_ms and released by
 *    token-checked Lua scripts, so no node ever extends or deletes a lease
 *    it does not hold.  Each lease carries a fencing token from INCR.  The
 *    leader lock is the key leader = "<node>:<epoch>" (epoch from INCR of
 *    leader_epoch), heartbeats are hashes node:<id> with an expiry.  See
 *    the Redis documentation "Distributed Locks with Redis" (single
 *    instance form) for the SET NX PX + compare-and-delete pattern.
 *
 * Leases are kept in a table indexed by the task file's descriptor: the
 * daemon passes the descriptor around as before, and coord_lease_close()
 * ends the lease and closes the descriptor.
 *
 * The rename of the task file stays the claim and the fence: Redis only
 * says whether an active/ file still has a live owner.  When Redis is
 * unreachable, calls return COORD_ERR and the caller waits (no claim, no
 * reaping); coord_tick() reports the leases that could not be renewed in
 * time, whose holders must self-fence (kill the hook, not report).  A
 * lease key that Redis lost (not taken by another node) is set again by
 * its holder's renewal with a greater fencing token, while the holder's
 * claim on the file stands.  The self-fence deadline and the takeover
 * time of an orphan are derived in coord.c ("the two lease deadlines").
 *
 * Library module: does not log (errors go to the caller's why buffer);
 * single-threaded; never exits.
 */
#ifndef TASKSPOOL_COORD_H
#define TASKSPOOL_COORD_H

#include <stddef.h>
#include <stdint.h>

#include "core/tags.h"
#include "spool/config.h"
#include "spool/hookset.h"
#include "spool/spool.h"

#define COORD_TOKEN_MAX	160	/* "<node>:<epoch>:<attempt>" + NUL */

enum coord_status {
	COORD_ERR = -1,		/* backend unreachable or I/O error */
	COORD_OK = 0,		/* done / acquired / still held */
	COORD_BUSY = 1,		/* someone else holds it */
	COORD_LOST = 2		/* we held it and no longer do */
};

/* One node of the registry (heartbeat), as written and as listed. */
struct coord_node {
	char id[CONFIG_NODE_MAX + 1];
	long pid;
	long slots, running;
	unsigned long long claimed, finished;
	int leader;
	int64_t started_ms;	/* wall clock, Unix ms */
	int64_t at_ms;		/* wall clock of this heartbeat, Unix ms; from
				 * coord_nodes in redis mode: the reader's
				 * clock minus the age Redis measured */
	double load1;		/* 1-minute load average of its host */
	/* Whether it claims: 0 yes; 1 drained by an operator (its marker
	 * state/drain/<id>.json, `taskspool nodes drain`: it finishes
	 * what runs and stays up); 2 stopping (SIGTERM: it drains, then
	 * exits).  0 in the heartbeat of an older version. */
	int draining;
	/* The task codes it has hooks for (hookset.h: sorted, ','-joined,
	 * "*" last when truncated); hooks_known = 0 when the heartbeat
	 * carries no list (a node of an older version: taken as able to
	 * run every code). */
	int hooks_known;
	char hooks[HOOKSET_MAX];
	/* Its tags (core/tags.h: sorted, ','-joined; README "Node tags"):
	 * "" when it has none, when its heartbeat carries no list (an
	 * older version) and when the list there is not well-formed. */
	char tags[TAGS_TEXT_MAX];
};

struct coord;

/* A coord is opened, and reconfigured, by coord_open.h. */

/* Release every lease still held (closing its descriptor), resign the
 * leadership, remove this node's heartbeat and free c.  NULL is allowed. */
void coord_close(struct coord *c);

/* "file" or "redis" (static string). */
const char *coord_kind(const struct coord *c);

/*
 * Whether this node's leadership, as of its last successful
 * coord_leader(), is safe to act on at now_mono (CLOCK_MONOTONIC ms):
 * always with flock (the lock lives as long as the process); with an
 * expiring lock (Redis, TTL heartbeat_ms), while at least half the TTL
 * remains.  A leader that was stopped (SIGSTOP, a long stall) past that
 * must renew (coord_leader) before it fires or promotes anything: another
 * node may have taken the lock meanwhile (the Redis distributed-lock
 * rule that a holder checks its lock's validity time before acting).
 * Returns 1 or 0; no I/O.
 */
int coord_leader_fresh(const struct coord *c, int64_t now_mono);

/* 1 when leases expire (redis): holders must renew and may lose them. */
int coord_leases_expire(const struct coord *c);

/*
 * Take the local lock of dirfd/name on fd (flock LOCK_EX|LOCK_NB) and
 * check that fd is still the file at that name.  Returns 0, or -1 with
 * errno EWOULDBLOCK (another holder), ESTALE (the name now holds another
 * file) or the fstat errno.  The lock ends when fd is closed.
 */
int coord_flock_verify(int fd, int dirfd, const char *name);

/*
 * Lease request id (borrowed) for attempt on the task file open on fd,
 * whose local lock the caller already holds (coord_flock_verify).  file:
 * records fd, nothing else.  redis: SET lease:<id> NX PX lease_ms and a
 * new fencing token.  Returns COORD_OK (fd is now in the lease table;
 * end it with coord_lease_close), COORD_BUSY (another node's lease),
 * COORD_ERR (Redis unreachable; why says so).  now_mono: CLOCK_MONOTONIC
 * ms.
 */
enum coord_status coord_lease_acquire(struct coord *c, int fd,
    const char *id, int attempt, int64_t now_mono, char *why,
    size_t whylen);

/*
 * Whether the file open on fd (dirfd/name, request id) in another
 * node's — or a previous life's — active/ directory is an orphan, and if
 * so take it: the local lock and (redis) the lease, so that only one
 * reaper resolves it.  redis: a lease not renewed for the takeover time
 * (by Redis's clock) is replaced; an absent key is taken at once in
 * dirfd == this node's own active/ directory, elsewhere only once this
 * coord has seen it absent for the takeover time.  Returns COORD_OK
 * (orphan, now leased by us as with coord_lease_acquire), COORD_BUSY
 * (its owner may be alive: flock held, lease renewed lately, or absent
 * for too short a time), COORD_ERR (cannot tell now).
 */
enum coord_status coord_orphan_take(struct coord *c, int fd, int dirfd,
    const char *name, const char *id, int64_t now_mono, char *why,
    size_t whylen);

/*
 * Fencing token of the lease on fd: a number that grows with every lease
 * granted by the cluster (redis INCR), 0 in file mode or when fd holds
 * no lease.
 */
long long coord_lease_fence(const struct coord *c, int fd);

/*
 * Whether the lease on fd is certainly still ours at now_mono: file
 * mode, always; redis, when now_mono is before the last successful
 * renewal's send time + the self-fence time D (coord.c).  Returns
 * COORD_OK or COORD_LOST.  No network round trip.
 */
enum coord_status coord_lease_valid(const struct coord *c, int fd,
    int64_t now_mono);

/*
 * End the lease on fd (redis: token-checked delete; a failure is
 * ignored, the key then expires by itself) and close fd.  fd < 0 is
 * allowed; an fd without a lease is just closed.
 */
void coord_lease_close(struct coord *c, int fd);

/*
 * Periodic work: renew the leases that are due (every lease_renew_ms;
 * a key found absent is set again, with a new fencing token, when fd is
 * still active/<self>/<id>.json), and call lost(arg, fd) once for each
 * lease that is gone (held by another owner, or its file moved away) or
 * was not renewed before its self-fence deadline (never renewed late:
 * past it, it is lost without asking Redis); such a fd
 * stays in the table (coord_lease_close it when done).  Returns the
 * CLOCK_MONOTONIC ms of the next renewal due, or INT64_MAX when none.
 */
int64_t coord_tick(struct coord *c, int64_t now_mono,
    void (*lost)(void *arg, int fd), void *arg);

/*
 * Have coord_tick call fn(arg, id, old, fence) each time a renewal
 * found the lease of request id (borrowed, valid during the call) gone
 * from Redis and set it again: old and fence are its previous and new
 * fencing tokens.  For the caller's log; fn NULL: no notice.
 */
void coord_on_reestablished(struct coord *c, void (*fn)(void *arg,
    const char *id, long long old, long long fence), void *arg);

/*
 * Try to become or stay the leader.  file: flock state/leader.lock
 * (held until coord_close).  redis: take the leader key with a new epoch
 * when free, else renew it when ours (token-checked); its expiry is
 * heartbeat_ms, so a dead leader is replaced within one heartbeat
 * period.  Returns 1 leader (*epoch = fencing epoch, growing with every
 * change of leader; 0 in file mode), 0 not leader (also after losing
 * it: the caller must stop acting at once), -1 backend unreachable
 * (treated as not leader).
 */
int coord_leader(struct coord *c, int64_t now_mono, unsigned long long *epoch);

/*
 * Publish this node's heartbeat (info borrowed): file state/heartbeat.
 * <node> (no fsync: liveness, not data); redis node:<id> expiring after
 * 3 x heartbeat_ms.  Both carry info->hooks (field "hooks") whether or
 * not hooks_known is set, and info->tags (field "tags").  Returns 0 or
 * -1 with why.
 */
int coord_heartbeat(struct coord *c, const struct coord_node *info,
    char *why, size_t whylen);

/*
 * The registry: every node with a heartbeat, in *out (new array, caller
 * frees) of *n entries, sorted by id.  Returns 0 or -1 with why.
 */
int coord_nodes(struct coord *c, struct coord_node **out, size_t *n,
    char *why, size_t whylen);

/*
 * Parse the "key=value" lines of a heartbeat file (state/heartbeat.<id>,
 * as coord_heartbeat writes it in either mode) into nd, which the caller
 * zeroes and whose id it sets; text is cut up in place (strtok_r).
 * Unknown keys are ignored (a newer node may write more), a number that
 * does not parse reads as 0, a hooks list longer than nd->hooks is cut
 * at a whole code and marked "*", a tags list that is not well-formed
 * (tags_list_ok) reads as no tags.  No errors: the liveness rule judges
 * what is left.
 */
void coord_heartbeat_parse(char *text, struct coord_node *nd);

/*
 * Whether node nd (from coord_nodes) can run task code: its heartbeat
 * lists the code's hook, ends with "*", or carries no list at all.
 * Returns 1 or 0.
 */
int coord_node_runs(const struct coord_node *nd, const char *code);

/*
 * Whether node nd (from coord_nodes) has every tag of the list need
 * (core/tags.h; NULL or "": none required).  A node whose heartbeat
 * carries no tags has none.  Returns 1 or 0.
 */
int coord_node_has_tags(const struct coord_node *nd, const char *need);

/*
 * Whether node nd (from coord_nodes) is alive at now_ms (epoch ms): its
 * heartbeat, written every heartbeat_ms, is younger than 3 of them (one
 * missed write is a slow node, three a dead or frozen one).  The one rule
 * of the router, `taskspool nodes` and `submit --wait`.  Returns 1 or 0.
 */
int coord_node_alive(const struct coord_node *nd, int64_t now_ms,
    long heartbeat_ms);

#endif
