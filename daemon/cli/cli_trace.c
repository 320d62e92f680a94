/*
 * cli_trace.c — the traceparent of "taskspool submit": the flag, the task
 * file's member, the environment's TRACEPARENT, or a new trace, in that
 * order (cli_trace.h).  Reads the environment; validation is
 * core/traceparent.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli_trace.h"
#include "core/traceparent.h"

int
cli_trace_choose(const char *flag, struct task *t)
{
	char val[TRACEPARENT_LEN + 1];
	struct traceparent tp;
	const char *why = NULL, *env;

	if (flag != NULL) {
		if (traceparent_parse(flag, strlen(flag), &tp, &why) != 0) {
			fprintf(stderr, "taskspool submit: --traceparent: "
			    "\"%s\" is not a W3C traceparent: %s\n", flag,
			    why);
			return EX_USAGE;
		}
		traceparent_format(&tp, val);
		if (t->traceparent != NULL && strcmp(t->traceparent, val)) {
			fprintf(stderr, "taskspool submit: --traceparent "
			    "differs from the task file's traceparent %s\n",
			    t->traceparent);
			return EX_USAGE;
		}
	} else if (t->traceparent != NULL)
		return 0;
	else if ((env = getenv("TRACEPARENT")) != NULL &&
	    traceparent_parse(env, strlen(env), &tp, NULL) == 0)
		traceparent_format(&tp, val);
	else if (t->depends.n > 0)
		return 0;	/* its release continues a parent's trace */
	else if (traceparent_fresh(val) != 0) {
		fprintf(stderr, "taskspool: no random bytes for a new "
		    "trace\n");
		return EX_SOFTWARE;
	}
	free(t->traceparent);
	if ((t->traceparent = strdup(val)) == NULL) {
		fprintf(stderr, "taskspool: out of memory\n");
		return EX_SOFTWARE;
	}
	return 0;
}
