/*
 * tz.c — IANA time zones from TZif files, without the C library's TZ state.
 *
 * Owns: reading one TZif file (RFC 8536, tzfile(5)) into an immutable
 * struct tz, and answering "what is the UTC offset at instant t", "when
 * does the offset change next / last", and "which instants show this wall
 * clock reading".  The table of transitions answers up to the last
 * transition; after it the POSIX TZ string of the footer (POSIX.1 XBD 8.3,
 * with the RFC 8536 extensions: hours up to 167 and negative in rule times)
 * is evaluated year by year.  Offsets are never hand-coded here: every
 * number comes from the file.
 *
 * Invariants of a loaded struct tz: ntypes >= 1; transitions strictly
 * ascending; every index < ntypes; every offset within -89999..93599 s
 * (RFC 8536 3.2).  Nothing is modified after loading, so all queries are
 * thread-safe.
 *
 * Never: setenv("TZ"), tzset(), localtime(), reading the clock, logging.
 * The loaders are the only I/O.  Malformed files and bad names are errors
 * returned to the caller (NULL + errno + reason), never aborts.
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tz.h"

/* Longest footer TZ string accepted (real ones are under 60 bytes). */
#define TZ_FOOTER_MAX	512

/* RFC 8536 3.2: utoff SHOULD be in -89999..93599 (about -25h..+26h). */
#define TZ_UTOFF_MIN	(-89999)
#define TZ_UTOFF_MAX	93599

/* tz_local_to_utc() looks this far either side of a wall reading. */
#define TZ_WINDOW_S	(27 * 3600)

/* Rule arithmetic is done on instants clamped to about +-35 million years. */
#define TZ_RULE_CLAMP	(INT64_C(1) << 50)

/* TZif header: magic, version, 15 reserved, six 4-byte counts. */
#define HDR_LEN		44

struct tz_ttype {
	int32_t		 utoff;		/* seconds east of UTC */
	unsigned char	 isdst;
};

/* One date of a POSIX TZ rule: "Jn", "n" or "Mm.w.d", plus "/time". */
struct tz_rdate {
	enum { RDATE_JULIAN1, RDATE_JULIAN0, RDATE_MWD } kind;
	int		 n;		/* Jn: 1..365, n: 0..365 */
	int		 m, w, d;	/* Mm.w.d: 1..12, 1..5, 0..6 */
	int32_t		 time;		/* seconds after midnight */
};

struct tz_rule {
	int32_t		 std_off;	/* seconds east of UTC */
	int		 has_dst;
	int32_t		 dst_off;
	struct tz_rdate	 start;		/* in local standard time */
	struct tz_rdate	 end;		/* in local DST time */
};

struct tz {
	char		 name[TZ_NAME_MAX + 1];
	int		 is_utc;
	size_t		 ntrans;
	int64_t		*trans;		/* ascending instants */
	unsigned char	*tidx;		/* type of each transition */
	size_t		 ntypes;
	struct tz_ttype	*types;
	int		 has_rule;	/* nonempty footer TZ string */
	struct tz_rule	 rule;
};

struct tzif_hdr {
	int		 version;	/* 1, 2, 3, 4 */
	uint32_t	 isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

static const char *const tz_utc_names[] = {
	"UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal",
	"Zulu", "Etc/Zulu",
};

/* ---- small helpers ---------------------------------------------------- */

void
tz_why_set(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	/* A reason cut at whylen-1 bytes is still a reason: no check. */
	(void)vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

void
tz_name_for_msg(const char *s, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; s != NULL && s[i] != '\0' && i < 64 && i + 1 < outlen;
	    i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	out[i] = '\0';
}

static int
is_digit_c(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_alpha_c(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static uint32_t
get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int64_t
get_be64(const unsigned char *p)
{
	uint64_t v = (uint64_t)get_be32(p) << 32 | get_be32(p + 4);

	return (int64_t)v;	/* two's complement everywhere we run */
}

/* ---- calendar --------------------------------------------------------- */

static int
is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int
tz_month_days(int64_t y, int m)
{
	static const unsigned char len[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};

	if (m == 2 && is_leap(y))
		return 29;
	return len[(m - 1) % 12];
}

/*
 * Days since 1970-01-01.  Counts in 400-year eras (146097 days) of years
 * that start on March 1, so the leap day is the last day of its year.
 */
int64_t
tz_days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	if (m <= 2)
		y--;
	era = floor_div(y, 400);
	yoe = y - era * 400;				/* 0..399 */
	/* Day of the March-based year, 0..365. */
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;	/* 0..146096 */
	return era * 146097 + doe - 719468;
}

void
tz_civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
	int64_t z, era, doe, yoe, doy, mp;

	z = days + 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

int
tz_weekday(int64_t days)
{
	/* 1970-01-01 was a Thursday. */
	return (int)(((days % 7) + 7 + 4) % 7);
}

static int64_t
year_of(int64_t t)
{
	int64_t y;
	int m, d;

	tz_civil_from_days(floor_div(t, 86400), &y, &m, &d);
	return y;
}

/* ---- POSIX TZ rule ---------------------------------------------------- */

/* "std" or "<+0330>": at least 3 characters (POSIX). */
static const char *
rule_name(const char *s)
{
	const char *p;

	if (*s == '<') {
		for (p = s + 1; is_alpha_c(*p) || is_digit_c(*p) ||
		    *p == '+' || *p == '-'; p++)
			;
		if (*p != '>' || p - (s + 1) < 3)
			return NULL;
		return p + 1;
	}
	for (p = s; is_alpha_c(*p); p++)
		;
	return p - s < 3 ? NULL : p;
}

/* [+-]hh[:mm[:ss]] with hh <= maxh; stores signed seconds. */
static const char *
rule_hms(const char *s, int maxh, int32_t *secs)
{
	int sign = 1, part, i;
	int32_t v[3] = { 0, 0, 0 };

	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	for (part = 0; part < 3; part++) {
		if (part > 0) {
			if (*s != ':')
				break;
			s++;
		}
		if (!is_digit_c(*s))
			return NULL;
		for (i = 0; is_digit_c(*s) && i < 3; i++)
			v[part] = v[part] * 10 + (*s++ - '0');
		if (is_digit_c(*s))
			return NULL;
	}
	if (v[0] > maxh || v[1] > 59 || v[2] > 59)
		return NULL;
	*secs = sign * (v[0] * 3600 + v[1] * 60 + v[2]);
	return s;
}

static const char *
rule_int(const char *s, int lo, int hi, int *out)
{
	int v = 0, n = 0;

	while (is_digit_c(*s) && n < 4) {
		v = v * 10 + (*s++ - '0');
		n++;
	}
	if (n == 0 || is_digit_c(*s) || v < lo || v > hi)
		return NULL;
	*out = v;
	return s;
}

/* "Jn" | "n" | "Mm.w.d", then optional "/time" (default 02:00:00). */
static const char *
rule_date(const char *s, struct tz_rdate *rd)
{
	memset(rd, 0, sizeof *rd);
	if (*s == 'J') {
		rd->kind = RDATE_JULIAN1;
		s = rule_int(s + 1, 1, 365, &rd->n);
	} else if (*s == 'M') {
		rd->kind = RDATE_MWD;
		if ((s = rule_int(s + 1, 1, 12, &rd->m)) == NULL || *s != '.')
			return NULL;
		if ((s = rule_int(s + 1, 1, 5, &rd->w)) == NULL || *s != '.')
			return NULL;
		s = rule_int(s + 1, 0, 6, &rd->d);
	} else {
		rd->kind = RDATE_JULIAN0;
		s = rule_int(s, 0, 365, &rd->n);
	}
	if (s == NULL)
		return NULL;
	rd->time = 7200;
	if (*s == '/')
		s = rule_hms(s + 1, 167, &rd->time);
	return s;
}

static int
rule_parse(const char *s, struct tz_rule *r)
{
	int32_t off;

	memset(r, 0, sizeof *r);
	if ((s = rule_name(s)) == NULL || (s = rule_hms(s, 24, &off)) == NULL)
		return -1;
	r->std_off = -off;	/* POSIX offsets count west */
	if (*s == '\0')
		return 0;
	if ((s = rule_name(s)) == NULL)
		return -1;
	r->has_dst = 1;
	r->dst_off = r->std_off + 3600;
	if (*s != ',' && *s != '\0') {
		if ((s = rule_hms(s, 24, &off)) == NULL)
			return -1;
		r->dst_off = -off;
	}
	if (*s == '\0') {
		/* POSIX leaves this to the implementation; use the US rule. */
		(void)rule_date("M3.2.0", &r->start);
		(void)rule_date("M11.1.0", &r->end);
		return 0;
	}
	if (*s != ',' || (s = rule_date(s + 1, &r->start)) == NULL)
		return -1;
	if (*s != ',' || (s = rule_date(s + 1, &r->end)) == NULL)
		return -1;
	return *s == '\0' ? 0 : -1;
}

/* Day number (days since 1970-01-01) of a rule date in year y. */
static int64_t
rdate_days(const struct tz_rdate *rd, int64_t y)
{
	int64_t first;
	int day, mdays;

	switch (rd->kind) {
	case RDATE_JULIAN1:
		/* Jn never counts February 29. */
		return tz_days_from_civil(y, 1, 1) + rd->n - 1 +
		    (is_leap(y) && rd->n >= 60);
	case RDATE_JULIAN0:
		return tz_days_from_civil(y, 1, 1) + rd->n;
	case RDATE_MWD:
	default:
		first = tz_days_from_civil(y, rd->m, 1);
		day = 1 + (rd->d - tz_weekday(first) + 7) % 7 + (rd->w - 1) * 7;
		mdays = tz_month_days(y, rd->m);
		while (day > mdays)
			day -= 7;	/* w == 5: "last" */
		return first + day - 1;
	}
}

/* Instants at which DST starts and ends in year y. */
static void
rule_year(const struct tz_rule *r, int64_t y, int64_t *start, int64_t *end)
{
	*start = rdate_days(&r->start, y) * 86400 + r->start.time - r->std_off;
	*end = rdate_days(&r->end, y) * 86400 + r->end.time - r->dst_off;
}

static int64_t
clamp_rule(int64_t t)
{
	if (t > TZ_RULE_CLAMP)
		return TZ_RULE_CLAMP;
	if (t < -TZ_RULE_CLAMP)
		return -TZ_RULE_CLAMP;
	return t;
}

static int32_t
rule_offset(const struct tz_rule *r, int64_t t)
{
	int64_t y, yy, s, e, best = INT64_MIN;
	int dst = -1;

	if (!r->has_dst)
		return r->std_off;
	t = clamp_rule(t);
	y = year_of(t);
	/*
	 * The latest start or end at or before t decides.  A start and an end
	 * at the same instant (DST all year: "EST5EDT4,0/0,J365/25") mean
	 * DST, so a start wins a tie.  Rule times reach +-167 h, so looking
	 * two years back is always enough.
	 */
	for (yy = y - 2; yy <= y + 1; yy++) {
		rule_year(r, yy, &s, &e);
		if (e <= t && e > best) {
			best = e;
			dst = 0;
		}
		if (s <= t && s >= best) {
			best = s;
			dst = 1;
		}
	}
	return dst == 1 ? r->dst_off : r->std_off;
}

/* ---- queries ---------------------------------------------------------- */

/* Index of the first transition > t (ntrans if none). */
static size_t
trans_upper(const struct tz *z, int64_t t)
{
	size_t lo = 0, hi = z->ntrans, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (z->trans[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
rule_governs(const struct tz *z, int64_t t)
{
	return z->has_rule &&
	    (z->ntrans == 0 || t > z->trans[z->ntrans - 1]);
}

int32_t
tz_offset_at(const struct tz *z, int64_t t)
{
	size_t i;

	if (rule_governs(z, t))
		return rule_offset(&z->rule, t);
	i = trans_upper(z, t);
	if (i == 0)
		return z->types[0].utoff;	/* RFC 8536: type 0 */
	return z->types[z->tidx[i - 1]].utoff;
}

static int
offset_changes_at(const struct tz *z, int64_t t)
{
	return t > INT64_MIN && tz_offset_at(z, t) != tz_offset_at(z, t - 1);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Rule transitions of years y0..y0+3, ascending, in out[8]. */
static void
rule_candidates(const struct tz_rule *r, int64_t y0, int64_t out[8])
{
	int i;

	for (i = 0; i < 4; i++)
		rule_year(r, y0 + i, &out[2 * i], &out[2 * i + 1]);
	qsort(out, 8, sizeof out[0], cmp_i64);
}

int
tz_next_transition(const struct tz *z, int64_t after, int64_t *when)
{
	int64_t cand[8], from;
	size_t i;
	int32_t before;

	for (i = trans_upper(z, after); i < z->ntrans; i++) {
		before = i == 0 ? z->types[0].utoff :
		    z->types[z->tidx[i - 1]].utoff;
		if (z->types[z->tidx[i]].utoff != before) {
			*when = z->trans[i];
			return 1;
		}
	}
	if (!z->has_rule || !z->rule.has_dst)
		return 0;
	from = after;
	if (z->ntrans > 0 && from < z->trans[z->ntrans - 1])
		from = z->trans[z->ntrans - 1];
	if (from >= TZ_RULE_CLAMP)
		return 0;
	/* A DST rule changes the offset within a year unless DST all year. */
	rule_candidates(&z->rule, year_of(from) - 1, cand);
	for (i = 0; i < 8; i++) {
		if (cand[i] > from && offset_changes_at(z, cand[i])) {
			*when = cand[i];
			return 1;
		}
	}
	return 0;
}

int
tz_prev_transition(const struct tz *z, int64_t at, int64_t *when)
{
	int64_t cand[8], last;
	size_t i;
	int32_t before;

	if (z->has_rule && z->rule.has_dst && rule_governs(z, at) &&
	    at > -TZ_RULE_CLAMP) {
		last = z->ntrans > 0 ? z->trans[z->ntrans - 1] : INT64_MIN;
		rule_candidates(&z->rule, year_of(clamp_rule(at)) - 2, cand);
		for (i = 8; i-- > 0;) {
			if (cand[i] <= at && cand[i] > last &&
			    offset_changes_at(z, cand[i])) {
				*when = cand[i];
				return 1;
			}
		}
	}
	for (i = trans_upper(z, at); i-- > 0;) {
		before = i == 0 ? z->types[0].utoff :
		    z->types[z->tidx[i - 1]].utoff;
		if (z->types[z->tidx[i]].utoff != before) {
			*when = z->trans[i];
			return 1;
		}
	}
	return 0;
}

int
tz_local_to_utc(const struct tz *z, int64_t local, struct tz_local *out)
{
	int32_t offs[16], o_before, o_after;
	int64_t sols[16], t, tr;
	size_t noffs = 0, nsols = 0, i, j;

	if (local < TZ_EPOCH_MIN || local > TZ_EPOCH_MAX) {
		errno = ERANGE;
		return -1;
	}
	/*
	 * Every instant u showing `local` has u = local - offset(u), and
	 * offsets are within +-26 h, so only offsets in force inside that
	 * window can be solutions.  Try each.
	 */
	t = local - TZ_WINDOW_S;
	offs[noffs++] = tz_offset_at(z, t);
	while (noffs < 16 && tz_next_transition(z, t, &tr) &&
	    tr <= local + TZ_WINDOW_S) {
		offs[noffs++] = tz_offset_at(z, tr);
		t = tr;
	}
	for (i = 0; i < noffs; i++) {
		t = local - offs[i];
		if (tz_offset_at(z, t) != offs[i])
			continue;
		for (j = 0; j < nsols && sols[j] != t; j++)
			;
		if (j == nsols)
			sols[nsols++] = t;
	}
	if (nsols > 0) {
		qsort(sols, nsols, sizeof sols[0], cmp_i64);
		out->first_s = sols[0];
		out->second_s = sols[nsols - 1];
		out->kind = nsols == 1 ? TZ_LOCAL_UNIQUE : TZ_LOCAL_OVERLAP;
		out->shift_s = nsols == 1 ? 0 : tz_offset_at(z, sols[0]) -
		    tz_offset_at(z, sols[nsols - 1]);
		return 0;
	}
	/* No instant: find the forward jump whose skipped range holds it. */
	t = local - TZ_WINDOW_S;
	while (tz_next_transition(z, t, &tr) && tr <= local + TZ_WINDOW_S) {
		o_before = tz_offset_at(z, tr - 1);
		o_after = tz_offset_at(z, tr);
		if (tr + o_before <= local && local < tr + o_after) {
			out->kind = TZ_LOCAL_GAP;
			out->first_s = out->second_s = tr;
			out->shift_s = o_after - o_before;
			return 0;
		}
		t = tr;
	}
	/* Cannot happen for a consistent zone; report rather than guess. */
	errno = EINVAL;
	return -1;
}

const char *
tz_name(const struct tz *z)
{
	return z->name;
}

int
tz_is_utc(const struct tz *z)
{
	return z->is_utc;
}

int
tz_format_rfc3339(const struct tz *z, int64_t t, char *buf, size_t buflen)
{
	int64_t local, days, sod, y;
	int32_t off, a;
	int m, d, n;
	char sign;

	if (t < TZ_EPOCH_MIN || t > TZ_EPOCH_MAX) {
		errno = ERANGE;
		return -1;
	}
	off = tz_offset_at(z, t);
	local = t + off;
	days = floor_div(local, 86400);
	sod = local - days * 86400;
	tz_civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999) {
		errno = ERANGE;
		return -1;
	}
	if (z->is_utc) {
		n = snprintf(buf, buflen, "%04d-%02d-%02dT%02d:%02d:%02dZ",
		    (int)y, m, d, (int)(sod / 3600), (int)(sod / 60 % 60),
		    (int)(sod % 60));
	} else {
		sign = off < 0 ? '-' : '+';
		a = off < 0 ? -off : off;
		n = snprintf(buf, buflen,
		    "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", (int)y, m, d,
		    (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
		    sign, (int)(a / 3600), (int)(a / 60 % 60));
		if (n >= 0 && (size_t)n < buflen && a % 60 != 0)
			n += snprintf(buf + n, buflen - (size_t)n, ":%02d",
			    (int)(a % 60));
	}
	if (n < 0) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)n >= buflen) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

int
tz_format_rfc3339_ms(const struct tz *z, int64_t ms, char *buf,
    size_t buflen)
{
	char t[TZ_RFC3339_MAX];
	int64_t s = ms / 1000 - (ms % 1000 < 0);	/* floor */
	int frac = (int)(ms - s * 1000), n;

	if (tz_format_rfc3339(z, s, t, sizeof(t)) != 0)
		return -1;
	if (strlen(t) < 19) {
		errno = ERANGE;
		return -1;
	}
	if (frac == 0)
		n = snprintf(buf, buflen, "%s", t);
	else
		n = snprintf(buf, buflen, "%.19s.%03d%s", t, frac, t + 19);
	if (n < 0 || (size_t)n >= buflen) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

/* ---- loading ---------------------------------------------------------- */

int
tz_name_ok(const char *name)
{
	size_t i, comp = 0;

	if (name == NULL || name[0] == '\0' || name[0] == '/' ||
	    strlen(name) > TZ_NAME_MAX)
		return 0;
	for (i = 0; name[i] != '\0'; i++) {
		char c = name[i];

		if (c == '/') {
			if (comp == 0)
				return 0;	/* "a//b" */
			comp = 0;
			continue;
		}
		/* No hidden files, so no "." or ".." components either. */
		if (comp == 0 && c == '.')
			return 0;
		if (!is_alpha_c(c) && !is_digit_c(c) && c != '_' && c != '-' &&
		    c != '+' && c != '.')
			return 0;
		comp++;
	}
	return comp > 0;	/* no trailing '/' */
}

/* tzdata's names of UTC (its "backward" file links them to Etc/UTC). */
static const char *const utc_names[] = {
	"UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal",
	"Zulu", "Etc/Zulu"
};

static int
is_utc_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof utc_names / sizeof utc_names[0]; i++)
		if (strcmp(name, utc_names[i]) == 0)
			return 1;
	return 0;
}

int
tz_names_same(const char *a, const char *b)
{
	return strcmp(a, b) == 0 || (is_utc_name(a) && is_utc_name(b));
}

static void
set_name(struct tz *z, const char *name)
{
	size_t i;

	/* Truncation of a label is harmless; the zone data is what counts. */
	(void)snprintf(z->name, sizeof z->name, "%s", name);
	for (i = 0; i < sizeof tz_utc_names / sizeof tz_utc_names[0]; i++)
		if (strcmp(name, tz_utc_names[i]) == 0)
			z->is_utc = 1;
}

void
tz_free(struct tz *z)
{
	if (z == NULL)
		return;
	free(z->trans);
	free(z->tidx);
	free(z->types);
	free(z);
}

struct tz *
tz_new_utc(const char *name)
{
	struct tz *z;

	if ((z = calloc(1, sizeof *z)) == NULL)
		return NULL;
	if ((z->types = calloc(1, sizeof *z->types)) == NULL) {
		free(z);
		return NULL;
	}
	z->ntypes = 1;
	set_name(z, name);
	return z;
}

struct tz *
tz_load_posix(const char *spec, char *why, size_t whylen)
{
	struct tz *z;
	char shown[80];

	if (spec == NULL || strlen(spec) > TZ_FOOTER_MAX) {
		tz_name_for_msg(spec, shown, sizeof shown);
		tz_why_set(why, whylen, "\"%s\": bad TZ rule", shown);
		errno = EINVAL;
		return NULL;
	}
	if ((z = tz_new_utc(spec)) == NULL) {
		tz_why_set(why, whylen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	z->is_utc = 0;
	if (rule_parse(spec, &z->rule) != 0) {
		tz_name_for_msg(spec, shown, sizeof shown);
		tz_why_set(why, whylen, "\"%s\": bad TZ rule", shown);
		tz_free(z);
		errno = EINVAL;
		return NULL;
	}
	z->has_rule = 1;
	z->types[0].utoff = z->rule.std_off;
	return z;
}

static int
hdr_read(const unsigned char *p, size_t len, struct tzif_hdr *h)
{
	if (len < HDR_LEN || memcmp(p, "TZif", 4) != 0)
		return -1;
	if (p[4] == 0)
		h->version = 1;
	else if (p[4] >= '2' && p[4] <= '4')
		h->version = p[4] - '0';
	else
		return -1;
	h->isutcnt = get_be32(p + 20);
	h->isstdcnt = get_be32(p + 24);
	h->leapcnt = get_be32(p + 28);
	h->timecnt = get_be32(p + 32);
	h->typecnt = get_be32(p + 36);
	h->charcnt = get_be32(p + 40);
	return 0;
}

/* Size of the data block after a header; counts are < 2^32, no overflow. */
static uint64_t
block_len(const struct tzif_hdr *h, unsigned timesize)
{
	return (uint64_t)h->timecnt * timesize + h->timecnt +
	    (uint64_t)h->typecnt * 6 + h->charcnt +
	    (uint64_t)h->leapcnt * (timesize + 4) + h->isstdcnt + h->isutcnt;
}

/* Fill z from one data block; p points just after its header. */
static int
block_parse(struct tz *z, const struct tzif_hdr *h, const unsigned char *p,
    unsigned timesize, char *why, size_t whylen)
{
	const unsigned char *ti;
	size_t i;

	if (h->typecnt == 0 || h->typecnt > 256) {
		tz_why_set(why, whylen, "%s: bad type count %u", z->name,
		    h->typecnt);
		return -1;
	}
	if (h->leapcnt != 0) {
		tz_why_set(why, whylen,
		    "%s: leap-second zones are not supported", z->name);
		return -1;
	}
	z->ntrans = h->timecnt;
	z->ntypes = h->typecnt;
	z->trans = calloc(z->ntrans ? z->ntrans : 1, sizeof *z->trans);
	z->tidx = calloc(z->ntrans ? z->ntrans : 1, 1);
	z->types = calloc(z->ntypes, sizeof *z->types);
	if (z->trans == NULL || z->tidx == NULL || z->types == NULL) {
		tz_why_set(why, whylen, "%s: out of memory", z->name);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < z->ntrans; i++) {
		z->trans[i] = timesize == 8 ? get_be64(p + 8 * i) :
		    (int32_t)get_be32(p + 4 * i);
		if (i > 0 && z->trans[i] <= z->trans[i - 1]) {
			tz_why_set(why, whylen,
			    "%s: transitions not in ascending order", z->name);
			return -1;
		}
	}
	p += (size_t)timesize * z->ntrans;
	for (i = 0; i < z->ntrans; i++) {
		z->tidx[i] = p[i];
		if (p[i] >= z->ntypes) {
			tz_why_set(why, whylen, "%s: bad time type index",
			    z->name);
			return -1;
		}
	}
	ti = p + z->ntrans;
	for (i = 0; i < z->ntypes; i++, ti += 6) {
		z->types[i].utoff = (int32_t)get_be32(ti);
		z->types[i].isdst = ti[4];
		if (z->types[i].utoff < TZ_UTOFF_MIN ||
		    z->types[i].utoff > TZ_UTOFF_MAX || ti[4] > 1 ||
		    ti[5] >= h->charcnt) {
			tz_why_set(why, whylen, "%s: bad local time type",
			    z->name);
			return -1;
		}
	}
	return 0;
}

struct tz *
tz_load_buf(const void *buf, size_t len, const char *name, char *why,
    size_t whylen)
{
	const unsigned char *p = buf;
	struct tzif_hdr h1, h2;
	struct tz *z;
	char footer[TZ_FOOTER_MAX + 1];
	uint64_t b1, b2;
	size_t off, flen;
	int saved;

	if ((z = calloc(1, sizeof *z)) == NULL) {
		tz_why_set(why, whylen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	set_name(z, name != NULL ? name : "(buffer)");
	errno = EINVAL;
	if (p == NULL || hdr_read(p, len, &h1) != 0) {
		tz_why_set(why, whylen, "%s: not a TZif file", z->name);
		goto fail;
	}
	b1 = block_len(&h1, 4);
	if (b1 > len - HDR_LEN) {
		tz_why_set(why, whylen, "%s: truncated TZif file", z->name);
		goto fail;
	}
	if (h1.version == 1) {
		/* Version 1: 32-bit data, no footer. */
		if (block_parse(z, &h1, p + HDR_LEN, 4, why, whylen) != 0)
			goto fail;
		return z;
	}
	off = HDR_LEN + (size_t)b1;
	if (hdr_read(p + off, len - off, &h2) != 0 ||
	    (b2 = block_len(&h2, 8)) > len - off - HDR_LEN) {
		tz_why_set(why, whylen, "%s: truncated TZif file", z->name);
		goto fail;
	}
	if (block_parse(z, &h2, p + off + HDR_LEN, 8, why, whylen) != 0)
		goto fail;
	off += HDR_LEN + (size_t)b2;
	/* Footer: "\n" TZ-string "\n". */
	if (off >= len || p[off] != '\n') {
		tz_why_set(why, whylen, "%s: missing TZif footer", z->name);
		goto fail;
	}
	off++;
	for (flen = 0; off + flen < len && p[off + flen] != '\n'; flen++)
		if (flen >= TZ_FOOTER_MAX || p[off + flen] == '\0')
			break;
	if (off + flen >= len || p[off + flen] != '\n') {
		tz_why_set(why, whylen, "%s: bad TZif footer", z->name);
		goto fail;
	}
	memcpy(footer, p + off, flen);
	footer[flen] = '\0';
	if (flen > 0) {
		if (rule_parse(footer, &z->rule) != 0) {
			tz_why_set(why, whylen, "%s: bad TZ rule \"%s\"",
			    z->name, footer);
			goto fail;
		}
		z->has_rule = 1;
		/*
		 * RFC 8536 3.3: with transitions, the string "MUST be
		 * consistent with the last version 2+ transition" (its
		 * offset at that instant is the transition's type's).  A
		 * file where it is not would change the offset just after
		 * the last transition with no transition there, which
		 * tz_next_transition() and tz_local_to_utc() cannot
		 * describe (found by tests/fuzz/fuzz_tz).
		 */
		if (z->ntrans > 0 && rule_offset(&z->rule,
		    z->trans[z->ntrans - 1]) !=
		    z->types[z->tidx[z->ntrans - 1]].utoff) {
			tz_why_set(why, whylen, "%s: TZ rule \"%s\" disagrees "
			    "with the last transition", z->name, footer);
			goto fail;
		}
	}
	return z;
fail:
	saved = errno;
	tz_free(z);
	errno = saved;
	return NULL;
}
