/*
 * cli_nodes.h — the "taskspool nodes" subcommand of the CLI.
 */
#ifndef CLI_NODES_H
#define CLI_NODES_H

#include <stdio.h>

#include "spool/config.h"
#include "spool/spool.h"

/*
 * Run "taskspool nodes [--json]": list the node registry (coord.h) of the
 * spool sp (borrowed, open) under configuration cfg (borrowed): one line
 * per node "ID STATE AGE LOAD RUNNING/SLOTS [leader]", STATE "alive" when
 * its heartbeat is younger than 3 x heartbeat_ms (the offline threshold)
 * else "offline", AGE in seconds since the heartbeat, LOAD the host's
 * 1-minute load average; with json, one JSON array of objects.  argv[0]
 * is "nodes".  "nodes drain NODE [--reason TEXT] [--force] [--no-wait]"
 * and "nodes resume NODE [--no-wait]" write and remove NODE's drain
 * marker (spool/drain.h) and wait until its heartbeat confirms.
 * Returns an exit status: 0, 64 (EX_USAGE), 68 (EX_NOHOST: drain of a
 * node the registry does not know, without --force), 69
 * (EX_UNAVAILABLE: the registry cannot be read, e.g. Redis down, or the
 * node did not confirm in time), 73 (EX_CANTCREAT: the marker cannot be
 * written or removed).
 */
int cli_nodes_main(const struct config *cfg, const struct spool *sp,
    int json, int argc, char **argv);

/*
 * Print the usage of "taskspool nodes" (listing, drain, resume, their
 * options and exit statuses) to fp.
 */
void cli_nodes_usage(FILE *fp);

#endif
