/*
 * cli_jobs.h — the "taskspool jobs" subcommand of the CLI: recurring job
 * definitions in the spool's jobs/ directory.
 */
#ifndef CLI_JOBS_H
#define CLI_JOBS_H

/*
 * cli_jobs_main() runs "taskspool jobs SUBCOMMAND ..."; argv[0] is "jobs",
 * argv[1] the subcommand:
 *
 *   list                 every job: code, kind and expression, zone,
 *                        enabled, next fire in the job's zone
 *   add FILE|- [--replace]  validate a definition (job_decode, its zone,
 *                        an executable hooks_dir/<taskCode>), stamp
 *                        createdAt if absent, publish jobs/<jobCode>.json
 *                        exclusively (or replacing, with --replace)
 *   enable JOB, disable JOB  rewrite the file with "enabled" set
 *   remove JOB           delete jobs/JOB.json
 *   run-now JOB          publish the task JOB.<now> into incoming/
 *                        exclusively and print its requestId
 *   next JOB [N] [--from RFC3339]  the next N (default 5) fire times, one
 *                        per line: the instant in the job's zone (RFC 3339
 *                        with offset), a space, the same instant in UTC
 *
 * --help works everywhere; --json (or json != 0) gives JSON for list,
 * next and run-now.  spool_path (borrowed) is the configured spool, opened
 * here with no node; hooks_dir (borrowed) is where hooks live (NULL skips
 * the hook check); do_fsync as the config's "fsync".  All writes follow
 * the spool's writer protocol (spool_publish).  argv is borrowed (getopt
 * may permute it).  Reads the clock (now) and the host's zone (TZ,
 * /etc/timezone, /etc/localtime) for jobs without "timezone".
 *
 * Returns an exit status, never exits: 0 ok, 64 (EX_USAGE) bad usage (or
 * an unusable TZ when a job needs the host's zone, as `cron next`), 65
 * (EX_DATAERR) invalid definition or no executable hook (the message
 * names the field and the rule), 66 (EX_NOINPUT) no such job or input
 * file, 73 (EX_CANTCREAT) the job or task already exists, 74 (EX_IOERR)
 * I/O error, 78 (EX_CONFIG) the spool cannot be opened (as the rest of
 * the CLI).  `list` shows invalid definitions as lines, exit 0.
 * Diagnostics go to stderr.  Not thread-safe (getopt_long state).
 */
int	cli_jobs_main(int argc, char **argv, const char *spool_path,
	    const char *hooks_dir, int do_fsync, int json);

#endif /* CLI_JOBS_H */
