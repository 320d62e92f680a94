/*
 * gcra — the generic cell rate algorithm; see gcra.h.
 */
#include "core/gcra.h"

/* Largest tau accepted: keeps now + tau + T far from overflow for any
 * real clock value (epoch ms are near 2^41). */
#define GCRA_TAU_MAX	(INT64_C(1) << 62)

int
gcra_params(int64_t n, int64_t period_ms, int64_t burst,
    struct gcra_params *p)
{
	int64_t t;

	if (n < 1 || period_ms < n || burst < 1)
		return -1;
	t = period_ms / n + (period_ms % n != 0);
	if (burst - 1 > GCRA_TAU_MAX / t)
		return -1;
	p->interval_ms = t;
	p->tolerance_ms = t * (burst - 1);
	return 0;
}

int
gcra_idle(int64_t tat, int64_t now_ms)
{
	return tat == GCRA_NONE || tat <= now_ms;
}

int
gcra_take(const struct gcra_params *p, int64_t tat, int64_t now_ms,
    int64_t *new_tat, int64_t *wait_ms)
{
	int64_t full, allow_at;

	/* The fullest a TAT of this clock can be: see "Clock steps back".
	 * Computed without overflow for any now_ms. */
	if (now_ms > INT64_MAX - p->tolerance_ms - p->interval_ms)
		full = INT64_MAX;
	else
		full = now_ms + p->tolerance_ms + p->interval_ms;
	if (tat == GCRA_NONE || tat < now_ms)
		tat = now_ms;
	if (tat > full)
		tat = full;
	allow_at = tat - p->tolerance_ms;
	if (now_ms < allow_at) {
		*new_tat = tat;
		*wait_ms = allow_at - now_ms;
		return 0;
	}
	*new_tat = tat > INT64_MAX - p->interval_ms ? INT64_MAX :
	    tat + p->interval_ms;
	*wait_ms = 0;
	return 1;
}
