/*
 * check_scheduler.c — the leader's scheduler (daemon/scheduler.h) with
 * two leaders at once on one spool (issue 11 item 1): two scheduler
 * instances, as the old and the new leader are while Redis has lost the
 * leader key and the old one has not renewed yet, fire the same
 * `overlap: forbid` job in the same seconds.
 *
 * The scheduler is driven with explicit wall times; a hook's claim is
 * played by renaming the task from incoming/ into active/<node>/ (what a
 * daemon's claim does, DESIGN §3), its end by a result in results/ and
 * the file in done/.  Expected, from the overlap policy in README.md
 * (forbid: "a fire is skipped while a run of the job is pending or
 * running"): every instant is published at most once, never while
 * another task of the job is pending or running, and a skipped instant
 * is logged "(overlap forbid)".  A second copy of a published instant
 * would end in corrupt/ ("already used") under a real daemon: it must
 * not be published at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "spool/config.h"
#include "core/job.h"
#include "coord/jobrun.h"
#include "spool/log.h"
#include "node/scheduler.h"
#include "spool/spool.h"
#include "spool/clock.h"
#include "unit.h"

static char tmpdir[200], logpath[300];
static struct spool sp1, sp2;
static struct config cfg;
static int saved_stderr = -1;

static void
setup(void)
{
	char why[256], path[300];
	int fd;

	unit_case_mkdtemp(tmpdir, sizeof(tmpdir), NULL, "check_scheduler");
	snprintf(path, sizeof(path), "%s/spool", tmpdir);
	ck_assert_int_eq(spool_create(path, -1, why, sizeof(why)), 0);
	ck_assert_msg(spool_open(&sp1, path, "n1", 0, why, sizeof(why)) == 0,
	    "%s", why);
	ck_assert_msg(spool_open(&sp2, path, "n2", 0, why, sizeof(why)) == 0,
	    "%s", why);
	config_defaults(&cfg);
	/* The log lines of both schedulers, read back by the tests. */
	snprintf(logpath, sizeof(logpath), "%s/log", tmpdir);
	log_init("check_scheduler", 0, LOG_LEVEL_INFO);
	fflush(stderr);
	saved_stderr = dup(2);
	fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
}

static void
teardown(void)
{
	fflush(stderr);
	if (saved_stderr >= 0) {
		(void)dup2(saved_stderr, 2);
		close(saved_stderr);
		saved_stderr = -1;
	}
	spool_close(&sp1);
	spool_close(&sp2);
	unit_rmtree(tmpdir);
}

/* jobs/fb.json: every second, forbid (the job of t0014 and t0062). */
static void
add_job(const char *overlap)
{
	char text[400];
	int l;

	l = snprintf(text, sizeof(text), "{\"jobCode\":\"fb\","
	    "\"taskCode\":\"probe\",\"cron\":\"* * * * * ?\","
	    "\"dialect\":\"quartz\",\"timezone\":\"UTC\",\"overlap\":\"%s\"}\n",
	    overlap);
	ck_assert_int_eq(spool_publish(&sp1, sp1.dir[SPOOL_JOBS], "fb.json",
	    text, (size_t)l, -1, 0), 0);
}

static void
id_at(int64_t t, char *id, size_t len)
{
	ck_assert_int_eq(job_task_id("fb", t, id, len), 0);
}

/* Whether the task of instant t is in directory fd. */
static int
in_dir(int fd, int64_t t)
{
	char id[JOB_TASK_ID_MAX + 1], file[JOB_TASK_ID_MAX + 8];
	struct stat st;

	id_at(t, id, sizeof(id));
	snprintf(file, sizeof(file), "%s.json", id);
	return fstatat(fd, file, &st, 0) == 0;
}

/* Whether the task of instant t exists anywhere in the spool. */
static int
exists(int64_t t)
{
	char id[JOB_TASK_ID_MAX + 1];
	enum spool_dir where;

	id_at(t, id, sizeof(id));
	return spool_locate(&sp1, id, &where, NULL) == 0 ||
	    in_dir(sp1.dir[SPOOL_RESULTS], t);
}

/* A daemon of node sp claims the task of instant t from incoming/. */
static void
claim(struct spool *sp, int64_t t)
{
	char id[JOB_TASK_ID_MAX + 1], file[JOB_TASK_ID_MAX + 8];

	id_at(t, id, sizeof(id));
	snprintf(file, sizeof(file), "%s.json", id);
	ck_assert_msg(renameat(sp->dir[SPOOL_INCOMING], file, sp->self,
	    file) == 0, "claim %s: %s", file, strerror(errno));
}

/* The run of instant t on node sp ends: its result, then done/. */
static void
finish(struct spool *sp, int64_t t)
{
	char id[JOB_TASK_ID_MAX + 1], file[JOB_TASK_ID_MAX + 8];

	id_at(t, id, sizeof(id));
	snprintf(file, sizeof(file), "%s.json", id);
	ck_assert_int_eq(spool_publish(sp, sp->dir[SPOOL_RESULTS], file,
	    "{}\n", 3, -1, 0), 0);
	ck_assert_int_eq(renameat(sp->self, file, sp->dir[SPOOL_DONE], file),
	    0);
}

/* How many lines of the log hold both a and b. */
static int
log_count(const char *a, const char *b)
{
	char line[1024];
	int n = 0;
	FILE *fp;

	fflush(stderr);
	fp = fopen(logpath, "r");
	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		n += strstr(line, a) != NULL && strstr(line, b) != NULL;
	fclose(fp);
	return n;
}

/* How many fb.* files are in directory fd. */
static int
count_in(int fd)
{
	char cmd[400], out[32];
	FILE *fp;
	int n = -1;

	(void)fd;
	snprintf(cmd, sizeof(cmd), "find '%s/spool' -path '*/tmp' -prune -o "
	    "-path '*/state' -prune -o -name 'fb.2*' -print | wc -l", tmpdir);
	fp = popen(cmd, "r");
	ck_assert_ptr_nonnull(fp);
	if (fgets(out, sizeof(out), fp) != NULL)
		n = atoi(out);
	pclose(fp);
	return n;
}

/*
 * Two leaders, A (node n1) and B (node n2), both loaded the job before
 * its first fire (B, the new leader, found nothing of it in the spool).
 * A fires instant 1 and n1 runs it; B fires instant 1 too, then
 * instant 2 while instant 1 runs (today: an overlap, B learning of A's
 * task only at its 30 s rescan); B fires instant 3 and n2 runs it, A
 * fires instant 3 too (today: a second copy).
 */
START_TEST(two_leaders_forbid)
{
	int64_t t0 = tstime_now_ms() / 1000 * 1000, mono = tstime_mono_ms();
	struct sched *a, *b;
	char id1[JOB_TASK_ID_MAX + 1], id2[JOB_TASK_ID_MAX + 1];

	add_job("forbid");
	a = scheduler_new(&sp1, &cfg, t0);
	b = scheduler_new(&sp2, &cfg, t0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	scheduler_scan(a, t0);
	scheduler_scan(b, t0);
	id_at(t0 + 1000, id1, sizeof(id1));
	id_at(t0 + 2000, id2, sizeof(id2));

	/* Instant 1: A fires it; B fires the same instant before n1 claims
	 * it (today: EEXIST in incoming/, so B does not learn of it). */
	scheduler_tick(a, t0 + 1000, mono);
	ck_assert(in_dir(sp1.dir[SPOOL_INCOMING], t0 + 1000));
	scheduler_tick(b, t0 + 1000, mono);
	claim(&sp1, t0 + 1000);
	ck_assert_int_eq(count_in(-1), 1);

	/* Instant 2 while instant 1 runs: skipped by both, logged. */
	scheduler_tick(b, t0 + 2000, mono);
	scheduler_tick(a, t0 + 2000, mono);
	ck_assert_msg(!exists(t0 + 2000), "%s fired while %s runs "
	    "(overlap forbid broken)", id2, id1);
	{
		char want[200];

		/* One line per pass that skipped: A's and B's of instant
		 * 2 (README.md: "the pass fires nothing (logged)"). */
		snprintf(want, sizeof(want), "job fb: fire skipped: %s "
		    "still pending or running (overlap forbid)", id1);
		ck_assert_int_eq(log_count(want, want), 2);
	}

	/* Instant 1 ends; instant 3: B fires it, n2 claims it, then A fires
	 * the same instant (today: a second copy in incoming/, which a
	 * daemon's claim sends to corrupt/ as "already used"). */
	finish(&sp1, t0 + 1000);
	scheduler_tick(b, t0 + 3000, mono);
	ck_assert(in_dir(sp2.dir[SPOOL_INCOMING], t0 + 3000));
	claim(&sp2, t0 + 3000);
	scheduler_tick(a, t0 + 3000, mono);
	ck_assert_msg(!in_dir(sp1.dir[SPOOL_INCOMING], t0 + 3000),
	    "a second copy of instant 3 was published while the first runs");

	/* Instant 4 while instant 3 runs on n2: skipped by both. */
	scheduler_tick(a, t0 + 4000, mono);
	scheduler_tick(b, t0 + 4000, mono);
	ck_assert(!exists(t0 + 4000));

	/* Every fb task there is: instant 1 (done/, results/), instant 3
	 * (active/n2/); nothing in corrupt/. */
	ck_assert_int_eq(count_in(-1), 3);
	ck_assert(in_dir(sp2.self, t0 + 3000));
	scheduler_free(a);
	scheduler_free(b);
}
END_TEST

/*
 * A leader that died between making the marker and publishing its task
 * (the marker names a task that is nowhere): the job is not fired while
 * the marker may still be published (JOBRUN_PUBLISH_MS after its at_ms),
 * and fires once it is stale.
 */
START_TEST(unpublished_marker)
{
	int64_t t0 = tstime_now_ms() / 1000 * 1000, mono = tstime_mono_ms();
	char id0[JOB_TASK_ID_MAX + 1], line[300], got[JOB_TASK_ID_MAX + 1];
	struct sched *a;
	int dfd, l;

	add_job("forbid");
	dfd = jobrun_open(&sp1);
	ck_assert_int_ge(dfd, 0);
	id_at(t0, id0, sizeof(id0));
	l = snprintf(line, sizeof(line), "%s token=0123 node=dead at_ms=%lld\n",
	    id0, (long long)t0);
	ck_assert_int_eq(spool_publish(&sp1, dfd, "fb.run", line, (size_t)l,
	    -1, 0), 0);
	a = scheduler_new(&sp1, &cfg, t0);
	ck_assert_ptr_nonnull(a);
	scheduler_scan(a, t0);
	scheduler_tick(a, t0 + 1000, mono);
	ck_assert(!exists(t0 + 1000));
	ck_assert_int_ge(log_count(id0, "(overlap forbid)"), 1);
	/* Every second on: skipped while the marker is younger than the
	 * bound; the first instant at the bound fires, and the marker
	 * names it. */
	for (int64_t t = t0 + 2000; t < t0 + JOBRUN_PUBLISH_MS; t += 1000) {
		scheduler_tick(a, t, mono);
		ck_assert_msg(!exists(t), "fired %lld ms after the marker",
		    (long long)(t - t0));
	}
	ck_assert_int_ge(log_count(id0, "(overlap forbid)"),
	    JOBRUN_PUBLISH_MS / 1000 - 1);
	scheduler_tick(a, t0 + JOBRUN_PUBLISH_MS, mono);
	ck_assert(exists(t0 + JOBRUN_PUBLISH_MS));
	ck_assert_int_eq(jobrun_read(dfd, "fb", got, sizeof(got)), 1);
	id_at(t0 + JOBRUN_PUBLISH_MS, id0, sizeof(id0));
	ck_assert_str_eq(got, id0);
	ck_assert_int_eq(count_in(-1), 1);
	close(dfd);
	scheduler_free(a);
}
END_TEST

/*
 * replace with two leaders: the same instant is published once, and a
 * later fire of either cancels the run the other fired (state/cancel/).
 */
START_TEST(two_leaders_replace)
{
	int64_t t0 = tstime_now_ms() / 1000 * 1000, mono = tstime_mono_ms();
	char id1[JOB_TASK_ID_MAX + 1];
	struct sched *a, *b;
	struct stat st;

	add_job("replace");
	a = scheduler_new(&sp1, &cfg, t0);
	b = scheduler_new(&sp2, &cfg, t0);
	scheduler_scan(a, t0);
	scheduler_scan(b, t0);
	scheduler_tick(a, t0 + 1000, mono);
	claim(&sp1, t0 + 1000);
	scheduler_tick(b, t0 + 1000, mono);
	ck_assert(!in_dir(sp1.dir[SPOOL_INCOMING], t0 + 1000));
	scheduler_tick(b, t0 + 2000, mono);
	ck_assert(in_dir(sp1.dir[SPOOL_INCOMING], t0 + 2000));
	id_at(t0 + 1000, id1, sizeof(id1));
	ck_assert_msg(fstatat(sp1.cancel, id1, &st, 0) == 0,
	    "B's replace fire did not cancel A's run %s", id1);
	scheduler_free(a);
	scheduler_free(b);
}
END_TEST

static Suite *
scheduler_suite(void)
{
	Suite *s = suite_create("scheduler");
	TCase *tc = tcase_create("two leaders");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, two_leaders_forbid);
	tcase_add_test(tc, unpublished_marker);
	tcase_add_test(tc, two_leaders_replace);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(scheduler_suite)
