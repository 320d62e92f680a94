/*
 * backoff — retry delays: capped exponential backoff with jitter (pure).
 *
 * The delay before retry n (n = 1 for the second attempt) is
 *     d = min(cap_ms, base_ms * 2^(n-1))
 * and the jittered delay is drawn uniformly from [d - d*jitter_pct/100, d]
 * using the caller's random value, so it is never more than d and never
 * less than the documented floor ("equal jitter" style, AWS Architecture
 * Blog "Exponential Backoff and Jitter", 2015).  The shift is bounded, so
 * large n cannot overflow into a zero or negative delay.
 */
#ifndef TASKSPOOL_BACKOFF_H
#define TASKSPOOL_BACKOFF_H

#include <stdint.h>

/* The un-jittered delay d in ms for retry n >= 1 (n < 1 is taken as 1). */
int64_t backoff_delay_ms(int n, int64_t base_ms, int64_t cap_ms);

/*
 * The jittered delay in ms for retry n; rnd is any 32-bit random value
 * (the caller's source), jitter_pct 0..100.  Result lies in
 * [d - d*jitter_pct/100, d].
 */
int64_t backoff_jittered_ms(int n, int64_t base_ms, int64_t cap_ms,
    int jitter_pct, uint32_t rnd);

#endif
