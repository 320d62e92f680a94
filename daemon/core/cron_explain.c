/*
 * cron_explain.c — a parsed cron expression told in plain English.
 *
 * Owns: cron_explain(), the one-line description `taskspool cron explain`
 * prints ("at 09:30, on Monday to Friday").  Pure: it reads the struct
 * cron_expr that cron.c and cron_systemd.c fill, so the three dialects are
 * told alike, from what the engine will match rather than from the text.
 * The words follow the rules of tests/data/CRON-RULES.md and cron.h (the
 * vixie OR of two restricted day fields, Quartz's L, W and #, systemd's
 * "~").
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/cron.h"
#include "core/cron_impl.h"

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
			put(o, done == total ? " and " : ", ");
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
	if (n < 3 || second < 0)
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

/* minutes / seconds / hours, one of them: "every 15 minutes", ... */
static void
put_unit(struct out *o, const uint64_t *w, int hi, const char *unit,
    const char *at)
{
	int a, k, n = count(w, 0, hi);

	if (n == hi + 1) {
		put(o, "every %s", unit);
	} else if (stepped(w, 0, hi, &a, &k)) {
		put(o, "every %d %ss", k, unit);
		if (a != 0)
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
			put_unit(o, &h, 23, "hour", "");
		return;
	}
	if (ns == 1 && sv == 0) {
		put_unit(o, &m, 59, "minute", "at ");
	} else {
		put_unit(o, &s, 59, "second", "at ");
		put(o, " of ");
		if (nm == 60)
			put(o, "every minute");
		else
			put_unit(o, &m, 59, "minute", "");
	}
	if (nh != 24) {
		put(o, ", during ");
		put_unit(o, &h, 23, "hour", "");
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
			    k == 2 ? "nd" : k == 3 ? "rd" : "th", i);
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
			put(o, "on the last day of the month minus %d",
			    e->dom_n);
		return;
	case DOM_LAST_WD:
		put(o, "on the weekday nearest to the last day of the month");
		if (e->dom_n > 0)
			put(o, " minus %d", e->dom_n);
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

int
cron_explain(const struct cron_expr *e, char *out, size_t outlen)
{
	struct out o = { out, 0, outlen, 0 };
	uint64_t mon = e->mon;
	int dom_says = dom_restricts(e), dow_says = dow_restricts(e);

	if (outlen > 0)
		out[0] = '\0';
	put_time(&o, e);
	put(&o, ", ");
	if (!dom_says && !dow_says)
		put(&o, "every day");
	if (dom_says)
		put_dom(&o, e);
	if (dom_says && dow_says) {
		/* cronie: both restricted and neither starts with '*': OR. */
		const char *join = ", and ", *on = "on ";

		if (e->dialect == CRON_DIALECT_VIXIE && !e->dom_star &&
		    !e->dow_star)
			join = ", or ";
		else if (e->dow_kind == DOW_SET) {
			join = ", if that day is a ";
			on = "";
		}
		put(&o, "%s", join);
		put_dow(&o, e, on);
	} else if (dow_says) {
		put_dow(&o, e, "on ");
	}
	if ((e->mon & 0x1ffe) != 0x1ffe) {
		put(&o, ", in ");
		put_set(&o, &mon, 1, 12, 0, mon_names);
	}
	if (e->has_year && count(e->year, 0, YEAR_LAST - YEAR_FIRST) !=
	    YEAR_LAST - YEAR_FIRST + 1) {
		put(&o, ", in ");
		put_set(&o, e->year, 0, YEAR_LAST - YEAR_FIRST, YEAR_FIRST,
		    NULL);
	}
	return o.full ? -1 : (int)o.len;
}
