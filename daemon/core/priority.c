/*
 * priority — priorities with aging; see priority.h.
 */
#include "core/priority.h"

int
priority_effective(int prio, int64_t due_ms, int64_t now_ms,
    int64_t aging_ms)
{
	uint64_t levels;

	if (prio < PRIORITY_MIN)
		prio = PRIORITY_MIN;
	if (prio > PRIORITY_MAX)
		prio = PRIORITY_MAX;
	if (aging_ms <= 0 || now_ms <= due_ms)
		return prio;
	/* now - due in unsigned arithmetic: exact (now > due) even when
	 * the difference exceeds INT64_MAX; floor, both positive. */
	levels = ((uint64_t)now_ms - (uint64_t)due_ms) / (uint64_t)aging_ms;
	if (levels >= (uint64_t)(PRIORITY_MAX - prio))
		return PRIORITY_MAX;
	return prio + (int)levels;
}

int
priority_before(int prio_a, int64_t due_a, int prio_b, int64_t due_b,
    int64_t now_ms, int64_t aging_ms)
{
	int ea = priority_effective(prio_a, due_a, now_ms, aging_ms);
	int eb = priority_effective(prio_b, due_b, now_ms, aging_ms);

	if (ea != eb)
		return ea > eb;
	return due_a < due_b;
}
