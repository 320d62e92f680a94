/*
 * node — the node daemon's policy: the claim loop, the hook runner's
 * bookkeeping, retries, results, recovery of its own active/<node>/, and
 * the leader's duties (promotion of delayed/ tasks, the reaper).  One
 * thread, one epoll loop over signalfd, inotify and the hooks' pipes.
 */
#ifndef TASKSPOOL_NODE_H
#define TASKSPOOL_NODE_H

#include "spool/config.h"

/*
 * Run the daemon until SIGTERM/SIGINT (graceful drain: no new claims,
 * running hooks finish) or a fatal start-up error.  cfg is borrowed;
 * config_path (may be NULL) is re-read on SIGHUP.  Returns a sysexits
 * code: 0 after a clean drain, EX_OSERR/EX_CANTCREAT/... when start-up
 * failed (already logged).  overrides (borrowed, "key=value" strings from
 * the command line) are re-applied after every reload.
 */
int node_run(struct config *cfg, const char *config_path,
    const char *const *overrides, int noverrides);

#endif
