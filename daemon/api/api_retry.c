/*
 * api_retry.c — POST /tasks/{id}/retry: `taskspool retry` for a caller's
 * own task (coord/retry.h).
 *
 * Invariants: only the AppId that submitted a task retries it (else 404,
 * as GET checks); the body is empty or {}.  Answers 202 and the §4.2
 * view (status PENDING, the attempt to come in "attempt") when the task
 * went back to incoming/; 409 TASK_NOT_RETRYABLE with "taskStatus" when
 * it is not FAILED or CANCELLED (a request repeated after a lost answer
 * sees PENDING or RUNNING there: the first one was done); 503 when the
 * spool cannot be written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/api_impl.h"
#include "coord/retry.h"

int
api_retry(struct api_ctx *c, struct buf *out, const char *id)
{
	struct api_marker m;
	enum spool_dir where = SPOOL_NDIRS;
	char warn[160];
	json_t *v;
	int st;

	if (api_own_marker(c, out, id, &m, &st) != 0 ||
	    api_empty_body(c, out, &st) != 0)
		return st;
	if (task_retry(c->rq->cfg, &c->sp, id, NULL, &where, warn,
	    sizeof(warn)) != 0) {
		if (errno == ENOENT)
			return api_task_not_found(c, out, id);
		if (errno == EBUSY)
			return api_problem(c, out, 409, "TASK_NOT_RETRYABLE",
			    api_one_member("taskStatus", json_string(
			    spool_state_name(where))), "task %s is %s; only "
			    "a FAILED or CANCELLED task can be retried", id,
			    spool_state_name(where));
		if (errno == EALREADY)
			return api_problem(c, out, 409, "JOB_RUN_IN_PROGRESS",
			    json_pack("{s:s,s:s}", "requestId", id,
			    "activeRequestId", warn), "task %s is a run of a "
			    "forbid or replace job whose run %s is pending or "
			    "running; retry when it has ended", id, warn);
		return api_unavailable(c, out, "retry");
	}
	if (warn[0] != '\0')
		fprintf(stderr, "taskspool.cgi: trace %s: retry %s: %s\n",
		    c->trace, id, warn);
	if ((v = api_task_view(c, &m, 0)) == NULL)
		return api_unavailable(c, out, "read task");
	return api_respond_json(c, out, 202, v);
}
