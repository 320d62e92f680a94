/*
 * fairshare — fair sharing of a daemon's claims between the sources of
 * its candidates (README.md, "Fair sharing"): start-time fair queueing
 * (Goyal, Vin and Cheng, "Start-time Fair Queuing", SIGCOMM 1996) over
 * flows, in the spirit of Postfix's qmgr, which takes one message from
 * incoming and one from deferred in turn.  Pure: no I/O, no clock.
 *
 * A flow is a source of tasks: "local" (dropped files, the CLI, released
 * dependents), "jobs" (fires of recurring jobs), "retry" (a task with
 * attempts behind it, whatever its source), or "app:<appId>" (the HTTP
 * API's tasks of that app), each with a weight 1..FAIR_WEIGHT_MAX.  Each
 * flow has a virtual time; the set has a virtual clock V, the start tag
 * of the flow served last.  The rule:
 *
 *  - a flow that had no candidate and gets one (fair_enter on its first)
 *    starts at max(its time, V): idleness earns no credit;
 *  - among the candidates of the best effective priority, the claim
 *    takes one of the flow with the smallest start tag (its time), the
 *    oldest of that flow;
 *  - serving flow f (fair_served) sets V to f's time and adds
 *    FAIR_SCALE / weight(f) to it.
 *
 * So over any stretch where flows stay backlogged, each gets claims in
 * proportion to its weight, give or take one claim per flow (SFQ's
 * bound); a flood of one flow delays another's next task by at most one
 * claim per other backlogged flow, weighted.  Priorities stay first: a
 * fair share is among tasks of equal effective priority.
 *
 * At most FAIR_FLOWS_MAX flows are told apart; the names after the
 * table is full share its last flow, "(other)".
 */
#ifndef TASKSPOOL_FAIRSHARE_H
#define TASKSPOOL_FAIRSHARE_H

#include <stddef.h>
#include <stdint.h>

#define FAIR_FLOWS_MAX	256		/* flows told apart */
#define FAIR_NAME_MAX	72		/* "app:" + an AppId, with NUL */
#define FAIR_WEIGHT_MAX	100
#define FAIR_SCALE	((uint64_t)1 << 20)	/* virtual time of one claim
					 * of a flow of weight 1 */
#define FAIR_LOCAL	0		/* the flow every set starts with */

struct fair_flow {
	char name[FAIR_NAME_MAX];
	int weight;			/* 1..FAIR_WEIGHT_MAX */
	uint64_t vtime;			/* its start tag */
	size_t queued;			/* candidates of it in the set */
};

struct fairshare {
	struct fair_flow flow[FAIR_FLOWS_MAX];
	size_t n;			/* flows in use, >= 1 */
	size_t backlogged;		/* flows with queued > 0 */
	uint64_t vclock;		/* V */
};

/* Make f empty but for the flow "local" (weight 1) as FAIR_LOCAL. */
void fair_init(struct fairshare *f);

/*
 * The index of the flow named name (NUL-terminated; cut to
 * FAIR_NAME_MAX - 1 bytes), added with weight (clamped to
 * 1..FAIR_WEIGHT_MAX) when new; an existing flow takes the new weight.
 * When the table is full, the last flow, "(other)", is returned.
 */
int fair_flow_of(struct fairshare *f, const char *name, int weight);

/* A candidate of flow i joins the set (V applies on its first). */
void fair_enter(struct fairshare *f, int i);

/* A candidate of flow i leaves the set (claimed, removed, moved). */
void fair_leave(struct fairshare *f, int i);

/*
 * Whether flow a's candidate goes before flow b's: the smaller start
 * tag (equal tags: neither, 0).  Returns 1 or 0.
 */
int fair_before(const struct fairshare *f, int a, int b);

/* Flow i was served one claim: V = its time; its time += SCALE/weight. */
void fair_served(struct fairshare *f, int i);

#endif
