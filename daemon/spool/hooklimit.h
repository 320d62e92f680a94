/*
 * hooklimit — the resource limits (setrlimit(2)) every hook runs under,
 * from the configuration keys hook_limit_nofile, hook_limit_as_bytes,
 * hook_limit_cpu_sec and hook_limit_fsize_bytes (0 = inherit the
 * daemon's limit).  Mechanism only: turn the keys into the list that
 * hook_spawn applies in the child, check them, and explain a signal a
 * limit sends.  No logging.
 *
 * Soft and hard limits: each key sets both to its value (a hook cannot
 * raise it again), except RLIMIT_CPU, whose hard limit is one second
 * above the soft one: at the soft limit the kernel sends SIGXCPU (whose
 * default action ends the process), and only a hook that catches or
 * ignores SIGXCPU gets SIGKILL a CPU second later (setrlimit(2),
 * "RLIMIT_CPU").  A write past RLIMIT_FSIZE sends SIGXFSZ, or fails with
 * EFBIG when the hook ignores that signal (setrlimit(2), "RLIMIT_FSIZE").
 *
 * A limit above the daemon's own hard limit cannot be set by an
 * unprivileged daemon: hooklimit_check_process refuses it at start-up
 * and on SIGHUP, so no hook fails on it.
 */
#ifndef TASKSPOOL_HOOKLIMIT_H
#define TASKSPOOL_HOOKLIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "spool/config.h"
#include "spool/hook.h"

#define HOOKLIMIT_MAX		4	/* resources we set */

/*
 * Fill v (HOOKLIMIT_MAX entries) with the limits cfg (borrowed) sets, in
 * the order nofile, as, cpu, fsize.  Returns how many (0 when every key
 * is 0: hook_spawn then makes no system call for limits).
 */
int hooklimit_from_config(const struct config *cfg, struct hook_rlimit *v);

/*
 * Whether this process may give its children every limit of cfg: each
 * value at most this process's hard limit (getrlimit(2)), which an
 * unprivileged process cannot raise.  Returns 0, or -1 with "key: N is
 * above the daemon's hard limit M ..." in why.
 */
int hooklimit_check_process(const struct config *cfg, char *why,
    size_t whylen);

/*
 * Explain a hook's death by signal sig when a configured limit sends it:
 * SIGXCPU with hook_limit_cpu_sec, SIGXFSZ with hook_limit_fsize_bytes,
 * SIGKILL with hook_limit_cpu_sec when the hook used cpu_ms (its user +
 * system CPU time, from wait4; -1 = unknown) of at least the soft
 * limit (it survived SIGXCPU; the hard limit sent SIGKILL).  Writes
 * "; <text>" into out (len bytes) and returns 1, or writes "" and
 * returns 0 when no limit explains the signal.
 */
int hooklimit_explain(const struct config *cfg, int sig, int64_t cpu_ms,
    char *out, size_t len);

#endif
