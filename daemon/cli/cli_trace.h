/*
 * cli_trace.h — the traceparent a task submitted by "taskspool submit"
 * or "taskspool jobs run-now" keeps (README.md, "Trace context").
 */
#ifndef CLI_TRACE_H
#define CLI_TRACE_H

#include "core/task.h"

/*
 * Give t (borrowed, decoded) its traceparent: the value of --traceparent
 * (flag, NULL when not given; it must be a valid W3C traceparent and, when
 * the task file has the member too, the same trace), else the task file's
 * member, else the environment's TRACEPARENT when it is valid (the
 * OpenTelemetry environment carrier: a hook that submits a task continues
 * its own trace; an invalid one is ignored as W3C Trace Context §3.2 asks
 * of a receiver), else a new trace; a task with dependsOn then has none
 * (the leader's release continues its first traced parent's trace,
 * node/node_depend.c).  Returns 0, or an exit status (64
 * EX_USAGE: the flag is invalid or disagrees with the file; 70
 * EX_SOFTWARE: no memory or random bytes) after a message on stderr.
 */
int cli_trace_choose(const char *flag, struct task *t);

#endif
