/*
 * node_alert — the failure alerts of issue 14 item 5: the onFailure
 * alert task (node_alert_prepare, node_alert_conclude: an O_EXCL task in
 * incoming/ with requestId alert_request_id(), the envelope plus "alert"
 * as executeParams, transition mode's state/alerts/<jobCode>), and
 * the system hook _on_task_failed: run
 * once per task this node concludes FAILED, with the result envelope on
 * stdin.  Best-effort, like _on_callback_failed (spool/syshook.c starts
 * both): not waited for (the loop reaps it with waitpid(-1)), not
 * retried, not timed out, its exit status ignored.  The onFailure alert
 * task, a real task, is the durable way to alert; this hook is the
 * node-local one.
 */
#include "node/node_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alert.h"
#include "core/traceparent.h"
#include "spool/clock.h"
#include "spool/log.h"
#include "spool/spool.h"
#include "spool/syshook.h"

#define NODE_FAILED_HOOK	"_on_task_failed"
#define ALERT_STATE_DIR		"alerts"	/* state/alerts/<jobCode> */

/*
 * Start <hooks_dir>/_on_task_failed, if it is executable, for the task
 * id (taskCode code) that ended FAILED, result (len bytes, the result
 * envelope, borrowed) on its stdin.  Environment: TASKSPOOL_REQUEST_ID,
 * TASKSPOOL_TASK_CODE, TASKSPOOL_NODE and PATH; with the task's W3C
 * traceparent tp ("" or NULL: none), TRACEPARENT (a child span of it, as
 * an attempt's hook gets) and TASKSPOOL_TRACE_ID.  Errors are logged,
 * never returned (best-effort).
 */
void
node_alert_hook(struct node *n, const char *id, const char *code,
    const char *tp, const void *result, size_t len)
{
	char e1[TASK_ID_MAX + 32], e2[TASK_CODE_MAX + 32],
	    e3[CONFIG_NODE_MAX + 32], e4[CONFIG_PATH_MAX + 8];
	/* Tagged, so that the sweep of processes hooks left behind
	 * (node_slots.c) knows it is no attempt's. */
	char e5[] = "TASKSPOOL_SYSTEM_HOOK=" NODE_FAILED_HOOK;
	char e6[TRACEPARENT_LEN + 16], e7[33 + 24], child[TRACEPARENT_LEN + 1];
	char *envp[] = { e1, e2, e3, e4, e5, NULL, NULL, NULL };
	const char *p = getenv("PATH");
	pid_t pid;

	if (tp != NULL && tp[0] != '\0' && traceparent_child_fresh(tp,
	    child) == 0) {
		char tid[33];

		traceparent_trace_id(child, tid);
		snprintf(e6, sizeof(e6), "TRACEPARENT=%s", child);
		snprintf(e7, sizeof(e7), "TASKSPOOL_TRACE_ID=%s", tid);
		envp[5] = e6;
		envp[6] = e7;
	}

	snprintf(e1, sizeof(e1), "TASKSPOOL_REQUEST_ID=%s", id);
	snprintf(e2, sizeof(e2), "TASKSPOOL_TASK_CODE=%s", code);
	snprintf(e3, sizeof(e3), "TASKSPOOL_NODE=%s", n->cfg->node_id);
	snprintf(e4, sizeof(e4), "PATH=%s", p != NULL ? p :
	    "/usr/local/bin:/usr/bin:/bin");
	pid = syshook_start(n->cfg, NODE_FAILED_HOOK, envp, result, len);
	if (pid < 0)
		log_warn("%s: cannot run %s", id, NODE_FAILED_HOOK);
	else if (pid > 0)
		log_info("%s: started %s (pid %d)", id, NODE_FAILED_HOOK,
		    (int)pid);
}

void
node_alert_prepare(const struct node *n, const struct task *t,
    struct node_alert_req *r)
{
	enum alert_mode m = ALERT_MODE_EVERY;

	memset(r, 0, sizeof(*r));
	if (t->on_failure[0] != '\0')
		memcpy(r->code, t->on_failure, sizeof(r->code));
	else
		snprintf(r->code, sizeof(r->code), "%s", n->cfg->on_failure);
	if (t->on_failure_mode >= 0)
		m = (enum alert_mode)t->on_failure_mode;
	else
		(void)alert_mode_parse(n->cfg->on_failure_mode, &m);
	r->is_alert = t->alert_for[0] != '\0';
	if (t->job_code != NULL)
		snprintf(r->job, sizeof(r->job), "%s", t->job_code);
	else
		m = ALERT_MODE_EVERY;	/* no job: transition is every */
	r->mode = (int)m;
	if (t->traceparent != NULL)
		snprintf(r->traceparent, sizeof(r->traceparent), "%s",
		    t->traceparent);
}

/* state/alerts/, made when missing.  Returns a descriptor or -1. */
static int
alerts_dir(struct node *n)
{
	int fd;

	if (mkdirat(n->sp.dir[SPOOL_STATE], ALERT_STATE_DIR, 0750) != 0 &&
	    errno != EEXIST)
		return -1;
	fd = openat(n->sp.dir[SPOOL_STATE], ALERT_STATE_DIR,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && n->sp.do_fsync)
		(void)fsync(n->sp.dir[SPOOL_STATE]);
	return fd;
}

/* The job's last outcome from dfd/job; NONE when absent or unreadable. */
static enum alert_prev
prev_read(int dfd, const char *job)
{
	char b[16];
	enum alert_prev p = ALERT_PREV_NONE;
	ssize_t len;
	int fd = openat(dfd, job, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return p;
	len = read(fd, b, sizeof(b));
	close(fd);
	if (len > 0 && alert_prev_parse(b, (size_t)len, &p) != 0) {
		log_warn("state/%s/%s: not SUCCESS or FAILED; taken as no "
		    "outcome yet", ALERT_STATE_DIR, job);
		p = ALERT_PREV_NONE;
	}
	return p;
}

/* Whether the encoded task file out is one the claim will accept (size,
 * executeParams depth: the envelope nests the hook's result). */
static int
alert_file_ok(const struct buf *out)
{
	struct task t;
	struct task_error err;
	int ok;

	task_init(&t);
	ok = task_decode(out->data, out->len, &t, &err) == 0;
	task_fini(&t);
	return ok;
}

/* Publish the alert task of kind for c into incoming/ (O_EXCL). */
static int
alert_publish(struct node *n, const struct commit *c, enum alert_kind kind)
{
	struct task t;
	struct buf out, params;
	char file[SPOOL_NAME_MAX], tp[TRACEPARENT_LEN + 1];
	int rc = -1;

	task_init(&t);
	buf_init(&out, 0);
	buf_init(&params, 0);
	if (alert_request_id(c->id, kind, TASK_ID_MAX, t.request_id,
	    sizeof(t.request_id)) != 0)
		goto out;
	if (spool_id_known(&n->sp, t.request_id)) {
		rc = 0;		/* published before: a repeat */
		goto out;
	}
	memcpy(t.task_code, c->alert.code, sizeof(t.task_code));
	memcpy(t.alert_for, c->id, sizeof(t.alert_for));
	t.created_ms = tstime_now_ms();
	if ((c->alert.traceparent[0] != '\0' ? traceparent_child_fresh(
	    c->alert.traceparent, tp) : traceparent_fresh(tp)) == 0 &&
	    (t.traceparent = strdup(tp)) == NULL)
		goto out;
	if (alert_params(c->result.data, c->result.len, kind, &params) != 0)
		goto out;
	t.params = params.data;		/* borrowed: not freed by task_fini */
	t.params_len = params.len;
	snprintf(file, sizeof(file), "%s.json", t.request_id);
	rc = task_encode(&t, &out);
	if (rc == 0 && !alert_file_ok(&out)) {
		/* Too large or too deep a result for a task file: the
		 * alert carries the envelope's identity only. */
		buf_reset(&params);
		buf_reset(&out);
		rc = buf_printf(&params, "{\"requestId\":\"%s\",\"taskCode\":"
		    "\"%s\",\"status\":\"%s\",\"envelopeOmitted\":true,"
		    "\"alert\":\"%s\"}", c->id, c->code, c->dest ==
		    SPOOL_FAILED ? "FAILED" : "SUCCESS", kind ==
		    ALERT_KIND_FAILED ? "failed" : "recovered");
		t.params = params.data;
		t.params_len = params.len;
		if (rc == 0)
			rc = task_encode(&t, &out);
		log_warn("%s: its result does not fit in an alert task; "
		    "the alert carries no envelope", c->id);
	}
	t.params = NULL;
	if (rc == 0 && spool_publish(&n->sp, n->sp.dir[SPOOL_INCOMING], file,
	    out.data, out.len, -1, SPOOL_PUBLISH_EXCL) != 0) {
		rc = errno == EEXIST ? 0 : -1;
		goto out;
	}
	if (rc == 0)
		log_info("%s: alert task %s (%s, %s) published", c->id,
		    t.request_id, c->alert.code, kind == ALERT_KIND_FAILED ?
		    "failed" : "recovered");
out:
	task_fini(&t);
	buf_fini(&out);
	buf_fini(&params);
	return rc;
}

/*
 * Raise the alert of c's conclusion (dest FAILED or DONE; others raise
 * none): decide with alert_decide(), in transition mode from the job's
 * last outcome in state/alerts/<jobCode>, publish the alert task, then
 * record this outcome (writer protocol).  The publish comes first and
 * is O_EXCL, so a repeat after a crash is a no-op.  Called before the
 * terminal move; c->alert.done makes it once per commit.  Returns 0, or
 * -1 with the error logged (the caller retries the commit in a second).
 */
int
node_alert_conclude(struct node *n, struct commit *c)
{
	struct node_alert_req *r = &c->alert;
	enum alert_prev prev = ALERT_PREV_NONE;
	enum alert_kind kind;
	int failed = c->dest == SPOOL_FAILED, dfd = -1, rc = 0;

	if (r->done || r->is_alert || r->code[0] == '\0' || (c->dest !=
	    SPOOL_FAILED && c->dest != SPOOL_DONE))
		return 0;
	if (r->mode == ALERT_MODE_TRANSITION) {
		if ((dfd = alerts_dir(n)) < 0) {
			log_warn("%s: cannot open state/%s/", c->id,
			    ALERT_STATE_DIR);
			return -1;
		}
		prev = prev_read(dfd, r->job);
	}
	kind = alert_decide((enum alert_mode)r->mode, prev, failed, 0);
	if (kind != ALERT_KIND_NONE && alert_publish(n, c, kind) != 0) {
		log_warn("%s: cannot publish its alert task (retried every "
		    "second)", c->id);
		rc = -1;
	} else if (dfd >= 0 && (prev == ALERT_PREV_NONE ||
	    (prev == ALERT_PREV_FAILED) != failed)) {
		const char *w = alert_prev_word(failed);

		if (spool_publish(&n->sp, dfd, r->job, w, strlen(w), -1, 0)
		    != 0) {
			log_warn("%s: cannot write state/%s/%s", c->id,
			    ALERT_STATE_DIR, r->job);
			rc = -1;
		}
	}
	if (dfd >= 0)
		close(dfd);
	if (rc == 0)
		r->done = 1;
	return rc;
}

/*
 * The alert of a conclusion whose move a crash interrupted
 * (node_recover.c: results/<id>.json durable, the task file still in
 * active/): as node_alert_conclude for the task t ending in dest with
 * the envelope res (len bytes, borrowed).  The O_EXCL publish makes it
 * a no-op when the alert task was published before the crash.  Returns
 * 0, or -1 (logged; the caller leaves the move for its next pass).
 */
int
node_alert_interrupted(struct node *n, const struct task *t,
    enum spool_dir dest, const char *res, size_t len)
{
	struct commit c;
	int rc;

	memset(&c, 0, sizeof(c));
	snprintf(c.id, sizeof(c.id), "%s", t->request_id);
	snprintf(c.code, sizeof(c.code), "%s", t->task_code);
	c.dest = dest;
	node_alert_prepare(n, t, &c.alert);
	buf_init(&c.result, 0);
	if (c.alert.code[0] == '\0' || c.alert.is_alert)
		return 0;
	if (buf_append(&c.result, res, len) != 0)
		return -1;
	rc = node_alert_conclude(n, &c);
	buf_fini(&c.result);
	return rc;
}
