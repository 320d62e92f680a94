/*
 * api_ops — the unsigned endpoints for operators: GET /health (the nodes
 * with a fresh heartbeat, how many of them drain, and the leader, from
 * state/heartbeat.<node>)
 * and GET /metrics (the nodes' metrics/<node>.prom files merged into one
 * Prometheus exposition, a stale node's gauges left out).
 *
 * Invariants: read-only; a node file that is not valid exposition text
 * is left out (logged), never served or allowed to break the others.
 * api_metrics() is about 100 lines: reading the files and merging them
 * share the arrays it holds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_impl.h"
#include "core/freshness.h"
#include "core/promtext.h"
#include "core/tstime.h"
#include "core/version.h"
#include "spool/clock.h"
#include "spool/metrics.h"

#define API_METRICS_MAX	(16 << 20)

/* --- GET /health, GET /metrics (unsigned) ---------------------------- */

void
api_heartbeat_flags(const char *data, int *leader, int *draining)
{
	*leader = data != NULL && strstr(data, "\nleader=1\n") != NULL;
	/* coord_file.c writes draining=0, or 1 while a drain marker names
	 * the node (README.md "Draining a node"). */
	*draining = data != NULL && strstr(data, "\ndraining=") != NULL &&
	    strstr(data, "\ndraining=0\n") == NULL;
}

int
api_health(struct api_ctx *c, struct buf *out)
{
	DIR *d = spool_opendir(c->sp.dir[SPOOL_STATE]);
	struct dirent *de;
	int nodes = 0, draining = 0;
	char leader[65] = "";
	int64_t now_ms = tstime_now_ms();
	json_t *o;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct stat st;
		int64_t m;
		char *data;
		int is_leader, is_draining;

		if (strncmp(de->d_name, "heartbeat.", 10) != 0 ||
		    fstatat(c->sp.dir[SPOOL_STATE], de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		m = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec /
		    1000000;
		if (now_ms - m > 3 * c->rq->cfg->heartbeat_ms)
			continue;
		nodes++;
		data = spool_read_text(c->sp.dir[SPOOL_STATE], de->d_name,
		    4096, NULL, NULL, 0);
		api_heartbeat_flags(data, &is_leader, &is_draining);
		if (is_leader)
			snprintf(leader, sizeof(leader), "%s",
			    de->d_name + 10);
		draining += is_draining;
		free(data);
	}
	if (d != NULL)
		closedir(d);
	if (nodes == 0)
		return api_problem(c, out, 503, "SERVICE_UNAVAILABLE", NULL,
		    "no node has a fresh heartbeat");
	/* Every live node drained: submissions are still taken (they
	 * wait), but nothing runs until one resumes — "drained", still 200
	 * (a load balancer in front of the API keeps sending). */
	o = json_object();
	json_object_set_new(o, "status", json_string(draining < nodes ? "ok" :
	    "drained"));
	json_object_set_new(o, "nodes", json_integer(nodes));
	json_object_set_new(o, "draining", json_integer(draining));
	json_object_set_new(o, "leader", leader[0] != '\0' ?
	    json_string(leader) : json_null());
	/* The release of the API program answering (taskspool.cgi
	 * --version). */
	json_object_set_new(o, "version", json_string(TASKSPOOL_VERSION));
	return api_respond_json(c, out, 200, o);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * One node's file as GET /metrics serves it (appended to view): as
 * written while it is fresh; when it is stale (freshness.h: older than 3
 * of its own taskspool_metrics_interval_seconds, else of this
 * configuration's metrics_interval_ms) its gauges are dropped — a dead
 * daemon's last taskspool_leader 1, busy slots, queue depth and view of
 * the heartbeats are not the present — but its counters and histograms
 * (true totals still) and its own taskspool_metrics_* gauges stay, so
 * that Prometheus can alert on the written-at time.  Then the marker
 * taskspool_metrics_stale{node} 0 or 1, for a file named <node>.prom.
 */
static int
metrics_view(struct api_ctx *c, const char *name, const char *text, size_t len,
    int64_t mtime_ms, int64_t newest_ms, int64_t now_ms, struct buf *view)
{
	struct freshness f = { -1, mtime_ms,
		3 * (int64_t)c->rq->cfg->metrics_interval_ms };
	char node[80];
	double v;
	int stale, rc;

	if (promtext_value(text, len, METRICS_WRITTEN, &v) == 0 && v > 0 &&
	    v < 1e13)
		f.written_ms = (int64_t)(v * 1000.0);
	if (promtext_value(text, len, METRICS_INTERVAL, &v) == 0 && v > 0 &&
	    v <= 3600)
		f.limit_ms = 3 * (int64_t)(v * 1000.0);
	stale = freshness_stale(&f, newest_ms, now_ms);
	rc = stale ? promtext_drop_type(text, len, "gauge",
	    METRICS_SELF_PREFIX, view) : buf_append(view, text, len);
	if (rc == 0 && len > 0 && text[len - 1] != '\n')
		rc = buf_puts(view, "\n");
	snprintf(node, sizeof(node), "%s", name);
	node[strlen(node) - 5] = '\0';		/* ".prom" */
	if (rc == 0 && spool_code_ok(node))
		rc = buf_printf(view, "# HELP taskspool_metrics_stale 1 when "
		    "this node's file is older than 3 rewrite intervals (its "
		    "daemon is dead or frozen): its gauges are left out.\n"
		    "# TYPE taskspool_metrics_stale gauge\n"
		    "taskspool_metrics_stale{node=\"%s\"} %d\n", node, stale);
	return rc;
}

int
api_metrics(struct api_ctx *c, struct buf *out)
{
	DIR *d = spool_opendir(c->sp.dir[SPOOL_METRICS]);
	int dfd = c->sp.dir[SPOOL_METRICS];
	struct dirent *de;
	char **names = NULL, **texts;
	size_t n = 0, nt = 0, *lens;
	int64_t *mtimes, newest = -1, now_ms = tstime_now_ms();
	struct buf b, *views;
	static char empty[1];
	int rc;

	buf_init(&b, API_METRICS_MAX);
	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5,
		    ".prom") != 0)
			continue;
		if ((nn = reallocarray(names, n + 1, sizeof(*nn))) == NULL)
			break;
		names = nn;
		if ((names[n] = strdup(de->d_name)) != NULL)
			n++;
	}
	if (d != NULL)
		closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), name_cmp);
	texts = calloc(n + 1, sizeof(*texts));
	lens = calloc(n + 1, sizeof(*lens));
	mtimes = calloc(n + 1, sizeof(*mtimes));
	views = calloc(n + 1, sizeof(*views));
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char why[256] = "";
		int gone;

		if (texts == NULL || lens == NULL || mtimes == NULL ||
		    views == NULL) {
			free(names[i]);
			continue;
		}
		/* A text file: a NUL or control byte in it, a byte that is
		 * not UTF-8 or a line outside the exposition grammar (a
		 * broken writer) leaves that node out, so the others'
		 * samples stay readable. */
		texts[nt] = spool_read_text(dfd, names[i], API_METRICS_MAX,
		    &lens[nt], why, sizeof(why));
		gone = texts[nt] == NULL && errno == ENOENT;
		if (texts[nt] == NULL && why[0] == '\0')
			snprintf(why, sizeof(why), "%s", strerror(errno));
		if (texts[nt] != NULL && promtext_check(texts[nt], lens[nt],
		    why, sizeof(why)) != 0) {
			free(texts[nt]);
			texts[nt] = NULL;
		}
		if (texts[nt] == NULL) {
			if (!gone)
				fprintf(stderr, "taskspool.cgi: trace %s: "
				    "metrics/%s left out: %s\n", c->trace,
				    names[i], why);
			free(names[i]);
			continue;
		}
		/* Read, then stat: a file replaced in between has a newer
		 * mtime than its text, which errs towards fresh for one
		 * scrape only. */
		mtimes[nt] = fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW)
		    == 0 ? (int64_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000 : 0;
		if (mtimes[nt] > newest)
			newest = mtimes[nt];
		names[nt] = names[i];
		nt++;
	}
	for (size_t i = 0; i < nt; i++) {
		buf_init(&views[i], API_METRICS_MAX);
		(void)metrics_view(c, names[i], texts[i], lens[i], mtimes[i],
		    newest, now_ms, &views[i]);
		free(texts[i]);
		free(names[i]);
		texts[i] = views[i].data != NULL ? views[i].data : empty;
		lens[i] = views[i].len;
	}
	free(names);
	/* one HELP/TYPE per family across the nodes' files */
	if (texts != NULL && lens != NULL)
		promtext_merge((const char *const *)texts, lens, nt, &b);
	for (size_t i = 0; i < nt; i++)
		buf_fini(&views[i]);
	free(views);
	free(texts);
	free(lens);
	free(mtimes);
	rc = api_respond(c, out, 200, "text/plain; version=0.0.4; "
	    "charset=utf-8", b.data != NULL ? b.data : "", b.len);
	buf_fini(&b);
	return rc;
}
