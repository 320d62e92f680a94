/*
 * backoff — capped exponential backoff with jitter; see backoff.h.
 */
#include "core/backoff.h"

int64_t
backoff_delay_ms(int n, int64_t base_ms, int64_t cap_ms)
{
	int64_t d = base_ms;

	if (base_ms <= 0)
		return 0;
	if (n < 1)
		n = 1;
	/* Double n-1 times, stopping as soon as the cap is reached. */
	for (int i = 1; i < n && d < cap_ms; i++) {
		if (d > INT64_MAX / 2) {
			d = cap_ms;
			break;
		}
		d *= 2;
	}
	return d < cap_ms ? d : cap_ms;
}

int64_t
backoff_jittered_ms(int n, int64_t base_ms, int64_t cap_ms, int jitter_pct,
    uint32_t rnd)
{
	int64_t d = backoff_delay_ms(n, base_ms, cap_ms);
	int64_t span;

	if (jitter_pct <= 0 || d == 0)
		return d;
	if (jitter_pct > 100)
		jitter_pct = 100;
	span = d / 100 * jitter_pct + d % 100 * jitter_pct / 100;
	/* span <= d <= INT64_MAX: span + 1 computed unsigned cannot wrap. */
	return d - (int64_t)((uint64_t)rnd % ((uint64_t)span + 1));
}
