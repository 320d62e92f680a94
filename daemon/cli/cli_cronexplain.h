/*
 * cli_cronexplain.h — "taskspool cron explain": a cron expression or
 * calendar event told in words, with its next fires and the zone's next
 * offset change.
 */
#ifndef CLI_CRONEXPLAIN_H
#define CLI_CRONEXPLAIN_H

#include <stdint.h>

#include "core/cron.h"

struct tz;

/*
 * cli_cron_explain() prints to stdout, for expression e (parsed from text
 * in dialect d; both borrowed) in zone z (borrowed): the text, its dialect
 * and kind (fixed-time or interval, cron.h), cron_explain()'s description
 * with the zone, the next n fires after from_s (epoch seconds), and what
 * the zone's first offset change after from_s does to the schedule,
 * following the DST rules of cron.h (tests/data/CRON-RULES.md 4.6): the
 * wall times it skips or repeats, and whether e has a time among them and
 * when that fires.  Returns 0, 1 when e never fires, 74 (EX_IOERR) when
 * stdout cannot be written.
 */
int	cli_cron_explain(const char *text, enum cron_dialect d,
	    const struct cron_expr *e, const struct tz *z, int64_t from_s,
	    long n);

#endif /* CLI_CRONEXPLAIN_H */
