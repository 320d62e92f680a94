/*
 * check_coord.c — the coord contract (daemon/coord/coord.h), run against both
 * backends: every test is a loop test whose index is the backend (0 =
 * file, 1 = redis).  The Redis backend talks to a real redis-server: the
 * one named by TS_TEST_REDIS (host:port), else one started for this run
 * with tests/servers/redis.sh and stopped at the end.  Each run uses its
 * own key prefix, so a shared server is safe.
 *
 * Expectations come from coord.h's contract: a lease is exclusive; a
 * holder that dies without releasing frees it at once (file: the kernel
 * drops the flock) or after lease_ms (redis: PX expiry) and never before;
 * release and renewal are token-checked; one leader at a time, with a
 * growing epoch (redis); heartbeats list what was written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "spool/config.h"
#include "coord/coord.h"
#include "coord/coord_open.h"
#include "coord/execrate.h"
#include "coord/maxconc.h"
#include "core/fairshare.h"
#include "core/nameset.h"
#include "spool/spool.h"
#include "spool/clock.h"
#include "unit.h"

#define LEASE_MS	1000
#define RENEW_MS	200

static char basedir[128];
static char redis_addr[256];	/* "" = no server: redis cases fail */
static char redis_dir[200];	/* our own server's directory, or "" */
static char prefix[64];
static char tmpdir[200];
static struct spool sp;
static int nprefix;

static void
setup(void)
{
	char why[256], path[300];

	unit_case_mkdtemp(tmpdir, sizeof(tmpdir), basedir, "t");
	snprintf(path, sizeof(path), "%s/spool", tmpdir);
	ck_assert_int_eq(spool_create(path, -1, why, sizeof(why)), 0);
	ck_assert_msg(spool_open(&sp, path, "a", 0, why, sizeof(why)) == 0,
	    "%s", why);
	/* A fresh key space per test (tests run in forked children). */
	snprintf(prefix, sizeof(prefix), "tscheck:%d:%d:%ld:", (int)getpid(),
	    nprefix++, (long)time(NULL));
}

static void
teardown(void)
{
	spool_close(&sp);
}

static struct coord *
open_node(int backend, const char *node)
{
	struct config cfg;
	char why[256];
	struct coord *c;

	config_defaults(&cfg);
	cfg.lease_ms = LEASE_MS;
	cfg.lease_renew_ms = RENEW_MS;
	cfg.heartbeat_ms = 1000;
	if (backend == 1) {
		ck_assert_msg(redis_addr[0] != '\0', "no redis-server");
		snprintf(cfg.redis, sizeof(cfg.redis), "%s", redis_addr);
		snprintf(cfg.redis_prefix, sizeof(cfg.redis_prefix), "%s",
		    prefix);
	}
	c = coord_open(&cfg, node, &sp, why, sizeof(why));
	ck_assert_msg(c != NULL, "coord_open: %s", why);
	ck_assert_str_eq(coord_kind(c), backend ? "redis" : "file");
	return c;
}

/* A task file active/a/<id>.json and a new descriptor on it. */
static int
task_fd(const char *id)
{
	char name[SPOOL_NAME_MAX];
	int fd;

	snprintf(name, sizeof(name), "%s.json", id);
	fd = openat(sp.self, name, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	ck_assert_int_ge(fd, 0);
	return fd;
}

/* Claim as the daemon does: local lock, then the lease. */
static enum coord_status
claim(struct coord *c, int fd, const char *id, int attempt)
{
	char name[SPOOL_NAME_MAX], why[256];

	snprintf(name, sizeof(name), "%s.json", id);
	if (coord_flock_verify(fd, sp.self, name) != 0)
		return COORD_BUSY;
	return coord_lease_acquire(c, fd, id, attempt, tstime_mono_ms(), why,
	    sizeof(why));
}

static enum coord_status
take(struct coord *c, int fd, const char *id)
{
	char name[SPOOL_NAME_MAX], why[256];

	snprintf(name, sizeof(name), "%s.json", id);
	return coord_orphan_take(c, fd, sp.self, name, id, tstime_mono_ms(),
	    why, sizeof(why));
}

/* A raw command on the test server (to play another party). */
static long long
raw(const char *fmtstr, const char *arg)
{
	char host[256], *colon;
	redisContext *rc;
	redisReply *r;
	long long v = -1;

	snprintf(host, sizeof(host), "%s", redis_addr);
	colon = strrchr(host, ':');
	ck_assert_ptr_nonnull(colon);
	*colon = '\0';
	rc = redisConnect(host, atoi(colon + 1));
	ck_assert(rc != NULL && !rc->err);
	r = redisCommand(rc, fmtstr, arg);
	ck_assert_ptr_nonnull(r);
	if (r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	freeReplyObject(r);
	redisFree(rc);
	return v;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int nlost, lastlost;
static long long re_old, re_new;	/* coord_on_reestablished's last */

static void
on_reestablished(void *arg, const char *id, long long old, long long fence)
{
	(void)arg;
	ck_assert_str_eq(id, "t6");
	re_old = old;
	re_new = fence;
}

static void
on_lost(void *arg, int fd)
{
	(void)arg;
	nlost++;
	lastlost = fd;
}

/* A lease is exclusive, and free again once released. */
START_TEST(lease_exclusive)
{
	struct coord *a = open_node(_i, "a"), *b = open_node(_i, "b");
	int fa = task_fd("t1"), fb = task_fd("t1");
	long long f1, f2;

	ck_assert_int_eq(claim(a, fa, "t1", 1), COORD_OK);
	ck_assert_int_eq(take(b, fb, "t1"), COORD_BUSY);
	ck_assert_int_eq(coord_lease_valid(a, fa, tstime_mono_ms()),
	    COORD_OK);
	f1 = coord_lease_fence(a, fa);
	coord_lease_close(a, fa);
	ck_assert_int_eq(take(b, fb, "t1"), COORD_OK);
	f2 = coord_lease_fence(b, fb);
	if (_i == 1) {
		/* Fencing tokens grow with every lease granted. */
		ck_assert_int_gt(f1, 0);
		ck_assert_int_gt(f2, f1);
	} else {
		ck_assert_int_eq(f1, 0);
		ck_assert_int_eq(f2, 0);
	}
	coord_lease_close(b, fb);
	coord_close(a);
	coord_close(b);
}
END_TEST

/*
 * A holder that dies without releasing: file, free at once; redis, busy
 * until lease_ms after the grant, then free.
 */
START_TEST(lease_holder_dies)
{
	struct coord *b = open_node(_i, "b");
	int fb = task_fd("t2"), status;
	int64_t t0 = tstime_mono_ms(), freed;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct coord *a = open_node(_i, "a");
		int fa = task_fd("t2");

		_exit(claim(a, fa, "t2", 1) == COORD_OK ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	while (take(b, fb, "t2") != COORD_OK) {
		ck_assert_int_lt(tstime_mono_ms() - t0, 20 * LEASE_MS);
		sleep_ms(20);
	}
	freed = tstime_mono_ms() - t0;
	if (_i == 1)
		ck_assert_int_ge(freed, LEASE_MS - 50);	/* PX granularity */
	else
		ck_assert_int_lt(freed, LEASE_MS);
	coord_lease_close(b, fb);
	coord_close(b);
}
END_TEST

/*
 * maxConcurrent (maxconc.h): at most max slots of a code are held at
 * once, a slot is freed with its lease, and one whose holder dies (a
 * child that exits holding it) is free again — at once in file mode
 * (flock), lease_ms after its last renewal at most in redis mode.
 */
START_TEST(limit_semaphore)
{
	struct coord *a = open_node(_i, "a");
	int f1 = task_fd("m1"), f2 = task_fd("m2"), f3 = task_fd("m3");
	int status;
	char why[256];
	int64_t t0, freed;
	pid_t pid;

	ck_assert_int_eq(claim(a, f1, "m1", 1), COORD_OK);
	ck_assert_int_eq(claim(a, f2, "m2", 1), COORD_OK);
	ck_assert_int_eq(claim(a, f3, "m3", 1), COORD_OK);
	ck_assert_int_eq(coord_limit_acquire(a, f1, "probe", 2, why,
	    sizeof(why)), COORD_OK);
	ck_assert_int_eq(coord_limit_acquire(a, f2, "probe", 2, why,
	    sizeof(why)), COORD_OK);
	ck_assert_int_eq(coord_limit_acquire(a, f3, "probe", 2, why,
	    sizeof(why)), COORD_BUSY);
	/* Another code has its own slots. */
	ck_assert_int_eq(coord_limit_acquire(a, f3, "other", 1, why,
	    sizeof(why)), COORD_OK);
	coord_lease_close(a, f3);
	f3 = task_fd("m3");
	ck_assert_int_eq(claim(a, f3, "m3", 2), COORD_OK);
	coord_lease_close(a, f1);		/* frees its slot */
	ck_assert_int_eq(coord_limit_acquire(a, f3, "probe", 2, why,
	    sizeof(why)), COORD_OK);
	coord_lease_close(a, f2);
	coord_lease_close(a, f3);
	/* A holder that dies with both slots. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct coord *d = open_node(_i, "d");
		int g1 = task_fd("d1"), g2 = task_fd("d2");

		_exit(claim(d, g1, "d1", 1) == COORD_OK && claim(d, g2, "d2",
		    1) == COORD_OK && coord_limit_acquire(d, g1, "probe", 2,
		    why, sizeof(why)) == COORD_OK && coord_limit_acquire(d, g2,
		    "probe", 2, why, sizeof(why)) == COORD_OK ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	t0 = tstime_mono_ms();
	f1 = task_fd("m4");
	ck_assert_int_eq(claim(a, f1, "m4", 1), COORD_OK);
	while (coord_limit_acquire(a, f1, "probe", 2, why, sizeof(why)) !=
	    COORD_OK) {
		ck_assert_int_lt(tstime_mono_ms() - t0, 20 * LEASE_MS);
		sleep_ms(20);
	}
	freed = tstime_mono_ms() - t0;
	if (_i == 1)
		ck_assert_int_ge(freed, LEASE_MS / 2);	/* it expired */
	else
		ck_assert_int_lt(freed, LEASE_MS);
	coord_lease_close(a, f1);
	coord_close(a);
}
END_TEST

/* Entries of state/limits/ (sub "") or state/limits/keys/ (sub "keys")
 * holding '@', or (at = 0) any but "." and "..". */
static int
limit_files(const char *sub, int at)
{
	char path[300];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/spool/state/limits/%s", tmpdir, sub);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n += !at || strchr(e->d_name, '@') != NULL;
	closedir(d);
	return n;
}

/* Whether byte off of state/limits/keys/<code> is write-locked by an
 * open file description lock (fcntl(2) F_OFD_GETLK from a new one). */
static int
key_byte_locked(const char *code, off_t off)
{
	char path[300];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = off, .l_len = 1 };
	int fd;

	snprintf(path, sizeof(path), "%s/spool/state/limits/keys/%s", tmpdir,
	    code);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	ck_assert_int_eq(fcntl(fd, F_OFD_GETLK, &fl), 0);
	close(fd);
	return fl.l_type != F_UNLCK;
}

/*
 * max_concurrent_per_key: max slots per (code, key), each key its own;
 * a slot is freed with its lease; an idle key leaves no slot file
 * (file mode) and no Redis key (redis mode: EXISTS is 0).
 */
START_TEST(limit_key_semaphore)
{
	struct coord *a = open_node(_i, "a");
	int f1 = task_fd("k1"), f2 = task_fd("k2"), f3 = task_fd("k3");
	const char *h1 = "00112233445566778899aabbccddeeff";
	const char *h2 = "ffeeddccbbaa99887766554433221100";
	char why[256], k[300];

	ck_assert_int_eq(claim(a, f1, "k1", 1), COORD_OK);
	ck_assert_int_eq(claim(a, f2, "k2", 1), COORD_OK);
	ck_assert_int_eq(claim(a, f3, "k3", 1), COORD_OK);
	ck_assert_int_eq(coord_limit_acquire_key(a, f1, "probe", h1, 2, why,
	    sizeof(why)), COORD_OK);
	ck_assert_int_eq(coord_limit_acquire_key(a, f1, "probe", h1, 2, why,
	    sizeof(why)), COORD_OK);	/* held already: not a second */
	ck_assert_int_eq(coord_limit_acquire_key(a, f2, "probe", h1, 2, why,
	    sizeof(why)), COORD_OK);
	ck_assert_int_eq(coord_limit_acquire_key(a, f3, "probe", h1, 2, why,
	    sizeof(why)), COORD_BUSY);
	if (_i == 0) {	/* h1's slots 0 and 1: bytes 0x001122334455 x 4096
			 * + 0, 1 (maxconc.h), not the next one */
		ck_assert(key_byte_locked("probe", 0x001122334455LL * 4096));
		ck_assert(key_byte_locked("probe", 0x001122334455LL * 4096 +
		    1));
		ck_assert(!key_byte_locked("probe", 0x001122334455LL * 4096 +
		    2));
	}
	/* Another key, and the same key of another code, are free. */
	ck_assert_int_eq(coord_limit_acquire_key(a, f3, "probe", h2, 1, why,
	    sizeof(why)), COORD_OK);
	coord_lease_close(a, f3);
	f3 = task_fd("k3");
	ck_assert_int_eq(claim(a, f3, "k3", 2), COORD_OK);
	ck_assert_int_eq(coord_limit_acquire_key(a, f3, "other", h1, 1, why,
	    sizeof(why)), COORD_OK);
	coord_lease_close(a, f3);
	f3 = task_fd("k3");
	ck_assert_int_eq(claim(a, f3, "k3", 3), COORD_OK);
	coord_lease_close(a, f1);		/* frees a slot of h1 */
	ck_assert_int_eq(coord_limit_acquire_key(a, f3, "probe", h1, 2, why,
	    sizeof(why)), COORD_OK);
	coord_lease_close(a, f2);
	coord_lease_close(a, f3);
	/* Every key idle: nothing left of them (file mode: one lock file
	 * per code, no file per key, no lock). */
	if (_i == 0) {
		ck_assert_int_eq(limit_files("", 1), 0);
		ck_assert_int_eq(limit_files("keys", 0), 2);	/* probe, other */
		ck_assert_int_eq(key_byte_locked("probe", 0x001122334455LL *
		    4096), 0);
	} else {
		snprintf(k, sizeof(k), "%slimit:probe:k:%s", prefix, h1);
		ck_assert_int_eq(raw("EXISTS %s", k), 0);
		snprintf(k, sizeof(k), "%slimit:probe:k:%s", prefix, h2);
		ck_assert_int_eq(raw("EXISTS %s", k), 0);
	}
	coord_close(a);
}
END_TEST

/* max_concurrent values: parsing and checking (hand-made cases). */
START_TEST(limit_config)
{
	char why[256];

	ck_assert_int_eq(limits_check("", why, sizeof(why)), 0);
	ck_assert_int_eq(limits_check("probe=2,report=5", why, sizeof(why)),
	    0);
	ck_assert_int_eq(limits_max("probe=2,report=5", "report"), 5);
	ck_assert_int_eq(limits_max("probe=2,report=5", "probe"), 2);
	ck_assert_int_eq(limits_max("probe=2,report=5", "prob"), 0);
	ck_assert_int_eq(limits_max("xprobe=2", "probe"), 0);
	ck_assert_int_eq(limits_check("probe=0", why, sizeof(why)), -1);
	ck_assert_int_eq(limits_check("probe=4097", why, sizeof(why)), -1);
	ck_assert_int_eq(limits_check("probe", why, sizeof(why)), -1);
	ck_assert_int_eq(limits_check("probe=2,", why, sizeof(why)), -1);
	ck_assert_int_eq(limits_check("a b=2", why, sizeof(why)), -1);
	ck_assert_int_eq(limits_check("p=1,p=1", why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "given twice"));
}
END_TEST

/*
 * limits_requeue: the first waiting names of each group in claim order
 * (the higher priority, the older mtime, the file name) go back, at most
 * the code's limit, each with its mtime, priority and flow; the others
 * stay with theirs, nothing is lost.  The expected order worked out by
 * hand from the keys (ms) and priorities below.
 */
START_TEST(limit_requeue)
{
	struct nameset w, cand, q, names;
	struct fairshare fs;
	struct nameset_node *p;
	static const struct { const char *name; int64_t key; int prio,
	    flags; } want[] = { { "z-1.json", 50, 5, 0 },
		{ "x-1.json", 60, 5, 0 }, { "k-1.json", 70, 5, 0 },
		{ "k-6.json", 80, 5, 0 }, { "r-001.json", 100, 5, 1 },
		{ "r-004.json", 400, 9, 0 } };
	/* They stay as they were, in the order they came. */
	static const struct { const char *name; int64_t key; } stay[] = {
		{ "probe/r-003.json", 300 }, { "probe/r-002.json", 200 },
		{ "mail@00ff/k-2.json", 70 }, { "fax@11/k-5.json", 90 } };
	int app;

	fair_init(&fs);
	app = fair_flow_of(&fs, "app:a", 1);
	ck_assert_int_eq(nameset_init(&names), 0);
	ck_assert_int_eq(nameset_init(&w), 0);
	ck_assert_int_eq(nameset_init(&cand), 0);
	ck_assert_int_eq(nameset_init(&q), 0);
	cand.fair = &fs;
	/* probe=2: r-004 (priority 9) and r-001 (the oldest of 5).  Keys'
	 * groups: mail's key limit 1 by key_spec (one mtime: the file name
	 * decides); fax has none there (tasks' own maxConcurrentPerKey):
	 * one at a time, the older mtime. */
	static const struct { const char *group, *name; int flags;
	    int64_t key; int prio, flow; } in[] = {
		{ "probe", "r-003.json", 0, 300, 5, 0 },
		{ "probe", "r-001.json", 1, 100, 5, 0 },
		{ "probe", "r-002.json", 0, 200, 5, 0 },
		{ "probe", "r-004.json", 0, 400, 9, 0 },
		{ "zeta", "z-1.json", 0, 50, 5, 0 },
		{ "other", "q-9.json", LIMITS_FROM_QUEUE, 10, 2, 3 },
		{ "gone", "x-1.json", 0, 60, 5, -1 },	/* -1: app */
		{ "mail@00ff", "k-2.json", 0, 70, 5, 0 },
		{ "mail@00ff", "k-1.json", 0, 70, 5, 0 },
		{ "fax@11", "k-5.json", 0, 90, 5, 0 },
		{ "fax@11", "k-6.json", 0, 80, 5, 0 } };

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		ck_assert_int_eq(limits_wait(&w, &names, in[i].group, in[i].name,
		    in[i].flags, in[i].key, in[i].prio, in[i].flow < 0 ? app :
		    in[i].flow), 0);
	/* probe=2; other=1; "gone" has no limit any more: it goes back. */
	ck_assert_int_eq(limits_requeue(&w, &names, "probe=2,other=1,zeta=1",
	    "mail=1", &cand, &q, 4096, 1000, 0), 7);
	ck_assert_int_eq(w.count, 4);
	/* names: the file names of those that stay, no more */
	ck_assert_uint_eq(names.count, 4);
	ck_assert_ptr_nonnull(nameset_find(&names, "r-003.json"));
	ck_assert_ptr_nonnull(nameset_find(&names, "k-5.json"));
	ck_assert_ptr_null(nameset_find(&names, "r-004.json"));
	ck_assert_ptr_null(nameset_find(&names, "q-9.json"));
	p = w.head;
	for (size_t i = 0; i < 4; i++, p = p->fnext) {
		ck_assert_ptr_nonnull(p);
		ck_assert_str_eq(p->name, stay[i].name);
		ck_assert_int_eq(p->key, stay[i].key);
		ck_assert_int_eq(p->prio, 5);
	}
	ck_assert_int_eq(q.count, 1);
	ck_assert_str_eq(q.head->name, "q-9.json");
	ck_assert_int_eq(q.head->flags & LIMITS_FROM_QUEUE, 0);
	ck_assert_int_eq(q.head->key, 10);
	ck_assert_int_eq(q.head->prio, 2);
	ck_assert_int_eq(q.head->flow, 3);
	ck_assert_uint_eq(fs.flow[app].queued, 1);
	for (size_t i = 0; i < 6; i++) {
		p = nameset_pop(&cand);
		ck_assert_ptr_nonnull(p);
		ck_assert_str_eq(p->name, want[i].name);
		ck_assert_int_eq(p->key, want[i].key);
		ck_assert_int_eq(p->prio, want[i].prio);
		ck_assert_int_eq(p->flags, want[i].flags);
		ck_assert_int_eq(p->flow, i == 1 ? app : FAIR_LOCAL);
		free(p);
	}
	ck_assert_ptr_null(nameset_pop(&cand));
	ck_assert_uint_eq(fs.flow[app].queued, 0);
	nameset_fini(&w);
	nameset_fini(&cand);
	nameset_fini(&q);
	nameset_fini(&names);
}
END_TEST

/*
 * limits_requeue ages as the claim does (core/priority.h): with a limit
 * of 1, old0 (priority 0, mtime 1000 ms) against new5 (priority 5, 9000)
 * at 10000 ms: without aging new5 goes back; with a level per 1000 ms
 * old0 has waited 9000 ms, 0 + 9 = 9 > 5 + 1 = 6, so old0 does (worked
 * out by hand from the README's formula).
 */
START_TEST(limit_requeue_ages)
{
	static const struct { int64_t aging; const char *want; } t[] = {
		{ 0, "new5.json" }, { 1000, "old0.json" } };

	for (size_t i = 0; i < 2; i++) {
		struct nameset w, cand, q;
		struct nameset_node *p;

		ck_assert_int_eq(nameset_init(&w), 0);
		ck_assert_int_eq(nameset_init(&cand), 0);
		ck_assert_int_eq(nameset_init(&q), 0);
		ck_assert_int_eq(limits_wait(&w, NULL, "a", "old0.json", 0, 1000, 0,
		    0), 0);
		ck_assert_int_eq(limits_wait(&w, NULL, "a", "new5.json", 0, 9000, 5,
		    0), 0);
		ck_assert_uint_eq(limits_requeue(&w, NULL, "a=1", "", &cand, &q,
		    4096, 10000, t[i].aging), 1);
		ck_assert_ptr_nonnull(p = nameset_pop(&cand));
		ck_assert_str_eq(p->name, t[i].want);
		free(p);
		ck_assert_uint_eq(w.count, 1);
		nameset_fini(&w);
		nameset_fini(&cand);
		nameset_fini(&q);
	}
}
END_TEST

/* Renewal keeps a lease alive past lease_ms; nothing is reported lost. */
START_TEST(lease_renewed)
{
	struct coord *a = open_node(_i, "a"), *b = open_node(_i, "b");
	int fa = task_fd("t3"), fb = task_fd("t3");
	int64_t t0 = tstime_mono_ms();

	nlost = 0;
	ck_assert_int_eq(claim(a, fa, "t3", 1), COORD_OK);
	while (tstime_mono_ms() - t0 < 3 * LEASE_MS) {
		coord_tick(a, tstime_mono_ms(), on_lost, NULL);
		sleep_ms(RENEW_MS / 4);
	}
	ck_assert_int_eq(nlost, 0);
	ck_assert_int_eq(take(b, fb, "t3"), COORD_BUSY);
	ck_assert_int_eq(coord_lease_valid(a, fa, tstime_mono_ms()),
	    COORD_OK);
	coord_lease_close(a, fa);
	close(fb);
	coord_close(a);
	coord_close(b);
}
END_TEST

/*
 * Redis: a lease whose key disappeared (FLUSHALL, expiry) is reported
 * lost at the next renewal, and the late holder's release does not
 * delete the new holder's lease (token check).
 */
START_TEST(lease_lost_token_checked)
{
	struct coord *a = open_node(_i, "a"), *b = open_node(_i, "b"),
	    *c = open_node(_i, "c");
	int fa = task_fd("t4"), fb = task_fd("t4"), fc = task_fd("t4");
	char k[128];

	if (_i == 0) {
		/* file: a lock cannot be lost while its holder lives. */
		ck_assert_int_eq(claim(a, fa, "t4", 1), COORD_OK);
		nlost = 0;
		coord_tick(a, tstime_mono_ms() + 10 * LEASE_MS, on_lost, NULL);
		ck_assert_int_eq(nlost, 0);
		ck_assert_int_eq(coord_lease_valid(a, fa, tstime_mono_ms() +
		    10 * LEASE_MS), COORD_OK);
		goto out;
	}
	ck_assert_int_eq(claim(a, fa, "t4", 1), COORD_OK);
	snprintf(k, sizeof(k), "%slease:t4", prefix);
	ck_assert_int_eq(raw("DEL %s", k), 1);
	/* b takes it over (its own flock: b is "another host" here). */
	close(fa);
	fa = task_fd("t4");
	ck_assert_int_eq(take(b, fb, "t4"), COORD_OK);
	nlost = 0;
	coord_tick(a, tstime_mono_ms(), on_lost, NULL);	/* not due yet */
	coord_tick(a, tstime_mono_ms() + RENEW_MS, on_lost, NULL);
	ck_assert_int_eq(nlost, 1);
	ck_assert_int_eq(coord_lease_valid(a, lastlost, tstime_mono_ms()),
	    COORD_LOST);
	coord_lease_close(a, lastlost);
	/* b's lease survived a's release. */
	ck_assert_int_eq(raw("EXISTS %s", k), 1);
	ck_assert_int_eq(take(c, fc, "t4"), COORD_BUSY);
out:
	coord_lease_close(a, fa);
	coord_lease_close(b, fb);
	close(fc);
	coord_close(a);
	coord_close(b);
	coord_close(c);
}
END_TEST

/* Redis unreachable: acquisition fails with COORD_ERR, never OK. */
START_TEST(lease_backend_down)
{
	struct config cfg;
	char why[256], name[] = "t5.json";
	struct coord *a;
	int fa = task_fd("t5");

	config_defaults(&cfg);
	cfg.lease_ms = LEASE_MS;
	cfg.lease_renew_ms = RENEW_MS;
	if (_i == 1)
		snprintf(cfg.redis, sizeof(cfg.redis), "127.0.0.1:1");
	a = coord_open(&cfg, "a", &sp, why, sizeof(why));
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(coord_flock_verify(fa, sp.self, name), 0);
	ck_assert_int_eq(coord_lease_acquire(a, fa, "t5", 1, tstime_mono_ms(),
	    why, sizeof(why)), _i == 1 ? COORD_ERR : COORD_OK);
	if (_i == 1)
		ck_assert_ptr_nonnull(strstr(why, "127.0.0.1:1"));
	coord_lease_close(a, fa);
	coord_close(a);
}
END_TEST

/* One leader; when it goes, another takes over with a greater epoch. */
START_TEST(leader_one_at_a_time)
{
	struct coord *a = open_node(_i, "a"), *b = open_node(_i, "b");
	unsigned long long ea, eb;

	ck_assert_int_eq(coord_leader(a, tstime_mono_ms(), &ea), 1);
	ck_assert_int_eq(coord_leader(b, tstime_mono_ms(), &eb), 0);
	ck_assert_int_eq(coord_leader(a, tstime_mono_ms(), &ea), 1);
	coord_close(a);
	ck_assert_int_eq(coord_leader(b, tstime_mono_ms(), &eb), 1);
	if (_i == 1)
		ck_assert_uint_gt(eb, ea);
	coord_close(b);
}
END_TEST

/*
 * Redis: the counters behind fencing tokens and leader epochs can be lost
 * (FLUSHALL, a restart without persistence); tokens and epochs granted
 * afterwards must still be greater than every earlier one, or a store
 * that keeps the highest token seen would refuse the legitimate new
 * holder (FIELD-FAILURES: fencing tokens must be monotonic).
 */
START_TEST(counters_lost)
{
	struct coord *a = open_node(1, "a"), *b;
	int fa = task_fd("t5"), fb;
	long long f1, f2;
	unsigned long long e1, e2;
	char key[160];

	ck_assert_int_eq(claim(a, fa, "t5", 1), COORD_OK);
	f1 = coord_lease_fence(a, fa);
	ck_assert_int_eq(coord_leader(a, tstime_mono_ms(), &e1), 1);
	coord_lease_close(a, fa);
	coord_close(a);
	/* lose everything of this test's prefix, as FLUSHALL would */
	snprintf(key, sizeof(key), "%sfence", prefix);
	ck_assert_int_eq(raw("DEL %s", key), 1);
	snprintf(key, sizeof(key), "%sleader_epoch", prefix);
	ck_assert_int_eq(raw("DEL %s", key), 1);
	snprintf(key, sizeof(key), "%sleader", prefix);
	(void)raw("DEL %s", key);
	b = open_node(1, "b");
	fb = task_fd("t5");
	ck_assert_int_eq(claim(b, fb, "t5", 2), COORD_OK);
	f2 = coord_lease_fence(b, fb);
	ck_assert_int_eq(coord_leader(b, tstime_mono_ms(), &e2), 1);
	ck_assert_int_gt(f2, f1);
	ck_assert_uint_gt(e2, e1);
	coord_lease_close(b, fb);
	coord_close(b);
}
END_TEST

/* Redis: a leader whose key was taken over is told it is deposed. */
START_TEST(leader_deposed)
{
	struct coord *a = open_node(_i, "a"), *b = open_node(_i, "b");
	unsigned long long ea, eb;
	char k[128];

	ck_assert_int_eq(coord_leader(a, tstime_mono_ms(), &ea), 1);
	if (_i == 1) {
		snprintf(k, sizeof(k), "%sleader", prefix);
		ck_assert_int_eq(raw("DEL %s", k), 1);	/* as if expired */
		ck_assert_int_eq(coord_leader(b, tstime_mono_ms(), &eb), 1);
		ck_assert_uint_gt(eb, ea);
		ck_assert_int_eq(coord_leader(a, tstime_mono_ms(), &ea), 0);
		ck_assert_int_eq(coord_leader(b, tstime_mono_ms(), &eb), 1);
		/* FIELD-FAILURES B02 phase 2: a token of no node holds the
		 * key: nobody leads while it exists, then one node does. */
		ck_assert_int_eq(raw("DEL %s", k), 1);
		{
			char cmd[200];

			snprintf(cmd, sizeof(cmd), "SET %s ghost PX 600", k);
			ck_assert_int_eq(raw(cmd, ""), -1);	/* +OK */
		}
		ck_assert_int_eq(coord_leader(a, tstime_mono_ms(), &ea), 0);
		ck_assert_int_eq(coord_leader(b, tstime_mono_ms(), &eb), 0);
		sleep_ms(700);
		ck_assert_int_eq(coord_leader(a, tstime_mono_ms(), &ea), 1);
		ck_assert_int_eq(coord_leader(b, tstime_mono_ms(), &eb), 0);
	}
	coord_close(a);
	coord_close(b);
}
END_TEST

/* Heartbeats: the registry lists what each node wrote, sorted by id. */
START_TEST(heartbeat_registry)
{
	struct coord *a = open_node(_i, "a"), *b = open_node(_i, "b");
	struct coord_node in, *v;
	size_t n;
	char why[256];

	memset(&in, 0, sizeof(in));
	in.pid = 4242;
	in.slots = 8;
	in.running = 3;
	in.claimed = 17;
	in.finished = 14;
	in.leader = 1;
	in.at_ms = 1717243200000LL;
	in.started_ms = 1717243100000LL;
	in.load1 = 0.5;
	ck_assert_int_eq(coord_heartbeat(b, &in, why, sizeof(why)), 0);
	in.pid = 7;
	in.leader = 0;
	ck_assert_int_eq(coord_heartbeat(a, &in, why, sizeof(why)), 0);
	ck_assert_int_eq(coord_nodes(a, &v, &n, why, sizeof(why)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].id, "a");
	ck_assert_str_eq(v[1].id, "b");
	ck_assert_int_eq(v[0].pid, 7);
	ck_assert_int_eq(v[1].pid, 4242);
	ck_assert_int_eq(v[1].slots, 8);
	ck_assert_int_eq(v[1].running, 3);
	ck_assert_uint_eq(v[1].claimed, 17);
	ck_assert_uint_eq(v[1].finished, 14);
	ck_assert_int_eq(v[1].leader, 1);
	if (_i == 1) {
		/* Redis: the age comes from the key's TTL, on Redis's clock,
		 * whatever clock the writer had (B31): the heartbeat written
		 * a moment ago, stamped 2024-06-01 by its node, is read as
		 * written within the last 2 s of this reader's clock. */
		int64_t now = tstime_now_ms();

		ck_assert_msg(v[1].at_ms <= now && v[1].at_ms > now - 2000,
		    "at_ms %lld, now %lld", (long long)v[1].at_ms,
		    (long long)now);
	} else
		ck_assert_int_eq(v[1].at_ms, 1717243200000LL);
	ck_assert_int_eq(v[1].started_ms, 1717243100000LL);
	ck_assert_double_eq_tol(v[1].load1, 0.5, 1e-9);
	free(v);
	coord_close(a);		/* removes a's heartbeat */
	ck_assert_int_eq(coord_nodes(b, &v, &n, why, sizeof(why)), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].id, "b");
	free(v);
	coord_close(b);
}
END_TEST

/* A redis coord for node on spool s with these lease settings. */
static struct coord *
open_redis(const char *node, const struct spool *s, long lease_ms,
    long renew_ms, long heartbeat_ms)
{
	struct config cfg;
	char why[256];
	struct coord *c;

	ck_assert_msg(redis_addr[0] != '\0', "no redis-server");
	config_defaults(&cfg);
	cfg.lease_ms = lease_ms;
	cfg.lease_renew_ms = renew_ms;
	cfg.heartbeat_ms = heartbeat_ms;
	snprintf(cfg.redis, sizeof(cfg.redis), "%s", redis_addr);
	snprintf(cfg.redis_prefix, sizeof(cfg.redis_prefix), "%s", prefix);
	c = coord_open(&cfg, node, s, why, sizeof(why));
	ck_assert_msg(c != NULL, "coord_open: %s", why);
	return c;
}

/* The spool opened as node "b": its own active/b/ (other = active/a/). */
static struct spool spb;

static void
open_spool_b(void)
{
	char why[256], path[300];

	snprintf(path, sizeof(path), "%s/spool", tmpdir);
	ck_assert_msg(spool_open(&spb, path, "b", 0, why, sizeof(why)) == 0,
	    "%s", why);
}

/* The value of key <prefix><k>, "" when absent, into out. */
static void
raw_get(const char *k, char *out, size_t len)
{
	char host[256], *colon;
	redisContext *rc;
	redisReply *r;

	snprintf(host, sizeof(host), "%s", redis_addr);
	colon = strrchr(host, ':');
	*colon = '\0';
	rc = redisConnect(host, atoi(colon + 1));
	ck_assert(rc != NULL && !rc->err);
	r = redisCommand(rc, "GET %s%s", prefix, k);
	ck_assert_ptr_nonnull(r);
	snprintf(out, len, "%s", r->type == REDIS_REPLY_STRING ? r->str : "");
	freeReplyObject(r);
	redisFree(rc);
}

/*
 * Execution rate limits (execrate.h) in both backends, per code and per
 * key, under 10/1s burst 2 (T = 100, tau = 100): two starts at once, the
 * third waits 1..100 ms (the Redis server's clock in cluster mode: at
 * most 100).  Redis: the keys execrate:probe and execrate:probe:<hex of
 * SHA-256("customer:42")> expire at their TAT (zero keys when idle), and
 * a value that is not a TAT (garbage, NaN, a huge number) is no crash:
 * as no state, or clamped to one interval's wait.
 */
START_TEST(execrate_backends)
{
	struct coord *a = open_node(_i, "a");
	struct gcra_params p;
	char why[256], k[300];
	int64_t w, now = 1000;
	static const char *const junk[] = { "abc", "nan", "1e300", "-7" };

	ck_assert_int_eq(gcra_params(10, 1000, 2, &p), 0);
	for (int key = 0; key < 2; key++) {
		const char *kv = key ? "customer:42" : NULL;

		ck_assert_msg(execrate_take(a, "probe", kv, &p, now, &w, NULL,
		    why, sizeof(why)) == EXECRATE_OK, "%s", why);
		ck_assert_msg(execrate_take(a, "probe", kv, &p, now, &w, NULL,
		    why, sizeof(why)) == EXECRATE_OK, "%s", why);
		ck_assert_msg(execrate_take(a, "probe", kv, &p, now, &w, NULL,
		    why, sizeof(why)) == EXECRATE_WAIT, "%s", why);
		ck_assert_msg(w >= 1 && w <= 100, "wait %lld", (long long)w);
	}
	if (_i == 1) {
		snprintf(k, sizeof(k), "%sexecrate:probe", prefix);
		ck_assert_int_gt(raw("PTTL %s", k), 0);
		ck_assert_int_le(raw("PTTL %s", k), 300);	/* TAT - now */
		snprintf(k, sizeof(k), "%sexecrate:probe:"
		    "67f22bfd8b982e1bd0dbfecc6f68ae2b", prefix);
		ck_assert_int_gt(raw("PTTL %s", k), 0);
		for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
			char cmd[64];
			enum execrate_status st;

			snprintf(cmd, sizeof(cmd), "SET %%s %s", junk[i]);
			(void)raw(cmd, k);
			st = execrate_take(a, "probe", "customer:42", &p, now,
			    &w, NULL, why, sizeof(why));
			ck_assert_msg(st == EXECRATE_OK || (st == EXECRATE_WAIT &&
			    w >= 1 && w <= 100), "%s: %d %s", junk[i], st, why);
		}
		sleep_ms(400);	/* past every TAT: nothing left */
		snprintf(k, sizeof(k), "%sexecrate:probe", prefix);
		ck_assert_int_eq(raw("EXISTS %s", k), 0);
		snprintf(k, sizeof(k), "%sexecrate:probe:"
		    "67f22bfd8b982e1bd0dbfecc6f68ae2b", prefix);
		ck_assert_int_eq(raw("EXISTS %s", k), 0);
	} else {
		/* File mode: idle once the clock passes the TATs (1200). */
		ck_assert_int_eq(execrate_sweep(a, 1199), 0);
		ck_assert_int_eq(execrate_sweep(a, 1200), 2);
	}
	coord_close(a);
}
END_TEST

/*
 * Issue 11 item 2: Redis forgets a lease (FLUSHALL, a restart or a
 * failover without the data).  The holder's next renewal sets the key
 * again with a fencing token greater than its old one, and is not
 * fenced; a reaper of another node that looks before that renewal finds
 * no key but does not take the task (it has not been absent long
 * enough), and after it finds the holder's key.  _i = 1: the file was
 * moved away meanwhile (a reaper took it): the holder is fenced and its
 * key removed.
 */
START_TEST(lease_reestablished)
{
	struct coord *a = open_redis("a", &sp, LEASE_MS, RENEW_MS, 1000), *b;
	int fa = task_fd("t6"), fb;
	long long f1, f2;
	char k[160], tok[160], tok2[160];

	open_spool_b();
	b = open_redis("b", &spb, LEASE_MS, RENEW_MS, 1000);
	/* The old server's counter far above this server's clock (a
	 * replica promoted on a host whose clock is behind): the TIME floor
	 * alone would then issue smaller tokens after the loss. */
	snprintf(k, sizeof(k), "SET %sfence 8000000000000000", prefix);
	ck_assert_int_eq(raw(k, ""), -1);
	ck_assert_int_eq(claim(a, fa, "t6", 1), COORD_OK);
	f1 = coord_lease_fence(a, fa);
	ck_assert_int_eq(f1, 8000000000000001LL);
	coord_on_reestablished(a, on_reestablished, NULL);
	re_old = re_new = 0;
	raw_get("lease:t6", tok, sizeof(tok));
	ck_assert_str_ne(tok, "");
	snprintf(k, sizeof(k), "%slease:t6", prefix);
	ck_assert_int_eq(raw("DEL %s", k), 1);
	snprintf(k, sizeof(k), "%sfence", prefix);
	ck_assert_int_eq(raw("DEL %s", k), 1);	/* the counter too */
	/* b, the reaper of another node, looks at once: not yet. */
	fb = openat(sp.self, "t6.json", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fb, 0);
	ck_assert_int_eq(coord_orphan_take(b, fb, sp.self, "t6.json", "t6",
	    tstime_mono_ms(), k, sizeof(k)), COORD_BUSY);
	if (_i == 1)
		ck_assert_int_eq(renameat(sp.self, "t6.json",
		    sp.dir[SPOOL_INCOMING], "t6.json"), 0);
	nlost = 0;
	coord_tick(a, tstime_mono_ms() + RENEW_MS, on_lost, NULL);
	raw_get("lease:t6", tok2, sizeof(tok2));
	if (_i == 1) {
		ck_assert_int_eq(nlost, 1);
		ck_assert_int_eq(re_new, 0);	/* fenced, not re-established */
		ck_assert_str_eq(tok2, "");
		goto out;
	}
	ck_assert_int_eq(nlost, 0);
	ck_assert_str_eq(tok2, tok);		/* a's token again */
	f2 = coord_lease_fence(a, fa);
	ck_assert_int_gt(f2, f1);	/* from the lease's own old token */
	ck_assert_int_eq(re_old, f1);	/* the notice, for the log */
	ck_assert_int_eq(re_new, f2);
	ck_assert_int_eq(coord_lease_valid(a, fa, tstime_mono_ms() +
	    RENEW_MS), COORD_OK);
	ck_assert_int_eq(coord_orphan_take(b, fb, sp.self, "t6.json", "t6",
	    tstime_mono_ms(), k, sizeof(k)), COORD_BUSY);
	/* A lease granted now has a greater token still: the counter was
	 * re-seeded from the token a set again. */
	{
		int fc = task_fd("t6b");

		ck_assert_int_eq(claim(b, fc, "t6b", 1), COORD_OK);
		ck_assert_int_gt(coord_lease_fence(b, fc), f2);
		coord_lease_close(b, fc);
	}
out:
	close(fb);
	coord_lease_close(a, fa);
	coord_close(a);
	coord_close(b);
	spool_close(&spb);
}
END_TEST

/*
 * Issue 11 item 8: a holder that dies with lease_ms far longer than the
 * takeover time.  With heartbeat 200 ms, renewals every 200 ms and a
 * lease of 10 s: self-fence D = min(10000 - 200, 3 x 200 + 200) = 800
 * ms after the last renewal was sent, takeover A = D + 200 = 1000 ms
 * (coord.c).  The holder sees its lease invalid from D on; another
 * node takes the key (still present, TTL about 9 s) once it was not
 * renewed for A, never before, and long before lease_ms.  _i = 1: the
 * key vanished (DEL, as FLUSHALL) after the death: taken once seen
 * absent for A.
 */
START_TEST(lease_takeover_after_death)
{
	struct coord *b;
	int fb, status;
	int64_t t0, took;
	pid_t pid;
	char k[160];

	open_spool_b();
	b = open_redis("b", &spb, 10000, 200, 200);
	fb = task_fd("t7");
	{
		/* The holder's own view: valid until D, then fenced. */
		struct coord *a = open_redis("a", &sp, 10000, 200, 200);
		int fa = task_fd("t7v");
		int64_t at = tstime_mono_ms();

		ck_assert_int_eq(claim(a, fa, "t7v", 1), COORD_OK);
		ck_assert_int_eq(coord_lease_valid(a, fa, at + 700), COORD_OK);
		ck_assert_int_eq(coord_lease_valid(a, fa, tstime_mono_ms() +
		    800), COORD_LOST);
		coord_lease_close(a, fa);
		coord_close(a);
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct coord *a = open_redis("a", &sp, 10000, 200, 200);
		int fa = task_fd("t7");

		_exit(claim(a, fa, "t7", 1) == COORD_OK ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	t0 = tstime_mono_ms();
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (_i == 1) {
		snprintf(k, sizeof(k), "%slease:t7", prefix);
		ck_assert_int_eq(raw("DEL %s", k), 1);
	}
	while (coord_orphan_take(b, fb, sp.self, "t7.json", "t7",
	    tstime_mono_ms(), k, sizeof(k)) != COORD_OK) {
		ck_assert_int_lt(tstime_mono_ms() - t0, 5000);
		sleep_ms(50);
	}
	took = tstime_mono_ms() - t0;
	ck_assert_msg(took >= 950 && took < 5000, "taken after %lld ms",
	    (long long)took);
	ck_assert_int_gt(coord_lease_fence(b, fb), 0);
	coord_lease_close(b, fb);
	coord_close(b);
	spool_close(&spb);
}
END_TEST

/*
 * Issue 11 item 10: the connection dies in the middle of the registry
 * listing.  Redis closes a normal client whose pending output passes
 * the hard client-output-buffer-limit (Redis docs, "Client handling",
 * output buffer limits; the first 16 KB of a reply sit in the client's
 * static buffer and do not count), so an HGETALL of a 64 KB hash kills
 * the connection with the listing half done.  Before the fix the next
 * HGETALL went to hiredis with the freed, NULL context (SIGSEGV), or,
 * when the big key came last, a partial list was returned as success.
 * The listing must fail as a whole, and work again once the server
 * answers normally.  _i = 0: the big key among 30 others; _i = 1: the
 * big key alone (the last key of its batch).
 */
START_TEST(nodes_connection_lost)
{
	struct coord *a = open_node(1, "a");
	struct coord_node *v = (struct coord_node *)&v;
	size_t n = 99;
	char why[256], cmd[300], *big;
	int nsmall = _i == 0 ? 30 : 0;

	for (int i = 0; i < nsmall; i++) {
		snprintf(cmd, sizeof(cmd), "HSET %snode:n%02d pid %d", prefix,
		    i, 100 + i);
		ck_assert_int_eq(raw(cmd, ""), 1);
	}
	big = malloc(65537);
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', 65536);
	big[65536] = '\0';
	snprintf(cmd, sizeof(cmd), "HSET %snode:zbig pad %%s", prefix);
	ck_assert_int_eq(raw(cmd, big), 1);
	free(big);
	ck_assert_int_eq(raw("CONFIG SET client-output-buffer-limit %s",
	    "normal 8192 0 0"), -1);
	ck_assert_int_eq(coord_nodes(a, &v, &n, why, sizeof(why)), -1);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(n, 0);
	ck_assert_msg(strstr(why, "connection") != NULL, "why: %s", why);
	/* Again while the connection is down: refused, no crash. */
	ck_assert_int_eq(coord_nodes(a, &v, &n, why, sizeof(why)), -1);
	ck_assert_int_eq(raw("CONFIG SET client-output-buffer-limit %s",
	    "normal 0 0 0"), -1);
	sleep_ms(600);		/* past the reconnection back-off */
	ck_assert_msg(coord_nodes(a, &v, &n, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_uint_eq(n, (size_t)nsmall + 1);
	ck_assert_str_eq(v[n - 1].id, "zbig");
	if (nsmall > 0)
		ck_assert_int_eq(v[7].pid, 107);
	free(v);
	coord_close(a);
}
END_TEST

/*
 * A server that accepts the connection and never answers (a listening
 * socket nobody reads): the failure is reported as a timeout, not as a
 * refusal of AUTH, SELECT or SCRIPT LOAD (issue 11 item 8).
 */
START_TEST(redis_timeout_named)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	struct config cfg;
	struct coord *c;
	struct coord_node *v;
	size_t n;
	char why[256];
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(ls, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(ls, 8), 0);
	ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&sa, &salen), 0);
	config_defaults(&cfg);
	cfg.lease_ms = LEASE_MS;
	cfg.lease_renew_ms = RENEW_MS;
	snprintf(cfg.redis, sizeof(cfg.redis), "127.0.0.1:%d",
	    ntohs(sa.sin_port));
	if (_i == 1)
		snprintf(cfg.redis_password, sizeof(cfg.redis_password), "pw");
	c = coord_open(&cfg, "a", &sp, why, sizeof(why));
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(coord_nodes(c, &v, &n, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "timed out") != NULL, "why: %s", why);
	ck_assert_msg(strstr(why, "refused") == NULL, "why: %s", why);
	ck_assert_ptr_nonnull(strstr(why, _i == 1 ? "AUTH" : "SCRIPT LOAD"));
	coord_close(c);
	close(ls);
}
END_TEST

static Suite *
coord_suite(void)
{
	Suite *s = suite_create("coord");
	TCase *tc = tcase_create("contract");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, lease_exclusive, 0, 2);
	tcase_add_loop_test(tc, lease_holder_dies, 0, 2);
	tcase_add_loop_test(tc, lease_renewed, 0, 2);
	tcase_add_loop_test(tc, lease_lost_token_checked, 0, 2);
	tcase_add_loop_test(tc, lease_backend_down, 0, 2);
	tcase_add_loop_test(tc, leader_one_at_a_time, 0, 2);
	tcase_add_loop_test(tc, leader_deposed, 0, 2);
	tcase_add_loop_test(tc, heartbeat_registry, 0, 2);
	tcase_add_test(tc, counters_lost);
	tcase_add_loop_test(tc, limit_semaphore, 0, 2);
	tcase_add_loop_test(tc, limit_key_semaphore, 0, 2);
	tcase_add_test(tc, limit_config);
	tcase_add_test(tc, limit_requeue);
	tcase_add_test(tc, limit_requeue_ages);
	tcase_add_loop_test(tc, execrate_backends, 0, 2);
	tcase_add_loop_test(tc, nodes_connection_lost, 0, 2);
	tcase_add_loop_test(tc, lease_reestablished, 0, 2);
	tcase_add_loop_test(tc, lease_takeover_after_death, 0, 2);
	tcase_add_loop_test(tc, redis_timeout_named, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

/* TS_TEST_REDIS, or a server of our own (redis_dir set). */
static void
redis_start(void)
{
	const char *env = getenv("TS_TEST_REDIS"), *td = getenv("TESTDATA");
	char cmd[1024], line[256];
	FILE *p;

	if (env != NULL && env[0] != '\0') {
		snprintf(redis_addr, sizeof(redis_addr), "%s", env);
		return;
	}
	snprintf(redis_dir, sizeof(redis_dir), "%s/redis", basedir);
	snprintf(cmd, sizeof(cmd), "sh '%s/../servers/redis.sh' start '%s'",
	    td != NULL ? td : "tests/data", redis_dir);
	if ((p = popen(cmd, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), p) != NULL)
		if (strncmp(line, "TS_TEST_REDIS=", 14) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(redis_addr, sizeof(redis_addr), "%s",
			    line + 14);
		}
	(void)pclose(p);
}

int
main(void)
{
	const char *td = getenv("TESTDATA");
	char cmd[1024];
	int rc;

	if (unit_mkdtemp(basedir, sizeof(basedir), "check_coord") != 0)
		return EXIT_FAILURE;
	redis_start();
	if (redis_addr[0] == '\0')
		fprintf(stderr, "check_coord: no redis-server (set "
		    "TS_TEST_REDIS or install redis-server): the redis cases "
		    "fail\n");
	rc = unit_run(coord_suite());
	if (redis_dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "sh '%s/../servers/redis.sh' stop "
		    "'%s' >/dev/null", td != NULL ? td : "tests/data",
		    redis_dir);
		(void)!system(cmd);
	}
	unit_rmtree(basedir);
	return rc;
}
