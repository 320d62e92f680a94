/*
 * syshook — starting a system hook (a file of hooks_dir whose name
 * starts with "_": _on_callback_failed, _on_task_failed) with a memory
 * file on stdin, the daemon's stderr for its output, and the limits and
 * credentials of every hook (hook_limit_*, hook_user), in the directory
 * "/" (not the daemon's).  Not waited for:
 * the daemon's loop reaps it (waitpid(-1)).  Follows the contract of
 * taskspool-hooks(7), "The system hook _on_callback_failed".
 */
#ifndef TASKSPOOL_SYSHOOK_H
#define TASKSPOOL_SYSHOOK_H

#include <stddef.h>
#include <sys/types.h>

#include "spool/config.h"

/*
 * Start <cfg->hooks_dir>/<name> with argv[0] = name, envp (NULL-ended,
 * borrowed) and the len bytes at data on its stdin.  Returns the pid,
 * 0 when the file is not executable (nothing to run), or -1 with errno
 * set when the memory file or the spawn fails (the caller logs it).
 */
pid_t syshook_start(const struct config *cfg, const char *name,
    char *const *envp, const void *data, size_t len);

#endif
