/*
 * batchdir — the batch directories of the spool, state/batches/<batchId>/
 * (README.md, "Batches"; the file's format: core/batch.h):
 *
 *   state/batches/<batchId>/batch.json         the batch (writer protocol)
 *   state/batches/<batchId>/members/<requestId>  one empty entry a member
 *
 * A writer (taskspool submit, POST /api/tasks) joins a task to its batch
 * BEFORE it publishes the task: the member entry first, then batch.json
 * read; a closed batch makes it take the entry back and refuse.  So a
 * batch seen closed lists every member that will ever be published, and
 * the leader (node/node_batch.c) can tell when all are terminal.  Every
 * read-modify-write of batch.json (open, close, the leader's completed
 * mark) holds flock(2) on the batch's directory.  state/ is group-writable
 * (02770), so submitters of the spool's group can make batches.
 *
 * Mechanism only: no logging.  Errors are -1 with errno and, where a
 * caller shows one, a reason naming the file in why.
 */
#ifndef TASKSPOOL_BATCHDIR_H
#define TASKSPOOL_BATCHDIR_H

#include <stddef.h>
#include <stdint.h>

#include "core/batch.h"
#include "spool/spool.h"

/* A member whose task is nowhere is MISSING (terminal) once its entry is
 * older than this (ms); before, SUBMITTING (its writer is publishing). */
#define BATCHDIR_GRACE_MS	(60 * 1000)

enum batchdir_rc {
	BATCHDIR_OK,		/* done */
	BATCHDIR_CLOSED,	/* the batch is closed: nothing changed */
	BATCHDIR_FOREIGN,	/* another AppId's batch: nothing changed */
	BATCHDIR_ERR		/* errno and why say it */
};

/*
 * Make request id a member of batch bid (creating the batch, open, with
 * createdAt now_ms and owner app, when it is not there): the entry
 * members/<id>, then batch.json read back.  app is the AppId of an API
 * writer, or NULL for a user of the spool (the CLI), who may join any
 * batch.  Returns BATCHDIR_OK, BATCHDIR_CLOSED or BATCHDIR_FOREIGN (the
 * batch is not app's; the entry is taken back either way) or
 * BATCHDIR_ERR (errno; a damaged batch.json is EINVAL with the reason in
 * why).
 */
enum batchdir_rc batchdir_join(const struct spool *sp, const char *bid,
    const char *id, const char *app, int64_t now_ms, char *why,
    size_t whylen);

/* Take back the entry of id in batch bid (its task was not published
 * after all).  Errors are ignored (a stray entry reads MISSING) and
 * errno is kept. */
void batchdir_leave(const struct spool *sp, const char *bid, const char *id);

/*
 * Open batch b->id, or update the open batch of that id: its onComplete
 * and callbackUrl become b's when b's are not empty; createdAt is kept
 * (b->created_ms is used for a new one).  With close, closedAt becomes
 * b->closed_ms unless it is closed already.  On return *b holds the
 * batch as written.  b->app_id is the caller's AppId ("" for a user of
 * the spool, who may change any batch): a new batch is its own, another
 * app's is BATCHDIR_FOREIGN.  Returns BATCHDIR_OK, BATCHDIR_CLOSED (it
 * was closed and b would change onComplete or callbackUrl: nothing
 * written), BATCHDIR_FOREIGN or BATCHDIR_ERR.  With must_exist, a batch
 * that is not there is ENOENT.
 */
enum batchdir_rc batchdir_put(const struct spool *sp, struct batch *b,
    int close, int must_exist, char *why, size_t whylen);

/*
 * Read batch bid's batch.json into *b.  Returns 0, or -1 with errno
 * (ENOENT: no such batch; EINVAL: damaged, why says which member).
 */
int batchdir_read(const struct spool *sp, const char *bid, struct batch *b,
    char *why, size_t whylen);

/*
 * The state of every member of batch bid into *s (initialised here; the
 * caller frees it with batch_summary_fini): the spool state of its task
 * (spool_locate; corrupt/), or SUBMITTING / MISSING when it is nowhere
 * (BATCHDIR_GRACE_MS after the entry's mtime, now_ms epoch ms).
 * Returns 0 or -1 with errno.
 */
int batchdir_summary(const struct spool *sp, const char *bid, int64_t now_ms,
    struct batch_summary *s);

/*
 * Write the completed mark (completedAt done_ms, onCompleteRequestId
 * cid) into batch bid, under its lock.  Returns 1 when written, 0 when
 * it was completed already (nothing written), -1 with errno.
 */
int batchdir_complete(const struct spool *sp, const char *bid, int64_t done_ms,
    const char *cid);

/*
 * Call fn(id, arg) for each member of batch bid (its entries' names that
 * are requestIds), in readdir order.  Returns the number of calls, or -1
 * with errno (ENOENT: no such batch).
 */
long batchdir_each_member(const struct spool *sp, const char *bid,
    void (*fn)(const char *id, void *arg), void *arg);

/*
 * Call fn(bid, arg) for each batch directory (names that are batchIds),
 * in readdir order.  fn returning non-zero stops.  Returns 0 (also with
 * no state/batches/ at all) or -1 with errno.
 */
int batchdir_each(const struct spool *sp, int (*fn)(const char *, void *),
    void *arg);

#endif
