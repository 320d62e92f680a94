/*
 * retry.h — a FAILED or CANCELLED task sent back to incoming/ with its
 * history (`taskspool retry`, POST /api/tasks/{id}/retry).
 */
#ifndef TASKSPOOL_RETRY_H
#define TASKSPOOL_RETRY_H

#include <stddef.h>

#include "spool/config.h"
#include "spool/spool.h"

/*
 * task_retry() sends task id (borrowed, spool_id_ok) of spool sp back to
 * incoming/ when it is in failed/ or cancelled/ (README.md, "Retries and
 * backoff"):
 * the task file is rewritten in place with the attempts of its result
 * carried over, no notBefore or delay, and one more attempt allowed
 * beyond those used (maxRetries raised when needed, cfg->max_retries
 * being the default); its result and any leftover hold marker are
 * removed; then the same file moves into incoming/ (never two copies:
 * a daemon cannot see it live while its terminal copy exists; both
 * directories fsync'ed), the cluster index learns it and the daemons
 * get a wake-up.  Retries of one spool are serialised (flock(2) on
 * failed/): of concurrent retries of one task exactly one succeeds, the
 * others find it live (EBUSY).
 *
 * On success returns 0, *attempt (may be NULL) the number of the attempt
 * to come, and warn (warnlen bytes, may be NULL) "" or a warning (a
 * damaged result whose final attempt could not be carried over).
 * A run of a recurring job whose overlap is forbid or replace takes the
 * job's run marker first (coord/jobrun.h), as a fire does, so it never
 * runs beside another run of the job.
 * Returns -1 with errno ENOENT (no such task), EBUSY (it is not FAILED or
 * CANCELLED; *where, may be NULL, says where it is), EALREADY (another
 * run of its forbid or replace job is pending or running: its requestId
 * in warn), EBADMSG (its task file does not decode), or the error of the
 * write or the move.
 */
int task_retry(const struct config *cfg, const struct spool *sp,
    const char *id, size_t *attempt, enum spool_dir *where, char *warn,
    size_t warnlen);

#endif /* TASKSPOOL_RETRY_H */
