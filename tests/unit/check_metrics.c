/*
 * check_metrics.c — unit tests for daemon/spool/metrics.c and the logfmt lines
 * of daemon/spool/log.c.
 *
 * Expected values are worked out by hand from the rules they follow:
 * Prometheus histogram buckets are cumulative and an observation v
 * counts in every bucket with v <= le ("Exposition formats", text format
 * 0.0.4, and the histogram docs); the +Inf bucket equals _count; logfmt
 * quotes a value holding a space, '=' or '"' and escapes '"', '\' and
 * newline with a backslash.  Spool counts come from files the test makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "core/buf.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "spool/spool.h"
#include "unit.h"

static char basedir[128];

/* The whole exposition for the current metrics, no spool gauges. */
static char *
render_now(void)
{
	struct buf b;
	char *s;

	buf_init(&b, 0);
	ck_assert_int_eq(metrics_render(&b, NULL, 0, NULL, NULL), 0);
	s = strdup(b.data != NULL ? b.data : "");
	buf_fini(&b);
	return s;
}

/* Whether the exposition has exactly this line. */
static int
has_line(const char *text, const char *line)
{
	size_t l = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[l] == '\n')
			return 1;
	return 0;
}

#define ASSERT_LINE(text, line) \
	ck_assert_msg(has_line(text, line), "missing line: %s\n%s", line, text)

/* ASSERT_LINE for every line of the array want. */
#define ASSERT_LINES(text, want) \
	for (size_t i_ = 0; i_ < sizeof(want) / sizeof(want[0]); i_++) \
		ASSERT_LINE(text, want[i_])

START_TEST(test_duration_buckets)
{
	static const char *const want[] = {
#define B "taskspool_execution_duration_seconds_bucket{node=\"n1\",task_code=\"a\",le="
		/* observed: 0.003, 0.3, 1 (exactly a bound), 7, 5000 */
		B "\"0.005\"} 1", B "\"0.01\"} 1", B "\"0.25\"} 1",
		B "\"0.5\"} 2", B "\"1\"} 3", B "\"2.5\"} 3", B "\"5\"} 3",
		B "\"10\"} 4", B "\"3600\"} 4", B "\"+Inf\"} 5",
#undef B
		"taskspool_execution_duration_seconds_count{node=\"n1\","
		    "task_code=\"a\"} 5",
		/* 0.003 + 0.3 + 1 + 7 + 5000 = 5008.303 */
		"taskspool_execution_duration_seconds_sum{node=\"n1\","
		    "task_code=\"a\"} 5008.303000",
		"taskspool_attempts_total{node=\"n1\",task_code=\"a\","
		    "outcome=\"SUCCESS\"} 3",
		"taskspool_attempts_total{node=\"n1\",task_code=\"a\","
		    "outcome=\"TIMEOUT\"} 1",
		"taskspool_attempts_total{node=\"n1\",task_code=\"a\","
		    "outcome=\"LOST\"} 1",
		"taskspool_lease_lost_total{node=\"n1\"} 1",
	};
	char *s;

	ck_assert_int_eq(metrics_init("n1"), 0);
	metrics_attempt_ended("a", "SUCCESS", 0.003);
	metrics_attempt_ended("a", "SUCCESS", 0.3);
	metrics_attempt_ended("a", "SUCCESS", 1);
	metrics_attempt_ended("a", "TIMEOUT", 7);
	metrics_attempt_ended("a", "LOST", 5000);
	s = render_now();
	ASSERT_LINES(s, want);
	free(s);
	metrics_fini();
}
END_TEST

START_TEST(test_trigger_delay_and_counters)
{
	static const char *const want[] = {
#define T "taskspool_trigger_delay_seconds_"
		T "bucket{node=\"n1\",le=\"0.005\"} 1",
		T "bucket{node=\"n1\",le=\"0.1\"} 1",
		T "bucket{node=\"n1\",le=\"0.25\"} 2",
		T "count{node=\"n1\"} 2",
#undef T
		"taskspool_tasks_total{node=\"n1\",task_code=\"a\","
		    "status=\"SUCCESS\"} 1",
		"taskspool_tasks_total{node=\"n1\",task_code=\"a\","
		    "status=\"FAILED\"} 2",
		"taskspool_retries_total{node=\"n1\"} 2",
		"taskspool_corrupt_total{node=\"n1\"} 1",
		"taskspool_callbacks_total{node=\"n1\",outcome=\"ok\"} 1",
		"taskspool_callbacks_total{node=\"n1\",outcome=\"failed\"} 1",
		"taskspool_callback_circuit_open{node=\"n1\"} 3",
		"taskspool_outbox_depth{node=\"n1\",kind=\"record\"} 7",
		"taskspool_outbox_depth{node=\"n1\",kind=\"callback\"} 0",
	};
	char *s;

	ck_assert_int_eq(metrics_init("n1"), 0);
	metrics_attempt_started("a", 1000, 1250);	/* 0.25 s */
	metrics_attempt_started("a", 2000, 1000);	/* early: counts 0 */
	metrics_attempt_started("a", -1, 1000);		/* unknown: none */
	metrics_task_finished("a", "SUCCESS");
	metrics_task_finished("a", "FAILED");
	metrics_task_finished("a", "SOMETHING");	/* counts as FAILED */
	metrics_retry();
	metrics_retry();
	metrics_corrupt();
	metrics_callback_outcome("ok");
	metrics_callback_outcome("bogus");		/* counts as failed */
	metrics_callback_circuit_open(3);
	metrics_outbox_depth("record", 7);
	metrics_outbox_depth("nonsense", 9);		/* ignored */
	s = render_now();
	ASSERT_LINES(s, want);
	ck_assert_ptr_null(strstr(s, "nonsense"));
	/* Every family has HELP and TYPE before its samples. */
	ck_assert_ptr_nonnull(strstr(s, "# TYPE taskspool_trigger_delay_seconds "
	    "histogram\n"));
	ck_assert_ptr_nonnull(strstr(s, "# TYPE taskspool_retries_total "
	    "counter\n"));
	free(s);
	metrics_fini();
}
END_TEST

START_TEST(test_task_code_cap)
{
	char code[16], *s;

	ck_assert_int_eq(metrics_init("n1"), 0);
	/* METRICS_CODES_MAX (256) codes get their own label, the 257th and
	 * an invalid name go to "_other". */
	for (int i = 0; i <= METRICS_CODES_MAX; i++) {
		snprintf(code, sizeof(code), "c%d", i);
		metrics_task_finished(code, "SUCCESS");
	}
	metrics_task_finished("../evil", "SUCCESS");
	s = render_now();
	ASSERT_LINE(s, "taskspool_tasks_total{node=\"n1\",task_code=\"c255\","
	    "status=\"SUCCESS\"} 1");
	ck_assert_ptr_null(strstr(s, "task_code=\"c256\""));
	ck_assert_ptr_null(strstr(s, "evil"));
	ASSERT_LINE(s, "taskspool_tasks_total{node=\"n1\",task_code=\"_other\","
	    "status=\"SUCCESS\"} 2");
	free(s);
	metrics_fini();
	ck_assert_int_eq(metrics_init("bad/node"), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static void
touch_at(int dirfd, const char *name, int64_t mtime_ms)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	struct timespec ts[2];

	ck_assert_int_ge(fd, 0);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime_ms / 1000);
	ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime_ms % 1000) * 1000000;
	ck_assert_int_eq(futimens(fd, ts), 0);
	close(fd);
}

/* A directory of sp: dirs[kind], or, with node set, kind/<node>/ (opened). */
static int
node_dir(struct spool *sp, int kind, const char *node)
{
	int d = node != NULL ? spool_node_dir(sp, kind, node) :
	    dup(sp->dir[kind]);

	ck_assert_int_ge(d, 0);
	return d;
}

/* The marker directory state/waiting/ (made by the test), opened. */
static int
waiting_dir(struct spool *sp)
{
	int d = openat(sp->dir[SPOOL_STATE], "waiting", O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC);

	ck_assert_int_ge(d, 0);
	return d;
}

/* metrics_write(sp, now, self), then the n1.prom it wrote (new string). */
static char *
write_and_read(struct spool *sp, int64_t now, const struct metrics_node *self)
{
	char *txt;

	ck_assert_int_eq(metrics_write(sp, now, self), 0);
	txt = spool_read_file(sp->dir[SPOOL_METRICS], "n1.prom", 1 << 20, NULL);
	ck_assert_ptr_nonnull(txt);
	return txt;
}

START_TEST(test_scan_and_write)
{
	/* The files the scan counts, with their mtime relative to now. */
	static const struct {
		int kind;
		const char *node;	/* NULL: the kind's own directory */
		const char *name;
		int64_t age_ms;		/* now - mtime */
	} files[] = {
		/* incoming/: 3 tasks (oldest 100.5 s before now), a dot file */
		{ SPOOL_INCOMING, NULL, "a.json", 2000 },
		{ SPOOL_INCOMING, NULL, "b.json", 100500 },
		{ SPOOL_INCOMING, NULL, "c.json", 10 },
		{ SPOOL_INCOMING, NULL, ".hidden", 900000 },
		{ SPOOL_DELAYED, NULL, "d1.json", -5000 },
		{ SPOOL_DELAYED, NULL, "d2.json", -5000 },
		/* active/n1/ (sp.self) 1, active/n2/ 2, queue/n3/ 1 */
		{ SPOOL_ACTIVE, "n1", "r1.json", 0 },
		{ SPOOL_ACTIVE, "n2", "r2.json", 0 },
		{ SPOOL_ACTIVE, "n2", "r3.json", 0 },
		{ SPOOL_QUEUE, "n3", "q1.json", 0 },
		/* hold/: 2 held tasks */
		{ SPOOL_HOLD, NULL, "h1.json", 0 },
		{ SPOOL_HOLD, NULL, "h2.json", 0 },
	};
	static const char *const written[] = {
		"taskspool_queue_depth{node=\"n1\",state=\"pending\"} 3",
		"taskspool_queue_depth{node=\"n1\",state=\"running\"} 3",
		"taskspool_queue_depth{node=\"n1\",state=\"held\"} 2",
		"taskspool_oldest_pending_age_seconds{node=\"n1\"} 100.500",
		"taskspool_slots{node=\"n1\",kind=\"total\"} 4",
		"taskspool_slots{node=\"n1\",kind=\"busy\"} 1",
		"taskspool_leader{node=\"n1\"} 1",
		/* back-pressure after ENOSPC: that reason 1, the others 0 */
		"taskspool_backpressure{node=\"n1\",reason=\"enospc\"} 1",
		"taskspool_backpressure{node=\"n1\",reason=\"edquot\"} 0",
		"taskspool_backpressure{node=\"n1\",reason=\"erofs\"} 0",
		/* drained by an operator */
		"taskspool_node_drained{node=\"n1\"} 1",
		/* The file says when and how often it is written: now =
		 * 1.7e12 ms is 1700000000 s; 2500 ms is 2.5 s. */
		"taskspool_metrics_written_timestamp_seconds{node=\"n1\"} "
		    "1700000000.000",
		"taskspool_metrics_interval_seconds{node=\"n1\"} 2.500",
		"taskspool_metrics_stopped{node=\"n1\"} 0",
	};
	/* A stopped node's last file, 1234 ms later. */
	static const char *const stopped[] = {
		"taskspool_leader{node=\"n1\"} 0",
		"taskspool_node_drained{node=\"n1\"} 0",
		"taskspool_metrics_written_timestamp_seconds{node=\"n1\"} "
		    "1700000001.234",
		"taskspool_metrics_stopped{node=\"n1\"} 1",
	};
	char dir[200], path[300], why[512], *txt;
	const int64_t now = 1700000000000LL;	/* a fixed "now", epoch ms */
	struct metrics_spool q;
	struct metrics_node self = { 4, 1, 1, 0, ENOSPC, 2500, 1 };
	struct spool sp;
	int d;

	unit_case_mkdtemp(dir, sizeof(dir), basedir, "s");
	snprintf(path, sizeof(path), "%s/spool", dir);
	ck_assert_int_eq(spool_create(path, -1, why, sizeof(why)), 0);
	ck_assert_int_eq(spool_open(&sp, path, "n1", 0, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		d = node_dir(&sp, files[i].kind, files[i].node);
		touch_at(d, files[i].name, now - files[i].age_ms);
		close(d);
	}

	ck_assert_int_eq(metrics_scan_spool(&sp, now, &q), 0);
	ck_assert_int_eq(q.pending, 3);
	ck_assert_int_eq(q.waiting, 0);
	ck_assert_int_eq(q.delayed, 2);
	ck_assert_int_eq(q.held, 2);
	ck_assert_int_eq(q.running, 3);
	ck_assert_int_eq(q.dispatched, 1);
	ck_assert_int_eq(q.truncated, 0);
	ck_assert(q.oldest_pending_s > 100.49 && q.oldest_pending_s < 100.51);

	/* b.json over a max_concurrent limit: marked in state/waiting/, it
	 * counts as waiting, not also as pending */
	ck_assert_int_eq(mkdirat(sp.dir[SPOOL_STATE], "waiting", 0770), 0);
	d = waiting_dir(&sp);
	touch_at(d, "b", now);
	close(d);
	ck_assert_int_eq(metrics_scan_spool(&sp, now, &q), 0);
	ck_assert_int_eq(q.waiting, 1);
	ck_assert_int_eq(q.pending, 2);
	d = waiting_dir(&sp);
	ck_assert_int_eq(unlinkat(d, "b", 0), 0);
	close(d);
	ck_assert_int_eq(metrics_scan_spool(&sp, now, &q), 0);

	ck_assert_int_eq(metrics_init("n1"), 0);
	txt = write_and_read(&sp, now, &self);
	ASSERT_LINES(txt, written);
	free(txt);
	/* A stopped node's last file has no spool-wide gauges. */
	self.stopped = 1;
	self.leader = 0;
	self.drained = 0;
	txt = write_and_read(&sp, now + 1234, &self);
	ck_assert_ptr_null(strstr(txt, "taskspool_queue_depth{"));
	ASSERT_LINES(txt, stopped);
	free(txt);
	metrics_fini();
	spool_close(&sp);
	unit_rmtree(dir);
}
END_TEST

/* Log lines written to stderr, captured in a file. */
START_TEST(test_logfmt_lines)
{
	char file[200], line[4096];
	FILE *fp;

	snprintf(file, sizeof(file), "%s/log.XXXXXX", basedir);
	{
		int fd = mkstemp(file);

		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	ck_assert_ptr_nonnull(freopen(file, "w", stderr));
	log_init("taskspoold", 0, LOG_LEVEL_INFO);
	ck_assert_int_eq(log_format_parse("logfmt"), LOG_FORMAT_LOGFMT);
	ck_assert_int_eq(log_format_parse("text"), LOG_FORMAT_TEXT);
	ck_assert_int_eq(log_format_parse("json"), -1);
	log_set_format(LOG_FORMAT_LOGFMT);
	log_set_node("n1");
	log_task(LOG_LEVEL_INFO, "task.failed", "r1", "code", 2,
	    "say \"hi\" a=b\nx\\y");
	log_info("plain");
	log_task(LOG_LEVEL_DEBUG, "task.running", "r2", NULL, 0, "hidden");
	log_set_format(LOG_FORMAT_TEXT);
	log_task(LOG_LEVEL_WARN, "task.lost", "r3", "c", 1, "r3: lost");
	fflush(stderr);
	fp = fopen(file, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	ck_assert_int_eq(strncmp(line, "ts=", 3), 0);
	ck_assert_ptr_nonnull(strstr(line, "Z level=info node=n1 event=task."
	    "failed requestId=r1 taskCode=code attempt=2 msg=\"say \\\"hi\\\" "
	    "a=b\\nx\\\\y\"\n"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	ck_assert_ptr_nonnull(strstr(line, "Z level=info node=n1 event=log "
	    "msg=plain\n"));
	/* The debug line is below the level; then the text format. */
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	ck_assert_ptr_nonnull(strstr(line, "Z taskspoold: warning: r3: lost\n"));
	ck_assert_ptr_null(fgets(line, sizeof(line), fp));
	fclose(fp);
	unlink(file);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_duration_buckets);
	tcase_add_test(tc, test_trigger_delay_and_counters);
	tcase_add_test(tc, test_task_code_cap);
	tcase_add_test(tc, test_scan_and_write);
	tcase_add_test(tc, test_logfmt_lines);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_TMPDIR(metrics_suite, basedir, "check_metrics")
