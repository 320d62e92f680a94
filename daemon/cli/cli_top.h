/*
 * cli_top — `taskspool top` (a live view refreshed like top(1)) and
 * `taskspool status` without arguments (the same view printed once).
 *
 * What it shows, all read from the spool without any daemon's help: the
 * nodes (state/heartbeat.<node>: pid, slots, running hooks, heartbeat
 * age, leader), the queue depth by state (counted from the directories,
 * as the daemons' taskspool_queue_depth), the age of the oldest pending
 * task, fire lag and run time percentiles and task totals (summed over
 * every metrics/<node>.prom), and the most recent failures (failed/ and
 * their results/).  Percentiles are estimated from the histogram buckets
 * by linear interpolation inside the bucket, as PromQL's
 * histogram_quantile() does.
 */
#ifndef CLI_TOP_H
#define CLI_TOP_H

#include "spool/config.h"

/*
 * Run "taskspool top [--once] [-i MS]"; argv[0] is "top".  cfg (borrowed)
 * is the located and finished configuration (its spool, heartbeat_ms).
 * On a terminal the view is redrawn every MS milliseconds (default 1000,
 * 100..60000) until q, Q or an interrupt; with --once, or when standard
 * output is not a terminal, one frame is printed.  Returns an exit
 * status: 0, 64 (EX_USAGE) bad usage, 78 (EX_CONFIG) the spool cannot be
 * opened.  Not thread-safe (getopt, terminal state).
 */
int	cli_top_main(int argc, char **argv, const struct config *cfg);

/*
 * Print one frame of the view for cfg's spool to standard output, at
 * most 24 lines of at most 80 columns; with json, the same facts as one
 * JSON object on one line instead (README.md, "Monitoring": nodes,
 * queue depth by state, fire lag and run time quantiles in seconds from
 * the metrics files, task counters, recent failures).  Returns 0 or 78
 * (EX_CONFIG).
 */
int	cli_top_summary(const struct config *cfg, int json);

#endif /* CLI_TOP_H */
