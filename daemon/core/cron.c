/*
 * cron.c — cron expressions (Vixie and Quartz) and their next fire time.
 *
 * Owns: the grammar of both dialects and the search for the first fire
 * instant after a given one in a given zone, DST included.  Pure: no I/O,
 * no clock, no logging, no globals; the zone comes in as a loaded
 * struct tz and all times are arguments.
 *
 * Sources: cron(5) and cronie's entry.c/cron.c for the vixie grammar, the
 * DOM/DOW rule (DOM_STAR/DOW_STAR: the field's first character is '*') and
 * the DST behaviour (fixed-time vs wildcard jobs, jumps over 3 h treated
 * as clock corrections); the Quartz 2.3.2 CronExpression documentation for
 * the quartz dialect; tests/data/CRON-RULES.md where those disagree or are
 * silent.
 *
 * How the search works (cron_next_fire): the zone's timeline is cut into
 * segments of constant UTC offset.  Inside a segment wall time and
 * elapsed time move together, so the first matching wall time is found by
 * a plain calendar search (cal_next: month by month, days as bitmasks,
 * times of day as bitmasks).  Segments are visited in UTC order, and the
 * DST rules live only at their borders: entering a segment through a
 * forward jump, a fixed-time job whose wall time lies in the skipped range
 * fires at the jump; entering through a backward jump, a fixed-time job
 * skips the repeated wall times.  So the first candidate found is the
 * answer.
 *
 * Errors: bad expressions are reported by cron_parse() (NULL + errno +
 * reason); nothing here aborts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cron.h"
#include "core/cron_impl.h"
#include "core/tz.h"

#define CRON_FIELDS_MAX	8	/* more than any dialect takes */
#define CRON_NUM_MAX	100000	/* numbers must stay below this */
#define YEAR_LAST_FIRE	9999	/* never search past this year */

/* Values of one field while parsing: bit v - base for value v. */
struct cron_set {
	uint64_t		 w[4];
};

struct field_def {
	const char		*name;
	int			 lo, hi;	/* accepted values */
	int			 star_hi;	/* end of '*', "N/step" */
	int			 step_max;	/* quartz: max increment */
	const char *const	*names;		/* 3-letter names, or NULL */
	int			 names_base;	/* value of names[0] */
};

static const char *const mon_names[] = {
	"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
	"JUL", "AUG", "SEP", "OCT", "NOV", "DEC", NULL
};

static const char *const dow_names[] = {
	"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", NULL
};

/*
 * Vixie (cron(5)): weekdays 0-7, 0 and 7 Sunday; '*' and "N/step" stop
 * at 6 so that 7, an alias, never extends a stepped range
 * (CRON-RULES.md 4.2: MON/2 is Mon, Wed, Fri).
 */
static const struct field_def vixie_fields[] = {
	[FID_SEC]  = { "second", 0, 0, 0, 0, NULL, 0 },
	[FID_MIN]  = { "minute", 0, 59, 59, 0, NULL, 0 },
	[FID_HOUR] = { "hour", 0, 23, 23, 0, NULL, 0 },
	[FID_DOM]  = { "day-of-month", 1, 31, 31, 0, NULL, 0 },
	[FID_MON]  = { "month", 1, 12, 12, 0, mon_names, 1 },
	[FID_DOW]  = { "day-of-week", 0, 7, 6, 0, dow_names, 0 },
	[FID_YEAR] = { "year", 0, 0, 0, 0, NULL, 0 },
};

/* Quartz 2.3.2: weekdays 1-7 with 1 = SUN; its own increment limits. */
static const struct field_def quartz_fields[] = {
	[FID_SEC]  = { "second", 0, 59, 59, 59, NULL, 0 },
	[FID_MIN]  = { "minute", 0, 59, 59, 59, NULL, 0 },
	[FID_HOUR] = { "hour", 0, 23, 23, 23, NULL, 0 },
	[FID_DOM]  = { "day-of-month", 1, 31, 31, 31, NULL, 0 },
	[FID_MON]  = { "month", 1, 12, 12, 12, mon_names, 1 },
	[FID_DOW]  = { "day-of-week", 1, 7, 7, 7, dow_names, 1 },
	[FID_YEAR] = { "year", YEAR_FIRST, YEAR_LAST, YEAR_LAST,
	    YEAR_LAST - YEAR_FIRST + 1, NULL, 0 },
};

static const enum cron_fid vixie_order[] = {
	FID_MIN, FID_HOUR, FID_DOM, FID_MON, FID_DOW
};

static const enum cron_fid quartz_order[] = {
	FID_SEC, FID_MIN, FID_HOUR, FID_DOM, FID_MON, FID_DOW, FID_YEAR
};

/* cronie entry.c; @hourly is a wildcard job since its hour is '*'. */
static const struct {
	const char	*name;
	const char	*text;
} cron_macros[] = {
	{ "@yearly", "0 0 1 1 *" },
	{ "@annually", "0 0 1 1 *" },
	{ "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" },
	{ "@daily", "0 0 * * *" },
	{ "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

/* State of one cron_parse() call. */
struct parse_ctx {
	enum cron_dialect	 dialect;
	const struct field_def	*f;
	enum cron_fid		 fid;
	char			*why;
	size_t			 whylen;
};

/* ---- messages --------------------------------------------------------- */


void
cron_token_for_msg(const char *s, const char *end, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; s + i < end && i < 40 && i + 1 < outlen; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (s + i < end && i >= 3 && i + 1 < outlen)
		memcpy(out + i - 3, "...", 3);
	out[i] = '\0';
}

/* `<field>: "<token>" <reason>`, the form every field error takes. */
static int
perr(struct parse_ctx *c, const char *s, const char *end, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static int
perr(struct parse_ctx *c, const char *s, const char *end, const char *fmt,
    ...)
{
	char tok[48], reason[CRON_WHY_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	cron_token_for_msg(s, end, tok, sizeof tok);
	tz_why_set(c->why, c->whylen, "%s: \"%s\" %s", c->f->name, tok, reason);
	return -1;
}

/* ---- parsing ---------------------------------------------------------- */

/* A byte as it may appear in a message. */
static int
show_ch(int ch)
{
	return ch >= 0x20 && ch < 0x7f ? ch : '?';
}

static int
up(int ch)
{
	return ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch;
}

static int
is_digit_c(int ch)
{
	return ch >= '0' && ch <= '9';
}

static int
is_alpha_c(int ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}

static int
is_space_c(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
	    ch == '\v' || ch == '\f';
}

static void
set_add(struct cron_set *set, int bit)
{
	set->w[bit / 64] |= UINT64_C(1) << (bit % 64);
}

static int
set_has(const struct cron_set *set, int bit)
{
	return (set->w[bit / 64] >> (bit % 64)) & 1;
}

/* Digits at *pp (before end) into *v; -1 if none or too large. */
static int
num_parse(const char **pp, const char *end, int *v)
{
	const char *p = *pp;
	long n = 0;

	if (p >= end || !is_digit_c(*p))
		return -1;
	while (p < end && is_digit_c(*p)) {
		n = n * 10 + (*p++ - '0');
		if (n >= CRON_NUM_MAX)
			return -1;
	}
	*v = (int)n;
	*pp = p;
	return 0;
}

/*
 * A value at *pp: a number, or a 3-letter name where the field has names
 * (any case, as cronie and Quartz).  Range checks are the caller's.
 */
static int
atom_parse(struct parse_ctx *c, const char *elem, const char **pp,
    const char *end, int *v)
{
	const char *p = *pp, *q;
	int i, j;

	if (p < end && is_digit_c(*p)) {
		if (num_parse(pp, end, v) != 0)
			return perr(c, elem, end, "number too large");
		return 0;
	}
	for (q = p; q < end && is_alpha_c(*q); q++)
		;
	if (q == p) {
		if (p == end)
			return perr(c, elem, end, "missing value");
		return perr(c, elem, end, "unexpected \"%c\"",
		    show_ch(*p));
	}
	if (c->f->names == NULL)
		return perr(c, elem, end, "names are not allowed here");
	for (i = 0; q - p == 3 && c->f->names[i] != NULL; i++) {
		for (j = 0; j < 3 && up(p[j]) == c->f->names[i][j]; j++)
			;
		if (j == 3) {
			*v = c->f->names_base + i;
			*pp = q;
			return 0;
		}
	}
	return perr(c, elem, end, "unknown name");
}

/* Value v of the field into the set, as a bit index. */
static int
value_bit(const struct parse_ctx *c, int v)
{
	return c->fid == FID_YEAR ? v - YEAR_FIRST : v;
}

/* "*", "a", "a-b", each optionally "/step"; "a/step" means a-max/step. */
static int
elem_plain(struct parse_ctx *c, const char *s, const char *end,
    struct cron_set *set)
{
	const struct field_def *f = c->f;
	const char *p = s;
	int a, b, step = 1, star = 0, range = 0, period, v;

	if (p < end && *p == '*') {
		p++;
		a = f->lo;
		b = f->star_hi;
		star = 1;
	} else {
		if (atom_parse(c, s, &p, end, &a) != 0)
			return -1;
		b = a;
		if (p < end && *p == '-') {
			p++;
			if (atom_parse(c, s, &p, end, &b) != 0)
				return -1;
			range = 1;
		}
	}
	if (p < end && *p == '/') {
		p++;
		if (num_parse(&p, end, &step) != 0)
			return perr(c, s, end,
			    "needs a step number after \"/\"");
		if (step == 0)
			return perr(c, s, end, "step must be at least 1");
		if (c->dialect == CRON_DIALECT_QUARTZ && step > f->step_max)
			return perr(c, s, end,
			    "increment %d too large (at most %d)", step,
			    f->step_max);
		if (!star && !range)
			b = a > f->star_hi ? a : f->star_hi;
	}
	if (p != end)
		return perr(c, s, end, "unexpected \"%c\"",
		    show_ch(*p));
	if (a < f->lo || a > f->hi || b < f->lo || b > f->hi)
		return perr(c, s, end, "out of range %d-%d", f->lo, f->hi);
	if (a > b) {
		if (c->dialect == CRON_DIALECT_VIXIE && c->fid == FID_DOW &&
		    b == 0)
			b = 7;	/* cronie: "SAT-SUN" is 6-7 */
		else if (c->dialect == CRON_DIALECT_VIXIE ||
		    c->fid == FID_YEAR)
			return perr(c, s, end, "is a reversed range");
	}
	if (a <= b) {
		for (v = a; v <= b; v += step)
			set_add(set, value_bit(c, v));
		return 0;
	}
	/* Quartz wraps: 22-2 is 22,23,0,1,2; FRI-MON is Fri..Mon. */
	period = f->hi - f->lo + 1;
	for (v = a; v <= b + period; v += step)
		set_add(set, value_bit(c, f->lo + (v - f->lo) % period));
	return 0;
}

/* Quartz day-of-month "L", "L-n", "LW", "L-nW" or "nW"; 1 if it was one. */
static int
elem_dom_special(struct parse_ctx *c, const char *s, const char *end,
    struct cron_expr *e)
{
	const char *p = s;
	int n = 0;

	if (up(*p) == 'L') {
		p++;
		if (p < end && *p == '-') {
			p++;
			if (num_parse(&p, end, &n) != 0)
				return perr(c, s, end,
				    "needs a number after \"L-\"");
			if (n > 30)
				return perr(c, s, end, "offset from the last "
				    "day must be at most 30");
		}
		e->dom_kind = DOM_LAST;
		if (p < end && up(*p) == 'W') {
			p++;
			e->dom_kind = DOM_LAST_WD;
		}
		if (p != end)
			return perr(c, s, end, "unexpected \"%c\"",
			    show_ch(*p));
		e->dom_n = n;
		return 1;
	}
	if (end - s >= 2 && up(end[-1]) == 'W' && is_digit_c(*s)) {
		if (num_parse(&p, end - 1, &n) != 0 || p != end - 1)
			return perr(c, s, end, "bad day before \"W\"");
		/* Quartz 2.3.2 takes 0W and then hangs: refuse it. */
		if (n < 1 || n > 31)
			return perr(c, s, end, "out of range 1-31");
		e->dom_kind = DOM_NEAR_WD;
		e->dom_n = n;
		return 1;
	}
	return 0;
}

/* Quartz day-of-week "L", "nL", "n#k" (n a number or a name). */
static int
elem_dow_special(struct parse_ctx *c, const char *s, const char *end,
    struct cron_expr *e, struct cron_set *set)
{
	const char *p = s, *hash;
	int v, k;

	if (end - s == 1 && up(*s) == 'L') {
		set_add(set, 7);	/* Quartz: "L" alone is 7 = SAT */
		return 1;
	}
	for (hash = s; hash < end && *hash != '#'; hash++)
		;
	if (hash < end) {
		if (atom_parse(c, s, &p, hash, &v) != 0)
			return -1;
		if (p != hash)
			return perr(c, s, end, "unexpected \"%c\"",
			    show_ch(*p));
		if (v < c->f->lo || v > c->f->hi)
			return perr(c, s, end, "out of range %d-%d",
			    c->f->lo, c->f->hi);
		p = hash + 1;
		if (num_parse(&p, end, &k) != 0 || p != end || k < 1 || k > 5)
			return perr(c, s, end, "needs #1 to #5");
		e->dow_kind = DOW_NTH;
		e->dow_wd = v - 1;
		e->dow_k = k;
		return 1;
	}
	if (end - s >= 2 && up(end[-1]) == 'L') {
		if (atom_parse(c, s, &p, end - 1, &v) != 0)
			return -1;
		if (p != end - 1)
			return perr(c, s, end, "unexpected \"%c\"",
			    show_ch(*p));
		if (v < c->f->lo || v > c->f->hi)
			return perr(c, s, end, "out of range %d-%d",
			    c->f->lo, c->f->hi);
		e->dow_kind = DOW_LAST;
		e->dow_wd = v - 1;
		return 1;
	}
	return 0;
}

/* One comma-separated field; text is NUL-terminated and nonempty. */
static int
field_parse(struct parse_ctx *c, const char *text, struct cron_expr *e,
    struct cron_set *set)
{
	const char *s, *end, *tend = text + strlen(text);
	int quartz = c->dialect == CRON_DIALECT_QUARTZ, r, nelem = 0;
	int special = 0;

	memset(set, 0, sizeof *set);
	if (strcmp(text, "?") == 0) {
		if (!quartz)
			return perr(c, text, tend,
			    "is not supported in the vixie dialect");
		if (c->fid != FID_DOM && c->fid != FID_DOW)
			return perr(c, text, tend, "is only allowed in "
			    "day-of-month or day-of-week");
		if (c->fid == FID_DOM)
			e->dom_kind = DOM_ANY;
		else
			e->dow_kind = DOW_ANY;
		return 0;
	}
	for (s = text; s <= tend; s = end + 1) {
		for (end = s; end < tend && *end != ','; end++)
			;
		nelem++;
		if (end == s)
			return perr(c, text, tend, "has an empty list element");
		if (memchr(s, '?', (size_t)(end - s)) != NULL)
			return perr(c, s, end, "\"?\" must stand alone");
		if (!quartz && memchr(s, '#', (size_t)(end - s)) != NULL)
			return perr(c, s, end,
			    "\"#\" is not supported in the vixie dialect");
		r = 0;
		if (quartz && c->fid == FID_DOM)
			r = elem_dom_special(c, s, end, e);
		else if (quartz && c->fid == FID_DOW)
			r = elem_dow_special(c, s, end, e, set);
		if (r < 0)
			return -1;
		if (r > 0)
			special = 1;
		else if (elem_plain(c, s, end, set) != 0)
			return -1;
	}
	/* Quartz 2.3.2 refuses L, W and # next to other list values. */
	if (special && nelem > 1)
		return perr(c, text, tend, "L, W and # cannot be combined "
		    "with other values in a list");
	return 0;
}

/* Split text into fields in buf; returns the count (up to max+1). */
static int
fields_split(char *buf, char **fields, int max)
{
	char *p = buf;
	int n = 0;

	for (;;) {
		while (is_space_c(*p))
			*p++ = '\0';
		if (*p == '\0')
			return n;
		if (n == max + 1)
			return n;
		fields[n++] = p;
		while (*p != '\0' && !is_space_c(*p))
			p++;
	}
}

static int
expr_build(struct cron_expr *e, char **fields, int nf,
    enum cron_dialect d, char *why, size_t whylen)
{
	const enum cron_fid *order;
	struct parse_ctx c;
	struct cron_set set;
	int i, v;

	c.dialect = d;
	c.why = why;
	c.whylen = whylen;
	order = d == CRON_DIALECT_QUARTZ ? quartz_order : vixie_order;
	e->dialect = d;
	e->sec = 1;		/* vixie: second 0 */
	e->has_year = 0;
	memset(e->year, 0xff, sizeof e->year);
	for (i = 0; i < nf; i++) {
		c.fid = order[i];
		c.f = d == CRON_DIALECT_QUARTZ ? &quartz_fields[c.fid] :
		    &vixie_fields[c.fid];
		if (field_parse(&c, fields[i], e, &set) != 0)
			return -1;
		switch (c.fid) {
		case FID_SEC:
		case FID_MIN:
			if (c.fid == FID_SEC)
				e->sec = set.w[0];
			else
				e->min = set.w[0];
			break;
		case FID_HOUR:
			e->hour = (uint32_t)set.w[0];
			break;
		case FID_DOM:
			e->dom = (uint32_t)set.w[0];
			break;
		case FID_MON:
			e->mon = (uint32_t)set.w[0];
			break;
		case FID_DOW:
			/* To 0 = Sunday: vixie folds 7 onto 0, quartz - 1. */
			for (v = 0; v <= 7; v++) {
				if (!set_has(&set, v))
					continue;
				if (d == CRON_DIALECT_VIXIE)
					e->dow |= 1u << (v % 7);
				else
					e->dow |= 1u << (v - 1);
			}
			break;
		case FID_YEAR:
			e->has_year = 1;
			memcpy(e->year, set.w, sizeof e->year);
			break;
		}
	}
	if (d == CRON_DIALECT_QUARTZ &&
	    (e->dom_kind == DOM_ANY) == (e->dow_kind == DOW_ANY)) {
		tz_why_set(why, whylen, "day-of-month \"%.40s\", day-of-week "
		    "\"%.40s\": exactly one of them must be \"?\" (quartz)",
		    fields[3], fields[5]);
		return -1;
	}
	if (d == CRON_DIALECT_VIXIE) {
		e->dom_star = fields[2][0] == '*';
		e->dow_star = fields[4][0] == '*';
		e->fixed_time = fields[0][0] != '*' && fields[1][0] != '*';
	} else {
		e->fixed_time = fields[0][0] != '*' && fields[1][0] != '*' &&
		    fields[2][0] != '*';
	}
	return 0;
}

struct cron_expr *
cron_parse(const char *text, enum cron_dialect d, char *why, size_t whylen)
{
	struct cron_expr *e = NULL;
	char *buf = NULL, *fields[CRON_FIELDS_MAX + 1];
	size_t len, i;
	int nf;

	errno = EINVAL;
	if (text == NULL || (d != CRON_DIALECT_VIXIE &&
	    d != CRON_DIALECT_QUARTZ && d != CRON_DIALECT_SYSTEMD)) {
		tz_why_set(why, whylen, "no expression");
		return NULL;
	}
	if ((len = strlen(text)) > CRON_TEXT_MAX) {
		tz_why_set(why, whylen, "expression longer than %d bytes",
		    CRON_TEXT_MAX);
		return NULL;
	}
	if ((e = calloc(1, sizeof *e)) == NULL ||
	    (d != CRON_DIALECT_SYSTEMD && (buf = malloc(len + 1)) == NULL)) {
		tz_why_set(why, whylen, "out of memory");
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	if (d == CRON_DIALECT_SYSTEMD) {
		enum cron_dialect g;

		if (cron_systemd_parse(text, e, why, whylen) == 0)
			return e;
		free(e);
		/* "0 9 * * *" given as a calendar event: say what it is. */
		if (why != NULL && cron_dialect_guess(text, &g) == 0 &&
		    g != CRON_DIALECT_SYSTEMD && strlen(why) + 60 < whylen)
			(void)snprintf(why + strlen(why), whylen - strlen(why),
			    "; it reads as a %s cron expression",
			    cron_dialect_name(g));
		errno = EINVAL;
		return NULL;
	}
	memcpy(buf, text, len + 1);
	nf = fields_split(buf, fields, CRON_FIELDS_MAX);
	if (nf == 0) {
		tz_why_set(why, whylen, "empty expression");
		goto fail;
	}
	if (fields[0][0] == '@') {
		if (d != CRON_DIALECT_VIXIE) {
			tz_why_set(why, whylen, "\"%.40s\": macros are only valid "
			    "in the vixie dialect", fields[0]);
			goto fail;
		}
		if (strcmp(fields[0], "@reboot") == 0) {
			tz_why_set(why, whylen, "\"@reboot\" has no next fire "
			    "time");
			goto fail;
		}
		for (i = 0; i < sizeof cron_macros / sizeof cron_macros[0];
		    i++)
			if (strcmp(fields[0], cron_macros[i].name) == 0)
				break;
		if (i == sizeof cron_macros / sizeof cron_macros[0]) {
			tz_why_set(why, whylen, "\"%.40s\": unknown macro",
			    fields[0]);
			goto fail;
		}
		if (nf != 1) {
			tz_why_set(why, whylen, "\"%.40s\": a macro takes no "
			    "fields", fields[0]);
			goto fail;
		}
		free(buf);
		free(e);
		return cron_parse(cron_macros[i].text, d, why, whylen);
	}
	if (d == CRON_DIALECT_VIXIE && nf != 5) {
		tz_why_set(why, whylen, "expected 5 fields (vixie), got %d%s", nf,
		    nf > CRON_FIELDS_MAX ? " or more" : "");
		goto fail;
	}
	if (d == CRON_DIALECT_QUARTZ && (nf < 6 || nf > 7)) {
		tz_why_set(why, whylen, "expected 6 or 7 fields (quartz), got "
		    "%d%s", nf, nf > CRON_FIELDS_MAX ? " or more" : "");
		goto fail;
	}
	if (expr_build(e, fields, nf, d, why, whylen) != 0)
		goto fail;
	free(buf);
	return e;
fail:
	free(buf);
	free(e);
	errno = EINVAL;
	return NULL;
}

void
cron_free(struct cron_expr *e)
{
	free(e);
}

int
cron_is_fixed_time(const struct cron_expr *e)
{
	return e->fixed_time;
}

enum cron_dialect
cron_dialect(const struct cron_expr *e)
{
	return e->dialect;
}

const char *
cron_zone(const struct cron_expr *e)
{
	return e->zone[0] != '\0' ? e->zone : NULL;
}

int
cron_dialect_guess(const char *text, enum cron_dialect *d)
{
	const char *p = text;
	int n = 0;

	while (p != NULL && *p != '\0') {
		while (is_space_c(*p))
			p++;
		if (*p == '\0')
			break;
		if (n == 0 && *p == '@') {
			*d = CRON_DIALECT_VIXIE;
			return 0;
		}
		n++;
		while (*p != '\0' && !is_space_c(*p))
			p++;
	}
	if (n >= 1 && n <= 4 && (strpbrk(text, ":~") != NULL ||
	    strstr(text, "..") != NULL || strstr(text, "*-") != NULL ||
	    (n <= 3 && strchr(text, '-') != NULL) ||
	    is_alpha_c(text[strspn(text, " \t")]))) {
		*d = CRON_DIALECT_SYSTEMD;	/* "Mon *-*-* 9:00", "daily" */
		return 0;
	}
	if (n == 5) {
		*d = CRON_DIALECT_VIXIE;
		return 0;
	}
	if (n == 6 || n == 7) {
		*d = CRON_DIALECT_QUARTZ;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

/* ---- matching --------------------------------------------------------- */

static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Lowest set bit >= from in mask, or -1. */
static int
bit_next(uint64_t mask, int from)
{
	if (from >= 64)
		return -1;
	mask &= ~UINT64_C(0) << from;
	return mask == 0 ? -1 : __builtin_ctzll(mask);
}

/* Quartz "nW": the weekday nearest day n, never leaving the month. */
static int
weekday_nearest(int n, int mdays, int wd1)
{
	int wd = (wd1 + n - 1) % 7;

	if (wd == 6)			/* Saturday */
		return n == 1 ? 3 : n - 1;
	if (wd == 0)			/* Sunday */
		return n == mdays ? n - 2 : n + 1;
	return n;
}

/* Matching days of month m of year y: bit d for day d. */
static uint32_t
day_mask(const struct cron_expr *e, int64_t y, int m)
{
	int mdays = tz_month_days(y, m);
	int wd1 = tz_weekday(tz_days_from_civil(y, m, 1));
	uint32_t all = (uint32_t)((UINT64_C(1) << (mdays + 1)) - 2);
	uint32_t dom_m = 0, dow_m = 0;
	int d;

	switch (e->dom_kind) {
	case DOM_SET:
		dom_m = e->dom & all;
		break;
	case DOM_ANY:
		break;
	case DOM_LAST:
	case DOM_LAST_WD:
		d = mdays - e->dom_n;
		if (d >= 1) {
			if (e->dom_kind == DOM_LAST_WD)
				d = weekday_nearest(d, mdays, wd1);
			dom_m = 1u << d;
		}
		break;
	case DOM_NEAR_WD:
		if (e->dom_n <= mdays)
			dom_m = 1u << weekday_nearest(e->dom_n, mdays, wd1);
		break;
	case DOM_EOM:
		dom_m = e->eom_days[mdays - 28] & all;
		break;
	}
	switch (e->dow_kind) {
	case DOW_SET:
		for (d = 1; d <= mdays; d++)
			if (e->dow & (1u << ((wd1 + d - 1) % 7)))
				dow_m |= 1u << d;
		break;
	case DOW_ANY:
		break;
	case DOW_LAST:
		d = mdays - ((wd1 + mdays - 1) % 7 - e->dow_wd + 7) % 7;
		dow_m = 1u << d;
		break;
	case DOW_NTH:
		d = 1 + (e->dow_wd - wd1 + 7) % 7 + 7 * (e->dow_k - 1);
		if (d <= mdays)
			dow_m = 1u << d;
		break;
	}
	if (e->dialect == CRON_DIALECT_QUARTZ)
		return e->dom_kind == DOM_ANY ? dow_m : dom_m;
	if (e->dialect == CRON_DIALECT_SYSTEMD)	/* systemd.time(7) */
		return dom_m & dow_m;
	/* cronie: AND when either field starts with '*', else OR. */
	if (e->dom_star || e->dow_star)
		return dom_m & dow_m;
	return dom_m | dow_m;
}

/* First matching second of the day >= sod, or -1. */
static int
time_next(const struct cron_expr *e, int sod)
{
	int h0 = sod / 3600, m0 = sod / 60 % 60, s0 = sod % 60, h, m, s;

	for (h = bit_next(e->hour, h0); h >= 0; h = bit_next(e->hour, h + 1)) {
		for (m = bit_next(e->min, h == h0 ? m0 : 0); m >= 0;
		    m = bit_next(e->min, m + 1)) {
			s = bit_next(e->sec, h == h0 && m == m0 ? s0 : 0);
			if (s >= 0)
				return h * 3600 + m * 60 + s;
		}
	}
	return -1;
}

/* First allowed year >= y, or -1. */
static int64_t
year_next(const struct cron_expr *e, int64_t y)
{
	int64_t b;

	if (!e->has_year)
		return y;
	for (b = y < YEAR_FIRST ? 0 : y - YEAR_FIRST;
	    b <= YEAR_LAST - YEAR_FIRST; b++)
		if ((e->year[b / 64] >> (b % 64)) & 1)
			return YEAR_FIRST + b;
	return -1;
}

/*
 * Calendar search in wall time, remembering its last answer: cal_next(lo)
 * = w means nothing matches in [lo, w), so any lo' in [lo, w] has the same
 * answer; segment after segment asks from ever later points.
 */
struct cal {
	const struct cron_expr	*e;
	int64_t			 limit_year;
	int			 valid;
	int			 found;
	int64_t			 lo;
	int64_t			 w;
};

/* First matching wall time (local seconds) >= lo: 1 and *w, or 0. */
static int
cal_next(struct cal *c, int64_t lo, int64_t *w)
{
	const struct cron_expr *e = c->e;
	int64_t days, y, ny;
	int m, d, dd, sod, t;
	uint32_t mask;

	if (c->valid && lo >= c->lo && (!c->found || lo <= c->w)) {
		*w = c->w;
		return c->found;
	}
	c->valid = 1;
	c->lo = lo;
	c->found = 0;
	days = floor_div(lo, 86400);
	sod = (int)(lo - days * 86400);
	tz_civil_from_days(days, &y, &m, &d);
	for (;;) {
		if (y > c->limit_year)
			return 0;
		if ((ny = year_next(e, y)) < 0)
			return 0;
		if (ny != y) {
			y = ny;
			m = d = 1;
			sod = 0;
			continue;
		}
		if (e->mon & (1u << m)) {
			mask = day_mask(e, y, m) & ~((1u << d) - 1);
			for (; mask != 0; mask &= mask - 1) {
				dd = __builtin_ctz(mask);
				t = time_next(e, dd == d ? sod : 0);
				if (t >= 0) {
					c->found = 1;
					c->w = tz_days_from_civil(y, m, dd) *
					    86400 + t;
					*w = c->w;
					return 1;
				}
			}
		}
		d = 1;
		sod = 0;
		if (++m > 12) {
			m = 1;
			y++;
		}
	}
}

int
cron_next_fire(const struct cron_expr *e, const struct tz *z,
    int64_t after_s, int64_t *next_s)
{
	struct cal c;
	int64_t t0, seg_start = 0, seg_end = 0, lo, w, y;
	int32_t o, o_prev = 0;
	int have_prev, have_next, mm, dd;

	if (e == NULL || z == NULL || next_s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (after_s < TZ_EPOCH_MIN || after_s >= TZ_EPOCH_MAX) {
		errno = ERANGE;
		return -1;
	}
	t0 = after_s + 1;
	memset(&c, 0, sizeof c);
	c.e = e;
	tz_civil_from_days(floor_div(t0, 86400), &y, &mm, &dd);
	c.limit_year = e->has_year ? YEAR_LAST : y + CRON_HORIZON_YEARS;
	if (c.limit_year > YEAR_LAST_FIRE)
		c.limit_year = YEAR_LAST_FIRE;

	/* The segment of constant offset holding t0, and the one before. */
	o = tz_offset_at(z, t0);
	have_prev = tz_prev_transition(z, t0, &seg_start);
	if (have_prev)
		o_prev = tz_offset_at(z, seg_start - 1);
	have_next = tz_next_transition(z, t0, &seg_end);

	for (;;) {
		/*
		 * Entered through a forward jump (DST-sized): a fixed-time
		 * job with a wall time in the skipped range runs once, at
		 * the first instant after it (cron(8): "run immediately").
		 */
		if (have_prev && seg_start >= t0 && e->fixed_time &&
		    o > o_prev && o - o_prev <= CRON_DST_MAX_S &&
		    cal_next(&c, seg_start + o_prev, &w) == 1 &&
		    w < seg_start + o) {
			if (seg_start > TZ_EPOCH_MAX)
				return 0;	/* past year 9999 in UTC */
			*next_s = seg_start;
			return 1;
		}
		lo = (have_prev && seg_start > t0 ? seg_start : t0) + o;
		/*
		 * Entered through a backward jump (DST-sized): a fixed-time
		 * job already had its chance on the first pass of the
		 * repeated wall times, so it skips them now.
		 */
		if (have_prev && e->fixed_time && o < o_prev &&
		    o_prev - o <= CRON_DST_MAX_S && lo < seg_start + o_prev)
			lo = seg_start + o_prev;
		if (cal_next(&c, lo, &w) == 0)
			return 0;
		if (!have_next || w < seg_end + o) {
			if (w - o > TZ_EPOCH_MAX)
				return 0;	/* past year 9999 in UTC */
			*next_s = w - o;
			return 1;
		}
		o_prev = o;
		seg_start = seg_end;
		have_prev = 1;
		o = tz_offset_at(z, seg_start);
		have_next = tz_next_transition(z, seg_start, &seg_end);
	}
}

static const char *const dialect_names[] = { "vixie", "quartz", "systemd" };

const char *
cron_dialect_name(enum cron_dialect d)
{
	return (size_t)d < sizeof dialect_names / sizeof dialect_names[0] ?
	    dialect_names[d] : "?";
}

int
cron_dialect_from_name(const char *s, enum cron_dialect *d)
{
	for (size_t i = 0; i < sizeof dialect_names / sizeof dialect_names[0];
	    i++)
		if (strcmp(s, dialect_names[i]) == 0) {
			*d = (enum cron_dialect)i;
			return 0;
		}
	return -1;
}
