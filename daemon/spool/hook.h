/*
 * hook — start a hook process and kill its process group.  Mechanism
 * only: the caller prepares file descriptors and the environment, waits
 * (SIGCHLD/waitpid) and decides what an exit status means.
 *
 * A hook runs in its own process group (pgid = pid), with stdin, stdout
 * and stderr as given, every other descriptor closed (the daemon opens
 * everything O_CLOEXEC), an empty signal mask, default dispositions, the
 * given environment only, the given working directory, and
 * PR_SET_PDEATHSIG = SIGKILL so it dies with the daemon, and the given
 * resource limits (setrlimit(2), a plain system call, made between
 * vfork and execve, so no extra process or exec).  It is started
 * with vfork(2) semantics (no copy of the daemon's memory), as
 * posix_spawn does, but with the prctl posix_spawn cannot do.
 *
 * With a credential (hookcred.h) the child becomes that account after
 * the limits and before chdir, keeps no capability and cannot gain one
 * (PR_SET_NO_NEW_PRIVS); PR_SET_PDEATHSIG is set after that switch,
 * which clears it.  Without one the child still drops the capabilities
 * the daemon holds (a unit's AmbientCapabilities=): a hook started by a
 * non-root daemon has none; a root daemon's keeps root's, as before.
 */
#ifndef TASKSPOOL_HOOK_H
#define TASKSPOOL_HOOK_H

#include <sys/resource.h>
#include <sys/types.h>

/* One setrlimit(2) the child makes before execve (hooklimit.h). */
struct hook_cred;

/* Which step of the child failed (hook_spec.failed_step). */
enum hook_step {
	HOOK_STEP_NONE,			/* no failure, or the fork itself */
	HOOK_STEP_SETUP,		/* descriptors, limits */
	HOOK_STEP_CRED,			/* becoming hook_user: the node's */
	HOOK_STEP_CHDIR,		/* the work directory */
	HOOK_STEP_EXEC			/* execve: the hook's own file */
};

struct hook_rlimit {
	int resource;			/* RLIMIT_NOFILE, RLIMIT_CPU... */
	struct rlimit rl;		/* soft rlim_cur, hard rlim_max */
};

struct hook_spec {
	const char *path;		/* executable to run (absolute) */
	char *const *argv;		/* NULL-terminated; argv[0] set */
	char *const *envp;		/* NULL-terminated environment */
	int stdin_fd, stdout_fd, stderr_fd;	/* become 0, 1, 2 */
	const char *workdir;		/* chdir target, NULL = keep */
	const struct hook_rlimit *rlimits; /* nrlimits entries, applied in
					 * the child after chdir; NULL/0 =
					 * inherit the daemon's limits */
	int nrlimits;
	const struct hook_cred *cred;	/* account to become; NULL or not
					 * active = stay the caller */
	enum hook_step *failed_step;	/* out, may be NULL: the step whose
					 * error hook_spawn returned */
	const int *keep_fds;		/* nkeep descriptors (> 2) the hook
					 * inherits as they are numbered: a
					 * lock they hold then lasts while
					 * any process of the hook's tree
					 * keeps them; NULL/0 = none */
	int nkeep;
};

/*
 * Start the hook.  Returns its pid (also its process-group id), or -1
 * with errno: the fork error, or the chdir/setrlimit/execve error of the
 * child (ENOENT, EACCES, ENOEXEC, EPERM, ...), in which case the child
 * has already exited with status 127 and must still be reaped by the
 * caller.
 * *child_pid receives the pid of such a failed child (else -1), and
 * *spec->failed_step (when not NULL) the step that failed.
 * The signals the caller ignores (SIG_IGN) are sampled at the first call
 * and reset to SIG_DFL in every child; set dispositions before that.
 * Thread-safe.
 */
pid_t hook_spawn(const struct hook_spec *spec, pid_t *child_pid);

/*
 * Send sig to every process of the hook's process group pgid.  Returns 0,
 * or -1 with errno (ESRCH: the group is already gone, not an error for
 * callers that kill "just in case").
 */
int hook_kill_group(pid_t pgid, int sig);

/*
 * Kill (SIGKILL) every process on this host whose environment holds both
 * strings tag1 and tag2 (e.g. "TASKSPOOL_REQUEST_ID=x" and
 * "TASKSPOOL_NODE=n") and tag3 ("NAME=value", may be NULL), or no NAME at
 * all (a hook of a daemon that did not set it): the remains of an
 * attempt whose daemon died, found by scanning /proc.  Used only on
 * recovery, never on the per-task path.  Returns the number of processes
 * signalled (0 when /proc is unavailable).
 */
int hook_kill_tagged(const char *tag1, const char *tag2, const char *tag3);

#endif
