/*
 * execrate — execution rate limits (issue 15 item 3): the state of the
 * GCRA (core/gcra.h) of each limited task code, or (task code, key),
 * shared by every daemon of the spool, and the decision "may one more
 * start now".  Mechanism only: the caller (node/node_claim.c) decides
 * which limit applies, what a wait means, and logs.
 *
 * The state is one TAT (theoretical arrival time, Unix ms) per limit:
 *
 *  - embedded (file) mode: state/rates/<code>, or for a key
 *    state/rates/<code>@<hex of the first 16 bytes of SHA-256(key)>,
 *    holding "<TAT ms>\n" (zero-padded to 20 digits so that a rewrite in
 *    place never leaves a longer text behind), read and rewritten under
 *    flock(LOCK_EX) on the file after checking that the name still
 *    refers to the locked inode (a sweep may have unlinked it): one
 *    decision at a time per limit across the daemons of a host, and of
 *    an NFS spool whose locks work, so the limit is exact.  The clock is
 *    each daemon's wall clock (their differences shift when a start is
 *    allowed, they cannot add starts beyond one bucket when a clock
 *    steps back: gcra.h).  No fsync: a daemon killed loses nothing (the
 *    page cache keeps the write); a host crash or power loss can forget
 *    the writes of its last seconds, so after such a crash up to one
 *    burst more than the limit may start.
 *  - cluster (redis) mode: the string key <prefix>execrate:<code>[:<hex>]
 *    holding the TAT, read, decided and written by one Lua script (EVAL)
 *    on the Redis server's clock (redis.call('TIME')), so the nodes'
 *    clocks do not matter and two nodes cannot both take the last token.
 *    The key gets PEXPIRE until its TAT: an idle limit has no key.
 *    (Not "rate:", which is the HTTP API's per-AppId counter: an app
 *    and a task code of one name would share a key.)
 *
 * Idle limits cost nothing: a TAT at or before now carries no
 * information (gcra.h), so Redis drops the key by its expiry, and in
 * file mode execrate_sweep removes the files whose TAT has passed.  A
 * state file holding anything but the TAT (garbage, a huge or negative
 * number, too long) is taken as no state and rewritten at the next
 * start; the caller is told (*bad) to log it.
 *
 * A token taken is not given back: when the claim fails after it, the
 * limit loses one start (fewer runs, never more).
 */
#ifndef TASKSPOOL_EXECRATE_H
#define TASKSPOOL_EXECRATE_H

#include <stddef.h>
#include <stdint.h>

#include "coord/coord.h"
#include "core/gcra.h"

enum execrate_status {
	EXECRATE_OK,		/* one start allowed and counted */
	EXECRATE_WAIT,		/* not now: *wait_ms says how long */
	EXECRATE_ERR		/* the store failed: why */
};

/* Bytes of a state file's name: <code>@<32 hex digits>. */
#define EXECRATE_NAME_MAX	(64 + 1 + 32 + 1)
/* Bytes of a state file read back (more is garbage). */
#define EXECRATE_STATE_MAX	32

/*
 * The name of the state of code's limit, for key (NULL or "" = the
 * code's own limit) into out (EXECRATE_NAME_MAX bytes): code, or
 * code@<hex of the first 16 bytes of SHA-256 of key>.
 */
void execrate_name(const char *code, const char *key, char *out);

/*
 * Ask for one start of code (a valid task code; borrowed) under the
 * limit p (borrowed), for key (NULL or "" = per code; borrowed, any
 * bytes up to its NUL).  c (borrowed) chooses the backend: a redis coord
 * asks Redis (server time), a file coord the file state/rates/<name> of
 * c's spool at now_ms (Unix ms, the caller's wall clock; a parameter so
 * tests can drive the clock; unused with Redis).  *wait_ms is 0, or on
 * EXECRATE_WAIT the ms (>= 1) until a start would be allowed.  *bad is
 * set to 1 when a file state did not parse and was taken as no state
 * (else left alone; may be NULL).  EXECRATE_ERR: why says what failed
 * (open, lock, read, write, Redis), errno as the call left it.
 */
enum execrate_status execrate_take(struct coord *c, const char *code,
    const char *key, const struct gcra_params *p, int64_t now_ms,
    int64_t *wait_ms, int *bad, char *why, size_t whylen);

/*
 * File mode: remove the state files of c's state/rates/ whose TAT is at
 * or before now_ms (Unix ms), and those that do not parse, each only
 * while holding its lock (LOCK_NB: a file being used is skipped) and
 * after checking that its name still refers to the locked inode.
 * Returns the number removed; 0 with a redis coord (keys expire) or
 * without the directory.  Errors are skipped (the next sweep tries
 * again).
 */
size_t execrate_sweep(struct coord *c, int64_t now_ms);

#endif
