/*
 * metrics — the daemon's counters, gauges and histograms, rendered in the
 * Prometheus text exposition format 0.0.4 and published atomically as
 * metrics/<node>.prom (the layout node_exporter's textfile collector
 * reads; the HTTP API's GET /metrics serves every node's file).
 *
 * Owns: one process-wide set of metrics (metrics_init), updated by the
 * policy layer at each state change (node.c; the callback sender through
 * metrics_callback_*), and the code that counts the spool's queue
 * directories for the queue-depth gauges.  Every update is thread-safe
 * (one mutex), so a sender thread may call them.
 *
 * Labels stay bounded: task_code takes at most METRICS_CODES_MAX distinct
 * values per daemon (later codes are counted under "_other"); request ids
 * never appear.  Every series carries node="<node>", so the files of all
 * nodes can be served together.
 *
 * Never logs; errors are -1 with errno.  Source: "Exposition formats",
 * prometheus.io/docs/instrumenting/exposition_formats/ (text format
 * 0.0.4), and "Metric and label naming" (base units: seconds; counters
 * end in _total).
 */
#ifndef TASKSPOOL_METRICS_H
#define TASKSPOOL_METRICS_H

#include <stdint.h>

#include "core/buf.h"
#include "spool/spool.h"

#define METRICS_CODES_MAX	256	/* distinct task_code label values */
#define METRICS_SCAN_MAX	100000	/* entries counted per directory */
#define METRICS_SELF_PREFIX	"taskspool_metrics_" /* the file's own gauges */
#define METRICS_WRITTEN	"taskspool_metrics_written_timestamp_seconds"
#define METRICS_INTERVAL	"taskspool_metrics_interval_seconds"

/* Spool-wide counts, read from the directories (metrics_scan_spool). */
struct metrics_spool {
	long pending;		/* incoming/, less the waiting ones */
	long blocked;		/* blocked/: waiting for their parents */
	long waiting;		/* over a max_concurrent limit (state/waiting/) */
	long delayed;		/* delayed/ */
	long dispatched;	/* queue/<node>/, all nodes */
	long running;		/* active/<node>/, all nodes */
	long held;		/* hold/ (coord/hold.h) */
	int truncated;		/* a directory had over METRICS_SCAN_MAX */
	double oldest_pending_s; /* age of the oldest incoming/ file; 0 */
};

/* What the daemon knows of itself at write time. */
struct metrics_node {
	long slots_total;
	long slots_busy;
	int leader;		/* 1 while holding state/leader.lock */
	int stopped;		/* final write at a clean stop: no spool-wide
				 * gauges (queue depth, oldest pending,
				 * heartbeat ages), which would go stale */
	int backpressure;	/* 0, or the errno (ENOSPC, EDQUOT, EROFS)
				 * of the spool write that stopped claims:
				 * taskspool_backpressure{reason} */
	int64_t interval_ms;	/* metrics_interval_ms: the file's promised
				 * rewrite period (readers call it stale past
				 * 3 periods, freshness.h) */
	int drained;		/* 1 while an operator's drain marker holds
				 * its claims: taskspool_node_drained */
};

/*
 * The reason label of taskspool_backpressure for errno e: "enospc",
 * "edquot", "erofs", or NULL for 0 and other values.  Static string.
 */
const char *metrics_backpressure_reason(int e);

/*
 * Start collecting for node (borrowed string copied; at most 64 bytes,
 * the node-id grammar).  Resets every value to zero.  Returns 0, or -1
 * with EINVAL for a node that is not a valid id.
 */
int metrics_init(const char *node);

/* Forget everything (for tests and a clean stop).  Safe to call twice. */
void metrics_fini(void);

/*
 * An attempt of a task with task_code (not a label of this histogram
 * today, kept so the call names its task) started; due_ms is the instant it
 * was due (notBefore, else triggerTime, else createdAt; epoch ms, < 0
 * when unknown), start_ms when it started (epoch ms).  Observes
 * taskspool_trigger_delay_seconds (negative delays count as 0).
 */
void metrics_attempt_started(const char *task_code, int64_t due_ms,
    int64_t start_ms);

/*
 * The first attempt of a task of priority prio (0..9; others are
 * ignored) started at start_ms after waiting since due_ms (the same due
 * instant as metrics_attempt_started; epoch ms, < 0 when unknown: not
 * observed).  Observes taskspool_priority_wait_seconds{priority}
 * (negative waits count as 0).
 */
void metrics_priority_wait(int prio, int64_t due_ms, int64_t start_ms);

/*
 * An attempt ended with outcome (task_outcome_name(): SUCCESS, FAILED,
 * TEMPFAIL, TIMEOUT, LOST, CANCELLED, ERROR).  duration_s >= 0 is
 * observed in taskspool_execution_duration_seconds{task_code}; pass a
 * negative value when no hook ran.  LOST also counts
 * taskspool_lease_lost_total.
 */
void metrics_attempt_ended(const char *task_code, const char *outcome,
    double duration_s);

/* A failed attempt was queued for another one (taskspool_retries_total). */
void metrics_retry(void);

/*
 * A task reached a terminal state: status SUCCESS, FAILED or CANCELLED
 * (taskspool_tasks_total{task_code,status}).  Other values count as
 * FAILED.
 */
void metrics_task_finished(const char *task_code, const char *status);

/*
 * A claim of a task of task_code was refused by an execution rate limit
 * (rate_limit or rate_limit_per_key): the task waits
 * (taskspool_rate_limited_total{task_code}).
 */
void metrics_rate_limited(const char *task_code);

/* A file was moved to corrupt/ (taskspool_corrupt_total). */
void metrics_corrupt(void);

/*
 * For the callback sender: one delivery attempt ended with outcome, one
 * of "ok" (2xx), "retry" (failed, another try is scheduled), "failed"
 * (retries exhausted: CALLBACK_FAILED), "rejected" (not sent: SSRF or
 * URL rules, circuit open).  Anything else counts as "failed".
 * (taskspool_callbacks_total{outcome})
 */
void metrics_callback_outcome(const char *outcome);

/* Number of destinations whose circuit breaker is open now (gauge). */
void metrics_callback_circuit_open(long n);

/*
 * Files waiting in outbox/ by kind: "callback" or "record" (gauge);
 * other kinds are ignored.
 */
void metrics_outbox_depth(const char *kind, long n);

/*
 * Count the queue directories of sp (borrowed) into *out: at most
 * METRICS_SCAN_MAX entries per directory (then out->truncated = 1), names
 * starting with '.' skipped; the oldest incoming/ file by mtime gives
 * oldest_pending_s against now_ms (epoch ms).  Returns 0, or -1 with
 * errno when incoming/ cannot be read (the others are best effort).
 */
int metrics_scan_spool(const struct spool *sp, int64_t now_ms,
    struct metrics_spool *out);

/*
 * Append the whole exposition (text format 0.0.4) to out: the collected
 * counters and histograms, the gauges of self and q, and
 * taskspool_node_heartbeat_age_seconds{peer} for each heartbeat file of
 * sp's state/ (sp may be NULL: no heartbeat series).  The file describes
 * itself in the family prefix METRICS_SELF_PREFIX, gauges a reader keeps
 * even when the file is stale: taskspool_metrics_written_timestamp_seconds
 * (now_ms, the writer's clock, in seconds), and with self also
 * taskspool_metrics_interval_seconds (self->interval_ms) and
 * taskspool_metrics_stopped (self->stopped).  Returns 0, or -1 with errno
 * (ENOMEM, EFBIG from buf).
 */
int metrics_render(struct buf *out, const struct spool *sp, int64_t now_ms,
    const struct metrics_node *self, const struct metrics_spool *q);

/*
 * Scan the spool (unless self->stopped), render, and publish
 * metrics/<node>.prom by the writer protocol (tmp/ + rename; no fsync:
 * the file is rewritten every few seconds).  Returns 0, or -1 with errno.
 */
int metrics_write(const struct spool *sp, int64_t now_ms,
    const struct metrics_node *self);

#endif
