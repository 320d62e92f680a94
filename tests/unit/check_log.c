/*
 * check_log.c — unit tests for daemon/spool/log.c: the rate limit of repeated
 * warnings (log.h), and the journal's priority prefixes.
 *
 * Contract: the same warning (text after formatting) within 10 s of its
 * first line is counted, not written; once the 10 s are over, the next
 * log call or log_tick() writes "<warning> (repeated N times in S s)"
 * with S the seconds from the first to the last repeat, rounded up.
 * Another text, or info and error lines, are never held back.  The clock
 * is a fake one (log_set_clock); stderr is redirected to a file that the
 * test reads back, and the expected lines are written here by hand.
 */
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "spool/log.h"
#include "unit.h"

static int64_t fake_ms;

static int64_t
fake_clock(void)
{
	return fake_ms;
}

static char out_path[] = "/tmp/check_log.XXXXXX";

/* stderr into a fresh file; fake clock at 1,000,000 ms. */
static void
setup(void)
{
	int fd = mkstemp(out_path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_ptr_nonnull(freopen(out_path, "w", stderr));
	setvbuf(stderr, NULL, _IONBF, 0);
	log_init("t", 0, LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_TEXT);
	fake_ms = 1000000;
	log_set_clock(fake_clock);
}

static void
teardown(void)
{
	log_set_clock(NULL);
	unlink(out_path);
}

/* The lines written so far with their "<ts> t: <level>: " prefix cut;
 * new, caller frees (an array of n strings, then the array). */
static char **
lines(size_t *n)
{
	FILE *f = fopen(out_path, "r");
	char buf[4096], **v = NULL;

	*n = 0;
	ck_assert_ptr_nonnull(f);
	while (fgets(buf, sizeof(buf), f) != NULL) {
		char *p = strstr(buf, " t: ");

		ck_assert_ptr_nonnull(p);
		buf[strcspn(buf, "\n")] = '\0';
		v = realloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = strdup(p + 4);
	}
	fclose(f);
	return v;
}

static void
free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

START_TEST(test_repeat_counted)
{
	char **v;
	size_t n;

	/* 413 identical warnings over 9.9 s: one line. */
	for (int i = 0; i < 413; i++) {
		fake_ms = 1000000 + i * 24;	/* last at +9888 ms */
		log_warnx("claim rename: %s", "No space left on device");
	}
	v = lines(&n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0], "warning: claim rename: No space left on device");
	free_lines(v, n);
	/* 9999 ms after the first: still the window, nothing written. */
	fake_ms = 1009999;
	log_tick();
	v = lines(&n);
	ck_assert_uint_eq(n, 1);
	free_lines(v, n);
	/* At 10 s the window closes: 412 repeats, first to last 9888 ms →
	 * "in 10 s" (rounded up). */
	fake_ms = 1010000;
	log_tick();
	v = lines(&n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[1], "warning: claim rename: No space left on device "
	    "(repeated 412 times in 10 s)");
	free_lines(v, n);
	/* The same warning after the window: written again, a new window. */
	log_warnx("claim rename: %s", "No space left on device");
	v = lines(&n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[2], "warning: claim rename: No space left on device");
	free_lines(v, n);
}
END_TEST

START_TEST(test_distinct_not_held)
{
	char **v;
	size_t n;

	log_warnx("a1: cannot write");
	log_warnx("a2: cannot write");		/* another text */
	log_warnx("a1: cannot write");		/* counted */
	log_info("a1: cannot write");		/* info: never held back */
	log_info("a1: cannot write");
	log_task(LOG_LEVEL_WARN, "task.lost", "a1", "c", 1, "a1: lost");
	log_task(LOG_LEVEL_WARN, "task.lost", "a1", "c", 1, "a1: lost");
	v = lines(&n);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(v[0], "warning: a1: cannot write");
	ck_assert_str_eq(v[1], "warning: a2: cannot write");
	ck_assert_str_eq(v[2], "info: a1: cannot write");
	ck_assert_str_eq(v[3], "info: a1: cannot write");
	ck_assert_str_eq(v[4], "warning: a1: lost");
	free_lines(v, n);
	/* One repeat each at the same instant: "in 1 s" (the minimum). */
	fake_ms += 10000;
	log_flush();
	v = lines(&n);
	ck_assert_uint_eq(n, 7);
	ck_assert_str_eq(v[5], "warning: a1: cannot write (repeated 1 times "
	    "in 1 s)");
	ck_assert_str_eq(v[6], "warning: a1: lost (repeated 1 times in 1 s)");
	free_lines(v, n);
}
END_TEST

START_TEST(test_errno_is_part_of_the_text)
{
	char **v;
	size_t n;

	errno = ENOSPC;
	log_warn("results/x.json");
	errno = EMFILE;
	log_warn("results/x.json");	/* another error: another warning */
	errno = ENOSPC;
	log_warn("results/x.json");
	v = lines(&n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0], "warning: results/x.json: No space left on "
	    "device");
	ck_assert_str_eq(v[1], "warning: results/x.json: Too many open files");
	free_lines(v, n);
}
END_TEST

START_TEST(test_table_full)
{
	char **v;
	size_t n;

	/* 40 distinct warnings (the table holds 32), then the first again:
	 * its window was closed early to make room, so it is written. */
	for (int i = 0; i < 40; i++)
		log_warnx("w%d", i);
	log_warnx("w0");
	v = lines(&n);
	ck_assert_uint_eq(n, 41);
	ck_assert_str_eq(v[40], "warning: w0");
	free_lines(v, n);
}
END_TEST

/* stderr emptied, unbuffered (the same file: the same inode). */
static void
reopen(void)
{
	ck_assert_ptr_nonnull(freopen(out_path, "w", stderr));
	setvbuf(stderr, NULL, _IONBF, 0);
}

/* The whole first line of the output file, into buf. */
static void
first_line(char *buf, size_t len)
{
	FILE *f = fopen(out_path, "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
	fclose(f);
}

/*
 * stderr as the journal's stream: $JOURNAL_STREAM names the device and
 * inode of descriptor 2 (systemd.exec(5)), and each line starts with the
 * syslog priority in the "<N>" form of sd-daemon(3): <4> for a warning,
 * <3> error, <6> info.  A JOURNAL_STREAM naming another file (output
 * redirected by the service) or malformed gives no prefix.
 */
START_TEST(test_journal_priority)
{
	static const struct {
		enum log_level lv;
		const char *want;	/* line start; "2" = a timestamp */
	} cases[] = {
		{ LOG_LEVEL_ERR, "<3>2" }, { LOG_LEVEL_WARN, "<4>2" },
		{ LOG_LEVEL_INFO, "<6>2" },
	};
	struct stat st;
	char env[64], buf[512];

	ck_assert_int_eq(fstat(STDERR_FILENO, &st), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(env, sizeof(env), "%llu:%llu",
		    (unsigned long long)st.st_dev,
		    (unsigned long long)st.st_ino);
		setenv("JOURNAL_STREAM", env, 1);
		ck_assert_int_eq(log_stderr_is_journal(), 1);
		reopen();
		log_init("t", 0, LOG_LEVEL_INFO);
		log_task(cases[i].lv, "test", NULL, NULL, 0, "m%zu", i);
		first_line(buf, sizeof(buf));
		ck_assert_msg(strncmp(buf, cases[i].want, 4) == 0,
		    "level %d: %s", (int)cases[i].lv, buf);
	}
	/* logfmt lines too */
	reopen();
	log_set_format(LOG_FORMAT_LOGFMT);
	log_warnx("lf");
	first_line(buf, sizeof(buf));
	ck_assert_msg(strncmp(buf, "<4>ts=", 6) == 0, "%s", buf);
	log_set_format(LOG_FORMAT_TEXT);
	/* another inode, a malformed value, none: no prefix */
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", env, 1);
	ck_assert_int_eq(log_stderr_is_journal(), 0);
	setenv("JOURNAL_STREAM", "8:x", 1);
	ck_assert_int_eq(log_stderr_is_journal(), 0);
	unsetenv("JOURNAL_STREAM");
	ck_assert_int_eq(log_stderr_is_journal(), 0);
	reopen();
	log_init("t", 0, LOG_LEVEL_INFO);
	log_warnx("plain");
	first_line(buf, sizeof(buf));
	ck_assert_msg(buf[0] == '2', "%s", buf);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("repeat");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_repeat_counted);
	tcase_add_test(tc, test_distinct_not_held);
	tcase_add_test(tc, test_errno_is_part_of_the_text);
	tcase_add_test(tc, test_table_full);
	tcase_add_test(tc, test_journal_priority);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(log_suite)
