/*
 * check_hookset.c — unit tests for daemon/spool/hookset.c and the "hooks"
 * heartbeat field of coord.c (issue 11 item 4).
 *
 * Contract (hookset.h, coord.h): the list holds the names of hooks_dir
 * that are valid task codes and regular files executable by us, sorted
 * by strcmp, joined by ','; a list that does not fit ends with "*";
 * hookset_has matches whole codes only, and "*" matches every code; a
 * heartbeat without the field runs every code (an older node).  The
 * expected lists are written by hand from the files each test makes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "coord/coord_impl.h"	/* coord_node_field */
#include "spool/hookset.h"
#include "unit.h"

static char dir[200];
static int dfd = -1;

/* A file name in the test directory with mode. */
static void
mk(const char *name, mode_t mode)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	ck_assert_int_eq(fchmodat(dfd, name, mode, 0), 0);
}

static void
setup(void)
{
	unit_case_mkdtemp(dir, sizeof(dir), NULL, "check_hookset");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
}

static void
teardown(void)
{
	close(dfd);
	unit_rmtree(dir);
}

START_TEST(test_scan)
{
	char list[HOOKSET_MAX];
	size_t n = 99;

	mk("report.generate", 0755);
	mk("a", 0700);
	mk("Zed", 0755);
	mk("noexec", 0644);		/* not executable: not a hook */
	mk(".hidden", 0755);		/* not a task code */
	mk("bad name", 0755);		/* not a task code */
	ck_assert_int_eq(mkdirat(dfd, "adir", 0755), 0);	/* a directory */
	ck_assert_int_eq(symlinkat("a", dfd, "link-to-a"), 0);
	ck_assert_int_eq(hookset_scan(dfd, list, sizeof(list), &n), 0);
	/* strcmp order: "Z" (0x5a) < "a" < "l" < "r"; the link to an
	 * executable is followed, as execve does */
	ck_assert_str_eq(list, "Zed,a,link-to-a,report.generate");
	ck_assert_uint_eq(n, 4);
}
END_TEST

START_TEST(test_scan_empty_and_truncated)
{
	char list[HOOKSET_MAX], small[12];
	size_t n;

	ck_assert_int_eq(hookset_scan(dfd, list, sizeof(list), &n), 0);
	ck_assert_str_eq(list, "");
	ck_assert_uint_eq(n, 0);
	mk("aaa", 0755);
	mk("bbb", 0755);
	mk("ccc", 0755);
	/* 12 bytes: "aaa,bbb" (7) leaves room for ",*" and the NUL (10),
	 * but "aaa,bbb,ccc" and ",*" would need 14 */
	ck_assert_int_eq(hookset_scan(dfd, small, sizeof(small), &n), 1);
	ck_assert_str_eq(small, "aaa,bbb,*");
	ck_assert_uint_eq(n, 3);
	ck_assert(hookset_has(small, "zzz"));	/* "*": may have any */
}
END_TEST

START_TEST(test_has)
{
	static const struct {
		const char *list, *code;
		int has;
	} cases[] = {
		{ "a,bb,ccc", "a", 1 }, { "a,bb,ccc", "bb", 1 },
		{ "a,bb,ccc", "ccc", 1 }, { "a,bb,ccc", "b", 0 },
		{ "a,bb,ccc", "cc", 0 }, { "a,bb,ccc", "ccc.d", 0 },
		{ "a,bb,ccc", "", 0 }, { "", "a", 0 }, { "*", "x", 1 },
		{ "a,*", "q", 1 }, { "x.y", "x", 0 }, { "x", "x.y", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(hookset_has(cases[i].list, cases[i].code) ==
		    cases[i].has, "hookset_has(\"%s\", \"%s\")",
		    cases[i].list, cases[i].code);
}
END_TEST

START_TEST(test_heartbeat_field)
{
	struct coord_node nd;
	char *big = malloc(2 * HOOKSET_MAX);
	size_t l = 0;

	memset(&nd, 0, sizeof(nd));
	ck_assert(coord_node_runs(&nd, "anything"));	/* no list: older */
	coord_node_field(&nd, "hooks", "");
	ck_assert_int_eq(nd.hooks_known, 1);
	ck_assert(!coord_node_runs(&nd, "anything"));
	coord_node_field(&nd, "hooks", "a,b");
	ck_assert(coord_node_runs(&nd, "b"));
	ck_assert(!coord_node_runs(&nd, "c"));
	/* A list longer than the field (a hostile or newer writer): cut at
	 * a whole code, "*" added. 1000 codes "c000".."c999" of 5 bytes with
	 * the comma = 5000 bytes; twice = 10000 > 8192. */
	ck_assert_ptr_nonnull(big);
	for (int i = 0; i < 2000; i++)
		l += (size_t)sprintf(big + l, "%sc%03d", i ? "," : "",
		    i % 1000);
	coord_node_field(&nd, "hooks", big);
	ck_assert_uint_lt(strlen(nd.hooks), sizeof(nd.hooks));
	ck_assert_str_eq(nd.hooks + strlen(nd.hooks) - 2, ",*");
	ck_assert(coord_node_runs(&nd, "c500"));
	ck_assert(coord_node_runs(&nd, "not-listed"));	/* "*" */
	free(big);
}
END_TEST

static Suite *
hookset_suite(void)
{
	Suite *s = suite_create("hookset");
	TCase *tc = tcase_create("hookset");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_scan);
	tcase_add_test(tc, test_scan_empty_and_truncated);
	tcase_add_test(tc, test_has);
	tcase_add_test(tc, test_heartbeat_field);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(hookset_suite)
