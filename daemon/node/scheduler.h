/*
 * scheduler — the leader's recurring-job scheduler: jobs/<jobCode>.json on a
 * timing wheel, fired into incoming/ as task files.
 *
 * Policy layer, leader only, one thread.  What it owns:
 *  - loading job definitions (invalid ones go to corrupt/ with a reason),
 *    re-reading a definition when its file changes;
 *  - the fire of job J at instant t: task J.<t UTC>, published
 *    exclusively (no-replace rename); the task name is the fence.  A fire
 *    at or before the job's replay horizon (the moment this leader loaded
 *    the job: anything earlier may have been fired by a previous leader
 *    whose state write was lost) is first looked up by name in every
 *    state directory and results/, so a fire repeated after a restart or
 *    failover is a no-op;
 *  - the last fire per job, persisted in state/jobs/<J>.json at most every
 *    10 s (and at once after a misfire, on disable, on shutdown), so after
 *    downtime the job's misfire policy decides what happens
 *    (job_misfire_plan);
 *  - the overlap policy, once per pass (forbid: a live previous task
 *    skips the pass, a catch-up fires only its first instant; replace:
 *    only the last instant fires and the live task is cancelled), fenced
 *    by the job's run marker (coord/jobrun.h), so two leaders at once
 *    neither overlap a forbid run nor publish one instant twice;
 *  - clock jumps: detected by comparing wall and monotonic clocks between
 *    ticks and logged; the wheel never moves back, so a step back fires
 *    nothing twice, and a step forward fires what became due under the
 *    misfire policy.
 * Per pass it does no slow work per fire: each fire's task file is written
 * into tmp/ unsynced; at the end of the pass one syncfs(2) (an fsync each
 * when there are few) makes them all durable, they are renamed into incoming/ (or delayed/ with jitter), and
 * each target directory is fsynced once.  At most SCHED_TICK_MAX fires
 * are staged per pass; the rest wait for the next pass.
 */
#ifndef TASKSPOOL_SCHEDULER_H
#define TASKSPOOL_SCHEDULER_H

#include <stdint.h>

#include "spool/config.h"
#include "spool/spool.h"

struct sched;

/*
 * New scheduler over spool sp (borrowed; must outlive it) with cfg
 * (borrowed).  Creates state/jobs/ when missing.
 * Returns new, or NULL with errno (logged by the caller).
 */
struct sched *scheduler_new(struct spool *sp, const struct config *cfg,
    int64_t now_ms);

/* Free everything.  NULL is accepted. */
void scheduler_free(struct sched *s);

/*
 * Read jobs/ again: load new and changed definitions, drop removed ones,
 * apply each (re)loaded job's misfire plan from its persisted last fire.
 * now_ms is wall-clock epoch ms.
 */
void scheduler_scan(struct sched *s, int64_t now_ms);

/* How many tasks s has fired into incoming/ or delayed/ so far (a
 * counter for wake-ups, wakeup.h); 0 for NULL. */
unsigned long long scheduler_published(const struct sched *s);

/* Fire every job due at or before now_ms (epoch ms); see the header. */
void scheduler_tick(struct sched *s, int64_t now_ms, int64_t mono_ms);

/*
 * Earliest due fire (epoch ms, possibly a lower bound) in *due_ms.
 * Returns 0 when nothing is scheduled, else 1.
 */
int scheduler_next(const struct sched *s, int64_t *due_ms);

/* Number of jobs loaded (enabled or not). */
int scheduler_count(const struct sched *s);

#endif
