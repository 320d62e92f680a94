/*
 * check_cron.c — unit tests for daemon/core/cron.c and daemon/core/tz.c.
 *
 * test_vectors runs every line of $TESTDATA/cron-vectors.jsonl (TESTDATA
 * defaults to tests/data): parse errors where "error" is true, otherwise
 * each expected instant in turn, compared as text (so the UTC offset
 * counts) and as an instant.  It reports every mismatching vector by id and
 * fails if the number of vectors run differs from the file's line count.
 * The other tests are hand-written: parse-error messages, zone loading and
 * name checks, POSIX TZ footers in synthetic TZif data, and DST cases
 * computed by hand.  Zones come from the system tz database (tzdata).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>

#include "core/cron.h"
#include "core/tz.h"
#include "unit.h"
#include "spool/tzload.h"

#define VECTOR_FILE	"cron-vectors.jsonl"
#define WHY_LEN		256

/* ---- helpers ---------------------------------------------------------- */

/*
 * "YYYY-MM-DDTHH:MM:SS" then "Z" or "+HH:MM" / "-HH:MM" (optionally
 * ":SS"): the instant and the offset it was written with.  0 or -1.
 */
static int
iso_parse(const char *s, int64_t *t, int32_t *off)
{
	int y, mo, d, h, mi, sec, oh, om, os = 0, n = 0, sign;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec,
	    &n) != 6 || n != 19)
		return -1;
	s += n;
	if (strcmp(s, "Z") == 0) {
		*off = 0;
	} else {
		if (*s != '+' && *s != '-')
			return -1;
		sign = *s == '-' ? -1 : 1;
		n = 0;
		if (sscanf(s + 1, "%2d:%2d%n", &oh, &om, &n) != 2 || n != 5)
			return -1;
		if (s[6] == ':' && sscanf(s + 7, "%2d", &os) != 1)
			return -1;
		*off = sign * (oh * 3600 + om * 60 + os);
	}
	*t = tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	    *off;
	return 0;
}

static int64_t
iso(const char *s)
{
	int64_t t;
	int32_t off;

	ck_assert_msg(iso_parse(s, &t, &off) == 0, "bad test instant %s", s);
	return t;
}

static struct tz *
zone(const char *name)
{
	char why[WHY_LEN];
	struct tz *z = tz_load(name, why, sizeof why);

	ck_assert_msg(z != NULL, "tz_load(%s): %s", name, why);
	return z;
}

static struct cron_expr *
expr(const char *text, enum cron_dialect d)
{
	char why[WHY_LEN];
	struct cron_expr *e = cron_parse(text, d, why, sizeof why);

	ck_assert_msg(e != NULL, "cron_parse(%s): %s", text, why);
	return e;
}

static int64_t
next_after(const struct cron_expr *e, const struct tz *z, int64_t t)
{
	int64_t n = 0;

	ck_assert_int_eq(cron_next_fire(e, z, t, &n), 1);
	ck_assert(n > t);
	return n;
}

/* The next `count` fires after `from`, formatted, checked against want. */
static void
check_fires(const char *text, enum cron_dialect d, const char *zname,
    const char *from, const char *const *want, int count)
{
	struct cron_expr *e = expr(text, d);
	struct tz *z = zone(zname);
	char got[TZ_RFC3339_MAX];
	int64_t t = iso(from);
	int i;

	for (i = 0; i < count; i++) {
		t = next_after(e, z, t);
		ck_assert_int_eq(tz_format_rfc3339(z, t, got, sizeof got), 0);
		ck_assert_msg(strcmp(got, want[i]) == 0,
		    "%s in %s after %s: fire %d is %s, want %s", text, zname,
		    from, i + 1, got, want[i]);
	}
	cron_free(e);
	tz_free(z);
}

/* ---- the vector file -------------------------------------------------- */

static long
file_lines(const char *path)
{
	FILE *fp = fopen(path, "r");
	long n = 0;
	int ch, last = '\n';

	ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
	while ((ch = getc(fp)) != EOF) {
		if (ch == '\n')
			n++;
		last = ch;
	}
	if (last != '\n')
		n++;		/* a last line without its newline */
	fclose(fp);
	return n;
}

/* Run one vector; returns the number of problems, each printed. */
static int
vector_run(long lineno, json_t *v)
{
	const char *id, *text, *dialect, *zname, *from, *want;
	char why[WHY_LEN], got[TZ_RFC3339_MAX];
	json_t *next, *item;
	struct cron_expr *e;
	struct tz *z;
	enum cron_dialect d;
	int64_t t, wt;
	int32_t woff;
	size_t i;
	int r, bad = 0;

	id = json_string_value(json_object_get(v, "id"));
	text = json_string_value(json_object_get(v, "expr"));
	dialect = json_string_value(json_object_get(v, "dialect"));
	zname = json_string_value(json_object_get(v, "tz"));
	from = json_string_value(json_object_get(v, "from"));
	next = json_object_get(v, "next");
	if (id == NULL || text == NULL || dialect == NULL || zname == NULL ||
	    from == NULL) {
		fprintf(stderr, "line %ld: vector lacks id/expr/dialect/tz/"
		    "from\n", lineno);
		return 1;
	}
	if (strcmp(dialect, "vixie") == 0)
		d = CRON_DIALECT_VIXIE;
	else if (strcmp(dialect, "quartz") == 0)
		d = CRON_DIALECT_QUARTZ;
	else {
		fprintf(stderr, "%s: unknown dialect %s\n", id, dialect);
		return 1;
	}
	e = cron_parse(text, d, why, sizeof why);
	if (json_is_true(json_object_get(v, "error"))) {
		if (e != NULL) {
			fprintf(stderr, "%s: \"%s\" parsed, want a parse "
			    "error\n", id, text);
			cron_free(e);
			return 1;
		}
		return 0;
	}
	if (!json_is_array(next)) {
		fprintf(stderr, "%s: neither \"error\" nor \"next\"\n", id);
		cron_free(e);
		return 1;
	}
	if (e == NULL) {
		/* CRON-RULES.md 6.5: an error is fine for "next": []. */
		if (json_array_size(next) == 0)
			return 0;
		fprintf(stderr, "%s: \"%s\": %s\n", id, text, why);
		return 1;
	}
	if ((z = tz_load(zname, why, sizeof why)) == NULL) {
		fprintf(stderr, "%s: %s\n", id, why);
		cron_free(e);
		return 1;
	}
	if (iso_parse(from, &t, &woff) != 0) {
		fprintf(stderr, "%s: bad from %s\n", id, from);
		bad++;
		goto out;
	}
	if (json_array_size(next) == 0) {
		r = cron_next_fire(e, z, t, &wt);
		if (r != 0) {
			(void)tz_format_rfc3339(z, wt, got, sizeof got);
			fprintf(stderr, "%s: \"%s\" fires at %s (r=%d), want "
			    "none\n", id, text, r == 1 ? got : "-", r);
			bad++;
		}
		goto out;
	}
	json_array_foreach(next, i, item) {
		want = json_string_value(item);
		if (want == NULL || iso_parse(want, &wt, &woff) != 0) {
			fprintf(stderr, "%s: bad next[%zu]\n", id, i);
			bad++;
			break;
		}
		r = cron_next_fire(e, z, t, &t);
		if (r != 1) {
			fprintf(stderr, "%s: \"%s\" next[%zu]: r=%d, want %s\n",
			    id, text, i, r, want);
			bad++;
			break;
		}
		if (tz_format_rfc3339(z, t, got, sizeof got) != 0)
			snprintf(got, sizeof got, "(unformattable)");
		if (strcmp(got, want) != 0 || t != wt ||
		    tz_offset_at(z, t) != woff) {
			fprintf(stderr, "%s: \"%s\" in %s from %s: next[%zu] "
			    "is %s, want %s\n", id, text, zname, from, i, got,
			    want);
			bad++;
			break;
		}
	}
out:
	tz_free(z);
	cron_free(e);
	return bad;
}

START_TEST(test_vectors)
{
	const char *dir = getenv("TESTDATA");
	char path[4096], *line = NULL;
	json_error_t jerr;
	json_t *v;
	size_t cap = 0;
	long lines, run = 0, failed = 0;
	ssize_t len;
	FILE *fp;
	int n;

	if (dir == NULL || dir[0] == '\0')
		dir = "tests/data";
	n = snprintf(path, sizeof path, "%s/%s", dir, VECTOR_FILE);
	ck_assert(n > 0 && (size_t)n < sizeof path);
	lines = file_lines(path);
	ck_assert_msg(lines > 0, "%s is empty", path);
	fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
	while ((len = getline(&line, &cap, fp)) != -1) {
		run++;
		v = json_loads(line, 0, &jerr);
		if (v == NULL || !json_is_object(v)) {
			fprintf(stderr, "%s:%ld: not a JSON object: %s\n",
			    path, run, jerr.text);
			failed++;
			json_decref(v);
			continue;
		}
		if (vector_run(run, v) != 0)
			failed++;
		json_decref(v);
	}
	free(line);
	fclose(fp);
	ck_assert_msg(run == lines, "ran %ld vectors, file has %ld lines", run,
	    lines);
	ck_assert_msg(failed == 0, "%ld of %ld vectors failed (see stderr)",
	    failed, run);
}
END_TEST

/* ---- parse errors ----------------------------------------------------- */

static const struct {
	const char		*text;
	enum cron_dialect	 d;
	const char		*field;		/* must be in why */
	const char		*token;		/* must be in why */
} bad_exprs[] = {
	{ "* * 32 * *", CRON_DIALECT_VIXIE, "day-of-month: ",
	    "\"32\" out of range 1-31" },
	{ "60 * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"60\"" },
	{ "* 24 * * *", CRON_DIALECT_VIXIE, "hour: ", "\"24\"" },
	{ "* * 0 * *", CRON_DIALECT_VIXIE, "day-of-month: ", "\"0\"" },
	{ "* * * 13 *", CRON_DIALECT_VIXIE, "month: ", "\"13\"" },
	{ "* * * * 8", CRON_DIALECT_VIXIE, "day-of-week: ", "\"8\"" },
	{ "*/0 * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"*/0\"" },
	{ "*/ * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"*/\"" },
	{ "/5 * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"/5\"" },
	{ "-1 * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"-1\"" },
	{ "5- * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"5-\"" },
	{ "5-1 * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"5-1\" is a "
	    "reversed range" },
	{ "0 12 * * FRI-MON", CRON_DIALECT_VIXIE, "day-of-week: ",
	    "\"FRI-MON\"" },
	{ "1,,2 * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"1,,2\"" },
	{ "1-1_0 * * * *", CRON_DIALECT_VIXIE, "minute: ", "\"1-1_0\"" },
	{ "* * * JANU *", CRON_DIALECT_VIXIE, "month: ", "\"JANU\"" },
	{ "* * * * FOO", CRON_DIALECT_VIXIE, "day-of-week: ", "\"FOO\"" },
	{ "0 0 * * 1#6", CRON_DIALECT_VIXIE, "day-of-week: ", "\"1#6\"" },
	{ "* * * *", CRON_DIALECT_VIXIE, "expected 5 fields", "got 4" },
	{ "0 0 0 * * ? *", CRON_DIALECT_VIXIE, "expected 5 fields",
	    "got 7" },
	{ "@reboot", CRON_DIALECT_VIXIE, "\"@reboot\"", "no next fire" },
	{ "@every 5m", CRON_DIALECT_VIXIE, "\"@every\"", "unknown macro" },
	{ "@daily 1", CRON_DIALECT_VIXIE, "\"@daily\"", "no fields" },
	{ "", CRON_DIALECT_VIXIE, "empty", "expression" },
	{ "0 0 * * * *", CRON_DIALECT_QUARTZ, "day-of-month", "\"?\"" },
	{ "0 0 12 ? * ?", CRON_DIALECT_QUARTZ, "day-of-week", "\"?\"" },
	{ "0 ? 12 * * ?", CRON_DIALECT_QUARTZ, "minute: ", "\"?\"" },
	{ "0/120 0 8-18 ? * 2-6", CRON_DIALECT_QUARTZ, "second: ",
	    "\"0/120\" increment 120" },
	{ "0 0 /24 ? * 2-6", CRON_DIALECT_QUARTZ, "hour: ", "\"/24\"" },
	{ "0 0 0 ? 1/13 *", CRON_DIALECT_QUARTZ, "month: ", "\"1/13\"" },
	{ "0 0 0 ? * 0/120", CRON_DIALECT_QUARTZ, "day-of-week: ",
	    "\"0/120\"" },
	{ "0 0 12 ? * 0", CRON_DIALECT_QUARTZ, "day-of-week: ",
	    "\"0\" out of range 1-7" },
	{ "0 0 12 ? * 8", CRON_DIALECT_QUARTZ, "day-of-week: ", "\"8\"" },
	{ "0 0 12 ? * MON#6", CRON_DIALECT_QUARTZ, "day-of-week: ",
	    "\"MON#6\"" },
	{ "0 0 12 ? * 2#0", CRON_DIALECT_QUARTZ, "day-of-week: ", "\"2#0\"" },
	{ "0 0 12 ? * 1#1,3#3", CRON_DIALECT_QUARTZ, "day-of-week: ",
	    "\"1#1,3#3\"" },
	{ "0 0 12 ? * SAT,SUN,L", CRON_DIALECT_QUARTZ, "day-of-week: ",
	    "\"SAT,SUN,L\"" },
	{ "0 0 12 L-31 * ?", CRON_DIALECT_QUARTZ, "day-of-month: ",
	    "\"L-31\"" },
	{ "0 0 12 0W * ?", CRON_DIALECT_QUARTZ, "day-of-month: ", "\"0W\"" },
	{ "0 0 12 32W * ?", CRON_DIALECT_QUARTZ, "day-of-month: ",
	    "\"32W\"" },
	{ "L 0 12 * * ?", CRON_DIALECT_QUARTZ, "second: ", "\"L\"" },
	{ "0 0 12 1 1 ? 1969", CRON_DIALECT_QUARTZ, "year: ", "\"1969\"" },
	{ "0 0 12 1 1 ? 2200", CRON_DIALECT_QUARTZ, "year: ", "\"2200\"" },
	{ "0 0 12 1 1 ? 2030-2020", CRON_DIALECT_QUARTZ, "year: ",
	    "\"2030-2020\"" },
	{ "0 15 10 * * ? 2005 *", CRON_DIALECT_QUARTZ, "expected 6 or 7",
	    "got 8" },
	{ "0 0 * * *", CRON_DIALECT_QUARTZ, "expected 6 or 7", "got 5" },
	{ "* * * * Jan-Foo ?", CRON_DIALECT_QUARTZ, "month: ",
	    "\"Jan-Foo\"" },
	{ "@daily", CRON_DIALECT_QUARTZ, "\"@daily\"", "vixie" },
	/*
	 * README "Cron expressions": forms Quartz 2.3.2 accepts that
	 * taskspool refuses (CRON-RULES.md 4.3), and cronie's lower-case
	 * macros.
	 */
	{ "0 0 0 1W-5 * ?", CRON_DIALECT_QUARTZ, "day-of-month: ",
	    "\"1W-5\"" },
	{ "0 0 0 ? * 6L-2", CRON_DIALECT_QUARTZ, "day-of-week: ",
	    "\"6L-2\"" },
	{ "0 0 0 ? * L-2", CRON_DIALECT_QUARTZ, "day-of-week: ",
	    "\"L-2\"" },
	{ "0 0 0 1,15W * ?", CRON_DIALECT_QUARTZ, "day-of-month: ",
	    "\"1,15W\"" },
	{ "@DAILY", CRON_DIALECT_VIXIE, "\"@DAILY\"", "unknown macro" },
	{ "@Hourly", CRON_DIALECT_VIXIE, "\"@Hourly\"", "unknown macro" },
};

START_TEST(test_parse_errors)
{
	char why[WHY_LEN];
	struct cron_expr *e;
	size_t i;

	for (i = 0; i < sizeof bad_exprs / sizeof bad_exprs[0]; i++) {
		why[0] = '\0';
		errno = 0;
		e = cron_parse(bad_exprs[i].text, bad_exprs[i].d, why,
		    sizeof why);
		ck_assert_msg(e == NULL, "\"%s\" parsed", bad_exprs[i].text);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_msg(strstr(why, bad_exprs[i].field) != NULL &&
		    strstr(why, bad_exprs[i].token) != NULL,
		    "\"%s\": message \"%s\" lacks %s / %s", bad_exprs[i].text,
		    why, bad_exprs[i].field, bad_exprs[i].token);
	}
	/* No buffer, or a tiny one, is fine. */
	ck_assert_ptr_null(cron_parse("* * 32 * *", CRON_DIALECT_VIXIE, NULL,
	    0));
	ck_assert_ptr_null(cron_parse("* * 32 * *", CRON_DIALECT_VIXIE, why,
	    8));
	ck_assert_uint_eq(strlen(why), 7);
	ck_assert_ptr_null(cron_parse(NULL, CRON_DIALECT_VIXIE, why,
	    sizeof why));
}
END_TEST

START_TEST(test_parse_accepts)
{
	static const struct {
		const char		*text;
		enum cron_dialect	 d;
		int			 fixed;
	} ok[] = {
		{ "0 12 * * SAT-SUN", CRON_DIALECT_VIXIE, 1 },
		{ "5/15 * * * *", CRON_DIALECT_VIXIE, 0 },	/* hour '*' */
		{ "5/15 3 * * *", CRON_DIALECT_VIXIE, 1 },
		{ "0 0 30 2 *", CRON_DIALECT_VIXIE, 1 },
		{ "0 9 * jan,Jul mon-FRI", CRON_DIALECT_VIXIE, 1 },
		{ "\t0  0 * * 7 ", CRON_DIALECT_VIXIE, 1 },
		{ "*/15 * * * *", CRON_DIALECT_VIXIE, 0 },
		{ "0 * * * *", CRON_DIALECT_VIXIE, 0 },
		{ "@hourly", CRON_DIALECT_VIXIE, 0 },
		{ "@daily", CRON_DIALECT_VIXIE, 1 },
		{ "0 0/20 1 * * ?", CRON_DIALECT_QUARTZ, 1 },
		{ "* 0 1 * * ?", CRON_DIALECT_QUARTZ, 0 },
		{ "0 0 12 ? * FRIL", CRON_DIALECT_QUARTZ, 1 },
		{ "0 0 12 L-3W * ?", CRON_DIALECT_QUARTZ, 1 },
		{ "0 0 22-2 * * ?", CRON_DIALECT_QUARTZ, 1 },
		{ "0 0 0 1 1 ? 2020/10", CRON_DIALECT_QUARTZ, 1 },
		{ "0 0 0 lw * ?", CRON_DIALECT_QUARTZ, 1 },
	};
	struct cron_expr *e;
	enum cron_dialect d;
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		e = expr(ok[i].text, ok[i].d);
		ck_assert_msg(cron_is_fixed_time(e) == ok[i].fixed,
		    "\"%s\": fixed-time %d", ok[i].text, !ok[i].fixed);
		ck_assert_int_eq(cron_dialect(e), ok[i].d);
		ck_assert_int_eq(cron_dialect_guess(ok[i].text, &d), 0);
		ck_assert_int_eq(d, ok[i].d);
		cron_free(e);
	}
	ck_assert_int_eq(cron_dialect_guess("* * * *", &d), -1);
	ck_assert_int_eq(cron_dialect_guess("0 0 0 * * ? 2020 x", &d), -1);
	cron_free(NULL);
}
END_TEST

/* ---- time zones ------------------------------------------------------- */

START_TEST(test_tz_names)
{
	static const char *const bad[] = {
		"../etc/passwd", "/etc/passwd", "America/../../etc/passwd",
		"..", ".", "", "America//New_York", "America/", "./UTC",
		"Europe/.hidden", "Europe/Riga\n", "Europe/Ri ga", "Asia/$HOME",
		"Etc/UTC;rm",
	};
	char why[WHY_LEN], longname[TZ_NAME_MAX + 2];
	struct tz *z;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(!tz_name_ok(bad[i]), "\"%s\" accepted", bad[i]);
		errno = 0;
		z = tz_load(bad[i], why, sizeof why);
		ck_assert_msg(z == NULL, "tz_load(\"%s\") loaded", bad[i]);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_msg(strstr(why, "invalid time zone name") != NULL,
		    "%s", why);
	}
	memset(longname, 'A', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	ck_assert(!tz_name_ok(longname));
	ck_assert(!tz_name_ok(NULL));
	ck_assert_ptr_null(tz_load(NULL, why, sizeof why));

	errno = 0;
	ck_assert_ptr_null(tz_load("Nope/Zone", why, sizeof why));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_msg(strstr(why, "Nope/Zone: unknown time zone") != NULL,
	    "%s", why);
	ck_assert_ptr_null(tz_load("America", why, sizeof why));
	ck_assert_int_eq(errno, ENOENT);
	/* A file of the database that is not TZif data (where shipped). */
	if (access("/usr/share/zoneinfo/zone1970.tab", R_OK) == 0) {
		ck_assert_ptr_null(tz_load("zone1970.tab", why, sizeof why));
		ck_assert_msg(strstr(why, "not a TZif file") != NULL, "%s",
		    why);
	}

	for (i = 0; i < 3; i++) {
		static const char *const good[] = {
			"Etc/GMT+5", "America/Argentina/Buenos_Aires",
			"America/Port-au-Prince",
		};

		ck_assert_msg(tz_name_ok(good[i]), "%s", good[i]);
		z = zone(good[i]);
		ck_assert_str_eq(tz_name(z), good[i]);
		ck_assert(!tz_is_utc(z));
		tz_free(z);
	}
	tz_free(NULL);
}
END_TEST

START_TEST(test_tz_tzdir)
{
	char why[WHY_LEN];
	struct tz *z;

	/* TZDIR is honoured; "UTC" needs no file at all. */
	ck_assert_int_eq(setenv("TZDIR", "/nonexistent-zoneinfo", 1), 0);
	z = tz_load("UTC", why, sizeof why);
	ck_assert_ptr_nonnull(z);
	ck_assert(tz_is_utc(z));
	ck_assert_int_eq(tz_offset_at(z, iso("2024-07-01T00:00:00Z")), 0);
	ck_assert_int_eq(tz_next_transition(z, 0, &(int64_t){ 0 }), 0);
	tz_free(z);
	ck_assert_ptr_null(tz_load("Europe/Riga", why, sizeof why));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(setenv("TZDIR", "/usr/share/zoneinfo/America", 1),
	    0);
	z = zone("New_York");
	ck_assert_int_eq(tz_offset_at(z, iso("2024-07-01T00:00:00Z")),
	    -4 * 3600);
	tz_free(z);
	ck_assert_int_eq(unsetenv("TZDIR"), 0);
}
END_TEST

START_TEST(test_tz_offsets)
{
	struct tz *z = zone("America/New_York");
	struct tz_local l;
	int64_t spring = iso("2024-03-10T07:00:00Z");
	int64_t fall = iso("2024-11-03T06:00:00Z");
	int64_t w;
	char buf[TZ_RFC3339_MAX];

	ck_assert_int_eq(tz_offset_at(z, iso("2024-01-15T12:00:00Z")),
	    -5 * 3600);
	ck_assert_int_eq(tz_offset_at(z, spring - 1), -5 * 3600);
	ck_assert_int_eq(tz_offset_at(z, spring), -4 * 3600);
	ck_assert_int_eq(tz_next_transition(z, iso("2024-01-01T00:00:00Z"),
	    &w), 1);
	ck_assert_int_eq(w, spring);
	ck_assert_int_eq(tz_next_transition(z, spring, &w), 1);
	ck_assert_int_eq(w, fall);
	ck_assert_int_eq(tz_prev_transition(z, fall - 1, &w), 1);
	ck_assert_int_eq(w, spring);
	ck_assert_int_eq(tz_prev_transition(z, spring, &w), 1);
	ck_assert_int_eq(w, spring);
	/* Past the table (2037): the footer rule "EST5EDT,M3.2.0,M11.1.0". */
	ck_assert_int_eq(tz_offset_at(z, iso("2150-07-01T00:00:00Z")),
	    -4 * 3600);
	ck_assert_int_eq(tz_offset_at(z, iso("2150-12-01T00:00:00Z")),
	    -5 * 3600);
	ck_assert_int_eq(tz_next_transition(z, iso("2150-01-01T00:00:00Z"),
	    &w), 1);
	ck_assert_int_eq(w, iso("2150-03-08T07:00:00Z"));
	ck_assert_int_eq(tz_prev_transition(z, iso("2150-01-01T00:00:00Z"),
	    &w), 1);
	ck_assert_int_eq(w, iso("2149-11-02T06:00:00Z"));	/* 1st Sun */

	/* Wall clock → instants. */
	ck_assert_int_eq(tz_local_to_utc(z, iso("2024-03-10T02:30:00Z"), &l),
	    0);
	ck_assert_int_eq(l.kind, TZ_LOCAL_GAP);
	ck_assert_int_eq(l.first_s, spring);
	ck_assert_int_eq(l.shift_s, 3600);
	ck_assert_int_eq(tz_local_to_utc(z, iso("2024-11-03T01:30:00Z"), &l),
	    0);
	ck_assert_int_eq(l.kind, TZ_LOCAL_OVERLAP);
	ck_assert_int_eq(l.first_s, iso("2024-11-03T05:30:00Z"));
	ck_assert_int_eq(l.second_s, iso("2024-11-03T06:30:00Z"));
	ck_assert_int_eq(l.shift_s, 3600);
	ck_assert_int_eq(tz_local_to_utc(z, iso("2024-06-01T12:00:00Z"), &l),
	    0);
	ck_assert_int_eq(l.kind, TZ_LOCAL_UNIQUE);
	ck_assert_int_eq(l.first_s, iso("2024-06-01T16:00:00Z"));
	ck_assert_int_eq(tz_local_to_utc(z, INT64_MAX, &l), -1);
	ck_assert_int_eq(errno, ERANGE);

	ck_assert_int_eq(tz_format_rfc3339(z, spring, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "2024-03-10T03:00:00-04:00");
	ck_assert_int_eq(tz_format_rfc3339(z, spring, buf, 10), -1);
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_int_eq(tz_format_rfc3339(z, INT64_MAX, buf, sizeof buf),
	    -1);
	/* Local mean time before 1883: -4:56:02, with its seconds. */
	ck_assert_int_eq(tz_format_rfc3339(z, iso("1850-01-01T12:00:00Z"),
	    buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "1850-01-01T07:03:58-04:56:02");
	/* Milliseconds: shown only when not a whole second; an instant
	 * before the epoch is floored (-1 ms is 23:59:59.999 the day
	 * before, not 00:00:00 minus 999). */
	ck_assert_int_eq(tz_format_rfc3339_ms(z, spring * 1000 + 250, buf,
	    sizeof buf), 0);
	ck_assert_str_eq(buf, "2024-03-10T03:00:00.250-04:00");
	ck_assert_int_eq(tz_format_rfc3339_ms(z, spring * 1000, buf,
	    sizeof buf), 0);
	ck_assert_str_eq(buf, "2024-03-10T03:00:00-04:00");
	ck_assert_int_eq(tz_format_rfc3339_ms(z, spring * 1000 + 5, buf, 26),
	    -1);
	ck_assert_int_eq(errno, ENOSPC);
	tz_free(z);
	z = tz_new_utc("UTC");
	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(tz_format_rfc3339_ms(z, -1, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "1969-12-31T23:59:59.999Z");
	tz_free(z);

	/* Odd sizes: Lord Howe moves 30 min, Chatham sits at +12:45. */
	z = zone("Australia/Lord_Howe");
	ck_assert_int_eq(tz_local_to_utc(z, iso("2024-10-06T02:15:00Z"), &l),
	    0);
	ck_assert_int_eq(l.kind, TZ_LOCAL_GAP);
	ck_assert_int_eq(l.shift_s, 1800);
	ck_assert_int_eq(tz_format_rfc3339(z, l.first_s, buf, sizeof buf),
	    0);
	ck_assert_str_eq(buf, "2024-10-06T02:30:00+11:00");
	tz_free(z);
	z = zone("Pacific/Chatham");
	ck_assert_int_eq(tz_offset_at(z, iso("2024-07-01T00:00:00Z")),
	    12 * 3600 + 45 * 60);
	tz_free(z);
	/* Europe/London in winter is +00:00, not Z: only UTC gets Z. */
	z = zone("Europe/London");
	ck_assert_int_eq(tz_format_rfc3339(z, iso("2024-01-01T00:00:00Z"),
	    buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "2024-01-01T00:00:00+00:00");
	tz_free(z);
	z = zone("Etc/UTC");
	ck_assert(tz_is_utc(z));
	tz_free(z);
}
END_TEST

/* A TZif v2 image with no transitions, one type and this footer. */
static size_t
tzif_build(unsigned char *buf, size_t cap, int32_t utoff, const char *footer)
{
	static const unsigned char counts[24] = {
		0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0, /* isut isstd leap */
		0, 0, 0, 0,  0, 0, 0, 1,  0, 0, 0, 4, /* time type char */
	};
	unsigned char *p = buf;
	int pass;

	ck_assert(cap >= 2 * (44 + 10) + strlen(footer) + 2);
	for (pass = 0; pass < 2; pass++) {
		memcpy(p, "TZif2", 5);
		memset(p + 5, 0, 15);
		memcpy(p + 20, counts, sizeof counts);
		p += 44;
		p[0] = (unsigned char)((uint32_t)utoff >> 24);
		p[1] = (unsigned char)((uint32_t)utoff >> 16);
		p[2] = (unsigned char)((uint32_t)utoff >> 8);
		p[3] = (unsigned char)utoff;
		p[4] = 0;	/* isdst */
		p[5] = 0;	/* abbreviation index */
		memcpy(p + 6, "XXX", 4);
		p += 10;
	}
	*p++ = '\n';
	memcpy(p, footer, strlen(footer));
	p += strlen(footer);
	*p++ = '\n';
	return (size_t)(p - buf);
}

static struct tz *
tz_footer(int32_t utoff, const char *footer)
{
	unsigned char buf[512];
	char why[WHY_LEN];
	size_t len = tzif_build(buf, sizeof buf, utoff, footer);
	struct tz *z = tz_load_buf(buf, len, footer, why, sizeof why);

	ck_assert_msg(z != NULL, "%s: %s", footer, why);
	return z;
}

START_TEST(test_tz_footer)
{
	unsigned char buf[512];
	char why[WHY_LEN];
	struct tz *z, *ny;
	int64_t t, w;
	size_t len;

	/* Southern hemisphere, minutes in offsets and rule times. */
	z = tz_footer(45900, "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45");
	ck_assert_int_eq(tz_offset_at(z, iso("2024-07-01T00:00:00Z")), 45900);
	ck_assert_int_eq(tz_offset_at(z, iso("2025-01-01T00:00:00Z")), 49500);
	ck_assert_int_eq(tz_next_transition(z, iso("2024-07-01T00:00:00Z"),
	    &w), 1);
	ck_assert_int_eq(w, iso("2024-09-28T14:00:00Z"));	/* 02:45 */
	tz_free(z);

	/* DST all year (POSIX example): never changes. */
	z = tz_footer(-18000, "EST5EDT4,0/0,J365/25");
	ck_assert_int_eq(tz_offset_at(z, iso("2024-01-01T05:00:00Z")),
	    -14400);
	ck_assert_int_eq(tz_offset_at(z, iso("2024-12-31T23:59:59Z")),
	    -14400);
	ck_assert_int_eq(tz_offset_at(z, iso("2025-07-01T00:00:00Z")),
	    -14400);
	ck_assert_int_eq(tz_next_transition(z, 0, &w), 0);
	tz_free(z);

	/* Negative rule time (RFC 8536): Nuuk switches at -01:00. */
	z = tz_footer(-7200, "<-02>2<-01>,M3.5.0/-1,M10.5.0/0");
	ck_assert_int_eq(tz_next_transition(z, iso("2030-01-01T00:00:00Z"),
	    &w), 1);
	ck_assert_int_eq(w, iso("2030-03-31T01:00:00Z"));	/* Sat 23:00 */
	tz_free(z);

	/* "24" hours: Santiago changes at the end of Saturday. */
	z = tz_footer(-14400, "<-04>4<-03>,M9.1.6/24,M4.1.6/24");
	ck_assert_int_eq(tz_next_transition(z, iso("2030-06-01T00:00:00Z"),
	    &w), 1);
	ck_assert_int_eq(w, iso("2030-09-08T04:00:00Z"));
	tz_free(z);

	/* A rule alone must agree with the real table it summarises. */
	z = tz_footer(-18000, "EST5EDT,M3.2.0,M11.1.0");
	ny = zone("America/New_York");
	for (t = iso("2007-01-01T00:00:00Z"); t < iso("2037-01-01T00:00:00Z");
	    t += 3599)
		ck_assert_int_eq(tz_offset_at(z, t), tz_offset_at(ny, t));
	tz_free(ny);
	tz_free(z);

	/* Malformed data is refused with a reason. */
	len = tzif_build(buf, sizeof buf, 0, "XX0");
	ck_assert_ptr_null(tz_load_buf(buf, len, "bad", why, sizeof why));
	ck_assert_msg(strstr(why, "bad TZ rule") != NULL, "%s", why);
	len = tzif_build(buf, sizeof buf, 0, "UTC0");
	ck_assert_ptr_null(tz_load_buf(buf, len - 1, "cut", why, sizeof why));
	ck_assert_ptr_null(tz_load_buf(buf, 30, "cut", why, sizeof why));
	ck_assert_msg(strstr(why, "not a TZif") != NULL, "%s", why);
	buf[4] = '9';
	ck_assert_ptr_null(tz_load_buf(buf, len, "ver", why, sizeof why));
}
END_TEST

/*
 * A TZif v2 image whose v2 block has one transition, at t to a type of
 * offset utoff, and this footer (the v1 block as tzif_build's).
 */
static size_t
tzif_one(unsigned char *buf, size_t cap, int64_t t, int32_t utoff,
    const char *footer)
{
	static const unsigned char counts[24] = {
		0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0, /* isut isstd leap */
		0, 0, 0, 1,  0, 0, 0, 1,  0, 0, 0, 4, /* time type char */
	};
	unsigned char *p = buf;
	size_t n = tzif_build(buf, cap, 0, "");

	/* Keep the v1 block (44 + 10 bytes), rewrite the v2 block. */
	ck_assert(n > 54 && cap >= 54 + 44 + 8 + 1 + 10 + strlen(footer) + 2);
	p += 54;
	memcpy(p, "TZif2", 5);
	memset(p + 5, 0, 15);
	memcpy(p + 20, counts, sizeof counts);
	p += 44;
	for (int i = 0; i < 8; i++)
		*p++ = (unsigned char)((uint64_t)t >> (56 - 8 * i));
	*p++ = 0;	/* the transition's type index */
	for (int i = 0; i < 4; i++)
		*p++ = (unsigned char)((uint32_t)utoff >> (24 - 8 * i));
	*p++ = 0;	/* isdst */
	*p++ = 0;	/* abbreviation index */
	memcpy(p, "XXX", 4);
	p += 4;
	*p++ = '\n';
	memcpy(p, footer, strlen(footer));
	p += strlen(footer);
	*p++ = '\n';
	return (size_t)(p - buf);
}

/*
 * RFC 8536 3.3: a nonempty footer "MUST be consistent with the last
 * version 2+ transition".  A file whose last transition goes to +00:00
 * while its footer says +05:45 is refused (tests/fuzz/fuzz_tz found one:
 * tz_local_to_utc() then failed with EINVAL for a local time just after
 * the last transition, regress/fuzz_tz/); the consistent variants load.
 */
START_TEST(test_tz_footer_consistent)
{
	unsigned char buf[512];
	char why[WHY_LEN];
	struct tz *z;
	struct tz_local loc;
	size_t len;
	int64_t t = iso("2001-09-09T01:46:40Z");	/* 1000000000 */

	len = tzif_one(buf, sizeof buf, t, 0, "<+0545>-5:45");
	ck_assert_ptr_null(tz_load_buf(buf, len, "bad", why, sizeof why));
	ck_assert_msg(strstr(why, "disagrees with the last transition") !=
	    NULL, "%s", why);
	ck_assert_int_eq(errno, EINVAL);

	len = tzif_one(buf, sizeof buf, t, 20700, "<+0545>-5:45");
	ck_assert_ptr_nonnull(z = tz_load_buf(buf, len, "ok", why,
	    sizeof why));
	ck_assert_int_eq(tz_offset_at(z, iso("2030-01-01T00:00:00Z")), 20700);
	tz_free(z);

	len = tzif_one(buf, sizeof buf, t, 0, "UTC0");
	ck_assert_ptr_nonnull(z = tz_load_buf(buf, len, "ok", why,
	    sizeof why));
	ck_assert_int_eq(tz_local_to_utc(z, 2147483647, &loc), 0);
	ck_assert_int_eq(loc.kind, TZ_LOCAL_UNIQUE);
	ck_assert_int_eq(loc.first_s, 2147483647);
	tz_free(z);
}
END_TEST

/* ---- next fire: hand-computed cases ----------------------------------- */

/* Fires of e in z whose local date is `day` (YYYY-MM-DD). */
static int
fires_on(const char *text, const char *zname, const char *day)
{
	struct cron_expr *e = expr(text, CRON_DIALECT_VIXIE);
	struct tz *z = zone(zname);
	char from[40], buf[TZ_RFC3339_MAX];
	int64_t t;
	int n = 0;

	snprintf(from, sizeof from, "%sT00:00:00Z", day);
	for (t = iso(from) - 2 * 86400;;) {
		t = next_after(e, z, t);
		ck_assert_int_eq(tz_format_rfc3339(z, t, buf, sizeof buf), 0);
		if (strncmp(buf, day, 10) > 0)
			break;
		if (strncmp(buf, day, 10) == 0)
			n++;
	}
	cron_free(e);
	tz_free(z);
	return n;
}

START_TEST(test_dst_berlin_day_counts)
{
	/* FIELD-FAILURES B28: one run per real hour / half hour. */
	ck_assert_int_eq(fires_on("30 2 * * *", "Europe/Berlin",
	    "2025-03-30"), 1);
	ck_assert_int_eq(fires_on("30 2 * * *", "Europe/Berlin",
	    "2025-10-26"), 1);
	ck_assert_int_eq(fires_on("0 * * * *", "Europe/Berlin",
	    "2025-03-30"), 23);
	ck_assert_int_eq(fires_on("0 * * * *", "Europe/Berlin",
	    "2025-10-26"), 25);
	ck_assert_int_eq(fires_on("*/30 * * * *", "Europe/Berlin",
	    "2025-03-30"), 46);
	ck_assert_int_eq(fires_on("*/30 * * * *", "Europe/Berlin",
	    "2025-10-26"), 50);
	ck_assert_int_eq(fires_on("0 0-5 * * *", "Europe/Berlin",
	    "2025-10-26"), 6);
}
END_TEST

START_TEST(test_dst_hand)
{
	static const char *const berlin_spring[] = {
		"2025-03-30T03:00:00+02:00", "2025-03-31T02:30:00+02:00",
	};
	static const char *const berlin_fall[] = {
		"2025-10-26T02:30:00+02:00", "2025-10-27T02:30:00+01:00",
	};
	static const char *const utc_fall[] = {	/* B29: never shifted */
		"2022-10-30T00:59:00Z", "2022-10-30T01:00:00Z",
		"2022-10-30T01:30:00Z", "2022-10-30T01:59:00Z",
		"2022-10-30T02:00:00Z",
	};
	static const char *const ny_gap_quartz[] = {	/* seconds kept */
		"2024-03-10T03:00:00-04:00", "2024-03-11T02:30:15-04:00",
	};
	static const char *const apia[] = {	/* 24 h jump: no catch-up */
		"2012-12-30T00:00:00+14:00", "2013-12-30T00:00:00+14:00",
	};
	static const char *const quartz_wrap[] = {
		"2024-01-01T22:00:00Z", "2024-01-01T23:00:00Z",
		"2024-01-02T00:00:00Z", "2024-01-02T01:00:00Z",
		"2024-01-02T02:00:00Z", "2024-01-02T22:00:00Z",
	};
	static const char *const last_fri[] = {
		"2024-01-26T12:00:00Z", "2024-02-23T12:00:00Z",
		"2024-03-29T12:00:00Z",
	};
	static const char *const leap[] = { "2104-02-29T00:00:00Z" };
	static const char *const ny_fixed_overlap[] = {
		"2024-11-03T01:30:00-04:00", "2024-11-04T01:30:00-05:00",
	};
	static const char *const ny_interval_overlap[] = {
		"2024-11-03T01:30:00-04:00", "2024-11-03T01:00:00-05:00",
		"2024-11-03T01:30:00-05:00", "2024-11-03T02:00:00-05:00",
	};

	check_fires("30 2 * * *", CRON_DIALECT_VIXIE, "Europe/Berlin",
	    "2025-03-29T22:00:00Z", berlin_spring, 2);
	check_fires("30 2 * * *", CRON_DIALECT_VIXIE, "Europe/Berlin",
	    "2025-10-25T22:00:00Z", berlin_fall, 2);
	check_fires("59 0,1 * * *", CRON_DIALECT_VIXIE, "UTC",
	    "2022-10-29T23:00:00Z", utc_fall, 1);
	check_fires("0 1 * * *", CRON_DIALECT_VIXIE, "UTC",
	    "2022-10-30T00:59:00Z", utc_fall + 1, 1);
	check_fires("30 1 * * *", CRON_DIALECT_VIXIE, "UTC",
	    "2022-10-30T01:00:00Z", utc_fall + 2, 1);
	check_fires("59 1 * * *", CRON_DIALECT_VIXIE, "UTC",
	    "2022-10-30T01:30:00Z", utc_fall + 3, 1);
	check_fires("0 2 * * *", CRON_DIALECT_VIXIE, "UTC",
	    "2022-10-30T01:59:00Z", utc_fall + 4, 1);
	check_fires("15 30 2 * * ?", CRON_DIALECT_QUARTZ, "America/New_York",
	    "2024-03-10T00:00:00-05:00", ny_gap_quartz, 2);
	check_fires("0 0 30 12 *", CRON_DIALECT_VIXIE, "Pacific/Apia",
	    "2011-12-01T00:00:00Z", apia, 2);
	check_fires("0 0 22-2 * * ?", CRON_DIALECT_QUARTZ, "UTC",
	    "2024-01-01T03:00:00Z", quartz_wrap, 6);
	check_fires("0 0 12 ? * FRIL", CRON_DIALECT_QUARTZ, "UTC",
	    "2024-01-01T00:00:00Z", last_fri, 3);
	check_fires("0 0 29 2 *", CRON_DIALECT_VIXIE, "UTC",
	    "2096-03-01T00:00:00Z", leap, 1);
	check_fires("30 1 * * *", CRON_DIALECT_VIXIE, "America/New_York",
	    "2024-11-03T00:00:00-04:00", ny_fixed_overlap, 2);
	check_fires("0,30 * * * *", CRON_DIALECT_VIXIE, "America/New_York",
	    "2024-11-03T01:15:00-04:00", ny_interval_overlap, 4);
}
END_TEST

/*
 * The accepted forms of README "Cron expressions" beyond the vectors,
 * fires worked out with a calendar (2026-01-01 is a Thursday).
 */
START_TEST(test_rules_forms)
{
	/*
	 * L-2W: the weekday nearest to the last day minus 2.  Jan: 31-2 =
	 * 29, Thu.  Feb: 28-2 = 26, Thu.  Mar: 31-2 = 29, Sun -> Mon 30.
	 */
	static const char *const l2w[] = {
		"2026-01-29T00:00:00Z", "2026-02-26T00:00:00Z",
		"2026-03-30T00:00:00Z",
	};
	/*
	 * L-30W (Quartz 2.3.2 hangs on it): Feb 28-30 < 1 and Apr 30-30 = 0
	 * do not exist; Mar 1 is a Sunday -> Mon 2; May 1 is a Friday;
	 * Jun 0 no; Jul 1 is a Wednesday.
	 */
	static const char *const l30w[] = {
		"2026-03-02T00:00:00Z", "2026-05-01T00:00:00Z",
		"2026-07-01T00:00:00Z",
	};
	/* 5-FRI = FRI-FRI: Fridays 2, 9, 16 January. */
	static const char *const fridays[] = {
		"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z",
		"2026-01-16T00:00:00Z",
	};
	/* MON-5, 1-FRI, quartz 2-FRI: Mon-Fri: Fri 2, Mon 5, Tue 6. */
	static const char *const weekdays[] = {
		"2026-01-02T00:00:00Z", "2026-01-05T00:00:00Z",
		"2026-01-06T00:00:00Z",
	};
	/*
	 * 31W (CRON-RULES.md 4.3, where Quartz 2.3.2 differs): months
	 * with a 31st only.  May 31 2026 Sun -> Fri 29; Jul 31 Fri; Aug 31
	 * Mon; Oct 31 Sat -> Fri 30; Dec 31 Thu; Jan 31 2027 Sun -> Fri
	 * 29; Mar 31 Wed; then no 31 April (Quartz: Fri 2027-04-30), so
	 * May 31 2027, a Monday.
	 */
	static const char *const w31[] = {
		"2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z",
		"2026-08-31T00:00:00Z", "2026-10-30T00:00:00Z",
		"2026-12-31T00:00:00Z", "2027-01-29T00:00:00Z",
		"2027-03-31T00:00:00Z", "2027-05-31T00:00:00Z",
	};
	static const struct {
		const char		*text;
		enum cron_dialect	 d;
		const char		*from;
		const char *const	*want;
		int			 count;
	} forms[] = {
		{ "0 0 0 L-2W * ?", CRON_DIALECT_QUARTZ, NULL, l2w, 3 },
		{ "0 0 0 L-30W * ?", CRON_DIALECT_QUARTZ, NULL, l30w, 3 },
		{ "0 0 * * 5-FRI", CRON_DIALECT_VIXIE, NULL, fridays, 3 },
		{ "0 0 * * MON-5", CRON_DIALECT_VIXIE, NULL, weekdays, 3 },
		{ "0 0 * * 1-FRI", CRON_DIALECT_VIXIE, NULL, weekdays, 3 },
		{ "0 0 0 ? * 2-FRI", CRON_DIALECT_QUARTZ, NULL, weekdays, 3 },
		{ "0 0 0 31W * ?", CRON_DIALECT_QUARTZ, "2026-05-28T20:26:40Z",
		    w31, 8 },
	};
	size_t i;

	for (i = 0; i < sizeof forms / sizeof forms[0]; i++)
		check_fires(forms[i].text, forms[i].d, "UTC",
		    forms[i].from != NULL ? forms[i].from :
		    "2026-01-01T00:00:00Z", forms[i].want, forms[i].count);
}
END_TEST

START_TEST(test_never_and_errors)
{
	static const struct {
		const char		*text;
		enum cron_dialect	 d;
	} never[] = {
		{ "0 0 30 2 *", CRON_DIALECT_VIXIE },
		{ "0 0 31 4 *", CRON_DIALECT_VIXIE },
		{ "0 0 0 30 2 ?", CRON_DIALECT_QUARTZ },
		{ "0 0 0 ? 2 MON#5 2027", CRON_DIALECT_QUARTZ },
		{ "0 0 0 1 1 ? 2020", CRON_DIALECT_QUARTZ },
	};
	struct timespec a, b;
	struct cron_expr *e;
	struct tz *z = zone("America/New_York");
	int64_t n;
	size_t i;

	for (i = 0; i < sizeof never / sizeof never[0]; i++) {
		e = expr(never[i].text, never[i].d);
		clock_gettime(CLOCK_MONOTONIC, &a);
		ck_assert_int_eq(cron_next_fire(e, z,
		    iso("2024-01-01T00:00:00Z"), &n), 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		/* Bounded search: well under a second even under ASan. */
		ck_assert_msg(b.tv_sec - a.tv_sec < 2, "%s took %lds",
		    never[i].text, (long)(b.tv_sec - a.tv_sec));
		cron_free(e);
	}
	e = expr("* * * * *", CRON_DIALECT_VIXIE);
	ck_assert_int_eq(cron_next_fire(NULL, z, 0, &n), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(cron_next_fire(e, NULL, 0, &n), -1);
	ck_assert_int_eq(cron_next_fire(e, z, 0, NULL), -1);
	ck_assert_int_eq(cron_next_fire(e, z, INT64_MAX, &n), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_int_eq(cron_next_fire(e, z, TZ_EPOCH_MIN - 1, &n), -1);
	/* The end of the range answers "none", not garbage. */
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(cron_next_fire(e, z,
		    iso("9999-12-31T23:58:00Z"), &n), 1);
		ck_assert_int_eq(n, TZ_EPOCH_MAX - 59);
		ck_assert_int_eq(cron_next_fire(e, z, n, &n), 0);
		tz_free(z);
		z = i == 0 ? zone("UTC") : NULL;
	}
	cron_free(e);
}
END_TEST

/* Stateless chaining never repeats or goes back, in every kind of zone. */
START_TEST(test_monotonic_chains)
{
	static const char *const zones[] = {
		"America/New_York", "Europe/Riga", "Australia/Lord_Howe",
		"Pacific/Chatham", "Antarctica/Troll", "America/Santiago",
		"Asia/Hebron", "Pacific/Apia", "UTC",
	};
	static const struct {
		const char		*text;
		enum cron_dialect	 d;
	} exprs[] = {
		{ "*/7 * * * *", CRON_DIALECT_VIXIE },
		{ "30 0-3 * * *", CRON_DIALECT_VIXIE },
		{ "0 0 * * *", CRON_DIALECT_VIXIE },
		{ "0 */5 0-3 * * ?", CRON_DIALECT_QUARTZ },
		{ "0 30 2 L * ?", CRON_DIALECT_QUARTZ },
	};
	struct cron_expr *e;
	struct tz *z;
	int64_t t, prev;
	size_t i, j;
	int k;

	for (i = 0; i < sizeof zones / sizeof zones[0]; i++) {
		z = zone(zones[i]);
		for (j = 0; j < sizeof exprs / sizeof exprs[0]; j++) {
			e = expr(exprs[j].text, exprs[j].d);
			t = iso("2011-01-01T00:00:00Z");
			for (k = 0; k < 3000; k++) {
				prev = t;
				t = next_after(e, z, t);
				ck_assert(t > prev);
			}
			cron_free(e);
		}
		tz_free(z);
	}
}
END_TEST

/* ---- systemd calendar events (systemd.time(7)) -------------------------- */

/*
 * Fires worked out by hand from systemd.time(7); where systemd 252's
 * systemd-analyze calendar agrees, it printed the same instants (checked
 * for every generated case by tests/scenario/t0110-systemd-calendar.sh).
 */
START_TEST(test_systemd_forms)
{
	/* The last Monday of May: the 7 last days, then Monday. */
	static const char *const lastmon[] = {
		"2027-05-31T00:00:00Z", "2028-05-29T00:00:00Z",
		"2029-05-28T00:00:00Z",
	};
	/*
	 * ~1..6/4: systemd cuts the range to whole steps (~1..5/4), then
	 * counts from the end: the 5th last and the last.  Nov (30): 26, 30;
	 * Dec (31): 27, 31.
	 */
	static const char *const eomstep[] = {
		"2026-11-26T00:00:00Z", "2026-11-30T00:00:00Z",
		"2026-12-27T00:00:00Z", "2026-12-31T00:00:00Z",
	};
	/* ~28/27: the 28th last day and 27 later.  Nov: 3, 30; Dec: 4, 31. */
	static const char *const eom28[] = {
		"2026-11-03T00:00:00Z", "2026-11-30T00:00:00Z",
		"2026-12-04T00:00:00Z", "2026-12-31T00:00:00Z",
	};
	static const char *const quarterly[] = {
		"2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z",
		"2027-01-01T00:00:00Z",
	};
	/* weekly is Monday 00:00 (2026-06-01 is a Monday). */
	static const char *const weekly[] = {
		"2026-06-01T00:00:00Z", "2026-06-08T00:00:00Z",
	};
	/* Two-digit years: 69 is 2069, 70 would be 1970. */
	static const char *const y69[] = { "2069-01-01T00:00:00Z" };
	/* 1..5/2 on days: 1, 3, 5 of each month. */
	static const char *const odd[] = {
		"2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z",
		"2026-06-05T00:00:00Z", "2026-07-01T00:00:00Z",
	};
	/* *:*:58/1: seconds 58 and 59. */
	static const char *const s58[] = {
		"2026-05-28T20:26:58Z", "2026-05-28T20:26:59Z",
		"2026-05-28T20:27:58Z",
	};
	/*
	 * Hours 0/11 (0, 11, 22), 21, 1: after 22:08, 00:08 the next day.
	 * systemd 252 carries 22 + 11 = 33 into 09:00 and says 11:08.
	 */
	static const char *const carry[] = {
		"2027-02-01T00:08:00Z", "2027-02-01T01:08:00Z",
		"2027-02-01T11:08:00Z",
	};
	const char *from = "2026-05-28T20:26:40Z";

	check_fires("Mon *-05~07/1", CRON_DIALECT_SYSTEMD, "UTC", from,
	    lastmon, 3);
	check_fires("*-*~1..6/4", CRON_DIALECT_SYSTEMD, "UTC",
	    "2026-11-01T06:10:00Z", eomstep, 4);
	check_fires("*-*~28/27", CRON_DIALECT_SYSTEMD, "UTC",
	    "2026-11-01T06:10:00Z", eom28, 4);
	check_fires("quarterly", CRON_DIALECT_SYSTEMD, "UTC", from,
	    quarterly, 3);
	check_fires("WEEKLY", CRON_DIALECT_SYSTEMD, "UTC", from, weekly, 2);
	check_fires("069-01-01", CRON_DIALECT_SYSTEMD, "UTC", from, y69, 1);
	check_fires("*-*-1..5/2", CRON_DIALECT_SYSTEMD, "UTC", from, odd, 4);
	check_fires("*:*:58/1", CRON_DIALECT_SYSTEMD, "UTC", from, s58, 3);
	check_fires("*-*-* 0/11,21..23/5,01:08", CRON_DIALECT_SYSTEMD, "UTC",
	    "2027-01-31T22:08:00Z", carry, 3);
}
END_TEST

START_TEST(test_systemd_zone_and_dst)
{
	/* Weekdays 09:30 in Berlin, the zone named by the event itself. */
	static const char *const berlin[] = {
		"2026-12-04T09:30:00+01:00", "2026-12-07T09:30:00+01:00",
		"2026-12-08T09:30:00+01:00",
	};
	/* gap: 02:30 does not exist on 2026-03-08 in New York: 03:00 EDT. */
	static const char *const gap[] = {
		"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00",
	};
	/* repeat: every 30 min on both passes of 01:00-02:00 (Nov 1). */
	static const char *const rep[] = {
		"2026-11-01T00:30:00-04:00", "2026-11-01T01:00:00-04:00",
		"2026-11-01T01:30:00-04:00", "2026-11-01T01:00:00-05:00",
		"2026-11-01T01:30:00-05:00", "2026-11-01T02:00:00-05:00",
	};
	/* inside: from 01:10 EST (second pass), 01:30 waits a day. */
	static const char *const inside[] = { "2026-11-02T01:30:00-05:00" };
	struct cron_expr *e;
	int64_t n;

	e = expr("Mon..Fri *-*-* 09:30 Europe/Berlin", CRON_DIALECT_SYSTEMD);
	ck_assert_str_eq(cron_zone(e), "Europe/Berlin");
	ck_assert_int_eq(cron_is_fixed_time(e), 1);
	cron_free(e);
	e = expr("minutely utc", CRON_DIALECT_SYSTEMD);
	ck_assert_str_eq(cron_zone(e), "UTC");
	ck_assert_int_eq(cron_is_fixed_time(e), 0);
	cron_free(e);
	e = expr("*-*-* 09:00", CRON_DIALECT_SYSTEMD);
	ck_assert_ptr_null(cron_zone(e));
	cron_free(e);
	e = expr("0 9 * * *", CRON_DIALECT_VIXIE);
	ck_assert_ptr_null(cron_zone(e));
	cron_free(e);

	check_fires("Mon..Fri *-*-* 09:30 Europe/Berlin", CRON_DIALECT_SYSTEMD,
	    "Europe/Berlin", "2026-12-04T00:00:00Z", berlin, 3);
	check_fires("*-*-* 02:30", CRON_DIALECT_SYSTEMD, "America/New_York",
	    "2026-03-07T12:00:00Z", gap, 2);
	check_fires("*-*-* *:00/30:00", CRON_DIALECT_SYSTEMD,
	    "America/New_York", "2026-11-01T04:00:00Z", rep, 6);
	check_fires("*-*-* 01:30", CRON_DIALECT_SYSTEMD, "America/New_York",
	    "2026-11-01T06:10:00Z", inside, 1);

	/* Nothing after 2199 (systemd's MAX_YEAR), even for '*'. */
	e = expr("*-*-* 00:00", CRON_DIALECT_SYSTEMD);
	{
		struct tz *z = zone("UTC");

		ck_assert_int_eq(cron_next_fire(e, z,
		    iso("2199-12-30T12:00:00Z"), &n), 1);
		ck_assert_int_eq(n, iso("2199-12-31T00:00:00Z"));
		ck_assert_int_eq(cron_next_fire(e, z, n, &n), 0);
		tz_free(z);
	}
	cron_free(e);
}
END_TEST

START_TEST(test_systemd_rejects)
{
	/* What systemd 252 refuses too, and what only taskspool refuses. */
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "Fri..Mon", "weekday: a range that wraps past Sunday" },
		{ "Tues 12:00", "weekday: \"Tues\" is not a weekday" },
		{ "*-*~29", "day: \"29\" out of range 1..28" },
		{ "*-*-32", "day: \"32\" out of range 1..31" },
		{ "*-*-* 24:00", "hour: \"24\" out of range 0..23" },
		{ "*-*-29/3", "day: \"29/3\" never repeats inside 1..31" },
		{ "*-*~3/3", "day: \"3/3\" never repeats inside 1..28" },
		{ "*-*-5..1", "day: \"5..1\" is a range that ends before" },
		{ "1969-01-01", "year: \"1969\" out of range 1970..2199" },
		{ "*:*/7", "minute: unexpected \"/\"" },
		{ "12", "hour: the expression ends where \":\" must follow" },
		{ "*-*-* 12:00:00.5", "second: a fraction of a second is not "
		    "supported" },
		{ "@1700000000", "\"@SECONDS\" is one instant" },
		{ "*-*-* 9:00 ", "neither starts nor ends with a space" },
		{ "*-*-*\t9:00", "byte 0x09 at offset 5" },
		{ "*-*-* 12:00 ../x", "zone: \"../x\" is not a zone name" },
		{ "5 12:00", "date: \"5\" is not [YEAR-]MONTH-DAY" },
		{ "*:*:10..10", "second: \"10..10\" is a range of one" },
		{ "@daily", "\"@daily\" is a cron macro" },
		{ "0 9 * * *", "it reads as a vixie cron expression" },
		{ "Mon 09:30 Europe/Berlin x", "minute: unexpected "
		    "\"Europe/Berlin\" after it" },
	};
	char why[WHY_LEN];
	struct cron_expr *e;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		e = cron_parse(bad[i].text, CRON_DIALECT_SYSTEMD, why,
		    sizeof why);
		ck_assert_msg(e == NULL, "%s: accepted", bad[i].text);
		ck_assert_msg(strstr(why, bad[i].why) != NULL,
		    "%s: reason \"%s\", want \"%s\"", bad[i].text, why,
		    bad[i].why);
	}
	/* systemd 252 refuses this list (eom-list); taskspool takes it. */
	e = expr("*-*~26,10", CRON_DIALECT_SYSTEMD);
	cron_free(e);
	/* 10..10/1 and minutes 10..10 are fine, as for systemd 252. */
	cron_free(expr("*:10..10:10..10/1", CRON_DIALECT_SYSTEMD));
	/* 241 list elements are taken (systemd 252 too), 242 are not. */
	{
		char text[1100];
		size_t k, len;

		for (k = 0, len = 0; k < 242; k++)
			len += (size_t)snprintf(text + len, sizeof text - len,
			    "%s1", k == 0 ? "*-*-* 0:0:" : ",");
		ck_assert_ptr_null(cron_parse(text, CRON_DIALECT_SYSTEMD, why,
		    sizeof why));
		ck_assert_ptr_nonnull(strstr(why, "more than 241 list"));
		text[len - 2] = '\0';		/* 241 elements */
		cron_free(expr(text, CRON_DIALECT_SYSTEMD));
		for (k = 0, len = 0; k < 241; k++)
			len += (size_t)snprintf(text + len, sizeof text - len,
			    "%s1", k == 0 ? "*-*~" : ",");
		cron_free(expr(text, CRON_DIALECT_SYSTEMD));
	}
}
END_TEST

START_TEST(test_systemd_guess)
{
	static const struct {
		const char *text;
		enum cron_dialect d;
	} g[] = {
		{ "Mon *-*-* 9:00", CRON_DIALECT_SYSTEMD },
		{ "daily", CRON_DIALECT_SYSTEMD },
		{ "*:0/15", CRON_DIALECT_SYSTEMD },
		{ "2027-01-01", CRON_DIALECT_SYSTEMD },
		{ "*-*~1", CRON_DIALECT_SYSTEMD },
		{ "0 9 * * 1-5", CRON_DIALECT_VIXIE },
		{ "@daily", CRON_DIALECT_VIXIE },
		{ "0 0 9 ? * MON-FRI", CRON_DIALECT_QUARTZ },
	};
	enum cron_dialect d;
	size_t i;

	for (i = 0; i < sizeof g / sizeof g[0]; i++) {
		ck_assert_int_eq(cron_dialect_guess(g[i].text, &d), 0);
		ck_assert_msg(d == g[i].d, "%s: dialect %d, want %d",
		    g[i].text, (int)d, (int)g[i].d);
	}
	ck_assert_int_eq(cron_dialect_guess("1 2 3 4", &d), -1);
}
END_TEST

/*
 * cron_explain(): the words for representative forms of each dialect,
 * written down by hand from the rules (the vixie OR when both day fields
 * are restricted, cronie's AND when one starts with '*', Quartz L/W/#,
 * systemd weekdays AND date and "~").
 */
/*
 * cron_explain_change(): hand-checked changes.  America/New_York 2026
 * springs forward on Sunday 2026-03-08 at 02:00 EST (07:00 UTC; the
 * second Sunday of March, US Energy Policy Act 2005); Europe/London falls
 * back on Sunday 2027-10-31 at 01:00 UTC (the last Sunday of October);
 * Australia/Lord_Howe moves by 30 minutes (02:00 -> 02:30 local on
 * 2026-10-04, the first Sunday of October); UTC has no change.  The
 * effects follow CRON-RULES.md 4.6: a skipped fixed time fires at the
 * first instant after the jump, a repeated one once, interval times
 * follow elapsed time.
 */
START_TEST(test_explain_change)
{
	static const struct {
		const char *zone, *text;
		enum cron_dialect d;
		const char *from, *at;	/* at NULL: no change expected */
		int32_t jump;		/* after - before, s */
		const char *range, *effect;
	} c[] = {
		{ "America/New_York", "30 2 * * *", CRON_DIALECT_VIXIE,
		    "2026-03-01T00:00:00Z", "2026-03-08T07:00:00Z", 3600,
		    "02:00:00 to 02:59:59 on 2026-03-08",
		    "on 2026-03-08 it fires once at 03:00:00, the first "
		    "instant after the jump, because 02:30:00 does not exist "
		    "(fixed-time: a skipped run happens at once)" },
		{ "America/New_York", "30 4 * * *", CRON_DIALECT_VIXIE,
		    "2026-03-01T00:00:00Z", "2026-03-08T07:00:00Z", 3600,
		    "02:00:00 to 02:59:59 on 2026-03-08",
		    "none of its times falls in them: this change does not "
		    "affect it" },
		{ "Europe/London", "*/20 1-2 * * *", CRON_DIALECT_VIXIE,
		    "2027-10-30T00:00:00Z", "2027-10-31T01:00:00Z", -3600,
		    "01:00:00 to 01:59:59 on 2027-10-31",
		    "01:00:00, 01:20:00 and 01:40:00 on 2027-10-31 fire twice "
		    "(+01:00, then +00:00; interval: elapsed time goes on)" },
		{ "Europe/London", "0 30 1 * * ?", CRON_DIALECT_QUARTZ,
		    "2027-10-30T00:00:00Z", "2027-10-31T01:00:00Z", -3600,
		    "01:00:00 to 01:59:59 on 2027-10-31",
		    "01:30:00 on 2027-10-31 occurs twice; it fires on the "
		    "first pass only (+01:00; fixed-time: never twice)" },
		{ "America/New_York", "0,20,40 1 * * *", CRON_DIALECT_VIXIE,
		    "2026-10-31T00:00:00Z", "2026-11-01T06:00:00Z", -3600,
		    "01:00:00 to 01:59:59 on 2026-11-01",
		    "01:00:00, 01:20:00 and 01:40:00 on 2026-11-01 occur "
		    "twice; each fires on the first pass only (-04:00; "
		    "fixed-time: never twice)" },
		{ "Australia/Lord_Howe", "*-*-* 02:15", CRON_DIALECT_SYSTEMD,
		    "2026-09-01T00:00:00Z", "2026-10-03T15:30:00Z", 1800,
		    "02:00:00 to 02:29:59 on 2026-10-04",
		    "on 2026-10-04 it fires once at 02:30:00, the first "
		    "instant after the jump, because 02:15:00 does not exist "
		    "(fixed-time: a skipped run happens at once)" },
		/* tzdata: Goose Bay's changes at 00:01 local (1987). */
		{ "America/Goose_Bay", "*/15 * * * *", CRON_DIALECT_VIXIE,
		    "1987-10-20T00:00:00Z", "1987-10-25T03:01:00Z", -3600,
		    "23:01:00 on 1987-10-24 to 00:00:59 on 1987-10-25",
		    "23:15:00, 23:30:00, 23:45:00 and 00:00:00 (1987-10-25) on "
		    "1987-10-24 fire twice (-03:00, then -04:00; interval: "
		    "elapsed time goes on)" },
		{ "UTC", "daily", CRON_DIALECT_SYSTEMD,
		    "2026-09-01T00:00:00Z", NULL, 0, NULL, NULL },
	};
	struct cron_change ch;
	struct cron_expr *e;
	struct tz *z;
	char o[16];
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		z = zone(c[i].zone);
		e = expr(c[i].text, c[i].d);
		ck_assert_int_eq(cron_explain_change(e, z, iso(c[i].from),
		    &ch), c[i].at != NULL);
		if (c[i].at != NULL) {
			ck_assert_int_eq(ch.at, iso(c[i].at));
			ck_assert_int_eq(ch.after - ch.before, c[i].jump);
			ck_assert_int_eq(ch.skipped, c[i].jump > 0);
			ck_assert_int_eq(ch.affected, strncmp(c[i].effect,
			    "none", 4) != 0);
			ck_assert_str_eq(ch.range, c[i].range);
			ck_assert_str_eq(ch.effect, c[i].effect);
		}
		cron_free(e);
		tz_free(z);
	}
	cron_offset_text(-12600, o, sizeof o);	/* America/St_Johns */
	ck_assert_str_eq(o, "-03:30");
	cron_offset_text(20700, o, sizeof o);	/* Asia/Kathmandu */
	ck_assert_str_eq(o, "+05:45");
	cron_offset_text(0, o, sizeof o);
	ck_assert_str_eq(o, "+00:00");
}
END_TEST

START_TEST(test_explain)
{
	static const struct {
		const char *text;
		enum cron_dialect d;
		const char *want;
	} c[] = {
		{ "30 9 * * 1-5", CRON_DIALECT_VIXIE,
		    "at 09:30, on weekdays (Monday to Friday)" },
		{ "0 9-17 * * *", CRON_DIALECT_VIXIE,
		    "at minute 0 of hours 9 to 17, every day" },
		{ "*/15 * * * *", CRON_DIALECT_VIXIE,
		    "every 15 minutes, every day" },
		{ "0 0 1,15 * 3", CRON_DIALECT_VIXIE,
		    "at 00:00, on days 1 and 15 of the month, or on "
		    "Wednesdays" },
		{ "0 0 */2 * 3", CRON_DIALECT_VIXIE,
		    "at 00:00, on every 2nd day of the month from day 1, if "
		    "that day is a Wednesday" },
		{ "0 0 29 2 *", CRON_DIALECT_VIXIE,
		    "at 00:00, on day 29 of February (February has it only in "
		    "leap years)" },
		{ "0 0 31 2 *", CRON_DIALECT_VIXIE,
		    "at 00:00, on day 31 of February (February has no day 31: "
		    "it never fires)" },
		{ "0 0 31 4,6,9,11 *", CRON_DIALECT_VIXIE,
		    "at 00:00, on day 31 of April, June, September and "
		    "November (none of those months has a day 31: it never "
		    "fires)" },
		{ "0 0 30 * *", CRON_DIALECT_VIXIE,
		    "at 00:00, on day 30 of the month (only in the months "
		    "that have day 30)" },
		{ "0 0 1,15 3 *", CRON_DIALECT_VIXIE,
		    "at 00:00, on days 1 and 15 of March" },
		{ "0 15 10 L * ?", CRON_DIALECT_QUARTZ,
		    "at 10:15, on the last day of the month" },
		{ "0 0 12 ? * 6#3", CRON_DIALECT_QUARTZ,
		    "at 12:00, on the third Friday of the month" },
		{ "0 0 12 ? * 6L 2027-2030", CRON_DIALECT_QUARTZ,
		    "at 12:00, on the last Friday of the month, from 2027 to "
		    "2030" },
		{ "0 0 12 * * ? 2026/2", CRON_DIALECT_QUARTZ,
		    "at 12:00, every day, every 2nd year from 2026" },
		{ "*/7 * * * *", CRON_DIALECT_VIXIE,
		    "every 7th minute from 0 to 56, every day" },
		{ "0 */5 * * *", CRON_DIALECT_VIXIE,
		    "at minute 0 of every 5th hour from 0 to 20, every day" },
		{ "5,35 */2 * * *", CRON_DIALECT_VIXIE,
		    "at minutes 5 and 35, during every 2nd hour, every day" },
		{ "1-5 * * * *", CRON_DIALECT_VIXIE,
		    "at minutes 1 to 5 of every hour, every day" },
		{ "0 0 0 L-3 * ?", CRON_DIALECT_QUARTZ,
		    "at 00:00, on the 4th-last day of the month" },
		{ "0 0 0 L-2W * ?", CRON_DIALECT_QUARTZ,
		    "at 00:00, on the weekday nearest to the 3rd-last day of "
		    "the month" },
		{ "0 0 0 ? JAN 1#3", CRON_DIALECT_QUARTZ,
		    "at 00:00, on the third Sunday of January" },
		{ "@weekly", CRON_DIALECT_VIXIE, "at 00:00, on Sundays" },
		/* cronie's OR with a day field listing every value (neither
		 * starts with '*'): every day matches. */
		{ "0 0 1-31 * 1", CRON_DIALECT_VIXIE, "at 00:00, every day" },
		{ "0 0 1 * 0-6", CRON_DIALECT_VIXIE, "at 00:00, every day" },
		/* A run that reaches the top is a range, not a step of 1. */
		{ "0 0 29-31 * *", CRON_DIALECT_VIXIE,
		    "at 00:00, on days 29 to 31 of the month (in February only "
		    "in leap years)" },
		{ "57-59 * * * *", CRON_DIALECT_VIXIE,
		    "at minutes 57 to 59 of every hour, every day" },
		{ "30 5 * * * ?", CRON_DIALECT_QUARTZ,
		    "at second 30 of minute 5 of every hour, every day" },
		{ "0,30 * * * * ?", CRON_DIALECT_QUARTZ,
		    "at seconds 0 and 30 of every minute, every day" },
		{ "Mon *-05~07/1", CRON_DIALECT_SYSTEMD,
		    "at 00:00, on the last Monday of May" },
		{ "Fri *-*~03/1", CRON_DIALECT_SYSTEMD,
		    "at 00:00, on the last 3 days of the month, if that day is "
		    "a Friday" },
		{ "Fri *-*~07", CRON_DIALECT_SYSTEMD,
		    "at 00:00, on the 7th-last day of the month, if that day "
		    "is a Friday" },
		{ "*-*~26,10", CRON_DIALECT_SYSTEMD,
		    "at 00:00, on days 10 and 26 counted back from the month's "
		    "end (1 = the last day)" },
		{ "Mon,Tue *-*~07/1", CRON_DIALECT_SYSTEMD,
		    "at 00:00, on the last 7 days of the month, if that day is "
		    "a Monday or Tuesday" },
		{ "Sat *-*~01..07 09:00", CRON_DIALECT_SYSTEMD,
		    "at 09:00, on the last Saturday of the month" },
		{ "quarterly", CRON_DIALECT_SYSTEMD, "at 00:00, on day 1 of "
		    "January, April, July and October" },
		{ "Sat,Sun 10:00:05", CRON_DIALECT_SYSTEMD,
		    "at 10:00:05, on Saturday and Sunday" },
	};
	char out[256];
	struct cron_expr *e;
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		e = expr(c[i].text, c[i].d);
		ck_assert_int_eq(cron_explain(e, out, sizeof out) >= 0, 1);
		ck_assert_msg(strcmp(out, c[i].want) == 0, "%s: \"%s\", want "
		    "\"%s\"", c[i].text, out, c[i].want);
		ck_assert_int_eq(cron_explain(e, out, sizeof out),
		    (int)strlen(c[i].want));
		cron_free(e);
	}
	/* Too small a buffer: -1 and a cut, terminated text. */
	e = expr("30 9 * * 1-5", CRON_DIALECT_VIXIE);
	ck_assert_int_eq(cron_explain(e, out, 10), -1);
	ck_assert_uint_eq(strlen(out), 9);
	cron_free(e);
}
END_TEST

static Suite *
cron_suite(void)
{
	Suite *s = suite_create("cron");
	TCase *tc;

	tc = tcase_create("vectors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_vectors);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_parse_accepts);
	tcase_add_test(tc, test_rules_forms);
	suite_add_tcase(s, tc);

	tc = tcase_create("tz");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tz_names);
	tcase_add_test(tc, test_tz_tzdir);
	tcase_add_test(tc, test_tz_offsets);
	tcase_add_test(tc, test_tz_footer);
	tcase_add_test(tc, test_tz_footer_consistent);
	suite_add_tcase(s, tc);

	tc = tcase_create("next");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_dst_berlin_day_counts);
	tcase_add_test(tc, test_dst_hand);
	tcase_add_test(tc, test_never_and_errors);
	tcase_add_test(tc, test_monotonic_chains);
	suite_add_tcase(s, tc);

	tc = tcase_create("systemd");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_systemd_forms);
	tcase_add_test(tc, test_systemd_zone_and_dst);
	tcase_add_test(tc, test_systemd_rejects);
	tcase_add_test(tc, test_systemd_guess);
	tcase_add_test(tc, test_explain);
	tcase_add_test(tc, test_explain_change);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(cron_suite)
