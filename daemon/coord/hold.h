/*
 * hold — holding and releasing tasks (issue 14 item 3; Postfix's hold
 * queue, postsuper(1) -h and -H): a held task sits in hold/ (state
 * HELD), is never claimed and keeps its file as it was (createdAt,
 * notBefore, attempts, mtime), so a release puts it back in its place.
 *
 * Two records, both in group-writable directories so that any submitter
 * (the CLI, the CGI) may act:
 *   hold/<id>.json      the task file itself, moved there by rename
 *   state/hold/<id>     the hold marker (core/holdmark.h): written
 *                       before the move, removed before a release moves
 *                       the file out; while it is there a claiming node
 *                       moves the task into hold/ instead of running it
 *                       and a node concluding an attempt to be retried
 *                       publishes the retry into hold/ (node_claim.c,
 *                       node_conclude.c); a task that ends terminal has
 *                       its marker removed
 * The file in hold/ decides whether a task is held; the marker without
 * it is a request still to be carried out (the task runs, or sits in
 * queue/<node>/ where only that node may move it).  A crash between the
 * two steps leaves a state each reader handles (spool-layout/README.md,
 * "Crash states").
 *
 * The move out of incoming/, delayed/ or queue/<node>/ takes the claim
 * lock (coord_flock_verify) first, so a claim in progress is never cut
 * in two: the claimant that loses the rename sees ENOENT, as in a lost
 * claim race.  Mechanism: no logging.  Errors: HOLD_ERR with errno and
 * why.  Single-threaded (the CLI, one CGI request).
 */
#ifndef TASKSPOOL_HOLD_H
#define TASKSPOOL_HOLD_H

#include <stddef.h>
#include <stdint.h>

#include "core/holdmark.h"
#include "spool/spool.h"

enum hold_status {
	HOLD_MOVED,	/* hold: now in hold/; release: moved out (*to) */
	HOLD_MARKED,	/* hold: running or in another node's queue, the
			 * marker written (its node acts); release: such a
			 * request withdrawn */
	HOLD_ALREADY,	/* hold: already in hold/ */
	HOLD_NOT_HELD,	/* release: neither in hold/ nor marked */
	HOLD_FINISHED,	/* the task is terminal: nothing to hold */
	HOLD_UNKNOWN,	/* no such task */
	HOLD_ERR	/* errno, why */
};

/*
 * Hold task id (a valid requestId) of spool s: write its marker (by:
 * who asks, printable text, may be ""; now_ms: Unix ms, the marker's
 * since), then move a pending task (incoming/, delayed/, queue/<node>/
 * when the caller may write there) into hold/ and fsync both
 * directories.  *where (may be NULL) gets the directory the task was
 * found in.  Returns a hold_status: HOLD_MOVED, HOLD_MARKED (running:
 * its next retry is held; or in a queue/<node>/ the caller may not
 * write: that node moves it when it claims), HOLD_ALREADY, HOLD_FINISHED
 * or HOLD_UNKNOWN (no marker left behind), HOLD_ERR.
 */
enum hold_status hold_task(const struct spool *s, const char *id,
    const char *by, int64_t now_ms, enum spool_dir *where, char *why,
    size_t whylen);

/*
 * Release task id: remove its marker (fsync state/hold), then move
 * hold/<id>.json to delayed/ when its notBefore (or delay/at trigger) is
 * still after now_ms, with its mtime set to that due time, else to
 * incoming/; fsync both directories.  *to (may be NULL) gets the
 * directory it went to.  Returns HOLD_MOVED, HOLD_MARKED (not in hold/
 * but a hold request was withdrawn), HOLD_NOT_HELD, HOLD_FINISHED,
 * HOLD_UNKNOWN, HOLD_ERR (errno, why; EWOULDBLOCK: a node is cancelling
 * it now).
 */
enum hold_status hold_release(const struct spool *s, const char *id,
    int64_t now_ms, enum spool_dir *to, char *why, size_t whylen);

/*
 * Whether task id has a hold marker (state/hold/<id> exists).  Returns 1
 * or 0 (also when state/hold is missing).
 */
int hold_marked(const struct spool *s, const char *id);

/*
 * Read the marker of id into *m.  Returns 0, or -1 with errno (ENOENT:
 * none; EINVAL: damaged, reason in why).
 */
int hold_mark_read(const struct spool *s, const char *id,
    struct holdmark *m, char *why, size_t whylen);

/*
 * Remove the marker of id (a task that ended, or was released) and fsync
 * state/hold.  Returns 0 (also when there was none) or -1 with errno.
 */
int hold_mark_clear(const struct spool *s, const char *id);

/*
 * Call fn(id, arg) for every pending task of task code code (incoming/,
 * delayed/, queue/<each>/) present now, as Postfix's postsuper acts on
 * the messages that exist when it runs; a file that does not decode is
 * skipped.  Returns the number of calls, or -1 with errno when incoming/
 * cannot be read.
 */
long hold_each_pending(const struct spool *s, const char *code,
    void (*fn)(const char *id, void *arg), void *arg);

/*
 * Call fn(id, arg) for every task in hold/ whose task code is code (NULL:
 * all).  Returns the number of calls, or -1 with errno.
 */
long hold_each_held(const struct spool *s, const char *code,
    void (*fn)(const char *id, void *arg), void *arg);

#endif
