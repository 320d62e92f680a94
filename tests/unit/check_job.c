/*
 * check_job.c — unit tests for daemon/core/job.c (job codec and schedules).
 *
 * Expectations come from the contract: job.h (members, ranges, defaults,
 * (field, rule) of the first violation, the misfire plan), DESIGN.md §5
 * (task id "J.<yyyymmddThhmmss[mmm]Z>"), tests/data/CRON-RULES.md 4.6 for
 * DST (cronie: a fixed-time job whose wall time falls in a spring-forward
 * gap fires once, at the first instant after the gap) and the Quartz
 * misfire instructions named in job.h.  Instants are hand-computed epoch
 * milliseconds, the arithmetic in the comments.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/alert.h"
#include "core/buf.h"
#include "core/cron.h"
#include "core/job.h"
#include "core/task.h"
#include "core/tz.h"
#include "unit.h"
#include "spool/tzload.h"

/*
 * Days 1970-01-01 .. 2024-01-01 = 54 * 365 + 13 leap days (1972..2020) =
 * 19723.  2024-06-01 = + 31+29+31+30+31 = 152 -> day 19875.
 * 2024-03-10 = + 31+29+9 = 69 -> day 19792; 2024-03-09 -> 19791.
 */
#define DAY_MS		86400000LL
#define HOUR_MS		3600000LL
#define MIN_MS		60000LL
#define T_20240601	(19875 * DAY_MS)		/* 1717200000000 */
#define T_20240601_1200	(T_20240601 + 12 * HOUR_MS)	/* 1717243200000 */
#define T_20240601_1000	(T_20240601 + 10 * HOUR_MS)
#define T_20240601_0200	(T_20240601 + 2 * HOUR_MS)	/* 1717207200000 */
#define T_20240309_1200	(19791 * DAY_MS + 12 * HOUR_MS)	/* 1709985600000 */
#define T_20240310_0700	(19792 * DAY_MS + 7 * HOUR_MS)	/* 1710054000000 */
/* 2024-03-11T02:00:00-04:00 (EDT) = 06:00Z. */
#define T_20240311_0600	(19793 * DAY_MS + 6 * HOUR_MS)

/* ---- helpers ---------------------------------------------------------- */

/* Decode text into j (initialised), which must succeed. */
static void
dec(const char *text, struct job *j)
{
	struct task_error err;

	memset(&err, 0, sizeof(err));
	ck_assert_msg(job_decode(text, strlen(text), j, &err) == 0,
	    "job_decode(%s): %s: %s", text, err.field, err.rule);
}

/* Decoding text must fail on field with a rule containing rule_part. */
static void
bad(const char *text, const char *field, const char *rule_part)
{
	struct task_error err;
	struct job j;

	job_init(&j);
	memset(&err, 0, sizeof(err));
	ck_assert_msg(job_decode(text, strlen(text), &j, &err) == -1,
	    "job_decode accepted %s", text);
	ck_assert_msg(strcmp(err.field, field) == 0 &&
	    strstr(err.rule, rule_part) != NULL,
	    "job_decode(%s): got (%s, %s), want (%s, ...%s...)", text,
	    err.field, err.rule, field, rule_part);
	/* Left initialised-empty. */
	ck_assert_ptr_null(j.cron);
	ck_assert_ptr_null(j.params);
	ck_assert_str_eq(j.code, "");
	job_fini(&j);
}

/* A job made of `members` (JSON members text) around the required ones. */
static char *
doc(const char *members)
{
	return unit_fmt("{\"jobCode\":\"j1\",\"taskCode\":\"t1\",%s}", members);
}

static void
bad_m(const char *members, const char *field, const char *rule_part)
{
	char *s = doc(members);

	bad(s, field, rule_part);
	free(s);
}

static struct tz *
zone(const char *name)
{
	char why[256];
	struct tz *z = tz_load(name, why, sizeof(why));

	ck_assert_msg(z != NULL, "tz_load(%s): %s", name, why);
	return z;
}

/* job_next_fire must give want (1) or nothing (want < 0). */
static void
next_is(const struct job *j, const struct tz *z, int64_t after,
    int64_t last_end, int64_t want)
{
	int64_t got = -42;
	int r = job_next_fire(j, z, after, last_end, &got);

	if (want < 0) {
		ck_assert_msg(r == 0, "after %lld: want none, got %lld",
		    (long long)after, (long long)got);
		return;
	}
	ck_assert_msg(r == 1 && got == want, "after %lld: got %d/%lld, "
	    "want %lld", (long long)after, r, (long long)got,
	    (long long)want);
}

/* ---- codec ------------------------------------------------------------ */

START_TEST(test_decode_defaults)
{
	struct job j;

	job_init(&j);
	dec("{\"jobCode\":\"nightly\",\"taskCode\":\"report\","
	    "\"cron\":\"0 2 * * *\"}", &j);
	ck_assert_str_eq(j.code, "nightly");
	ck_assert_str_eq(j.task_code, "report");
	ck_assert_int_eq(j.kind, JOB_KIND_CRON);
	ck_assert_str_eq(j.cron_text, "0 2 * * *");
	ck_assert_ptr_nonnull(j.cron);
	ck_assert_int_eq(j.dialect, CRON_DIALECT_VIXIE);
	ck_assert_int_eq(j.dialect_given, 0);
	ck_assert_str_eq(j.timezone, "");
	ck_assert_str_eq(j.params, "{}");
	ck_assert_uint_eq(j.params_len, 2);
	ck_assert_ptr_null(j.route);
	ck_assert_int_eq(j.max_retries, -1);
	ck_assert_int_eq(j.timeout_sec, -1);
	ck_assert_int_eq(j.misfire, JOB_MISFIRE_FIRE_ONCE);
	ck_assert_int_eq(j.misfire_cap, 10);
	ck_assert_int_eq(j.overlap, JOB_OVERLAP_FORBID);
	ck_assert_int_eq(j.enabled, 1);
	ck_assert(j.start_ms == -1 && j.end_ms == -1 && j.created_ms == -1);
	ck_assert(j.jitter_ms == 0);
	job_fini(&j);

	/* Six fields: quartz by the field count. */
	dec("{\"jobCode\":\"q\",\"taskCode\":\"t\","
	    "\"cron\":\"0 0 12 ? * MON-FRI\"}", &j);
	ck_assert_int_eq(j.dialect, CRON_DIALECT_QUARTZ);
	ck_assert_int_eq(cron_dialect(j.cron), CRON_DIALECT_QUARTZ);
	job_fini(&j);
	job_fini(NULL);
}
END_TEST

/*
 * "calendar": parsed as systemd, its zone becomes the job's zone without
 * being written back as "timezone"; the file round-trips.
 */
START_TEST(test_calendar)
{
	struct job a, b;
	struct buf e1;
	struct tz *z;

	job_init(&a);
	job_init(&b);
	buf_init(&e1, 0);
	dec("{\"jobCode\":\"w\",\"taskCode\":\"t\","
	    "\"calendar\":\"Mon..Fri *-*-* 09:30 Europe/Berlin\"}", &a);
	ck_assert_int_eq(a.kind, JOB_KIND_CRON);
	ck_assert_int_eq(a.dialect, CRON_DIALECT_SYSTEMD);
	ck_assert_str_eq(a.timezone, "Europe/Berlin");
	ck_assert_int_eq(a.timezone_from_calendar, 1);
	ck_assert_int_eq(job_encode(&a, &e1), 0);
	ck_assert_ptr_nonnull(strstr(e1.data, "\"calendar\":\"Mon..Fri "
	    "*-*-* 09:30 Europe/Berlin\""));
	ck_assert_ptr_null(strstr(e1.data, "\"cron\""));
	ck_assert_ptr_null(strstr(e1.data, "\"timezone\""));
	dec(e1.data, &b);
	ck_assert_ptr_null(job_diff(&a, &b));
	/* Fri 2026-12-04 09:30 CET = 08:30Z, then Mon 7 December. */
	z = zone("Europe/Berlin");
	next_is(&a, z, 1796342400000LL, -1, 1796373000000LL);
	next_is(&a, z, 1796373000000LL, -1, 1796632200000LL);
	tz_free(z);
	job_fini(&a);
	job_fini(&b);
	/* UTC under two of its names is one zone. */
	dec("{\"jobCode\":\"w\",\"taskCode\":\"t\",\"calendar\":"
	    "\"daily UTC\",\"timezone\":\"Etc/UTC\"}", &a);
	ck_assert_str_eq(a.timezone, "Etc/UTC");
	job_fini(&a);
	/* The same zone given twice is fine. */
	dec("{\"jobCode\":\"w\",\"taskCode\":\"t\",\"calendar\":"
	    "\"daily UTC\",\"timezone\":\"UTC\"}", &a);
	ck_assert_int_eq(a.timezone_from_calendar, 0);
	job_fini(&a);
	buf_fini(&e1);
}
END_TEST

/* Every member set, odd spacing in executeParams: decode, encode, decode. */
START_TEST(test_round_trip)
{
	static const char params[] = "{ \"a\" : [1, 2 ,3.50],\n\t\"s\":"
	    "\"\\u00e9\\n\", \"n\":null }";
	char *text = unit_fmt("{\"jobCode\":\"sync.hourly-1\","
	    "\"taskCode\":\"sync\","
	    "\"cron\":\"0 5 * * * ?\",\"dialect\":\"quartz\","
	    "\"timezone\":\"Europe/Riga\",\"executeParams\" : %s ,"
	    "\"route\":\"node:n2\",\"maxRetries\":3,\"timeoutSec\":600,"
	    "\"misfire\":\"fire_all\",\"misfireCap\":25,\"overlap\":"
	    "\"replace\",\"enabled\":false,\"startAt\":"
	    "\"2024-06-01T15:00:00+03:00\",\"endAt\":\"2025-01-01T00:00:00Z\","
	    "\"jitterMs\":1500,\"createdAt\":\"2024-05-31T23:59:59.125Z\"}",
	    params);
	struct job a, b;
	struct buf e1, e2;

	job_init(&a);
	job_init(&b);
	buf_init(&e1, 0);
	buf_init(&e2, 0);
	dec(text, &a);
	ck_assert_str_eq(a.params, params);
	ck_assert_uint_eq(a.params_len, strlen(params));
	ck_assert(a.start_ms == T_20240601_1200);	/* 15:00+03:00 */
	ck_assert(a.created_ms == T_20240601 - 1000 + 125);
	ck_assert_int_eq(job_encode(&a, &e1), 0);
	ck_assert_ptr_nonnull(strstr(e1.data, params));
	ck_assert(e1.data[e1.len - 1] == '\n');
	dec(e1.data, &b);

	ck_assert_str_eq(b.code, "sync.hourly-1");
	ck_assert_str_eq(b.task_code, "sync");
	ck_assert_int_eq(b.kind, JOB_KIND_CRON);
	ck_assert_str_eq(b.cron_text, "0 5 * * * ?");
	ck_assert_int_eq(b.dialect_given, 1);
	ck_assert_int_eq(b.dialect, CRON_DIALECT_QUARTZ);
	ck_assert_str_eq(b.timezone, "Europe/Riga");
	ck_assert_str_eq(b.params, params);
	ck_assert_uint_eq(b.params_len, a.params_len);
	ck_assert_str_eq(b.route, "node:n2");
	ck_assert_int_eq(b.max_retries, 3);
	ck_assert_int_eq(b.timeout_sec, 600);
	ck_assert_int_eq(b.misfire, JOB_MISFIRE_FIRE_ALL);
	ck_assert_int_eq(b.misfire_cap, 25);
	ck_assert_int_eq(b.overlap, JOB_OVERLAP_REPLACE);
	ck_assert_int_eq(b.enabled, 0);
	ck_assert(b.start_ms == a.start_ms && b.end_ms == a.end_ms);
	ck_assert(b.jitter_ms == 1500 && b.created_ms == a.created_ms);

	/* Encoding is a fixed point. */
	ck_assert_int_eq(job_encode(&b, &e2), 0);
	ck_assert_str_eq(e1.data, e2.data);

	/* Absent optional members stay absent. */
	job_fini(&a);
	buf_reset(&e1);
	dec("{\"jobCode\":\"r\",\"taskCode\":\"t\",\"fixedDelayMs\":5000}", &a);
	ck_assert_int_eq(job_encode(&a, &e1), 0);
	ck_assert_ptr_null(strstr(e1.data, "timezone"));
	ck_assert_ptr_null(strstr(e1.data, "dialect"));
	ck_assert_ptr_null(strstr(e1.data, "misfireCap"));
	ck_assert_ptr_null(strstr(e1.data, "route"));
	ck_assert_ptr_nonnull(strstr(e1.data, "\"fixedDelayMs\":5000"));
	dec(e1.data, &b);
	ck_assert_int_eq(b.kind, JOB_KIND_FIXED_DELAY);
	ck_assert(b.interval_ms == 5000);

	free(text);
	buf_fini(&e1);
	buf_fini(&e2);
	job_fini(&a);
	job_fini(&b);
}
END_TEST

/* executeParams found by its decoded key and kept when not first. */
START_TEST(test_params_raw)
{
	struct job j;

	job_init(&j);
	dec("{\"jobCode\":\"j\",\"taskCode\":\"t\",\"cron\":\"@daily\","
	    "\"execute\\u0050arams\":[ \"x\\\"}]\" ,{}]}", &j);
	ck_assert_str_eq(j.params, "[ \"x\\\"}]\" ,{}]");
	job_fini(&j);
	dec("{\"executeParams\":7,\"jobCode\":\"j\",\"taskCode\":\"t\","
	    "\"fixedRateMs\":1}", &j);
	ck_assert_str_eq(j.params, "7");
	job_fini(&j);
}
END_TEST

START_TEST(test_rules_json)
{
	char *big;

	bad("", "json", "empty");
	bad("\xef\xbb\xbf{}", "json", "byte order mark");
	bad("[]", "json", "top level must be an object");
	bad("{\"jobCode\":", "json", "invalid JSON");
	bad("{\"jobCode\":\"a\",\"jobCode\":\"b\"}", "json", "invalid JSON");
	big = calloc(1, JOB_FILE_MAX + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', JOB_FILE_MAX + 1);
	bad(big, "file", "larger than");
	free(big);
}
END_TEST

/*
 * Issue 10: a raw NUL after a number (which jansson alone swallows) or a
 * control byte in a string is refused, naming the byte and its offset
 * (counted by hand: the job text before the NUL is 64 bytes; before the
 * 0x01 44).
 */
START_TEST(test_rules_raw_bytes)
{
	static const char nul[] = "{\"jobCode\":\"j\",\"taskCode\":\"t\","
	    "\"cron\":\"@daily\",\"executeParams\":[1\0]}";
	static const char ctl[] = "{\"jobCode\":\"j\",\"taskCode\":\"t\","
	    "\"cron\":\"@daily\x01\"}";
	struct task_error err;
	struct job j;

	job_init(&j);
	ck_assert_int_eq(job_decode(nul, sizeof(nul) - 1, &j, &err), -1);
	ck_assert_str_eq(err.field, "json");
	ck_assert_msg(strstr(err.rule, "raw NUL byte at offset 64 outside a "
	    "string") != NULL, "%s", err.rule);
	ck_assert_ptr_null(j.params);
	ck_assert_int_eq(job_decode(ctl, sizeof(ctl) - 1, &j, &err), -1);
	ck_assert_msg(strstr(err.rule, "raw control byte 0x01 at offset 44 "
	    "inside a string") != NULL, "%s", err.rule);
	job_fini(&j);
}
END_TEST

/*
 * decode(encode(decode(x))) == decode(x) through job_roundtrip() (issue
 * 10, item 2), on hand-made jobs of each kind with every optional member.
 */
START_TEST(test_roundtrip_property)
{
	static const char *const good[] = {
		"{\"jobCode\":\"j\",\"taskCode\":\"t\",\"cron\":\"@daily\"}",
		"{\"jobCode\":\"j\",\"taskCode\":\"t\",\"cron\":"
		"\"0 0/5 * ? * MON-FRI\",\"dialect\":\"quartz\",\"timezone\":"
		"\"Europe/Riga\",\"executeParams\":{ \"\\u00e9\" : [ 1e5 ] },"
		"\"route\":\"consistent_hash\",\"maxRetries\":0,\"timeoutSec\":"
		"1,\"misfire\":\"fire_all\",\"misfireCap\":3,\"overlap\":"
		"\"allow\",\"enabled\":false,\"startAt\":"
		"\"2024-06-01T12:00:00+03:00\",\"endAt\":\"2030-01-01T00:00:00Z\","
		"\"createdAt\":\"2024-06-01T00:00:00.5Z\",\"jitterMs\":9}",
		"{\"jobCode\":\"j\",\"taskCode\":\"t\",\"fixedRateMs\":1000,"
		"\"misfire\":\"fire_all\"}",
		"{\"jobCode\":\"j\",\"taskCode\":\"t\",\"fixedDelayMs\":1,"
		"\"jitterMs\":0}",
	};
	static const char refused[] = "{\"jobCode\":\"j\"}";
	struct task_error err;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(job_roundtrip(good[i], strlen(good[i]), &err) ==
		    0, "good[%zu]: %s: %s", i, err.field, err.rule);
	ck_assert_int_eq(job_roundtrip(refused, sizeof(refused) - 1, &err),
	    1);
	ck_assert_str_eq(err.field, "taskCode");
}
END_TEST

START_TEST(test_rules_members)
{
	char *s;

	/* Required members and their grammar. */
	bad("{\"taskCode\":\"t\",\"cron\":\"@daily\"}", "jobCode",
	    "required");
	bad("{\"jobCode\":\"j\",\"cron\":\"@daily\"}", "taskCode",
	    "required");
	bad("{\"jobCode\":\"-j\",\"taskCode\":\"t\",\"cron\":\"@daily\"}",
	    "jobCode", "must match");
	bad("{\"jobCode\":\"a/b\",\"taskCode\":\"t\",\"cron\":\"@daily\"}",
	    "jobCode", "must match");
	s = unit_fmt("{\"jobCode\":\"%065d\",\"taskCode\":\"t\","
	    "\"cron\":\"@daily\"}", 0);
	bad(s, "jobCode", "longer than 64");
	free(s);
	bad("{\"jobCode\":7,\"taskCode\":\"t\",\"cron\":\"@daily\"}",
	    "jobCode", "must be a string");
	bad("{\"jobCode\":\"j\",\"taskCode\":\"t t\",\"cron\":\"@daily\"}",
	    "taskCode", "must match");

	/* Exactly one of cron / fixedRateMs / fixedDelayMs. */
	bad_m("\"enabled\":true", "cron", "exactly one of cron, "
	    "calendar, fixedRateMs, fixedDelayMs");
	bad_m("\"cron\":\"@daily\",\"fixedRateMs\":1000", "fixedRateMs",
	    "exactly one");
	bad_m("\"fixedDelayMs\":1000,\"cron\":\"@daily\"", "fixedDelayMs",
	    "not allowed with cron");
	bad_m("\"fixedRateMs\":1000,\"fixedDelayMs\":1000", "fixedDelayMs",
	    "not allowed with fixedRateMs");
	bad_m("\"fixedRateMs\":0", "fixedRateMs", "integer 1..31536000000");
	bad_m("\"fixedRateMs\":-5", "fixedRateMs", "integer 1..");
	bad_m("\"fixedRateMs\":1.5", "fixedRateMs", "integer 1..");
	bad_m("\"fixedRateMs\":\"1000\"", "fixedRateMs", "integer 1..");
	bad_m("\"fixedDelayMs\":31536000001", "fixedDelayMs", "integer 1..");
	bad_m("\"cron\":5", "cron", "must be a string");

	/* calendar: a systemd calendar event, beside cron. */
	bad_m("\"calendar\":\"daily\",\"cron\":\"@daily\"", "cron",
	    "not allowed with calendar");
	bad_m("\"calendar\":\"daily\",\"fixedRateMs\":10", "fixedRateMs",
	    "not allowed with calendar");
	bad_m("\"calendar\":\"daily\",\"dialect\":\"vixie\"", "dialect",
	    "only allowed with cron");
	bad_m("\"calendar\":\"daily\",\"dialect\":\"systemd\"", "dialect",
	    "go in \"calendar\", which needs no dialect");
	bad_m("\"calendar\":\"*-*-* 25:00\"", "calendar",
	    "hour: \"25\" out of range 0..23");
	bad_m("\"calendar\":\"daily UTC\",\"timezone\":\"Europe/Riga\"",
	    "calendar", "names zone UTC but \"timezone\" is Europe/Riga");
	bad_m("\"cron\":\"Mon..Fri 09:00\"", "cron",
	    "is a systemd calendar event: give it as \"calendar\"");
	bad_m("\"calendar\":\"30 2 * * *\"", "calendar",
	    "is a vixie cron expression, not a calendar event: give it as "
	    "\"cron\"");
	bad_m("\"calendar\":\"0 0 12 ? * MON\"", "calendar",
	    "is a quartz cron expression, not a calendar event");

	/* dialect and timezone. */
	bad_m("\"cron\":\"@daily\",\"dialect\":\"posix\"", "dialect",
	    "must be one of vixie, quartz");
	bad_m("\"fixedRateMs\":10,\"dialect\":\"vixie\"", "dialect",
	    "only allowed with cron");
	bad_m("\"cron\":\"@daily\",\"timezone\":\"../etc/passwd\"",
	    "timezone", "IANA time zone name");
	bad_m("\"cron\":\"@daily\",\"timezone\":\"/etc/localtime\"",
	    "timezone", "IANA");
	bad_m("\"cron\":\"@daily\",\"timezone\":\"\"", "timezone", "IANA");
	bad_m("\"cron\":\"@daily\",\"timezone\":3", "timezone",
	    "must be a string");

	/* Policies. */
	bad_m("\"cron\":\"@daily\",\"misfire\":\"fire_twice\"", "misfire",
	    "must be one of fire_once, skip, fire_all");
	bad_m("\"cron\":\"@daily\",\"misfire\":null", "misfire",
	    "must be one of");
	bad_m("\"cron\":\"@daily\",\"overlap\":\"queue\"", "overlap",
	    "must be one of forbid, allow, replace");
	bad_m("\"cron\":\"@daily\",\"misfire\":\"fire_all\","
	    "\"misfireCap\":0", "misfireCap", "integer 1..1000");
	bad_m("\"cron\":\"@daily\",\"misfire\":\"fire_all\","
	    "\"misfireCap\":1001", "misfireCap", "integer 1..1000");
	bad_m("\"cron\":\"@daily\",\"misfireCap\":5", "misfireCap",
	    "only allowed with misfire \"fire_all\"");
	bad_m("\"misfireCap\":5,\"misfire\":\"skip\",\"cron\":\"@daily\"",
	    "misfireCap", "only allowed with misfire");
	bad_m("\"cron\":\"@daily\",\"enabled\":\"yes\"", "enabled",
	    "true or false");
	bad_m("\"cron\":\"@daily\",\"enabled\":1", "enabled",
	    "true or false");

	/* Times. */
	bad_m("\"cron\":\"@daily\",\"startAt\":\"tomorrow\"", "startAt",
	    "RFC 3339");
	bad_m("\"cron\":\"@daily\",\"endAt\":\"2024-06-01T12:00:00\"",
	    "endAt", "RFC 3339");
	bad_m("\"cron\":\"@daily\",\"createdAt\":\"2024-02-30T00:00:00Z\"",
	    "createdAt", "RFC 3339");
	bad_m("\"cron\":\"@daily\",\"startAt\":\"1970-01-01T00:00:00+01:00\"",
	    "startAt", "between 1970");
	bad_m("\"cron\":\"@daily\",\"startAt\":\"2024-06-02T00:00:00Z\","
	    "\"endAt\":\"2024-06-01T23:59:59.999Z\"", "startAt",
	    "must not be after endAt");
	bad_m("\"cron\":\"@daily\",\"onFailure\":\"a/b\"", "onFailure",
	    "[A-Za-z0-9]");
	bad_m("\"cron\":\"@daily\",\"onFailureMode\":\"edge\"",
	    "onFailureMode", "\"every\" or \"transition\"");
	bad_m("\"cron\":\"@daily\",\"jitterMs\":-1", "jitterMs",
	    "integer 0..3600000");
	bad_m("\"cron\":\"@daily\",\"jitterMs\":3600001", "jitterMs",
	    "integer 0..3600000");

	/* Task members. */
	bad_m("\"cron\":\"@daily\",\"maxRetries\":101", "maxRetries",
	    "integer 0..100");
	bad_m("\"cron\":\"@daily\",\"timeoutSec\":0", "timeoutSec",
	    "integer 1..604800");
	bad_m("\"cron\":\"@daily\",\"timeoutSec\":604801", "timeoutSec",
	    "integer 1..604800");
	bad_m("\"cron\":\"@daily\",\"priority\":10", "priority",
	    "integer 0..9");
	bad_m("\"cron\":\"@daily\",\"priority\":-1", "priority",
	    "integer 0..9");
	bad_m("\"cron\":\"@daily\",\"priority\":\"9\"", "priority",
	    "integer 0..9");
	bad_m("\"cron\":\"@daily\",\"route\":\"nowhere\"", "route",
	    "must be any, round_robin");
	bad_m("\"cron\":\"@daily\",\"route\":\"node:../x\"", "route",
	    "node:<id>");
	bad_m("\"cron\":\"@daily\",\"route\":\"tag:a b\"", "route",
	    "tag:<tag>");
	bad_m("\"cron\":\"@daily\",\"requireTags\":\"gpu\"", "requireTags",
	    "must be an array");
	bad_m("\"cron\":\"@daily\",\"requireTags\":[\"gpu\",\"gpu\"]",
	    "requireTags[1]", "duplicate tag");

	/* Unknown members, including task-only ones. */
	bad_m("\"cron\":\"@daily\",\"cronn\":\"@daily\"", "cronn",
	    "unknown member (did you mean \"cron\"?");
	bad_m("\"cron\":\"@daily\",\"timeZone\":\"UTC\"", "timeZone",
	    "unknown member (did you mean \"timezone\"?");
	bad_m("\"cron\":\"@daily\",\"fixedRate\":5", "fixedRate",
	    "(did you mean \"fixedRateMs\"?");
	bad_m("\"cron\":\"@daily\",\"triggerType\":\"now\"", "triggerType",
	    "unknown member");
}
END_TEST

/* requireTags and route tag:<name> (README "Node tags"): the job keeps
 * them (the route folded in) and copies them into the tasks it fires,
 * like route. */
START_TEST(test_require_tags)
{
	char *s = doc("\"cron\":\"@daily\",\"route\":\"tag:ssd\","
	    "\"requireTags\":[\"gpu\"]");
	struct task_error err;
	struct task t;
	struct job j;

	job_init(&j);
	task_init(&t);
	dec(s, &j);
	ck_assert_ptr_null(j.route);
	ck_assert_str_eq(j.require_tags, "gpu,ssd");
	ck_assert_int_eq(job_roundtrip(s, strlen(s), &err), 0);
	ck_assert_int_eq(job_make_task(&j, T_20240601_0200, &t), 0);
	ck_assert_str_eq(t.require_tags, "gpu,ssd");
	ck_assert_ptr_null(t.route);
	task_fini(&t);
	job_fini(&j);
	free(s);
}
END_TEST

/* startAt == endAt is a window of one instant, not an error. */
START_TEST(test_rules_accepts)
{
	struct job j;
	char *s = doc("\"cron\":\"@daily\",\"startAt\":"
	    "\"2024-06-01T00:00:00Z\",\"endAt\":\"2024-06-01T00:00:00Z\","
	    "\"misfire\":\"fire_all\",\"misfireCap\":1000,\"jitterMs\":0,"
	    "\"maxRetries\":0,\"timeoutSec\":1,\"route\":\"consistent_hash\"");

	job_init(&j);
	dec(s, &j);
	ck_assert(j.start_ms == j.end_ms);
	next_is(&j, NULL, 0, -1, -1);	/* cron needs a zone */
	job_fini(&j);
	free(s);
}
END_TEST

/* A bad cron expression: field "cron", rule = the parser's own message. */
START_TEST(test_rules_cron_message)
{
	static const struct {
		const char *text;
		enum cron_dialect d;	/* what the job decoder will use */
		const char *dialect;	/* "dialect" member, or NULL */
	} cases[] = {
		{ "61 * * * *", CRON_DIALECT_VIXIE, NULL },
		{ "* * 32 * *", CRON_DIALECT_VIXIE, NULL },
		{ "* * * *", CRON_DIALECT_VIXIE, NULL },
		{ "@reboot", CRON_DIALECT_VIXIE, NULL },
		{ "0 0 * * * *", CRON_DIALECT_QUARTZ, NULL },
		{ "0 0 12 * * ?", CRON_DIALECT_VIXIE, "vixie" },
		{ "0 2 * * *", CRON_DIALECT_QUARTZ, "quartz" },
	};
	char why[CRON_WHY_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cron_expr *e = cron_parse(cases[i].text, cases[i].d,
		    why, sizeof(why));
		char *m, *s;

		ck_assert_msg(e == NULL, "%s parsed", cases[i].text);
		m = cases[i].dialect != NULL ? unit_fmt("\"cron\":\"%s\","
		    "\"dialect\":\"%s\"", cases[i].text, cases[i].dialect) :
		    unit_fmt("\"cron\":\"%s\"", cases[i].text);
		s = doc(m);
		{
			struct task_error err;
			struct job j;

			job_init(&j);
			ck_assert_int_eq(job_decode(s, strlen(s), &j, &err),
			    -1);
			ck_assert_str_eq(err.field, "cron");
			ck_assert_str_eq(err.rule, why);
			job_fini(&j);
		}
		free(m);
		free(s);
	}
}
END_TEST

/*
 * An unknown zone passes job_decode (pure: a syntactically valid name) and
 * is caught by the caller's tz_load(), reported as field "timezone".
 */
START_TEST(test_rules_timezone_unknown)
{
	struct job j;
	char why[256];
	char *s = doc("\"cron\":\"@daily\",\"timezone\":\"Nope/Zone\"");

	job_init(&j);
	dec(s, &j);
	ck_assert_str_eq(j.timezone, "Nope/Zone");
	ck_assert_ptr_null(tz_load(j.timezone, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "Nope/Zone"));
	job_fini(&j);
	free(s);
}
END_TEST

/* executeParams the task codec would refuse makes the job invalid. */
START_TEST(test_rules_task_check)
{
	char *open = calloc(1, 34), *close = calloc(1, 34), *m;

	ck_assert(open != NULL && close != NULL);
	memset(open, '[', 33);
	memset(close, ']', 33);
	m = unit_fmt("\"cron\":\"@daily\",\"executeParams\":%s%s", open, close);
	bad_m(m, "executeParams", "nested deeper than 32");
	free(m);
	/* 32 levels are fine. */
	open[32] = close[32] = '\0';
	m = unit_fmt("\"cron\":\"@daily\",\"executeParams\":%s%s", open, close);
	{
		char *s = doc(m);
		struct job j;

		job_init(&j);
		dec(s, &j);
		job_fini(&j);
		free(s);
	}
	free(m);
	free(open);
	free(close);
}
END_TEST

/* ---- job_next_fire ---------------------------------------------------- */

/*
 * "0 2 * * *" in New York; 2024-03-10 is the spring-forward day (02:00
 * EST -> 03:00 EDT), so 02:00 does not exist.  CRON-RULES.md 4.6 scenario
 * A (cronie, cron(8): "run immediately"): a fixed-time job in the gap
 * fires once at the first instant after it, 03:00 EDT = 07:00Z.  The day
 * after, 02:00 EDT = 06:00Z.
 */
START_TEST(test_next_cron_dst_gap)
{
	struct tz *z = zone("America/New_York");
	struct job j;
	char *s = doc("\"cron\":\"0 2 * * *\","
	    "\"timezone\":\"America/New_York\"");

	job_init(&j);
	dec(s, &j);
	next_is(&j, z, T_20240309_1200, -1, T_20240310_0700);
	next_is(&j, z, T_20240310_0700, -1, T_20240311_0600);
	/* Milliseconds: anything in the second before still gives it. */
	next_is(&j, z, T_20240310_0700 - 1, -1, T_20240310_0700);
	next_is(&j, z, T_20240310_0700 - 999, -1, T_20240310_0700);
	/* A disabled job still has a schedule (the caller decides). */
	j.enabled = 0;
	next_is(&j, z, T_20240309_1200, -1, T_20240310_0700);
	job_fini(&j);
	tz_free(z);
	free(s);
}
END_TEST

/* Quartz every second: whole seconds, strictly after a ms instant. */
START_TEST(test_next_cron_ms)
{
	struct tz *z = zone("UTC");
	struct job j;
	char *s = doc("\"cron\":\"* * * * * ?\"");

	job_init(&j);
	dec(s, &j);
	next_is(&j, z, T_20240601_1200, -1, T_20240601_1200 + 1000);
	next_is(&j, z, T_20240601_1200 + 500, -1, T_20240601_1200 + 1000);
	next_is(&j, z, T_20240601_1200 - 1, -1, T_20240601_1200);
	job_fini(&j);
	tz_free(z);
	free(s);
}
END_TEST

/* fixedRateMs 1000 anchored at startAt 2024-06-01T12:00:00Z. */
START_TEST(test_next_fixed_rate)
{
	const int64_t T = T_20240601_1200;
	struct job j;
	char *s = doc("\"fixedRateMs\":1000,"
	    "\"startAt\":\"2024-06-01T12:00:00Z\"");

	job_init(&j);
	dec(s, &j);
	next_is(&j, NULL, T - 5000, -1, T);	/* future start: the anchor */
	next_is(&j, NULL, T - 1, -1, T);
	next_is(&j, NULL, T, -1, T + 1000);
	next_is(&j, NULL, T + 999, -1, T + 1000);
	next_is(&j, NULL, T + 1000, -1, T + 2000);
	next_is(&j, NULL, T + 1500, -1, T + 2000);
	next_is(&j, NULL, T + 86400000 + 1, -1, T + 86401000);
	job_fini(&j);
	free(s);

	/* A ms anchor keeps its phase: .250, 1.250, ... */
	s = doc("\"fixedRateMs\":1000,\"startAt\":\"2024-06-01T12:00:00.25Z\"");
	dec(s, &j);
	next_is(&j, NULL, T, -1, T + 250);
	next_is(&j, NULL, T + 250, -1, T + 1250);
	job_fini(&j);
	free(s);

	/* No startAt: anchored at createdAt. */
	s = doc("\"fixedRateMs\":7000,\"createdAt\":\"2024-06-01T12:00:01Z\"");
	dec(s, &j);
	next_is(&j, NULL, T, -1, T + 1000);
	next_is(&j, NULL, T + 1000, -1, T + 8000);
	job_fini(&j);
	free(s);

	/* Neither: at multiples of the rate since the epoch (T is a whole
	 * minute: 1717243200000 = 28620720 * 60000). */
	s = doc("\"fixedRateMs\":60000");
	dec(s, &j);
	next_is(&j, NULL, T - 1, -1, T);
	next_is(&j, NULL, T, -1, T + 60000);
	job_fini(&j);
	free(s);
}
END_TEST

/* endAt is inclusive and cuts the schedule off; startAt in the future. */
START_TEST(test_next_bounds)
{
	const int64_t T = T_20240601_1200;
	struct tz *z = zone("UTC");
	struct job j;
	char *s = doc("\"fixedRateMs\":1000,\"startAt\":"
	    "\"2024-06-01T12:00:00Z\",\"endAt\":\"2024-06-01T12:00:03Z\"");

	job_init(&j);
	dec(s, &j);
	next_is(&j, NULL, T + 2000, -1, T + 3000);
	next_is(&j, NULL, T + 2999, -1, T + 3000);
	next_is(&j, NULL, T + 3000, -1, -1);
	next_is(&j, NULL, T + 999999, -1, -1);
	job_fini(&j);
	free(s);

	/* Every minute, starting 12:01:30: first fire 12:02:00. */
	s = doc("\"cron\":\"* * * * *\",\"startAt\":\"2024-06-01T12:01:30Z\","
	    "\"endAt\":\"2024-06-01T12:05:00Z\"");
	dec(s, &j);
	next_is(&j, z, T, -1, T + 2 * MIN_MS);
	next_is(&j, z, T - 3 * DAY_MS, -1, T + 2 * MIN_MS);
	next_is(&j, z, T + 4 * MIN_MS, -1, T + 5 * MIN_MS);	/* = endAt */
	next_is(&j, z, T + 5 * MIN_MS, -1, -1);
	job_fini(&j);
	free(s);

	/* startAt exactly on a fire: inclusive. */
	s = doc("\"cron\":\"* * * * *\",\"startAt\":\"2024-06-01T12:01:00Z\"");
	dec(s, &j);
	next_is(&j, z, T, -1, T + MIN_MS);
	next_is(&j, z, T - 1, -1, T + MIN_MS);
	job_fini(&j);
	free(s);

	/* A cron expression that never fires again. */
	s = doc("\"cron\":\"0 0 0 1 1 ? 2020\"");
	dec(s, &j);
	next_is(&j, z, T, -1, -1);
	job_fini(&j);
	free(s);
	tz_free(z);
}
END_TEST

/* fixedDelayMs: last_end + delay, and the first-fire rules. */
START_TEST(test_next_fixed_delay)
{
	const int64_t T = T_20240601_1200;
	struct job j;
	char *s = doc("\"fixedDelayMs\":30000");

	job_init(&j);
	dec(s, &j);
	next_is(&j, NULL, T, T, T + 30000);
	next_is(&j, NULL, T + 10000, T, T + 30000);
	next_is(&j, NULL, T + 10000, T + 5000, T + 35000);
	/* Overdue: the chain restarts at after + delay. */
	next_is(&j, NULL, T + 60000, T, T + 90000);
	/* Never ran, no anchor: one delay from after_ms. */
	next_is(&j, NULL, T, -1, T + 30000);
	job_fini(&j);
	free(s);

	s = doc("\"fixedDelayMs\":30000,"
	    "\"createdAt\":\"2024-06-01T12:00:00Z\"");
	dec(s, &j);
	next_is(&j, NULL, T - 1000, -1, T + 30000);
	job_fini(&j);
	free(s);

	s = doc("\"fixedDelayMs\":30000,\"startAt\":\"2024-06-01T12:00:00Z\","
	    "\"endAt\":\"2024-06-01T12:01:00Z\"");
	dec(s, &j);
	next_is(&j, NULL, T - 1000, -1, T);	/* never ran: startAt */
	next_is(&j, NULL, T + 20000, T + 20000, T + 50000);
	next_is(&j, NULL, T + 40000, T + 40000, -1);	/* past endAt */
	job_fini(&j);
	free(s);
}
END_TEST

/* ---- job_misfire_plan ------------------------------------------------- */

/*
 * Every minute; last fire 10:00; now 10:05:30; threshold 60 s.  Due:
 * 10:01 .. 10:05.  The oldest, 10:01, is 4.5 min late, over the
 * threshold, so the policy applies (Quartz misfire detection).
 */
START_TEST(test_plan_every_minute)
{
	const int64_t L = T_20240601_1000, now = L + 5 * MIN_MS + 30000;
	struct tz *z = zone("UTC");
	struct job_plan p;
	struct job j;
	int64_t out[JOB_MISFIRE_CAP_MAX];
	size_t n;
	char *s;

	job_init(&j);

	/* fire_once: exactly [10:05], the latest missed instant. */
	s = doc("\"cron\":\"* * * * *\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, L, -1, now, JOB_MISFIRE_THRESHOLD_MS,
	    out, JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == L + 5 * MIN_MS);
	ck_assert_int_eq(p.misfired, 1);
	ck_assert_int_eq(p.dropped, 1);
	ck_assert(p.settled_ms == now);
	ck_assert(p.next_ms == L + 6 * MIN_MS);
	job_fini(&j);

	/* skip: nothing; the schedule resumes at 10:06. */
	s = doc("\"cron\":\"* * * * *\",\"misfire\":\"skip\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, L, -1, now, JOB_MISFIRE_THRESHOLD_MS,
	    out, JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(p.misfired, 1);
	ck_assert_int_eq(p.dropped, 1);
	ck_assert(p.settled_ms == now && p.next_ms == L + 6 * MIN_MS);
	job_fini(&j);

	/* fire_all (cap 10): 10:01 .. 10:05, oldest first. */
	s = doc("\"cron\":\"* * * * *\",\"misfire\":\"fire_all\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, L, -1, now, JOB_MISFIRE_THRESHOLD_MS,
	    out, JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert(out[i] == L + (int64_t)(i + 1) * MIN_MS);
	ck_assert_int_eq(p.misfired, 1);
	ck_assert_int_eq(p.dropped, 0);
	ck_assert(p.next_ms == L + 6 * MIN_MS);
	job_fini(&j);

	/* fire_all with misfireCap 3: the 3 oldest, 10:01 .. 10:03. */
	s = doc("\"cron\":\"* * * * *\",\"misfire\":\"fire_all\","
	    "\"misfireCap\":3");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, L, -1, now, JOB_MISFIRE_THRESHOLD_MS,
	    out, JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 3);
	ck_assert(out[0] == L + MIN_MS && out[1] == L + 2 * MIN_MS &&
	    out[2] == L + 3 * MIN_MS);
	ck_assert_int_eq(p.dropped, 1);
	ck_assert(p.settled_ms == now && p.next_ms == L + 6 * MIN_MS);
	/* Resumable: recording the last planned instant gives the rest. */
	n = job_misfire_plan(&j, z, out[2], -1, now, JOB_MISFIRE_THRESHOLD_MS,
	    out, JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 2);
	ck_assert(out[0] == L + 4 * MIN_MS && out[1] == L + 5 * MIN_MS);
	/* max smaller than the cap bounds it too. */
	n = job_misfire_plan(&j, z, L, -1, now, 0, out, 2, &p);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(p.dropped, 1);
	job_fini(&j);
	tz_free(z);
}
END_TEST

/* Due instants within the threshold are on time, whatever the policy. */
START_TEST(test_plan_on_time)
{
	const int64_t L = T_20240601_1000;
	struct tz *z = zone("UTC");
	struct job_plan p;
	struct job j;
	int64_t out[8];
	size_t n;
	char *s = doc("\"cron\":\"* * * * *\",\"misfire\":\"skip\"");

	job_init(&j);
	dec(s, &j);
	/* 10:01 looked at 10 s late: fired. */
	n = job_misfire_plan(&j, z, L, -1, L + MIN_MS + 10000,
	    JOB_MISFIRE_THRESHOLD_MS, out, 8, &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == L + MIN_MS);
	ck_assert_int_eq(p.misfired, 0);
	ck_assert_int_eq(p.dropped, 0);
	ck_assert(p.next_ms == L + 2 * MIN_MS);
	/* Exactly on time, and exactly the threshold late. */
	n = job_misfire_plan(&j, z, L, -1, L + MIN_MS, 0, out, 8, &p);
	ck_assert_uint_eq(n, 1);
	n = job_misfire_plan(&j, z, L, -1, L + 2 * MIN_MS,
	    JOB_MISFIRE_THRESHOLD_MS, out, 8, &p);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(p.misfired, 0);
	/* Nothing due yet. */
	n = job_misfire_plan(&j, z, L, -1, L + 59999, 0, out, 8, &p);
	ck_assert_uint_eq(n, 0);
	ck_assert(p.next_ms == L + MIN_MS && p.settled_ms == L + 59999);
	/* A 10-minute threshold makes all five on time; max 2 cuts the
	 * list and settled_ms/next_ms say where to resume. */
	n = job_misfire_plan(&j, z, L, -1, L + 5 * MIN_MS + 30000,
	    10 * MIN_MS, out, 2, &p);
	ck_assert_uint_eq(n, 2);
	ck_assert(out[0] == L + MIN_MS && out[1] == L + 2 * MIN_MS);
	ck_assert(p.settled_ms == L + 2 * MIN_MS);
	ck_assert(p.next_ms == L + 3 * MIN_MS);
	ck_assert_int_eq(p.dropped, 0);
	/* The wall clock stepped back: settled_ms never moves back. */
	n = job_misfire_plan(&j, z, L, -1, L - HOUR_MS, 0, out, 8, &p);
	ck_assert_uint_eq(n, 0);
	ck_assert(p.settled_ms == L && p.next_ms == L + MIN_MS);
	/* plan may be NULL. */
	ck_assert_uint_eq(job_misfire_plan(&j, z, L, -1, L + MIN_MS, 0, out,
	    8, NULL), 1);
	job_fini(&j);
	tz_free(z);
	free(s);
}
END_TEST

/* A job that never fired: the window opens at createdAt (or startAt). */
START_TEST(test_plan_never_fired)
{
	const int64_t L = T_20240601_1000, now = L + 5 * MIN_MS + 30000;
	struct tz *z = zone("UTC");
	struct job_plan p;
	struct job j;
	int64_t out[16];
	size_t n;
	char *s = doc("\"cron\":\"* * * * *\",\"misfire\":\"fire_all\"");

	job_init(&j);
	/* No createdAt: nothing of its past is missed. */
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, -1, -1, now, 0, out, 16, &p);
	ck_assert_uint_eq(n, 0);
	ck_assert(p.settled_ms == now && p.next_ms == L + 6 * MIN_MS);
	job_fini(&j);

	/* Created 10:03:30: 10:04 and 10:05 are due (10:04 is 90 s late). */
	s = doc("\"cron\":\"* * * * *\",\"misfire\":\"fire_all\","
	    "\"createdAt\":\"2024-06-01T10:03:30Z\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, -1, -1, now, JOB_MISFIRE_THRESHOLD_MS,
	    out, 16, &p);
	ck_assert_uint_eq(n, 2);
	ck_assert(out[0] == L + 4 * MIN_MS && out[1] == L + 5 * MIN_MS);
	ck_assert_int_eq(p.misfired, 1);
	job_fini(&j);

	/* Created at 10:00:00 exactly, startAt 10:04:00: from 10:04. */
	s = doc("\"cron\":\"* * * * *\",\"misfire\":\"fire_all\","
	    "\"createdAt\":\"2024-06-01T10:00:00Z\","
	    "\"startAt\":\"2024-06-01T10:04:00Z\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, -1, -1, now, 0, out, 16, &p);
	ck_assert_uint_eq(n, 2);
	ck_assert(out[0] == L + 4 * MIN_MS);
	job_fini(&j);

	/* Created at 10:00:00 exactly: the 10:00 fire itself is due. */
	s = doc("\"cron\":\"* * * * *\",\"misfire\":\"fire_all\","
	    "\"createdAt\":\"2024-06-01T10:00:00Z\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, -1, -1, now, 0, out, 16, &p);
	ck_assert_uint_eq(n, 6);
	ck_assert(out[0] == L && out[5] == L + 5 * MIN_MS);
	job_fini(&j);
	tz_free(z);
}
END_TEST

/*
 * fire_once over a long downtime finds the latest instant by bisection;
 * check it against a plain walk for several expressions and windows.
 */
START_TEST(test_plan_fire_once_bisect)
{
	static const char *const exprs[] = { "*/7 * * * *", "0 2 * * *",
		"15 3 * * MON", "0 0 29 2 *", "*/13 * * * * ?" };
	static const char *const zones[] = { "UTC", "America/New_York",
		"Europe/Riga" };
	const int64_t base = T_20240309_1200 - 40 * DAY_MS;
	static const int64_t spans[] = { 61000, 3 * HOUR_MS + 17,
		9 * DAY_MS + 123, 70 * DAY_MS };

	for (size_t zi = 0; zi < 3; zi++) {
		struct tz *z = zone(zones[zi]);

		for (size_t ei = 0; ei < 5; ei++) {
			struct job j;
			char *m = unit_fmt("\"cron\":\"%s\"", exprs[ei]);
			char *s = doc(m);

			job_init(&j);
			dec(s, &j);
			for (size_t si = 0; si < 4; si++) {
				int64_t now = base + spans[si], t, last = -1;
				int64_t out[4];
				struct job_plan p;
				size_t n;

				/* Plain walk over (base, now]. */
				t = base;
				while (job_next_fire(&j, z, t, -1, &t) == 1 &&
				    t <= now)
					last = t;
				n = job_misfire_plan(&j, z, base, -1, now, 0,
				    out, 4, &p);
				if (last < 0) {
					ck_assert_uint_eq(n, 0);
					continue;
				}
				ck_assert_msg(n == 1 && out[0] == last,
				    "%s %s span %zu: got %zu/%lld want %lld",
				    exprs[ei], zones[zi], si, n,
				    (long long)(n ? out[0] : -1),
				    (long long)last);
			}
			job_fini(&j);
			free(s);
			free(m);
		}
		tz_free(z);
	}
}
END_TEST

/* A year of every-second downtime: bounded work, endAt respected. */
START_TEST(test_plan_long_and_bounded)
{
	const int64_t T = T_20240601_1200;
	struct tz *z = zone("UTC");
	struct job_plan p;
	struct job j;
	int64_t out[JOB_MISFIRE_CAP_MAX];
	size_t n;
	char *s = doc("\"cron\":\"* * * * * ?\"");

	job_init(&j);
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, T - 365 * DAY_MS, -1, T + 1500, 0, out,
	    JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == T + 1000);
	ck_assert(p.next_ms == T + 2000);
	job_fini(&j);

	/* endAt inside the window: the latest due is endAt's second. */
	s = doc("\"cron\":\"* * * * * ?\","
	    "\"endAt\":\"2024-06-01T11:00:00.5Z\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, T - DAY_MS, -1, T, 0, out,
	    JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == T - HOUR_MS);
	ck_assert(p.next_ms == JOB_NEXT_NONE);
	job_fini(&j);

	/* Fixed rate, fire_all: arithmetic instants. */
	s = doc("\"fixedRateMs\":1000,\"startAt\":\"2024-06-01T12:00:00Z\","
	    "\"misfire\":\"fire_all\"");
	dec(s, &j);
	free(s);
	n = job_misfire_plan(&j, z, T, -1, T + 5500, 0, out,
	    JOB_MISFIRE_CAP_MAX, &p);
	ck_assert_uint_eq(n, 5);
	ck_assert(out[0] == T + 1000 && out[4] == T + 5000);
	ck_assert(p.next_ms == T + 6000);
	/* fire_once on fixed rate after a day: the latest second. */
	j.misfire = JOB_MISFIRE_FIRE_ONCE;
	n = job_misfire_plan(&j, z, T, -1, T + DAY_MS + 999, 0, out, 1, &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == T + DAY_MS);
	job_fini(&j);
	tz_free(z);
}
END_TEST

START_TEST(test_plan_fixed_delay)
{
	const int64_t T = T_20240601_1200;
	struct job_plan p;
	struct job j;
	int64_t out[4];
	size_t n;
	char *s = doc("\"fixedDelayMs\":60000");

	job_init(&j);
	dec(s, &j);
	free(s);
	/* Last run ended at T: due T+60 s. */
	n = job_misfire_plan(&j, NULL, T - 5000, T, T + 30000, 60000, out, 4,
	    &p);
	ck_assert_uint_eq(n, 0);
	ck_assert(p.next_ms == T + 60000);
	n = job_misfire_plan(&j, NULL, T - 5000, T, T + 61000, 60000, out, 4,
	    &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == T + 60000);
	ck_assert_int_eq(p.misfired, 0);
	ck_assert(p.next_ms == JOB_NEXT_AFTER_END);
	/* Ten minutes late: fire_once fires the overdue instant. */
	n = job_misfire_plan(&j, NULL, T - 5000, T, T + 10 * MIN_MS, 60000,
	    out, 4, &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == T + 60000);
	ck_assert_int_eq(p.misfired, 1);
	/* skip: restart the chain; recording settled_ms keeps it there. */
	j.misfire = JOB_MISFIRE_SKIP;
	n = job_misfire_plan(&j, NULL, T - 5000, T, T + 10 * MIN_MS, 60000,
	    out, 4, &p);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(p.dropped, 1);
	ck_assert(p.next_ms == T + 11 * MIN_MS);
	ck_assert(p.settled_ms == T + 10 * MIN_MS);
	n = job_misfire_plan(&j, NULL, p.settled_ms, T, T + 10 * MIN_MS +
	    1000, 60000, out, 4, &p);
	ck_assert_uint_eq(n, 0);
	ck_assert(p.next_ms == T + 11 * MIN_MS);
	n = job_misfire_plan(&j, NULL, T + 10 * MIN_MS, T, T + 11 * MIN_MS,
	    60000, out, 4, &p);
	ck_assert_uint_eq(n, 1);
	ck_assert(out[0] == T + 11 * MIN_MS);
	job_fini(&j);
}
END_TEST

/* Absurd inputs: no fire, no overflow (UBSan would abort here). */
START_TEST(test_extremes)
{
	static const char *const defs[] = { "\"cron\":\"* * * * *\"",
		"\"fixedRateMs\":31536000000", "\"fixedDelayMs\":31536000000",
		"\"fixedRateMs\":1,\"startAt\":\"9999-12-31T23:59:59.999Z\"" };
	static const int64_t ts[] = { INT64_MIN, -2, -1, 0,
		JOB_TIME_MAX_MS - 1, JOB_TIME_MAX_MS, JOB_TIME_MAX_MS + 1,
		INT64_MAX };
	struct tz *z = zone("UTC");
	int64_t out[4], t;
	struct job_plan p;

	for (size_t d = 0; d < sizeof(defs) / sizeof(defs[0]); d++) {
		char *s = doc(defs[d]);
		struct job j;

		job_init(&j);
		dec(s, &j);
		for (size_t a = 0; a < sizeof(ts) / sizeof(ts[0]); a++)
			for (size_t b = 0; b < sizeof(ts) / sizeof(ts[0]);
			    b++) {
				if (job_next_fire(&j, z, ts[a], ts[b], &t) == 1)
					ck_assert(t > ts[a] &&
					    t <= JOB_TIME_MAX_MS);
				(void)job_misfire_plan(&j, z, ts[a], ts[b],
				    ts[b], INT64_MAX, out, 4, &p);
				(void)job_misfire_plan(&j, z, ts[a], -1,
				    ts[b], 0, out, 4, &p);
			}
		job_fini(&j);
		free(s);
	}
	tz_free(z);
}
END_TEST

/* ---- tasks ------------------------------------------------------------ */

START_TEST(test_task_id)
{
	char id[JOB_TASK_ID_MAX], small[24], code[TASK_CODE_MAX + 2];

	ck_assert_int_eq(job_task_id("nightly", T_20240601_0200, id,
	    sizeof(id)), 0);
	ck_assert_str_eq(id, "nightly.20240601T020000Z");
	ck_assert_int_eq(job_task_id("tick", T_20240601_0200 + 250, id,
	    sizeof(id)), 0);
	ck_assert_str_eq(id, "tick.20240601T020000250Z");
	ck_assert_int_eq(job_task_id("t", T_20240601_0200 + 1, id,
	    sizeof(id)), 0);
	ck_assert_str_eq(id, "t.20240601T020000001Z");
	ck_assert_int_eq(job_task_id("z", 0, id, sizeof(id)), 0);
	ck_assert_str_eq(id, "z.19700101T000000Z");
	/* 2024-03-10T07:00:00Z; leap day 2024-02-29T23:59:59.999Z, the ms
	 * before 2024-03-01 = day 19723 + 31 + 29 = 19783. */
	ck_assert_int_eq(job_task_id("a", T_20240310_0700, id,
	    sizeof(id)), 0);
	ck_assert_str_eq(id, "a.20240310T070000Z");
	ck_assert_int_eq(job_task_id("a", 19783 * DAY_MS - 1, id,
	    sizeof(id)), 0);
	ck_assert_str_eq(id, "a.20240229T235959999Z");
	ck_assert_int_eq(job_task_id("a", JOB_TIME_MAX_MS, id, sizeof(id)),
	    0);
	ck_assert_str_eq(id, "a.99991231T235959999Z");

	/* The longest code still makes a valid requestId. */
	memset(code, 'c', TASK_CODE_MAX);
	code[TASK_CODE_MAX] = '\0';
	ck_assert_int_eq(job_task_id(code, T_20240601_0200 + 999, id,
	    sizeof(id)), 0);
	ck_assert_uint_eq(strlen(id), TASK_CODE_MAX + 1 + 19);
	ck_assert(strlen(id) < sizeof(id));
	ck_assert(task_name_ok(id, TASK_ID_MAX));
	code[TASK_CODE_MAX] = 'c';
	code[TASK_CODE_MAX + 1] = '\0';
	errno = 0;
	ck_assert_int_eq(job_task_id(code, 0, id, sizeof(id)), -1);
	ck_assert_int_eq(errno, EINVAL);

	errno = 0;
	ck_assert_int_eq(job_task_id("../x", 0, id, sizeof(id)), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(job_task_id("x", -1, id, sizeof(id)), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_int_eq(job_task_id("x", JOB_TIME_MAX_MS + 1, id,
	    sizeof(id)), -1);
	/* "nightly.20240601T020000Z" is 24 bytes: 24 is one short. */
	errno = 0;
	ck_assert_int_eq(job_task_id("nightly", T_20240601_0200, small,
	    sizeof(small)), -1);
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_str_eq(small, "");
}
END_TEST

START_TEST(test_make_task)
{
	static const char params[] = "{\"k\": [1 ,2]}";
	char *m = unit_fmt("\"cron\":\"0 2 * * *\",\"route\":\"broadcast\","
	    "\"maxRetries\":2,\"timeoutSec\":30,\"priority\":8,"
	    "\"onFailure\":\"page\","
	    "\"onFailureMode\":\"transition\",\"executeParams\":%s", params);
	char *s = doc(m);
	struct task t, back;
	struct task_error err;
	struct job j;
	struct buf b;

	job_init(&j);
	task_init(&t);
	task_init(&back);
	buf_init(&b, 0);
	dec(s, &j);
	ck_assert_int_eq(job_make_task(&j, T_20240601_0200 + 250, &t), 0);
	ck_assert_str_eq(t.request_id, "j1.20240601T020000250Z");
	ck_assert_str_eq(t.task_code, "t1");
	ck_assert_str_eq(t.params, params);
	ck_assert_uint_eq(t.params_len, strlen(params));
	ck_assert_str_eq(t.route, "broadcast");
	ck_assert_int_eq(t.max_retries, 2);
	ck_assert_int_eq(t.timeout_sec, 30);
	ck_assert_int_eq(t.priority, 8);	/* the job's, passed on */
	ck_assert(t.trigger_ms == T_20240601_0200 + 250);
	ck_assert_str_eq(t.job_code, "j1");
	ck_assert_str_eq(t.on_failure, "page");
	ck_assert_int_eq(t.on_failure_mode, ALERT_MODE_TRANSITION);
	ck_assert_int_eq(t.trigger, TASK_TRIGGER_NOW);
	ck_assert(t.created_ms == -1);

	/* Through the task codec and back. */
	ck_assert_int_eq(task_encode(&t, &b), 0);
	ck_assert_msg(task_decode(b.data, b.len, &back, &err) == 0, "%s: %s",
	    err.field, err.rule);
	ck_assert_str_eq(back.request_id, t.request_id);
	ck_assert_str_eq(back.params, params);
	ck_assert_str_eq(back.job_code, "j1");
	ck_assert_str_eq(back.on_failure, "page");
	ck_assert_int_eq(back.priority, 8);
	ck_assert_int_eq(back.on_failure_mode, ALERT_MODE_TRANSITION);
	ck_assert(back.trigger_ms == t.trigger_ms);
	ck_assert_ptr_null(back.require_tags);

	/* Reusing a filled task frees the old contents; bad t fails clean. */
	ck_assert_int_eq(job_make_task(&j, T_20240601_0200, &t), 0);
	ck_assert_str_eq(t.request_id, "j1.20240601T020000Z");
	ck_assert_int_eq(job_make_task(&j, -5, &t), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_ptr_null(t.params);
	ck_assert_str_eq(t.request_id, "");

	/* Absent task members stay absent. */
	job_fini(&j);
	free(s);
	s = doc("\"fixedRateMs\":1000");
	dec(s, &j);
	ck_assert_int_eq(job_make_task(&j, 1000, &t), 0);
	ck_assert_ptr_null(t.route);
	ck_assert_int_eq(t.max_retries, -1);
	ck_assert_int_eq(t.timeout_sec, -1);
	ck_assert_str_eq(t.params, "{}");

	buf_fini(&b);
	task_fini(&t);
	task_fini(&back);
	job_fini(&j);
	free(s);
	free(m);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(job_kind_member(JOB_KIND_FIXED_RATE), "fixedRateMs");
	ck_assert_str_eq(job_misfire_name(JOB_MISFIRE_FIRE_ALL), "fire_all");
	ck_assert_str_eq(job_overlap_name(JOB_OVERLAP_REPLACE), "replace");
	ck_assert_str_eq(job_overlap_name((enum job_overlap)9), "?");
}
END_TEST

/* The shape job_task_id() gives (DESIGN.md §5, job.h), and no other. */
START_TEST(test_fire_id_shape)
{
	char id[JOB_TASK_ID_MAX];

	ck_assert_int_eq(job_task_id("nightly", 1717207200000LL, id,
	    sizeof(id)), 0);
	ck_assert_str_eq(id, "nightly.20240601T020000Z");
	ck_assert_int_eq(job_fire_id(id), 1);
	ck_assert_int_eq(job_fire_id("tick.20240601T020000250Z"), 1);
	ck_assert_int_eq(job_fire_id("a.b.20240601T020000Z"), 1);
	ck_assert_int_eq(job_fire_id("order-42"), 0);
	ck_assert_int_eq(job_fire_id(".20240601T020000Z"), 0);
	ck_assert_int_eq(job_fire_id("x.20240601T02000Z"), 0);
	ck_assert_int_eq(job_fire_id("x.20240601T0200002Z"), 0);
	ck_assert_int_eq(job_fire_id("x.2024060lT020000Z"), 0);
	ck_assert_int_eq(job_fire_id("x-20240601T020000Z"), 0);
	ck_assert_int_eq(job_fire_id("x.20240601T020000Zz"), 0);
}
END_TEST

static Suite *
job_suite(void)
{
	Suite *s = suite_create("job");
	TCase *tc;

	tc = tcase_create("codec");
	tcase_add_test(tc, test_decode_defaults);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_calendar);
	tcase_add_test(tc, test_params_raw);
	tcase_add_test(tc, test_rules_json);
	tcase_add_test(tc, test_rules_raw_bytes);
	tcase_add_test(tc, test_roundtrip_property);
	tcase_add_test(tc, test_rules_members);
	tcase_add_test(tc, test_rules_accepts);
	tcase_add_test(tc, test_rules_cron_message);
	tcase_add_test(tc, test_rules_timezone_unknown);
	tcase_add_test(tc, test_rules_task_check);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("next_fire");
	tcase_add_test(tc, test_next_cron_dst_gap);
	tcase_add_test(tc, test_next_cron_ms);
	tcase_add_test(tc, test_next_fixed_rate);
	tcase_add_test(tc, test_next_bounds);
	tcase_add_test(tc, test_next_fixed_delay);
	suite_add_tcase(s, tc);

	tc = tcase_create("misfire");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_plan_every_minute);
	tcase_add_test(tc, test_plan_on_time);
	tcase_add_test(tc, test_plan_never_fired);
	tcase_add_test(tc, test_plan_fire_once_bisect);
	tcase_add_test(tc, test_plan_long_and_bounded);
	tcase_add_test(tc, test_plan_fixed_delay);
	tcase_add_test(tc, test_extremes);
	suite_add_tcase(s, tc);

	tc = tcase_create("tasks");
	tcase_add_test(tc, test_task_id);
	tcase_add_test(tc, test_make_task);
	tcase_add_test(tc, test_require_tags);
	tcase_add_test(tc, test_fire_id_shape);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(job_suite)
