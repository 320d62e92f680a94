/*
 * cron_impl.h — the parsed form of a cron expression, shared by the files
 * of the core/cron* module: cron.c (the vixie and quartz grammars, the
 * fire-time search) and cron_systemd.c (the systemd calendar-event
 * grammar, systemd.time(7)).  Nothing outside the module sees it.
 */
#ifndef CRON_IMPL_H
#define CRON_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/cron.h"
#include "core/tz.h"

#define YEAR_FIRST	1970	/* quartz year field, CRON-RULES.md 4.4 */
#define YEAR_LAST	2199	/* (systemd's MIN_YEAR and MAX_YEAR too) */

enum cron_fid {
	FID_SEC, FID_MIN, FID_HOUR, FID_DOM, FID_MON, FID_DOW, FID_YEAR
};

/* Day-of-month: a plain set, '?', one Quartz special, or systemd's "~". */
enum cron_dom_kind {
	DOM_SET,	/* bits in dom */
	DOM_ANY,	/* quartz '?' */
	DOM_LAST,	/* "L" / "L-n": last day minus dom_n */
	DOM_LAST_WD,	/* "LW" / "L-nW": weekday nearest that day */
	DOM_NEAR_WD,	/* "nW": weekday nearest day dom_n */
	DOM_EOM		/* systemd "~": eom_days[month length - 28] */
};

/* Day-of-week: a plain set, '?', or one Quartz special. */
enum cron_dow_kind {
	DOW_SET,	/* bits in dow */
	DOW_ANY,	/* quartz '?' */
	DOW_LAST,	/* "nL": last weekday dow_wd of the month */
	DOW_NTH		/* "n#k": dow_k-th weekday dow_wd of the month */
};

struct cron_expr {
	enum cron_dialect	 dialect;
	uint64_t		 sec;		/* bit n: second n */
	uint64_t		 min;		/* bit n: minute n */
	uint32_t		 hour;		/* bit n: hour n */
	uint32_t		 dom;		/* bit n: day n, 1..31 */
	uint32_t		 mon;		/* bit n: month n, 1..12 */
	uint32_t		 dow;		/* bit n: weekday n, 0 = Sun */
	int			 has_year;
	uint64_t		 year[4];	/* bit n: year 1970 + n */
	int			 dom_star;	/* vixie: text starts '*' */
	int			 dow_star;
	enum cron_dom_kind	 dom_kind;
	int			 dom_n;
	enum cron_dow_kind	 dow_kind;
	int			 dow_wd;	/* 0 = Sunday */
	int			 dow_k;		/* 1..5 */
	int			 fixed_time;
	uint32_t		 eom_days[4];	/* DOM_EOM: bit d, by length */
	char			 zone[TZ_NAME_MAX + 1];	/* systemd: at the end */
};

/*
 * cron_token_for_msg() copies at most 40 bytes of [s, end) into out
 * (outlen bytes, NUL-terminated), printable ASCII only ('?' for others),
 * "..." at the end when cut: the quoted part of a parse message.  Pure.
 */
void	cron_token_for_msg(const char *s, const char *end, char *out,
	    size_t outlen);

/*
 * cron_systemd_parse() parses `text` (NUL-terminated, at most
 * CRON_TEXT_MAX bytes) as a systemd calendar event into *e, which the
 * caller allocated zeroed and owns.  Returns 0, or -1 with a one-line
 * reason in why (whylen bytes) naming the part that is wrong.  Follows
 * systemd.time(7), "Calendar Events", as systemd 252's systemd-analyze
 * calendar accepts it; the differences are listed in cron.h.  Pure.
 */
int	cron_systemd_parse(const char *text, struct cron_expr *e, char *why,
	    size_t whylen);

#endif /* CRON_IMPL_H */
