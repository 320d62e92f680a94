/*
 * check_ratelimit.c — unit tests for daemon/coord/ratelimit.c (the file
 * backend of the API's per-AppId fixed window, driven by an injected
 * clock), the rate=N field of apps.conf (apps.c) and the hook limits'
 * configuration (hooklimit.c).  The Redis backend is tested against a
 * real redis-server by tests/scenario/t0054-api-ratelimit.sh.
 *
 * Expected values are worked out by hand from the rules in ratelimit.h:
 * a window of W ms starts with its first request; at most L requests
 * pass in it; a refused request waits start + W - now ms, Retry-After
 * being that rounded up to whole seconds, at least 1 (RFC 9110 §10.2.3).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "api/apps.h"
#include "spool/config.h"
#include "spool/hooklimit.h"
#include "coord/ratelimit.h"
#include "unit.h"

static char dir[128];
static int dfd = -1;

static void
setup(void)
{
	unit_case_mkdtemp(dir, sizeof(dir), NULL, "check_ratelimit");
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
}

static void
teardown(void)
{
	close(dfd);
	unit_rmtree(dir);
}

/* One request of app at now_ms with limit 3 per 1000 ms. */
static enum ratelimit_status
hit(const char *app, int64_t now_ms, int64_t *retry)
{
	char why[256];
	enum ratelimit_status st = ratelimit_file(dfd, app, 3, 1000, now_ms,
	    retry, why, sizeof(why));

	ck_assert_msg(st != RATELIMIT_ERR, "%s", why);
	return st;
}

/* Write text as the state file name. */
static void
put(const char *name, const char *text)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void
state_is(const char *app, const char *want)
{
	char b[RATELIMIT_STATE_MAX + 1];
	int fd = openat(dfd, app, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, b, sizeof(b) - 1);
	ck_assert_int_ge(n, 0);
	b[n] = '\0';
	close(fd);
	ck_assert_str_eq(b, want);
}

START_TEST(test_window)
{
	int64_t r = -1;

	/* three pass, the fourth waits for the rest of the window */
	ck_assert_int_eq(hit("a", 1000000, &r), RATELIMIT_OK);
	ck_assert_int_eq(hit("a", 1000100, &r), RATELIMIT_OK);
	ck_assert_int_eq(hit("a", 1000200, &r), RATELIMIT_OK);
	state_is("a", "00000000000001000000 00000000000000000003\n");
	ck_assert_int_eq(hit("a", 1000250, &r), RATELIMIT_LIMITED);
	ck_assert_int_eq(r, 750);
	ck_assert_int_eq(hit("a", 1000999, &r), RATELIMIT_LIMITED);
	ck_assert_int_eq(r, 1);
	/* refusals do not move the window or the count */
	state_is("a", "00000000000001000000 00000000000000000003\n");
	/* the window ends at start + 1000: a new one starts there */
	ck_assert_int_eq(hit("a", 1001000, &r), RATELIMIT_OK);
	state_is("a", "00000000000001001000 00000000000000000001\n");
	/* another app has its own window */
	ck_assert_int_eq(hit("b", 1001000, &r), RATELIMIT_OK);
	state_is("b", "00000000000001001000 00000000000000000001\n");
}
END_TEST

START_TEST(test_clock_back_and_bad_state)
{
	int64_t r;

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(hit("a", 5000000, &r), RATELIMIT_OK);
	ck_assert_int_eq(hit("a", 5000010, &r), RATELIMIT_LIMITED);
	/* the wall clock steps back before the window start: new window
	 * (else the app would wait for the step as well) */
	ck_assert_int_eq(hit("a", 4000000, &r), RATELIMIT_OK);
	state_is("a", "00000000000004000000 00000000000000000001\n");
	/* a time taken just before the window began (the request waited
	 * for the lock while another opened it) counts in that window:
	 * refused when it is full, counted when it has room */
	ck_assert_int_eq(hit("a", 3999990, &r), RATELIMIT_OK);
	ck_assert_int_eq(hit("a", 3999000, &r), RATELIMIT_OK);
	state_is("a", "00000000000004000000 00000000000000000003\n");
	ck_assert_int_eq(hit("a", 3999500, &r), RATELIMIT_LIMITED);
	ck_assert_int_eq(r, 1000);
	state_is("a", "00000000000004000000 00000000000000000003\n");
	/* a state file that does not parse starts a new window */
	put("c", "garbage");
	ck_assert_int_eq(hit("c", 7000, &r), RATELIMIT_OK);
	state_is("c", "00000000000000007000 00000000000000000001\n");
	/* a short text is read too ("start count", no padding) */
	put("d", "7000 3\n");
	ck_assert_int_eq(hit("d", 7999, &r), RATELIMIT_LIMITED);
	ck_assert_int_eq(r, 1);
}
END_TEST

/* 8 processes x 25 requests at one instant, limit 50: exactly 50 pass
 * (the flock serialises the read-modify-write). */
START_TEST(test_processes)
{
	int pfd[2], passed = 0;
	char c;

	ck_assert_int_eq(pipe(pfd), 0);
	for (int p = 0; p < 8; p++) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			char why[128];
			int64_t r;

			for (int i = 0; i < 25; i++)
				if (ratelimit_file(dfd, "many", 50, 60000,
				    123456789, &r, why, sizeof(why)) ==
				    RATELIMIT_OK)
					(void)!write(pfd[1], "+", 1);
			_exit(0);
		}
	}
	close(pfd[1]);
	while (read(pfd[0], &c, 1) == 1)
		passed++;
	close(pfd[0]);
	while (wait(NULL) > 0)
		;
	ck_assert_int_eq(passed, 50);
	state_is("many", "00000000000123456789 00000000000000000050\n");
}
END_TEST

START_TEST(test_retry_after)
{
	ck_assert_int_eq(ratelimit_retry_after(0), 1);
	ck_assert_int_eq(ratelimit_retry_after(1), 1);
	ck_assert_int_eq(ratelimit_retry_after(1000), 1);
	ck_assert_int_eq(ratelimit_retry_after(1001), 2);
	ck_assert_int_eq(ratelimit_retry_after(3600000), 3600);
}
END_TEST

START_TEST(test_store_error)
{
	char why[256];
	int64_t r;

	/* a directory where the state file should be: open(O_RDWR) fails */
	ck_assert_int_eq(mkdirat(dfd, "isdir", 0700), 0);
	ck_assert_int_eq(ratelimit_file(dfd, "isdir", 3, 1000, 1, &r, why,
	    sizeof(why)), RATELIMIT_ERR);
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_ptr_nonnull(strstr(why, "state/ratelimit/isdir: open:"));
}
END_TEST

/* ---- apps.conf rate=N -------------------------------------------------- */

#define S1 "abcdefghijklmnopqrstuvwxyz012345"
#define S2 "ZYXWVUTSRQPONMLKJIHGFEDCBA-_9876"

static int
parse(const char *text, struct apps *a, char *why, size_t whylen)
{
	return apps_parse(text, strlen(text), a, why, whylen);
}

/*
 * Issue 10: apps.conf with a raw NUL or a control byte is refused naming
 * the line, the column and the byte (the secret is never echoed).  By
 * hand: line 1 is "x enabled * " (12 bytes) + S1 (32) + LF = 45 bytes, so
 * line 2 starts at offset 45 and its 45th byte, right after its S1, is
 * offset 89; in "q enabled *<ESC>" ESC is column 12, offset 11.
 */
START_TEST(test_apps_control_bytes)
{
	static const char nul[] = "x enabled * " S1 "\ny enabled * " S1
	    "\0\n";
	static const char esc[] = "q enabled *\x1b " S1 "\n";
	struct apps a;
	char why[256];

	ck_assert_int_eq(apps_parse(nul, sizeof(nul) - 1, &a, why,
	    sizeof(why)), -1);
	ck_assert_msg(strncmp(why, "line 2 column 45: raw NUL byte (offset "
	    "89;", 42) == 0, "%s", why);
	ck_assert_ptr_null(strstr(why, S1));
	ck_assert_int_eq(apps_parse(esc, sizeof(esc) - 1, &a, why,
	    sizeof(why)), -1);
	ck_assert_msg(strncmp(why, "line 1 column 12: control byte 0x1b "
	    "(offset 11;", 47) == 0, "%s", why);
}
END_TEST

START_TEST(test_apps_rate)
{
	struct apps a;
	char why[256], path[200], buf[512];
	int fd;
	ssize_t n;

	ck_assert_int_eq(parse("x enabled * " S1 "\n"
	    "y enabled a,b " S1 " rate=7 " S2 "\n"
	    "z disabled * " S1 " " S2 " rate=0\n", &a, why, sizeof(why)), 0);
	ck_assert_int_eq(a.nv, 3);
	ck_assert_int_eq(a.v[0].rate, APPS_RATE_DEFAULT);
	ck_assert_int_eq(a.v[1].rate, 7);
	ck_assert_int_eq(a.v[1].nsecrets, 2);
	ck_assert_str_eq(a.v[1].secrets[1], S2);
	ck_assert_int_eq(a.v[2].rate, 0);
	/* written back in place: after the secrets, only when set */
	snprintf(path, sizeof(path), "%s/apps.conf", dir);
	ck_assert_int_eq(apps_write(&a, path, why, sizeof(why)), 0);
	apps_free(&a);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\nx enabled * " S1 "\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\ny enabled a,b " S1 " " S2
	    " rate=7\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nz disabled * " S1 " " S2
	    " rate=0\n"));

	ck_assert_int_eq(parse("x enabled * " S1 " rate=1000001\n", &a, why,
	    sizeof(why)), -1);
	ck_assert_str_eq(why, "line 1: rate= must be given once, as a whole "
	    "number 0..1000000");
	ck_assert_int_eq(parse("x enabled * " S1 " rate=1 rate=1\n", &a, why,
	    sizeof(why)), -1);
	ck_assert_int_eq(parse("x enabled * " S1 " rate=\n", &a, why,
	    sizeof(why)), -1);
	ck_assert_int_eq(parse("x enabled * " S1 " rate=-1\n", &a, why,
	    sizeof(why)), -1);
	/* rate= does not count as a secret: one is still required */
	ck_assert_int_eq(parse("x enabled * rate=5\n", &a, why, sizeof(why)),
	    -1);
	ck_assert_ptr_nonnull(strstr(why, "[rate=N]"));
	ck_assert_int_eq(parse("x enabled * " S1 " " S2 " " S1 " rate=5\n", &a,
	    why, sizeof(why)), -1);
}
END_TEST

/* apps.conf console=read|operate (README "The web console"): once,
 * anywhere after taskCodes, default read; written back only when given. */
START_TEST(test_apps_console_role)
{
	struct apps a;
	char why[256];

	ck_assert_int_eq(parse("x enabled * " S1 "\n"
	    "y enabled a console=operate " S1 " weight=2 rate=7\n"
	    "z enabled * " S1 " console=read\n", &a, why, sizeof(why)), 0);
	ck_assert_int_eq(a.nv, 3);
	ck_assert_int_eq(a.v[0].role, APPS_ROLE_DEFAULT);
	ck_assert_int_eq(a.v[1].role, APPS_ROLE_OPERATE);
	ck_assert_int_eq(a.v[1].weight, 2);
	ck_assert_int_eq(a.v[1].rate, 7);
	ck_assert_int_eq(a.v[2].role, APPS_ROLE_READ);
	ck_assert_str_eq(apps_role_name(a.v[0].role), "read");
	ck_assert_str_eq(apps_role_name(a.v[1].role), "operate");
	apps_free(&a);
	ck_assert_int_eq(parse("x enabled * " S1 " console=admin\n", &a, why,
	    sizeof(why)), -1);
	ck_assert_str_eq(why, "line 1: console= must be given once, as "
	    "\"read\" or \"operate\"");
	ck_assert_int_eq(parse("x enabled * " S1 " console=read "
	    "console=read\n", &a, why, sizeof(why)), -1);
	ck_assert_int_eq(apps_role_parse("operate"), APPS_ROLE_OPERATE);
	ck_assert_int_eq(apps_role_parse("Operate"), -1);
}
END_TEST

/* apps.conf weight=N (README "Fair sharing"): 1..100, once, anywhere
 * after taskCodes; written back after rate=. */
START_TEST(test_apps_weight)
{
	struct apps a;
	char why[256], path[200], buf[512];
	int fd;
	ssize_t n;

	ck_assert_int_eq(parse("x enabled * " S1 "\n"
	    "y enabled a,b weight=3 " S1 " rate=7\n"
	    "z enabled * " S1 " weight=100\n", &a, why, sizeof(why)), 0);
	ck_assert_int_eq(a.nv, 3);
	ck_assert_int_eq(a.v[0].weight, APPS_WEIGHT_DEFAULT);
	ck_assert_int_eq(a.v[1].weight, 3);
	ck_assert_int_eq(a.v[1].rate, 7);
	ck_assert_int_eq(a.v[2].weight, 100);
	snprintf(path, sizeof(path), "%s/apps.conf", dir);
	ck_assert_int_eq(apps_write(&a, path, why, sizeof(why)), 0);
	apps_free(&a);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\nx enabled * " S1 "\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\ny enabled a,b " S1
	    " rate=7 weight=3\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nz enabled * " S1
	    " weight=100\n"));
	/* refused: 0, 101, twice, empty, negative */
	ck_assert_int_eq(parse("x enabled * " S1 " weight=0\n", &a, why,
	    sizeof(why)), -1);
	ck_assert_str_eq(why, "line 1: weight= must be given once, as a whole "
	    "number 1..100");
	ck_assert_int_eq(parse("x enabled * " S1 " weight=101\n", &a, why,
	    sizeof(why)), -1);
	ck_assert_int_eq(parse("x enabled * " S1 " weight=2 weight=2\n", &a,
	    why, sizeof(why)), -1);
	ck_assert_int_eq(parse("x enabled * " S1 " weight=\n", &a, why,
	    sizeof(why)), -1);
	ck_assert_int_eq(parse("x enabled * " S1 " weight=-3\n", &a, why,
	    sizeof(why)), -1);
}
END_TEST

/* ---- hook limits ------------------------------------------------------- */

START_TEST(test_hooklimit_config)
{
	struct config c;
	struct hook_rlimit v[HOOKLIMIT_MAX];
	char why[512], out[256];

	config_defaults(&c);
	ck_assert_int_eq(hooklimit_from_config(&c, v), 0);
	ck_assert_int_eq(config_set(&c, "hook_limit_nofile", "64", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "hook_limit_cpu_sec", "3", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(hooklimit_from_config(&c, v), 2);
	ck_assert_int_eq(v[0].resource, RLIMIT_NOFILE);
	ck_assert(v[0].rl.rlim_cur == 64 && v[0].rl.rlim_max == 64);
	ck_assert_int_eq(v[1].resource, RLIMIT_CPU);
	ck_assert(v[1].rl.rlim_cur == 3 && v[1].rl.rlim_max == 4);

	ck_assert_int_eq(hooklimit_explain(&c, SIGXCPU, -1, out,
	    sizeof(out)), 1);
	ck_assert_str_eq(out, "; SIGXCPU: CPU time limit reached "
	    "(hook_limit_cpu_sec = 3)");
	/* SIGKILL: the CPU limit only once the soft limit was used */
	ck_assert_int_eq(hooklimit_explain(&c, SIGKILL, 2999, out,
	    sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(hooklimit_explain(&c, SIGKILL, -1, out,
	    sizeof(out)), 0);
	ck_assert_int_eq(hooklimit_explain(&c, SIGKILL, 3900, out,
	    sizeof(out)), 1);
	ck_assert_ptr_nonnull(strstr(out, "SIGKILL after 3900 ms of CPU "
	    "time, past hook_limit_cpu_sec = 3"));
	/* no fsize limit: SIGXFSZ is not ours to explain */
	ck_assert_int_eq(hooklimit_explain(&c, SIGXFSZ, -1, out,
	    sizeof(out)), 0);
	ck_assert_int_eq(config_set(&c, "hook_limit_fsize_bytes", "1000",
	    why, sizeof(why)), 0);
	ck_assert_int_eq(hooklimit_explain(&c, SIGXFSZ, -1, out,
	    sizeof(out)), 1);
	ck_assert_str_eq(out, "; SIGXFSZ: file size limit reached "
	    "(hook_limit_fsize_bytes = 1000)");

	/* hook_limit_as_bytes: 0, or at least 16 MiB */
	ck_assert_int_eq(config_set(&c, "hook_limit_as_bytes", "16777215",
	    why, sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "hook_limit_as_bytes: 16777215 is "
	    "below 16777216 bytes"));
	ck_assert_int_eq(config_set(&c, "hook_limit_as_bytes", "16777216",
	    why, sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), 0);
	/* hook_limit_nofile: 0, or at least 16 (3 lets no program start) */
	ck_assert_int_eq(config_set(&c, "hook_limit_nofile", "3", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "hook_limit_nofile: 3 is below 16"));
	ck_assert_int_eq(config_set(&c, "hook_limit_nofile", "16", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "hook_limit_cpu_sec", "-1", why,
	    sizeof(why)), CONFIG_OUT_OF_RANGE);
	ck_assert_int_eq(config_set(&c, "api_rate_window_sec", "0", why,
	    sizeof(why)), CONFIG_OUT_OF_RANGE);
}
END_TEST

START_TEST(test_hooklimit_process)
{
	struct config c;
	struct rlimit cur;
	char why[512], v[32];

	config_defaults(&c);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &cur), 0);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)cur.rlim_max);
	ck_assert_int_eq(config_set(&c, "hook_limit_nofile", v, why,
	    sizeof(why)), 0);
	ck_assert_int_eq(hooklimit_check_process(&c, why, sizeof(why)), 0);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)cur.rlim_max + 1);
	ck_assert_int_eq(config_set(&c, "hook_limit_nofile", v, why,
	    sizeof(why)), 0);
	ck_assert_int_eq(hooklimit_check_process(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "hook_limit_nofile:"));
	ck_assert_ptr_nonnull(strstr(why, "is above the daemon's hard limit"));
}
END_TEST

static Suite *
ratelimit_suite(void)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = tcase_create("ratelimit");

	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_window);
	tcase_add_test(tc, test_clock_back_and_bad_state);
	tcase_add_test(tc, test_processes);
	tcase_add_test(tc, test_retry_after);
	tcase_add_test(tc, test_store_error);
	tcase_add_test(tc, test_apps_rate);
	tcase_add_test(tc, test_apps_weight);
	tcase_add_test(tc, test_apps_control_bytes);
	tcase_add_test(tc, test_apps_console_role);
	tcase_add_test(tc, test_hooklimit_config);
	tcase_add_test(tc, test_hooklimit_process);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(ratelimit_suite)
