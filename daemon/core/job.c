/*
 * job — recurring job codec and schedule arithmetic; see job.h.
 *
 * Decoding follows task.c's shape: jansson validates the JSON, each member
 * is checked by a table of small decoders, the first violation is returned
 * as (field, rule), and executeParams is cut out of the original bytes by
 * a small scanner so the hook gets exactly what was written.  Schedules
 * are computed from the definition and the times passed in; nothing here
 * remembers anything between calls.
 */
#include "core/job.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alert.h"
#include "core/jsonfield.h"
#include "core/jsontext.h"
#include "core/conckey.h"
#include "core/priority.h"
#include "core/suggest.h"
#include "core/tags.h"
#include "core/tstime.h"

/* The refusal of jsonfield.h, under the short name the decoders use. */
#define fail(...) jsonfield_fail(__VA_ARGS__)

static const char *const misfire_names[] = { "fire_once", "skip",
	"fire_all" };
static const char *const overlap_names[] = { "forbid", "allow", "replace" };
static const char *const kind_members[] = { "cron", "fixedRateMs",
	"fixedDelayMs" };

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

const char *
job_kind_member(enum job_kind k)
{
	return (size_t)k < NELEM(kind_members) ? kind_members[k] : "?";
}

const char *
job_expr_member(const struct job *j)
{
	return j->dialect == CRON_DIALECT_SYSTEMD ? "calendar" : "cron";
}

const char *
job_zone_member(const struct job *j)
{
	return j->timezone_from_calendar ? "calendar" : "timezone";
}

const char *
job_misfire_name(enum job_misfire m)
{
	return (size_t)m < NELEM(misfire_names) ? misfire_names[m] : "?";
}

const char *
job_overlap_name(enum job_overlap o)
{
	return (size_t)o < NELEM(overlap_names) ? overlap_names[o] : "?";
}

void
job_init(struct job *j)
{
	memset(j, 0, sizeof(*j));
	j->kind = JOB_KIND_CRON;
	j->dialect = CRON_DIALECT_VIXIE;
	j->max_retries = j->timeout_sec = -1;
	j->priority = -1;
	j->max_per_key = -1;
	j->misfire = JOB_MISFIRE_FIRE_ONCE;
	j->misfire_cap = JOB_MISFIRE_CAP_DEFAULT;
	j->overlap = JOB_OVERLAP_FORBID;
	j->enabled = 1;
	j->start_ms = j->end_ms = j->created_ms = -1;
	j->on_failure_mode = -1;
}

void
job_fini(struct job *j)
{
	if (j == NULL)
		return;
	free(j->cron_text);
	cron_free(j->cron);
	free(j->params);
	free(j->route);
	free(j->require_tags);
	free(j->conc_key_tmpl);
	job_init(j);
}

/* --- errors --- */

/* --- member decoders --- */

/* A time member: -1 means "absent" in struct job; nothing fires before
 * 1970. */
static int
get_time(json_t *v, const char *field, int64_t *out, struct task_error *err)
{
	int64_t t;

	if (jsonfield_time(v, field, &t, err) != 0)
		return -1;
	if (t < 0 || t > JOB_TIME_MAX_MS)
		return fail(err, field, "must be between "
		    "1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z");
	*out = t;
	return 0;
}

static int
get_enum(json_t *v, const char *field, const char *const *names, size_t n,
    int *out, struct task_error *err)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	for (size_t i = 0; s != NULL && i < n; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	if (n == 3)
		return fail(err, field, "must be one of %s, %s, %s",
		    names[0], names[1], names[2]);
	return fail(err, field, "must be one of %s, %s", names[0], names[1]);
}

/* Decoder scratch: what the members said, before cross-checks. */
struct job_seen {
	int kinds;			/* bit per enum job_kind present */
	const char *cron;		/* borrowed from the json_t */
	int calendar;			/* 1: it came as "calendar" */
	int misfire_cap_given;
};

/* The members decode_member knows, for the "did you mean" of another. */
static const char *const job_members[] = {
	"jobCode", "taskCode", "cron", "calendar", "fixedRateMs",
	"fixedDelayMs",
	"dialect", "timezone", "executeParams", "route", "maxRetries",
	"timeoutSec", "misfire", "misfireCap", "overlap", "enabled",
	"startAt", "endAt", "createdAt", "jitterMs", "onFailure",
	"onFailureMode", "priority", "requireTags", "concurrencyKey",
	"maxConcurrentPerKey"
};

static int
decode_member(struct job *j, struct job_seen *seen, const char *k,
    json_t *v, struct task_error *err)
{
	static const char *const dialects[] = { "vixie", "quartz" };
	const char *s = NULL;
	int64_t n;
	int e;

	if (strcmp(k, "jobCode") == 0)
		return task_json_name(v, k, TASK_CODE_MAX, j->code, err);
	if (strcmp(k, "taskCode") == 0)
		return task_json_name(v, k, TASK_CODE_MAX, j->task_code, err);
	if (strcmp(k, "cron") == 0 || strcmp(k, "calendar") == 0) {
		if (seen->cron != NULL)
			return fail(err, k, "not allowed with %s: give exactly "
			    "one of cron, calendar, fixedRateMs, fixedDelayMs",
			    seen->calendar ? "calendar" : "cron");
		if (jsonfield_string(v, k, CRON_TEXT_MAX, &seen->cron,
		    err) != 0)
			return -1;
		seen->calendar = k[1] == 'a';
		seen->kinds |= 1 << JOB_KIND_CRON;
		return 0;
	}
	if (strcmp(k, "fixedRateMs") == 0 || strcmp(k, "fixedDelayMs") == 0) {
		if (jsonfield_int(v, k, 1, JOB_INTERVAL_MAX_MS, &j->interval_ms,
		    err) != 0)
			return -1;
		seen->kinds |= 1 << (k[5] == 'R' ? JOB_KIND_FIXED_RATE :
		    JOB_KIND_FIXED_DELAY);
		return 0;
	}
	if (strcmp(k, "dialect") == 0) {
		if (json_is_string(v) && strcmp(json_string_value(v),
		    "systemd") == 0)
			return fail(err, k, "systemd calendar events go in "
			    "\"calendar\", which needs no dialect");
		if (get_enum(v, k, dialects, NELEM(dialects), &e, err) != 0)
			return -1;
		j->dialect = e == 0 ? CRON_DIALECT_VIXIE : CRON_DIALECT_QUARTZ;
		j->dialect_given = 1;
		return 0;
	}
	if (strcmp(k, "timezone") == 0) {
		if (jsonfield_string(v, k, TZ_NAME_MAX, &s, err) != 0)
			return -1;
		if (!tz_name_ok(s))
			return fail(err, k, "must be an IANA time zone name "
			    "such as Europe/Riga or UTC");
		memcpy(j->timezone, s, strlen(s) + 1);
		return 0;
	}
	if (strcmp(k, "executeParams") == 0)
		return 0;	/* cut from the raw bytes after the loop */
	if (strcmp(k, "route") == 0) {
		if (jsonfield_string(v, k, TASK_CODE_MAX + 5, &s, err) != 0)
			return -1;
		if (!task_route_ok(s))
			return fail(err, k, "must be any, round_robin, "
			    "least_active, consistent_hash, broadcast, "
			    "node:<id> or tag:<tag>");
		if ((j->route = strdup(s)) == NULL)
			return fail(err, k, "out of memory");
		return 0;
	}
	if (strcmp(k, "requireTags") == 0)
		return tags_json_decode(v, k, &j->require_tags, err);
	if (strcmp(k, "concurrencyKey") == 0) {
		if (jsonfield_dup(v, k, CONCKEY_TEMPLATE_MAX,
		    &j->conc_key_tmpl, err) != 0)
			return -1;
		return conckey_template_check(j->conc_key_tmpl, k, err);
	}
	if (strcmp(k, "maxConcurrentPerKey") == 0) {
		if (jsonfield_int(v, k, 1, CONCKEY_LIMIT_MAX, &n, err) != 0)
			return -1;
		j->max_per_key = (int)n;
		return 0;
	}
	if (strcmp(k, "maxRetries") == 0) {
		if (jsonfield_int(v, k, 0, 100, &n, err) != 0)
			return -1;
		j->max_retries = (int)n;
		return 0;
	}
	if (strcmp(k, "priority") == 0) {
		if (jsonfield_int(v, k, PRIORITY_MIN, PRIORITY_MAX, &n,
		    err) != 0)
			return -1;
		j->priority = (int)n;
		return 0;
	}
	if (strcmp(k, "timeoutSec") == 0) {
		if (jsonfield_int(v, k, 1, 604800, &n, err) != 0)
			return -1;
		j->timeout_sec = (int)n;
		return 0;
	}
	if (strcmp(k, "misfire") == 0) {
		if (get_enum(v, k, misfire_names, NELEM(misfire_names), &e,
		    err) != 0)
			return -1;
		j->misfire = (enum job_misfire)e;
		return 0;
	}
	if (strcmp(k, "misfireCap") == 0) {
		if (jsonfield_int(v, k, 1, JOB_MISFIRE_CAP_MAX, &n, err) != 0)
			return -1;
		j->misfire_cap = (int)n;
		seen->misfire_cap_given = 1;
		return 0;
	}
	if (strcmp(k, "overlap") == 0) {
		if (get_enum(v, k, overlap_names, NELEM(overlap_names), &e,
		    err) != 0)
			return -1;
		j->overlap = (enum job_overlap)e;
		return 0;
	}
	if (strcmp(k, "enabled") == 0) {
		if (!json_is_boolean(v))
			return fail(err, k, "must be true or false");
		j->enabled = json_is_true(v);
		return 0;
	}
	if (strcmp(k, "startAt") == 0)
		return get_time(v, k, &j->start_ms, err);
	if (strcmp(k, "endAt") == 0)
		return get_time(v, k, &j->end_ms, err);
	if (strcmp(k, "createdAt") == 0)
		return get_time(v, k, &j->created_ms, err);
	if (strcmp(k, "onFailure") == 0)
		return task_json_name(v, k, TASK_CODE_MAX, j->on_failure, err);
	if (strcmp(k, "onFailureMode") == 0)
		return task_json_alert_mode(v, k, &j->on_failure_mode, err);
	if (strcmp(k, "jitterMs") == 0)
		return jsonfield_int(v, k, 0, JOB_JITTER_MAX_MS, &j->jitter_ms,
		    err);
	{
		const char *near = suggest_name(k, job_members,
		    NELEM(job_members));

		if (near != NULL)
			return fail(err, k, "unknown member (did you mean "
			    "\"%s\"? see the job file format)", near);
	}
	return fail(err, k, "unknown member (see the job file format)");
}

/*
 * "calendar": a systemd calendar event (cron.h, dialect systemd).  A zone
 * at its end ("... Europe/Berlin") is the job's zone; with "timezone" as
 * well, both must name the same one.
 */
static int
decode_calendar(struct job *j, const struct job_seen *seen,
    struct task_error *err)
{
	char why[CRON_WHY_MAX];
	const char *zone;
	enum cron_dialect g;


	j->dialect = CRON_DIALECT_SYSTEMD;
	j->cron = cron_parse(seen->cron, j->dialect, why, sizeof(why));
	if (j->cron == NULL && errno != ENOMEM &&
	    cron_dialect_guess(seen->cron, &g) == 0 &&
	    g != CRON_DIALECT_SYSTEMD)
		return fail(err, "calendar", "\"%.40s\" is a %s cron "
		    "expression, not a calendar event: give it as \"cron\"",
		    seen->cron, cron_dialect_name(g));
	if (j->cron == NULL)
		return fail(err, "calendar", "%s", errno == ENOMEM ?
		    "out of memory" : why);
	if ((zone = cron_zone(j->cron)) != NULL) {
		if (j->timezone[0] != '\0' && !tz_names_same(j->timezone,
		    zone))
			return fail(err, "calendar", "names zone %s but "
			    "\"timezone\" is %s: give one of them", zone,
			    j->timezone);
		if (j->timezone[0] == '\0') {
			memcpy(j->timezone, zone, strlen(zone) + 1);
			j->timezone_from_calendar = 1;
		}
	}
	if ((j->cron_text = strdup(seen->cron)) == NULL)
		return fail(err, "calendar", "out of memory");
	return 0;
}

/* Checks that need every member: presence, exclusivity, pairs. */
static int
decode_finish(struct job *j, const struct job_seen *seen,
    struct task_error *err)
{
	char why[CRON_WHY_MAX];
	int first = -1;

	if (j->code[0] == '\0')
		return fail(err, "jobCode", "required member missing");
	if (j->task_code[0] == '\0')
		return fail(err, "taskCode", "required member missing");
	for (int k = 0; k < (int)NELEM(kind_members); k++) {
		if (!(seen->kinds & (1 << k)))
			continue;
		if (first >= 0)
			return fail(err, kind_members[k], "not allowed with "
			    "%s: give exactly one of cron, calendar, "
			    "fixedRateMs, fixedDelayMs", first ==
			    JOB_KIND_CRON && seen->calendar ? "calendar" :
			    kind_members[first]);
		first = k;
	}
	if (first < 0)
		return fail(err, "cron", "required: give exactly one of cron, "
		    "calendar, fixedRateMs, fixedDelayMs");
	j->kind = (enum job_kind)first;
	if (j->dialect_given && (j->kind != JOB_KIND_CRON || seen->calendar))
		return fail(err, "dialect", "only allowed with cron");
	if (seen->misfire_cap_given && j->misfire != JOB_MISFIRE_FIRE_ALL)
		return fail(err, "misfireCap", "only allowed with misfire "
		    "\"fire_all\"");
	if (j->start_ms >= 0 && j->end_ms >= 0 && j->start_ms > j->end_ms)
		return fail(err, "startAt", "must not be after endAt");
	if (j->kind != JOB_KIND_CRON)
		return 0;
	if (seen->calendar)
		return decode_calendar(j, seen, err);
	/* As the CLI does: no dialect and an odd field count -> vixie,
	 * whose message names the count. */
	if (!j->dialect_given &&
	    cron_dialect_guess(seen->cron, &j->dialect) != 0)
		j->dialect = CRON_DIALECT_VIXIE;
	if (j->dialect == CRON_DIALECT_SYSTEMD)
		return fail(err, "cron", "\"%.40s\" is a systemd calendar "
		    "event: give it as \"calendar\"", seen->cron);
	j->cron = cron_parse(seen->cron, j->dialect, why, sizeof(why));
	if (j->cron == NULL)
		return fail(err, "cron", "%s", errno == ENOMEM ?
		    "out of memory" : why);
	if ((j->cron_text = strdup(seen->cron)) == NULL)
		return fail(err, "cron", "out of memory");
	return 0;
}

/*
 * Make the task of one fire and run it through the task codec: a job
 * whose tasks task_decode() would refuse (executeParams nested too deep,
 * a task file over the size cap) is refused itself, with the task's
 * (field, rule).
 */
static int
check_task(const struct job *j, struct task_error *err)
{
	struct task t, back;
	struct buf b;
	int rc = 0;

	task_init(&t);
	task_init(&back);
	buf_init(&b, 0);
	if (job_make_task(j, j->start_ms >= 0 ? j->start_ms : 0, &t) != 0 ||
	    task_encode(&t, &b) != 0)
		rc = fail(err, "executeParams", "out of memory");
	else if (task_decode(b.data, b.len, &back, err) != 0) {
		if (strcmp(err->field, "file") == 0)
			(void)fail(err, "executeParams", "too large: a task "
			    "file may hold at most %d bytes", TASK_FILE_MAX);
		rc = -1;
	}
	buf_fini(&b);
	task_fini(&t);
	task_fini(&back);
	return rc;
}

int
job_decode(const char *data, size_t len, struct job *j,
    struct task_error *err)
{
	struct job_seen seen;
	json_error_t jerr;
	json_t *root, *v;
	const char *k;

	job_fini(j);
	memset(&seen, 0, sizeof(seen));
	if (len > JOB_FILE_MAX)
		return fail(err, "file", "larger than %d bytes", JOB_FILE_MAX);
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		return fail(err, "json", "starts with a UTF-8 byte order mark "
		    "(not allowed)");
	if (len == 0)
		return fail(err, "json", "empty file");
	root = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return fail(err, "json", "invalid JSON at line %d column %d: "
		    "%s", jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(err, "json", "top level must be an object");
	}
	json_object_foreach(root, k, v)
		if (decode_member(j, &seen, k, v, err) != 0)
			goto bad;
	if (decode_finish(j, &seen, err) != 0 ||
	    tags_route_fold(&j->route, &j->require_tags, err) != 0)
		goto bad;
	if (task_copy_params(data, len, json_object_get(root,
	    "executeParams") != NULL, &j->params, &j->params_len, err) != 0)
		goto bad;
	json_decref(root);
	root = NULL;
	if (check_task(j, err) != 0)
		goto bad;
	return 0;
bad:
	json_decref(root);
	job_fini(j);
	return -1;
}

/* --- encoding --- */

int
job_encode(const struct job *j, struct buf *out)
{
	json_t *o = json_object();
	char *s;
	size_t n, mark = out->len;
	int bad = 0;

	if (o == NULL) {
		errno = ENOMEM;
		return -1;
	}
	bad |= json_object_set_new(o, "jobCode", json_string(j->code));
	bad |= json_object_set_new(o, "taskCode", json_string(j->task_code));
	if (j->kind == JOB_KIND_CRON)
		bad |= json_object_set_new(o, job_expr_member(j),
		    json_string(j->cron_text != NULL ? j->cron_text : ""));
	else
		bad |= json_object_set_new(o, job_kind_member(j->kind),
		    json_integer(j->interval_ms));
	if (j->kind == JOB_KIND_CRON && j->dialect_given)
		bad |= json_object_set_new(o, "dialect", json_string(
		    j->dialect == CRON_DIALECT_QUARTZ ? "quartz" : "vixie"));
	if (j->timezone[0] != '\0' && !j->timezone_from_calendar)
		bad |= json_object_set_new(o, "timezone",
		    json_string(j->timezone));
	if (j->start_ms >= 0)
		bad |= jsonfield_put_time(o, "startAt", j->start_ms);
	if (j->end_ms >= 0)
		bad |= jsonfield_put_time(o, "endAt", j->end_ms);
	bad |= json_object_set_new(o, "enabled", json_boolean(j->enabled));
	bad |= json_object_set_new(o, "misfire",
	    json_string(job_misfire_name(j->misfire)));
	if (j->misfire == JOB_MISFIRE_FIRE_ALL)
		bad |= json_object_set_new(o, "misfireCap",
		    json_integer(j->misfire_cap));
	bad |= json_object_set_new(o, "overlap",
	    json_string(job_overlap_name(j->overlap)));
	if (j->jitter_ms > 0)
		bad |= json_object_set_new(o, "jitterMs",
		    json_integer(j->jitter_ms));
	if (j->route != NULL)
		bad |= json_object_set_new(o, "route", json_string(j->route));
	if (j->require_tags != NULL)
		bad |= json_object_set_new(o, "requireTags",
		    tags_json(j->require_tags));
	if (j->conc_key_tmpl != NULL)
		bad |= json_object_set_new(o, "concurrencyKey",
		    json_string(j->conc_key_tmpl));
	if (j->max_per_key >= 0)
		bad |= json_object_set_new(o, "maxConcurrentPerKey",
		    json_integer(j->max_per_key));
	if (j->max_retries >= 0)
		bad |= json_object_set_new(o, "maxRetries",
		    json_integer(j->max_retries));
	if (j->timeout_sec >= 0)
		bad |= json_object_set_new(o, "timeoutSec",
		    json_integer(j->timeout_sec));
	if (j->priority >= 0)
		bad |= json_object_set_new(o, "priority",
		    json_integer(j->priority));
	if (j->on_failure[0] != '\0')
		bad |= json_object_set_new(o, "onFailure",
		    json_string(j->on_failure));
	if (j->on_failure_mode >= 0)
		bad |= json_object_set_new(o, "onFailureMode", json_string(
		    j->on_failure_mode == ALERT_MODE_TRANSITION ?
		    "transition" : "every"));
	if (j->created_ms >= 0)
		bad |= jsonfield_put_time(o, "createdAt", j->created_ms);
	s = bad ? NULL : json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* Splice executeParams before the closing brace, byte for byte. */
	n = strlen(s);
	if (buf_append(out, s, n - 1) != 0 ||
	    buf_puts(out, ",\"executeParams\":") != 0 ||
	    buf_append(out, j->params != NULL ? j->params : "{}",
	    j->params != NULL ? j->params_len : 2) != 0 ||
	    buf_puts(out, "}\n") != 0) {
		int e = errno;

		free(s);
		out->len = mark;	/* leave out as it was */
		if (out->data != NULL)
			out->data[mark] = '\0';
		errno = e;
		return -1;
	}
	free(s);
	return 0;
}

/* --- the round-trip property --- */

const char *
job_diff(const struct job *a, const struct job *b)
{
	if (strcmp(a->code, b->code) != 0)
		return "jobCode";
	if (strcmp(a->task_code, b->task_code) != 0)
		return "taskCode";
	if (a->kind != b->kind)
		return job_kind_member(a->kind);
	if (task_str_differs(a->cron_text, b->cron_text) ||
	    (a->cron == NULL) != (b->cron == NULL))
		return "cron";
	if (a->dialect != b->dialect || a->dialect_given != b->dialect_given)
		return "dialect";
	if (a->interval_ms != b->interval_ms)
		return job_kind_member(a->kind);
	if (strcmp(a->timezone, b->timezone) != 0)
		return "timezone";
	if (a->params_len != b->params_len || (a->params_len > 0 &&
	    memcmp(a->params, b->params, a->params_len) != 0))
		return "executeParams";
	if (task_str_differs(a->route, b->route))
		return "route";
	if (task_str_differs(a->require_tags, b->require_tags))
		return "requireTags";
	if (task_str_differs(a->conc_key_tmpl, b->conc_key_tmpl))
		return "concurrencyKey";
	if (a->max_per_key != b->max_per_key)
		return "maxConcurrentPerKey";
	if (a->max_retries != b->max_retries)
		return "maxRetries";
	if (a->timeout_sec != b->timeout_sec)
		return "timeoutSec";
	if (a->priority != b->priority)
		return "priority";
	if (strcmp(a->on_failure, b->on_failure) != 0)
		return "onFailure";
	if (a->on_failure_mode != b->on_failure_mode)
		return "onFailureMode";
	if (a->misfire != b->misfire)
		return "misfire";
	if (a->misfire_cap != b->misfire_cap)
		return "misfireCap";
	if (a->overlap != b->overlap)
		return "overlap";
	if (a->enabled != b->enabled)
		return "enabled";
	if (a->start_ms != b->start_ms)
		return "startAt";
	if (a->end_ms != b->end_ms)
		return "endAt";
	if (a->jitter_ms != b->jitter_ms)
		return "jitterMs";
	if (a->created_ms != b->created_ms)
		return "createdAt";
	return NULL;
}

int
job_roundtrip(const char *data, size_t len, struct task_error *err)
{
	struct job a, b;
	struct buf out;
	const char *d;
	int rc = -1;

	job_init(&a);
	job_init(&b);
	buf_init(&out, 0);
	if (job_decode(data, len, &a, err) != 0)
		return 1;
	if (job_encode(&a, &out) != 0)
		fail(err, "encode", "out of memory");
	else if (job_decode(out.data, out.len, &b, err) != 0) {
		struct task_error e = *err;

		fail(err, e.field, "the encoder wrote what the decoder "
		    "refuses: %.200s", e.rule);
	} else if ((d = job_diff(&a, &b)) != NULL)
		fail(err, d, "differs after decode, encode, decode");
	else
		rc = 0;
	job_fini(&a);
	job_fini(&b);
	buf_fini(&out);
	return rc;
}

/* --- schedules --- */

static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Anchor of a fixed-rate job: startAt, else createdAt, else the epoch. */
static int64_t
rate_anchor(const struct job *j)
{
	if (j->start_ms >= 0)
		return j->start_ms;
	return j->created_ms >= 0 ? j->created_ms : 0;
}

int
job_next_fire(const struct job *j, const struct tz *z, int64_t after_ms,
    int64_t last_end_ms, int64_t *next_ms)
{
	int64_t t, s, lo = after_ms, a;

	/* Out of range: no fire, and no overflow in the sums below. */
	if (after_ms >= JOB_TIME_MAX_MS || last_end_ms > JOB_TIME_MAX_MS)
		return 0;
	/* Fires before startAt do not exist: search from just before it. */
	if (j->start_ms >= 0 && lo < j->start_ms - 1)
		lo = j->start_ms - 1;
	switch (j->kind) {
	case JOB_KIND_CRON:
		if (j->cron == NULL || z == NULL)
			return 0;
		/* A whole second is after lo iff it is after floor(lo s). */
		s = floor_div(lo, 1000);
		if (s < TZ_EPOCH_MIN)
			s = TZ_EPOCH_MIN;
		if (cron_next_fire(j->cron, z, s, &s) != 1)
			return 0;
		t = s * 1000;
		break;
	case JOB_KIND_FIXED_RATE:
		a = rate_anchor(j);
		t = lo < a ? a : a + (floor_div(lo - a, j->interval_ms) + 1) *
		    j->interval_ms;
		break;
	case JOB_KIND_FIXED_DELAY:
		if (last_end_ms >= 0)
			t = last_end_ms + j->interval_ms;
		else if (j->start_ms >= 0)
			t = j->start_ms;
		else if (j->created_ms >= 0)
			t = j->created_ms + j->interval_ms;
		else
			t = after_ms + j->interval_ms;
		if (t <= after_ms)	/* overdue: the chain restarts */
			t = after_ms + j->interval_ms;
		if (j->start_ms >= 0 && t < j->start_ms)
			t = j->start_ms;
		break;
	default:
		return 0;
	}
	if ((j->end_ms >= 0 && t > j->end_ms) || t > JOB_TIME_MAX_MS)
		return 0;
	*next_ms = t;
	return 1;
}

/*
 * The latest scheduled instant in (lo, hi], given that the first one
 * after lo, `first`, is <= hi.  next(a) = the first fire after a is
 * non-decreasing in a, so bisect for the smallest a with next(a) > hi:
 * then next(a - 1) == a is the answer.  ~log2(hi - lo) calls, whatever
 * the number of instants in between.
 */
static int64_t
latest_due(const struct job *j, const struct tz *z, int64_t lo, int64_t hi,
    int64_t first)
{
	int64_t mid, t, best = first;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (job_next_fire(j, z, mid, -1, &t) == 1 && t <= hi) {
			lo = mid;
			best = t;
		} else
			hi = mid;
	}
	return best;
}

static size_t
delay_plan(const struct job *j, int64_t last_fire_ms, int64_t last_end_ms,
    int64_t now_ms, int64_t threshold_ms, int64_t *out, size_t max,
    struct job_plan *p)
{
	int64_t due;

	/* Nothing fired: the settled point stays (the next due time is
	 * counted from it, so it must not creep forward with now). */
	p->settled_ms = last_fire_ms;
	/* The pending instant: one delay after the later of the last end
	 * and the last settled point; or the first-fire rule. */
	if (last_end_ms >= 0 || last_fire_ms >= 0)
		due = (last_end_ms > last_fire_ms ? last_end_ms :
		    last_fire_ms) + j->interval_ms;
	else if (j->start_ms >= 0)
		due = j->start_ms;
	else if (j->created_ms >= 0)
		due = j->created_ms + j->interval_ms;
	else
		due = now_ms + j->interval_ms;
	if (j->start_ms >= 0 && due < j->start_ms)
		due = j->start_ms;
	if ((j->end_ms >= 0 && due > j->end_ms) || due > JOB_TIME_MAX_MS) {
		p->next_ms = JOB_NEXT_NONE;
		return 0;
	}
	if (due > now_ms) {
		p->next_ms = due;
		return 0;
	}
	if (max == 0) {
		p->settled_ms = last_fire_ms;
		p->next_ms = due;
		return 0;
	}
	if (now_ms - due > threshold_ms) {
		p->misfired = 1;
		if (j->misfire == JOB_MISFIRE_SKIP) {
			p->dropped = 1;
			p->settled_ms = now_ms;
			due = now_ms + j->interval_ms;
			if (j->start_ms >= 0 && due < j->start_ms)
				due = j->start_ms;
			p->next_ms = (j->end_ms >= 0 && due > j->end_ms) ||
			    due > JOB_TIME_MAX_MS ? JOB_NEXT_NONE : due;
			return 0;
		}
	}
	out[0] = due;
	p->settled_ms = due;
	p->next_ms = JOB_NEXT_AFTER_END;
	return 1;
}

size_t
job_misfire_plan(const struct job *j, const struct tz *z,
    int64_t last_fire_ms, int64_t last_end_ms, int64_t now_ms,
    int64_t threshold_ms, int64_t *out, size_t max, struct job_plan *plan)
{
	struct job_plan scratch, *p = plan != NULL ? plan : &scratch;
	int64_t lower, first, t;
	size_t n = 0, cap;
	int more;

	if (threshold_ms < 0)
		threshold_ms = 0;
	p->misfired = p->dropped = 0;
	/* Never move the settled point back (a wall clock stepped back). */
	p->settled_ms = last_fire_ms > now_ms ? last_fire_ms : now_ms;
	p->next_ms = JOB_NEXT_NONE;
	/* Out of range: nothing is due, and no overflow in the sums. */
	if (now_ms < 0 || now_ms > JOB_TIME_MAX_MS ||
	    last_fire_ms > JOB_TIME_MAX_MS || last_end_ms > JOB_TIME_MAX_MS)
		return 0;
	if (j->kind == JOB_KIND_FIXED_DELAY)
		return delay_plan(j, last_fire_ms, last_end_ms, now_ms,
		    threshold_ms, out, max, p);

	/* The window of due instants is (lower, now_ms]. */
	if (last_fire_ms >= 0)
		lower = last_fire_ms;
	else if (j->created_ms >= 0)
		lower = (j->start_ms > j->created_ms ? j->start_ms :
		    j->created_ms) - 1;
	else
		lower = now_ms;	/* nothing of a job's past is "missed" */
	if (lower >= now_ms || job_next_fire(j, z, lower, -1, &first) != 1 ||
	    first > now_ms) {
		if (job_next_fire(j, z, p->settled_ms, -1, &t) == 1)
			p->next_ms = t;
		return 0;
	}
	if (max == 0) {
		p->settled_ms = last_fire_ms;
		p->next_ms = first;
		return 0;
	}

	if (now_ms - first <= threshold_ms) {
		/* On time (or late within the threshold): fire them all. */
		t = first;
		more = 1;
		while (n < max && more && t <= now_ms) {
			out[n++] = t;
			more = job_next_fire(j, z, t, -1, &t) == 1;
		}
		if (more && t <= now_ms) {
			p->settled_ms = out[n - 1];	/* max cut it short */
			p->next_ms = t;
		} else
			p->next_ms = more ? t : JOB_NEXT_NONE;
		return n;
	}

	p->misfired = 1;
	switch (j->misfire) {
	case JOB_MISFIRE_SKIP:
		p->dropped = 1;
		break;
	case JOB_MISFIRE_FIRE_ONCE:
		out[n++] = latest_due(j, z, lower, now_ms, first);
		p->dropped = out[0] != first;
		break;
	case JOB_MISFIRE_FIRE_ALL:
		cap = (size_t)j->misfire_cap < max ? (size_t)j->misfire_cap :
		    max;
		t = first;
		more = 1;
		while (n < cap && more && t <= now_ms) {
			out[n++] = t;
			more = job_next_fire(j, z, t, -1, &t) == 1;
		}
		p->dropped = more && t <= now_ms;
		break;
	}
	if (job_next_fire(j, z, p->settled_ms, -1, &t) == 1)
		p->next_ms = t;
	return n;
}

/* --- tasks --- */

int
job_fire_id(const char *id)
{
	size_t n = strlen(id), k;
	const char *p;

	/* "." 8 digits "T" 6 digits [3 digits] "Z": 17 or 20 bytes. */
	for (k = 17; k <= 20; k += 3) {
		char code[TASK_CODE_MAX + 1];

		if (n <= k || n - k > TASK_CODE_MAX)
			continue;
		p = id + n - k;
		if (p[0] != '.' || strspn(p + 1, "0123456789") != 8 ||
		    p[9] != 'T' || strspn(p + 10, "0123456789") != k - 11 ||
		    p[k - 1] != 'Z')
			continue;
		memcpy(code, id, n - k);
		code[n - k] = '\0';
		if (task_name_ok(code, TASK_CODE_MAX))
			return 1;
	}
	return 0;
}

int
job_task_id(const char *job_code, int64_t t_ms, char *out, size_t len)
{
	int64_t s, days, y;
	int sod, mo, d, ms, n;

	if (len > 0)
		out[0] = '\0';
	if (job_code == NULL || !task_name_ok(job_code, TASK_CODE_MAX)) {
		errno = EINVAL;
		return -1;
	}
	if (t_ms < 0 || t_ms > JOB_TIME_MAX_MS) {
		errno = ERANGE;
		return -1;
	}
	s = t_ms / 1000;
	ms = (int)(t_ms % 1000);
	days = s / 86400;
	sod = (int)(s % 86400);
	tz_civil_from_days(days, &y, &mo, &d);
	if (ms != 0)
		n = snprintf(out, len, "%s.%04lld%02d%02dT%02d%02d%02d%03dZ",
		    job_code, (long long)y, mo, d, sod / 3600,
		    sod / 60 % 60, sod % 60, ms);
	else
		n = snprintf(out, len, "%s.%04lld%02d%02dT%02d%02d%02dZ",
		    job_code, (long long)y, mo, d, sod / 3600,
		    sod / 60 % 60, sod % 60);
	if (n < 0 || (size_t)n >= len) {
		if (len > 0)
			out[0] = '\0';
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

int
job_make_task(const struct job *j, int64_t t_ms, struct task *out)
{
	const char *params = j->params != NULL ? j->params : "{}";
	size_t plen = j->params != NULL ? j->params_len : 2;
	int e;

	task_fini(out);
	if (job_task_id(j->code, t_ms, out->request_id,
	    sizeof(out->request_id)) != 0)
		return -1;
	memcpy(out->task_code, j->task_code, sizeof(out->task_code));
	out->trigger = TASK_TRIGGER_NOW;
	out->max_retries = j->max_retries;
	out->timeout_sec = j->timeout_sec;
	out->priority = j->priority;
	out->trigger_ms = t_ms;
	memcpy(out->on_failure, j->on_failure, sizeof(out->on_failure));
	out->on_failure_mode = j->on_failure_mode;
	if ((out->params = malloc(plen + 1)) == NULL)
		goto nomem;
	memcpy(out->params, params, plen);
	out->params[plen] = '\0';
	out->params_len = plen;
	if (j->route != NULL && (out->route = strdup(j->route)) == NULL)
		goto nomem;
	if (j->require_tags != NULL && (out->require_tags =
	    strdup(j->require_tags)) == NULL)
		goto nomem;
	if (j->conc_key_tmpl != NULL && (out->conc_key_tmpl =
	    strdup(j->conc_key_tmpl)) == NULL)
		goto nomem;
	out->max_per_key = j->max_per_key;
	if ((out->job_code = strdup(j->code)) == NULL)
		goto nomem;
	return 0;
nomem:
	e = errno;
	task_fini(out);
	errno = e;
	return -1;
}
