/*
 * check_groupsync.c — unit tests for daemon/spool/groupsync.c.
 *
 * Contract (groupsync.h): a batch writes each item's bytes to a tmp/
 * file, fsyncs it and renames it into place (an item whose write, fsync
 * or rename fails reports that errno, is not published and leaves no
 * tmp/ file), then fsyncs each directory (its errno in dir_err);
 * groupsync_poll reports 1 once per finished batch and 0 otherwise; a
 * second start before the first batch is collected fails with EBUSY;
 * with do_fsync 0 the batch runs before groupsync_start returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "spool/groupsync.h"
#include "unit.h"

struct fixture {
	char root[64], path[96];
	struct spool sp;
	int out;
};

static void
fixture_init(struct fixture *f)
{
	char why[512];

	snprintf(f->root, sizeof(f->root), "/tmp/check_groupsync.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->root));
	snprintf(f->path, sizeof(f->path), "%s/spool", f->root);
	ck_assert_msg(spool_create(f->path, -1, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_msg(spool_open(&f->sp, f->path, NULL, 1, why,
	    sizeof(why)) == 0, "%s", why);
	f->out = f->sp.dir[SPOOL_RESULTS];
}

static void
fixture_fini(struct fixture *f)
{
	char cmd[128];

	spool_close(&f->sp);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
	ck_assert_int_eq(system(cmd), 0);
}

/* An item publishing body as results/<to>. */
static void
item_make(struct fixture *f, struct groupsync_item *it, const char *to,
    const char *body)
{
	memset(it, 0, sizeof(*it));
	it->data = body;
	it->len = strlen(body);
	it->todir = f->out;
	snprintf(it->to, sizeof(it->to), "%s", to);
	it->err = -1;		/* must be overwritten */
}

/* Wait (at most 30 s) until the batch is reported done. */
static void
wait_done(struct groupsync *g, int *dir_err)
{
	for (int i = 0; i < 300; i++) {
		struct pollfd p = { groupsync_fd(g), POLLIN, 0 };

		if (groupsync_poll(g, dir_err) == 1)
			return;
		(void)poll(&p, 1, 100);
	}
	ck_abort_msg("batch not done within 30 s");
}

static void
expect_file(int dir, const char *name, const char *body)
{
	char buf[64];
	int fd = openat(dir, name, O_RDONLY);
	ssize_t n;

	ck_assert_msg(fd >= 0, "%s: %s", name, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, body);
}

static int
exists(int dir, const char *name)
{
	struct stat st;

	return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Number of entries in tmp/ (not "." and ".."). */
static int
tmp_count(struct fixture *f)
{
	char cmd[160];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s/tmp | wc -l", f->path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

START_TEST(test_batch_fsync_rename)
{
	struct fixture f;
	struct groupsync *g;
	struct groupsync_item it[3], *items[3];
	int dirs[1], derr[1] = { -1 };
	static const char *const body[] = { "{\"a\":1}", "{\"b\":2}",
		"{\"c\":3}" };

	fixture_init(&f);
	g = groupsync_new(&f.sp);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(groupsync_busy(g), 0);
	ck_assert_int_eq(groupsync_poll(g, NULL), 0);	/* none started */
	item_make(&f, &it[0], "r0.json", body[0]);
	item_make(&f, &it[1], "r1.json", body[1]);
	item_make(&f, &it[2], "r2.json", body[2]);
	for (int i = 0; i < 3; i++)
		items[i] = &it[i];
	dirs[0] = f.out;
	ck_assert_int_eq(groupsync_start(g, items, 3, dirs, 1, 1), 0);
	/* Not collected yet: a second batch must wait, however fast the
	 * first one is. */
	ck_assert_int_eq(groupsync_busy(g), 1);
	errno = 0;
	ck_assert_int_eq(groupsync_start(g, items, 3, dirs, 1, 1), -1);
	ck_assert_int_eq(errno, EBUSY);
	wait_done(g, derr);
	ck_assert_int_eq(groupsync_busy(g), 0);
	ck_assert_int_eq(groupsync_poll(g, NULL), 0);	/* reported once */
	ck_assert_int_eq(derr[0], 0);
	for (int i = 0; i < 3; i++) {
		char to[32];

		ck_assert_int_eq(it[i].err, 0);
		snprintf(to, sizeof(to), "r%d.json", i);
		expect_file(f.out, to, body[i]);
	}
	ck_assert_int_eq(tmp_count(&f), 0);
	/* An older file of the same name is replaced, as by rename(2). */
	item_make(&f, &it[0], "r1.json", "{\"b\":22}");
	ck_assert_int_eq(groupsync_start(g, items, 1, dirs, 1, 1), 0);
	wait_done(g, derr);
	ck_assert_int_eq(it[0].err, 0);
	expect_file(f.out, "r1.json", "{\"b\":22}");
	ck_assert_int_eq(tmp_count(&f), 0);
	/* The committer is reusable: a batch with no items and only a
	 * directory. */
	ck_assert_int_eq(groupsync_start(g, NULL, 0, dirs, 1, 1), 0);
	derr[0] = -1;
	wait_done(g, derr);
	ck_assert_int_eq(derr[0], 0);
	groupsync_free(g);
	fixture_fini(&f);
}
END_TEST

START_TEST(test_failures_reported)
{
	struct fixture f;
	struct groupsync *g;
	struct groupsync_item it[2], *items[2];
	int dirs[2], derr[2] = { -1, -1 };

	fixture_init(&f);
	g = groupsync_new(&f.sp);
	ck_assert_ptr_nonnull(g);
	item_make(&f, &it[0], "bad.json", "x");
	item_make(&f, &it[1], "good.json", "y");
	it[0].todir = -1;	/* its rename fails with EBADF */
	items[0] = &it[0];
	items[1] = &it[1];
	dirs[0] = -1;		/* so does this directory's fsync */
	dirs[1] = f.out;
	ck_assert_int_eq(groupsync_start(g, items, 2, dirs, 2, 1), 0);
	wait_done(g, derr);
	ck_assert_int_eq(it[0].err, EBADF);
	ck_assert(!exists(f.out, "bad.json"));
	ck_assert_int_eq(it[1].err, 0);
	expect_file(f.out, "good.json", "y");
	ck_assert_int_eq(derr[0], EBADF);
	ck_assert_int_eq(derr[1], 0);
	ck_assert_int_eq(tmp_count(&f), 0);	/* the failed one removed */
	groupsync_free(g);
	fixture_fini(&f);
}
END_TEST

START_TEST(test_nosync_runs_at_once)
{
	struct fixture f;
	struct groupsync *g;
	struct groupsync_item it[2], *items[2];
	int dirs[GROUPSYNC_DIRS_MAX + 1];

	fixture_init(&f);
	g = groupsync_new(&f.sp);
	ck_assert_ptr_nonnull(g);
	item_make(&f, &it[0], "a.json", "1");
	item_make(&f, &it[1], "b.json", "2");
	/* b.json exists as a directory: renaming a file over it fails */
	ck_assert_int_eq(mkdirat(f.out, "b.json", 0700), 0);
	items[0] = &it[0];
	items[1] = &it[1];
	for (int i = 0; i <= GROUPSYNC_DIRS_MAX; i++)
		dirs[i] = f.out;
	errno = 0;
	ck_assert_int_eq(groupsync_start(g, items, 2, dirs,
	    GROUPSYNC_DIRS_MAX + 1, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(groupsync_start(g, items, 2, dirs, 1, 0), 0);
	/* Done before start returned: the first poll reports it. */
	ck_assert_int_eq(groupsync_poll(g, NULL), 1);
	ck_assert_int_eq(it[0].err, 0);
	expect_file(f.out, "a.json", "1");
	ck_assert_int_eq(it[1].err, EISDIR);
	ck_assert_int_eq(tmp_count(&f), 0);
	groupsync_free(g);
	groupsync_free(NULL);
	fixture_fini(&f);
}
END_TEST

static Suite *
groupsync_suite(void)
{
	Suite *s = suite_create("groupsync");
	TCase *tc = tcase_create("groupsync");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_batch_fsync_rename);
	tcase_add_test(tc, test_failures_reported);
	tcase_add_test(tc, test_nosync_runs_at_once);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(groupsync_suite)
