/*
 * metrics — Prometheus text exposition of the daemon's state; see
 * metrics.h.
 */
#include "spool/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/version.h"
#include "spool/purgestat.h"

/* Histogram upper bounds, seconds.  A hook runs from milliseconds to
 * hours; a trigger is late by milliseconds when healthy, by the retry and
 * rescan intervals when not. */
static const double dur_bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
	0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600 };
static const double lag_bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
	0.5, 1, 2.5, 5, 10, 30, 60, 300 };
#define NDUR	(sizeof(dur_bounds) / sizeof(dur_bounds[0]))
#define NLAG	(sizeof(lag_bounds) / sizeof(lag_bounds[0]))
#define NBUCKET_MAX	NDUR

/* The bounded label sets. */
static const char *const statuses[] = { "SUCCESS", "FAILED", "CANCELLED" };
static const char *const outcomes[] = { "SUCCESS", "FAILED", "TEMPFAIL",
	"TIMEOUT", "LOST", "CANCELLED", "ERROR" };
static const char *const cb_outcomes[] = { "ok", "retry", "failed",
	"rejected" };
static const char *const outbox_kinds[] = { "callback", "record" };
#define NSTATUS	(sizeof(statuses) / sizeof(statuses[0]))
#define NOUTCOME (sizeof(outcomes) / sizeof(outcomes[0]))
#define NCB	(sizeof(cb_outcomes) / sizeof(cb_outcomes[0]))
#define NOUTBOX	(sizeof(outbox_kinds) / sizeof(outbox_kinds[0]))

struct hist {
	unsigned long long bucket[NBUCKET_MAX];	/* not cumulative */
	unsigned long long count;
	double sum;
};

struct code_stats {
	char code[65];
	unsigned long long tasks[NSTATUS];
	unsigned long long attempts[NOUTCOME];
	unsigned long long rate_limited;	/* claims a rate limit held */
	struct hist dur;
};

static struct {
	pthread_mutex_t mu;
	char node[65];
	struct code_stats *codes;	/* METRICS_CODES_MAX + 1 ("_other") */
	size_t ncodes;
	unsigned long long retries, lease_lost, corrupt;
	unsigned long long callbacks[NCB];
	long circuit_open;
	long outbox[NOUTBOX];
	struct hist lag;
	struct hist prio_wait[10];	/* by priority 0..9 */
} M = { .mu = PTHREAD_MUTEX_INITIALIZER };

int
metrics_init(const char *node)
{
	if (node == NULL || !spool_code_ok(node)) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&M.mu);
	free(M.codes);
	M.codes = calloc(METRICS_CODES_MAX + 1, sizeof(*M.codes));
	M.ncodes = 0;
	M.retries = M.lease_lost = M.corrupt = 0;
	memset(M.callbacks, 0, sizeof(M.callbacks));
	memset(M.outbox, 0, sizeof(M.outbox));
	memset(&M.lag, 0, sizeof(M.lag));
	M.circuit_open = 0;
	snprintf(M.node, sizeof(M.node), "%s", node);
	pthread_mutex_unlock(&M.mu);
	if (M.codes == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
metrics_fini(void)
{
	pthread_mutex_lock(&M.mu);
	free(M.codes);
	M.codes = NULL;
	M.ncodes = 0;
	pthread_mutex_unlock(&M.mu);
}

/* The stats of code, added when new; "_other" past the cap.  Locked. */
static struct code_stats *
code_get(const char *code)
{
	if (M.codes == NULL)
		return NULL;
	for (size_t i = 0; i < M.ncodes; i++)
		if (strcmp(M.codes[i].code, code) == 0)
			return &M.codes[i];
	if (!spool_code_ok(code) || M.ncodes >= METRICS_CODES_MAX) {
		struct code_stats *o = &M.codes[METRICS_CODES_MAX];

		snprintf(o->code, sizeof(o->code), "_other");
		return o;
	}
	snprintf(M.codes[M.ncodes].code, sizeof(M.codes[0].code), "%s", code);
	return &M.codes[M.ncodes++];
}

static void
hist_observe(struct hist *h, const double *bounds, size_t nb, double v)
{
	if (v < 0)
		v = 0;
	h->count++;
	h->sum += v;
	for (size_t i = 0; i < nb; i++)
		if (v <= bounds[i]) {
			h->bucket[i]++;
			return;
		}
	/* Above the last bound: only in +Inf, which is the count. */
}

static int
index_of(const char *const *set, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i], v) == 0)
			return (int)i;
	return -1;
}

void
metrics_attempt_started(const char *task_code, int64_t due_ms,
    int64_t start_ms)
{
	(void)task_code;
	if (due_ms < 0)
		return;
	pthread_mutex_lock(&M.mu);
	hist_observe(&M.lag, lag_bounds, NLAG, (double)(start_ms - due_ms) /
	    1000.0);
	pthread_mutex_unlock(&M.mu);
}

void
metrics_priority_wait(int prio, int64_t due_ms, int64_t start_ms)
{
	if (due_ms < 0 || prio < 0 || prio > 9)
		return;
	pthread_mutex_lock(&M.mu);
	hist_observe(&M.prio_wait[prio], lag_bounds, NLAG, start_ms > due_ms ?
	    (double)(start_ms - due_ms) / 1000.0 : 0.0);
	pthread_mutex_unlock(&M.mu);
}

void
metrics_attempt_ended(const char *task_code, const char *outcome,
    double duration_s)
{
	struct code_stats *c;
	int o = index_of(outcomes, NOUTCOME, outcome);

	pthread_mutex_lock(&M.mu);
	if ((c = code_get(task_code)) != NULL) {
		c->attempts[o >= 0 ? o : 1]++;
		if (duration_s >= 0)
			hist_observe(&c->dur, dur_bounds, NDUR, duration_s);
	}
	if (o >= 0 && strcmp(outcomes[o], "LOST") == 0)
		M.lease_lost++;
	pthread_mutex_unlock(&M.mu);
}

void
metrics_retry(void)
{
	pthread_mutex_lock(&M.mu);
	M.retries++;
	pthread_mutex_unlock(&M.mu);
}

void
metrics_task_finished(const char *task_code, const char *status)
{
	struct code_stats *c;
	int s = index_of(statuses, NSTATUS, status);

	pthread_mutex_lock(&M.mu);
	if ((c = code_get(task_code)) != NULL)
		c->tasks[s >= 0 ? s : 1]++;
	pthread_mutex_unlock(&M.mu);
}

void
metrics_rate_limited(const char *task_code)
{
	struct code_stats *c;

	pthread_mutex_lock(&M.mu);
	if ((c = code_get(task_code)) != NULL)
		c->rate_limited++;
	pthread_mutex_unlock(&M.mu);
}

void
metrics_corrupt(void)
{
	pthread_mutex_lock(&M.mu);
	M.corrupt++;
	pthread_mutex_unlock(&M.mu);
}

void
metrics_callback_outcome(const char *outcome)
{
	int o = index_of(cb_outcomes, NCB, outcome);

	pthread_mutex_lock(&M.mu);
	M.callbacks[o >= 0 ? o : 2]++;
	pthread_mutex_unlock(&M.mu);
}

void
metrics_callback_circuit_open(long n)
{
	pthread_mutex_lock(&M.mu);
	M.circuit_open = n;
	pthread_mutex_unlock(&M.mu);
}

void
metrics_outbox_depth(const char *kind, long n)
{
	int k = index_of(outbox_kinds, NOUTBOX, kind);

	if (k < 0)
		return;
	pthread_mutex_lock(&M.mu);
	M.outbox[k] = n;
	pthread_mutex_unlock(&M.mu);
}

/* --- counting the spool --- */

/*
 * Entries of dirfd not starting with '.', at most METRICS_SCAN_MAX; when
 * oldest_ms is not NULL, the smallest mtime (epoch ms) of a regular file.
 * Returns the count or -1 with errno.
 */
static long
count_dir(int dirfd, int *truncated, int64_t *oldest_ms)
{
	DIR *dp = spool_opendir(dirfd);
	struct dirent *de;
	long n = 0;

	if (dp == NULL)
		return -1;
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n >= METRICS_SCAN_MAX) {
			*truncated = 1;
			break;
		}
		n++;
		if (oldest_ms != NULL) {
			struct stat st;
			int64_t m;

			if (fstatat(dirfd, de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
				continue;
			m = (int64_t)st.st_mtim.tv_sec * 1000 +
			    st.st_mtim.tv_nsec / 1000000;
			if (*oldest_ms < 0 || m < *oldest_ms)
				*oldest_ms = m;
		}
	}
	closedir(dp);
	return n;
}

/* Sum of the counts of every <node>/ subdirectory of dirfd. */
static long
count_node_dirs(int dirfd, int *truncated)
{
	DIR *dp = spool_opendir(dirfd);
	struct dirent *de;
	long n = 0;

	if (dp == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		int sub;
		long c;

		if (de->d_name[0] == '.' || !spool_code_ok(de->d_name))
			continue;
		sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		c = count_dir(sub, truncated, NULL);
		close(sub);
		if (c > 0)
			n += c;
	}
	closedir(dp);
	return n;
}

int
metrics_scan_spool(const struct spool *sp, int64_t now_ms,
    struct metrics_spool *out)
{
	int64_t oldest = -1;
	long c;

	memset(out, 0, sizeof(*out));
	c = count_dir(sp->dir[SPOOL_INCOMING], &out->truncated, &oldest);
	if (c < 0)
		return -1;
	out->pending = c;
	if (oldest >= 0 && now_ms > oldest)
		out->oldest_pending_s = (double)(now_ms - oldest) / 1000.0;
	c = count_dir(sp->dir[SPOOL_DELAYED], &out->truncated, NULL);
	out->delayed = c > 0 ? c : 0;
	c = count_dir(sp->dir[SPOOL_BLOCKED], &out->truncated, NULL);
	out->blocked = c > 0 ? c : 0;
	out->dispatched = count_node_dirs(sp->dir[SPOOL_QUEUE],
	    &out->truncated);
	out->running = count_node_dirs(sp->dir[SPOOL_ACTIVE],
	    &out->truncated);
	c = count_dir(sp->dir[SPOOL_HOLD], &out->truncated, NULL);
	out->held = c > 0 ? c : 0;
	/* WAITING: tasks over a max_concurrent limit, marked in
	 * state/waiting/ (maxconc.h) while they stay in incoming/ (or a
	 * queue/): counted there, not under pending as well. */
	{
		int wfd = openat(sp->dir[SPOOL_STATE], "waiting", O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (wfd >= 0) {
			c = count_dir(wfd, &out->truncated, NULL);
			close(wfd);
			out->waiting = c > 0 ? c : 0;
			out->pending = out->pending > out->waiting ?
			    out->pending - out->waiting : 0;
		}
	}
	return 0;
}

/* --- rendering --- */

static int
family(struct buf *b, const char *name, const char *type, const char *help)
{
	return buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	    type);
}

/* A histogram's _bucket, _sum and _count lines; extra is ",k=\"v\"" or "". */
static int
hist_render(struct buf *b, const char *name, const char *extra,
    const struct hist *h, const double *bounds, size_t nb)
{
	unsigned long long cum = 0;
	int rc = 0;

	for (size_t i = 0; i < nb; i++) {
		cum += h->bucket[i];
		rc |= buf_printf(b, "%s_bucket{node=\"%s\"%s,le=\"%g\"} %llu\n",
		    name, M.node, extra, bounds[i], cum);
	}
	rc |= buf_printf(b, "%s_bucket{node=\"%s\"%s,le=\"+Inf\"} %llu\n",
	    name, M.node, extra, h->count);
	rc |= buf_printf(b, "%s_sum{node=\"%s\"%s} %.6f\n", name, M.node,
	    extra, h->sum);
	rc |= buf_printf(b, "%s_count{node=\"%s\"%s} %llu\n", name, M.node,
	    extra, h->count);
	return rc;
}

/* taskspool_node_heartbeat_age_seconds for each state/heartbeat.<peer>. */
static int
heartbeats_render(struct buf *b, const struct spool *sp, int64_t now_ms)
{
	DIR *dp;
	struct dirent *de;
	int rc = 0, n = 0;

	if (sp == NULL || (dp = spool_opendir(sp->dir[SPOOL_STATE])) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL && n < METRICS_CODES_MAX) {
		const char *peer = de->d_name + 10;
		char *txt, *p;
		long long at = -1;

		if (strncmp(de->d_name, "heartbeat.", 10) != 0 ||
		    !spool_code_ok(peer))
			continue;
		txt = spool_read_text(sp->dir[SPOOL_STATE], de->d_name, 4096,
		    NULL, NULL, 0);
		if (txt == NULL)
			continue;
		if ((p = strstr(txt, "at_ms=")) != NULL)
			at = strtoll(p + 6, NULL, 10);
		free(txt);
		if (at <= 0)
			continue;
		rc |= buf_printf(b, "taskspool_node_heartbeat_age_seconds{node="
		    "\"%s\",peer=\"%s\"} %.3f\n", M.node, peer,
		    now_ms > at ? (double)(now_ms - at) / 1000.0 : 0.0);
		n++;
	}
	closedir(dp);
	return rc;
}

/*
 * What `taskspool purge` removed from the spool (state/purge,
 * purgestat.h): the same totals in every daemon's file, so take the max
 * over nodes, not the sum.  0 before any purge; the last run's time only
 * once there was one.
 */
static int
purge_render(struct buf *b, const struct spool *sp)
{
	struct purgestat st;
	int rc = 0;

	if (sp == NULL)
		return 0;
	(void)purgestat_read(sp, &st);
	rc |= family(b, "taskspool_purge_removed_total", "counter", "Files "
	    "removed by taskspool purge, by directory (tasks of done/, "
	    "failed/, cancelled/ with their results and logs; files of "
	    "corrupt/); the spool's total, the same on every node.");
	for (size_t i = 0; i < PURGESTAT_NDIRS; i++)
		rc |= buf_printf(b, "taskspool_purge_removed_total{node=\"%s\","
		    "dir=\"%s\"} %lld\n", M.node, purgestat_dir_name(i),
		    st.removed[i]);
	if (st.at_ms >= 0) {
		rc |= family(b, "taskspool_purge_last_run_timestamp_seconds",
		    "gauge", "When taskspool purge last ran on this spool "
		    "(Unix time).");
		rc |= buf_printf(b, "taskspool_purge_last_run_timestamp_seconds"
		    "{node=\"%s\"} %lld.%03lld\n", M.node,
		    (long long)(st.at_ms / 1000), (long long)(st.at_ms % 1000));
	}
	return rc;
}

const char *
metrics_backpressure_reason(int e)
{
	return e == ENOSPC ? "enospc" : e == EDQUOT ? "edquot" : e == EROFS ?
	    "erofs" : NULL;
}

int
metrics_render(struct buf *b, const struct spool *sp, int64_t now_ms,
    const struct metrics_node *self, const struct metrics_spool *q)
{
	const char *nd;
	char extra[128];
	int rc = 0;

	pthread_mutex_lock(&M.mu);
	nd = M.node;
	/* First the file's own description, which a reader needs to judge
	 * whether the rest still speaks for a live daemon (freshness.h). */
	rc |= family(b, METRICS_WRITTEN, "gauge", "When this file was written "
	    "(Unix time, the writing daemon's clock).");
	rc |= buf_printf(b, METRICS_WRITTEN "{node=\"%s\"} %lld.%03lld\n", nd,
	    (long long)(now_ms / 1000), (long long)(now_ms % 1000));
	if (self != NULL) {
		rc |= family(b, METRICS_INTERVAL, "gauge", "Seconds between "
		    "rewrites of this file (metrics_interval_ms); older than 3 "
		    "intervals it is stale.");
		rc |= buf_printf(b, METRICS_INTERVAL "{node=\"%s\"} %.3f\n", nd,
		    (double)self->interval_ms / 1000.0);
		rc |= family(b, "taskspool_metrics_stopped", "gauge", "1 in the "
		    "last file of a daemon that stopped cleanly.");
		rc |= buf_printf(b, "taskspool_metrics_stopped{node=\"%s\"} %d\n",
		    nd, self->stopped ? 1 : 0);
		/* The release as a label of a constant 1, the *_build_info
		 * convention of Prometheus's own exporters. */
		rc |= family(b, "taskspool_build_info", "gauge", "Always 1; "
		    "the release of the daemon that wrote this file is its "
		    "version label.");
		rc |= buf_printf(b, "taskspool_build_info{node=\"%s\",version="
		    "\"%s\"} 1\n", nd, TASKSPOOL_VERSION);
	}
	rc |= family(b, "taskspool_tasks_total", "counter", "Tasks that "
	    "reached a terminal state on this node, by task code and status.");
	for (size_t i = 0; M.codes != NULL && i <= METRICS_CODES_MAX; i++) {
		const struct code_stats *c = &M.codes[i];

		if (c->code[0] == '\0')
			continue;
		for (size_t s = 0; s < NSTATUS; s++)
			rc |= buf_printf(b, "taskspool_tasks_total{node=\"%s\","
			    "task_code=\"%s\",status=\"%s\"} %llu\n", nd,
			    c->code, statuses[s], c->tasks[s]);
	}
	rc |= family(b, "taskspool_attempts_total", "counter", "Attempts "
	    "concluded on this node, by task code and outcome.");
	for (size_t i = 0; M.codes != NULL && i <= METRICS_CODES_MAX; i++) {
		const struct code_stats *c = &M.codes[i];

		if (c->code[0] == '\0')
			continue;
		for (size_t o = 0; o < NOUTCOME; o++)
			rc |= buf_printf(b, "taskspool_attempts_total{node=\"%s\""
			    ",task_code=\"%s\",outcome=\"%s\"} %llu\n", nd,
			    c->code, outcomes[o], c->attempts[o]);
	}
	rc |= family(b, "taskspool_rate_limited_total", "counter", "Claims "
	    "an execution rate limit (rate_limit, rate_limit_per_key) held "
	    "back on this node, by task code: the task waited.");
	for (size_t i = 0; M.codes != NULL && i <= METRICS_CODES_MAX; i++) {
		const struct code_stats *c = &M.codes[i];

		if (c->code[0] == '\0')
			continue;
		rc |= buf_printf(b, "taskspool_rate_limited_total{node=\"%s\","
		    "task_code=\"%s\"} %llu\n", nd, c->code, c->rate_limited);
	}
	rc |= family(b, "taskspool_retries_total", "counter", "Failed "
	    "attempts queued in delayed/ for another attempt.");
	rc |= buf_printf(b, "taskspool_retries_total{node=\"%s\"} %llu\n", nd,
	    M.retries);
	rc |= family(b, "taskspool_execution_duration_seconds", "histogram",
	    "Run time of a hook, from its start to its exit.");
	for (size_t i = 0; M.codes != NULL && i <= METRICS_CODES_MAX; i++) {
		const struct code_stats *c = &M.codes[i];

		if (c->code[0] == '\0')
			continue;
		snprintf(extra, sizeof(extra), ",task_code=\"%s\"", c->code);
		rc |= hist_render(b, "taskspool_execution_duration_seconds",
		    extra, &c->dur, dur_bounds, NDUR);
	}
	rc |= family(b, "taskspool_trigger_delay_seconds", "histogram",
	    "Fire lag: from the instant an attempt was due (notBefore, "
	    "triggerTime or createdAt) to the start of its hook.");
	rc |= hist_render(b, "taskspool_trigger_delay_seconds", "", &M.lag,
	    lag_bounds, NLAG);
	rc |= family(b, "taskspool_priority_wait_seconds", "histogram",
	    "Waiting time of tasks by priority: from the instant a task was "
	    "due to the start of its first attempt.");
	for (int p = 0; p <= 9; p++) {
		char pextra[24];

		snprintf(pextra, sizeof(pextra), ",priority=\"%d\"", p);
		rc |= hist_render(b, "taskspool_priority_wait_seconds", pextra,
		    &M.prio_wait[p], lag_bounds, NLAG);
	}
	rc |= family(b, "taskspool_lease_lost_total", "counter", "Attempts "
	    "found lost (their daemon died or lost its lease) and recovered "
	    "by this node.");
	rc |= buf_printf(b, "taskspool_lease_lost_total{node=\"%s\"} %llu\n",
	    nd, M.lease_lost);
	rc |= family(b, "taskspool_corrupt_total", "counter", "Files this "
	    "node moved to corrupt/.");
	rc |= buf_printf(b, "taskspool_corrupt_total{node=\"%s\"} %llu\n", nd,
	    M.corrupt);
	rc |= family(b, "taskspool_callbacks_total", "counter", "Callback "
	    "delivery attempts by outcome (filled by the callback sender).");
	for (size_t i = 0; i < NCB; i++)
		rc |= buf_printf(b, "taskspool_callbacks_total{node=\"%s\","
		    "outcome=\"%s\"} %llu\n", nd, cb_outcomes[i],
		    M.callbacks[i]);
	rc |= family(b, "taskspool_callback_circuit_open", "gauge", "Callback "
	    "destinations whose circuit breaker is open.");
	rc |= buf_printf(b, "taskspool_callback_circuit_open{node=\"%s\"} "
	    "%ld\n", nd, M.circuit_open);
	rc |= family(b, "taskspool_outbox_depth", "gauge", "Files waiting in "
	    "outbox/, by kind.");
	for (size_t i = 0; i < NOUTBOX; i++)
		rc |= buf_printf(b, "taskspool_outbox_depth{node=\"%s\",kind="
		    "\"%s\"} %ld\n", nd, outbox_kinds[i], M.outbox[i]);
	if (q != NULL) {
		static const char *const st[] = { "pending", "waiting",
			"delayed", "dispatched", "running", "held", "blocked" };
		long v[] = { q->pending, q->waiting, q->delayed, q->dispatched,
			q->running, q->held, q->blocked };

		rc |= family(b, "taskspool_queue_depth", "gauge", "Tasks in the "
		    "spool by state (spool-wide: every node reports the same "
		    "directories).");
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			rc |= buf_printf(b, "taskspool_queue_depth{node=\"%s\","
			    "state=\"%s\"} %ld\n", nd, st[i], v[i]);
		rc |= family(b, "taskspool_oldest_pending_age_seconds", "gauge",
		    "Age of the oldest file in incoming/ (0 when empty).");
		rc |= buf_printf(b, "taskspool_oldest_pending_age_seconds{node="
		    "\"%s\"} %.3f\n", nd, q->oldest_pending_s);
	}
	if (self != NULL) {
		rc |= family(b, "taskspool_slots", "gauge", "Hook slots of this "
		    "node: total, and busy running a hook.");
		rc |= buf_printf(b, "taskspool_slots{node=\"%s\",kind=\"total\"}"
		    " %ld\n", nd, self->slots_total);
		rc |= buf_printf(b, "taskspool_slots{node=\"%s\",kind=\"busy\"}"
		    " %ld\n", nd, self->slots_busy);
		rc |= family(b, "taskspool_leader", "gauge", "1 while this node "
		    "holds the leader lock.");
		rc |= buf_printf(b, "taskspool_leader{node=\"%s\"} %d\n", nd,
		    self->leader ? 1 : 0);
		rc |= family(b, "taskspool_node_drained", "gauge", "1 while "
		    "an operator has drained this node (taskspool nodes "
		    "drain): it finishes what runs and claims nothing new.");
		rc |= buf_printf(b, "taskspool_node_drained{node=\"%s\"} %d\n",
		    nd, self->drained ? 1 : 0);
		rc |= family(b, "taskspool_backpressure", "gauge", "1 while "
		    "this node claims nothing because a write into the spool "
		    "failed for that reason (until a probe write succeeds).");
		for (int e = 0; e < 3; e++) {
			int v[] = { ENOSPC, EDQUOT, EROFS };

			rc |= buf_printf(b, "taskspool_backpressure{node=\"%s\","
			    "reason=\"%s\"} %d\n", nd,
			    metrics_backpressure_reason(v[e]),
			    self->backpressure == v[e] ? 1 : 0);
		}
	}
	rc |= family(b, "taskspool_node_heartbeat_age_seconds", "gauge",
	    "Seconds since each node (peer) last wrote its heartbeat, as seen "
	    "by this node.");
	rc |= heartbeats_render(b, sp, now_ms);
	rc |= purge_render(b, sp);
	pthread_mutex_unlock(&M.mu);
	return rc != 0 ? -1 : 0;
}

#define METRICS_SPARE	65536	/* bytes kept allocated past the file */

/*
 * The file system is full: no new file can be staged, but the blocks of
 * the existing dirfd/name (METRICS_SPARE of them kept allocated past its
 * end by metrics_write) can take the new text, written in place; a
 * shorter text is padded to the old length with a comment line, so no
 * block is given back.  XXX a reader may see a torn file meanwhile; it
 * is the only way a full spool can still say it is full.  0 or -1.
 */
static int
overwrite(int dirfd, const char *name, const struct buf *b)
{
	int fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC), rc = -1, e;
	struct stat st;
	char *pad = NULL;
	size_t npad = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)b->len) {
		npad = (size_t)st.st_size - b->len;
		if ((pad = malloc(npad)) != NULL) {
			memset(pad, ' ', npad);
			pad[0] = npad > 1 ? '#' : '\n';
			pad[npad - 1] = '\n';
		}
	}
	errno = 0;
	if (pwrite(fd, b->data, b->len, 0) == (ssize_t)b->len && (npad == 0 ||
	    (pad != NULL && pwrite(fd, pad, npad, (off_t)b->len) ==
	    (ssize_t)npad)))
		rc = 0;
	else if (errno == 0)
		errno = ENOSPC;
	e = errno;
	free(pad);
	close(fd);
	errno = e;
	return rc;
}

/* Keep METRICS_SPARE bytes allocated past the end of dirfd/name (for
 * overwrite).  Best effort. */
static void
keep_spare(int dirfd, const char *name, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);

	if (fd < 0)
		return;
	(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)(len +
	    METRICS_SPARE));
	close(fd);
}

int
metrics_write(const struct spool *sp, int64_t now_ms,
    const struct metrics_node *self)
{
	struct metrics_spool q;
	struct spool quiet = *sp;
	struct buf b;
	char name[80];
	int rc, e;

	if (!self->stopped && metrics_scan_spool(sp, now_ms, &q) != 0)
		return -1;
	buf_init(&b, 16 << 20);
	rc = metrics_render(&b, self->stopped ? NULL : sp, now_ms, self,
	    self->stopped ? NULL : &q);
	if (rc == 0) {
		snprintf(name, sizeof(name), "%s.prom", M.node);
		quiet.do_fsync = 0;	/* rewritten every few seconds */
		rc = spool_publish(&quiet, sp->dir[SPOOL_METRICS], name,
		    b.data, b.len, -1, 0);
		if (rc == 0)
			keep_spare(sp->dir[SPOOL_METRICS], name, b.len);
		else if (errno == ENOSPC || errno == EDQUOT)
			rc = overwrite(sp->dir[SPOOL_METRICS], name, &b);
	}
	e = errno;
	buf_fini(&b);
	errno = e;
	return rc;
}
