/*
 * cli_records — the CLI commands of the records: `db migrate|status`,
 * `history`, `stats` (from MariaDB) and `purge` (the spool, and with
 * --db the database).  See taskspool(1).
 */
#ifndef TASKSPOOL_CLI_RECORDS_H
#define TASKSPOOL_CLI_RECORDS_H

#include "spool/config.h"

/*
 * Whether cmd is one of this module's commands ("db", "history", "stats",
 * "purge").  Returns 1 or 0.
 */
int cli_records_handles(const char *cmd);

/*
 * Run the command argv[0] with its arguments (argv borrowed; getopt may
 * permute it).  cfg (borrowed) is the loaded and finished configuration;
 * json asks for JSON output.  Output to stdout, diagnostics to stderr.
 * Returns an exit status: 0; 64 (EX_USAGE) bad usage; 69
 * (EX_UNAVAILABLE) MariaDB unreachable or not configured; 74 (EX_IOERR)
 * a spool file could not be removed; 65 (EX_DATAERR) the server refused
 * a statement.  Not thread-safe (getopt).
 */
int cli_records_main(int argc, char **argv, const struct config *cfg,
    int json);

/*
 * Parse a duration "N[smhdw]" (no unit = seconds) into ms.  Returns 0, or
 * -1 when s is not one (EINVAL) or overflows (ERANGE).  Pure.
 */
int cli_records_duration(const char *s, int64_t *ms);

#endif
