/*
 * ratespec — the value of the rate_limit and rate_limit_per_key keys
 * (taskspool.conf(5)): "<taskCode>=<N>/<period>[:<burst>][,...]", e.g.
 * "mail=10/1m,probe=10/1s:20", a limit per task code (or per task code
 * and key) on the starts of its hooks, enforced with the GCRA
 * (core/gcra.h) by coord/execrate.h.  Pure.
 *
 * period: a whole number and a unit, ms, s, m, h or d (1ms .. 7d); N:
 * 1 .. 1 000 000 and at most the period in ms (the interval period/N is
 * at least 1 ms); burst: 1 .. 1 000 000, N when not given.  A code
 * appears at most once per value.
 */
#ifndef TASKSPOOL_RATESPEC_H
#define TASKSPOOL_RATESPEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/task.h"

#define RATESPEC_N_MAX		1000000
#define RATESPEC_BURST_MAX	1000000
#define RATESPEC_PERIOD_MAX	(7LL * 86400 * 1000)	/* ms: 7 d */

/* One item of a value. */
struct ratespec_item {
	char code[TASK_CODE_MAX + 1];
	long n;			/* starts ... */
	int64_t period_ms;	/* ... per this period */
	long burst;		/* starts at once after idleness */
	char text[TASK_CODE_MAX + 48];	/* the item as written, for the
					 * WAITING reason */
};

/*
 * Check the value spec (borrowed) of key (the key's name, for the
 * message).  Returns 0, or -1 with a message starting "<key>: " and
 * naming the item in why (whylen bytes).
 */
int ratespec_check(const char *key, const char *spec, char *why,
    size_t whylen);

/*
 * The item of task code code in spec (a value ratespec_check accepted)
 * into *out.  Returns 1 (found), 0 (code has no limit), -1 (the item
 * does not parse: spec was not checked).
 */
int ratespec_find(const char *spec, const char *code,
    struct ratespec_item *out);

#endif
