/*
 * check_spool.c — unit tests for daemon/spool/spool.c.
 *
 * Each test gets a fresh spool in a mkdtemp directory (Check's fork mode
 * keeps umask and file descriptor changes inside the test).  Expectations
 * come from DESIGN.md §2 (the directories, the writer protocol, corrupt/
 * with a .reason file), STYLE.md "Spool safety habits" (safe opens) and
 * spool.h.  The modes are literal octal numbers from the contract: tmp/,
 * incoming/, delayed/, jobs/ and state/ are group-writable setgid 02770
 * (submitters write there); no spool directory is world-writable.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include "spool/spool.h"
#include "unit.h"

#define WHY_LEN 1024

/*
 * Every test's directory is made inside basedir, which main() creates
 * and removes: Check skips the teardown of a failed test.
 */
static char basedir[128];
static char tmpdir[200];	/* mkdtemp */
static char sp_path[512];	/* <tmpdir>/a/b/spool */

static void
setup(void)
{
	unit_case_mkdtemp(tmpdir, sizeof(tmpdir), basedir, "t");
	snprintf(sp_path, sizeof(sp_path), "%s/a/b/spool", tmpdir);
}

static void
teardown(void)
{
	unit_rmtree(tmpdir);
}

/* Create and open the test spool as node n1. */
static void
open_spool(struct spool *s)
{
	char why[WHY_LEN] = "";

	ck_assert_msg(spool_create(sp_path, -1, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_msg(spool_open(s, sp_path, "n1", 0, why, sizeof(why)) == 0,
	    "%s", why);
}

/* Number of entries of dirfd other than . and .. */
static int
count_entries(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
	DIR *dp;
	struct dirent *de;

	ck_assert_int_ge(fd, 0);
	dp = fdopendir(fd);
	ck_assert_ptr_nonnull(dp);
	while ((de = readdir(dp)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(dp);
	return n;
}

/* Contents of dirfd/name (new, NUL-terminated), via plain openat. */
static char *
slurp(int dirfd, const char *name, size_t *lenp)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *p;
	ssize_t n;

	ck_assert_msg(fd >= 0, "open %s: %s", name, strerror(errno));
	ck_assert_int_eq(fstat(fd, &st), 0);
	p = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(p);
	n = read(fd, p, (size_t)st.st_size);
	ck_assert_int_eq(n, st.st_size);
	p[n] = '\0';
	close(fd);
	if (lenp != NULL)
		*lenp = (size_t)n;
	return p;
}

/* dirfd/name holds exactly the text want. */
static void
expect_file(int dirfd, const char *name, const char *want)
{
	char *got = slurp(dirfd, name, NULL);

	ck_assert_msg(strcmp(got, want) == 0, "%s: \"%s\", not \"%s\"", name,
	    got, want);
	free(got);
}

static void
put(int dirfd, const char *name, const char *text, mode_t mode)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    mode);

	ck_assert_msg(fd >= 0, "create %s: %s", name, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* ---- create / open ---------------------------------------------------- */

static const struct {
	enum spool_dir d;
	const char *name;
	int mode;	/* required mode, -1 = any non-world-writable */
} layout[] = {
	{ SPOOL_TMP, "tmp", 02770 },
	{ SPOOL_INCOMING, "incoming", 02770 },
	{ SPOOL_DELAYED, "delayed", 02770 },
	{ SPOOL_QUEUE, "queue", -1 },
	{ SPOOL_ACTIVE, "active", -1 },
	{ SPOOL_DONE, "done", -1 },
	{ SPOOL_FAILED, "failed", -1 },
	{ SPOOL_CANCELLED, "cancelled", -1 },
	{ SPOOL_CORRUPT, "corrupt", -1 },
	{ SPOOL_RESULTS, "results", -1 },
	{ SPOOL_LOGS, "logs", -1 },
	{ SPOOL_JOBS, "jobs", 02770 },
	{ SPOOL_OUTBOX, "outbox", -1 },
	{ SPOOL_STATE, "state", 02770 },
	{ SPOOL_METRICS, "metrics", -1 },
	{ SPOOL_HOOKS, "hooks", -1 },
	{ SPOOL_HOLD, "hold", 02770 },	/* held tasks (coord/hold.h) */
	{ SPOOL_BLOCKED, "blocked", 02770 },	/* writers submit into it */
};

START_TEST(test_create_modes)
{
	char why[WHY_LEN] = "", p[700];
	struct stat st;
	gid_t gid = getuid() == 0 ? 4242 : getgid();

	/* A restrictive umask: the documented modes must be set anyway. */
	umask(077);
	ck_assert_msg(spool_create(sp_path, (long)gid, why, sizeof(why)) == 0,
	    "%s", why);
	ck_assert_int_eq(sizeof(layout) / sizeof(layout[0]), SPOOL_NDIRS);
	for (size_t i = 0; i < sizeof(layout) / sizeof(layout[0]); i++) {
		ck_assert_str_eq(spool_dir_name(layout[i].d), layout[i].name);
		snprintf(p, sizeof(p), "%s/%s", sp_path, layout[i].name);
		ck_assert_msg(lstat(p, &st) == 0, "%s: %s", p,
		    strerror(errno));
		ck_assert_msg(S_ISDIR(st.st_mode), "%s: not a directory", p);
		ck_assert_msg((st.st_mode & 0002) == 0,
		    "%s: world-writable (%04o)", p,
		    (unsigned)(st.st_mode & 07777));
		if (layout[i].mode >= 0) {
			ck_assert_msg((int)(st.st_mode & 07777) ==
			    layout[i].mode, "%s: mode %04o, want %04o", p,
			    (unsigned)(st.st_mode & 07777),
			    (unsigned)layout[i].mode);
			/* the submitters' group owns the group dirs */
			ck_assert_msg(st.st_gid == gid, "%s: gid %u", p,
			    (unsigned)st.st_gid);
		}
	}
	/* Running it again on an existing spool succeeds. */
	ck_assert_msg(spool_create(sp_path, -1, why, sizeof(why)) == 0, "%s",
	    why);
}
END_TEST

START_TEST(test_create_leaves_existing)
{
	char why[WHY_LEN] = "", p[700];
	struct stat st;

	/* "Existing directories are left alone." */
	snprintf(p, sizeof(p), "%s/a", tmpdir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/a/b", tmpdir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(mkdir(sp_path, 0755), 0);
	snprintf(p, sizeof(p), "%s/incoming", sp_path);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, 0700), 0);
	ck_assert_msg(spool_create(sp_path, -1, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);
	/* the missing ones were made */
	snprintf(p, sizeof(p), "%s/delayed", sp_path);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 02770);
}
END_TEST

START_TEST(test_open_not_a_spool)
{
	struct spool s;
	char why[WHY_LEN] = "", p[700];

	/* an empty directory */
	why[0] = '\0';
	errno = 0;
	ck_assert_int_eq(spool_open(&s, tmpdir, NULL, 0, why, sizeof(why)),
	    -1);
	ck_assert_msg(strstr(why, "taskspool init") != NULL, "why: %s", why);
	ck_assert_int_ne(errno, 0);
	spool_close(&s);	/* safe after a failed open */

	/* a spool missing one directory */
	ck_assert_int_eq(spool_create(sp_path, -1, why, sizeof(why)), 0);
	snprintf(p, sizeof(p), "%s/outbox", sp_path);
	ck_assert_int_eq(rmdir(p), 0);
	why[0] = '\0';
	ck_assert_int_eq(spool_open(&s, sp_path, NULL, 0, why, sizeof(why)),
	    -1);
	ck_assert_msg(strstr(why, "taskspool init") != NULL, "why: %s", why);

	/* a path that does not exist */
	snprintf(p, sizeof(p), "%s/nope", tmpdir);
	errno = 0;
	ck_assert_int_eq(spool_open(&s, p, NULL, 0, why, sizeof(why)), -1);
	ck_assert_int_eq(errno, ENOENT);

	/* a directory replaced by a symlink is not followed */
	snprintf(p, sizeof(p), "%s/outbox", sp_path);
	ck_assert_int_eq(symlink("results", p), 0);
	ck_assert_int_eq(spool_open(&s, sp_path, NULL, 0, why, sizeof(why)),
	    -1);
}
END_TEST

/* A spool made before blocked/ existed (issue 14): a client opens it
 * without it (the directory stays -1), a daemon's open makes it 02770. */
START_TEST(test_open_adds_blocked)
{
	struct spool s;
	char why[WHY_LEN] = "", p[700];
	struct stat st;

	ck_assert_int_eq(spool_create(sp_path, -1, why, sizeof(why)), 0);
	snprintf(p, sizeof(p), "%s/blocked", sp_path);
	ck_assert_int_eq(rmdir(p), 0);
	ck_assert_msg(spool_open(&s, sp_path, NULL, 0, why, sizeof(why)) == 0,
	    "%s", why);
	ck_assert_int_eq(s.dir[SPOOL_BLOCKED], -1);
	ck_assert_int_eq(stat(p, &st), -1);
	spool_close(&s);
	ck_assert_msg(spool_open(&s, sp_path, "n1", 0, why, sizeof(why)) == 0,
	    "%s", why);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 02770);
	ck_assert_str_eq(spool_state_name(SPOOL_BLOCKED), "BLOCKED");
	spool_close(&s);
}
END_TEST

START_TEST(test_open_node)
{
	struct spool s;
	char why[WHY_LEN] = "", p[700];
	struct stat st;

	ck_assert_int_eq(spool_create(sp_path, -1, why, sizeof(why)), 0);
	ck_assert_int_eq(spool_open(&s, sp_path, NULL, 0, why, sizeof(why)), 0);
	ck_assert_int_eq(s.self, -1);	/* no node: no active/<node> */
	spool_close(&s);
	ck_assert_int_eq(spool_open(&s, sp_path, "n1", 0, why, sizeof(why)), 0);
	ck_assert_int_ge(s.self, 0);
	snprintf(p, sizeof(p), "%s/active/n1", sp_path);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	spool_close(&s);
	/* a node id outside the grammar cannot name a directory */
	ck_assert_int_eq(spool_open(&s, sp_path, "../x", 0, why, sizeof(why)),
	    -1);
	snprintf(p, sizeof(p), "%s/x", sp_path);
	ck_assert_int_eq(lstat(p, &st), -1);
}
END_TEST

/* ---- publish ---------------------------------------------------------- */

START_TEST(test_publish)
{
	struct spool s;
	char *got;
	size_t len;
	struct stat st;
	int inc;

	open_spool(&s);
	inc = s.dir[SPOOL_INCOMING];

	ck_assert_int_eq(spool_publish(&s, inc, "a.json", "hello\n", 6, -1,
	    0), 0);
	got = slurp(inc, "a.json", &len);
	ck_assert_uint_eq(len, 6);
	ck_assert_str_eq(got, "hello\n");
	free(got);
	ck_assert_int_eq(count_entries(s.dir[SPOOL_TMP]), 0);

	/* excl: an existing name fails with EEXIST, old content intact */
	errno = 0;
	ck_assert_int_eq(spool_publish(&s, inc, "a.json", "other", 5, -1,
	    SPOOL_PUBLISH_EXCL), -1);
	ck_assert_int_eq(errno, EEXIST);
	expect_file(inc, "a.json", "hello\n");
	ck_assert_int_eq(count_entries(s.dir[SPOOL_TMP]), 0);
	ck_assert_int_eq(count_entries(inc), 1);	/* a.json only */

	/* excl on a new name works; the file has one link */
	ck_assert_int_eq(spool_publish(&s, inc, "b.json", "B", 1, -1,
	    SPOOL_PUBLISH_EXCL), 0);
	ck_assert_int_eq(fstatat(inc, "b.json", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(st.st_nlink, 1);
	ck_assert_int_eq(count_entries(s.dir[SPOOL_TMP]), 0);

	/* NOSYNCDIR only skips the directory fsync */
	ck_assert_int_eq(spool_publish(&s, inc, "c.json", "C", 1, -1,
	    SPOOL_PUBLISH_EXCL | SPOOL_PUBLISH_NOSYNCDIR), 0);
	expect_file(inc, "c.json", "C");
	ck_assert_int_eq(spool_publish(&s, inc, "c.json", "C2", 2, -1,
	    SPOOL_PUBLISH_EXCL | SPOOL_PUBLISH_NOSYNCDIR), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(count_entries(s.dir[SPOOL_TMP]), 0);

	/* not excl: replaces */
	ck_assert_int_eq(spool_publish(&s, inc, "a.json", "replaced", 8, -1,
	    0), 0);
	expect_file(inc, "a.json", "replaced");

	/* empty content */
	ck_assert_int_eq(spool_publish(&s, inc, "empty", "", 0, -1,
	    SPOOL_PUBLISH_EXCL), 0);
	ck_assert_int_eq(fstatat(inc, "empty", &st, 0), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(count_entries(s.dir[SPOOL_TMP]), 0);
	spool_close(&s);
}
END_TEST

START_TEST(test_publish_large_and_fsync)
{
	struct spool s;
	char why[WHY_LEN], *data, *got;
	size_t n = 3 * 1024 * 1024 + 17, len;

	ck_assert_int_eq(spool_create(sp_path, -1, why, sizeof(why)), 0);
	ck_assert_int_eq(spool_open(&s, sp_path, NULL, 1, why, sizeof(why)),
	    0);
	data = malloc(n);
	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < n; i++)
		data[i] = (char)(i * 31 + 7);
	ck_assert_int_eq(spool_publish(&s, s.dir[SPOOL_RESULTS], "big", data,
	    n, -1, 0), 0);
	got = slurp(s.dir[SPOOL_RESULTS], "big", &len);
	ck_assert_uint_eq(len, n);
	ck_assert(memcmp(got, data, n) == 0);
	ck_assert_int_eq(count_entries(s.dir[SPOOL_TMP]), 0);
	free(got);
	free(data);
	spool_close(&s);
}
END_TEST

START_TEST(test_publish_mtime)
{
	static const long long ms[] = { 1700000000123LL, 1717243200000LL,
		1717243200999LL, 1000LL, 0LL };
	struct spool s;
	struct stat st;
	char name[32];

	open_spool(&s);
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(name, sizeof(name), "t%zu.json", i);
		ck_assert_int_eq(spool_publish(&s, s.dir[SPOOL_DELAYED], name,
		    "{}", 2, ms[i], SPOOL_PUBLISH_EXCL), 0);
		ck_assert_int_eq(fstatat(s.dir[SPOOL_DELAYED], name, &st, 0),
		    0);
		/* e.g. 1700000000123 ms = 1700000000 s + 123 ms */
		ck_assert_int_eq(st.st_mtim.tv_sec, ms[i] / 1000);
		ck_assert_int_eq(st.st_mtim.tv_nsec / 1000000, ms[i] % 1000);
	}
	spool_close(&s);
}
END_TEST

/* ---- safe open -------------------------------------------------------- */

static void
expect_unsafe(int dirfd, const char *name, size_t max, const char *reason,
    const char *also)
{
	char why[WHY_LEN] = "";
	struct stat st;
	int fd;

	errno = 0;
	fd = spool_open_safe(dirfd, name, max, &st, why, sizeof(why));
	if (fd >= 0)
		close(fd);
	ck_assert_msg(fd == -1, "%s: opened", name);
	ck_assert_msg(errno != 0, "%s: errno not set", name);
	ck_assert_msg(strstr(why, reason) != NULL, "%s: why \"%s\" lacks "
	    "\"%s\"", name, why, reason);
	if (also != NULL)
		ck_assert_msg(strstr(why, also) != NULL, "%s: why \"%s\" "
		    "lacks \"%s\"", name, why, also);
}

START_TEST(test_open_safe)
{
	struct spool s;
	char why[WHY_LEN] = "", buf[16];
	struct stat st;
	int d, fd;

	open_spool(&s);
	d = s.dir[SPOOL_INCOMING];
	alarm(10);	/* a FIFO must not hang us; Check's timeout too */

	/* a good file */
	put(d, "ok.json", "abcdefghij", 0640);	/* 10 bytes */
	fd = spool_open_safe(d, "ok.json", 10, &st, why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_int_eq(st.st_size, 10);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 10);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);

	/* larger than max: 10 bytes with max 9 */
	expect_unsafe(d, "ok.json", 9, "larger than 9", NULL);

	/* a symbolic link, even to a good file */
	ck_assert_int_eq(symlinkat("ok.json", d, "link.json"), 0);
	expect_unsafe(d, "link.json", 100, "symbolic link", NULL);
	ck_assert_int_eq(errno, ELOOP);

	/* a FIFO with no writer: refused at once */
	ck_assert_int_eq(mkfifoat(d, "fifo.json", 0640), 0);
	expect_unsafe(d, "fifo.json", 100, "FIFO", NULL);

	/* a directory */
	ck_assert_int_eq(mkdirat(d, "dir.json", 0750), 0);
	expect_unsafe(d, "dir.json", 100, "directory", NULL);

	/* a hard-linked file: 2 links */
	put(d, "h1.json", "x", 0640);
	ck_assert_int_eq(linkat(d, "h1.json", d, "h2.json", 0), 0);
	expect_unsafe(d, "h1.json", 100, "hard link", "2");
	expect_unsafe(d, "h2.json", 100, "hard link", "2");

	/* mode 000: unreadable, even for root */
	put(d, "m0.json", "{}", 0);
	expect_unsafe(d, "m0.json", 100, "unreadable", NULL);

	/* missing */
	errno = 0;
	ck_assert_int_eq(spool_open_safe(d, "none.json", 100, &st, why,
	    sizeof(why)), -1);
	ck_assert_int_eq(errno, ENOENT);
	alarm(0);
	spool_close(&s);
}
END_TEST

/* A socket cannot even be opened (ENXIO); the reason must still name
 * the rule that refuses it, not only the system error. */
START_TEST(test_open_safe_socket)
{
	struct spool s;
	struct sockaddr_un sa;
	char p[700];
	int sk;

	open_spool(&s);
	snprintf(p, sizeof(p), "%s/incoming/sock.json", sp_path);
	ck_assert_uint_lt(strlen(p), sizeof(sa.sun_path));
	sk = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(sk, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, p, strlen(p) + 1);
	ck_assert_int_eq(bind(sk, (struct sockaddr *)&sa, sizeof(sa)), 0);
	expect_unsafe(s.dir[SPOOL_INCOMING], "sock.json", 100, "socket",
	    NULL);
	close(sk);
	spool_close(&s);
}
END_TEST

/* ---- quarantine ------------------------------------------------------- */

START_TEST(test_quarantine)
{
	struct spool s;
	struct stat st;
	int inc, cor;

	open_spool(&s);
	inc = s.dir[SPOOL_INCOMING];
	cor = s.dir[SPOOL_CORRUPT];

	put(inc, "bad.json", "first", 0640);
	ck_assert_int_eq(spool_quarantine(&s, inc, "bad.json",
	    "json: invalid JSON at line 1"), 0);
	ck_assert_int_eq(fstatat(inc, "bad.json", &st, 0), -1);
	expect_file(cor, "bad.json", "first");
	expect_file(cor, "bad.json.reason", "json: invalid JSON at line 1\n");

	/* the same name again: bad.json.1 */
	put(inc, "bad.json", "second", 0640);
	ck_assert_int_eq(spool_quarantine(&s, inc, "bad.json",
	    "taskCode: required member missing"), 0);
	expect_file(cor, "bad.json.1", "second");
	expect_file(cor, "bad.json.1.reason", "taskCode: required member missing\n");
	/* the first one is untouched */
	expect_file(cor, "bad.json", "first");
	ck_assert_int_eq(count_entries(cor), 4);
	ck_assert_int_eq(count_entries(s.dir[SPOOL_TMP]), 0);

	/* a missing file: -1, nothing written */
	errno = 0;
	ck_assert_int_eq(spool_quarantine(&s, inc, "gone.json", "x"), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(count_entries(cor), 4);
	spool_close(&s);
}
END_TEST

START_TEST(test_quarantine_hostile_names)
{
	/* the last one: 200 bytes, longer than SPOOL_NAME_MAX (160) */
	static const char *const hostile[] = { "evil\nname.json",
		".hidden.json", "tab\there", "\xff\xfe.json",
		"L123456789012345678901234567890123456789012345678901234567890"
		"1234567890123456789012345678901234567890123456789012345678901"
		"1234567890123456789012345678901234567890123456789012345678901"
		"12345678901234567" };
	struct spool s;
	int inc, cor;

	open_spool(&s);
	inc = s.dir[SPOOL_INCOMING];
	cor = s.dir[SPOOL_CORRUPT];
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		put(inc, hostile[i], "x", 0640);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		ck_assert_msg(spool_quarantine(&s, inc, hostile[i],
		    "name: not allowed") == 0, "quarantine #%zu: %s", i,
		    strerror(errno));
	ck_assert_int_eq(count_entries(inc), 0);
	/* two entries (file + reason) per name, none of them hostile: only
	 * printable ASCII, no leading dot */
	ck_assert_int_eq(count_entries(cor), 2 * (int)(sizeof(hostile) /
	    sizeof(hostile[0])));
	{
		int fd = openat(cor, ".", O_RDONLY | O_DIRECTORY);
		DIR *dp = fdopendir(fd);
		struct dirent *de;

		ck_assert_ptr_nonnull(dp);
		while ((de = readdir(dp)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			ck_assert_msg(de->d_name[0] != '.', "dot name %s",
			    de->d_name);
			/* mapped name + ".reason" at most */
			ck_assert_msg(strlen(de->d_name) <= SPOOL_NAME_MAX + 7,
			    "%zu-byte name in corrupt/", strlen(de->d_name));
			for (const char *c = de->d_name; *c != '\0'; c++)
				ck_assert_msg(*c > 0x20 && *c < 0x7f,
				    "byte 0x%02x in a corrupt/ name",
				    (unsigned char)*c);
		}
		closedir(dp);
	}
	/* the newline name is mapped, and its reason file is beside it */
	{
		struct stat st;

		ck_assert_int_eq(fstatat(cor, "evil_name.json", &st, 0), 0);
		expect_file(cor, "evil_name.json.reason", "name: not allowed\n");
	}
	spool_close(&s);
}
END_TEST

/* ---- exclusive move --------------------------------------------------- */

START_TEST(test_move_excl)
{
	struct spool s;
	struct stat st;
	int inc, act;

	open_spool(&s);
	inc = s.dir[SPOOL_INCOMING];
	act = s.self;
	put(inc, "m.json", "task", 0640);
	ck_assert_int_eq(spool_move_excl(inc, "m.json", act, "m.json"), 0);
	ck_assert_int_eq(fstatat(inc, "m.json", &st, 0), -1);
	expect_file(act, "m.json", "task");
	ck_assert_int_eq(fstatat(act, "m.json", &st, 0), 0);
	ck_assert_int_eq(st.st_nlink, 1);

	/* the target exists: EEXIST, both files intact */
	put(inc, "m.json", "again", 0640);
	errno = 0;
	ck_assert_int_eq(spool_move_excl(inc, "m.json", act, "m.json"), -1);
	ck_assert_int_eq(errno, EEXIST);
	expect_file(act, "m.json", "task");
	expect_file(inc, "m.json", "again");

	/* the source is gone (another node moved it first): ENOENT */
	errno = 0;
	ck_assert_int_eq(spool_move_excl(inc, "none.json", act, "none.json"),
	    -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(fstatat(act, "none.json", &st, 0), -1);

	/* a directory (cannot be hard-linked) moves too */
	ck_assert_int_eq(mkdirat(inc, "d", 0750), 0);
	ck_assert_int_eq(spool_move_excl(inc, "d", act, "d"), 0);
	ck_assert_int_eq(fstatat(act, "d", &st, 0), 0);
	ck_assert(S_ISDIR(st.st_mode));
	spool_close(&s);
}
END_TEST

/* ---- locate ----------------------------------------------------------- */

START_TEST(test_locate)
{
	struct spool s;
	char node[65];
	enum spool_dir where;
	int q2, a2;
	static const struct {
		const char *id;
		enum spool_dir d;
	} flat[] = {
		{ "t-incoming", SPOOL_INCOMING },
		{ "t-delayed", SPOOL_DELAYED },
		{ "t-done", SPOOL_DONE },
		{ "t-failed", SPOOL_FAILED },
		{ "t-cancelled", SPOOL_CANCELLED },
	};

	open_spool(&s);
	for (size_t i = 0; i < sizeof(flat) / sizeof(flat[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s.json", flat[i].id);
		ck_assert_int_eq(spool_publish(&s, s.dir[flat[i].d], name,
		    "{}", 2, -1, SPOOL_PUBLISH_EXCL), 0);
	}
	ck_assert_int_eq(spool_publish(&s, s.self, "t-active.json", "{}", 2,
	    -1, SPOOL_PUBLISH_EXCL), 0);
	a2 = spool_node_dir(&s, SPOOL_ACTIVE, "n2");
	ck_assert_int_ge(a2, 0);
	ck_assert_int_eq(spool_publish(&s, a2, "t-active2.json", "{}", 2, -1,
	    SPOOL_PUBLISH_EXCL), 0);
	q2 = spool_node_dir(&s, SPOOL_QUEUE, "n3");
	ck_assert_int_ge(q2, 0);
	ck_assert_int_eq(spool_publish(&s, q2, "t-queued.json", "{}", 2, -1,
	    SPOOL_PUBLISH_EXCL), 0);

	for (size_t i = 0; i < sizeof(flat) / sizeof(flat[0]); i++) {
		ck_assert_msg(spool_locate(&s, flat[i].id, &where, node) == 0,
		    "%s not found", flat[i].id);
		ck_assert_msg(where == flat[i].d, "%s in %s", flat[i].id,
		    spool_dir_name(where));
	}
	memset(node, 0, sizeof(node));
	ck_assert_int_eq(spool_locate(&s, "t-active", &where, node), 0);
	ck_assert_int_eq(where, SPOOL_ACTIVE);
	ck_assert_str_eq(node, "n1");
	ck_assert_int_eq(spool_locate(&s, "t-active2", &where, node), 0);
	ck_assert_int_eq(where, SPOOL_ACTIVE);
	ck_assert_str_eq(node, "n2");
	ck_assert_int_eq(spool_locate(&s, "t-queued", &where, node), 0);
	ck_assert_int_eq(where, SPOOL_QUEUE);
	ck_assert_str_eq(node, "n3");

	errno = 0;
	ck_assert_int_eq(spool_locate(&s, "t-none", &where, node), -1);
	ck_assert_int_eq(errno, ENOENT);
	/* ids outside the grammar are never looked up */
	ck_assert_int_eq(spool_locate(&s, "../t-done", &where, node), -1);
	ck_assert_int_eq(spool_locate(&s, "", &where, node), -1);
	close(a2);
	close(q2);
	spool_close(&s);
}
END_TEST

/* ---- names and small reads -------------------------------------------- */

START_TEST(test_name_checks)
{
	char s129[130], s65[66];

	memset(s129, 'a', 129);
	s129[129] = '\0';
	memset(s65, 'c', 65);
	s65[65] = '\0';
	ck_assert(!spool_id_ok(s129));
	s129[128] = '\0';
	ck_assert(spool_id_ok(s129));		/* 128 */
	ck_assert(!spool_code_ok(s65));
	s65[64] = '\0';
	ck_assert(spool_code_ok(s65));		/* 64 */
	ck_assert(spool_id_ok("order-20240601-0001"));
	ck_assert(!spool_id_ok(".."));
	ck_assert(!spool_id_ok("a/b"));
	ck_assert(!spool_id_ok(""));
	ck_assert(!spool_code_ok("-x"));
}
END_TEST

START_TEST(test_read_file)
{
	struct spool s;
	char *got;
	size_t len = 0;

	open_spool(&s);
	put(s.dir[SPOOL_STATE], "f", "0123456789", 0640);
	got = spool_read_file(s.dir[SPOOL_STATE], "f", 10, &len);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(got, "0123456789");
	free(got);
	errno = 0;
	ck_assert_ptr_null(spool_read_file(s.dir[SPOOL_STATE], "f", 9, &len));
	ck_assert_int_eq(errno, EFBIG);
	errno = 0;
	ck_assert_ptr_null(spool_read_file(s.dir[SPOOL_STATE], "none", 9,
	    &len));
	ck_assert_int_eq(errno, ENOENT);
	spool_close(&s);
}
END_TEST

static Suite *
spool_suite(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("spool");

	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_create_modes);
	tcase_add_test(tc, test_open_adds_blocked);
	tcase_add_test(tc, test_create_leaves_existing);
	tcase_add_test(tc, test_open_not_a_spool);
	tcase_add_test(tc, test_open_node);
	tcase_add_test(tc, test_publish);
	tcase_add_test(tc, test_publish_large_and_fsync);
	tcase_add_test(tc, test_publish_mtime);
	tcase_add_test(tc, test_open_safe);
	tcase_add_test(tc, test_open_safe_socket);
	tcase_add_test(tc, test_quarantine);
	tcase_add_test(tc, test_quarantine_hostile_names);
	tcase_add_test(tc, test_move_excl);
	tcase_add_test(tc, test_locate);
	tcase_add_test(tc, test_name_checks);
	tcase_add_test(tc, test_read_file);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_TMPDIR(spool_suite, basedir, "check_spool")
