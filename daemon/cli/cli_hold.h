/*
 * cli_hold.h — the "taskspool hold" and "taskspool release" subcommands
 * of the CLI (Postfix's postsuper -h / -H; coord/hold.h).
 */
#ifndef CLI_HOLD_H
#define CLI_HOLD_H

#include <stdio.h>

#include "spool/config.h"
#include "spool/spool.h"

/*
 * Run "taskspool hold ID|--code C" or "taskspool release ID|--code C|
 * --all" (argv[0] names which) on the spool sp (borrowed, open) under
 * configuration cfg (borrowed).  hold ID moves a pending task into hold/
 * (HELD), or asks the node running it to hold its next retry; --code C
 * holds every pending task of code C present now.  release puts a held
 * task back (incoming/, or delayed/ when its notBefore is still ahead).
 * Prints one line per task (json: one object, or an array for --code
 * and --all).  Returns an exit status: 0 (done, or nothing to do: already
 * held, not held), 64 (EX_USAGE), 66 (EX_NOINPUT: no such task), 69
 * (EX_UNAVAILABLE: the task is finished), 74 (EX_IOERR).
 */
int cli_hold_main(const struct config *cfg, const struct spool *sp,
    int json, int argc, char **argv);

/*
 * For `taskspool status ID`: when task id (in directory where) is held
 * (hold/) or has a hold request (running), write "held since <RFC
 * 3339>, from <dir>/, by <who>" or "hold requested <since>: its next
 * retry is held" into out (len bytes); else leave out as it is.
 */
void cli_hold_reason(const struct spool *sp, const char *id,
    enum spool_dir where, char *out, size_t len);

/* Print the usage of "taskspool hold" and "release" to fp. */
void cli_hold_usage(FILE *fp);

#endif
