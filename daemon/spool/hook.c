/*
 * hook — spawn a hook in its own process group; see hook.h.
 */
#include "spool/hook.h"

#include "core/buf.h"
#include "spool/hookcred.h"
#include "spool/readfd.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Under AddressSanitizer vfork's shared stack confuses the shadow memory,
 * so sanitizer builds use fork(); production builds use vfork().
 */
#if defined(__SANITIZE_ADDRESS__)
#define HOOK_FORK() fork()
#define HOOK_SHARED_MEMORY 0
#else
#define HOOK_FORK() vfork()
#define HOOK_SHARED_MEMORY 1
#endif

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)	/* <linux/close_range.h> */
#endif

/*
 * The signals this process ignores (SIG_IGN survives execve, so the child
 * resets them).  Sampled once, at the first hook_spawn(): asking the
 * kernel for all 64 dispositions in every vforked child cost 64 system
 * calls per hook while the daemon was suspended.  A disposition set to
 * SIG_IGN after the first spawn would not be reset (the daemon sets its
 * own, SIGPIPE, before it starts any hook).
 */
static sigset_t ignored;
static pthread_once_t ignored_once = PTHREAD_ONCE_INIT;

static void
ignored_sample(void)
{
	sigemptyset(&ignored);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			sigaddset(&ignored, sig);
	}
}

/*
 * Mark every descriptor >= lo close-on-exec: close_range(2) with
 * CLOSE_RANGE_CLOEXEC (Linux 5.11), else fcntl(2) on each up to the
 * soft RLIMIT_NOFILE (at most 65536).  Async-signal-safe system calls
 * only: runs in the vforked child, whose descriptor table is its own
 * (vfork shares memory, not descriptors).
 */
static void
cloexec_from(unsigned int lo)
{
	struct rlimit rl;
	long hi;

	if (syscall(SYS_close_range, lo, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	hi = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ?
	    (long)rl.rlim_cur : 65536;
	for (long fd = lo; fd < hi; fd++) {
		int fl = fcntl((int)fd, F_GETFD);

		if (fl >= 0 && !(fl & FD_CLOEXEC))
			(void)fcntl((int)fd, F_SETFD, fl | FD_CLOEXEC);
	}
}

pid_t
hook_spawn(const struct hook_spec *spec, pid_t *child_pid)
{
	volatile int child_errno = 0;
	volatile int child_step = HOOK_STEP_NONE;
	int errpipe[2] = { -1, -1 };
	pid_t parent = getpid(), pid;
	int dumpable;

	*child_pid = -1;
	if (spec->failed_step != NULL)
		*spec->failed_step = HOOK_STEP_NONE;
	(void)pthread_once(&ignored_once, ignored_sample);
	/* Without shared memory (fork) the exec error comes back on a
	 * close-on-exec pipe instead of through child_errno. */
	if (!HOOK_SHARED_MEMORY && pipe2(errpipe, O_CLOEXEC) != 0)
		return -1;
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	pid = HOOK_FORK();
	if (pid < 0) {
		int e = errno;

		if (errpipe[0] >= 0) {
			close(errpipe[0]);
			close(errpipe[1]);
		}
		errno = e;
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		int fds[3] = { spec->stdin_fd, spec->stdout_fd,
			spec->stderr_fd };
		int e, step = HOOK_STEP_SETUP;

		/* Only async-signal-safe system calls from here on. */
		setpgid(0, 0);
		for (int i = 0; i < 3; i++) {
			if (fds[i] == i) {
				/* Already in place: clear close-on-exec. */
				int fl = fcntl(i, F_GETFD);

				if (fl >= 0)
					fcntl(i, F_SETFD, fl & ~FD_CLOEXEC);
			} else if (dup2(fds[i], i) < 0)
				goto fail;
		}
		/* Every descriptor above 2 closes at execve, also those the
		 * daemon inherited without close-on-exec from whoever
		 * started it (a shell's, a launcher's open secret). */
		cloexec_from(3);
		for (int i = 0; i < spec->nkeep; i++) {
			int fl = fcntl(spec->keep_fds[i], F_GETFD);

			if (spec->keep_fds[i] > 2 && fl >= 0)
				fcntl(spec->keep_fds[i], F_SETFD,
				    fl & ~FD_CLOEXEC);
		}
		for (int i = 0; i < spec->nrlimits; i++)
			if (setrlimit(spec->rlimits[i].resource,
			    &spec->rlimits[i].rl) != 0)
				goto fail;
		step = HOOK_STEP_CRED;
		/* Root's hooks get root's capabilities back at execve
		 * anyway, and an execve that raises them would clear
		 * PR_SET_PDEATHSIG: leave a root daemon's alone. */
		if (spec->cred != NULL && spec->cred->active ?
		    hookcred_become(spec->cred) != 0 : geteuid() != 0 &&
		    hookcred_drop_caps() != 0)
			goto fail;
		/* After the switch: a change of credentials clears it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		step = HOOK_STEP_CHDIR;
		if (spec->workdir != NULL && chdir(spec->workdir) != 0)
			goto fail;
		step = HOOK_STEP_EXEC;
		/* Ignored dispositions survive execve: reset every one.
		 * (The daemon installs no handlers, so none can run here on
		 * the shared stack.) */
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&ignored, sig) == 1)
				signal(sig, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(spec->path, spec->argv, spec->envp);
fail:
		e = errno;
		if (HOOK_SHARED_MEMORY) {
			child_errno = e;
			child_step = step;
		} else {
			int msg[2] = { e, step };

			(void)!write(errpipe[1], msg, sizeof(msg));
		}
		_exit(127);
	}
	if (!HOOK_SHARED_MEMORY) {
		int msg[2] = { 0, HOOK_STEP_NONE };
		ssize_t n;

		close(errpipe[1]);
		do
			n = read(errpipe[0], msg, sizeof(msg));
		while (n < 0 && errno == EINTR);
		close(errpipe[0]);
		if (n == (ssize_t)sizeof(msg)) {
			child_errno = msg[0];
			child_step = msg[1];
		}
	}
	/* A vfork child that changed its uid marked the memory it shares
	 * with us not dumpable (commit_creds): the daemon's stays as it
	 * was. */
	if (HOOK_SHARED_MEMORY && dumpable >= 0 &&
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != dumpable)
		(void)prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
	/* Under fork() set the group from the parent too, so it exists
	 * before we might signal it (the child may not have run yet).  After
	 * vfork() the child has already made it, before its execve. */
	if (!HOOK_SHARED_MEMORY)
		(void)setpgid(pid, pid);
	if (child_errno != 0) {
		*child_pid = pid;
		if (spec->failed_step != NULL)
			*spec->failed_step = (enum hook_step)child_step;
		errno = child_errno;
		return -1;
	}
	return pid;
}

int
hook_kill_group(pid_t pgid, int sig)
{
	if (pgid <= 1) {
		errno = EINVAL;
		return -1;
	}
	return kill(-pgid, sig);
}

/* Whether env (len bytes of NUL-separated entries) has an entry whose
 * first n bytes are s, and (whole) no more. */
static int
env_entry(const char *env, size_t len, const char *s, size_t n, int whole)
{
	for (size_t i = 0; i < len;) {
		size_t el = strnlen(env + i, len - i);

		if ((whole ? el == n : el >= n) && memcmp(env + i, s, n) == 0)
			return 1;
		i += el + 1;
	}
	return 0;
}

/* env holds the entry s exactly. */
static int
env_has(const char *env, size_t len, const char *s)
{
	return env_entry(env, len, s, strlen(s), 1);
}

/* env has an entry for the name of tag ("NAME=value": one starting
 * "NAME="). */
static int
env_has_name(const char *env, size_t len, const char *tag)
{
	const char *eq = strchr(tag, '=');

	return env_entry(env, len, tag, eq != NULL ? (size_t)(eq - tag) + 1 :
	    strlen(tag), 0);
}

/* The largest environment hook_kill_tagged reads of a process (Linux
 * allows a quarter of the stack limit: 2 MiB by default). */
#define HOOK_ENVIRON_MAX	((size_t)8 << 20)

int
hook_kill_tagged(const char *tag1, const char *tag2, const char *tag3)
{
	DIR *dp = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	int n = 0;

	if (dp == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		char path[64];
		struct buf env;
		pid_t pid;
		int fd, rd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* The whole environment (a process can export more than any
		 * fixed buffer: a tag past it must not read as absent);
		 * beyond HOOK_ENVIRON_MAX, only tag3 present counts. */
		buf_init(&env, HOOK_ENVIRON_MAX);
		rd = buf_read_fd(&env, fd);
		close(fd);
		if (env.len > 0 && env_has(env.data, env.len, tag1) &&
		    env_has(env.data, env.len, tag2) && (tag3 == NULL ||
		    env_has(env.data, env.len, tag3) || (rd == 0 &&
		    !env_has_name(env.data, env.len, tag3))) &&
		    kill(pid, SIGKILL) == 0)
			n++;
		buf_fini(&env);
	}
	closedir(dp);
	return n;
}
