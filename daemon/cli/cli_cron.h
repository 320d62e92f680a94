/*
 * cli_cron.h — the "taskspool cron" subcommand of the CLI.
 */
#ifndef CLI_CRON_H
#define CLI_CRON_H

/*
 * cli_cron_main() runs "taskspool cron next|explain EXPR [--dialect
 * vixie|quartz|systemd] [--tz ZONE] [--from RFC3339] [-n N]"; argv[0] is
 * "cron", argv[1] the subcommand ("explain": cli_cronexplain.h).  next
 * prints the next N (default 5) fire instants of EXPR, one
 * per line, as RFC 3339 with the zone's offset at each instant ("Z" only
 * for UTC), to stdout; diagnostics go to stderr.  argv is borrowed (getopt
 * may permute it).  Reads the clock only when --from is absent, and the
 * environment (TZ) and /etc/timezone, /etc/localtime only when --tz is.
 *
 * Returns an exit status, never exits: 0 ok (also when fewer than N exist:
 * a note on stderr), 1 no fire time at all, 64 (EX_USAGE) bad usage, 65
 * (EX_DATAERR) EXPR does not parse, 74 (EX_IOERR) stdout write error.
 * Not thread-safe (getopt_long state).
 */
int	cli_cron_main(int argc, char **argv);

#endif /* CLI_CRON_H */
