/*
 * cron_systemd.c — the systemd calendar-event grammar (OnCalendar=).
 *
 * Owns: reading "[WEEKDAYS] [[YEAR-]MONTH-DAY] [HOUR:MINUTE[:SECOND]]
 * [ZONE]" and the shorthands (minutely ... semiannually) into the struct
 * cron_expr that cron.c searches.  Pure: no I/O, no clock; the zone is
 * only named here (its existence is the caller's to check, by loading it).
 *
 * Source: systemd.time(7), "Calendar Events", and what systemd 252's
 * `systemd-analyze calendar` accepts and rejects (probed where the page is
 * silent).  The rules, each checked by tests/unit/check_cron.c or by the
 * differential test against systemd-analyze (tests/scenario/
 * t0110-systemd-calendar.sh):
 *
 *   - each of year, month, day, hour, minute and second is "*" alone, or
 *     a comma list of "N", "N..M" (M >= N) and "N/R" or "N..M/R" (R > 0:
 *     N, N+R, ... up to M, or to the field's end);
 *   - ranges: year 1970..2199 (a one- or two-digit year is 20YY below 70,
 *     19YY from 70), month 1..12, day 1..31, hour 0..23, minute and second
 *     0..59; a repetition without an end must repeat at least once inside
 *     the field (N + R <= the field's last value: "*:*:58/1" is valid,
 *     "59/1" is not);
 *   - "~" instead of the date's last "-" counts days from the month's end:
 *     "~1" is the last day, "~1..3" the last three, "~7/2" the seventh
 *     last and every second day after it; N and M at most 28, and "~N/R"
 *     needs N - R >= 1;
 *   - weekdays: "Mon" or "Monday" in any case, lists and ranges with ".."
 *     or "-" ("Mon..Fri", "Sat,Sun"), never wrapping ("Fri..Mon" is an
 *     error); they AND with the date;
 *   - a missing date is every day, a missing time 00:00:00, a missing
 *     second 0;
 *   - a trailing zone: " UTC" (any case) or an IANA name ("Europe/Berlin")
 *     after the last space;
 *   - the shorthands (any case): minutely, hourly, daily, weekly (Monday),
 *     monthly, quarterly (Jan, Apr, Jul, Oct), semiannually (Jan, Jul;
 *     also semi-annually, biannually, bi-annually), yearly and annually
 *     (and systemd's old spelling "anually").
 *
 * Where taskspool refuses what systemd accepts (cron.h lists the DST
 * differences): a fraction of a second other than zeros ("12:00:00.5";
 * fires are whole seconds), "@EPOCH" (a one-time instant: a task's runAt),
 * and the host zone's abbreviations ("CET" on a host in Europe/Berlin:
 * write the zone's name; an abbreviation that is itself a zone file, like
 * "CET" or "EST", is read as that zone, as systemd does on other hosts).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/cron.h"
#include "core/cron_impl.h"
#include "core/tz.h"

#define NUM_MAX		2147483647LL	/* systemd's INT_MAX limit */

enum sd_part { SD_YEAR, SD_MONTH, SD_DAY, SD_HOUR, SD_MINUTE, SD_SECOND };

static const struct {
	const char	*name;
	int		 lo, hi;
} sd_parts[] = {
	[SD_YEAR]   = { "year", YEAR_FIRST, YEAR_LAST },
	[SD_MONTH]  = { "month", 1, 12 },
	[SD_DAY]    = { "day", 1, 31 },
	[SD_HOUR]   = { "hour", 0, 23 },
	[SD_MINUTE] = { "minute", 0, 59 },
	[SD_SECOND] = { "second", 0, 59 },
};

/* Monday = 0, as systemd numbers them; full names first. */
static const struct {
	const char	*name;
	int		 nr;
} sd_days[] = {
	{ "Monday", 0 }, { "Mon", 0 }, { "Tuesday", 1 }, { "Tue", 1 },
	{ "Wednesday", 2 }, { "Wed", 2 }, { "Thursday", 3 }, { "Thu", 3 },
	{ "Friday", 4 }, { "Fri", 4 }, { "Saturday", 5 }, { "Sat", 5 },
	{ "Sunday", 6 }, { "Sun", 6 },
};

/* The shorthands, as the calendar events they stand for. */
static const struct {
	const char	*name;
	const char	*text;
} sd_short[] = {
	{ "minutely", "*-*-* *:*:00" },
	{ "hourly", "*-*-* *:00:00" },
	{ "daily", "*-*-* 00:00:00" },
	{ "weekly", "Mon *-*-* 00:00:00" },
	{ "monthly", "*-*-01 00:00:00" },
	{ "quarterly", "*-01,04,07,10-01 00:00:00" },
	{ "semiannually", "*-01,07-01 00:00:00" },
	{ "semi-annually", "*-01,07-01 00:00:00" },
	{ "biannually", "*-01,07-01 00:00:00" },
	{ "bi-annually", "*-01,07-01 00:00:00" },
	{ "yearly", "*-01-01 00:00:00" },
	{ "annually", "*-01-01 00:00:00" },
	{ "anually", "*-01-01 00:00:00" },
};

struct sd_ctx {
	char		*why;
	size_t		 whylen;
};

/*
 * One parsed part: its values as bits (bit v - lo; "*" sets them all),
 * and for the day of a "~" date the days it picks in a month of 28, 29,
 * 30 and 31 days (bit d for day d).
 */
struct sd_set {
	uint64_t	 w[4];
	uint32_t	 eom[4];
	int		 star;		/* the part was "*" */
};

static int
sd_err(struct sd_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
sd_err(struct sd_ctx *c, const char *fmt, ...)
{
	char reason[CRON_WHY_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	tz_why_set(c->why, c->whylen, "%s", reason);
	return -1;
}

static int
is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

/*
 * A decimal at *pp: digits, and for seconds an optional fraction of zeros
 * (".000"; "." followed by "." is a range).  0 and *v, or -1.
 */
static int
sd_num(struct sd_ctx *c, enum sd_part part, const char **pp, int64_t *v)
{
	const char *p = *pp, *f;
	int64_t n = 0;

	if (!is_digit(*p))
		return sd_err(c, "%s: \"%.20s\" is not a number", sd_parts[part]
		    .name, p);
	for (; is_digit(*p); p++) {
		n = n * 10 + (*p - '0');
		if (n > NUM_MAX)
			return sd_err(c, "%s: number too large",
			    sd_parts[part].name);
	}
	if (part == SD_SECOND && p[0] == '.' && p[1] != '.') {
		f = ++p;
		while (*p == '0')
			p++;
		if (is_digit(*p))
			return sd_err(c, "second: a fraction of a second is "
			    "not supported (fires are whole seconds)");
		if (p == f)
			return sd_err(c, "second: a decimal point needs digits "
			    "after it");
	}
	*pp = p;
	*v = n;
	return 0;
}

static void
set_put(struct sd_set *s, int bit)
{
	s->w[bit / 64] |= UINT64_C(1) << (bit % 64);
}

/* Every value of the part: what "*" and a missing part mean. */
static void
set_all(struct sd_set *s, enum sd_part part)
{
	int v;

	for (v = sd_parts[part].lo; v <= sd_parts[part].hi; v++)
		set_put(s, v - sd_parts[part].lo);
}

/*
 * One "~" component (start and stop count back from the month's end, 1 =
 * the last day; stop -1 when absent; rep 0 when none) into s->eom: from
 * the earlier day up by rep, to the later day or to the month's end.
 */
static void
eom_put(struct sd_set *s, int start, int stop, int64_t rep)
{
	int i, mdays, d, from, to;

	for (i = 0; i < 4; i++) {
		mdays = 28 + i;
		from = mdays + 1 - start;
		to = rep > 0 ? mdays : from;
		if (stop >= 0) {
			to = from;
			from = mdays + 1 - stop;
		}
		for (d = from; d <= to; d += rep > 0 ? (int)(rep > 31 ? 31 :
		    rep) : 32)
			s->eom[i] |= 1u << d;
	}
}

/*
 * One part at *pp: "*", or a list of components (a "~" day when eom).
 * Stops at a character that is not part of a component; the caller
 * checks what follows.
 */
#define SD_LIST_MAX	241	/* systemd 252 takes 241 elements (its
				 * CALENDARSPEC_COMPONENTS_MAX, 240,
				 * counts those after the first) */

static int
sd_part_parse(struct sd_ctx *c, enum sd_part part, int eom, const char **pp,
    struct sd_set *set)
{
	const char *p = *pp, *s;
	const char *name = sd_parts[part].name;
	int lo = sd_parts[part].lo, hi = sd_parts[part].hi, n = 0;
	int explicit_rep;
	int64_t start, stop, rep, v;
	char tok[48];

	memset(set, 0, sizeof *set);
	if (*p == '*') {
		set->star = 1;
		set_all(set, part);
		*pp = p + 1;
		return 0;
	}
	if (eom)
		hi = 28;	/* days from the end: at most the 28th last */
	for (;;) {
		s = p;
		stop = -1;
		rep = 0;
		if (sd_num(c, part, &p, &start) != 0)
			return -1;
		if (p[0] == '.' && p[1] == '.') {
			p += 2;
			if (sd_num(c, part, &p, &stop) != 0)
				return -1;
			rep = 1;
		}
		explicit_rep = *p == '/';
		if (*p == '/') {
			p++;
			if (sd_num(c, part, &p, &rep) != 0)
				return -1;
			if (rep == 0)
				return sd_err(c, "%s: a repetition of 0", name);
		}
		cron_token_for_msg(s, p, tok, sizeof tok);
		if (part == SD_YEAR) {	/* systemd: 12 is 2012, 89 is 1989 */
			if (start < 100)
				start += start < 70 ? 2000 : 1900;
			if (stop >= 0 && stop < 100)
				stop += stop < 70 ? 2000 : 1900;
		}
		if (start < lo || start > hi || (stop >= 0 &&
		    (stop < lo || stop > hi)))
			return sd_err(c, "%s: \"%s\" out of range %d..%d%s",
			    name, tok, lo, hi, eom ? " (days before the "
			    "month's end)" : "");
		if (stop >= 0 && stop < start)
			return sd_err(c, "%s: \"%s\" is a range that ends "
			    "before it starts", name, tok);
		/* systemd 252 refuses "10..10" in seconds (not "10..10/1"). */
		if (part == SD_SECOND && stop == start && !explicit_rep)
			return sd_err(c, "second: \"%s\" is a range of one "
			    "second (write \"%lld\")", tok, (long long)start);
		if (stop < 0 && rep > 0 && (eom ? start - rep < lo :
		    start + rep > hi))
			return sd_err(c, "%s: \"%s\" never repeats inside "
			    "%d..%d", name, tok, lo, hi);
		/* systemd: a range is cut to a whole number of steps. */
		if (stop > start && rep > 0)
			stop -= (stop - start) % rep;
		if (++n > SD_LIST_MAX)
			return sd_err(c, "%s: more than %d list elements", name,
			    SD_LIST_MAX);
		if (eom) {
			eom_put(set, (int)start, (int)stop, rep);
		} else if (rep == 0) {
			set_put(set, (int)start - lo);
		} else {
			for (v = start; v <= (stop >= 0 ? stop : hi); v += rep)
				set_put(set, (int)(v - lo));
		}
		if (*p != ',')
			break;
		p++;
	}
	*pp = p;
	return 0;
}

/* The weekday list at *pp (none is fine): systemd bits, Monday = bit 0. */
static int
sd_weekdays(struct sd_ctx *c, const char **pp, int *bits)
{
	const char *p = *pp;
	size_t i, len = 0;
	int l = -1, first = 1, j;
	char tok[48];

	*bits = 0;
	for (;;) {
		for (i = 0; i < sizeof sd_days / sizeof sd_days[0]; i++) {
			len = strlen(sd_days[i].name);
			if (strncasecmp(p, sd_days[i].name, len) == 0)
				break;
		}
		if (i == sizeof sd_days / sizeof sd_days[0] && first)
			return 0;	/* no weekdays: the date follows */
		if (i == sizeof sd_days / sizeof sd_days[0] ||
		    strchr("-., ", p[len]) == NULL) {
			cron_token_for_msg(p, p + strcspn(p, " ,."), tok,
			    sizeof tok);
			return sd_err(c, "weekday: \"%s\" is not a weekday "
			    "(Mon..Sun or Monday..Sunday)", tok);
		}
		if (l >= 0) {
			if (l > sd_days[i].nr)
				return sd_err(c, "weekday: a range that wraps "
				    "past Sunday (write \"Fri..Sun,Mon\")");
			for (j = l; j < sd_days[i].nr; j++)
				*bits |= 1 << j;
		}
		*bits |= 1 << sd_days[i].nr;
		p += len;
		if (*p == '\0' || *p == ' ')
			break;
		if (*p == '.' || *p == '-') {
			if (l >= 0)
				return sd_err(c, "weekday: a range cannot go "
				    "on into another one");
			if (*p == '.' && p[1] != '.')
				return sd_err(c, "weekday: \".\" where a range "
				    "needs \"..\"");
			l = sd_days[i].nr;
			p += *p == '.' ? 2 : 1;
		} else {		/* ',' */
			l = -1;
			p++;
		}
		if (*p == '\0' || *p == ' ') {	/* a trailing ',' is fine */
			if (l >= 0)
				return sd_err(c, "weekday: a range without its "
				    "end");
			break;
		}
		first = 0;
	}
	while (*p == ' ')
		p++;
	*pp = p;
	return 0;
}

/* What may follow a part: a character of ok, or the end if end_ok. */
static int
sd_after(struct sd_ctx *c, enum sd_part part, const char *p, const char *ok,
    int end_ok)
{
	char tok[48];

	if (*p == '\0' ? end_ok : strchr(ok, *p) != NULL)
		return 0;
	if (*p == '\0')
		return sd_err(c, "%s: the expression ends where \"%s\" must "
		    "follow", sd_parts[part].name, ok);
	cron_token_for_msg(p, p + (*p == ' ' ? strlen(p) : 1), tok,
	    sizeof tok);
	if (*p == ' ')
		return sd_err(c, "%s: unexpected \"%s\" after it (the parts "
		    "are [WEEKDAYS] [DATE] [TIME] [ZONE], one zone at the "
		    "end)", sd_parts[part].name, tok + 1);
	return sd_err(c, "%s: unexpected \"%s\" (after the %s comes %s\"%s\")",
	    sd_parts[part].name, tok, sd_parts[part].name,
	    end_ok ? "the end or " : "", ok);
}

/* The date at *pp, if one is there: [YEAR-]MONTH-DAY or MONTH~DAY... */
static int
sd_date(struct sd_ctx *c, const char **pp, struct cron_expr *e)
{
	struct sd_set y, m, d;
	const char *p = *pp, *t = p;
	int eom = 0, nparts = 1;

	memset(&y, 0, sizeof y);
	memset(&m, 0, sizeof m);
	memset(&d, 0, sizeof d);
	set_all(&y, SD_YEAR);		/* no date: every day */
	set_all(&m, SD_MONTH);
	set_all(&d, SD_DAY);
	d.star = 1;
	/* One part followed by ':' or the end is an hour: no date. */
	t += strspn(t, "*0123456789.,/");
	if (*p != '\0' && *t != ':' && *t != '\0') {
		for (t = p; *t != '\0' && *t != ' '; t++)
			nparts += *t == '-' || *t == '~';
		if (nparts != 2 && nparts != 3)
			return sd_err(c, "date: \"%.*s\" is not "
			    "[YEAR-]MONTH-DAY (or MONTH~DAY from the month's "
			    "end)", (int)(t - p > 40 ? 40 : t - p), p);
		if (nparts == 3 && (sd_part_parse(c, SD_YEAR, 0, &p, &y) !=
		    0 || sd_after(c, SD_YEAR, p, "-", 0) != 0))
			return -1;
		if (nparts == 3)
			p++;
		if (sd_part_parse(c, SD_MONTH, 0, &p, &m) != 0 ||
		    sd_after(c, SD_MONTH, p, "-~", 0) != 0)
			return -1;
		eom = *p++ == '~';
		if (sd_part_parse(c, SD_DAY, eom, &p, &d) != 0 ||
		    sd_after(c, SD_DAY, p, " ", 1) != 0)
			return -1;
		p += strspn(p, " ");
	}
	memcpy(e->year, y.w, sizeof e->year);
	e->has_year = 1;		/* systemd: never after 2199 */
	e->mon = (uint32_t)(m.w[0] << 1);
	e->dom = (uint32_t)(d.w[0] << 1);
	e->dom_kind = DOM_SET;
	if (eom && !d.star) {		/* "*-*~*" is every day */
		e->dom_kind = DOM_EOM;
		memcpy(e->eom_days, d.eom, sizeof e->eom_days);
	}
	*pp = p;
	return 0;
}

/* The time at p, to the end: HOUR:MINUTE[:SECOND], none is 00:00:00. */
static int
sd_time(struct sd_ctx *c, const char *p, struct cron_expr *e)
{
	struct sd_set h, m, s;

	e->hour = e->min = e->sec = 1;
	e->fixed_time = 1;
	if (*p == '\0')
		return 0;
	if (sd_part_parse(c, SD_HOUR, 0, &p, &h) != 0 ||
	    sd_after(c, SD_HOUR, p, ":", 0) != 0)
		return -1;
	p++;
	if (sd_part_parse(c, SD_MINUTE, 0, &p, &m) != 0 ||
	    sd_after(c, SD_MINUTE, p, ":", 1) != 0)
		return -1;
	memset(&s, 0, sizeof s);
	s.w[0] = 1;
	if (*p == ':') {
		p++;
		if (sd_part_parse(c, SD_SECOND, 0, &p, &s) != 0)
			return -1;
		if (*p != '\0')
			return sd_err(c, "second: \"%.40s\" after the time", p);
	}
	e->hour = (uint32_t)h.w[0];
	e->min = m.w[0];
	e->sec = s.w[0];
	/* cronie's rule, seconds included: '*' makes an interval job. */
	e->fixed_time = !h.star && !m.star && !s.star;
	return 0;
}

int
cron_systemd_parse(const char *text, struct cron_expr *e, char *why,
    size_t whylen)
{
	char buf[CRON_TEXT_MAX + 1];
	struct sd_ctx c = { why, whylen };
	const char *p;
	char *sp;
	size_t len = strlen(text), i;
	int bits;

	if (len > CRON_TEXT_MAX)
		return sd_err(&c, "expression longer than %d bytes",
		    CRON_TEXT_MAX);
	for (i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 ||
		    (unsigned char)text[i] >= 0x7f)
			return sd_err(&c, "byte 0x%02x at offset %zu: a "
			    "calendar event is printable ASCII, its parts "
			    "separated by spaces", (unsigned char)text[i], i);
	if (len == 0)
		return sd_err(&c, "empty calendar event");
	if (text[0] == ' ' || text[len - 1] == ' ')
		return sd_err(&c, "a calendar event neither starts nor ends "
		    "with a space");
	memcpy(buf, text, len + 1);
	e->dialect = CRON_DIALECT_SYSTEMD;

	/* The zone: " UTC" in any case, or a name after the last space. */
	if (len > 4 && strcasecmp(buf + len - 4, " UTC") == 0) {
		buf[len - 4] = '\0';
		(void)snprintf(e->zone, sizeof e->zone, "UTC");
	} else if ((sp = strrchr(buf, ' ')) != NULL &&
	    strpbrk(sp + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz") != NULL) {
		if (!tz_name_ok(sp + 1)) {
			char tok[48];

			cron_token_for_msg(sp + 1, sp + 1 + strlen(sp + 1),
			    tok, sizeof tok);
			return sd_err(&c, "zone: \"%s\" is not a zone name "
			    "(an IANA name such as Europe/Berlin, or UTC)",
			    tok);
		}
		(void)snprintf(e->zone, sizeof e->zone, "%s", sp + 1);
		*sp = '\0';
	}
	if (buf[0] == '\0' || buf[strlen(buf) - 1] == ' ')
		return sd_err(&c, "nothing but a zone, or two spaces "
		    "before it");
	if (buf[0] == '@' && is_digit(buf[1]))
		return sd_err(&c, "\"@SECONDS\" is one instant, not a "
		    "calendar: submit a task with runAt instead");
	if (buf[0] == '@')
		return sd_err(&c, "\"%.20s\" is a cron macro; calendar events "
		    "say \"daily\", \"weekly\", ...", buf);
	for (i = 0; i < sizeof sd_short / sizeof sd_short[0]; i++)
		if (strcasecmp(buf, sd_short[i].name) == 0)
			break;
	p = i < sizeof sd_short / sizeof sd_short[0] ? sd_short[i].text : buf;
	if (sd_weekdays(&c, &p, &bits) != 0)
		return -1;
	/* To 0 = Sunday; none or all seven is every day. */
	e->dow = 0;
	for (i = 0; i < 7; i++)
		if (bits & (1 << i))
			e->dow |= 1u << ((i + 1) % 7);
	if (e->dow == 0)
		e->dow = 0x7f;
	e->dow_kind = DOW_SET;
	if (sd_date(&c, &p, e) != 0)
		return -1;
	return sd_time(&c, p, e);
}
