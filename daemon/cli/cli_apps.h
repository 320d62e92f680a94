/*
 * cli_apps — `taskspool apps`: manage the HTTP API's callers in
 * apps.conf (see apps.h, API.md §3.1).
 */
#ifndef TASKSPOOL_CLI_APPS_H
#define TASKSPOOL_CLI_APPS_H

/*
 * Run `taskspool apps SUBCOMMAND ...` (argv[0] is "apps") on the file
 * path (borrowed).  json: machine-readable list.  Prints a new secret
 * exactly once, on stdout.  Returns a sysexits(3) code (0 on success,
 * 64 usage, 65 bad value, 66 no such app, 73 app exists, 74 I/O error,
 * 78 the file is invalid).
 */
int cli_apps_main(int argc, char **argv, const char *path, int json);

#endif
