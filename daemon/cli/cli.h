/*
 * cli — the `taskspool` command line; see cli.c and taskspool(1).
 */
#ifndef TASKSPOOL_CLI_H
#define TASKSPOOL_CLI_H

/*
 * Run the CLI with the program's argc/argv.  Returns the process exit
 * status (0, 1 = task FAILED, 2 = task CANCELLED, or a sysexits code).
 */
int cli_main(int argc, char **argv);

#endif
