/*
 * gcra — the generic cell rate algorithm (pure: no I/O, no clock; the
 * instant is an argument), the rule of the execution rate limits
 * (rate_limit, rate_limit_per_key; README.md "Execution rate limits").
 *
 * A limit of N starts per period P with a burst B is, in ms:
 *
 *	T   = ceil(P / N)          the emission interval
 *	tau = T * (B - 1)          the burst (delay variation) tolerance
 *
 * The state is one instant, the theoretical arrival time TAT (ms on the
 * clock the caller uses; "none" for a limit never used or idle).  A start
 * asked for at now is allowed when now >= max(TAT, now) - tau, and then
 * TAT becomes max(TAT, now) + T; otherwise it must wait
 * max(TAT, now) - tau - now ms and the state is unchanged.  This is a
 * token bucket of B tokens refilled one per T: at most B starts at once
 * after idleness, then one every T; in any interval of length W at most
 * B + floor(W / T) starts are allowed.  A TAT at or before now carries no
 * information (the bucket is full): such a state may be forgotten.
 *
 * Clock steps back: a TAT past now + tau + T cannot come from this
 * clock (an allowed start leaves TAT <= now + tau + T), so the clock went
 * back; the TAT is then taken as now + tau + T (the bucket empty), which
 * costs one wait of at most T and never allows more than the bucket.
 *
 * Source: the ATM Forum Traffic Management Specification 4.0 (af-tm-
 * 0056.000, 1996), the virtual scheduling form of the GCRA; the
 * redis-cell documentation (github.com/brandur/redis-cell) and Brandur
 * Leach, "Rate Limiting, Cells, and GCRA" (2015), for its use as a rate
 * limiter with a burst.
 */
#ifndef TASKSPOOL_GCRA_H
#define TASKSPOOL_GCRA_H

#include <stdint.h>

/* The parameters of one limit (gcra_params makes them). */
struct gcra_params {
	int64_t interval_ms;	/* T >= 1 */
	int64_t tolerance_ms;	/* tau >= 0 */
};

/* No state: a limit never used, or forgotten when idle. */
#define GCRA_NONE	INT64_MIN

/*
 * The parameters of n (>= 1) starts per period_ms (>= n) with burst
 * (>= 1) into *p: T = ceil(period_ms / n), tau = T * (burst - 1).
 * Returns 0, or -1 for arguments out of those ranges or a tau that
 * would pass 2^62 ms (*p unchanged).
 */
int gcra_params(int64_t n, int64_t period_ms, int64_t burst,
    struct gcra_params *p);

/*
 * One start asked for at now_ms under p (borrowed) with the state tat
 * (GCRA_NONE, or a TAT in ms; any value is accepted: see the clock
 * rule above).  Returns 1 (allowed: *new_tat is the state to keep, *wait_ms
 * 0) or 0 (not now: *wait_ms >= 1 is the time until a start would be
 * allowed, *new_tat the state to keep: tat itself, or its clamp after a
 * clock step back, which the caller must store, or the wait would be
 * computed again from the unclamped tat forever).
 */
int gcra_take(const struct gcra_params *p, int64_t tat, int64_t now_ms,
    int64_t *new_tat, int64_t *wait_ms);

/*
 * Whether the state tat is idle at now_ms: GCRA_NONE or a TAT at or
 * before now, which carries no information (gcra_take answers the same
 * without it).  Returns 1 or 0.
 */
int gcra_idle(int64_t tat, int64_t now_ms);

#endif
