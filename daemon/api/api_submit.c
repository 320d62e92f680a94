/*
 * api_submit — POST /tasks (API.md §4.1): the body's members, the task
 * codec's checks, Idempotency-Key, the callbackUrl policy, the task code
 * (a hook, granted to the app), the idempotency record and the task file
 * written with the spool's writer protocol, and the wake-up of the
 * daemons.
 *
 * Invariants: the record's exclusive create decides a race between two
 * submissions of one requestId; the record is written before the task
 * and removed when the task cannot be; a replay is never answered 202
 * for a task that does not exist (it waits for the first writer's task,
 * or completes it when that writer died); nothing is written before
 * every check has passed.  api_submit() holds §4.1's steps in order:
 * submit_decode() the body, the replay and conflict checks, the task
 * code, submit_write() the record and the task.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "api/api_impl.h"
#include "core/job.h"
#include "callback/callback.h"
#include "core/alert.h"
#include "core/batch.h"
#include "core/tstime.h"
#include "spool/batchdir.h"
#include "spool/clock.h"
#include "spool/depstate.h"
#include "coord/wakeup.h"

#define API_TWIN_WAIT_MS	1000	/* how long a replay waits for the
					 * task of a record to appear */
#define API_ORPHAN_SEC	60	/* a record without its task this old
				 * was left by a writer that died */

/* --- POST /tasks ------------------------------------------------------ */

static const char *const submit_members[] = {
	"requestId", "taskCode", "taskName", "triggerType", "delayMs", "runAt",
	"executeParams", "callbackUrl", "maxRetries", "timeoutSec", "route",
	"shardKey", "traceparent", "batchId", "dependsOn", "onFailure",
	"onFailureMode", "priority", "requireTags", "concurrencyKey",
	"maxConcurrentPerKey", NULL
};


/* The size in bytes of t's task file as it will be stored (with the
 * members the server adds to the body), or 0 if it cannot be encoded. */
static size_t
stored_size(struct task *t)
{
	struct buf b;
	size_t n;

	(void)task_set_not_before(t);
	buf_init(&b, 0);
	n = task_encode(t, &b) == 0 ? b.len : 0;
	buf_fini(&b);
	return n;
}

/* Whether requestId id was submitted by this request's app (its
 * idempotency record names the app).  Returns 1 or 0. */
static int
own_parent(struct api_ctx *c, const char *id)
{
	struct api_marker m;
	int dfd = openat(c->sp.dir[SPOOL_STATE], "requests", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int ok = dfd >= 0 && api_marker_read(dfd, id, &m) == 0 &&
	    strcmp(m.app_id, c->app_id) == 0;

	if (dfd >= 0)
		close(dfd);
	return ok;
}

/* Publish the task file for t (appId, createdAt set by the caller). */
static int
publish_task(struct api_ctx *c, struct task *t)
{
	struct buf b;
	char file[SPOOL_NAME_MAX];
	int64_t due = task_set_not_before(t);
	int rc;

	buf_init(&b, 0);
	if (task_encode(t, &b) != 0) {
		buf_fini(&b);
		return -1;
	}
	snprintf(file, sizeof(file), "%s.json", t->request_id);
	/* With parents: into blocked/, which the leader releases. */
	rc = spool_publish(&c->sp, c->sp.dir[t->depends.n > 0 ?
	    SPOOL_BLOCKED : due >= 0 ? SPOOL_DELAYED : SPOOL_INCOMING], file,
	    b.data, b.len, due, SPOOL_PUBLISH_EXCL);
	buf_fini(&b);
	if (rc == 0 && t->depends.n == 0)
		wakeup_notify(c->rq->cfg, &c->sp, due >= 0 ? SPOOL_DELAYED :
		    SPOOL_INCOMING, file);
	return rc;
}

/* Answer a submission whose record m exists (§4.1 step 2). */
static int
answer_existing(struct api_ctx *c, struct buf *out, const struct api_marker *m,
    struct task *t, int rdfd)
{
	char file[SPOOL_NAME_MAX];
	enum spool_dir where;
	int found;

	if (strcmp(m->app_id, c->app_id) != 0)
		return api_problem(c, out, 409, "REQUEST_ID_CONFLICT", NULL,
		    "requestId %s is already used by another AppId",
		    m->request_id);
	if (strcmp(m->fingerprint, c->body_hex) != 0)
		return api_problem(c, out, 422, "IDEMPOTENCY_KEY_REUSED",
		    api_one_member("requestId", json_string(m->request_id)),
		    "requestId %s was first used with a different body",
		    m->request_id);
	found = spool_locate(&c->sp, m->request_id, &where, NULL) == 0;
	if (!found && c->rq->now - m->mtime > API_ORPHAN_SEC) {
		/* The writer died between the record and the task: this
		 * retry carries the same bytes, so it completes the task. */
		t->created_ms = m->created_ms;
		snprintf(t->request_id, sizeof(t->request_id), "%s",
		    m->request_id);
		if (publish_task(c, t) != 0 && errno != EEXIST)
			return api_unavailable(c, out, "re-publish task");
	} else if (!found) {
		/* Younger than API_ORPHAN_SEC: the first writer publishes
		 * its task within milliseconds, or died (a killed CGI or
		 * FastCGI process).  Wait a moment for the task; never
		 * answer 202 for a task that does not exist. */
		int64_t until = tstime_mono_ms() + API_TWIN_WAIT_MS;

		do {
			if (tstime_mono_ms() >= until) {
				fprintf(stderr, "taskspool.cgi: trace %s: "
				    "record of %s without its task\n",
				    c->trace, m->request_id);
				return api_problem(c, out, 503,
				    "SERVICE_UNAVAILABLE", NULL, "the first "
				    "request with requestId %s has not "
				    "published its task (it is being written, "
				    "or was interrupted); retry: %d s after "
				    "the first request a retry completes it",
				    m->request_id, API_ORPHAN_SEC);
			}
			usleep(20000);
		} while (spool_locate(&c->sp, m->request_id, &where,
		    NULL) != 0);
	}
	(void)rdfd;
	(void)file;
	buf_printf(&c->hdr, "Location: /api/tasks/%s\r\nIdempotent-Replayed: "
	    "true\r\n", m->request_id);
	return api_respond_json(c, out, 202, api_summary(c, m, NULL));
}

/*
 * Decode the body of a submission into t (§4.1 "JSON rules", the task
 * codec, Idempotency-Key as an alias of requestId).  Returns 0 with t
 * decoded (the caller finalises it), or the status of the problem sent,
 * and then t holds nothing.
 */
static int
submit_decode(struct api_ctx *c, struct buf *out, struct task *t)
{
	json_t *o = api_parse_body(c, out), *v;
	const char *k;
	struct task_error te;
	char hdr_key[TASK_ID_MAX + 2];
	int hk, rc;

	if (o == NULL)
		return 400;
	json_object_foreach(o, k, v) {
		int known = 0;

		for (int i = 0; submit_members[i] != NULL; i++)
			known |= strcmp(k, submit_members[i]) == 0;
		if (!known) {
			rc = api_unknown_member(c, out, k, submit_members,
			    sizeof(submit_members) / sizeof(submit_members[0])
			    - 1);
			json_decref(o);
			return rc;
		}
	}
	json_decref(o);
	task_init(t);
	if (task_decode(c->body, c->body_len, t, &te) != 0) {
		task_fini(t);
		if (strcmp(te.field, "json") == 0 || strcmp(te.field,
		    "file") == 0)
			return api_problem(c, out, 400, "INVALID_JSON", NULL,
			    "%s", te.rule);
		/* A callbackUrl string that breaks the URL rules (scheme,
		 * length) gets the code of §4.3, as the registration's url
		 * does; a wrong type stays VALIDATION_FAILED. */
		if (strcmp(te.field, "callbackUrl") == 0 &&
		    strstr(te.rule, "string") == NULL)
			return api_problem(c, out, 422, "INVALID_CALLBACK_URL",
			    NULL, "callbackUrl: %s", te.rule);
		return api_validation(c, out, te.field, te.rule);
	}
	/* §13.3: Idempotency-Key is an alias of requestId. */
	hk = api_header(c, "HTTP_IDEMPOTENCY_KEY", hdr_key, sizeof(hdr_key));
	if (hk == 1 || (hk == 0 && !spool_id_ok(hdr_key))) {
		task_fini(t);
		return api_validation(c, out, "Idempotency-Key", "must match "
		    "[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
	}
	if (hk == 0) {
		if (t->request_id[0] != '\0' && strcmp(t->request_id,
		    hdr_key) != 0) {
			task_fini(t);
			return api_validation(c, out, "requestId", "differs "
			    "from the Idempotency-Key header");
		}
		api_copy(t->request_id, sizeof(t->request_id), hdr_key);
	}
	{
		/* The names the leader gives the tasks it makes: a caller
		 * that took one first would stand in for another app's batch
		 * completion or a failure alert (README.md "Batches"). */
		static const char *const made[] = { BATCH_COMPLETE_SUFFIX,
		    ALERT_SUFFIX_FAILED, ALERT_SUFFIX_RECOVERED };
		size_t n = strlen(t->request_id);

		for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
			size_t sl = strlen(made[i]);

			if (n > sl && strcmp(t->request_id + n - sl, made[i]) ==
			    0) {
				char why[160];

				snprintf(why, sizeof(why), "may not end in %s "
				    "(the leader names the tasks it makes so: "
				    "a batch's onComplete task, failure "
				    "alerts)", made[i]);
				task_fini(t);
				return api_validation(c, out, "requestId", why);
			}
		}
		/* Nor a recurring job's fire, before it comes. */
		if (job_fire_id(t->request_id)) {
			task_fini(t);
			return api_validation(c, out, "requestId", "may not "
			    "have the shape <jobCode>.<yyyymmddThhmmss[mmm]Z> "
			    "(the leader names a recurring job's fires so)");
		}
	}
	return 0;
}

/*
 * Write a checked submission (§4.1 step 4): t (borrowed; its appId and
 * createdAt set here) into the idempotency record of rdfd (the requests
 * directory, borrowed), then its task file, and answer 202.  The record's
 * exclusive create decides a race with a twin, which is then answered as
 * a replay.  Returns the status sent.
 */
static int
submit_write(struct api_ctx *c, struct buf *out, struct task *t, int rdfd)
{
	char file[SPOOL_NAME_MAX];
	struct api_marker m;
	struct buf rec;
	int rc;

	/* §4.1 step 4: the record's exclusive create decides the race. */
	t->created_ms = tstime_now_ms();
	if (t->created_ms / 1000 != c->rq->now)
		t->created_ms = c->rq->now * 1000 + t->created_ms % 1000;
	free(t->app_id);
	t->app_id = strdup(c->app_id);
	/* The app's share of claims (apps.conf weight=, README.md "Fair
	 * sharing"): the daemons read it from the task. */
	t->app_weight = c->app.weight > 0 ? c->app.weight : -1;
	if (api_trace_choose(c, t) != 0)
		return api_unavailable(c, out, "traceparent");
	/* A body under the 1 MiB limit can still make a task file over it
	 * once appId, createdAt and the rest are added: the daemons would
	 * send that file to corrupt/, so it is refused here, before any
	 * record exists. */
	{
		size_t n = t->app_id != NULL ? stored_size(t) : 0;

		if (n > TASK_FILE_MAX)
			return api_problem(c, out, 413, "PAYLOAD_TOO_LARGE",
			    api_one_member("limit",
			    json_integer(TASK_FILE_MAX)), "the task file would "
			    "be %zu bytes with the members the server adds "
			    "(requestId, appId, createdAt...); at most %d", n,
			    TASK_FILE_MAX);
	}
	/* The member entry before the record and the task: a closed
	 * batch refuses with nothing stored (spool/batchdir.h). */
	if (t->batch_id[0] != '\0' && (rc = api_batch_join(c, out,
	    t->batch_id, t->request_id)) != 0)
		return rc;
	api_marker_fill(c, &m, t->request_id, t->task_code, t->created_ms);
	buf_init(&rec, 0);
	if (api_marker_encode(&m, &rec) != 0)
		buf_reset(&rec);
	snprintf(file, sizeof(file), "%s.json", t->request_id);
	if (t->app_id == NULL || rec.len == 0 || spool_publish(&c->sp, rdfd,
	    file, rec.data, rec.len, -1, SPOOL_PUBLISH_EXCL) != 0) {
		buf_fini(&rec);
		/* A concurrent twin won: answer as a replay. */
		if (errno == EEXIST && api_marker_read(rdfd, t->request_id,
		    &m) == 0)
			return answer_existing(c, out, &m, t, rdfd);
		return api_unavailable(c, out, "state/requests publish");
	}
	buf_fini(&rec);
	if (publish_task(c, t) != 0) {
		int e = errno;

		if (t->batch_id[0] != '\0' && e != EEXIST)
			batchdir_leave(&c->sp, t->batch_id, t->request_id);
		(void)unlinkat(rdfd, file, 0);
		errno = e;
		if (e == EEXIST)
			return api_problem(c, out, 409, "REQUEST_ID_CONFLICT",
			    NULL, "requestId %s is already used by a task not "
			    "submitted by this AppId", t->request_id);
		return api_unavailable(c, out, "publish task");
	}
	buf_printf(&c->hdr, "Location: /api/tasks/%s\r\n", t->request_id);
	{
		int64_t due = t->not_before_ms >= 0 ? t->not_before_ms -
		    c->rq->now * 1000 : 0;

		json_t *sum = api_summary(c, &m, &due);

		/* With parents it waits in blocked/ (README.md,
		 * "Dependencies"), not for its time. */
		if (sum != NULL && t->depends.n > 0) {
			json_object_set_new(sum, "status",
			    json_string("BLOCKED"));
			json_object_set_new(sum, "estimatedDelay",
			    json_integer(0));
		}
		if (sum != NULL && t->traceparent != NULL)
			json_object_set_new(sum, "traceparent",
			    json_string(t->traceparent));
		return api_respond_json(c, out, 202, sum);
	}
}

int
api_submit(struct api_ctx *c, struct buf *out)
{
	struct task t;
	char hook[CONFIG_PATH_MAX + 80];
	struct api_marker m;
	int rdfd = -1, rc;

	if ((rc = submit_decode(c, out, &t)) != 0)
		return rc;
	if (t.callback_url != NULL && (rc = api_url_problem(c, out,
	    t.callback_url, "callbackUrl")) != 0) {
		task_fini(&t);
		return rc;
	}
	/* Unsigned callbacks are never sent: refused now, where the writer
	 * sees why, not CALLBACK_FAILED later with the reason in a log. */
	if (t.callback_url != NULL && !callback_can_sign(&c->sp, c->rq->cfg,
	    c->app_id)) {
		task_fini(&t);
		return api_problem(c, out, 422, "CALLBACK_SECRET_MISSING",
		    api_one_member("field", json_string("callbackUrl")),
		    "callbackUrl: %s", CALLBACK_NO_SECRET_WHY);
	}
	if ((rdfd = api_state_subdir(c, "requests")) < 0) {
		task_fini(&t);
		return api_unavailable(c, out, "state/requests");
	}
	if (t.request_id[0] != '\0') {
		enum spool_dir where;

		if (api_marker_read(rdfd, t.request_id, &m) == 0) {
			rc = answer_existing(c, out, &m, &t, rdfd);
			goto out;
		}
		if (errno != ENOENT) {
			rc = api_unavailable(c, out, "state/requests record");
			goto out;
		}
		if (spool_locate(&c->sp, t.request_id, &where, NULL) == 0) {
			/* A concurrent twin may have published its record and
			 * its task between our marker_read and spool_locate:
			 * read the record again before calling it a task of
			 * another writer. */
			if (api_marker_read(rdfd, t.request_id, &m) == 0) {
				rc = answer_existing(c, out, &m, &t, rdfd);
				goto out;
			}
			rc = api_problem(c, out, 409, "REQUEST_ID_CONFLICT",
			    NULL, "requestId %s is already used by a task not "
			    "submitted by this AppId", t.request_id);
			goto out;
		}
	} else
		/* One clock read: the request's start in ms (a second
		 * from rq->now and the ms from a later read could go back
		 * by up to 999 ms across a second's edge, and generated
		 * ids must follow submission order). */
		spool_new_request_id(t.request_id, sizeof(t.request_id),
		    c->rq->now_ms > 0 ? c->rq->now_ms : c->rq->now * 1000);
	/* §4.1 step 3: the task code exists (a hook) and is granted. */
	snprintf(hook, sizeof(hook), "%s/%s", c->rq->cfg->hooks_dir,
	    t.task_code);
	if (access(hook, X_OK) != 0) {
		rc = api_problem(c, out, 422, "UNKNOWN_TASK_CODE",
		    api_one_member("taskCode", json_string(t.task_code)), "no "
		    "task code %s", t.task_code);
		goto out;
	}
	if (!apps_code_allowed(&c->app, t.task_code)) {
		rc = api_problem(c, out, 403, "TASK_CODE_FORBIDDEN", NULL,
		    "task code %s is not granted to AppId %s", t.task_code,
		    c->app_id);
		goto out;
	}
	/* Every parent exists (so no cycle can form: README.md,
	 * "Dependencies") and is this app's: another app's task is
	 * answered as none (its existence, its result stay its own). */
	for (size_t i = 0; i < t.depends.n; i++)
		if (!own_parent(c, t.depends.v[i].id) ||
		    depstate_of(&c->sp, t.depends.v[i].id, NULL) ==
		    DEPEND_PARENT_UNKNOWN) {
			char f[64];

			snprintf(f, sizeof(f), "dependsOn[%zu].requestId", i);
			rc = api_problem(c, out, 422, "UNKNOWN_DEPENDENCY",
			    api_one_member("field", json_string(f)), "%s: no "
			    "task %s of AppId %s", f, t.depends.v[i].id,
			    c->app_id);
			goto out;
		}
	rc = submit_write(c, out, &t, rdfd);
out:
	task_fini(&t);
	if (rdfd >= 0)
		close(rdfd);
	return rc;
}
