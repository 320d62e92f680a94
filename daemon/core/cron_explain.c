/*
 * cron_explain.c — a parsed cron expression told in plain English.
 *
 * Owns: cron_explain(), the one-line description `taskspool cron explain`
 * prints ("at 09:30, on Monday to Friday").  Pure: it reads the struct
 * cron_expr that cron.c and cron_systemd.c fill, so the three dialects are
 * told alike, from what the engine will match rather than from the text.
 * The words follow the rules of tests/data/CRON-RULES.md and cron.h (the
 * vixie OR of two restricted day fields, Quartz's L, W and #, systemd's
 * "~"); and cron_explain_change(), what a zone's next offset change does
 * to the schedule.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/cron.h"
#include "core/cron_impl.h"
#include "core/tz.h"

static const char *const wd_names[] = {
	"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
	"Saturday"
};

static const char *const mon_names[] = {
	"", "January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"
};

/* An output buffer that never overflows; full is set once cut. */
struct out {
	char	*p;
	size_t	 len, cap;
	int	 full;
	const char *conj;	/* put_set's last joiner; NULL: " and " */
};

static void
put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2,
    3)));

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full || o->cap == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->full = 1;
		o->len = o->cap - 1;
	} else {
		o->len += (size_t)n;
	}
}

static int
bit(const uint64_t *w, int i)
{
	return (int)((w[i / 64] >> (i % 64)) & 1);
}

static int
count(const uint64_t *w, int lo, int hi)
{
	int i, n = 0;

	for (i = lo; i <= hi; i++)
		n += bit(w, i);
	return n;
}

/*
 * The values lo..hi set in w, as English: "9 to 17", "0, 15 and 30",
 * names[v] when names is given.  offset is added to each value shown
 * (years: bit 0 is 1970).
 */
static void
put_set(struct out *o, const uint64_t *w, int lo, int hi, int offset,
    const char *const *names)
{
	int v, end, first = 1, done = 0, total = 0;

	for (v = lo; v <= hi; v++) {	/* the items printed */
		if (!bit(w, v))
			continue;
		for (end = v; end + 1 <= hi && bit(w, end + 1); end++)
			;
		total += end >= v + 2 ? 1 : end - v + 1;
		v = end;
	}
	for (v = lo; v <= hi; v++) {
		if (!bit(w, v))
			continue;
		for (end = v; end + 1 <= hi && bit(w, end + 1); end++)
			;
		done++;
		if (!first)
			put(o, "%s", done == total ? (o->conj != NULL ?
			    o->conj : " and ") : ", ");
		first = 0;
		if (names != NULL)
			put(o, "%s", names[v]);
		else
			put(o, "%d", v + offset);
		if (end >= v + 2) {	/* three or more in a row */
			if (names != NULL)
				put(o, " to %s", names[end]);
			else
				put(o, " to %d", end + offset);
			v = end;
		}
	}
}

/* A step pattern: values a, a+k, ... to the top; 1 and *a, *k if so. */
static int
stepped(const uint64_t *w, int lo, int hi, int *a, int *k)
{
	int v, first = -1, second = -1, n = count(w, lo, hi);

	for (v = lo; v <= hi; v++)
		if (bit(w, v)) {
			if (first < 0)
				first = v;
			else if (second < 0)
				second = v;
		}
	if (n < 3 || second < 0 || second - first < 2)	/* a run: no step */
		return 0;
	for (v = lo; v <= hi; v++)
		if (bit(w, v) != (v >= first && (v - first) %
		    (second - first) == 0))
			return 0;
	if (first + (second - first) * n <= hi)	/* must run to the top */
		return 0;
	*a = first;
	*k = second - first;
	return 1;
}

/* The English ordinal suffix of n: "st" (1, 21, 31), "nd", "rd", "th". */
static const char *
nth(int n)
{
	if (n % 100 >= 11 && n % 100 <= 13)
		return "th";
	return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" :
	    "th";
}

/*
 * minutes / seconds / hours, one of them: "every 15 minutes", "every 7th
 * minute from 0 to 56" (a step that does not divide the hour: the field
 * starts again at 0 each hour), "every 2nd hour" (ordinal: the hours,
 * which follow "during" or "of"), "minutes 1 to 5".
 */
static void
put_unit(struct out *o, const uint64_t *w, int hi, const char *unit,
    const char *at, int ordinal)
{
	int a, k, n = count(w, 0, hi), last;

	if (n == hi + 1) {
		put(o, "every %s", unit);
	} else if (stepped(w, 0, hi, &a, &k)) {
		last = a + k * (n - 1);
		if (!ordinal && (hi + 1) % k == 0 && a < k)
			put(o, "every %d %ss", k, unit);
		else
			put(o, "every %d%s %s", k, nth(k), unit);
		if ((hi + 1) % k != 0 || a >= k)
			put(o, " from %d to %d", a, last);
		else if (a != 0)
			put(o, " from %s %d", unit, a);
	} else {
		put(o, "%s%s%s ", at, unit, n > 1 ? "s" : "");
		put_set(o, w, 0, hi, 0, NULL);
	}
}

static void
put_time(struct out *o, const struct cron_expr *e)
{
	uint64_t h = e->hour, m = e->min, s = e->sec;
	int nh = count(&h, 0, 23), nm = count(&m, 0, 59), ns = count(&s, 0, 59);
	int hv = __builtin_ctzll(h), mv = __builtin_ctzll(m);
	int sv = __builtin_ctzll(s);

	if (nh == 1 && nm == 1 && ns == 1) {
		put(o, "at %02d:%02d", hv, mv);
		if (sv != 0)
			put(o, ":%02d", sv);
		return;
	}
	if (ns == 1 && sv == 0 && nm == 1) {
		put(o, "at minute %d of ", mv);
		if (nh == 24)
			put(o, "every hour");
		else
			put_unit(o, &h, 23, "hour", "", 1);
		return;
	}
	if (ns == 1 && sv == 0) {
		put_unit(o, &m, 59, "minute", "at ", 0);
	} else {
		put_unit(o, &s, 59, "second", "at ", 0);
		put(o, " of ");
		if (nm == 60)
			put(o, "every minute");
		else
			put_unit(o, &m, 59, "minute", "", 0);
	}
	if (nh != 24) {
		put(o, ", during ");
		put_unit(o, &h, 23, "hour", "", 1);
	} else if (nm != 60 && !stepped(&m, 0, 59, &hv, &mv)) {
		/* "at minutes 1 to 5" alone reads as once a day */
		put(o, " of every hour");
	}
}

static void
put_weekdays(struct out *o, uint32_t dow, const char *on)
{
	uint64_t w = dow;

	if (dow == 0x3e) {
		put(o, "%sweekdays (Monday to Friday)", on);
		return;
	}
	if (dow == 0x41) {	/* Sunday is bit 0; say it the usual way */
		put(o, "%sSaturday and Sunday", on);
		return;
	}
	if (*on != '\0' && __builtin_popcount(dow & 0x7f) == 1) {
		put(o, "%s%ss", on, wd_names[__builtin_ctz(dow & 0x7f)]);
		return;			/* "on Sundays" */
	}
	put(o, "%s", on);
	put_set(o, &w, 0, 6, 0, wd_names);
}

static const char *
ordinal(int n)
{
	static const char *const ord[] = { "", "first", "second", "third",
	    "fourth", "fifth" };

	return n >= 1 && n <= 5 ? ord[n] : "?";
}

/* Whether the day-of-month part restricts the days (else: every day). */
static int
dom_restricts(const struct cron_expr *e)
{
	return e->dom_kind != DOM_ANY && (e->dom_kind != DOM_SET ||
	    (e->dom & 0xfffffffeu) != 0xfffffffeu);
}

/* Whether the day-of-week part restricts the days. */
static int
dow_restricts(const struct cron_expr *e)
{
	return e->dow_kind != DOW_ANY && (e->dow_kind != DOW_SET ||
	    (e->dow & 0x7f) != 0x7f);
}

/* Days of month; call when dom_restricts(e). */
static void
put_dom(struct out *o, const struct cron_expr *e)
{
	uint64_t w = e->dom;
	int i, k;

	switch (e->dom_kind) {
	case DOM_SET:
		if ((e->dom & 0xfffffffeu) == 0xfffffffeu)
			return;
		if (stepped(&w, 1, 31, &i, &k)) {
			put(o, "on every %d%s day of the month from day %d", k,
			    nth(k), i);
			return;
		}
		put(o, "on day%s ", count(&w, 1, 31) > 1 ? "s" : "");
		put_set(o, &w, 1, 31, 0, NULL);
		put(o, " of the month");
		return;
	case DOM_ANY:
		return;
	case DOM_LAST:
		if (e->dom_n == 0)
			put(o, "on the last day of the month");
		else
			put(o, "on the %d%s-last day of the month",
			    e->dom_n + 1, nth(e->dom_n + 1));
		return;
	case DOM_LAST_WD:
		put(o, "on the weekday nearest to the ");
		if (e->dom_n > 0)
			put(o, "%d%s-", e->dom_n + 1, nth(e->dom_n + 1));
		put(o, "last day of the month");
		return;
	case DOM_NEAR_WD:
		put(o, "on the weekday nearest to day %d of the month (never "
		    "leaving the month)", e->dom_n);
		return;
	case DOM_EOM:
		/* Days counted back from the end (1 = last), from 31 days. */
		w = 0;
		for (i = 1; i <= 28; i++)
			if ((e->eom_days[3] >> (32 - i)) & 1)
				w |= UINT64_C(1) << i;
		if ((w & (w + 2)) == 0) {	/* 1..N: the last N days */
			int n = __builtin_popcountll(w);

			if (n == 1)
				put(o, "on the last day of the month");
			else
				put(o, "on the last %d days of the month", n);
		} else if (__builtin_popcountll(w) == 1) {
			int d = __builtin_ctzll(w);

			put(o, "on the %d%s-last day of the month", d, nth(d));
		} else {
			put(o, "on day%s ", __builtin_popcountll(w) > 1 ? "s" :
			    "");
			put_set(o, &w, 1, 28, 0, NULL);
			put(o, " counted back from the month's end (1 = the "
			    "last day)");
		}
		return;
	}
}

/* The weekday part (call when dow_restricts(e)); on: "on " or "". */
static void
put_dow(struct out *o, const struct cron_expr *e, const char *on)
{
	switch (e->dow_kind) {
	case DOW_SET:
		if ((e->dow & 0x7f) == 0x7f)
			return;
		put_weekdays(o, e->dow, on);
		return;
	case DOW_ANY:
		return;
	case DOW_LAST:
		put(o, "on the last %s of the month", wd_names[e->dow_wd]);
		return;
	case DOW_NTH:
		put(o, "on the %s %s of the month", ordinal(e->dow_k),
		    wd_names[e->dow_wd]);
		return;
	}
}

/*
 * The weekday w when e is "the last 7 days of the month" (systemd "~07"
 * or the same days by number) and that one weekday: the last w of the
 * month.  Else -1.
 */
static int
last_week_day(const struct cron_expr *e)
{
	if (e->dom_kind != DOM_EOM || e->dow_kind != DOW_SET ||
	    __builtin_popcount(e->dow & 0x7f) != 1)
		return -1;
	for (int len = 0; len < 4; len++)	/* months of 28..31 days */
		if (e->eom_days[len] != (uint32_t)(0x7fu << (22 + len)))
			return -1;
	return __builtin_ctz(e->dow & 0x7f);
}

/*
 * When the days of month e names do not exist in every month it names:
 * " (February has no day 31: it never fires)", " (only in the months
 * that have day 31)", " (in February only in leap years)"; told from the
 * first (smallest) day named.  Call for a DOM_SET part with no weekday part.
 */
static void
put_short_months(struct out *o, const struct cron_expr *e)
{
	static const int mdays[] = { 0, 31, 29, 31, 30, 31, 30, 31, 31, 30,
	    31, 30, 31 };
	uint64_t w = e->dom;
	int first = 0, m, d, missing = 0, having = 0, only = 0;

	for (d = 1; d <= 31 && first == 0; d++)
		if (bit(&w, d))
			first = d;
	for (m = 1; m <= 12; m++) {
		if (!((e->mon >> m) & 1))
			continue;
		if (mdays[m] >= first) {
			having++;
		} else {
			missing++;
			only = m;
		}
	}
	if (first == 0)
		return;
	if (missing == 0) {
		/* Day 29 of February exists in leap years only. */
		if (first == 29 && ((e->mon >> 2) & 1))
			put(o, having == 1 ? " (February has it only in leap "
			    "years)" : " (in February only in leap years)");
		return;
	}
	if (having == 0 && missing == 1)
		put(o, " (%s has no day %d: it never fires)", mon_names[only],
		    first);
	else if (having == 0)
		put(o, " (none of those months has a day %d: it never fires)",
		    first);
	else
		put(o, " (only in the months that have day %d)", first);
}

/* The years part, unless every year: ", every 2nd year from 2026",
 * ", from 2027 to 2030", ", in 2027", ", in 2027 and 2029". */
static void
put_years(struct out *o, const uint64_t *y)
{
	int top = YEAR_LAST - YEAR_FIRST, n = count(y, 0, top), a, k, i;
	int first = -1, last = -1;

	if (n == top + 1 || n == 0)
		return;
	for (i = 0; i <= top; i++)
		if (bit(y, i)) {
			if (first < 0)
				first = i;
			last = i;
		}
	if (n > 2 && last - first + 1 == n) {
		put(o, ", from %d to %d", first + YEAR_FIRST, last +
		    YEAR_FIRST);
	} else if (stepped(y, 0, top, &a, &k)) {
		put(o, ", every %d%s year from %d", k, nth(k), a +
		    YEAR_FIRST);
	} else {
		put(o, ", in ");
		put_set(o, y, 0, top, YEAR_FIRST, NULL);
	}
}

int
cron_explain(const struct cron_expr *e, char *out, size_t outlen)
{
	struct out o = { out, 0, outlen, 0, NULL };
	uint64_t mon = e->mon, dom = e->dom;
	int dom_says = dom_restricts(e), dow_says = dow_restricts(e), a, k;

	/* cronie ORs two day fields neither of which starts with '*': when
	 * one of them lists every value, every day matches. */
	if (e->dialect == CRON_DIALECT_VIXIE && !e->dom_star && !e->dow_star &&
	    ((e->dom_kind == DOM_SET && !dom_says) || (e->dow_kind == DOW_SET &&
	    !dow_says)))
		dom_says = dow_says = 0;
	if (outlen > 0)
		out[0] = '\0';
	put_time(&o, e);
	put(&o, ", ");
	if (!dom_says && !dow_says)
		put(&o, "every day");
	if (dom_says && !dow_says && e->dom_kind == DOM_SET &&
	    (e->mon & 0x1ffe) != 0x1ffe && !stepped(&dom, 1, 31, &a, &k)) {
		/* "on day 1 of January, April, July and October" */
		put(&o, "on day%s ", count(&dom, 1, 31) > 1 ? "s" : "");
		put_set(&o, &dom, 1, 31, 0, NULL);
		put(&o, " of ");
		put_set(&o, &mon, 1, 12, 0, mon_names);
		mon = 0x1ffe;	/* told */
	} else if (dom_says && !(dow_says && last_week_day(e) >= 0))
		put_dom(&o, e);
	if (dom_says && dow_says) {
		/* cronie: both restricted and neither starts with '*': OR. */
		const char *join = ", and ", *on = "on ";

		if (last_week_day(e) >= 0) {
			/* "~07" and one weekday: the last such weekday. */
			put(&o, "on the last %s of the month",
			    wd_names[last_week_day(e)]);
			goto months;
		}
		if (e->dialect == CRON_DIALECT_VIXIE && !e->dom_star &&
		    !e->dow_star)
			join = ", or ";
		else if (e->dow_kind == DOW_SET) {
			join = ", if that day is a ";
			on = "";
		}
		put(&o, "%s", join);
		/* "if that day is a Monday or Tuesday" */
		if (*on == '\0')
			o.conj = " or ";
		put_dow(&o, e, on);
		o.conj = NULL;
	} else if (dow_says) {
		put_dow(&o, e, "on ");
	}
months:
	if (__builtin_popcountll(mon & 0x1ffe) == 1 && !o.full && o.len >= 13 &&
	    strcmp(o.p + o.len - 13, " of the month") == 0) {
		/* "on the last Monday of May" */
		o.len -= 13;
		put(&o, " of %s", mon_names[__builtin_ctzll(mon & 0x1ffe)]);
	} else if ((mon & 0x1ffe) != 0x1ffe) {
		put(&o, ", in ");
		put_set(&o, &mon, 1, 12, 0, mon_names);
	}
	if (dom_says && !dow_says && e->dom_kind == DOM_SET)
		put_short_months(&o, e);
	if (e->has_year)
		put_years(&o, e->year);
	return o.full ? -1 : (int)o.len;
}

/* --- the next offset change ------------------------------------------ */

/* "YYYY-MM-DD" and "HH:MM:SS" of wall-clock seconds w (u: a UTC zone). */
static void
wall_parts(const struct tz *u, int64_t w, char *date, char *hms)
{
	char buf[TZ_RFC3339_MAX];

	if (tz_format_rfc3339(u, w, buf, sizeof buf) != 0) {
		strcpy(date, "?");
		strcpy(hms, "?");
		return;
	}
	memcpy(date, buf, 10);
	date[10] = '\0';
	memcpy(hms, buf + 11, 8);
	hms[8] = '\0';
}

/*
 * The times of e on the wall-clock line u in [lo, hi) (local seconds),
 * as "02:00:00, 02:20:00 and 02:40:00" (at most 6, then "..."; a time
 * on a later date than the first has it in parentheses), into o;
 * returns how many there are (7 meaning more than 6).
 */
static int
times_in(const struct cron_expr *e, const struct tz *u, int64_t lo,
    int64_t hi, struct out *o)
{
	char d[16], d0[16], t[16];
	int64_t w, ws[7];
	int n = 0, i;

	for (w = lo - 1; n < 7 && cron_next_fire(e, u, w, &w) == 1 && w < hi;)
		ws[n++] = w;
	for (i = 0; i < n && i < 6; i++) {
		wall_parts(u, ws[i], d, t);
		if (i == 0)
			memcpy(d0, d, sizeof d0);
		put(o, "%s%s", i == 0 ? "" : n <= 6 && i == n - 1 ? " and " :
		    ", ", t);
		if (strcmp(d, d0) != 0)	/* past midnight: its own date */
			put(o, " (%s)", d);
	}
	if (n > 6)
		put(o, ", ...");
	return n;
}

int
cron_explain_change(const struct cron_expr *e, const struct tz *z,
    int64_t from_s, struct cron_change *c)
{
	char d1[16], t1[16], d2[16], t2[16], dw[16], tw[16], list[160];
	struct out o = { list, 0, sizeof list, 0, NULL };
	struct out fx;
	struct tz *u;
	int64_t T, w, lo, hi;
	int32_t jump;
	int fixed = cron_is_fixed_time(e), many;

	if (!tz_next_transition(z, from_s, &T) || T - from_s >
	    CRON_CHANGE_LOOK_S)
		return 0;
	if ((u = tz_new_utc("wall")) == NULL)
		return -1;
	memset(c, 0, sizeof(*c));
	c->at = T;
	c->before = tz_offset_at(z, T - 1);
	c->after = tz_offset_at(z, T);
	jump = c->after - c->before;
	c->skipped = jump > 0;
	cron_offset_text(c->before, c->before_text, sizeof c->before_text);
	cron_offset_text(c->after, c->after_text, sizeof c->after_text);
	if (tz_format_rfc3339(z, T, c->at_text, sizeof c->at_text) != 0)
		strcpy(c->at_text, "?");
	/* The wall times skipped ([T+before, T+after)) or repeated. */
	lo = T + (jump > 0 ? c->before : c->after);
	hi = T + (jump > 0 ? c->after : c->before);
	wall_parts(u, lo, d1, t1);
	wall_parts(u, hi - 1, d2, t2);
	if (strcmp(d1, d2) == 0)
		(void)snprintf(c->range, sizeof c->range, "%s to %s on %s", t1,
		    t2, d1);
	else			/* across midnight */
		(void)snprintf(c->range, sizeof c->range, "%s on %s to %s on "
		    "%s", t1, d1, t2, d2);
	(void)snprintf(c->head, sizeof c->head, "offset change at %s (%s to "
	    "%s): wall times %s %s", c->at_text, c->before_text,
	    c->after_text, c->range, c->skipped ? "do not exist" :
	    "occur twice");
	fx = (struct out){ c->effect, 0, sizeof c->effect, 0, NULL };
	list[0] = '\0';
	if (cron_next_fire(e, u, lo - 1, &w) != 1 || w >= hi) {
		put(&fx, "none of its times falls in them: this change does "
		    "not affect it");
		tz_free(u);
		return 1;
	}
	c->affected = 1;
	wall_parts(u, w, dw, tw);
	many = times_in(e, u, lo, hi, &o) > 1;
	if ((jump > 0 ? jump : -jump) > CRON_DST_MAX_S) {
		put(&fx, "a jump of more than 3 hours is a clock correction, "
		    "not DST: %s on %s %s", list, dw, jump > 0 ?
		    (many ? "are skipped, not caught up" :
		    "is skipped, not caught up") : (many ? "fire again" :
		    "fires again"));
	} else if (jump > 0 && fixed) {
		wall_parts(u, T + c->after, d2, t2);	/* the jump's end */
		put(&fx, "on %s it fires once at %s, the first instant after "
		    "the jump, because %s %s (fixed-time: a skipped run "
		    "happens at once)", dw, t2, list, many ?
		    "do not exist" : "does not exist");
	} else if (jump > 0) {
		put(&fx, "%s on %s %s (interval: it follows elapsed time; no "
		    "catch-up)", list, dw, many ? "do not occur" :
		    "does not occur");
	} else if (fixed) {
		put(&fx, "%s on %s %s twice; %s on the first pass only (%s; "
		    "fixed-time: never twice)", list, dw, many ? "occur" :
		    "occurs", many ? "each fires" : "it fires",
		    c->before_text);
	} else {
		put(&fx, "%s on %s %s twice (%s, then %s; interval: elapsed "
		    "time goes on)", list, dw, many ? "fire" : "fires",
		    c->before_text, c->after_text);
	}
	tz_free(u);
	return 1;
}

void
cron_offset_text(int32_t off, char *out, size_t outlen)
{
	int32_t a = off < 0 ? -off : off;

	(void)snprintf(out, outlen, "%c%02d:%02d", off < 0 ? '-' : '+',
	    (int)(a / 3600 % 100), (int)(a / 60 % 60));
}

json_t *
cron_change_json(const struct cron_change *c)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:s}", "at", c->at_text,
	    "offsetBefore", c->before_text, "offsetAfter", c->after_text,
	    "wallTimes", c->range, "wallTimesAre", c->skipped ? "skipped" :
	    "repeated", "affected", c->affected, "effect", c->effect);
}
