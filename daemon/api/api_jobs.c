/*
 * api_jobs.c — /jobs: recurring jobs over HTTP, as `taskspool jobs` does
 * them (coord/jobstore.h): list, create, read, replace, delete, run now,
 * enable and disable.
 *
 * Owns the endpoints' scoping and answers.  The definition is a job file
 * (core/job.h) byte for byte: the body is decoded by job_decode(), the
 * codec the leader reads jobs/ with, so what the API accepts the leader
 * fires and what it refuses is refused with the same field and rule.
 *
 * Invariants: an app sees and manages only jobs whose taskCode it is
 * granted (apps.conf), and writes only definitions whose taskCode and
 * onFailure it is granted; a job it may not see is answered as none
 * (404 JOB_NOT_FOUND), except that a create cannot take its name (409
 * JOB_EXISTS: the names are one namespace).  A definition that does not
 * decode has no known owner: only an app granted "*" sees, replaces or
 * deletes it.  Every change is decided under the jobs/ lock on the
 * definition really replaced (a guard).  A run made here is the caller's
 * task: it gets an idempotency record and the appId, so GET
 * /tasks/{id} and its logs work for it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_impl.h"
#include "coord/jobrun.h"
#include "coord/jobstore.h"
#include "core/job.h"
#include "core/jsontext.h"
#include "core/tz.h"
#include "spool/clock.h"
#include "spool/tzload.h"

#define JOBSAPI_FIRES		5	/* next fires in a job's view */
#define JOBSAPI_LIMIT_DEFAULT	100	/* jobs in one list page */
#define JOBSAPI_LIMIT_MAX	1000

/* The caller's rights, for the guards (called under the jobs/ lock). */
struct scope {
	const struct app *app;
	int any;		/* granted "*": may touch undecodable files */
};

/* Whether the caller may see or manage job j (its taskCode granted). */
static int
may_manage(const struct scope *s, const struct job *j)
{
	return apps_code_allowed(s->app, j->task_code);
}

/* A guard of jobstore.h: the definition in place is the caller's, or
 * there is none. */
static int
guard_own(const struct job *old, int old_bad, void *arg)
{
	const struct scope *s = arg;

	if (old_bad)
		return s->any ? 0 : EPERM;
	return old == NULL || may_manage(s, old) ? 0 : EPERM;
}

/* A guard for a change of an existing job: as guard_own, and there is
 * one (a missing file is ENOENT, reported as such). */
static int
guard_existing(const struct job *old, int old_bad, void *arg)
{
	if (old == NULL && !old_bad)
		return ENOENT;
	return guard_own(old, old_bad, arg);
}

static int
job_not_found(struct api_ctx *c, struct buf *out, const char *code)
{
	return api_problem(c, out, 404, "JOB_NOT_FOUND", api_one_member(
	    "jobCode", json_string(code)), "no job %s of a task code granted "
	    "to AppId %s", code, c->app_id);
}

json_t *
api_job_fires(const struct job *j, int n, char *zone, size_t zlen)
{
	char local[TZ_RFC3339_MS_MAX], utc[TZ_RFC3339_MS_MAX], why[400];
	struct tz *z, *zu = tz_new_utc("UTC");
	json_t *fires = json_array();
	int64_t t = tstime_now_ms();

	if (zlen > 0)
		zone[0] = '\0';
	if (fires == NULL || zu == NULL) {
		json_decref(fires);
		tz_free(zu);
		return NULL;
	}
	z = j->timezone[0] != '\0' ? tz_load(j->timezone, why,
	    sizeof(why)) : tz_load_host(why, sizeof(why));
	if (z != NULL && zlen > 0)
		snprintf(zone, zlen, "%s", tz_name(z));
	/* The leader fires only after createdAt (a job made for later). */
	if (j->created_ms > t)
		t = j->created_ms;
	for (int i = 0; z != NULL && j->enabled && j->kind !=
	    JOB_KIND_FIXED_DELAY && i < n; i++) {
		if (job_next_fire(j, z, t, -1, &t) != 1 ||
		    tz_format_rfc3339_ms(z, t, local, sizeof(local)) != 0 ||
		    tz_format_rfc3339_ms(zu, t, utc, sizeof(utc)) != 0)
			break;
		json_array_append_new(fires, json_pack("{s:s,s:s}", "local",
		    local, "utc", utc));
	}
	tz_free(z);
	tz_free(zu);
	return fires;
}

/*
 * The view of job j: {"jobCode", "valid": true, "definition" (the file
 * as stored, an object), "timezone" (the zone it fires in), "hostZone",
 * "enabled", "nextFires": [{"local", "utc"}] (nfires, none when
 * disabled or for a fixed-delay job, whose next fire waits for its run),
 * "lastTaskId", "currentRun" (from runsfd, jobrun_open()'s; -1: null)}.
 * A new object, or NULL (ENOMEM).
 */
static json_t *
job_view(struct api_ctx *c, const struct job *j, int nfires, int runsfd)
{
	char last[TASK_ID_MAX + 1] = "", run[TASK_ID_MAX + 1] = "";
	char zone[TZ_NAME_MAX + 1];
	json_t *o = json_object(), *def, *fires;
	struct buf b;

	buf_init(&b, JOB_FILE_MAX);
	def = job_encode(j, &b) == 0 ? jsontext_loadb(b.data, b.len, 0,
	    NULL) : NULL;
	buf_fini(&b);
	fires = api_job_fires(j, nfires, zone, sizeof(zone));
	if (o == NULL || def == NULL || fires == NULL) {
		json_decref(o);
		json_decref(def);
		json_decref(fires);
		return NULL;
	}
	(void)jobstore_last_task(&c->sp, j->code, last, sizeof(last));
	if (runsfd >= 0)
		(void)jobrun_read(runsfd, j->code, run, sizeof(run));
	json_object_set_new(o, "jobCode", json_string(j->code));
	json_object_set_new(o, "valid", json_true());
	json_object_set_new(o, "definition", def);
	json_object_set_new(o, "timezone", zone[0] != '\0' ?
	    json_string(zone) : json_null());
	json_object_set_new(o, "hostZone", json_boolean(j->timezone[0] ==
	    '\0'));
	json_object_set_new(o, "enabled", json_boolean(j->enabled));
	json_object_set_new(o, "nextFires", fires);
	json_object_set_new(o, "lastTaskId", last[0] != '\0' ?
	    json_string(last) : json_null());
	json_object_set_new(o, "currentRun", run[0] != '\0' &&
	    spool_id_ok(run) ? json_string(run) : json_null());
	return o;
}

/* job_view() with the run markers' directory opened for it. */
static json_t *
job_view1(struct api_ctx *c, const struct job *j, int nfires)
{
	int dfd = jobrun_open(&c->sp);
	json_t *v = job_view(c, j, nfires, dfd);

	if (dfd >= 0)
		(void)close(dfd);
	return v;
}

/* The view of an undecodable definition (why names the field). */
static json_t *
bad_view(const char *code, char *why)
{
	/* The reason quotes the file and may be cut inside a UTF-8
	 * character: printable ASCII only. */
	for (char *p = why; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	return json_pack("{s:s,s:b,s:s}", "jobCode", code, "valid", 0,
	    "error", why);
}

/* --- GET /jobs ------------------------------------------------------- */

static int
jobs_list(struct api_ctx *c, struct buf *out, const struct scope *s)
{
	char limit[16] = "", after[TASK_CODE_MAX + 2] = "";
	char why[JOBSTORE_WHY_MAX], *end;
	const struct api_param p[] = {
		{ "limit", limit, sizeof limit },
		{ "after", after, sizeof after },
	};
	unsigned seen = 0;
	json_t *arr, *o;
	char **names;
	ssize_t n, i;
	long lim = JOBSAPI_LIMIT_DEFAULT, k = 0;
	int rc, runsfd;

	if ((rc = api_query_read(c, out, p, 2, &seen)) != 0)
		return rc;
	if (seen & 1) {
		errno = 0;
		lim = strtol(limit, &end, 10);
		if (errno != 0 || end == limit || *end != '\0' || lim < 1 ||
		    lim > JOBSAPI_LIMIT_MAX)
			return api_query_invalid(c, out, "limit", "must be an "
			    "integer from 1 to 1000");
	}
	if ((seen & 2) && !spool_code_ok(after))
		return api_query_invalid(c, out, "after", "must be a jobCode "
		    "([A-Za-z0-9][A-Za-z0-9_.-]{0,63})");
	if ((n = jobstore_names(&c->sp, &names, NULL)) < 0)
		return api_unavailable(c, out, "jobs/");
	if ((arr = json_array()) == NULL) {
		jobstore_names_free(names, (size_t)n);
		return api_unavailable(c, out, "memory");
	}
	runsfd = jobrun_open(&c->sp);
	for (i = 0; i < n && k < lim; i++) {
		struct job j;

		if ((seen & 2) && strcmp(names[i], after) <= 0)
			continue;
		job_init(&j);
		if (jobstore_load(&c->sp, names[i], &j, why, sizeof(why)) ==
		    0) {
			o = may_manage(s, &j) ? job_view(c, &j, 1, runsfd) :
			    NULL;
			job_fini(&j);
		} else
			o = errno == EBADMSG && s->any ? bad_view(names[i],
			    why) : NULL;
		if (o != NULL) {
			json_array_append_new(arr, o);
			k++;
		}
	}
	/* More may follow when the page filled before the names ran out. */
	o = json_pack("{s:o,s:o}", "jobs", arr, "nextAfter", k == lim &&
	    i < n ? json_string(names[i - 1]) : json_null());
	jobstore_names_free(names, (size_t)n);
	if (runsfd >= 0)
		(void)close(runsfd);
	return api_respond_json(c, out, 200, o);
}

/* --- writes ---------------------------------------------------------- */

/*
 * Decode the body as a definition into j (initialised) and check it as
 * `taskspool jobs add` does, plus the grants; path_code (NULL for POST)
 * is the jobCode of the URL, which the body's must equal.  Returns 0, or
 * the status of the problem sent (j left empty).
 */
static int
decode_def(struct api_ctx *c, struct buf *out, const char *path_code,
    struct job *j)
{
	char why[JOBSTORE_WHY_MAX];
	struct task_error err;
	const char *field;
	json_t *b;

	if ((b = api_parse_body(c, out)) == NULL)
		return 400;
	json_decref(b);
	if (job_decode(c->body, c->body_len, j, &err) != 0)
		return api_validation(c, out, err.field, err.rule);
	if (path_code != NULL && strcmp(j->code, path_code) != 0) {
		snprintf(why, sizeof(why), "must be \"%s\", as in the path",
		    path_code);
		job_fini(j);
		return api_validation(c, out, "jobCode", why);
	}
	/* As POST /tasks for the hook: no path is shown. */
	if (jobstore_check(j, c->rq->cfg->hooks_dir, &field, why,
	    sizeof(why)) != 0) {
		int st = strcmp(field, "taskCode") != 0 ? api_validation(c,
		    out, field, why) : api_problem(c, out, 422,
		    "UNKNOWN_TASK_CODE", api_one_member("taskCode",
		    json_string(j->task_code)), "no task code %s",
		    j->task_code);

		job_fini(j);
		return st;
	}
	/* The codes are granted, the alert's too (it runs as a task). */
	if (!apps_code_allowed(&c->app, j->task_code) || (j->on_failure[0] !=
	    '\0' && !apps_code_allowed(&c->app, j->on_failure))) {
		const char *code = apps_code_allowed(&c->app, j->task_code) ?
		    j->on_failure : j->task_code;
		int st = api_problem(c, out, 403, "TASK_CODE_FORBIDDEN",
		    api_one_member("field", json_string(code == j->task_code ?
		    "taskCode" : "onFailure")), "task code %s is not granted "
		    "to AppId %s", code, c->app_id);

		job_fini(j);
		return st;
	}
	return 0;
}

/* The answer to a failed jobstore change of code (errno set). */
static int
store_problem(struct api_ctx *c, struct buf *out, const char *code,
    const char *what)
{
	if (errno == ENOENT)
		return job_not_found(c, out, code);
	if (errno == EEXIST)
		return api_problem(c, out, 409, "JOB_EXISTS", api_one_member(
		    "jobCode", json_string(code)), "job %s already exists "
		    "(PUT /api/jobs/%s replaces it when it is of your task "
		    "codes)", code, code);
	if (errno == EPERM)
		return api_problem(c, out, 403, "TASK_CODE_FORBIDDEN",
		    api_one_member("jobCode", json_string(code)), "job %s "
		    "exists and its task code is not granted to AppId %s",
		    code, c->app_id);
	if (errno == EFBIG)
		return api_problem(c, out, 413, "PAYLOAD_TOO_LARGE",
		    api_one_member("limit", json_integer(JOB_FILE_MAX)),
		    "the job file would be larger than %d bytes with "
		    "createdAt", JOB_FILE_MAX);
	return api_unavailable(c, out, what);
}

/* POST /jobs (path_code NULL) and PUT /jobs/{code}. */
static int
jobs_put(struct api_ctx *c, struct buf *out, const struct scope *s,
    const char *path_code)
{
	struct scope sc = *s;
	struct job j;
	json_t *v;
	int rc, replaced = 0;

	job_init(&j);
	if ((rc = decode_def(c, out, path_code, &j)) != 0)
		return rc;
	if (jobstore_put(&c->sp, &j, path_code == NULL ? JOBSTORE_EXCL : 0,
	    tstime_now_ms(), guard_own, &sc, &replaced) != 0) {
		rc = store_problem(c, out, j.code, "jobs/ publish");
		job_fini(&j);
		return rc;
	}
	if (!replaced)
		buf_printf(&c->hdr, "Location: /api/jobs/%s\r\n", j.code);
	v = job_view1(c, &j, JOBSAPI_FIRES);
	job_fini(&j);
	if (v == NULL)
		return api_unavailable(c, out, "job view");
	return api_respond_json(c, out, replaced ? 200 : 201, v);
}

static int
jobs_delete(struct api_ctx *c, struct buf *out, const struct scope *s,
    const char *code)
{
	struct scope sc = *s;

	if (jobstore_remove(&c->sp, code, guard_existing, &sc) != 0)
		return errno == EPERM ? job_not_found(c, out, code) :
		    store_problem(c, out, code, "jobs/ remove");
	return api_respond_json(c, out, 200, json_pack("{s:s,s:b}",
	    "jobCode", code, "deleted", 1));
}

static int
jobs_enable(struct api_ctx *c, struct buf *out, const struct scope *s,
    const char *code, int on)
{
	char why[JOBSTORE_WHY_MAX];
	struct scope sc = *s;
	struct job j;
	json_t *v;
	int st;

	if (api_empty_body(c, out, &st) != 0)
		return st;
	job_init(&j);
	if (jobstore_set_enabled(&c->sp, code, on, guard_existing, &sc, &j,
	    why, sizeof(why)) != 0) {
		if (errno == EPERM || errno == EBADMSG)
			return job_not_found(c, out, code);
		return store_problem(c, out, code, "jobs/ publish");
	}
	v = job_view1(c, &j, JOBSAPI_FIRES);
	job_fini(&j);
	if (v == NULL)
		return api_unavailable(c, out, "job view");
	return api_respond_json(c, out, 200, v);
}

/*
 * The idempotency record of run t for the caller (api_marker.h), so that
 * the run is its task; published exclusively into rdfd.  Returns 0 or -1
 * with errno (EEXIST: a run of the same millisecond).
 */
static int
run_record(struct api_ctx *c, int rdfd, const struct task *t)
{
	char file[SPOOL_NAME_MAX];
	struct api_marker m;
	struct buf rec;
	int rc;

	api_marker_fill(c, &m, t->request_id, t->task_code, t->created_ms);
	snprintf(file, sizeof(file), "%s.json", t->request_id);
	buf_init(&rec, 0);
	rc = api_marker_encode(&m, &rec);
	if (rc == 0)
		rc = spool_publish(&c->sp, rdfd, file, rec.data, rec.len, -1,
		    SPOOL_PUBLISH_EXCL);
	buf_fini(&rec);
	return rc;
}

/* POST /jobs/{code}/run: `taskspool jobs run-now` for the caller. */
static int
jobs_run(struct api_ctx *c, struct buf *out, const struct scope *s,
    const char *code)
{
	char why[JOBSTORE_WHY_MAX], prev[TASK_ID_MAX + 1], warn[256];
	char node[APPS_ID_MAX + 8], file[SPOOL_NAME_MAX];
	const char *field;
	struct task t;
	struct job j;
	int st, rdfd = -1;

	if (api_empty_body(c, out, &st) != 0)
		return st;
	job_init(&j);
	task_init(&t);
	if (jobstore_load(&c->sp, code, &j, why, sizeof(why)) != 0) {
		st = errno == ENOENT || errno == EBADMSG ?
		    job_not_found(c, out, code) :
		    api_unavailable(c, out, "jobs/ read");
		goto out;
	}
	if (!may_manage(s, &j)) {
		st = job_not_found(c, out, code);
		goto out;
	}
	/* Its failure alert runs as a task too: that code must be granted
	 * as well, as for a definition written here. */
	if (j.on_failure[0] != '\0' && !apps_code_allowed(&c->app,
	    j.on_failure)) {
		st = api_problem(c, out, 403, "TASK_CODE_FORBIDDEN",
		    api_one_member("field", json_string("onFailure")), "task "
		    "code %s (onFailure) is not granted to AppId %s",
		    j.on_failure, c->app_id);
		goto out;
	}
	if (jobstore_check(&j, c->rq->cfg->hooks_dir, &field, why,
	    sizeof(why)) != 0) {
		st = strcmp(field, "taskCode") == 0 ? api_problem(c, out, 422,
		    "UNKNOWN_TASK_CODE", api_one_member("taskCode",
		    json_string(j.task_code)), "no task code %s", j.task_code) :
		    api_validation(c, out, field, why);
		goto out;
	}
	if (jobstore_run_task(&j, tstime_now_ms(), &t) != 0 ||
	    api_trace_choose(c, &t) != 0 || (t.app_id =
	    strdup(c->app_id)) == NULL) {
		st = api_unavailable(c, out, "run task");
		goto out;
	}
	t.app_weight = c->app.weight > 0 ? c->app.weight : -1;
	if ((rdfd = api_state_subdir(c, "requests")) < 0) {
		st = api_unavailable(c, out, "state/requests");
		goto out;
	}
	/* The record first, as POST /tasks: the task is never without
	 * its owner. */
	if (run_record(c, rdfd, &t) != 0) {
		st = errno == EEXIST ? api_problem(c, out, 409,
		    "REQUEST_ID_CONFLICT", NULL, "a run %s of job %s exists "
		    "already (runs made in one millisecond); try again",
		    t.request_id, code) : api_unavailable(c, out,
		    "state/requests publish");
		goto out;
	}
	snprintf(node, sizeof(node), "api:%s", c->app_id);
	if (jobstore_run(&c->sp, &j, &t, node, prev, sizeof(prev), warn,
	    sizeof(warn)) != 0) {
		int e = errno;

		snprintf(file, sizeof(file), "%s.json", t.request_id);
		(void)unlinkat(rdfd, file, 0);
		errno = e;
		if (e == EBUSY)
			st = api_problem(c, out, 409, "JOB_RUN_IN_PROGRESS",
			    json_pack("{s:s,s:s}", "jobCode", code,
			    "activeRequestId", prev), "job %s is overlap "
			    "forbid and its run %s is pending or running", code,
			    prev);
		else if (e == EEXIST)
			st = api_problem(c, out, 409, "REQUEST_ID_CONFLICT",
			    NULL, "a run %s of job %s exists already; try "
			    "again", t.request_id, code);
		else if (e == EAGAIN) {
			errno = EAGAIN;
			st = api_unavailable(c, out, "job run marker busy");
		} else
			st = api_unavailable(c, out, e == EACCES || e == EPERM ?
			    "state/jobruns (the job's run marker)" :
			    "publish run");
		goto out;
	}
	if (warn[0] != '\0')
		fprintf(stderr, "taskspool.cgi: trace %s: job %s: %s\n",
		    c->trace, code, warn);
	buf_printf(&c->hdr, "Location: /api/tasks/%s\r\n", t.request_id);
	st = api_respond_json(c, out, 202, json_pack("{s:s,s:s,s:s,s:s*}",
	    "requestId", t.request_id, "jobCode", code, "status", "PENDING",
	    "traceparent", t.traceparent));
out:
	if (rdfd >= 0)
		(void)close(rdfd);
	task_fini(&t);
	job_fini(&j);
	return st;
}

/* --- GET /jobs/{code} ------------------------------------------------ */

static int
jobs_get(struct api_ctx *c, struct buf *out, const struct scope *s,
    const char *code)
{
	char why[JOBSTORE_WHY_MAX];
	struct job j;
	json_t *v;

	job_init(&j);
	if (jobstore_load(&c->sp, code, &j, why, sizeof(why)) != 0) {
		if (errno == EBADMSG && s->any)
			return api_respond_json(c, out, 200, bad_view(code,
			    why));
		return errno == ENOENT || errno == EBADMSG ?
		    job_not_found(c, out, code) :
		    api_unavailable(c, out, "jobs/ read");
	}
	v = may_manage(s, &j) ? job_view1(c, &j, JOBSAPI_FIRES) : NULL;
	if (v == NULL) {
		int st = may_manage(s, &j) ? api_unavailable(c, out,
		    "job view") : job_not_found(c, out, code);

		job_fini(&j);
		return st;
	}
	job_fini(&j);
	return api_respond_json(c, out, 200, v);
}

int
api_jobs(struct api_ctx *c, struct buf *out, const char *code,
    const char *action)
{
	struct scope s = { &c->app, strcmp(c->app.codes, "*") == 0 };
	const char *m = c->method;

	if (code == NULL)
		return strcmp(m, "POST") == 0 ? jobs_put(c, out, &s, NULL) :
		    jobs_list(c, out, &s);
	if (action == NULL || action[0] == '\0') {
		if (strcmp(m, "PUT") == 0)
			return jobs_put(c, out, &s, code);
		if (strcmp(m, "DELETE") == 0)
			return jobs_delete(c, out, &s, code);
		return jobs_get(c, out, &s, code);
	}
	if (strcmp(action, "run") == 0)
		return jobs_run(c, out, &s, code);
	return jobs_enable(c, out, &s, code, strcmp(action, "enable") == 0);
}
