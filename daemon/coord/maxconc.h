/*
 * maxconc — maxConcurrent: a limit per task code on the hooks running at
 * once across every daemon of the spool (issue 4 item 10).
 *
 * Configured by the config key max_concurrent = "<code>=<N>[,...]"
 * (e.g. "probe=2,report=5"); a code not named has no limit besides the
 * daemons' slots.  A limit slot is a lease-backed counting semaphore tied
 * to the task's lease (coord.h): it is taken after the task's lease and
 * before the claim rename, renewed with the lease and freed when the
 * lease ends (coord_lease_close), so a dead holder cannot leak it:
 *
 *  - embedded (file) mode: N files state/limits/<code>.<i>, i < N; a
 *    slot is an flock(LOCK_EX|LOCK_NB) on one of them, which the kernel
 *    drops when its holder dies.
 *  - redis mode: the sorted set limit:<code> of holder tokens scored by
 *    their expiry (Redis server time, ms): the Lua acquire script removes
 *    expired members, then adds the token when fewer than N remain;
 *    renewal pushes the expiry by lease_ms when the token is still there;
 *    release removes it.  A holder that dies stops renewing and its
 *    member is removed lease_ms later at the latest (the "fair semaphore"
 *    pattern of Redis sorted sets, without the counter).
 *
 * A task that finds its code's limit full stays where it is (incoming/
 * or queue/<node>/) and is marked WAITING by the empty file
 * state/waiting/<requestId>; the marker is removed when the task is
 * claimed.  The CLI and the API report a task of incoming/ or queue/
 * with a marker as WAITING.
 */
#ifndef TASKSPOOL_MAXCONC_H
#define TASKSPOOL_MAXCONC_H

#include <stddef.h>

#include "coord/coord.h"
#include "core/limitspec.h"
#include "core/nameset.h"
#include "spool/spool.h"

/*
 * Take one of max slots of code for the lease held on fd (taken with
 * coord_lease_acquire).  The slot is renewed with the lease by
 * coord_tick and freed by coord_lease_close.  Returns COORD_OK (taken),
 * COORD_BUSY (all max slots held), COORD_ERR (I/O error or Redis
 * unreachable; why says so).
 */
enum coord_status coord_limit_acquire(struct coord *c, int fd,
    const char *code, long max, char *why, size_t whylen);

/*
 * Take one of max slots of the pair (code, key) for the lease held on
 * fd, besides (after) the code's own slot of coord_limit_acquire: the
 * limit max_concurrent_per_key (README.md, "Per-key concurrency").
 * keyhash is the key's digest (core/conckey.h, conckey_hash), so any
 * key makes names of one shape.  Idle keys cost nothing:
 *
 *  - embedded: slot i is the byte at offset h * CONCKEY_LIMIT_MAX + i of
 *    the file state/limits/keys/<code> (h: the first 12 hex digits of
 *    keyhash, 48 bits), held as an open file description write lock
 *    (fcntl(2) F_OFD_SETLK, Linux >= 3.15) on a descriptor of its own,
 *    which the lease's end unlocks and closes; the kernel drops it when
 *    every process holding that descriptor (the daemon, the hook's tree:
 *    coord_limit_fds) has closed it or died.  The file is created once per code and never removed, so an
 *    idle key has nothing on disk; keys sharing h share slots (never
 *    more than max at once).
 *  - redis: the sorted set limit:<code>:k:<keyhash>, as for a code;
 *    Redis deletes a sorted set whose last member is removed, and the
 *    key expires 2 x lease_ms after its last acquire or renewal.
 *
 * Renewed and freed with the lease like the code's slot.  Returns
 * COORD_OK (taken, or already held with this lease), COORD_BUSY (max
 * held), COORD_ERR (why).
 */
enum coord_status coord_limit_acquire_key(struct coord *c, int fd,
    const char *code, const char *keyhash, long max, char *why,
    size_t whylen);

/*
 * The descriptors that hold the slots taken with the lease on fd, for
 * the hook to inherit (spool/hook.h, keep_fds): embedded, the flocked
 * state/limits/<code>.<i> and the OFD-locked state/limits/keys/<code>
 * (flock(2) and F_OFD_SETLK locks belong to the open file description,
 * so they last while any process keeps one open); Redis mode, none (its
 * slots expire with the lease).  So when a daemon is killed with -9, what
 * is left of its hook (a grandchild that outlives PR_SET_PDEATHSIG)
 * still holds the slots until it is gone — killed by the recovery, or
 * ended — and no other attempt of the code or key starts beside it.
 * The daemon's own release unlocks them explicitly (flock LOCK_UN,
 * F_OFD_SETLK F_UNLCK) before it closes them, so a leftover of a hook
 * that ended holds nothing.  Writes at most 2 descriptors (borrowed:
 * valid until the lease closes) into out; returns how many.
 */
int coord_limit_fds(struct coord *c, int fd, int out[2]);

/* Whether the lease on fd holds a max_concurrent or per-key slot (file or
 * Redis mode): 1 or 0. */
int coord_limit_held(const struct coord *c, int fd);

/*
 * Remove the slot files of keys of daemons before 0.14
 * (state/limits/<code>@<keyhash>.<i>, which they unlinked when freed)
 * that no one holds: left by such holders killed with -9 (tidying).
 * Each is locked (LOCK_NB), verified to be the file of its name,
 * unlinked, closed; a held one is left alone.  Returns how many were
 * removed.
 */
size_t limits_sweep_keys(const struct spool *sp);

/*
 * Mark (on = 1) or unmark (on = 0) request id as WAITING: the file
 * state/waiting/<id> of sp (created with its directory when missing; no
 * fsync: a lost marker only changes what status shows).  Returns 0 or -1
 * with errno (ENOENT is not an error when unmarking).
 */
int limits_mark_waiting(const struct spool *sp, const char *id, int on);

/* 1 when request id has a WAITING marker in sp, else 0. */
int limits_is_waiting(const struct spool *sp, const char *id);

#define LIMITS_REASON_MAX	256	/* bytes of a marker's reason */

/*
 * Mark request id WAITING with a reason (NUL-terminated text, at most
 * LIMITS_REASON_MAX - 1 bytes kept) as the marker's content, published
 * whole (tmp/ + rename, no fsync: see above), so a reader sees the old
 * or the new reason, never a mix.  The dispatcher uses it for tasks no
 * live node can run (router.h).  Returns 0 or -1 with errno.
 */
int limits_mark_waiting_why(const struct spool *sp, const char *id,
    const char *reason);

/*
 * The reason of request id's WAITING marker into reason (len bytes; ""
 * for a marker without one, such as maxConcurrent's, or one that cannot
 * be read).  Returns 1 (a marker) or 0 (none).
 */
int limits_waiting_reason(const struct spool *sp, const char *id,
    char *reason, size_t len);

/*
 * The state name to show for a task of id found in directory d: WAITING
 * for incoming/ or queue/ with a marker, else spool_state_name(d)
 * (NULL for directories that hold no task).  Static string.
 */
const char *limits_state_name(const struct spool *sp, enum spool_dir d,
    const char *id);

/*
 * A daemon's waiting candidates: names of incoming/ (or, with flag
 * LIMITS_FROM_QUEUE, of queue/<self>/) whose code's limit was full,
 * kept in waiting as "<group>/<file name>" (nameset.h; flags as given),
 * the group a task code, or "<taskCode>@<keyhash>" for a key's limit,
 * with what their claim order needs (README.md, "Priorities"): key, the
 * file's mtime in ms; prio, its priority 0..9; flow, its flow's index
 * in the fair share of the set it goes back to (core/fairshare.h); the
 * file name alone also in names (may be NULL; its node's key the mtime),
 * so that a rescan can tell a waiting file from a new or replaced one.  Returns 0, or -1 (ENOMEM: the name is
 * dropped; the periodic rescan finds it again).
 *
 * limits_requeue() moves back into cand (or qcand) the first of each
 * group in claim order at now_ms — the higher effective priority, aging
 * one level per aging_ms from the mtime (core/priority.h; <= 0: none),
 * then the older mtime, then the file name — at most that code's limit
 * in spec (a key's: in key_spec, max_concurrent_per_key, or 1 when only
 * tasks set it), each with its key, priority and flow (placed by key
 * over at most walk nodes of cand, 0 of qcand: nameset_add_ordered), and
 * out of names; the others stay in waiting as they were, untouched (a
 * try costs O(n log n) compares and no allocation for them).  Returns
 * the number moved.  On ENOMEM nothing moves (the next try).
 */
#define LIMITS_FROM_QUEUE	0x100
int limits_wait(struct nameset *waiting, struct nameset *names,
    const char *code, const char *name, int flags, int64_t key, int prio,
    int flow);
size_t limits_requeue(struct nameset *waiting, struct nameset *names,
    const char *spec,
    const char *key_spec, struct nameset *cand, struct nameset *qcand,
    size_t walk, int64_t now_ms, int64_t aging_ms);

#endif
