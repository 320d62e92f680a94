/*
 * jobstore — the recurring job definitions of a spool, jobs/<jobCode>.json,
 * as the CLI (`taskspool jobs`) and the HTTP API (/api/jobs) both change
 * them: read, validate, publish, enable or disable, remove, and run now.
 * One codec (core/job.h), one writer protocol (spool_publish), one place
 * that decides, so the two front ends cannot drift apart.
 *
 * Changes of one spool's definitions are serialised: every write here
 * holds flock(2) on a fresh open of jobs/ (its own open file description;
 * the kernel drops it when the holder dies).  So a read, modify, replace
 * (enable, disable, a replace that keeps createdAt) never loses a
 * concurrent change, and a guard (below) decides on the definition that
 * is really replaced.  The leader only reads jobs/; a publish is an atomic
 * rename, so it never sees half a file.
 *
 * A guard is the caller's policy, called under the lock with the
 * definition in place: old is the decoded job (NULL when there is none,
 * or when the file does not decode: then *old_bad is 1); arg is the
 * caller's.  It returns 0 to go on, or an errno value (EPERM, say) that
 * the operation then fails with, changing nothing.
 *
 * Mechanism only: no logging.  Errors are -1 with errno; why (whylen
 * bytes, may be NULL) gets a reason where one helps.
 */
#ifndef TASKSPOOL_JOBSTORE_H
#define TASKSPOOL_JOBSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/job.h"
#include "core/task.h"
#include "spool/spool.h"

/* Reason texts: a job file's name and a struct task_error fit. */
#define JOBSTORE_WHY_MAX	1024
#define JOBSTORE_LIST_MAX	100000	/* most job files read by a list */

typedef int (*jobstore_guard)(const struct job *old, int old_bad,
    void *arg);

/*
 * Read and decode jobs/<code>.json of sp (code borrowed, spool_code_ok)
 * into j (initialised; left empty on failure).  Returns 0, or -1 with
 * errno ENOENT (no such job), EBADMSG (the file does not decode, is
 * another job's, or is one the spool refuses to read: a symbolic link, a
 * FIFO, hard links, too large; why names the file, the field and the
 * rule) or the errno of the read (why too).
 */
int jobstore_load(const struct spool *sp, const char *code, struct job *j,
    char *why, size_t whylen);

/*
 * What job_decode() cannot check (core/job.h): that the zone of j
 * (borrowed) loads; that the tasks it fires fit in a task file with the
 * members a fire adds (else field "executeParams"); and, when hooks_dir
 * (borrowed) is not NULL, that hooks_dir/<taskCode> is an executable
 * regular file.  Returns 0, or -1 with *field (a static member name:
 * "timezone", "calendar", "executeParams", "taskCode") and the rule in
 * why; errno EINVAL.
 */
int jobstore_check(const struct job *j, const char *hooks_dir,
    const char **field, char *why, size_t whylen);

/*
 * The job codes in jobs/ (files "<code>.json" whose code is valid),
 * sorted by strcmp: a new array of new strings in *names (free each and
 * the array), at most JOBSTORE_LIST_MAX; *more (may be NULL) is 1 when
 * files were left out.  Returns the count, or -1 with errno.
 */
ssize_t jobstore_names(const struct spool *sp, char ***names, int *more);

/* Free the n names of jobstore_names(). */
void jobstore_names_free(char **names, size_t n);

#define JOBSTORE_EXCL	1	/* jobstore_put: only when none exists */

/*
 * Publish j (its createdAt stamped here when absent: the existing
 * definition's on a replace, so an edit keeps its fixed-rate anchor,
 * else now_ms) as jobs/<jobCode>.json of sp, under the lock, after
 * guard (may be NULL) allowed it.  flags JOBSTORE_EXCL: fail with EEXIST
 * when a file of that name exists (whoever's: the guard is not asked).
 * *replaced (may be NULL) is 1 when a definition was replaced.  Returns 0, or -1 with errno EEXIST, EFBIG
 * (encoded, larger than JOB_FILE_MAX), the guard's value, or the errno of
 * the write.
 */
int jobstore_put(const struct spool *sp, struct job *j, int flags,
    int64_t now_ms, jobstore_guard guard, void *arg, int *replaced);

/*
 * Set "enabled" of job code (borrowed, valid) to on, under the lock,
 * after guard (may be NULL) allowed it; the file is rewritten only when
 * the value changes.  j (initialised) gets the definition as it now is.
 * Returns 0, or -1 with errno ENOENT, EBADMSG (why), the guard's value,
 * or the errno of the write.
 */
int jobstore_set_enabled(const struct spool *sp, const char *code, int on,
    jobstore_guard guard, void *arg, struct job *j, char *why,
    size_t whylen);

/*
 * Remove jobs/<code>.json (code borrowed, valid) under the lock, after
 * guard (may be NULL) allowed it, and fsync jobs/.  The leader then
 * drops the job and its state/jobs/ file; its tasks stay.
 * Returns 0, or -1 with errno ENOENT, the guard's value, or the errno of
 * the unlink or the fsync.
 */
int jobstore_remove(const struct spool *sp, const char *code,
    jobstore_guard guard, void *arg);

/*
 * The task of a manual run of j (borrowed) at now_ms (Unix ms) into t
 * (initialised): job_make_task() with createdAt = triggerTime = now, as
 * a fire at now.  The caller gives it a traceparent (and an appId) before
 * jobstore_run().  Returns 0, or -1 with errno ENOMEM.
 */
int jobstore_run_task(const struct job *j, int64_t now_ms, struct task *t);

/*
 * Publish t (borrowed, from jobstore_run_task) into incoming/ of sp as a
 * run of j (borrowed), honouring j's overlap policy whoever leads: forbid
 * and replace go through the job's run marker (coord/jobrun.h) as the
 * leader's fires do; a replace cancels the run the marker named when it
 * is live (a failure to cancel is told in warn, warnlen bytes, may be
 * NULL; "" otherwise).  The file is published exclusively, and a task of
 * that requestId anywhere in the spool is refused first.  node
 * (borrowed) names the writer in the marker.  Returns 0, or -1 with errno
 * EEXIST (the task exists), EBUSY (forbid: the run whose requestId is in
 * prev, prevlen bytes, is pending or running), EAGAIN (the marker is
 * being changed by the leader, or the leader fired the job meanwhile:
 * try again), EFBIG (t encodes larger than TASK_FILE_MAX), or the errno
 * of the write.
 */
int jobstore_run(const struct spool *sp, const struct job *j,
    const struct task *t, const char *node, char *prev, size_t prevlen,
    char *warn, size_t warnlen);

/*
 * The requestId of the last task the leader fired for job code
 * (borrowed, valid), from state/jobs/<code>.json, into id (idlen bytes;
 * "" when none is recorded or the state does not hold a valid requestId).
 * Returns 0 (also when absent), or -1 with errno on a read error.  A
 * snapshot, for status views.
 */
int jobstore_last_task(const struct spool *sp, const char *code, char *id,
    size_t idlen);

#endif /* TASKSPOOL_JOBSTORE_H */
