/*
 * api_hold — POST /tasks/{id}/hold and POST /tasks/{id}/release (README.md,
 * "Holding and releasing tasks"; API.md §4): the moves of `taskspool hold`
 * and `release` (coord/hold.h) for a caller's own task.
 *
 * Invariants: a caller holds and releases only the tasks its AppId
 * submitted (the idempotency record's appId, as GET and DELETE check);
 * any other id is 404.  The body is empty or the empty object {} (the
 * request is signed like any POST).  Answers: 200 and the §4.2 view when
 * done (status HELD, or PENDING after a release; also when already held
 * or not held, so a retried request gets the same answer), 202 and the
 * view when a hold was only requested (the task runs: its next retry is
 * held; or its node moves it), 409 TASK_FINISHED for a finished task,
 * 503 when the spool cannot be written.  Writes hold/, state/hold/, and
 * in cluster mode drops the task's index entry and publishes a wake-up
 * for a released task.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/api_impl.h"
#include "coord/hold.h"
#include "coord/index.h"
#include "coord/wakeup.h"
#include "spool/clock.h"

int
api_empty_body(struct api_ctx *c, struct buf *out, int *status)
{
	static const char *const none[] = { NULL };
	json_t *b;
	const char *k;
	json_t *v;

	if (c->body_len == 0)
		return 0;
	if ((b = api_parse_body(c, out)) == NULL) {
		*status = 400;
		return -1;
	}
	json_object_foreach(b, k, v) {
		*status = api_unknown_member(c, out, k, none, 0);
		json_decref(b);
		return -1;
	}
	json_decref(b);
	return 0;
}

int
api_hold(struct api_ctx *c, struct buf *out, const char *id, int release)
{
	struct api_marker m;
	enum spool_dir where = SPOOL_NDIRS;
	enum hold_status hs;
	char by[HOLDMARK_BY_MAX + 1], why[512];
	json_t *v;
	int st;

	if (api_own_marker(c, out, id, &m, &st) != 0 ||
	    api_empty_body(c, out, &st) != 0)
		return st;
	snprintf(by, sizeof(by), "api app %s", c->app_id);
	hs = release ? hold_release(&c->sp, id, tstime_now_ms(), &where, why,
	    sizeof(why)) : hold_task(&c->sp, id, by, tstime_now_ms(), &where,
	    why, sizeof(why));
	if (hs == HOLD_ERR) {
		fprintf(stderr, "taskspool.cgi: trace %s: %s %s: %s\n",
		    c->trace, release ? "release" : "hold", id, why);
		return api_unavailable(c, out, release ? "release" : "hold");
	}
	if (hs == HOLD_UNKNOWN)
		return api_task_not_found(c, out, id);
	if (hs == HOLD_FINISHED)
		return api_problem(c, out, 409, "TASK_FINISHED",
		    api_one_member("taskStatus", json_string(
		    spool_state_name(where))), "task %s already finished: "
		    "nothing to %s", id, release ? "release" : "hold");
	if (hs == HOLD_MOVED) {
		(void)index_client(c->rq->cfg, &c->sp, id, 1, NULL);
		if (release)
			wakeup_notify(c->rq->cfg, &c->sp, where, NULL);
	}
	if ((v = api_task_view(c, &m, 0)) == NULL)
		return api_unavailable(c, out, "read task");
	return api_respond_json(c, out, hs == HOLD_MARKED && !release ? 202 :
	    200, v);
}
