/*
 * api_view — the §4.2 view of a task as the API shows it: where it is in
 * the spool (its state), the members of its task file or, once it is
 * terminal, of its result file, and its callback member from the
 * delivery files.  Read-only: nothing here writes to the spool.
 *
 * Invariant: a task that moves while it is read is read again (a few
 * tries), never shown half from one state and half from another; a torn
 * result is reported as such (EBADMSG), never as a missing task.
 * api_task_view() locates the task and retries; view_finished() builds
 * the view from the result file, view_unfinished() from the task file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_impl.h"
#include "callback/callback.h"
#include "coord/maxconc.h"
#include "core/jsontext.h"
#include "core/priority.h"
#include "core/result.h"
#include "core/tags.h"
#include "core/tstime.h"
#include "spool/depstate.h"

#define API_RESULT_MAX	(64 << 20)

static const char *
state_of(enum spool_dir d)
{
	return d == SPOOL_CORRUPT ? NULL : spool_state_name(d);
}

int
api_terminal(const char *status)
{
	return strcmp(status, "SUCCESS") == 0 || strcmp(status, "FAILED") ==
	    0 || strcmp(status, "CANCELLED") == 0;
}

/*
 * The callback member of §4.2 for task id of app: the delivery's state
 * from outbox/callbacks/ (callback_info_read) once the task is terminal;
 * before that PENDING when the task has its own callbackUrl or its app a
 * registration, else NOT_REGISTERED.  A finished task without a delivery
 * never gets one (its conclusion publishes the delivery before the
 * result): NOT_REGISTERED, also when its app registered afterwards.
 */
json_t *
api_callback_view(struct api_ctx *c, const char *app, const char *id,
    int has_url, int finished)
{
	json_t *o = json_object();
	struct callback_info ci;
	char t[TSTIME_BUF];

	if (callback_info_read(&c->sp, id, &ci) == 0) {
		json_object_set_new(o, "status", json_string(ci.status));
		json_object_set_new(o, "attempts", json_integer(ci.attempts));
		json_object_set_new(o, "lastAttemptAt",
		    ci.last_attempt_ms >= 0 ? json_string(tstime_format_ms(t,
		    sizeof(t), ci.last_attempt_ms)) : json_null());
		json_object_set_new(o, "lastHttpStatus", ci.last_http > 0 ?
		    json_integer(ci.last_http) : json_null());
		json_object_set_new(o, "lastError", ci.last_error[0] != '\0' ?
		    json_string(ci.last_error) : json_null());
		return o;
	}
	json_object_set_new(o, "status", json_string(!finished && (has_url ||
	    callback_registered(&c->sp, app)) ? "PENDING" : "NOT_REGISTERED"));
	json_object_set_new(o, "attempts", json_integer(0));
	json_object_set_new(o, "lastAttemptAt", json_null());
	json_object_set_new(o, "lastHttpStatus", json_null());
	json_object_set_new(o, "lastError", json_null());
	return o;
}

/*
 * The view of a finished task from its result file (file, borrowed, in
 * results/): a new object without the callback member, or NULL when the
 * file is missing or does not parse (*damaged then says whether it was
 * there).  with_result: include "result".
 */
static json_t *
view_finished(struct api_ctx *c, const char *file, int with_result,
    int *damaged)
{
	size_t len;
	char *data = spool_read_file(c->sp.dir[SPOOL_RESULTS], file,
	    API_RESULT_MAX, &len);
	json_t *r = data != NULL && result_valid(data, len, NULL, 0) ?
	    jsontext_loadb(data, len, 0, NULL) : NULL;
	static const char *const keep[] = { "requestId", "taskCode",
	    "taskName", "status", "createdAt", "startedAt", "finishedAt",
	    "durationMs", "attempt", "maxRetries", "node", "triggerTime",
	    "result", "failureReason" };
	json_t *o;

	*damaged = data != NULL && r == NULL;
	free(data);
	if (r == NULL)
		return NULL;
	o = json_object();
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		json_t *v = json_object_get(r, keep[i]);

		if (strcmp(keep[i], "result") == 0 && !with_result)
			continue;
		json_object_set(o, keep[i], v != NULL ? v : json_null());
	}
	/* README.md, "Trace context": only a task that has one. */
	if (json_is_string(json_object_get(r, "traceparent")))
		json_object_set(o, "traceparent",
		    json_object_get(r, "traceparent"));
	/* Why it was cancelled (README.md, "Dependencies"). */
	if (json_is_object(json_object_get(r, "cancelReason")))
		json_object_set(o, "cancelReason",
		    json_object_get(r, "cancelReason"));
	json_decref(r);
	return o;
}

/*
 * The view of an unfinished task from its task file (file, borrowed) in
 * the state directory where (of node, "" = none), in state st: a new
 * object, or NULL when the file cannot be read (it moved meanwhile).
 * with_result: include "result" (always null here).
 */
static json_t *
view_unfinished(struct api_ctx *c, const struct api_marker *m,
    const char *file, enum spool_dir where, const char *node,
    const char *st, int with_result)
{
	int dfd = c->sp.dir[where], own = 0;
	size_t len;
	char *data;
	struct task t;
	struct task_error te;
	int64_t now_ms = c->rq->now * 1000;
	json_t *o;

	if (where == SPOOL_ACTIVE || where == SPOOL_QUEUE) {
		dfd = spool_node_dir(&c->sp, where, node);
		own = 1;
	}
	data = dfd >= 0 ? spool_read_file(dfd, file, TASK_FILE_MAX, &len) :
	    NULL;
	if (own && dfd >= 0)
		close(dfd);
	task_init(&t);
	if (data == NULL || task_decode(data, len, &t, &te)) {
		free(data);
		task_fini(&t);
		return NULL;
	}
	free(data);
	o = json_object();
	json_object_set_new(o, "requestId", json_string(m->request_id));
	json_object_set_new(o, "taskCode", json_string(t.task_code));
	json_object_set_new(o, "taskName", t.task_name != NULL ?
	    json_string(t.task_name) : json_null());
	json_object_set_new(o, "status", json_string(st));
	json_object_set_new(o, "createdAt", api_time_or_null(t.created_ms));
	json_object_set_new(o, "startedAt", json_null());
	json_object_set_new(o, "finishedAt", json_null());
	json_object_set_new(o, "durationMs", json_null());
	json_object_set_new(o, "attempt", json_integer((json_int_t)t.nattempts +
	    (where == SPOOL_ACTIVE)));
	json_object_set_new(o, "maxRetries", json_integer(t.max_retries >= 0 ?
	    t.max_retries : c->rq->cfg->max_retries));
	json_object_set_new(o, "node", node[0] != '\0' ? json_string(node) :
	    json_null());
	json_object_set_new(o, "triggerTime", api_time_or_null(t.trigger_ms));
	json_object_set_new(o, "priority", json_integer(t.priority >= 0 ?
	    t.priority : PRIORITY_DEFAULT));
	if (t.require_tags != NULL)	/* README.md, "Node tags" */
		json_object_set_new(o, "requireTags",
		    tags_json(t.require_tags));
	if (t.conc_key != NULL) {	/* "Per-key concurrency" */
		json_object_set_new(o, "concurrencyKey",
		    json_string(t.conc_key_tmpl));
		json_object_set_new(o, "concurrencyKeyValue",
		    json_string(t.conc_key));
		if (t.max_per_key > 0)
			json_object_set_new(o, "maxConcurrentPerKey",
			    json_integer(t.max_per_key));
	}
	if (t.traceparent != NULL)
		json_object_set_new(o, "traceparent",
		    json_string(t.traceparent));
	if (strcmp(st, "PENDING") == 0)
		json_object_set_new(o, "estimatedDelay", json_integer(
		    t.not_before_ms > now_ms ? (t.not_before_ms - now_ms +
		    999) / 1000 : 0));
	if (where == SPOOL_BLOCKED) {	/* README.md, "Dependencies" */
		json_t *w = json_array();

		for (size_t i = 0; i < t.depends.n; i++)
			json_array_append_new(w, json_pack("{ssssss}",
			    "requestId", t.depends.v[i].id, "condition",
			    depend_cond_name(t.depends.v[i].cond), "state",
			    depstate_name(&c->sp, t.depends.v[i].id)));
		json_object_set_new(o, "waitingFor", w);
	}
	if (with_result)
		json_object_set_new(o, "result", json_null());
	json_object_set_new(o, "failureReason", json_null());
	json_object_set_new(o, "callback", api_callback_view(c, m->app_id,
	    m->request_id, t.callback_url != NULL, 0));
	task_fini(&t);
	return o;
}

/*
 * The §4.2 view of task id (whose record is m) as a new object, or NULL
 * with errno ENOENT when the task is in no state directory.  with_result:
 * include "result" (single GET) or not (list).
 */
json_t *
api_task_view(struct api_ctx *c, const struct api_marker *m, int with_result)
{
	char file[SPOOL_NAME_MAX], node[65] = "";
	enum spool_dir where;
	json_t *o = NULL;

	snprintf(file, sizeof(file), "%s.json", m->request_id);
	int damaged = 0;		/* its result file does not parse */

	/* A task can move while it is read: try again a few times. */
	for (int tries = 0; tries < 5 && o == NULL; tries++) {
		const char *st;

		if (spool_locate(&c->sp, m->request_id, &where, node) != 0)
			return NULL;
		st = state_of(where);
		if (st == NULL)
			return NULL;
		st = limits_state_name(&c->sp, where, m->request_id);
		if (api_terminal(st)) {
			o = view_finished(c, file, with_result, &damaged);
			continue;
		}
		if ((o = view_unfinished(c, m, file, where, node, st,
		    with_result)) != NULL)
			return o;
	}
	if (o == NULL) {
		/* A torn result is a missing one (issue 11 item 5): the
		 * daemons rebuild it; the caller says so. */
		errno = damaged ? EBADMSG : EAGAIN;
		return NULL;
	}
	{
		/* The finished task's file tells whether it had its own
		 * callbackUrl. */
		int dfd = c->sp.dir[where];
		size_t len;
		char *data = spool_read_file(dfd, file, TASK_FILE_MAX, &len);
		struct task t;
		struct task_error te;
		int has_url = 0;

		task_init(&t);
		if (data != NULL && task_decode(data, len, &t, &te) == 0)
			has_url = t.callback_url != NULL;
		task_fini(&t);
		free(data);
		json_object_set_new(o, "callback", api_callback_view(c,
		    m->app_id, m->request_id, has_url, 1));
	}
	return o;
}

/*
 * The §4.1 202 body: a short summary of the task's current state; fresh
 * (not NULL) for a task just published, whose state is known: PENDING,
 * due in *fresh ms from now.
 */
json_t *
api_summary(struct api_ctx *c, const struct api_marker *m, const int64_t *fresh)
{
	json_t *v = fresh == NULL ? api_task_view(c, m, 0) : NULL;
	json_t *o = json_object(), *links;
	char self[TASK_ID_MAX + 16];
	char b[TSTIME_BUF];

	snprintf(self, sizeof(self), "/api/tasks/%s", m->request_id);
	json_object_set_new(o, "requestId", json_string(m->request_id));
	json_object_set_new(o, "taskCode", json_string(m->task_code));
	json_object_set_new(o, "status", json_string(v != NULL ?
	    json_string_value(json_object_get(v, "status")) : "PENDING"));
	json_object_set_new(o, "estimatedDelay", json_integer(v != NULL ?
	    json_integer_value(json_object_get(v, "estimatedDelay")) :
	    fresh != NULL && *fresh > 0 ? (*fresh + 999) / 1000 : 0));
	json_object_set_new(o, "createdAt", json_string(api_fmt_time(b,
	    m->created_ms)));
	links = json_object();
	json_object_set_new(links, "self", json_string(self));
	json_object_set_new(o, "links", links);
	json_decref(v);
	return o;
}
