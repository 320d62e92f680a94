/*
 * cron.h — cron expressions: parse, and compute the next fire instant.
 *
 * Pure module: no I/O, no clock (time is an argument), no logging, no
 * global state; a parsed struct cron_expr is immutable, so any number of
 * threads may share one.  Semantics are those of tests/data/CRON-RULES.md,
 * and tests/data/cron-vectors.jsonl is their executable form:
 *
 *   vixie   5 fields "min hour dom month dow" or an @macro, as cron(5) and
 *           cronie describe them (names, ranges, lists, steps, 0 and 7 =
 *           Sunday, DOM/DOW ORed when both are restricted, ANDed when
 *           either starts with '*').  Extension: "N/step" = "N-max/step".
 *   quartz  6 or 7 fields "sec min hour dom month dow [year]", as the
 *           Quartz 2.3.2 CronExpression documentation describes them
 *           (exactly one of dom/dow is '?', weekdays 1-7 with 1 = SUN,
 *           L, L-n, W, LW, nL, n#k, wrapping ranges, years 1970-2199).
 *   systemd "[WEEKDAYS] [[YEAR-]MONTH-DAY] [HOUR:MINUTE[:SECOND]] [ZONE]"
 *           and the shorthands (minutely ... semiannually), the calendar
 *           events of systemd.time(7) as systemd 252 reads them
 *           (core/cron_systemd.c lists the grammar): weekdays AND the
 *           date, "~" counts days from the month's end, never a fire
 *           after 2199.  Refused where systemd accepts them: fractions
 *           of a second other than zeros, "@EPOCH", and the host zone's
 *           abbreviations.
 *
 * Time zones and DST (CRON-RULES.md 4.6, cronie's behaviour): a job is
 * "fixed-time" unless its second (quartz), minute or hour field starts
 * with '*'.  A fixed-time wall time skipped by a forward jump of at most
 * 3 h fires once at the first instant after the jump; one repeated by a
 * backward jump of at most 3 h fires on the first pass only.  Interval
 * jobs follow elapsed time: skipped times do not occur, repeated times
 * fire on both passes.  Jumps over 3 h are clock corrections: skipped
 * times are not caught up, repeated ones fire again.
 *
 * The same rules hold for the systemd dialect, where systemd 252 does
 * otherwise (by design here; tests/scenario/t0110-systemd-calendar.sh
 * names each one when it meets it):
 *   gap      a fixed time skipped by a forward jump: systemd skips that
 *            day; taskspool fires at the first instant after the jump;
 *   repeat   an interval job in a repeated hour: systemd fires only on
 *            the first pass; taskspool on both (elapsed time goes on);
 *   inside   asked from inside the second pass of a repeated hour,
 *            systemd may return a fixed time's second pass; taskspool
 *            never fires a fixed time twice on one day.
 */
#ifndef CRON_H
#define CRON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/tz.h"

struct tz;

enum cron_dialect {
	CRON_DIALECT_VIXIE,
	CRON_DIALECT_QUARTZ,
	CRON_DIALECT_SYSTEMD
};

/* Longest expression text accepted, in bytes. */
#define CRON_TEXT_MAX		1024

/*
 * How far cron_next_fire() searches: the Gregorian calendar repeats every
 * 400 years, so a day pattern absent from 400 years never matches.
 */
#define CRON_HORIZON_YEARS	400

/* Largest forward or backward jump treated as DST (cronie: 3 hours). */
#define CRON_DST_MAX_S		(3 * 3600)

/* Room for any message cron_parse() writes (longer buffers are fine). */
#define CRON_WHY_MAX		160

struct cron_expr;

/*
 * cron_parse() parses `text` (NUL-terminated, at most CRON_TEXT_MAX bytes;
 * fields separated by spaces or tabs) in dialect d.
 *
 * Returns a new struct cron_expr (caller frees with cron_free()), or NULL
 * with errno = EINVAL (ENOMEM if out of memory) and, when why is not NULL,
 * a one-line reason of at most whylen-1 bytes naming the field and the bad
 * list element, e.g. `day-of-month: "32" out of range 1-31`; structural
 * problems name the expression instead (`expected 5 fields (vixie), got
 * 4`).  Follows cron(5)/cronie for vixie and Quartz 2.3.2 CronExpression
 * for quartz, with the must-reject list of CRON-RULES.md 4.8: reversed
 * vixie ranges (except weekday "x-0"), "N/" and "/N" fragments, step 0,
 * quartz increments past the field (Quartz's own limits: 59 s/min, 23 h,
 * 31 days, 12 months, 7 weekdays), "0W", "L-31", "#0".."#6", L and # in
 * weekday lists, '?' outside the day fields, years outside 1970-2199,
 * @reboot and @every.  Statically impossible dates ("0 0 30 2 *") are
 * accepted; cron_next_fire() reports them as "no next time".
 */
struct cron_expr *cron_parse(const char *text, enum cron_dialect d,
		    char *why, size_t whylen);

/*
 * cron_next_fire() stores in *next_s the first fire instant strictly after
 * after_s (both epoch seconds) for expression e in zone z (both borrowed,
 * only read), applying the DST rules above.  Stateless: calling it again
 * with the previous result walks the schedule.
 *
 * Follows CRON-RULES.md 4.6 (cronie's cron.c and cron(8) for DST).
 * Returns 1 when found; 0 when there is none within CRON_HORIZON_YEARS (or
 * before the end of year 9999, or after the last year of a quartz year
 * field); -1 with errno = EINVAL (NULL argument) or ERANGE (after_s outside
 * TZ_EPOCH_MIN..TZ_EPOCH_MAX - 1).  Bounded work even for impossible dates.
 */
int		 cron_next_fire(const struct cron_expr *e,
		    const struct tz *z, int64_t after_s, int64_t *next_s);

/*
 * cron_dialect_guess() picks the dialect the CLI uses when none is given:
 * vixie for an @macro or 5 fields, quartz for 6 or 7 fields (CRON-RULES.md
 * section 1), systemd for 1 to 4 fields holding ':', '~', "..", "*-" or
 * starting with a letter (a weekday or a shorthand: "Mon *-*-* 9:00",
 * "daily"), or 1 to 3 fields holding '-' ("2027-01-01").  text is
 * borrowed.  Returns 0 and sets *d, or -1 (errno = EINVAL) for anything
 * else.  Pure.
 */
int		 cron_dialect_guess(const char *text, enum cron_dialect *d);

/*
 * cron_is_fixed_time() returns 1 if e (borrowed) is a fixed-time job (no
 * second, minute or hour field starting with '*': cronie's MIN_STAR and
 * HR_STAR), 0 for an interval job.
 */
int		 cron_is_fixed_time(const struct cron_expr *e);

/* cron_dialect() returns the dialect e was parsed with. */
enum cron_dialect cron_dialect(const struct cron_expr *e);

/*
 * cron_zone() returns the zone a systemd calendar event names at its end
 * ("UTC", "Europe/Berlin"; borrowed from e, valid while e lives), or NULL
 * when it names none (and always for vixie and quartz).  The name passed
 * tz_name_ok(); whether the zone exists is for the caller's tz_load().
 */
const char	*cron_zone(const struct cron_expr *e);

/*
 * cron_explain() writes into out (outlen bytes, always NUL-terminated when
 * outlen > 0) a one-line English description of what e matches, for
 * people: "at 09:30, on weekdays (Monday to Friday)", "every 15 minutes,
 * every day", "at 00:00, on the last 7 days of the month, if that day is
 * a Monday, in May".  Told from the parsed form, so the three dialects
 * read alike (the vixie OR of two restricted day fields is "or"); the zone
 * and the DST rules are the caller's to add (cron_is_fixed_time).
 * Returns the length written, or -1 when outlen was too small (the text is
 * cut).  Pure.
 */
int		 cron_explain(const struct cron_expr *e, char *out,
		    size_t outlen);

/* How far cron_explain_change() looks for an offset change: 400 days. */
#define CRON_CHANGE_LOOK_S	(400LL * 86400)

/* What a zone's offset change does to a schedule (cron_explain_change). */
struct cron_change {
	int64_t	 at;		/* the change's instant, epoch seconds */
	int32_t	 before;	/* UTC offset before it, seconds east */
	int32_t	 after;		/* UTC offset from it on */
	int	 skipped;	/* 1: wall times skipped; 0: repeated */
	int	 affected;	/* 1: a time of the schedule falls in them */
	char	 at_text[TZ_RFC3339_MAX];	/* at, in the new offset */
	char	 before_text[16];	/* before as "+01:00" */
	char	 after_text[16];	/* after as "+02:00" */
	char	 range[96];	/* "02:00:00 to 02:59:59 on 2027-03-28", or
				 * "23:00:00 on 1987-10-24 to 00:00:59 on
				 * 1987-10-25" across midnight */
	char	 effect[320];	/* one sentence, no final period */
	char	 head[256];	/* "offset change at <at_text> (+01:00 to
				 * +02:00): wall times <range> do not
				 * exist" (or "occur twice") */
};

/*
 * cron_explain_change() tells what the first offset change of zone z
 * after from_s (epoch seconds) does to expression e (both borrowed),
 * following the DST rules of this header (CRON-RULES.md 4.6, cronie's
 * cron.c): the wall times the change skips or repeats, whether e has a
 * time among them, and the effect in one sentence ("on 2027-03-28 it
 * fires once at 03:00:00, the first instant after the jump, because
 * 02:30:00 does not exist (fixed-time: a skipped run happens at once)").
 * The affected times are found by running cron_next_fire() on the wall
 * clock line (a UTC zone), so the words and the engine cannot disagree.
 * A jump of more than CRON_DST_MAX_S is a clock correction, told so.
 * Fills *c (caller's).  Returns 1; 0 when z has no change within
 * CRON_CHANGE_LOOK_S of from_s (*c untouched); -1 with errno = ENOMEM.
 * Pure.
 */
int		 cron_explain_change(const struct cron_expr *e,
		    const struct tz *z, int64_t from_s, struct cron_change *c);

/*
 * cron_change_json() returns c (borrowed) as a new JSON object {"at",
 * "offsetBefore", "offsetAfter", "wallTimes", "wallTimesAre" ("skipped"
 * or "repeated"), "affected", "effect"}: the member offsetChange of
 * `jobs list --long --json` and GET /api/cron/next.  NULL when out of
 * memory.
 */
json_t		*cron_change_json(const struct cron_change *c);

/*
 * cron_dialect_name() returns "vixie", "quartz" or "systemd" for d (a
 * static string); cron_dialect_from_name() sets *d from such a name and
 * returns 0, or returns -1 for any other text.  Pure.
 */
const char	*cron_dialect_name(enum cron_dialect d);
int		 cron_dialect_from_name(const char *s, enum cron_dialect *d);

/*
 * cron_offset_text() writes UTC offset off (seconds east) as RFC 3339's
 * "+01:00" / "-03:30" (seconds dropped; hours modulo 100, offsets being
 * within a day) into out (outlen bytes, 16 are enough).  Pure.
 */
void		 cron_offset_text(int32_t off, char *out, size_t outlen);

/* cron_free() releases e; NULL is a no-op. */
void		 cron_free(struct cron_expr *e);

#endif /* CRON_H */
