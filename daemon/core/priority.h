/*
 * priority — task priorities with aging (pure: no I/O, no clock; the
 * instants are arguments).
 *
 * A task's priority is an integer 0..9 (PRIORITY_MIN..PRIORITY_MAX),
 * PRIORITY_DEFAULT when the task file has none.  Among due tasks the one
 * of higher effective priority is claimed first, where (README.md,
 * "Priorities"):
 *
 *	effective = min(9, priority + floor(waited / aging))
 *
 * waited being the time since the task became due (its file's mtime in
 * incoming/), aging the configuration's priority_aging_sec in ms.  A
 * task waiting longer than aging per level so climbs one level and none
 * starves: after 9 * aging it is at 9 and, older than every fresher
 * priority-9 task, comes first.  Equal effective priorities keep the
 * arrival order (the caller's: mtime, then name).
 *
 * Follows the aging of Unix process schedulers (4.4BSD's p_estcpu decay,
 * inverted: waiting raises the priority) with the integer levels of
 * celery/RabbitMQ's x-max-priority 0..9.
 */
#ifndef TASKSPOOL_PRIORITY_H
#define TASKSPOOL_PRIORITY_H

#include <stdint.h>

#define PRIORITY_MIN		0
#define PRIORITY_MAX		9
#define PRIORITY_DEFAULT	5

/*
 * The effective priority of a task of priority prio (clamped into
 * 0..9) due since due_ms, at now_ms, aging by one level per aging_ms.
 * A negative wait (a clock step back, a future mtime) counts as 0;
 * aging_ms <= 0 turns aging off (the priority as it is).  Returns
 * 0..9.  Never overflows: waits up to INT64_MAX are capped at 9.
 */
int priority_effective(int prio, int64_t due_ms, int64_t now_ms,
    int64_t aging_ms);

/*
 * Whether a task (prio_a, due_a) is claimed before (prio_b, due_b) at
 * now_ms: a higher effective priority, or an equal one and an earlier
 * due time.  Returns 1 or 0 (also for two equal ones: the caller's
 * arrival order decides).
 */
int priority_before(int prio_a, int64_t due_a, int prio_b, int64_t due_b,
    int64_t now_ms, int64_t aging_ms);

#endif
