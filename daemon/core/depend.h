/*
 * depend — task dependencies (pure: no I/O, no clock, no logging).
 *
 * Owns the dependsOn and releasedBy members of a task file (README.md,
 * "Dependencies") and the one rule that decides a blocked task: each
 * edge's condition against its parent's state, with the meaning of
 * Slurm's sbatch(1) --dependency (afterok, afternotok, afterany):
 *
 *   condition   parent SUCCESS  FAILED   CANCELLED  not ended (or unknown)
 *   afterok     holds           never    never      wait
 *   afternotok  never           holds    holds      wait
 *   afterany    holds           holds    holds      wait
 *
 * Slurm's afternotok holds when the job "terminated in some failed state
 * (non-zero exit code, node failure, timed out, etc)"; its controller
 * counts a cancelled job as such (finished and not complete), and so do
 * we.  TIMEOUT is an attempt's outcome here: a task whose last attempt
 * timed out ends FAILED.  A task is ready when every edge holds, never
 * satisfiable as soon as one edge can never hold, else it waits.
 *
 * Invariants of a decoded list: 1..DEPEND_MAX edges, each requestId of
 * the spool's grammar, no requestId twice.  No json_t escapes but
 * through depend_json (for task.c, the codec that embeds the list).
 */
#ifndef TASKSPOOL_DEPEND_H
#define TASKSPOOL_DEPEND_H

#include <jansson.h>
#include <stddef.h>

#include "core/jsonfield.h"	/* struct task_error */

#define DEPEND_MAX	10000	/* edges of one task (fan-in cap) */
#define DEPEND_ID_MAX	128	/* a requestId, as TASK_ID_MAX */

enum depend_cond { DEPEND_AFTEROK, DEPEND_AFTERNOTOK, DEPEND_AFTERANY };

/* A parent's state as the spool shows it (the directory it is in). */
enum depend_parent {
	DEPEND_PARENT_PENDING,		/* blocked, pending, running... */
	DEPEND_PARENT_SUCCESS,		/* done/ */
	DEPEND_PARENT_FAILED,		/* failed/ */
	DEPEND_PARENT_CANCELLED,	/* cancelled/ */
	DEPEND_PARENT_UNKNOWN		/* nowhere in the spool */
};

enum depend_verdict { DEPEND_WAIT, DEPEND_READY, DEPEND_NEVER };

struct depend_edge {
	char id[DEPEND_ID_MAX + 1];
	enum depend_cond cond;		/* dependsOn: the condition */
	enum depend_parent state;	/* releasedBy: the state it had */
};

struct depend_list {
	struct depend_edge *v;		/* new (depend_list_fini) */
	size_t n;
};

/* Initialise l empty; free what it owns (and re-initialise).  NULL ok. */
void depend_list_init(struct depend_list *l);
void depend_list_fini(struct depend_list *l);

/* "afterok", "afternotok", "afterany"; and back (0, or -1 unknown). */
const char *depend_cond_name(enum depend_cond c);
int depend_cond_parse(const char *s, enum depend_cond *c);

/* "PENDING", "SUCCESS", "FAILED", "CANCELLED", "UNKNOWN" (static). */
const char *depend_parent_name(enum depend_parent p);

/*
 * Decode member field (dependsOn or releasedBy: released selects the
 * form) of a task file: an array of 1..DEPEND_MAX objects, each
 * {"requestId": ID, "condition": C} (condition optional, afterok) or,
 * released, {"requestId": ID, "state": "SUCCESS"|"FAILED"|"CANCELLED"}.
 * No requestId twice.  Fills l (initialised; its contents freed first).
 * Returns 0, or -1 with err naming the element ("dependsOn[3].condition")
 * and the rule, l left empty.  Source: README.md "Dependencies", the
 * member rules of API.md §4.1.
 */
int depend_decode(json_t *v, const char *field, int released,
    struct depend_list *l, struct task_error *err);

/*
 * The list as a new JSON array (json_decref it) in the form depend_decode
 * reads back; NULL when out of memory.
 */
json_t *depend_json(const struct depend_list *l, int released);

/* Whether two lists differ (ids, conditions, states, order): 1 or 0. */
int depend_differs(const struct depend_list *a, const struct depend_list *b);

/* Whether l holds id: its index, or -1. */
long depend_find(const struct depend_list *l, const char *id);

/* One edge: condition c against parent state p. */
enum depend_verdict depend_cond_eval(enum depend_cond c, enum depend_parent p);

/*
 * A whole list: states[i] is the state of l->v[i]'s parent.  Returns
 * DEPEND_NEVER (with *which, may be NULL, the first edge that can never
 * hold), DEPEND_WAIT (*which the first edge still waiting), or
 * DEPEND_READY.
 */
enum depend_verdict depend_eval(const struct depend_list *l,
    const enum depend_parent *states, size_t *which);

#endif
