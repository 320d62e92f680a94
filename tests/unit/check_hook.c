/*
 * check_hook.c — unit tests for daemon/spool/hook.c.
 *
 * The hooks are /bin/sh -c scripts that report what they see (their
 * stdin, /proc/$$/environ, /proc/$$/status, their cwd) on stdout, so the
 * expectations are hook.h's promises: stdin/stdout/stderr as given, own
 * process group (pgid = pid), exactly the given environment, the given
 * working directory, an empty signal mask and default dispositions,
 * PR_SET_PDEATHSIG = SIGKILL; an exec or chdir failure returns -1 with
 * the child's errno and a pid to reap (exit status 127); the given
 * setrlimit(2) limits, as /proc/self/limits shows them, and a limit the
 * kernel refuses as a spawn error; hook_kill_group reaches
 * grandchildren.  Check's fork mode keeps each test's signal
 * mask, dispositions and subreaper flag to itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "spool/hook.h"
#include "spool/hookcred.h"
#include "unit.h"

/*
 * Every test's directory is made inside basedir, which main() creates
 * and removes: Check skips the teardown of a failed test.
 */
static char basedir[128];
static char tmpdir[200];

static void
setup(void)
{
	unit_case_mkdtemp(tmpdir, sizeof(tmpdir), basedir, "t");
	alarm(15);	/* no test may hang */
}

static void
teardown(void)
{
	unit_rmtree(tmpdir);
}

/* An unlinked close-on-exec temporary file. */
static int
tmpfd(void)
{
	char p[300];
	int fd;

	snprintf(p, sizeof(p), "%s/out.XXXXXX", tmpdir);
	fd = mkostemp(p, O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	unlink(p);
	return fd;
}

/* Everything in fd from offset 0, as a new string. */
static char *
readall(int fd, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *p = malloc(cap);
	ssize_t n;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	while ((n = read(fd, p + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			cap *= 2;
			p = realloc(p, cap);
			ck_assert_ptr_nonnull(p);
		}
	}
	ck_assert_int_ge(n, 0);
	p[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return p;
}

struct run {
	int status;		/* from waitpid */
	char *out, *err;	/* new */
	size_t outlen;
};

/*
 * Run script with /bin/sh -c, stdin = in (through a pipe), the given
 * environment and workdir; wait for it.
 */
static void
run_sh(const char *script, char *const *envp, const char *in,
    const char *workdir, struct run *r)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	struct hook_spec spec;
	int p[2], out = tmpfd(), err = tmpfd();
	pid_t pid, failed;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(write(p[1], in, strlen(in)), (ssize_t)strlen(in));
	close(p[1]);		/* EOF after in */
	memset(&spec, 0, sizeof(spec));
	spec.path = "/bin/sh";
	spec.argv = argv;
	spec.envp = envp;
	spec.stdin_fd = p[0];
	spec.stdout_fd = out;
	spec.stderr_fd = err;
	spec.workdir = workdir;
	pid = hook_spawn(&spec, &failed);
	ck_assert_msg(pid > 0, "hook_spawn: %s", strerror(errno));
	ck_assert_int_eq(failed, -1);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &r->status, 0), pid);
	r->out = readall(out, &r->outlen);
	r->err = readall(err, NULL);
	close(out);
	close(err);
}

static void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static char *const empty_env[] = { NULL };

/* ---- stdio, process group --------------------------------------------- */

START_TEST(test_stdio)
{
	struct run r;

	run_sh("/bin/cat; echo to-err >&2; echo more; exit 3", empty_env,
	    "hello\nworld\n", NULL, &r);
	ck_assert(WIFEXITED(r.status));
	ck_assert_int_eq(WEXITSTATUS(r.status), 3);
	ck_assert_str_eq(r.out, "hello\nworld\nmore\n");
	ck_assert_str_eq(r.err, "to-err\n");
	run_free(&r);

	/* stdin at EOF at once */
	run_sh("/bin/cat; echo end", empty_env, "", NULL, &r);
	ck_assert_int_eq(WEXITSTATUS(r.status), 0);
	ck_assert_str_eq(r.out, "end\n");
	run_free(&r);
}
END_TEST

/* A descriptor that is already 0/1/2 in the parent (and close-on-exec)
 * must still reach the hook. */
START_TEST(test_stdio_already_in_place)
{
	char *argv[] = { "sh", "-c", "/bin/cat", NULL };
	struct hook_spec spec;
	int p[2], out = tmpfd(), status;
	pid_t pid, failed;
	char *got;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(write(p[1], "in place\n", 9), 9);
	close(p[1]);
	ck_assert_int_eq(dup3(p[0], 0, O_CLOEXEC), 0);
	close(p[0]);
	memset(&spec, 0, sizeof(spec));
	spec.path = "/bin/sh";
	spec.argv = argv;
	spec.envp = empty_env;
	spec.stdin_fd = 0;
	spec.stdout_fd = out;
	spec.stderr_fd = out;
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	got = readall(out, NULL);
	ck_assert_str_eq(got, "in place\n");
	free(got);
	close(out);
}
END_TEST

START_TEST(test_process_group)
{
	/* The hook blocks on stdin until we close it, so we can look at it
	 * while it runs; it also reports its own pid and pgrp from
	 * /proc/self/stat ("pid (comm) state ppid pgrp ..."). */
	char *argv[] = { "sh", "-c",
	    "read -r pid comm state ppid pgrp rest < /proc/$$/stat; "
	    "echo \"$pid $pgrp\"; /bin/cat >/dev/null", NULL };
	struct hook_spec spec;
	int p[2], out = tmpfd(), status;
	pid_t pid, failed;
	char *got, want[64];

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	memset(&spec, 0, sizeof(spec));
	spec.path = "/bin/sh";
	spec.argv = argv;
	spec.envp = empty_env;
	spec.stdin_fd = p[0];
	spec.stdout_fd = out;
	spec.stderr_fd = out;
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_gt(pid, 0);
	/* pgid == pid, and not ours */
	ck_assert_int_eq(getpgid(pid), pid);
	ck_assert_int_ne(getpgid(0), pid);
	close(p[1]);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	got = readall(out, NULL);
	snprintf(want, sizeof(want), "%d %d\n", (int)pid, (int)pid);
	ck_assert_str_eq(got, want);
	free(got);
	close(out);
}
END_TEST

/* ---- environment and working directory -------------------------------- */

START_TEST(test_environment_exact)
{
	char *env[] = { "A=1", "B=two words", "EMPTY=",
	    "TASKSPOOL_REQUEST_ID=r-1", NULL };
	static const char want[] = "A=1\0B=two words\0EMPTY=\0"
	    "TASKSPOOL_REQUEST_ID=r-1";	/* + final NUL */
	struct run r;

	/* Something in our own environment that must not leak. */
	ck_assert_int_eq(setenv("TS_LEAK_CHECK", "leak", 1), 0);
	/* /proc/PID/environ is exactly the envp execve got. */
	run_sh("/bin/cat /proc/$$/environ", env, "", NULL, &r);
	ck_assert_int_eq(WEXITSTATUS(r.status), 0);
	ck_assert_uint_eq(r.outlen, sizeof(want));
	ck_assert_mem_eq(r.out, want, sizeof(want));
	run_free(&r);

	/* An empty environment stays empty. */
	run_sh("/bin/cat /proc/$$/environ", empty_env, "", NULL, &r);
	ck_assert_uint_eq(r.outlen, 0);
	run_free(&r);
}
END_TEST

START_TEST(test_workdir)
{
	char real[PATH_MAX], want[PATH_MAX + 2], cwd[PATH_MAX];
	struct run r;

	ck_assert_ptr_nonnull(realpath(tmpdir, real));
	snprintf(want, sizeof(want), "%s\n", real);
	run_sh("/bin/pwd -P", empty_env, "", tmpdir, &r);
	ck_assert_str_eq(r.out, want);
	run_free(&r);

	/* NULL keeps the parent's directory */
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	run_sh("/bin/pwd -P", empty_env, "", NULL, &r);
	ck_assert_str_eq(r.out, "/\n");
	run_free(&r);
}
END_TEST

/* ---- signals ---------------------------------------------------------- */

/* The hex mask on the line "<field>:" of the hook's /proc/$$/status. */
static unsigned long long
child_sigfield(const char *field)
{
	char script[256];
	struct run r;
	unsigned long long v;
	char *end;

	snprintf(script, sizeof(script), "while read -r k v; do "
	    "case $k in %s:) echo \"$v\";; esac; done < /proc/$$/status",
	    field);
	run_sh(script, empty_env, "", NULL, &r);
	ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0,
	    "status %d, err %s", r.status, r.err);
	ck_assert_uint_eq(r.outlen, 17);	/* 16 hex digits + LF */
	v = strtoull(r.out, &end, 16);
	ck_assert(*end == '\n');
	run_free(&r);
	return v;
}

START_TEST(test_signal_mask_empty)
{
	sigset_t set;
	unsigned long long blk;

	/* The daemon blocks signals it reads through signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	blk = child_sigfield("SigBlk");
	ck_assert_msg(blk == 0, "SigBlk %016llx in the hook", blk);
}
END_TEST

START_TEST(test_sigpipe_default)
{
	struct hook_spec spec;
	char *argv[] = { "sh", "-c", "echo x; echo y; exit 0", NULL };
	int p[2], err = tmpfd(), status;
	pid_t pid, failed;

	/* The daemon ignores SIGPIPE; the hook must not inherit that. */
	ck_assert(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
	/* bit SIGPIPE-1 = 12 of SigIgn */
	ck_assert_msg((child_sigfield("SigIgn") & (1ULL << (SIGPIPE - 1))) ==
	    0, "SIGPIPE ignored in the hook");

	/* Behaviour: writing to a pipe with no reader kills the hook by
	 * SIGPIPE (instead of an EPIPE error it would have to handle). */
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	memset(&spec, 0, sizeof(spec));
	spec.path = "/bin/sh";
	spec.argv = argv;
	spec.envp = empty_env;
	spec.stdin_fd = err;
	spec.stdout_fd = p[1];
	spec.stderr_fd = err;
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_gt(pid, 0);
	close(p[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE,
	    "status %#x", status);
	close(err);
}
END_TEST

/* hook.h: "default dispositions" -- no signal the parent ignores stays
 * ignored in the hook. */
START_TEST(test_dispositions_default)
{
	static const int sigs[] = { SIGPIPE, SIGHUP, SIGINT, SIGQUIT,
		SIGTERM, SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU,
		SIGXFSZ };
	unsigned long long ign, ours = 0;

	/* Only the signals ignored here are looked at: whoever started
	 * this test may have left others (e.g. glibc-internal ones) ignored,
	 * which no C program can reset. */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		ck_assert(signal(sigs[i], SIG_IGN) != SIG_ERR);
		ours |= 1ULL << (sigs[i] - 1);
	}
	ign = child_sigfield("SigIgn") & ours;
	ck_assert_msg(ign == 0, "signals still ignored in the hook: SigIgn "
	    "bits %016llx", ign);
}
END_TEST

/* ---- failures --------------------------------------------------------- */

static void
expect_spawn_error(const char *path, const char *workdir, int want_errno)
{
	char *argv[] = { (char *)path, NULL };
	struct hook_spec spec;
	int fd = tmpfd(), status;
	pid_t pid, failed = 0;

	memset(&spec, 0, sizeof(spec));
	spec.path = path;
	spec.argv = argv;
	spec.envp = empty_env;
	spec.stdin_fd = spec.stdout_fd = spec.stderr_fd = fd;
	spec.workdir = workdir;
	errno = 0;
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_eq(pid, -1);
	ck_assert_msg(errno == want_errno, "%s: errno %d (%s), want %d",
	    path, errno, strerror(errno), want_errno);
	ck_assert_int_gt(failed, 0);		/* a child to reap */
	ck_assert_int_eq(waitpid(failed, &status, 0), failed);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 127);
	close(fd);
}

START_TEST(test_exec_errors)
{
	char p[300], dir[300];
	int fd;

	expect_spawn_error("/nonexistent/hook", NULL, ENOENT);
	snprintf(p, sizeof(p), "%s/missing", tmpdir);
	expect_spawn_error(p, NULL, ENOENT);
	/* not executable */
	snprintf(p, sizeof(p), "%s/noexec", tmpdir);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	ck_assert_int_eq(chmod(p, 0644), 0);
	expect_spawn_error(p, NULL, EACCES);
	/* a directory is not executable either */
	expect_spawn_error(tmpdir, NULL, EACCES);
	/* the working directory does not exist */
	snprintf(dir, sizeof(dir), "%s/nodir", tmpdir);
	expect_spawn_error("/bin/sh", dir, ENOENT);
}
END_TEST

/* ---- resource limits --------------------------------------------------- */

/* The "soft hard" columns of the line of a /proc/<pid>/limits text that
 * starts with name, into out. */
static void
limits_line(const char *text, const char *name, char *out, size_t len)
{
	const char *l = strstr(text, name);
	char soft[32], hard[32];

	ck_assert_msg(l != NULL, "no \"%s\" in %s", name, text);
	l += strlen(name);
	ck_assert_int_eq(sscanf(l, "%31s %31s", soft, hard), 2);
	snprintf(out, len, "%s %s", soft, hard);
}

/* A /bin/sh spec with fd as stdin, stdout and stderr and n limits. */
static void
sh_spec(struct hook_spec *spec, char **argv, int fd,
    const struct hook_rlimit *rl, int n)
{
	memset(spec, 0, sizeof(*spec));
	spec->path = "/bin/sh";
	spec->argv = argv;
	spec->envp = empty_env;
	spec->stdin_fd = spec->stdout_fd = spec->stderr_fd = fd;
	spec->rlimits = rl;
	spec->nrlimits = n;
}

START_TEST(test_rlimits)
{
	struct hook_rlimit rl[3] = {
		{ RLIMIT_NOFILE, { 32, 32 } },
		{ RLIMIT_CPU, { 7, 8 } },
		{ RLIMIT_FSIZE, { 4096, 4096 } },
	};
	char *argv[] = { "sh", "-c", "cat /proc/self/limits; ulimit -n",
	    NULL };
	struct hook_spec spec;
	int out = tmpfd(), status;
	pid_t pid, failed;
	char *got, line[80];

	sh_spec(&spec, argv, out, rl, 3);
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	got = readall(out, NULL);
	limits_line(got, "Max open files", line, sizeof(line));
	ck_assert_str_eq(line, "32 32");
	limits_line(got, "Max cpu time", line, sizeof(line));
	ck_assert_str_eq(line, "7 8");
	limits_line(got, "Max file size", line, sizeof(line));
	ck_assert_str_eq(line, "4096 4096");
	ck_assert_ptr_nonnull(strstr(got, "\n32\n"));	/* ulimit -n */
	free(got);
	close(out);
}
END_TEST

/* A limit the kernel refuses (soft above hard: EINVAL for everyone) is
 * a spawn error with a child to reap, like a failed exec. */
START_TEST(test_rlimit_refused)
{
	struct hook_rlimit rl[1] = { { RLIMIT_NOFILE, { 64, 32 } } };
	char *argv[] = { "sh", "-c", "exit 0", NULL };
	struct hook_spec spec;
	int fd = tmpfd(), status;
	pid_t pid, failed = 0;

	sh_spec(&spec, argv, fd, rl, 1);
	errno = 0;
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_eq(pid, -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_gt(failed, 0);
	ck_assert_int_eq(waitpid(failed, &status, 0), failed);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 127);
	close(fd);
}
END_TEST

/* ---- killing ---------------------------------------------------------- */

/* Read one line (a pid) from fd. */
static pid_t
read_pid(int fd)
{
	char line[32];
	size_t n = 0;

	while (n < sizeof(line) - 1) {
		ssize_t k = read(fd, line + n, 1);

		ck_assert_int_eq(k, 1);
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	return (pid_t)atoi(line);
}

START_TEST(test_kill_group_grandchild)
{
	char *argv[] = { "sh", "-c",
	    "/bin/sleep 100 & echo $!; /bin/sleep 100", NULL };
	struct hook_spec spec;
	int p[2], null = open("/dev/null", O_RDWR | O_CLOEXEC), status;
	pid_t pid, failed, gpid, w;

	/* Orphans are re-parented to us, so we can reap the grandchild
	 * and then see it gone. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	memset(&spec, 0, sizeof(spec));
	spec.path = "/bin/sh";
	spec.argv = argv;
	spec.envp = empty_env;
	spec.stdin_fd = null;
	spec.stdout_fd = p[1];
	spec.stderr_fd = null;
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_gt(pid, 0);
	close(p[1]);
	gpid = read_pid(p[0]);
	ck_assert_int_gt(gpid, 1);
	ck_assert_int_ne(gpid, pid);
	ck_assert_int_eq(getpgid(gpid), pid);	/* same group */

	ck_assert_int_eq(hook_kill_group(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* reap the grandchild (ours now, as subreaper) — unless sh, still
	 * in its wait for the foreground sleep when the group signal
	 * landed, reaped it first: both are SIGKILLed at once and die in
	 * either order. */
	w = waitpid(gpid, &status, 0);
	if (w == gpid)
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	else
		ck_assert_msg(errno == ECHILD, "waitpid grandchild: %s",
		    strerror(errno));
	/* sh may have forked the foreground sleep too: reap everything
	 * (a zombie still counts as a group member). */
	while ((w = waitpid(-1, &status, 0)) > 0)
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ck_assert_int_eq(errno, ECHILD);
	errno = 0;
	ck_assert_int_eq(kill(gpid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	errno = 0;
	ck_assert_int_eq(kill(pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	/* the group is gone: ESRCH, "not an error" for callers */
	errno = 0;
	ck_assert_int_eq(hook_kill_group(pid, SIGKILL), -1);
	ck_assert_int_eq(errno, ESRCH);
	close(p[0]);
	close(null);
}
END_TEST

START_TEST(test_kill_group_refuses_special_pgids)
{
	/* kill(-0) is our own group, kill(-1) every process we may signal:
	 * hook_kill_group must never turn into those.  Signal 0 only
	 * checks, so nothing is hurt if the guard were missing. */
	ck_assert_int_eq(hook_kill_group(0, 0), -1);
	ck_assert_int_eq(hook_kill_group(1, 0), -1);
	ck_assert_int_eq(hook_kill_group(-1, 0), -1);
	ck_assert_int_eq(hook_kill_group(-getpid(), 0), -1);
}
END_TEST

START_TEST(test_dies_with_parent)
{
	/* PR_SET_PDEATHSIG = SIGKILL: an intermediate process spawns the
	 * hook and exits; the hook (re-parented to us, the subreaper) must
	 * die by SIGKILL. */
	int p[2], status;
	pid_t mid, hook;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ck_assert_int_eq(pipe(p), 0);
	mid = fork();
	ck_assert_int_ge(mid, 0);
	if (mid == 0) {
		char *argv[] = { "sleep", "100", NULL };
		struct hook_spec spec;
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		pid_t h, failed;

		close(p[0]);
		memset(&spec, 0, sizeof(spec));
		spec.path = "/bin/sleep";
		spec.argv = argv;
		spec.envp = empty_env;
		spec.stdin_fd = spec.stdout_fd = spec.stderr_fd = null;
		h = hook_spawn(&spec, &failed);
		(void)!write(p[1], &h, sizeof(h));
		_exit(h > 0 ? 0 : 1);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &hook, sizeof(hook)), sizeof(hook));
	close(p[0]);
	ck_assert_int_gt(hook, 0);
	ck_assert_int_eq(waitpid(mid, &status, 0), mid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(waitpid(hook, &status, 0), hook);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	    "hook status %#x", status);
}
END_TEST


/* ---- hook_user (hookcred.h) ------------------------------------------- */

/* nobody/nogroup on Debian; any unused ids would do. */
#define NOBODY	65534
#define OTHER	65533

START_TEST(test_cred_refused_is_cred_step)
{
	/* Without CAP_SETUID the switch fails in the child, before
	 * execve: EPERM at HOOK_STEP_CRED (the node's trouble), the failed
	 * child exited 127.  Run in a child process that first drops to
	 * nobody when we are root (setresuid from root clears the
	 * capabilities). */
	pid_t t = fork();
	int ws;

	ck_assert_int_ge(t, 0);
	if (t == 0) {
		char *argv[] = { "true", NULL };
		struct hook_cred hc;
		struct hook_spec spec;
		enum hook_step step = HOOK_STEP_NONE;
		pid_t pid, failed = -1;
		int e, st = 0;

		if (geteuid() == 0 && (syscall(SYS_setresgid, NOBODY, NOBODY,
		    NOBODY) != 0 || syscall(SYS_setresuid, NOBODY, NOBODY,
		    NOBODY) != 0))
			_exit(2);
		memset(&hc, 0, sizeof(hc));
		hc.active = 1;
		hc.uid = OTHER;
		hc.gid = OTHER;
		memset(&spec, 0, sizeof(spec));
		spec.path = "/bin/true";
		spec.argv = argv;
		spec.envp = empty_env;
		spec.stdin_fd = 0;
		spec.stdout_fd = 1;
		spec.stderr_fd = 2;
		spec.cred = &hc;
		spec.failed_step = &step;
		pid = hook_spawn(&spec, &failed);
		e = errno;
		if (failed > 0)
			(void)waitpid(failed, &st, 0);
		_exit(pid == -1 && e == EPERM && step == HOOK_STEP_CRED &&
		    failed > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127 ?
		    0 : 1);
	}
	ck_assert_int_eq(waitpid(t, &ws, 0), t);
	ck_assert(WIFEXITED(ws));
	ck_assert_int_eq(WEXITSTATUS(ws), 0);
}
END_TEST

START_TEST(test_cred_become_no_capability)
{
	/* As root: the hook is uid/gid nobody with only the groups given,
	 * no capability in any set, no_new_privs set (proc(5) status). */
	char *argv[] = { "sh", "-c", "id -u; id -g; id -G; grep -E "
	    "'^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' /proc/self/status", NULL };
	static const char want[] = "65534\n65534\n65534\n"
	    "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
	    "CapEff:\t0000000000000000\nCapAmb:\t0000000000000000\n"
	    "NoNewPrivs:\t1\n";
	char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	struct hook_cred hc;
	struct hook_spec spec;
	int out, status;
	pid_t pid, failed;
	char *got;

	if (geteuid() != 0)
		return;		/* needs root: tested by t0019 in CI */
	out = tmpfd();
	memset(&hc, 0, sizeof(hc));
	hc.active = 1;
	hc.uid = NOBODY;
	hc.gid = NOBODY;
	hc.groups[0] = NOBODY;
	hc.ngroups = 1;
	memset(&spec, 0, sizeof(spec));
	spec.path = "/bin/sh";
	spec.argv = argv;
	spec.envp = env;
	spec.stdin_fd = 0;
	spec.stdout_fd = out;
	spec.stderr_fd = out;
	spec.cred = &hc;
	pid = hook_spawn(&spec, &failed);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	got = readall(out, NULL);
	ck_assert_str_eq(got, want);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(got);
	close(out);
}
END_TEST

static Suite *
hook_suite(void)
{
	Suite *s = suite_create("hook");
	TCase *tc = tcase_create("hook");

	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_stdio);
	tcase_add_test(tc, test_stdio_already_in_place);
	tcase_add_test(tc, test_process_group);
	tcase_add_test(tc, test_environment_exact);
	tcase_add_test(tc, test_workdir);
	tcase_add_test(tc, test_signal_mask_empty);
	tcase_add_test(tc, test_sigpipe_default);
	tcase_add_test(tc, test_dispositions_default);
	tcase_add_test(tc, test_exec_errors);
	tcase_add_test(tc, test_rlimits);
	tcase_add_test(tc, test_rlimit_refused);
	tcase_add_test(tc, test_kill_group_grandchild);
	tcase_add_test(tc, test_kill_group_refuses_special_pgids);
	tcase_add_test(tc, test_dies_with_parent);
	tcase_add_test(tc, test_cred_refused_is_cred_step);
	tcase_add_test(tc, test_cred_become_no_capability);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_TMPDIR(hook_suite, basedir, "check_hook")
