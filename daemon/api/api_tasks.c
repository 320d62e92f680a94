/*
 * api_tasks — reading a caller's tasks (API.md §4.2): GET /tasks/{id},
 * DELETE /tasks/{id} (the cancel marker of `taskspool cancel`), and GET
 * /tasks, the list with its filters and keyset cursor, from the spool's
 * idempotency records or, when the `mariadb` key is set, from MariaDB
 * (records_db_list_app).
 *
 * Invariants: a caller sees only the tasks its AppId submitted (the
 * record's appId), any other id is 404; the list is ordered by createdAt
 * then requestId, both descending, and a cursor names the last item
 * shown.  Only the cancel marker is written here.  api_list() parses
 * the query into the filters that list_scan() (the records) or
 * list_from_db() (MariaDB) and list_page() then use; it stays about 85
 * lines because the parser is one loop over the parameters.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_impl.h"
#include "records/records_mariadb.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "records/records.h"

#define API_LIST_MAX	500
#define API_LIST_DEFAULT 50

/* --- GET/DELETE /tasks/{id} ----------------------------------------- */

int
api_task_not_found(struct api_ctx *c, struct buf *out, const char *id)
{
	return api_problem(c, out, 404, "TASK_NOT_FOUND", api_one_member(
	    "requestId", json_string(id)), "no task %s for AppId %s", id,
	    c->app_id);
}

int
api_own_marker(struct api_ctx *c, struct buf *out, const char *id,
    struct api_marker *m, int *status)
{
	int dfd = openat(c->sp.dir[SPOOL_STATE], "requests", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = dfd >= 0 ? api_marker_read(dfd, id, m) : -1;

	if (dfd >= 0)
		close(dfd);
	if (rc != 0 || strcmp(m->app_id, c->app_id) != 0) {
		*status = api_task_not_found(c, out, id);
		return -1;
	}
	return 0;
}

int
api_get(struct api_ctx *c, struct buf *out, const char *id)
{
	struct api_marker m;
	json_t *v;
	int st;

	if (api_own_marker(c, out, id, &m, &st) != 0)
		return st;
	if ((v = api_task_view(c, &m, 1)) == NULL) {
		if (errno == ENOENT)
			return api_task_not_found(c, out, id);
		if (errno == EBADMSG) {
			fprintf(stderr, "taskspool.cgi: trace %s: results/"
			    "%s.json is not a valid result (torn or edited); "
			    "the daemons rebuild it\n", c->trace, id);
			return api_problem(c, out, 503, "SERVICE_UNAVAILABLE",
			    api_one_member("requestId", json_string(id)), "the "
			    "result of task %s is damaged and is being "
			    "rebuilt; retry shortly", id);
		}
		return api_unavailable(c, out, "read task");
	}
	return api_respond_json(c, out, 200, v);
}

int
api_cancel(struct api_ctx *c, struct buf *out, const char *id)
{
	struct api_marker m;
	json_t *v;
	const char *s;
	int st;
	int64_t until;

	if (api_own_marker(c, out, id, &m, &st) != 0)
		return st;
	if ((v = api_task_view(c, &m, 1)) == NULL)
		return errno == ENOENT ? api_problem(c, out, 404,
		    "TASK_NOT_FOUND", api_one_member("requestId",
		    json_string(id)), "no task %s", id) : api_unavailable(c,
		    out, "read task");
	s = json_string_value(json_object_get(v, "status"));
	if (s != NULL && api_terminal(s)) {
		json_t *x = api_one_member("taskStatus", json_string(s));

		json_decref(v);
		return api_problem(c, out, 409, "TASK_FINISHED", x, "task %s "
		    "already finished", id);
	}
	json_decref(v);
	/* The cancel mechanism of `taskspool cancel`: a marker that the
	 * daemons act on (the owner kills a running hook; any daemon
	 * concludes a pending task CANCELLED, result first). */
	if (c->sp.cancel < 0 || spool_publish(&c->sp, c->sp.cancel, id, "",
	    0, -1, 0) != 0)
		return api_unavailable(c, out, "state/cancel");
	until = tstime_mono_ms() + 2000;
	for (;;) {
		v = api_task_view(c, &m, 1);
		s = v != NULL ? json_string_value(json_object_get(v,
		    "status")) : NULL;
		if (s != NULL && api_terminal(s))
			return api_respond_json(c, out, 200, v);
		if (tstime_mono_ms() >= until || (v == NULL && errno ==
		    ENOENT))
			break;
		json_decref(v);
		usleep(20000);
	}
	if (v == NULL)
		return api_unavailable(c, out, "read task");
	return api_respond_json(c, out, 202, v);
}

/* --- GET /tasks (list) ----------------------------------------------- */

struct item {
	struct api_marker m;
};

static int
item_cmp(const void *a, const void *b)
{
	const struct api_marker *x = &((const struct item *)a)->m;
	const struct api_marker *y = &((const struct item *)b)->m;

	if (x->created_ms != y->created_ms)
		return x->created_ms > y->created_ms ? -1 : 1;
	return -strcmp(x->request_id, y->request_id);
}

/*
 * GET /tasks answered from MariaDB (the `mariadb` key is set): the same
 * filters, order and cursor as the spool's answer, from task_execution
 * (records_db_list_app, keyset pagination).  A task appears once a node
 * has recorded it (claimed or finished); the callback member still comes
 * from the spool's delivery files; taskName is not recorded (null).
 */
static int
list_from_db(struct api_ctx *c, struct buf *out, const char *statuses,
    const char *code, int64_t since, int64_t cursor_ms, const char *cursor_id,
    long limit)
{
	struct records_task *rows = calloc((size_t)limit + 1, sizeof(*rows));
	struct records_db *db;
	char why[512];
	size_t n = 0;
	json_t *arr, *o;
	int rc = -1;

	if (rows != NULL && (db = records_db_connect(c->rq->cfg, why,
	    sizeof(why))) != NULL) {
		rc = records_db_list_app(db, c->app_id, statuses, code,
		    since >= 0 ? since : RECORDS_NULL, cursor_ms,
		    cursor_id[0] != '\0' ? cursor_id : NULL, rows,
		    (size_t)limit + 1, &n, why, sizeof(why));
		records_db_close(db);
	}
	if (rc != 0) {
		free(rows);
		errno = EIO;
		return api_unavailable(c, out, rows != NULL ? why : "list");
	}
	arr = json_array();
	o = json_object();
	for (size_t i = 0; i < n && i < (size_t)limit; i++) {
		const struct records_task *r = &rows[i];
		json_t *v = json_object(), *fr = json_null();

		json_object_set_new(v, "requestId", json_string(r->request_id));
		json_object_set_new(v, "taskCode", json_string(r->task_code));
		json_object_set_new(v, "taskName", json_null());
		json_object_set_new(v, "status", json_string(r->status));
		json_object_set_new(v, "createdAt",
		    api_time_or_null(r->created_at));
		json_object_set_new(v, "startedAt",
		    api_time_or_null(r->started_at));
		json_object_set_new(v, "finishedAt",
		    api_time_or_null(r->finished_at));
		json_object_set_new(v, "durationMs", r->duration_ms ==
		    RECORDS_NULL ? json_null() : json_integer(r->duration_ms));
		json_object_set_new(v, "attempt", json_integer(r->attempt));
		json_object_set_new(v, "maxRetries", r->max_retries ==
		    RECORDS_NULL ? json_null() : json_integer(r->max_retries));
		json_object_set_new(v, "node", r->node[0] != '\0' ?
		    json_string(r->node) : json_null());
		json_object_set_new(v, "triggerTime",
		    api_time_or_null(r->trigger_time));
		if (r->traceparent[0] != '\0')
			json_object_set_new(v, "traceparent",
			    json_string(r->traceparent));
		if (r->failure_code[0] != '\0')
			fr = json_pack("{s:s,s:s}", "code", r->failure_code,
			    "message", r->failure_reason);
		json_object_set_new(v, "failureReason", fr);
		json_object_set_new(v, "callback", api_callback_view(c,
		    c->app_id, r->request_id, 0, api_terminal(r->status)));
		json_array_append_new(arr, v);
	}
	if (n > (size_t)limit) {
		char cur[TASK_ID_MAX + 32];

		snprintf(cur, sizeof(cur), "%lld_%s",
		    (long long)rows[limit - 1].created_at,
		    rows[limit - 1].request_id);
		json_object_set_new(o, "nextCursor", json_string(cur));
	} else
		json_object_set_new(o, "nextCursor", json_null());
	free(rows);
	json_object_set_new(o, "items", arr);
	return api_respond_json(c, out, 200, o);
}

/*
 * The caller's idempotency records in state/requests/ that pass the
 * list's filters (code "" = any task code, since < 0 = any time,
 * cursor_ms < 0 = from the first page, else after the item cursor_ms,
 * cursor_id), unsorted, into *itemsp (new, caller frees; NULL when
 * none).  Returns how many.  A record that does not read is left out,
 * and so is the rest when memory runs out.
 */
static size_t
list_scan(struct api_ctx *c, const char *code, int64_t since,
    int64_t cursor_ms, const char *cursor_id, struct item **itemsp)
{
	struct item *items = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	struct dirent *de;
	int dfd;

	dfd = openat(c->sp.dir[SPOOL_STATE], "requests", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = dfd >= 0 ? spool_opendir(dfd) : NULL;
	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char id[TASK_ID_MAX + 1];
		struct api_marker m;

		if (de->d_name[0] == '.' || l < 6 || l - 5 > TASK_ID_MAX ||
		    strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		memcpy(id, de->d_name, l - 5);
		id[l - 5] = '\0';
		if (api_marker_read(dfd, id, &m) != 0 || strcmp(m.app_id,
		    c->app_id) != 0 || (code[0] != '\0' &&
		    strcmp(m.task_code, code) != 0) || (since >= 0 &&
		    m.created_ms < since))
			continue;
		if (cursor_ms >= 0 && (m.created_ms > cursor_ms ||
		    (m.created_ms == cursor_ms && strcmp(m.request_id,
		    cursor_id) >= 0)))
			continue;
		if (n == cap) {
			struct item *ni = reallocarray(items, cap ? cap * 2 :
			    64, sizeof(*ni));

			if (ni == NULL)
				break;
			items = ni;
			cap = cap ? cap * 2 : 64;
		}
		items[n++].m = m;
	}
	if (d != NULL)
		closedir(d);
	if (dfd >= 0)
		close(dfd);
	*itemsp = items;
	return n;
}

/*
 * The §4.2 list page of the n records items (borrowed, sorted): the views
 * of the first limit tasks in one of the nstatus states statuses (any
 * state when nstatus is 0), and nextCursor, the last one's cursor when
 * more follow, else null.  Returns a new object.
 */
static json_t *
list_page(struct api_ctx *c, const struct item *items, size_t n,
    char (*statuses)[16], int nstatus, long limit)
{
	size_t shown = 0;
	json_t *arr, *o;

	arr = json_array();
	o = json_object();
	for (size_t i = 0; i < n && shown < (size_t)limit; i++) {
		json_t *v = api_task_view(c, &items[i].m, 0);
		const char *s;
		int keep = nstatus == 0;

		if (v == NULL)
			continue;
		s = json_string_value(json_object_get(v, "status"));
		for (int j = 0; j < nstatus && s != NULL; j++)
			keep |= strcmp(s, statuses[j]) == 0;
		if (!keep) {
			json_decref(v);
			continue;
		}
		json_array_append_new(arr, v);
		if (++shown == (size_t)limit && i + 1 < n) {
			char cur[TASK_ID_MAX + 32];

			snprintf(cur, sizeof(cur), "%lld_%s",
			    (long long)items[i].m.created_ms,
			    items[i].m.request_id);
			json_object_set_new(o, "nextCursor", json_string(cur));
		}
	}
	json_object_set_new(o, "items", arr);
	if (json_object_get(o, "nextCursor") == NULL)
		json_object_set_new(o, "nextCursor", json_null());
	return o;
}

int
api_list(struct api_ctx *c, struct buf *out)
{
	const char *q = api_env(c, "QUERY_STRING");
	char statuses[8][16], code[TASK_CODE_MAX + 1] = "";
	char cursor_id[TASK_ID_MAX + 1] = "";
	int nstatus = 0;
	long limit = API_LIST_DEFAULT;
	int64_t since = -1, cursor_ms = -1;
	struct item *items = NULL;
	size_t n = 0;
	json_t *o;

	for (const char *s = q != NULL ? q : ""; *s != '\0';) {
		const char *e = s + strcspn(s, "&"), *eq = memchr(s, '=',
		    (size_t)(e - s));
		char name[32], val[256];

		if (e > s && eq != NULL && api_qdecode(s, eq, name,
		    sizeof(name)) == 0) {
			if (api_qdecode(eq + 1, e, val, sizeof(val)) != 0)
				return api_query_invalid(c, out, name, "value "
				    "too long or not decodable");
			if (strcmp(name, "status") == 0) {
				static const char *const ok[] = { "PENDING",
				    "WAITING", "DISPATCHED", "RUNNING",
				    "HELD", "SUCCESS", "FAILED", "CANCELLED",
				    "BLOCKED" };
				int good = 0;

				for (size_t i = 0; i < sizeof(ok) /
				    sizeof(ok[0]); i++)
					good |= strcmp(val, ok[i]) == 0;
				if (!good || nstatus == 8)
					return api_query_invalid(c, out,
					    "status", "must be one of PENDING "
					    "WAITING DISPATCHED RUNNING HELD "
					    "SUCCESS FAILED CANCELLED BLOCKED");
				api_copy(statuses[nstatus++], 16, val);
			} else if (strcmp(name, "taskCode") == 0) {
				if (!spool_code_ok(val))
					return api_query_invalid(c, out,
					    "taskCode", "not a task code");
				api_copy(code, sizeof(code), val);
			} else if (strcmp(name, "since") == 0) {
				if (tstime_parse_rfc3339(val, &since) != 0)
					return api_query_invalid(c, out,
					    "since", "must be an RFC 3339 "
					    "date-time");
			} else if (strcmp(name, "limit") == 0) {
				char *end;

				limit = strtol(val, &end, 10);
				if (val[0] == '\0' || *end != '\0' ||
				    limit < 1 || limit > API_LIST_MAX)
					return api_query_invalid(c, out,
					    "limit", "must be an integer "
					    "1..500");
			} else if (strcmp(name, "cursor") == 0) {
				char *end;
				long long ms = strtoll(val, &end, 10);

				if (end == val || *end != '_' ||
				    !spool_id_ok(end + 1))
					return api_query_invalid(c, out,
					    "cursor", "not a cursor from a "
					    "previous page");
				cursor_ms = ms;
				snprintf(cursor_id, sizeof(cursor_id), "%s",
				    end + 1);
			}
		}
		s = *e == '&' ? e + 1 : e;
	}
	if (c->rq->cfg->mariadb[0] != '\0') {
		char sl[8 * 17] = "";

		for (int i = 0; i < nstatus; i++)
			snprintf(sl + strlen(sl), sizeof(sl) - strlen(sl),
			    "%s%s", i ? "," : "", statuses[i]);
		return list_from_db(c, out, sl, code, since, cursor_ms,
		    cursor_id, limit);
	}
	n = list_scan(c, code, since, cursor_ms, cursor_id, &items);
	if (n > 0)
		qsort(items, n, sizeof(*items), item_cmp);
	o = list_page(c, items, n, statuses, nstatus, limit);
	free(items);
	return api_respond_json(c, out, 200, o);
}
