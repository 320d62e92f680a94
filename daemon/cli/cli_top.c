/*
 * cli_top — `taskspool top` and `taskspool status`; see cli_top.h.
 */
#include "cli/cli_top.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <termios.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/freshness.h"
#include "core/jsontext.h"
#include "spool/metrics.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/tstime.h"
#include "coord/coord.h"
#include "spool/clock.h"

#define TOP_ROWS	24	/* the frame fits a classic terminal */
#define TOP_COLS	80
#define TOP_NODES_MAX	64	/* heartbeat files read */
#define TOP_LE_MAX	32	/* histogram buckets */
#define TOP_FAIL_MAX	5	/* recent failures kept */
#define TOP_PROM_MAX	(4 << 20) /* largest metrics file read */

struct top_node {
	char id[65];
	long pid, slots, running, leader;
	unsigned long long claimed, finished;
	int64_t at_ms;		/* the node's clock when it wrote */
	int64_t mtime_ms;	/* the heartbeat file's mtime */
	int live;		/* not stale (freshness.h) */
	int draining;		/* coord_node's: 1 drained, 2 stopping */
};

/* A histogram summed over files: cumulative counts per upper bound. */
struct top_hist {
	double le[TOP_LE_MAX];	/* ascending; +Inf kept as count */
	double cum[TOP_LE_MAX];
	size_t n;
	double count;
};

struct top_fail {
	char id[TASK_ID_MAX + 1];
	int64_t mtime_ms;
};

struct top_data {
	struct top_node nodes[TOP_NODES_MAX];
	size_t nnodes;
	struct metrics_spool q;
	int q_ok;
	struct top_hist lag, dur;
	double success, failed, cancelled, retries, corrupt, lost;
	struct top_fail fails[TOP_FAIL_MAX];
	size_t nfails;
	struct {
		char node[65], reason[16];
	} bp[TOP_NODES_MAX];		/* taskspool_backpressure == 1 */
	size_t nbp;
};

static volatile sig_atomic_t top_stop;

static void
top_on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

/* --- reading --- */

/*
 * The heartbeat files of state/ into d, each judged live or stale against
 * the others and now (freshness.h) with 3 heartbeat_ms as the limit: a
 * node killed with -9 leaves its last file, leader=1 included.
 */
static void
read_nodes(const struct spool *sp, struct top_data *d, int64_t now,
    long heartbeat_ms)
{
	DIR *dp = spool_opendir(sp->dir[SPOOL_STATE]);
	struct dirent *de;
	int64_t newest = -1;

	if (dp == NULL)
		return;
	while ((de = readdir(dp)) != NULL && d->nnodes < TOP_NODES_MAX) {
		struct top_node *nd = &d->nodes[d->nnodes];
		char *txt;

		if (strncmp(de->d_name, "heartbeat.", 10) != 0 ||
		    !spool_code_ok(de->d_name + 10))
			continue;
		txt = spool_read_text(sp->dir[SPOOL_STATE], de->d_name, 4096,
		    NULL, NULL, 0);
		if (txt == NULL)
			continue;
		memset(nd, 0, sizeof(*nd));
		snprintf(nd->id, sizeof(nd->id), "%s", de->d_name + 10);
		{
			struct stat st;

			if (fstatat(sp->dir[SPOOL_STATE], de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) == 0)
				nd->mtime_ms = (int64_t)st.st_mtim.tv_sec *
				    1000 + st.st_mtim.tv_nsec / 1000000;
			if (nd->mtime_ms > newest)
				newest = nd->mtime_ms;
		}
		{
			struct coord_node hb;

			memset(&hb, 0, sizeof(hb));
			coord_heartbeat_parse(txt, &hb);
			nd->pid = hb.pid;
			nd->slots = hb.slots;
			nd->running = hb.running;
			nd->claimed = hb.claimed;
			nd->finished = hb.finished;
			nd->leader = hb.leader;
			nd->at_ms = hb.at_ms;
			nd->draining = hb.draining;
		}
		free(txt);
		d->nnodes++;
	}
	closedir(dp);
	for (size_t i = 0; i < d->nnodes; i++) {
		struct top_node *nd = &d->nodes[i];
		struct freshness f = { nd->at_ms > 0 ? nd->at_ms : -1,
			nd->mtime_ms, 3 * (int64_t)heartbeat_ms };

		nd->live = !freshness_stale(&f, newest, now);
	}
	/* Sorted by id, so the view does not jump between refreshes. */
	for (size_t i = 1; i < d->nnodes; i++)
		for (size_t j = i; j > 0 && strcmp(d->nodes[j - 1].id,
		    d->nodes[j].id) > 0; j--) {
			struct top_node t = d->nodes[j];

			d->nodes[j] = d->nodes[j - 1];
			d->nodes[j - 1] = t;
		}
}

static void
hist_add(struct top_hist *h, const char *le, double v)
{
	double b;
	size_t i;

	if (strcmp(le, "+Inf") == 0) {
		h->count += v;
		return;
	}
	b = strtod(le, NULL);
	for (i = 0; i < h->n; i++)
		if (h->le[i] == b) {
			h->cum[i] += v;
			return;
		}
	if (h->n == TOP_LE_MAX)
		return;
	/* Insert keeping the bounds ascending. */
	for (i = h->n; i > 0 && h->le[i - 1] > b; i--) {
		h->le[i] = h->le[i - 1];
		h->cum[i] = h->cum[i - 1];
	}
	h->le[i] = b;
	h->cum[i] = v;
	h->n++;
}

/* The value of label name in a "{a=\"x\",b=\"y\"}" label set, or "". */
static void
label_of(const char *labels, const char *name, char *out, size_t len)
{
	char pat[48];
	const char *p, *e;

	out[0] = '\0';
	snprintf(pat, sizeof(pat), "%s=\"", name);
	for (p = labels; (p = strstr(p, pat)) != NULL; p++)
		if (p == labels || p[-1] == '{' || p[-1] == ',')
			break;
	if (p == NULL)
		return;
	p += strlen(pat);
	if ((e = strchr(p, '"')) == NULL || (size_t)(e - p) >= len)
		return;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
}

/* Add one metrics file's samples to d. */
static void
read_prom(char *txt, struct top_data *d)
{
	char *line, *save;

	for (line = strtok_r(txt, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), lab[64];
		double v;

		if (line[0] == '#' || sp == NULL)
			continue;
		v = strtod(sp + 1, NULL);
		*sp = '\0';
		if (strncmp(line, "taskspool_trigger_delay_seconds_bucket{",
		    39) == 0) {
			label_of(line, "le", lab, sizeof(lab));
			hist_add(&d->lag, lab, v);
		} else if (strncmp(line, "taskspool_execution_duration_seconds"
		    "_bucket{", 44) == 0) {
			label_of(line, "le", lab, sizeof(lab));
			hist_add(&d->dur, lab, v);
		} else if (strncmp(line, "taskspool_tasks_total{", 22) == 0) {
			label_of(line, "status", lab, sizeof(lab));
			if (strcmp(lab, "SUCCESS") == 0)
				d->success += v;
			else if (strcmp(lab, "FAILED") == 0)
				d->failed += v;
			else if (strcmp(lab, "CANCELLED") == 0)
				d->cancelled += v;
		} else if (strncmp(line, "taskspool_retries_total{", 24) == 0)
			d->retries += v;
		else if (strncmp(line, "taskspool_corrupt_total{", 24) == 0)
			d->corrupt += v;
		else if (strncmp(line, "taskspool_lease_lost_total{", 27) == 0)
			d->lost += v;
		else if (strncmp(line, "taskspool_backpressure{", 23) == 0 &&
		    v == 1 && d->nbp < TOP_NODES_MAX) {
			label_of(line, "node", d->bp[d->nbp].node,
			    sizeof(d->bp[d->nbp].node));
			label_of(line, "reason", d->bp[d->nbp].reason,
			    sizeof(d->bp[d->nbp].reason));
			d->nbp++;
		}
	}
}

static void
read_metrics(const struct spool *sp, struct top_data *d)
{
	DIR *dp = spool_opendir(sp->dir[SPOOL_METRICS]);
	struct dirent *de;
	int files = 0;

	if (dp == NULL)
		return;
	while ((de = readdir(dp)) != NULL && files < TOP_NODES_MAX) {
		size_t l = strlen(de->d_name);
		char *txt;

		if (de->d_name[0] == '.' || l < 6 ||
		    strcmp(de->d_name + l - 5, ".prom") != 0)
			continue;
		txt = spool_read_text(sp->dir[SPOOL_METRICS], de->d_name,
		    TOP_PROM_MAX, NULL, NULL, 0);
		if (txt == NULL)
			continue;
		read_prom(txt, d);
		free(txt);
		files++;
	}
	closedir(dp);
}

/* The TOP_FAIL_MAX newest files of failed/ (at most METRICS_SCAN_MAX). */
static void
read_failures(const struct spool *sp, struct top_data *d)
{
	DIR *dp = spool_opendir(sp->dir[SPOOL_FAILED]);
	struct dirent *de;
	long seen = 0;

	if (dp == NULL)
		return;
	while ((de = readdir(dp)) != NULL && seen++ < METRICS_SCAN_MAX) {
		size_t l = strlen(de->d_name), i;
		struct stat st;
		int64_t m;

		if (de->d_name[0] == '.' || l <= 5 || l - 5 > TASK_ID_MAX ||
		    strcmp(de->d_name + l - 5, ".json") != 0 ||
		    fstatat(sp->dir[SPOOL_FAILED], de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		m = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec /
		    1000000;
		/* Insertion into the newest-first list. */
		for (i = d->nfails; i > 0 && d->fails[i - 1].mtime_ms < m; i--)
			if (i < TOP_FAIL_MAX)
				d->fails[i] = d->fails[i - 1];
		if (i >= TOP_FAIL_MAX)
			continue;
		memcpy(d->fails[i].id, de->d_name, l - 5);
		d->fails[i].id[l - 5] = '\0';
		d->fails[i].mtime_ms = m;
		if (d->nfails < TOP_FAIL_MAX)
			d->nfails++;
	}
	closedir(dp);
}

/*
 * The q-quantile of h, interpolated linearly inside its bucket (the
 * lower bound of the first bucket is 0); the highest finite bound when
 * it falls in +Inf; -1 when h is empty.
 */
static double
hist_quantile(const struct top_hist *h, double q)
{
	double rank = q * h->count, lo = 0, prev = 0;

	if (h->count <= 0 || h->n == 0)
		return -1;
	for (size_t i = 0; i < h->n; i++) {
		if (h->cum[i] >= rank) {
			double in = h->cum[i] - prev;

			return in > 0 ? lo + (h->le[i] - lo) * (rank - prev) /
			    in : h->le[i];
		}
		lo = h->le[i];
		prev = h->cum[i];
	}
	return h->le[h->n - 1];
}

/* --- rendering --- */

/*
 * The leader to name: of the live nodes whose heartbeat says leader=1,
 * the one that wrote last (after a takeover the old leader may say so
 * for one more heartbeat); NULL when none.  A stale node's claim is its
 * last word before it died, not the present.
 */
static const struct top_node *
live_leader(const struct top_data *d)
{
	const struct top_node *l = NULL;

	for (size_t i = 0; i < d->nnodes; i++)
		if (d->nodes[i].live && d->nodes[i].leader && (l == NULL ||
		    d->nodes[i].mtime_ms > l->mtime_ms))
			l = &d->nodes[i];
	return l;
}

/* Append s to b cut at TOP_COLS columns (the text is ASCII) and a LF. */
static void
put_line(struct buf *b, int *rows, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
put_line(struct buf *b, int *rows, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (*rows >= TOP_ROWS)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	line[TOP_COLS] = '\0';
	(void)buf_printf(b, "%s\n", line);
	(*rows)++;
}

static const char *
secs(char *out, size_t len, double s)
{
	if (s < 0)
		snprintf(out, len, "-");
	else if (s < 10)
		snprintf(out, len, "%.3fs", s);
	else if (s < 3600)
		snprintf(out, len, "%.0fs", s);
	else
		snprintf(out, len, "%.1fh", s / 3600);
	return out;
}

/* The task code ("?" if unknown) and failure message ("" if none, control
 * characters as spaces) of the failed task id, from its result file. */
static void
fail_detail(const struct spool *sp, const char *id, char *code,
    size_t codelen, char *why, size_t whylen)
{
	char rname[TASK_ID_MAX + 8];
	char *res;
	size_t rlen;

	snprintf(code, codelen, "?");
	why[0] = '\0';
	snprintf(rname, sizeof(rname), "%s.json", id);
	res = spool_read_file(sp->dir[SPOOL_RESULTS], rname, 1 << 24, &rlen);
	if (res != NULL) {
		json_t *o = jsontext_loadb(res, rlen, 0, NULL);
		const char *s;

		if ((s = json_string_value(json_object_get(o, "taskCode"))) !=
		    NULL)
			snprintf(code, codelen, "%s", s);
		if ((s = json_string_value(json_object_get(json_object_get(o,
		    "failureReason"), "message"))) != NULL)
			snprintf(why, whylen, "%s", s);
		for (char *p = why; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20)
				*p = ' ';
		json_decref(o);
		free(res);
	}
}

/*
 * ", drained: n1 n2" for the live nodes an operator drained (and
 * "stopping" ones), into out; "" when none.  Returns out.
 */
static const char *
drained_list(const struct top_data *d, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < d->nnodes && o + 1 < len; i++) {
		int w;

		if (!d->nodes[i].live || d->nodes[i].draining == 0)
			continue;
		w = snprintf(out + o, len - o, "%s%s%s", o == 0 ?
		    ", drained: " : " ", d->nodes[i].id,
		    d->nodes[i].draining == 2 ? " (stopping)" : "");
		if (w < 0 || (size_t)w >= len - o)
			break;
		o += (size_t)w;
	}
	return out;
}

static void
render(struct buf *b, const struct config *cfg, const struct spool *sp,
    const struct top_data *d, int64_t now)
{
	char when[TSTIME_BUF], a[16], c[16], e[16], dr[TOP_COLS];
	const struct top_node *ld = live_leader(d);
	const char *leader = ld != NULL ? ld->id : "none";
	size_t live = 0, shown;
	int rows = 0;

	for (size_t i = 0; i < d->nnodes; i++)
		live += (size_t)d->nodes[i].live;
	put_line(b, &rows, "taskspool %.40s  %s", cfg->spool,
	    tstime_format_ms(when, sizeof(when), now));
	put_line(b, &rows, "NODES %zu live of %zu, leader %s%s", live,
	    d->nnodes, leader, drained_list(d, dr, sizeof(dr)));
	put_line(b, &rows, "  %-20s %8s %6s %5s %10s %9s %9s", "node", "pid",
	    "slots", "busy", "heartbeat", "claimed", "finished");
	shown = 0;
	for (size_t i = 0; i < d->nnodes && shown < 6; i++, shown++) {
		const struct top_node *nd = &d->nodes[i];
		double age = (double)(now - nd->at_ms) / 1000.0;
		char name[80];

		snprintf(name, sizeof(name), "%.19s%s", nd->id, nd == ld ?
		    "*" : "");
		put_line(b, &rows, "  %-20s %8ld %6ld %5ld %10s %9llu %9llu",
		    name, nd->pid, nd->slots,
		    nd->running, secs(a, sizeof(a), age < 0 ? 0 : age),
		    nd->claimed, nd->finished);
	}
	if (d->nnodes > shown)
		put_line(b, &rows, "  ... and %zu more", d->nnodes - shown);
	for (size_t i = 0; i < d->nbp; i++)
		put_line(b, &rows, "BACK-PRESSURE %.20s (%s): no claims until "
		    "the spool takes writes", d->bp[i].node, d->bp[i].reason);
	if (d->q_ok)
		put_line(b, &rows, "QUEUE pending %ld  waiting %ld  blocked %ld  "
		    "delayed %ld  running %ld%s", d->q.pending, d->q.waiting,
		    d->q.blocked, d->q.delayed, d->q.running, d->q.truncated ?
		    " (capped)" : "");
	else
		put_line(b, &rows, "QUEUE unreadable: %s", strerror(errno));
	/* Two lines, so that five-digit counts still fit 80 columns. */
	put_line(b, &rows, "  dispatched %ld  held %ld  oldest pending %s",
	    d->q_ok ? d->q.dispatched : 0, d->q_ok ? d->q.held : 0,
	    d->q.pending > 0 ? secs(a, sizeof(a), d->q.oldest_pending_s) :
	    "-");
	put_line(b, &rows, "FIRE LAG  p50 %s  p95 %s  p99 %s  (%.0f starts)",
	    secs(a, sizeof(a), hist_quantile(&d->lag, 0.5)),
	    secs(c, sizeof(c), hist_quantile(&d->lag, 0.95)),
	    secs(e, sizeof(e), hist_quantile(&d->lag, 0.99)), d->lag.count);
	put_line(b, &rows, "RUN TIME  p50 %s  p95 %s  p99 %s  (%.0f attempts)",
	    secs(a, sizeof(a), hist_quantile(&d->dur, 0.5)),
	    secs(c, sizeof(c), hist_quantile(&d->dur, 0.95)),
	    secs(e, sizeof(e), hist_quantile(&d->dur, 0.99)), d->dur.count);
	put_line(b, &rows, "TASKS success %.0f  failed %.0f  cancelled %.0f  "
	    "retries %.0f  lost %.0f  corrupt %.0f", d->success, d->failed,
	    d->cancelled, d->retries, d->lost, d->corrupt);
	put_line(b, &rows, "RECENT FAILURES%s", d->nfails == 0 ? " none" : "");
	for (size_t i = 0; i < d->nfails; i++) {
		char code[65], why[256];

		fail_detail(sp, d->fails[i].id, code, sizeof(code), why,
		    sizeof(why));
		put_line(b, &rows, "  %s %s %s: %s", tstime_format_ms(when,
		    sizeof(when), d->fails[i].mtime_ms) + 11, d->fails[i].id,
		    code, why);
	}
}

/* A quantile in seconds as JSON: a number, or null with no samples. */
static json_t *
quantile_json(const struct top_hist *h, double q)
{
	double v = hist_quantile(h, q);

	return v < 0 ? json_null() : json_real(v);
}

static json_t *
hist_json(const struct top_hist *h, const char *count_name)
{
	json_t *o = json_object();

	json_object_set_new(o, "p50", quantile_json(h, 0.5));
	json_object_set_new(o, "p95", quantile_json(h, 0.95));
	json_object_set_new(o, "p99", quantile_json(h, 0.99));
	json_object_set_new(o, count_name, json_integer((json_int_t)h->count));
	return o;
}

/* The same facts as render(), as one JSON object (status --json). */
static void
render_json(struct buf *b, const struct config *cfg, const struct spool *sp,
    const struct top_data *d, int64_t now)
{
	json_t *o = json_object(), *nodes = json_array(), *q, *t, *fails;
	char when[TSTIME_BUF];
	const struct top_node *ld = live_leader(d);
	const char *leader = ld != NULL ? ld->id : NULL;
	size_t live = 0;
	char *text;

	for (size_t i = 0; i < d->nnodes; i++) {
		const struct top_node *nd = &d->nodes[i];
		json_t *n = json_object();

		live += (size_t)nd->live;
		json_object_set_new(n, "node", json_string(nd->id));
		json_object_set_new(n, "live", json_boolean(nd->live));
		json_object_set_new(n, "leader", json_boolean(nd == ld));
		/* Drained by an operator (taskspool nodes drain). */
		json_object_set_new(n, "drained", json_boolean(nd->draining
		    == 1));
		json_object_set_new(n, "pid", json_integer(nd->pid));
		json_object_set_new(n, "slots", json_integer(nd->slots));
		json_object_set_new(n, "busy", json_integer(nd->running));
		json_object_set_new(n, "heartbeatAgeMs", json_integer(
		    now > nd->at_ms ? now - nd->at_ms : 0));
		json_object_set_new(n, "claimed",
		    json_integer((json_int_t)nd->claimed));
		json_object_set_new(n, "finished",
		    json_integer((json_int_t)nd->finished));
		json_array_append_new(nodes, n);
	}
	json_object_set_new(o, "spool", json_string(cfg->spool));
	json_object_set_new(o, "time", json_string(tstime_format_ms(when,
	    sizeof(when), now)));
	json_object_set_new(o, "nodesLive", json_integer((json_int_t)live));
	json_object_set_new(o, "leader", leader != NULL ? json_string(leader) :
	    json_null());
	json_object_set_new(o, "nodes", nodes);
	if (d->q_ok) {
		q = json_object();
		json_object_set_new(q, "pending", json_integer(d->q.pending));
		json_object_set_new(q, "waiting", json_integer(d->q.waiting));
		json_object_set_new(q, "blocked", json_integer(d->q.blocked));
		json_object_set_new(q, "delayed", json_integer(d->q.delayed));
		json_object_set_new(q, "dispatched",
		    json_integer(d->q.dispatched));
		json_object_set_new(q, "running", json_integer(d->q.running));
		json_object_set_new(q, "held", json_integer(d->q.held));
		json_object_set_new(q, "capped",
		    json_boolean(d->q.truncated));
		json_object_set_new(q, "oldestPendingSeconds", d->q.pending >
		    0 ? json_real(d->q.oldest_pending_s) : json_null());
	} else
		q = json_null();
	json_object_set_new(o, "queue", q);
	json_object_set_new(o, "fireLagSeconds", hist_json(&d->lag,
	    "starts"));
	json_object_set_new(o, "runTimeSeconds", hist_json(&d->dur,
	    "attempts"));
	t = json_object();
	json_object_set_new(t, "success", json_integer((json_int_t)d->success));
	json_object_set_new(t, "failed", json_integer((json_int_t)d->failed));
	json_object_set_new(t, "cancelled",
	    json_integer((json_int_t)d->cancelled));
	json_object_set_new(t, "retries", json_integer((json_int_t)d->retries));
	json_object_set_new(t, "lost", json_integer((json_int_t)d->lost));
	json_object_set_new(t, "corrupt", json_integer((json_int_t)d->corrupt));
	json_object_set_new(o, "tasks", t);
	fails = json_array();
	for (size_t i = 0; i < d->nfails; i++) {
		json_t *f = json_object();
		char code[65], why[256];

		fail_detail(sp, d->fails[i].id, code, sizeof(code), why,
		    sizeof(why));
		json_object_set_new(f, "requestId", json_string(d->fails[i].id));
		json_object_set_new(f, "taskCode", json_string(code));
		json_object_set_new(f, "message", json_string(why));
		json_object_set_new(f, "finishedAt", json_string(
		    tstime_format_ms(when, sizeof(when), d->fails[i].mtime_ms)));
		json_array_append_new(fails, f);
	}
	json_object_set_new(o, "recentFailures", fails);
	fails = json_array();
	for (size_t i = 0; i < d->nbp; i++) {
		json_t *f = json_object();

		json_object_set_new(f, "node", json_string(d->bp[i].node));
		json_object_set_new(f, "reason", json_string(d->bp[i].reason));
		json_array_append_new(fails, f);
	}
	json_object_set_new(o, "backpressure", fails);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text != NULL)
		(void)buf_printf(b, "%s\n", text);
	free(text);
}

/* Collect and render one frame into b (JSON when json).  Returns 0 or
 * EX_CONFIG. */
static int
frame(const struct config *cfg, struct buf *b, int json)
{
	struct spool sp;
	struct top_data *d;
	char why[1024];
	int64_t now = tstime_now_ms();

	if (spool_open(&sp, cfg->spool, NULL, 0, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool: %s\n", why);
		return EX_CONFIG;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		spool_close(&sp);
		return EX_OSERR;
	}
	read_nodes(&sp, d, now, cfg->heartbeat_ms);
	d->q_ok = metrics_scan_spool(&sp, now, &d->q) == 0;
	read_metrics(&sp, d);
	read_failures(&sp, d);
	if (json)
		render_json(b, cfg, &sp, d, now);
	else
		render(b, cfg, &sp, d, now);
	free(d);
	spool_close(&sp);
	return 0;
}

int
cli_top_summary(const struct config *cfg, int json)
{
	struct buf b;
	int rc;

	buf_init(&b, 0);
	if ((rc = frame(cfg, &b, json)) == 0)
		fwrite(b.data, 1, b.len, stdout);
	buf_fini(&b);
	return rc;
}

int
cli_top_main(int argc, char **argv, const struct config *cfg)
{
	static const struct option lo[] = {
		{ "once", no_argument, NULL, '1' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	static const char usage[] = "usage: taskspool top [--once] "
	    "[-i MS]\n";
	struct termios saved, raw;
	struct sigaction sa;
	int once = 0, ch, rc = 0, tty_in;
	long interval = 1000;
	char *end;

	while ((ch = getopt_long(argc, argv, "i:h", lo, NULL)) != -1) {
		switch (ch) {
		case '1':
			once = 1;
			break;
		case 'i':
			interval = strtol(optarg, &end, 10);
			if (*end != '\0' || interval < 100 || interval > 60000) {
				fprintf(stderr, "taskspool top: -i: 100..60000 "
				    "ms\n");
				return EX_USAGE;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return EX_USAGE;
	}
	if (once || !isatty(STDOUT_FILENO))
		return cli_top_summary(cfg, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_on_signal;	/* no SA_RESTART: poll returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	tty_in = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (tty_in) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	fputs("\033[?25l", stdout);	/* hide the cursor */
	while (!top_stop) {
		struct pollfd pfd = { STDIN_FILENO, POLLIN, 0 };
		struct buf b;
		char c;

		buf_init(&b, 0);
		rc = frame(cfg, &b, 0);
		if (rc == 0) {
			/* Home, the frame with each line's rest cleared,
			 * then everything below it cleared. */
			fputs("\033[H", stdout);
			for (char *p = b.data, *nl; p != NULL && *p != '\0';
			    p = nl + 1) {
				nl = strchr(p, '\n');
				fwrite(p, 1, (size_t)(nl - p), stdout);
				fputs("\033[K\r\n", stdout);
			}
			fputs("\033[J", stdout);
			fflush(stdout);
		}
		buf_fini(&b);
		if (rc != 0)
			break;
		if (poll(&pfd, tty_in ? 1 : 0, (int)interval) > 0 &&
		    read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
			break;
	}
	fputs("\033[?25h", stdout);
	fflush(stdout);
	if (tty_in)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return rc;
}
