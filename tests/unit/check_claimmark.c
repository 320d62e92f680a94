/*
 * check_claimmark.c — the per-requestId claim marker (daemon/coord/claimmark.h)
 * on a fresh spool, with other processes as the other claimants.
 *
 * Expectations from claimmark.h's contract and flock(2): a marker is
 * exclusive while its holder lives (a second taker gets EWOULDBLOCK);
 * the kernel drops the lock when the holder dies, so the next taker takes
 * it over and is told so, with the dead holder's line; release removes
 * the file; the sweep removes unheld markers at least min_age_ms old and
 * leaves held and young ones; what is not a regular file in state/claims/
 * (a symbolic link, a FIFO) is replaced, never followed or blocked on.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "coord/claimmark.h"
#include "spool/spool.h"
#include "unit.h"

static char tmpdir[200];
static struct spool sp;

static void
setup(void)
{
	char why[256], path[300];

	unit_case_mkdtemp(tmpdir, sizeof(tmpdir), NULL, "check_claimmark");
	snprintf(path, sizeof(path), "%s/spool", tmpdir);
	ck_assert_int_eq(spool_create(path, -1, why, sizeof(why)), 0);
	ck_assert_msg(spool_open(&sp, path, "n1", 0, why, sizeof(why)) == 0,
	    "%s", why);
	ck_assert_int_ge(sp.claims, 0);
}

static void
teardown(void)
{
	spool_close(&sp);
	unit_rmtree(tmpdir);
}

/* A child that takes id's marker, says so on the pipe, then either waits
 * to be killed (hold = 1) or dies at once without releasing it. */
static pid_t
child_take(const char *id, int hold)
{
	int p[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = claimmark_take(&sp, id, "child", 42, NULL, NULL, 0);

		c = fd >= 0 ? 'y' : 'n';
		(void)!write(p[1], &c, 1);
		if (hold)
			pause();
		_exit(0);	/* dies holding it: the kernel drops the lock */
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	ck_assert_int_eq(c, 'y');
	if (!hold)
		ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	return pid;
}

static int
marker_exists(const char *id)
{
	struct stat st;

	return fstatat(sp.claims, id, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

START_TEST(take_release)
{
	char line[256];
	int over = -1, fd;
	ssize_t r;

	fd = claimmark_take(&sp, "t1", "n1", 1234, &over, NULL, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(over, 0);
	r = pread(fd, line, sizeof(line) - 1, 0);
	ck_assert_int_gt(r, 0);
	line[r] = '\0';
	snprintf(line + 128, 100, "node=n1 pid=%ld at_ms=1234\n",
	    (long)getpid());
	ck_assert_str_eq(line, line + 128);
	ck_assert(marker_exists("t1"));
	claimmark_release(&sp, "t1", fd);
	ck_assert(!marker_exists("t1"));
	claimmark_release(&sp, "t1", -1);	/* nothing held: no-op */
}
END_TEST

START_TEST(held_is_exclusive)
{
	pid_t pid = child_take("t2", 1);
	int fd;

	errno = 0;
	fd = claimmark_take(&sp, "t2", "n1", 1, NULL, NULL, 0);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(errno, EWOULDBLOCK);
	ck_assert(marker_exists("t2"));
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	/* Its holder died: free to take now. */
	fd = claimmark_take(&sp, "t2", "n1", 1, NULL, NULL, 0);
	ck_assert_int_ge(fd, 0);
	claimmark_release(&sp, "t2", fd);
}
END_TEST

START_TEST(dead_holder_taken_over)
{
	char prev[CLAIMMARK_INFO_MAX], want[CLAIMMARK_INFO_MAX];
	pid_t pid = child_take("t3", 0);
	int over = 0, fd;

	snprintf(want, sizeof(want), "node=child pid=%ld at_ms=42", (long)pid);
	fd = claimmark_take(&sp, "t3", "n1", 7, &over, prev, sizeof(prev));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(over, 1);
	ck_assert_str_eq(prev, want);
	claimmark_release(&sp, "t3", fd);
	ck_assert(!marker_exists("t3"));
}
END_TEST

START_TEST(not_regular_replaced)
{
	int fd;

	ck_assert_int_eq(symlinkat("/etc/passwd", sp.claims, "t4"), 0);
	fd = claimmark_take(&sp, "t4", "n1", 1, NULL, NULL, 0);
	ck_assert_int_ge(fd, 0);
	claimmark_release(&sp, "t4", fd);
	ck_assert_int_eq(mkfifoat(sp.claims, "t5", 0600), 0);
	fd = claimmark_take(&sp, "t5", "n1", 1, NULL, NULL, 0);
	ck_assert_int_ge(fd, 0);
	claimmark_release(&sp, "t5", fd);
	ck_assert(!marker_exists("t4"));
	ck_assert(!marker_exists("t5"));
}
END_TEST

START_TEST(sweep)
{
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	pid_t held = child_take("s-held", 1);
	int fd;

	(void)child_take("s-dead", 0);
	(void)child_take("s-young", 0);
	ck_assert_int_eq(utimensat(sp.claims, "s-held", old, 0), 0);
	ck_assert_int_eq(utimensat(sp.claims, "s-dead", old, 0), 0);
	/* now = 1000 s + 60 s: s-dead and s-held are 60 s old, s-young is
	 * from today, hence "in the future" and younger than 60 s. */
	ck_assert_uint_eq(claimmark_sweep(&sp, 1060 * 1000, 60 * 1000), 1);
	ck_assert(!marker_exists("s-dead"));
	ck_assert(marker_exists("s-held"));
	ck_assert(marker_exists("s-young"));
	/* 1 ms younger than the bound: kept. */
	ck_assert_int_eq(utimensat(sp.claims, "s-young", old, 0), 0);
	ck_assert_uint_eq(claimmark_sweep(&sp, 1060 * 1000 - 1, 60 * 1000),
	    0);
	kill(held, SIGKILL);
	ck_assert_int_eq(waitpid(held, NULL, 0), held);
	ck_assert_uint_eq(claimmark_sweep(&sp, 1060 * 1000, 60 * 1000), 2);
	fd = claimmark_take(&sp, "s-held", "n1", 1, NULL, NULL, 0);
	ck_assert_int_ge(fd, 0);
	claimmark_release(&sp, "s-held", fd);
}
END_TEST

/* Many processes racing for one id: never two holders at once. */
START_TEST(race)
{
	int p[2];
	pid_t kids[8];
	int holders = 0;

	ck_assert_int_eq(pipe(p), 0);
	for (int k = 0; k < 8; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0) {
			close(p[0]);
			for (int i = 0; i < 200; i++) {
				int fd = claimmark_take(&sp, "race", "k", i,
				    NULL, NULL, 0);

				if (fd < 0)
					continue;
				/* In the section: a token in the pipe's
				 * count, then out. */
				(void)!write(p[1], "+", 1);
				usleep(50);
				(void)!write(p[1], "-", 1);
				claimmark_release(&sp, "race", fd);
			}
			_exit(0);
		}
	}
	close(p[1]);
	for (;;) {
		char c;
		ssize_t r = read(p[0], &c, 1);

		if (r <= 0)
			break;
		holders += c == '+' ? 1 : -1;
		ck_assert_int_le(holders, 1);
	}
	close(p[0]);
	for (int k = 0; k < 8; k++)
		ck_assert_int_eq(waitpid(kids[k], NULL, 0), kids[k]);
	ck_assert(!marker_exists("race"));
}
END_TEST

static Suite *
claimmark_suite(void)
{
	Suite *s = suite_create("claimmark");
	TCase *tc = tcase_create("marker");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, take_release);
	tcase_add_test(tc, held_is_exclusive);
	tcase_add_test(tc, dead_holder_taken_over);
	tcase_add_test(tc, not_regular_replaced);
	tcase_add_test(tc, sweep);
	tcase_add_test(tc, race);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(claimmark_suite)
