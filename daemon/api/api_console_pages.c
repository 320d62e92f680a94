/*
 * api_console_pages.c — the web console's pages (overview, tasks, a
 * task, jobs) and its actions (cancel, retry, hold, release; run,
 * enable, disable a job), for the session api_console.c checked.
 *
 * Invariants: a task or job is shown, and acted on, only when its
 * taskCode is granted to the session's app (apps.conf; "*" sees all);
 * one it may not see is answered as none (404).  The overview's counts
 * are the spool's, whole.  Actions need the role "operate" and go
 * through the mechanisms the CLI uses (the cancel marker,
 * coord/retry.h, coord/hold.h, coord/jobstore.h); each answers 303 back
 * to the page it came from (post/redirect/get).  Every value read from
 * the spool is written through html_text().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api_impl.h"
#include "coord/hold.h"
#include "coord/jobstore.h"
#include "coord/retry.h"
#include "core/job.h"
#include "core/jsontext.h"
#include "core/task.h"
#include "core/tstime.h"
#include "core/tz.h"
#include "spool/clock.h"

#define PAGE_SIZE	50		/* tasks per page */
#define SCAN_MAX	200000		/* entries a task list looks at */
#define TAIL_BYTES	8192		/* of each output stream shown */

static int64_t
mtime_ms(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec /
	    1000000;
}

/* An instant as RFC 3339 UTC text, "-" when ms < 0, escaped into b. */
static void
put_time(struct buf *b, int64_t ms)
{
	char t[TSTIME_BUF];

	if (ms < 0)
		buf_puts(b, "-");
	else
		html_text(b, tstime_format_ms(t, sizeof(t), ms));
}

static void
csrf_field(struct buf *b, const struct console_session *s)
{
	buf_puts(b, "<input type=\"hidden\" name=\"csrf\" value=\"");
	html_text(b, s->csrf);
	buf_puts(b, "\">");
}

/* A POST button to action (our own path; the id escaped). */
static void
button(struct buf *b, const struct console_session *s, const char *kind,
    const char *id, const char *action, const char *label, int danger)
{
	buf_puts(b, "<form class=\"inline\" method=\"post\" "
	    "action=\"/console/");
	buf_puts(b, kind);
	buf_puts(b, "/");
	html_text(b, id);
	buf_puts(b, "/");
	buf_puts(b, action);
	buf_puts(b, "\">");
	csrf_field(b, s);
	html_raw(b, "<button type=\"submit\"%s>%s</button></form> ",
	    danger ? " class=\"danger\"" : "", label);
}

/* --- overview -------------------------------------------------------- */

/* Entries of dirfd (not "."-names); with oldest and since, the oldest
 * mtime and how many are newer than since (ms).  Recursing one level for
 * queue/ and active/ when sub. */
static long
count_dir(int dirfd, int sub, int64_t *oldest, int64_t since, long *newer,
    long *per_min, int64_t now)
{
	DIR *d = spool_opendir(dirfd);
	struct dirent *de;
	long n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (sub) {
			int fd = openat(dirfd, de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd >= 0) {
				n += count_dir(fd, 0, oldest, since, newer,
				    per_min, now);
				(void)close(fd);
			}
			continue;
		}
		n++;
		if ((oldest == NULL && newer == NULL) || fstatat(dirfd,
		    de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (oldest != NULL && (*oldest < 0 || mtime_ms(&st) < *oldest))
			*oldest = mtime_ms(&st);
		if (newer != NULL && mtime_ms(&st) > since) {
			int64_t age = now - mtime_ms(&st);

			(*newer)++;
			/* A file from a node whose clock runs ahead (or an
			 * NFS server's stamp) is in the future: it counts in
			 * the last minute, never outside per_min. */
			if (age < 0)
				age = 0;
			if (per_min != NULL && age < 3600000)
				per_min[59 - age / 60000]++;
		}
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* The nodes' heartbeats (state/heartbeat.<node>) as table rows. */
static void
nodes_table(struct api_ctx *c, struct buf *b)
{
	DIR *d = spool_opendir(c->sp.dir[SPOOL_STATE]);
	struct dirent *de;
	int64_t now = tstime_now_ms();
	int rows = 0;

	buf_puts(b, "<h2>Nodes</h2><table><thead><tr><th scope=\"col\">"
	    "Node</th><th scope=\"col\">State</th><th scope=\"col\">Leader"
	    "</th><th scope=\"col\">Draining</th><th scope=\"col\">Last "
	    "heartbeat</th></tr></thead><tbody>");
	while (d != NULL && (de = readdir(d)) != NULL) {
		struct stat st;
		char *data;
		int fresh, leader, draining;

		if (strncmp(de->d_name, "heartbeat.", 10) != 0 ||
		    fstatat(c->sp.dir[SPOOL_STATE], de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		fresh = now - mtime_ms(&st) <= 3 * c->rq->cfg->heartbeat_ms;
		data = spool_read_text(c->sp.dir[SPOOL_STATE], de->d_name,
		    4096, NULL, NULL, 0);
		api_heartbeat_flags(data, &leader, &draining);
		buf_puts(b, "<tr><td>");
		html_text(b, de->d_name + 10);
		html_raw(b, "</td><td>%s</td><td>%s</td><td>%s</td><td>",
		    fresh ? "live" : "stale", leader ? "yes" : "no",
		    draining ? "yes" : "no");
		put_time(b, mtime_ms(&st));
		buf_puts(b, "</td></tr>");
		free(data);
		rows++;
	}
	if (d != NULL)
		closedir(d);
	if (rows == 0)
		buf_puts(b, "<tr><td colspan=\"5\">No node has written a "
		    "heartbeat.</td></tr>");
	buf_puts(b, "</tbody></table>");
}

/* The finished tasks per minute of the last hour as an inline SVG. */
static void
sparkline(struct buf *b, const long *per_min)
{
	long max = 1;

	for (int i = 0; i < 60; i++)
		if (per_min[i] > max)
			max = per_min[i];
	html_raw(b, "<h2>Throughput</h2><p>Tasks finished per minute, last "
	    "hour (peak %ld):</p><svg class=\"spark\" viewBox=\"0 0 59 20\" "
	    "preserveAspectRatio=\"none\" role=\"img\" aria-label=\"Tasks "
	    "finished per minute over the last hour, peak %ld\"><polyline "
	    "points=\"", max, max);
	for (int i = 0; i < 60; i++)
		html_raw(b, "%d,%.2f ", i, 19.5 - 19.0 * (double)per_min[i] /
		    (double)max);
	buf_puts(b, "\"/></svg>");
}

static int
overview(struct api_ctx *c, struct buf *out, const struct console_session *s)
{
	static const struct { enum spool_dir d; const char *name; int sub; }
	    dirs[] = {
		{ SPOOL_INCOMING, "pending (incoming)", 0 },
		{ SPOOL_DELAYED, "delayed", 0 },
		{ SPOOL_QUEUE, "dispatched (queue)", 1 },
		{ SPOOL_ACTIVE, "running", 1 },
		{ SPOOL_BLOCKED, "blocked", 0 },
		{ SPOOL_HOLD, "held", 0 },
		{ SPOOL_DONE, "succeeded", 0 },
		{ SPOOL_FAILED, "failed", 0 },
		{ SPOOL_CANCELLED, "cancelled", 0 },
		{ SPOOL_CORRUPT, "corrupt", 0 },
	};
	int64_t now = tstime_now_ms(), oldest = -1;
	long per_min[60] = { 0 }, failed_hour = 0, done_hour = 0;
	struct buf b;
	int st;

	buf_init(&b, 0);
	html_head(&b, "Overview", s->app_id, apps_role_name(s->role),
	    s->csrf);
	buf_puts(&b, "<h1>Overview</h1>");
	nodes_table(c, &b);
	buf_puts(&b, "<h2>Queues</h2><table><thead><tr><th scope=\"col\">"
	    "State</th><th scope=\"col\">Tasks</th></tr></thead><tbody>");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		long n = 0;
		int fd = c->sp.dir[dirs[i].d];

		if (fd >= 0)
			n = count_dir(fd, dirs[i].sub, dirs[i].d ==
			    SPOOL_INCOMING ? &oldest : NULL, now - 3600000,
			    dirs[i].d == SPOOL_FAILED ? &failed_hour :
			    dirs[i].d == SPOOL_DONE ? &done_hour : NULL,
			    dirs[i].d == SPOOL_FAILED || dirs[i].d ==
			    SPOOL_DONE ? per_min : NULL, now);
		html_raw(&b, "<tr><td>%s</td><td>%ld</td></tr>",
		    dirs[i].name, n);
	}
	buf_puts(&b, "</tbody></table>");
	html_raw(&b, "<p>Lag (oldest pending task waiting): %s%.1f s. "
	    "Failures in the last hour: %ld; successes: %ld.</p>",
	    oldest < 0 ? "none, " : "", oldest < 0 ? 0.0 :
	    (double)(now - oldest) / 1000.0, failed_hour, done_hour);
	sparkline(&b, per_min);
	html_foot(&b);
	st = console_page(c, out, 200, &b);
	buf_fini(&b);
	return st;
}

/* --- tasks ----------------------------------------------------------- */

struct entry {
	char name[SPOOL_NAME_MAX];
	char node[65];
	enum spool_dir dir;
	int64_t mtime;
};

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime > y->mtime ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Read and decode the task file of e into t (initialised).  0 or -1. */
static int
entry_task(struct api_ctx *c, const struct entry *e, struct task *t)
{
	struct task_error err;
	size_t len;
	char *data;
	int fd = c->sp.dir[e->dir], own = -1, rc;

	if (e->node[0] != '\0' && (fd = own = openat(fd, e->node, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	data = spool_read_file(fd, e->name, TASK_FILE_MAX, &len);
	if (own >= 0)
		(void)close(own);
	if (data == NULL)
		return -1;
	rc = task_decode(data, len, t, &err);
	free(data);
	return rc;
}

static void
add_entries(struct api_ctx *c, int fd, enum spool_dir dir, const char *node,
    struct entry **v, size_t *n, size_t *cap)
{
	DIR *d = spool_opendir(fd);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL && *n < SCAN_MAX) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' || len <= 5 || len >=
		    SPOOL_NAME_MAX || strcmp(de->d_name + len - 5, ".json") !=
		    0 || fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (*n == *cap) {
			struct entry *nv = reallocarray(*v, *cap ? *cap * 2 :
			    256, sizeof(**v));

			if (nv == NULL)
				break;
			*v = nv;
			*cap = *cap ? *cap * 2 : 256;
		}
		memcpy((*v)[*n].name, de->d_name, len + 1);
		snprintf((*v)[*n].node, sizeof((*v)[*n].node), "%s", node);
		(*v)[*n].dir = dir;
		(*v)[*n].mtime = mtime_ms(&st);
		(*n)++;
	}
	if (d != NULL)
		closedir(d);
}

/* The states of the filter, with their directories. */
static const struct {
	const char *name;
	enum spool_dir dirs[3];
	int ndirs;
} states[] = {
	{ "pending", { SPOOL_INCOMING, SPOOL_DELAYED, SPOOL_QUEUE }, 3 },
	{ "running", { SPOOL_ACTIVE }, 1 },
	{ "blocked", { SPOOL_BLOCKED }, 1 },
	{ "held", { SPOOL_HOLD }, 1 },
	{ "succeeded", { SPOOL_DONE }, 1 },
	{ "failed", { SPOOL_FAILED }, 1 },
	{ "cancelled", { SPOOL_CANCELLED }, 1 },
};

static void
gather(struct api_ctx *c, int si, struct entry **v, size_t *n)
{
	size_t cap = 0;

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		if (si >= 0 && (size_t)si != i)
			continue;
		for (int k = 0; k < states[i].ndirs; k++) {
			enum spool_dir d = states[i].dirs[k];
			int fd = c->sp.dir[d];

			if (fd < 0)
				continue;
			if (d == SPOOL_QUEUE || d == SPOOL_ACTIVE) {
				DIR *dp = spool_opendir(fd);
				struct dirent *de;

				while (dp != NULL && (de = readdir(dp)) !=
				    NULL) {
					int sub;

					if (de->d_name[0] == '.' ||
					    strlen(de->d_name) > 64)
						continue;
					sub = openat(fd, de->d_name, O_RDONLY |
					    O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC);
					if (sub < 0)
						continue;
					add_entries(c, sub, d, de->d_name, v, n,
					    &cap);
					(void)close(sub);
				}
				if (dp != NULL)
					closedir(dp);
			} else
				add_entries(c, fd, d, "", v, n, &cap);
		}
	}
	if (*n > 0)
		qsort(*v, *n, sizeof(**v), entry_cmp);
}

static void
filter_form(struct buf *b, const char *state, const char *code,
    const char *app)
{
	buf_puts(b, "<form class=\"filters\" method=\"get\" "
	    "action=\"/console/tasks\"><div><label for=\"f-state\">State"
	    "</label><select id=\"f-state\" name=\"state\">"
	    "<option value=\"\">all</option>");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		html_raw(b, "<option%s>%s</option>", strcmp(state,
		    states[i].name) == 0 ? " selected" : "", states[i].name);
	buf_puts(b, "</select></div><div><label for=\"f-code\">Task code"
	    "</label><input id=\"f-code\" name=\"code\" value=\"");
	html_text(b, code);
	buf_puts(b, "\"></div><div><label for=\"f-app\">AppId</label>"
	    "<input id=\"f-app\" name=\"app\" value=\"");
	html_text(b, app);
	buf_puts(b, "\"></div><div><button type=\"submit\">Filter</button>"
	    "</div></form>");
}

/* s percent-encoded (RFC 3986 §2.1: all but unreserved characters). */
static void
query_enc(struct buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0';
	    p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL)
			buf_append(b, (const char *)p, 1);
		else
			buf_printf(b, "%%%02X", *p);
	}
}

static int
tasks_page(struct api_ctx *c, struct buf *out,
    const struct console_session *s)
{
	const char *q = api_env(c, "QUERY_STRING");
	char state[32] = "", code[TASK_CODE_MAX + 1] = "";
	char app[APPS_ID_MAX + 1] = "", page[16] = "";
	struct entry *v = NULL;
	size_t n = 0, qn = q != NULL ? strlen(q) : 0;
	long pg = 0, skip, shown = 0;
	int si = -1, st, more = 0;
	struct buf b;

	if (q != NULL && ((console_field(q, qn, "state", state,
	    sizeof(state)) > 0) || console_field(q, qn, "code", code,
	    sizeof(code)) > 0 || console_field(q, qn, "app", app,
	    sizeof(app)) > 0 || console_field(q, qn, "page", page,
	    sizeof(page)) > 0))
		return console_message(c, out, 400, s, "Bad filter", "A "
		    "filter value is too long or badly encoded.");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(state, states[i].name) == 0)
			si = (int)i;
	if (state[0] != '\0' && si < 0)
		return console_message(c, out, 400, s, "Bad filter", "state "
		    "is one of pending, running, blocked, held, succeeded, "
		    "failed, cancelled.");
	if (page[0] != '\0' && (strspn(page, "0123456789") !=
	    strlen(page) || strlen(page) > 6))
		return console_message(c, out, 400, s, "Bad filter", "page "
		    "is a whole number.");
	pg = page[0] != '\0' ? strtol(page, NULL, 10) : 0;
	gather(c, si, &v, &n);
	buf_init(&b, 0);
	html_head(&b, "Tasks", s->app_id, apps_role_name(s->role),
	    s->csrf);
	buf_puts(&b, "<h1>Tasks</h1>");
	filter_form(&b, state, code, app);
	buf_puts(&b, "<table><thead><tr><th scope=\"col\">requestId</th>"
	    "<th scope=\"col\">Task code</th><th scope=\"col\">Name</th>"
	    "<th scope=\"col\">State</th><th scope=\"col\">AppId</th>"
	    "<th scope=\"col\">Created</th></tr></thead><tbody>");
	skip = pg * PAGE_SIZE;
	for (size_t i = 0; i < n; i++) {
		struct task t;
		char id[TASK_ID_MAX + 1];

		task_init(&t);
		if (entry_task(c, &v[i], &t) != 0 ||
		    !apps_code_allowed(&s->app, t.task_code) ||
		    (code[0] != '\0' && strcmp(code, t.task_code) != 0) ||
		    (app[0] != '\0' && (t.app_id == NULL ||
		    strcmp(app, t.app_id) != 0))) {
			task_fini(&t);
			continue;
		}
		if (skip > 0) {
			skip--;
			task_fini(&t);
			continue;
		}
		if (shown == PAGE_SIZE) {
			more = 1;
			task_fini(&t);
			break;
		}
		snprintf(id, sizeof(id), "%.*s", (int)(strlen(v[i].name) - 5),
		    v[i].name);
		buf_puts(&b, "<tr><td><a href=\"/console/tasks/");
		html_text(&b, id);
		buf_puts(&b, "\">");
		html_text(&b, id);
		buf_puts(&b, "</a></td><td>");
		html_text(&b, t.task_code);
		buf_puts(&b, "</td><td>");
		html_text(&b, t.task_name);
		html_raw(&b, "</td><td class=\"s-%s\">%s</td><td>",
		    spool_state_name(v[i].dir), spool_state_name(v[i].dir));
		html_text(&b, t.app_id != NULL ? t.app_id : "-");
		buf_puts(&b, "</td><td>");
		put_time(&b, t.created_ms >= 0 ? t.created_ms : v[i].mtime);
		buf_puts(&b, "</td></tr>");
		shown++;
		task_fini(&t);
	}
	if (shown == 0)
		buf_puts(&b, "<tr><td colspan=\"6\">No task matches."
		    "</td></tr>");
	buf_puts(&b, "</tbody></table><p>");
	if (n >= SCAN_MAX)
		html_raw(&b, "<strong>Only %d task files were looked at: the "
		    "list may miss tasks. Filter by state to see the rest."
		    "</strong> ", SCAN_MAX);
	if (pg > 0 || more) {
		struct buf qs;

		/* The filters go on with the page (percent-encoded, so the
		 * href holds no HTML metacharacter). */
		buf_init(&qs, 0);
		buf_puts(&qs, "state=");
		query_enc(&qs, state);
		buf_puts(&qs, "&amp;code=");
		query_enc(&qs, code);
		buf_puts(&qs, "&amp;app=");
		query_enc(&qs, app);
		if (pg > 0)
			html_raw(&b, "<a href=\"/console/tasks?%s&amp;page=%ld"
			    "\">Newer</a> ", qs.data, pg - 1);
		if (more)
			html_raw(&b, "<a href=\"/console/tasks?%s&amp;page=%ld"
			    "\">Older</a>", qs.data, pg + 1);
		buf_fini(&qs);
	}
	buf_puts(&b, "</p>");
	html_foot(&b);
	free(v);
	st = console_page(c, out, 200, &b);
	buf_fini(&b);
	return st;
}

/* The last TAIL_BYTES of logs/<id>/<attempt>.<ext> as a <pre>. */
static void
log_tail(struct api_ctx *c, struct buf *b, const char *id, int attempt,
    const char *ext, const char *label)
{
	char name[SPOOL_NAME_MAX + 32], why[256], tail[TAIL_BYTES];
	struct stat st;
	int dfd, fd;
	ssize_t r = 0;

	html_raw(b, "<h3>%s</h3>", label);
	snprintf(name, sizeof(name), "%d.%s", attempt, ext);
	dfd = openat(c->sp.dir[SPOOL_LOGS], id, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	fd = dfd >= 0 ? spool_open_safe(dfd, name, (size_t)1 << 40, &st, why,
	    sizeof(why)) : -1;
	if (fd >= 0) {
		off_t at = st.st_size > TAIL_BYTES ? st.st_size - TAIL_BYTES :
		    0;

		r = pread(fd, tail, sizeof(tail), at);
		(void)close(fd);
	}
	if (dfd >= 0)
		(void)close(dfd);
	buf_puts(b, "<pre>");
	if (r > 0)
		html_text_n(b, tail, (size_t)r);
	else
		buf_puts(b, "(nothing)");
	buf_puts(b, "</pre>");
}

/* Read task id's file from where (node for queue/, active/) into t. */
static int
read_task(struct api_ctx *c, const char *id, enum spool_dir where,
    const char *node, struct task *t)
{
	struct entry e;

	snprintf(e.name, sizeof(e.name), "%s.json", id);
	snprintf(e.node, sizeof(e.node), "%s", where == SPOOL_QUEUE ||
	    where == SPOOL_ACTIVE ? node : "");
	e.dir = where;
	return entry_task(c, &e, t);
}

static void
attempts_table(struct buf *b, const json_t *res, const struct task *t)
{
	const json_t *arr = json_object_get(res, "attempts"), *a;
	size_t i;

	buf_puts(b, "<h2>Attempts</h2><table><thead><tr><th scope=\"col\">#"
	    "</th><th scope=\"col\">Node</th><th scope=\"col\">Started</th>"
	    "<th scope=\"col\">Finished</th><th scope=\"col\">Exit</th>"
	    "<th scope=\"col\">Outcome</th><th scope=\"col\">Reason</th>"
	    "</tr></thead><tbody>");
	if (json_is_array(arr) && json_array_size(arr) > 0) {
		json_array_foreach(arr, i, a) {
			const char *k[] = { "attempt", "node", "startedAt",
			    "finishedAt", "exitCode", "outcome", "reason" };

			buf_puts(b, "<tr>");
			for (size_t j = 0; j < 7; j++) {
				const json_t *v = json_object_get(a, k[j]);

				buf_puts(b, "<td>");
				if (json_is_string(v))
					html_text(b, json_string_value(v));
				else if (json_is_integer(v))
					html_raw(b, "%lld", (long long)
					    json_integer_value(v));
				else
					buf_puts(b, "-");
				buf_puts(b, "</td>");
			}
			buf_puts(b, "</tr>");
		}
	} else {
		for (i = 0; i < t->nattempts; i++) {
			const struct task_attempt *x = &t->attempts[i];

			html_raw(b, "<tr><td>%d</td><td>", x->attempt);
			html_text(b, x->node);
			buf_puts(b, "</td><td>");
			put_time(b, x->start_ms);
			buf_puts(b, "</td><td>");
			put_time(b, x->end_ms);
			html_raw(b, "</td><td>%d</td><td>-</td><td>",
			    x->exit_code);
			html_text(b, x->reason);
			buf_puts(b, "</td></tr>");
		}
		if (t->nattempts == 0)
			buf_puts(b, "<tr><td colspan=\"7\">None finished yet."
			    "</td></tr>");
	}
	buf_puts(b, "</tbody></table>");
}

static int
task_page(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *id)
{
	char node[65] = "", name[SPOOL_NAME_MAX];
	enum spool_dir where;
	json_t *res = NULL;
	struct task t;
	struct buf b;
	size_t len;
	char *data;
	int st, running, attempt;

	task_init(&t);
	if (spool_locate(&c->sp, id, &where, node) != 0 ||
	    read_task(c, id, where, node, &t) != 0 ||
	    !apps_code_allowed(&s->app, t.task_code)) {
		task_fini(&t);
		return console_message(c, out, 404, s, "No such task", "No "
		    "task of a task code granted to you has this requestId.");
	}
	snprintf(name, sizeof(name), "%s.json", id);
	if ((data = spool_read_file(c->sp.dir[SPOOL_RESULTS], name,
	    TASK_FILE_MAX * 2, &len)) != NULL) {
		res = jsontext_loadb(data, len, 0, NULL);
		free(data);
	}
	running = where == SPOOL_ACTIVE;
	attempt = (int)t.nattempts + (running ? 1 : 0);
	if (attempt < 1)
		attempt = 1;
	if (json_is_integer(json_object_get(res, "attempt")))
		attempt = (int)json_integer_value(json_object_get(res,
		    "attempt"));
	buf_init(&b, 0);
	html_head(&b, id, s->app_id, apps_role_name(s->role),
	    s->csrf);
	buf_puts(&b, "<h1>Task ");
	html_text(&b, id);
	buf_puts(&b, "</h1><table><tbody><tr><th scope=\"row\">State</th>");
	html_raw(&b, "<td class=\"s-%s\">%s%s</td></tr>",
	    spool_state_name(where), spool_state_name(where), running ?
	    " (this page reloads every 2 s)" : "");
	buf_puts(&b, "<tr><th scope=\"row\">Task code</th><td>");
	html_text(&b, t.task_code);
	buf_puts(&b, "</td></tr><tr><th scope=\"row\">Name</th><td>");
	html_text(&b, t.task_name);
	buf_puts(&b, "</td></tr><tr><th scope=\"row\">AppId</th><td>");
	html_text(&b, t.app_id != NULL ? t.app_id : "-");
	buf_puts(&b, "</td></tr><tr><th scope=\"row\">Node</th><td>");
	/* Where it is (queue/, active/), else where it ran last. */
	if (node[0] == '\0' && json_is_string(json_object_get(res, "node")))
		snprintf(node, sizeof(node), "%s", json_string_value(
		    json_object_get(res, "node")));
	html_text(&b, node[0] != '\0' ? node : "-");
	buf_puts(&b, "</td></tr><tr><th scope=\"row\">Created</th><td>");
	put_time(&b, t.created_ms);
	if (json_is_integer(json_object_get(res, "fencingToken")))
		html_raw(&b, "</td></tr><tr><th scope=\"row\">Fencing token"
		    "</th><td>%lld", (long long)json_integer_value(
		    json_object_get(res, "fencingToken")));
	buf_puts(&b, "</td></tr></tbody></table>");
	if (s->role == APPS_ROLE_OPERATE) {
		buf_puts(&b, "<p>");
		if (!api_terminal(spool_state_name(where)))
			button(&b, s, "tasks", id, "cancel", "Cancel", 1);
		if (where == SPOOL_FAILED || where == SPOOL_CANCELLED)
			button(&b, s, "tasks", id, "retry", "Retry", 0);
		if (where == SPOOL_INCOMING || where == SPOOL_DELAYED ||
		    where == SPOOL_QUEUE)
			button(&b, s, "tasks", id, "hold", "Hold", 0);
		if (where == SPOOL_HOLD)
			button(&b, s, "tasks", id, "release", "Release", 0);
		buf_puts(&b, "</p>");
	}
	buf_puts(&b, "<h2>Parameters</h2><pre>");
	html_text_n(&b, t.params != NULL ? t.params : "", t.params != NULL ?
	    t.params_len : 0);
	buf_puts(&b, "</pre>");
	attempts_table(&b, res, &t);
	if (res != NULL) {
		char *r = json_dumps(json_object_get(res, "result"),
		    JSON_INDENT(2) | JSON_ENCODE_ANY);

		buf_puts(&b, "<h2>Result</h2><pre>");
		html_text(&b, r != NULL ? r : "null");
		buf_puts(&b, "</pre>");
		free(r);
	}
	html_raw(&b, "<h2>Output of attempt %d</h2>", attempt);
	log_tail(c, &b, id, attempt, "out", "stdout");
	log_tail(c, &b, id, attempt, "err", "stderr");
	html_foot(&b);
	if (running)
		buf_puts(&c->hdr, "Refresh: 2\r\n");
	json_decref(res);
	task_fini(&t);
	st = console_page(c, out, 200, &b);
	buf_fini(&b);
	return st;
}

/* --- jobs ------------------------------------------------------------ */

static void
job_row(struct api_ctx *c, struct buf *b, const struct console_session *s,
    const struct job *j)
{
	char last[TASK_ID_MAX + 1] = "", zone[TZ_NAME_MAX + 1];
	json_t *fires = api_job_fires(j, 5, zone, sizeof(zone)), *f;
	size_t i;

	buf_puts(b, "<tr><td>");
	html_text(b, j->code);
	buf_puts(b, "</td><td>");
	html_text(b, j->task_code);
	buf_puts(b, "</td><td>");
	if (j->kind == JOB_KIND_CRON)
		html_text(b, j->cron_text);
	else
		html_raw(b, "%s %lld ms", job_kind_member(j->kind),
		    (long long)j->interval_ms);
	buf_puts(b, "</td><td>");
	html_text(b, zone[0] != '\0' ? zone : "?");
	html_raw(b, "</td><td>%s</td><td>%s</td><td>%s</td><td>",
	    j->enabled ? "enabled" : "disabled",
	    job_misfire_name(j->misfire), job_overlap_name(j->overlap));
	json_array_foreach(fires, i, f) {
		html_text(b, json_string_value(json_object_get(f, "local")));
		buf_puts(b, " (");
		html_text(b, json_string_value(json_object_get(f, "utc")));
		buf_puts(b, ")<br>");
	}
	json_decref(fires);
	buf_puts(b, "</td><td>");
	(void)jobstore_last_task(&c->sp, j->code, last, sizeof(last));
	if (last[0] != '\0') {
		buf_puts(b, "<a href=\"/console/tasks/");
		html_text(b, last);
		buf_puts(b, "\">");
		html_text(b, last);
		buf_puts(b, "</a>");
	} else
		buf_puts(b, "-");
	buf_puts(b, "</td>");
	if (s->role == APPS_ROLE_OPERATE) {
		buf_puts(b, "<td>");
		button(b, s, "jobs", j->code, "run", "Run now", 0);
		button(b, s, "jobs", j->code, j->enabled ? "disable" : "enable",
		    j->enabled ? "Disable" : "Enable", 0);
		buf_puts(b, "</td>");
	}
	buf_puts(b, "</tr>");
}

static int
jobs_page(struct api_ctx *c, struct buf *out,
    const struct console_session *s)
{
	char **names = NULL;
	ssize_t n = jobstore_names(&c->sp, &names, NULL);
	struct buf b;
	int st, rows = 0;

	buf_init(&b, 0);
	html_head(&b, "Jobs", s->app_id, apps_role_name(s->role),
	    s->csrf);
	buf_puts(&b, "<h1>Recurring jobs</h1><table><thead><tr>"
	    "<th scope=\"col\">Job</th><th scope=\"col\">Task code</th>"
	    "<th scope=\"col\">Schedule</th><th scope=\"col\">Zone</th>"
	    "<th scope=\"col\">State</th><th scope=\"col\">Misfire</th>"
	    "<th scope=\"col\">Overlap</th><th scope=\"col\">Next five fires "
	    "(zone, UTC)</th><th scope=\"col\">Last fired</th>");
	if (s->role == APPS_ROLE_OPERATE)
		buf_puts(&b, "<th scope=\"col\">Actions</th>");
	buf_puts(&b, "</tr></thead><tbody>");
	for (ssize_t i = 0; i < n; i++) {
		struct job j;

		job_init(&j);
		if (jobstore_load(&c->sp, names[i], &j, NULL, 0) == 0 &&
		    apps_code_allowed(&s->app, j.task_code)) {
			job_row(c, &b, s, &j);
			rows++;
		}
		job_fini(&j);
	}
	if (rows == 0)
		buf_puts(&b, "<tr><td colspan=\"9\">No job of your task "
		    "codes.</td></tr>");
	buf_puts(&b, "</tbody></table>");
	html_foot(&b);
	if (n > 0)
		jobstore_names_free(names, (size_t)n);
	st = console_page(c, out, 200, &b);
	buf_fini(&b);
	return st;
}

/* --- routing --------------------------------------------------------- */

/* Split "/<kind>/<id>[/<action>]" after the kind's prefix pre: id into
 * idbuf (idlen), *action the rest or "".  Returns 0, or -1. */
static int
split_id(const char *p, const char *pre, char *idbuf, size_t idlen,
    const char **action)
{
	size_t n = strlen(pre), k;
	const char *slash;

	if (strncmp(p, pre, n) != 0)
		return -1;
	p += n;
	slash = strchr(p, '/');
	k = slash != NULL ? (size_t)(slash - p) : strlen(p);
	if (k == 0 || k >= idlen)
		return -1;
	memcpy(idbuf, p, k);
	idbuf[k] = '\0';
	*action = slash != NULL ? slash + 1 : "";
	return 0;
}

int
console_get(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *p)
{
	char id[TASK_ID_MAX + 1];
	const char *action;

	if (p[0] == '\0')
		return console_redirect(c, out, "/console/");
	if (strcmp(p, "/") == 0)
		return overview(c, out, s);
	if (strcmp(p, "/tasks") == 0)
		return tasks_page(c, out, s);
	if (strcmp(p, "/jobs") == 0)
		return jobs_page(c, out, s);
	if (split_id(p, "/tasks/", id, sizeof(id), &action) == 0 &&
	    action[0] == '\0' && spool_id_ok(id))
		return task_page(c, out, s, id);
	return console_message(c, out, 404, s, "Not found", "The console "
	    "has no such page.");
}

/* A guard (jobstore.h): the job replaced is of a granted code. */
static int
guard_granted(const struct job *old, int old_bad, void *arg)
{
	const struct console_session *s = arg;

	return old != NULL && !old_bad && apps_code_allowed(&s->app,
	    old->task_code) ? 0 : EPERM;
}

static int
task_action(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *id, const char *action)
{
	char node[65] = "", back[TASK_ID_MAX + 32], why[256], by[96];
	enum spool_dir where;
	struct task t;
	int ok;

	task_init(&t);
	ok = spool_locate(&c->sp, id, &where, node) == 0 &&
	    read_task(c, id, where, node, &t) == 0 &&
	    apps_code_allowed(&s->app, t.task_code);
	task_fini(&t);
	if (!ok)
		return console_message(c, out, 404, s, "No such task", "No "
		    "task of a task code granted to you has this requestId.");
	snprintf(back, sizeof(back), "/console/tasks/%s", id);
	snprintf(by, sizeof(by), "console app %s", s->app_id);
	if (strcmp(action, "cancel") == 0) {
		if (api_terminal(spool_state_name(where)))
			return console_message(c, out, 409, s, "Finished",
			    "The task has finished; there is nothing to "
			    "cancel.");
		/* `taskspool cancel`'s marker: the daemons act on it. */
		if (c->sp.cancel < 0 || spool_publish(&c->sp, c->sp.cancel,
		    id, "", 0, -1, 0) != 0)
			return console_unavailable(c, out, s, "state/cancel");
		/* Give a daemon a moment, as DELETE /api/tasks does, so the
		 * page after the redirect shows the outcome. */
		for (int i = 0; i < 100; i++) {
			if (spool_locate(&c->sp, id, &where, node) == 0 &&
			    api_terminal(spool_state_name(where)))
				break;
			usleep(20000);
		}
	} else if (strcmp(action, "retry") == 0) {
		if (task_retry(c->rq->cfg, &c->sp, id, NULL, &where, why,
		    sizeof(why)) != 0)
			return errno == EBUSY ? console_message(c, out, 409, s,
			    "Not retryable", "Only a FAILED or CANCELLED task "
			    "can be retried.") : errno == EALREADY ?
			    console_message(c, out, 409, s, "Run in progress",
			    "Another run of this task's job is pending or "
			    "running (overlap forbid or replace); retry when "
			    "it has ended.") : console_unavailable(c, out, s,
			    "retry");
	} else if (strcmp(action, "hold") == 0 || strcmp(action,
	    "release") == 0) {
		enum hold_status h = action[0] == 'h' ? hold_task(&c->sp, id,
		    by, tstime_now_ms(), &where, why, sizeof(why)) :
		    hold_release(&c->sp, id, tstime_now_ms(), &where, why,
		    sizeof(why));

		if (h == HOLD_ERR)
			return console_unavailable(c, out, s, "hold");
	} else
		return console_message(c, out, 404, s, "Not found", "No such "
		    "action.");
	return console_redirect(c, out, back);
}

static int
job_action(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *code, const char *action)
{
	char why[JOBSTORE_WHY_MAX], prev[TASK_ID_MAX + 1], warn[256];
	char node[APPS_ID_MAX + 16];
	struct job j;
	struct task t;
	int rc;

	job_init(&j);
	if (!spool_code_ok(code) || jobstore_load(&c->sp, code, &j, why,
	    sizeof(why)) != 0 || !apps_code_allowed(&s->app, j.task_code)) {
		job_fini(&j);
		return console_message(c, out, 404, s, "No such job", "No job "
		    "of a task code granted to you has this jobCode.");
	}
	if (strcmp(action, "run") == 0) {
		task_init(&t);
		snprintf(node, sizeof(node), "console:%s", s->app_id);
		rc = jobstore_run_task(&j, tstime_now_ms(), &t) != 0 ||
		    api_trace_choose(c, &t) != 0 ? -1 : jobstore_run(&c->sp,
		    &j, &t, node, prev, sizeof(prev), warn, sizeof(warn));
		task_fini(&t);
		job_fini(&j);
		if (rc != 0)
			return errno == EBUSY ? console_message(c, out, 409, s,
			    "Run in progress", "The job is overlap forbid and "
			    "its run is pending or running.") :
			    console_unavailable(c, out, s, "run job");
	} else if (strcmp(action, "enable") == 0 || strcmp(action,
	    "disable") == 0) {
		job_fini(&j);
		if (jobstore_set_enabled(&c->sp, code, action[0] == 'e',
		    guard_granted, (void *)s, &j, why, sizeof(why)) != 0)
			return console_unavailable(c, out, s, "jobs/");
		job_fini(&j);
	} else {
		job_fini(&j);
		return console_message(c, out, 404, s, "Not found", "No such "
		    "action.");
	}
	return console_redirect(c, out, "/console/jobs");
}

int
console_action(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *p, const char *body,
    size_t len)
{
	char id[TASK_ID_MAX + 1];
	const char *action;

	(void)body;
	(void)len;
	if (s->role != APPS_ROLE_OPERATE)
		return console_message(c, out, 403, s, "Read only", "Your app "
		    "may look but not act (apps.conf console=read); an "
		    "operator gives it the role with: taskspool apps console "
		    "APPID operate.");
	if (split_id(p, "/tasks/", id, sizeof(id), &action) == 0 &&
	    spool_id_ok(id))
		return task_action(c, out, s, id, action);
	if (split_id(p, "/jobs/", id, TASK_CODE_MAX + 1, &action) == 0)
		return job_action(c, out, s, id, action);
	return console_message(c, out, 404, s, "Not found", "No such "
	    "action.");
}
