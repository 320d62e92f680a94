/*
 * api_trace.c — the trace context of a submission (README.md, "Trace
 * context"): which W3C traceparent a task submitted through POST /tasks
 * keeps.
 *
 * The order: the body's member traceparent (signed with the body; an
 * invalid one was already refused by task_decode, 422 naming the field);
 * else the request header traceparent (CGI HTTP_TRACEPARENT, API.md
 * §2.2), which is not signed (like Idempotency-Key, §3.3) and which an
 * invalid value leaves out, as W3C Trace Context Level 1 §3.2 and §4.3
 * ask of a receiver ("MUST ignore the traceparent", then start a new
 * trace); else a new trace.  Every task the API accepts so has one,
 * but a task with dependsOn, which the leader's release gives a child of
 * its first traced parent's (node/node_depend.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "core/task.h"
#include "core/traceparent.h"

int
api_trace_choose(struct api_ctx *c, struct task *t)
{
	char hdr[TRACEPARENT_INPUT_MAX + 1];
	char val[TRACEPARENT_LEN + 1];
	struct traceparent tp;

	if (t->traceparent != NULL)
		return 0;
	if (api_header(c, "HTTP_TRACEPARENT", hdr, sizeof(hdr)) == 0 &&
	    traceparent_parse(hdr, strlen(hdr), &tp, NULL) == 0)
		traceparent_format(&tp, val);
	else if (t->depends.n > 0)
		return 0;	/* its release continues a parent's trace */
	else if (traceparent_fresh(val) != 0)
		return -1;
	if ((t->traceparent = strdup(val)) == NULL)
		return -1;
	return 0;
}
