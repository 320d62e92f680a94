/*
 * records_mariadb — the MariaDB side of the records (records_mariadb.h): the
 * connection, the migrations, the writer's upserts, and the queries of
 * history, stats, the task list and purge.  The only file that calls
 * libmariadb (the MariaDB Connector/C); taskspool.cgi links a copy built
 * with -DTS_MYSQL_DL that reaches it through dlopen (mysql_dl.h).
 *
 * Every statement with a value in it is a prepared statement with bound
 * parameters; SQL text is never built from data.  The only texts sent
 * with mysql_real_query are constants and the compiled-in migration files.
 * Library code: returns errors with the server's message in why, logs
 * nothing.  One handle per thread (libmariadb connections are not shared).
 */
#include "records/records_mariadb.h"

#include <errno.h>
#include <mysql.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool/clock.h"
#ifdef TS_MYSQL_DL
#include "records/mysql_dl.h"	/* the CGI's copy: libmariadb by dlopen */
#endif

#define CONNECT_TIMEOUT_S	3
#define IO_TIMEOUT_S		10	/* a slow server counts as down */

enum stmt_id {
	ST_EXEC, ST_ATTEMPT, ST_NODE, ST_LIST, ST_LIST_CODE, ST_LIST_STATUS,
	ST_LIST_BOTH, ST_STATS, ST_STATS_CB, ST_PURGE_ATT, ST_PURGE_CB,
	ST_PURGE_EXEC, ST_MIGRATED, ST_VERSION, ST_LIST_APP, ST_CALLBACK, ST_DEF, ST_DEF_DEL, ST_TERMINAL, ST_N
};

struct records_db {
	MYSQL *my;
	MYSQL_STMT *st[ST_N];
	unsigned prepare_err;	/* error of the last failed prepare */
};

/*
 * The row's fence decides (see 0001_initial.sql): each column takes the
 * record's value only when the record is not older than the row; fence
 * itself is assigned last, since MariaDB evaluates the assignments of ON
 * DUPLICATE KEY UPDATE left to right with the new values visible.
 */
#define NEWER "VALUES(fence) >= fence"
static const char *const sql[ST_N] = {
[ST_EXEC] =
"INSERT INTO task_execution (request_id, app_id, task_code, job_code, "
"status, trigger_time, node, attempt, max_retries, fence, created_at, "
"started_at, finished_at, duration_ms, exit_code, failure_code, "
"failure_reason, result_summary, recorded_at, traceparent) "
"VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
"ON DUPLICATE KEY UPDATE "
"app_id = COALESCE(app_id, VALUES(app_id)), "
"job_code = COALESCE(job_code, VALUES(job_code)), "
"created_at = COALESCE(created_at, VALUES(created_at)), "
"task_code = IF(" NEWER ", VALUES(task_code), task_code), "
"status = IF(" NEWER ", VALUES(status), status), "
"trigger_time = IF(" NEWER ", VALUES(trigger_time), trigger_time), "
"node = IF(" NEWER ", VALUES(node), node), "
"attempt = IF(" NEWER ", VALUES(attempt), attempt), "
"max_retries = IF(" NEWER ", COALESCE(VALUES(max_retries), max_retries), "
"max_retries), "
"started_at = IF(" NEWER ", VALUES(started_at), started_at), "
"finished_at = IF(" NEWER ", VALUES(finished_at), finished_at), "
"duration_ms = IF(" NEWER ", VALUES(duration_ms), duration_ms), "
"exit_code = IF(" NEWER ", VALUES(exit_code), exit_code), "
"failure_code = IF(" NEWER ", VALUES(failure_code), failure_code), "
"failure_reason = IF(" NEWER ", VALUES(failure_reason), failure_reason), "
"result_summary = IF(" NEWER ", VALUES(result_summary), result_summary), "
"recorded_at = IF(" NEWER ", VALUES(recorded_at), recorded_at), "
"traceparent = COALESCE(VALUES(traceparent), traceparent), "
"fence = GREATEST(fence, VALUES(fence))",
[ST_ATTEMPT] =
"INSERT INTO task_attempt (request_id, attempt, node, state, fence, "
"started_at, finished_at, duration_ms, exit_code, sig, reason, retry_at, "
"traceparent) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
"ON DUPLICATE KEY UPDATE "
"node = IF(" NEWER ", VALUES(node), node), "
"state = IF(" NEWER ", VALUES(state), state), "
"started_at = IF(" NEWER ", VALUES(started_at), started_at), "
"finished_at = IF(" NEWER ", VALUES(finished_at), finished_at), "
"duration_ms = IF(" NEWER ", VALUES(duration_ms), duration_ms), "
"exit_code = IF(" NEWER ", VALUES(exit_code), exit_code), "
"sig = IF(" NEWER ", VALUES(sig), sig), "
"reason = IF(" NEWER ", VALUES(reason), reason), "
"retry_at = IF(" NEWER ", VALUES(retry_at), retry_at), "
"traceparent = COALESCE(VALUES(traceparent), traceparent), "
"fence = GREATEST(fence, VALUES(fence))",
[ST_NODE] =
"INSERT INTO node_registry (node_id, host, pid, started_at, last_seen_at) "
"VALUES (?,?,?,?,?) ON DUPLICATE KEY UPDATE host = VALUES(host), "
"pid = VALUES(pid), started_at = VALUES(started_at), "
"last_seen_at = VALUES(last_seen_at)",
#define LIST_COLS "SELECT request_id, task_code, status, node, attempt, " \
	"trigger_time, created_at, started_at, finished_at, duration_ms, " \
	"exit_code, failure_code, max_retries, failure_reason, traceparent " \
	"FROM task_execution WHERE "
#define LIST_KEY "trigger_time >= ? AND (created_at > ? OR (created_at = ? " \
	"AND request_id > ?)) ORDER BY created_at, request_id LIMIT ?"
[ST_LIST] = LIST_COLS LIST_KEY,
[ST_LIST_CODE] = LIST_COLS "task_code = ? AND " LIST_KEY,
[ST_LIST_STATUS] = LIST_COLS "status = ? AND " LIST_KEY,
[ST_LIST_BOTH] = LIST_COLS "task_code = ? AND status = ? AND " LIST_KEY,
[ST_STATS] =
"SELECT task_code, status, attempt, duration_ms FROM task_execution "
"WHERE trigger_time >= ? AND status IN ('SUCCESS','FAILED','CANCELLED') "
"ORDER BY task_code, duration_ms",
[ST_STATS_CB] =
"SELECT e.task_code, COUNT(*) FROM callback_record c JOIN task_execution e "
"ON e.request_id = c.request_id WHERE c.state = 'CALLBACK_FAILED' AND "
"e.trigger_time >= ? GROUP BY e.task_code",
#define PURGE_WHERE "e.finished_at < ? AND e.status IN " \
	"('SUCCESS','FAILED','CANCELLED')"
[ST_PURGE_ATT] = "DELETE a FROM task_attempt a JOIN task_execution e ON "
"e.request_id = a.request_id WHERE " PURGE_WHERE,
[ST_PURGE_CB] = "DELETE c FROM callback_record c JOIN task_execution e ON "
"e.request_id = c.request_id WHERE " PURGE_WHERE,
[ST_PURGE_EXEC] = "DELETE e FROM task_execution e WHERE " PURGE_WHERE,
[ST_MIGRATED] = "INSERT INTO schema_migrations (version, name, applied_at) "
"VALUES (?,?,?)",
[ST_VERSION] = "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
[ST_TERMINAL] = "SELECT COUNT(*) FROM task_execution WHERE request_id = ? "
"AND status IN ('SUCCESS','FAILED','CANCELLED')",
/* GET /api/tasks: one app's tasks newest first, before the cursor; an
 * empty code or status list matches any (FIND_IN_SET: the statuses are a
 * bound comma-separated value, never SQL text). */
[ST_LIST_APP] = LIST_COLS "app_id = ? AND created_at >= ? AND "
"(? = '' OR task_code = ?) AND (? = '' OR FIND_IN_SET(status, ?) > 0) AND "
"(created_at < ? OR (created_at = ? AND request_id < ?)) "
"ORDER BY created_at DESC, request_id DESC LIMIT ?",
/* A callback delivery's state: a row changes only with a record that is
 * not older (updated_at, assigned last, like fence above). */
#define AT_NEWER "VALUES(updated_at) >= updated_at"
[ST_CALLBACK] =
"INSERT INTO callback_record (delivery_id, request_id, url, attempts, "
"last_status, last_error, next_try_at, state, updated_at) "
"VALUES (?,?,?,?,?,?,?,?,?) ON DUPLICATE KEY UPDATE "
"url = IF(" AT_NEWER " AND VALUES(url) <> '', VALUES(url), url), "
"attempts = IF(" AT_NEWER ", VALUES(attempts), attempts), "
"last_status = IF(" AT_NEWER ", VALUES(last_status), last_status), "
"last_error = IF(" AT_NEWER ", VALUES(last_error), last_error), "
"next_try_at = IF(" AT_NEWER ", VALUES(next_try_at), next_try_at), "
"state = IF(" AT_NEWER ", VALUES(state), state), "
"updated_at = GREATEST(updated_at, VALUES(updated_at))",
/* The jobs/ mirror: the newest definition the leader loaded wins. */
[ST_DEF] =
"INSERT INTO task_definition (job_code, task_code, schedule, enabled, "
"definition, updated_at) VALUES (?,?,?,?,?,?) ON DUPLICATE KEY UPDATE "
"task_code = IF(" AT_NEWER ", VALUES(task_code), task_code), "
"schedule = IF(" AT_NEWER ", VALUES(schedule), schedule), "
"enabled = IF(" AT_NEWER ", VALUES(enabled), enabled), "
"definition = IF(" AT_NEWER ", VALUES(definition), definition), "
"updated_at = GREATEST(updated_at, VALUES(updated_at))",
[ST_DEF_DEL] =
"DELETE FROM task_definition WHERE job_code = ? AND updated_at <= ?",
};

/*
 * Only errors about this record's values reject it (it then goes to
 * corrupt/); every other error — the link, locks, a full disk, a missing
 * table, permissions — is retried with backoff, so a server-side problem
 * never sends good records to corrupt/ (mysqld_error.h numbers).
 */
static enum records_apply
classify(unsigned e)
{
	switch (e) {
	case 1048:	/* ER_BAD_NULL_ERROR */
	case 1264:	/* ER_WARN_DATA_OUT_OF_RANGE */
	case 1265:	/* WARN_DATA_TRUNCATED */
	case 1292:	/* ER_TRUNCATED_WRONG_VALUE */
	case 1300:	/* ER_INVALID_CHARACTER_STRING */
	case 1366:	/* ER_TRUNCATED_WRONG_VALUE_FOR_FIELD */
	case 1406:	/* ER_DATA_TOO_LONG */
	case 1062:	/* ER_DUP_ENTRY (another task's app_id, request_id) */
	case 4025:	/* ER_CONSTRAINT_FAILED */
		return RECORDS_APPLY_REJECT;
	default:
		return RECORDS_APPLY_RETRY;
	}
}

static enum records_apply
my_fail(struct records_db *db, char *why, size_t whylen)
{
	snprintf(why, whylen, "%s (%u)", mysql_error(db->my),
	    mysql_errno(db->my));
	return classify(mysql_errno(db->my));
}

static enum records_apply
st_fail(MYSQL_STMT *st, char *why, size_t whylen)
{
	snprintf(why, whylen, "%s (%u)", mysql_stmt_error(st),
	    mysql_stmt_errno(st));
	return classify(mysql_stmt_errno(st));
}

/* Prepare statement id once per connection.  Returns it or NULL. */
static MYSQL_STMT *
stmt(struct records_db *db, enum stmt_id id, enum records_apply *rc,
    char *why, size_t whylen)
{
	if (db->st[id] != NULL)
		return db->st[id];
	if ((db->st[id] = mysql_stmt_init(db->my)) == NULL) {
		*rc = my_fail(db, why, whylen);
		return NULL;
	}
	if (mysql_stmt_prepare(db->st[id], sql[id], strlen(sql[id])) != 0) {
		db->prepare_err = mysql_stmt_errno(db->st[id]);
		*rc = st_fail(db->st[id], why, whylen);
		mysql_stmt_close(db->st[id]);
		db->st[id] = NULL;
		return NULL;
	}
	return db->st[id];
}

/* Bind helpers: the values must stay valid until the execute. */
static void
p_str(MYSQL_BIND *b, const char *s)
{
	memset(b, 0, sizeof(*b));
	if (s == NULL) {
		b->buffer_type = MYSQL_TYPE_NULL;
		return;
	}
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = (void *)(uintptr_t)s;
	b->buffer_length = strlen(s);
}

static void
p_i64(MYSQL_BIND *b, const int64_t *v)
{
	memset(b, 0, sizeof(*b));
	if (*v == RECORDS_NULL) {
		b->buffer_type = MYSQL_TYPE_NULL;
		return;
	}
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = (void *)(uintptr_t)v;
}

/* Execute statement id with parameters b (may be NULL). */
static enum records_apply
run(struct records_db *db, enum stmt_id id, MYSQL_BIND *b, char *why,
    size_t whylen)
{
	enum records_apply rc = RECORDS_APPLY_RETRY;
	MYSQL_STMT *st = stmt(db, id, &rc, why, whylen);

	if (st == NULL)
		return rc;
	if ((b != NULL && mysql_stmt_bind_param(st, b) != 0) ||
	    mysql_stmt_execute(st) != 0)
		return st_fail(st, why, whylen);
	return RECORDS_APPLY_OK;
}

/* --- connection --- */

struct dsn {
	char host[256], user[128], password[256], database[65], socket[1024];
	unsigned port;
};

/* Percent-free "user:password@host:port/db" after "mariadb://". */
static int
parse_url(const char *s, struct dsn *d, char *why, size_t whylen)
{
	const char *at = strrchr(s, '@'), *hp, *slash, *colon;
	size_t n;

	if (at != NULL) {
		colon = memchr(s, ':', (size_t)(at - s));
		n = (size_t)((colon != NULL ? colon : at) - s);
		if (n >= sizeof(d->user))
			goto toolong;
		memcpy(d->user, s, n);
		d->user[n] = '\0';
		if (colon != NULL) {
			n = (size_t)(at - colon - 1);
			if (n >= sizeof(d->password))
				goto toolong;
			memcpy(d->password, colon + 1, n);
			d->password[n] = '\0';
		}
		hp = at + 1;
	} else
		hp = s;
	slash = strchr(hp, '/');
	if (slash != NULL) {
		if (strlen(slash + 1) >= sizeof(d->database))
			goto toolong;
		if (slash[1] != '\0')
			snprintf(d->database, sizeof(d->database), "%s",
			    slash + 1);
	} else
		slash = hp + strlen(hp);
	colon = memchr(hp, ':', (size_t)(slash - hp));
	n = (size_t)((colon != NULL ? colon : slash) - hp);
	if (n == 0 || n >= sizeof(d->host)) {
		snprintf(why, whylen, "mariadb: no host in \"mariadb://...\"");
		return -1;
	}
	memcpy(d->host, hp, n);
	d->host[n] = '\0';
	if (colon != NULL) {
		char *end;
		unsigned long p = strtoul(colon + 1, &end, 10);

		if (end != slash || p == 0 || p > 65535) {
			snprintf(why, whylen, "mariadb: port must be 1..65535");
			return -1;
		}
		d->port = (unsigned)p;
	}
	return 0;
toolong:
	snprintf(why, whylen, "mariadb: a part of the URL is too long");
	return -1;
}

static int
parse_dsn(const struct config *cfg, struct dsn *d, char *why, size_t whylen)
{
	const char *v = cfg->mariadb;

	memset(d, 0, sizeof(*d));
	snprintf(d->user, sizeof(d->user), "%s", cfg->mariadb_user);
	snprintf(d->password, sizeof(d->password), "%s",
	    cfg->mariadb_password);
	snprintf(d->database, sizeof(d->database), "%s",
	    cfg->mariadb_database);
	d->port = 3306;
	if (strncmp(v, "mariadb://", 10) == 0)
		return parse_url(v + 10, d, why, whylen);
	if (v[0] == '/') {
		snprintf(d->socket, sizeof(d->socket), "%s", v);
		snprintf(d->host, sizeof(d->host), "localhost");
		return 0;
	}
	return parse_url(v, d, why, whylen);	/* HOST[:PORT] */
}

struct records_db *
records_db_connect(const struct config *cfg, char *why, size_t whylen)
{
	struct records_db *db;
	struct dsn d;
	unsigned ct = CONNECT_TIMEOUT_S, io = IO_TIMEOUT_S;

	if (cfg->mariadb[0] == '\0') {
		snprintf(why, whylen, "no mariadb in the configuration "
		    "(embedded mode keeps no database records)");
		return NULL;
	}
	if (parse_dsn(cfg, &d, why, whylen) != 0)
		return NULL;
#ifdef TS_MYSQL_DL
	if (mysql_dl_load(why, whylen) != 0)
		return NULL;
#endif
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->my = mysql_init(NULL)) == NULL) {
		free(db);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	mysql_options(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	mysql_options(db->my, MYSQL_OPT_READ_TIMEOUT, &io);
	mysql_options(db->my, MYSQL_OPT_WRITE_TIMEOUT, &io);
	mysql_options(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (mysql_real_connect(db->my, d.host, d.user, d.password, d.database,
	    d.port, d.socket[0] ? d.socket : NULL, CLIENT_MULTI_STATEMENTS) ==
	    NULL) {
		my_fail(db, why, whylen);
		records_db_close(db);
		return NULL;
	}
	/* Strict: a value that does not fit is an error, never truncated
	 * silently (the record then goes to corrupt/ with the reason). */
	if (mysql_query(db->my, "SET SESSION sql_mode = "
	    "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,NO_ZERO_DATE'") != 0) {
		my_fail(db, why, whylen);
		records_db_close(db);
		return NULL;
	}
	return db;
}

void
records_db_close(struct records_db *db)
{
	if (db == NULL)
		return;
	for (int i = 0; i < ST_N; i++)
		if (db->st[i] != NULL)
			mysql_stmt_close(db->st[i]);
	if (db->my != NULL)
		mysql_close(db->my);
	free(db);
}

/* --- transactions and upserts --- */

enum records_apply
records_db_begin(struct records_db *db, char *why, size_t whylen)
{
	if (mysql_query(db->my, "START TRANSACTION") != 0) {
		my_fail(db, why, whylen);
		return RECORDS_APPLY_RETRY;
	}
	return RECORDS_APPLY_OK;
}

enum records_apply
records_db_commit(struct records_db *db, char *why, size_t whylen)
{
	if (mysql_commit(db->my) != 0) {
		/* A failed COMMIT never rejects one record: try again. */
		my_fail(db, why, whylen);
		return RECORDS_APPLY_RETRY;
	}
	return RECORDS_APPLY_OK;
}

void
records_db_rollback(struct records_db *db)
{
	(void)mysql_rollback(db->my);
}

enum records_apply
records_db_apply(struct records_db *db, const struct records_row *row,
    char *why, size_t whylen)
{
	MYSQL_BIND b[20];
	int64_t attempt = row->attempt, now = tstime_now_ms();
	int64_t created = row->created_at != RECORDS_NULL ? row->created_at :
	    row->trigger_time;
	enum records_apply rc;

	if (row->def != NULL) {
		const struct records_definition_row *d = row->def;

		p_str(&b[0], d->job_code);
		if (d->definition == NULL) {
			p_i64(&b[1], &d->updated_at);
			return run(db, ST_DEF_DEL, b, why, whylen);
		}
		p_str(&b[1], d->task_code);
		p_str(&b[2], d->schedule);
		p_i64(&b[3], &d->enabled);
		p_str(&b[4], d->definition);
		p_i64(&b[5], &d->updated_at);
		return run(db, ST_DEF, b, why, whylen);
	}
	if (row->cb != NULL) {
		const struct records_callback_row *c = row->cb;

		p_str(&b[0], c->delivery_id);
		p_str(&b[1], row->request_id);
		p_str(&b[2], c->url);
		p_i64(&b[3], &c->attempts);
		p_i64(&b[4], &c->last_status);
		p_str(&b[5], c->last_error);
		p_i64(&b[6], &c->next_try_at);
		p_str(&b[7], c->state);
		p_i64(&b[8], &c->updated_at);
		return run(db, ST_CALLBACK, b, why, whylen);
	}
	/* Larger would exceed MariaDB's default max_allowed_packet (16 MiB)
	 * with the rest of the row, and the server would drop the link: a
	 * retry would never end. */
	if (row->result_summary != NULL &&
	    strlen(row->result_summary) > RECORDS_RESULT_MAX) {
		snprintf(why, whylen, "result_summary: %zu bytes, more than "
		    "%d", strlen(row->result_summary), RECORDS_RESULT_MAX);
		return RECORDS_APPLY_REJECT;
	}
	p_str(&b[0], row->request_id);
	p_str(&b[1], row->app_id);
	p_str(&b[2], row->task_code);
	p_str(&b[3], row->job_code);
	p_str(&b[4], row->status);
	p_i64(&b[5], &row->trigger_time);
	p_str(&b[6], row->node);
	p_i64(&b[7], &attempt);
	p_i64(&b[8], &row->max_retries);
	p_i64(&b[9], &row->fence);
	p_i64(&b[10], &created);
	p_i64(&b[11], &row->started_at);
	p_i64(&b[12], &row->finished_at);
	p_i64(&b[13], &row->duration_ms);
	p_i64(&b[14], &row->exit_code);
	p_str(&b[15], row->failure_code);
	p_str(&b[16], row->failure_reason);
	p_str(&b[17], row->result_summary);
	p_i64(&b[18], &now);
	p_str(&b[19], row->traceparent);
	if ((rc = run(db, ST_EXEC, b, why, whylen)) != RECORDS_APPLY_OK)
		return rc;
	for (size_t i = 0; i < row->natt; i++) {
		const struct records_attempt_row *a = &row->att[i];
		int64_t an = a->attempt, fence = a->fence;

		p_str(&b[0], row->request_id);
		p_i64(&b[1], &an);
		p_str(&b[2], a->node);
		p_str(&b[3], a->state);
		p_i64(&b[4], &fence);
		p_i64(&b[5], &a->started_at);
		p_i64(&b[6], &a->finished_at);
		p_i64(&b[7], &a->duration_ms);
		p_i64(&b[8], &a->exit_code);
		p_i64(&b[9], &a->sig);
		p_str(&b[10], a->reason);
		p_i64(&b[11], &a->retry_at);
		p_str(&b[12], a->traceparent);
		if ((rc = run(db, ST_ATTEMPT, b, why, whylen)) !=
		    RECORDS_APPLY_OK)
			return rc;
	}
	return RECORDS_APPLY_OK;
}

enum records_apply
records_db_node_seen(struct records_db *db, const char *node,
    int64_t started_ms, int64_t now_ms, char *why, size_t whylen)
{
	MYSQL_BIND b[5];
	char host[256];
	int64_t pid = (int64_t)getpid();

	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	p_str(&b[0], node);
	p_str(&b[1], host);
	p_i64(&b[2], &pid);
	p_i64(&b[3], &started_ms);
	p_i64(&b[4], &now_ms);
	return run(db, ST_NODE, b, why, whylen);
}

/* --- migrations --- */

int64_t
records_percentile(const int64_t *v, size_t n, int p)
{
	size_t k;

	if (n == 0)
		return RECORDS_NULL;
	k = ((size_t)p * n + 99) / 100;	/* ceil(p * n / 100) */
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

unsigned
records_latest_version(void)
{
	unsigned v = 0;

	for (const struct records_migration *m = records_migrations;
	    m->name != NULL; m++)
		v = m->version;
	return v;
}

int
records_db_version(struct records_db *db, unsigned *version, char *why,
    size_t whylen)
{
	MYSQL_BIND r;
	long long v = 0;
	MYSQL_STMT *st;
	enum records_apply rc;

	*version = 0;
	if ((st = stmt(db, ST_VERSION, &rc, why, whylen)) == NULL)
		return db->prepare_err == 1146 ? 0 : -1;	/* no table */
	memset(&r, 0, sizeof(r));
	r.buffer_type = MYSQL_TYPE_LONGLONG;
	r.buffer = &v;
	if (mysql_stmt_execute(st) != 0 || mysql_stmt_bind_result(st, &r) ||
	    mysql_stmt_store_result(st) != 0) {
		st_fail(st, why, whylen);
		return -1;
	}
	if (mysql_stmt_fetch(st) == 0)
		*version = (unsigned)v;
	mysql_stmt_free_result(st);
	return 0;
}

int
records_db_terminal(struct records_db *db, const char *id, char *why,
    size_t whylen)
{
	MYSQL_BIND p, r;
	long long v = 0;
	MYSQL_STMT *st;
	enum records_apply rc;

	if ((st = stmt(db, ST_TERMINAL, &rc, why, whylen)) == NULL)
		return -1;
	p_str(&p, id);
	memset(&r, 0, sizeof(r));
	r.buffer_type = MYSQL_TYPE_LONGLONG;
	r.buffer = &v;
	if (mysql_stmt_bind_param(st, &p) != 0 || mysql_stmt_execute(st) != 0
	    || mysql_stmt_bind_result(st, &r) != 0 ||
	    mysql_stmt_store_result(st) != 0) {
		st_fail(st, why, whylen);
		return -1;
	}
	if (mysql_stmt_fetch(st) != 0)
		v = 0;
	mysql_stmt_free_result(st);
	return v > 0 ? 1 : 0;
}

/* Run one migration file's statements. */
static int
run_script(struct records_db *db, const struct records_migration *m,
    char *why, size_t whylen)
{
	int st;

	if (mysql_real_query(db->my, m->sql, strlen(m->sql)) != 0)
		goto fail;
	do {
		MYSQL_RES *res = mysql_store_result(db->my);

		if (res != NULL)
			mysql_free_result(res);
		else if (mysql_field_count(db->my) != 0)
			goto fail;
	} while ((st = mysql_next_result(db->my)) == 0);
	if (st > 0)
		goto fail;
	return 0;
fail:
	snprintf(why, whylen, "%s: %s (%u)", m->name, mysql_error(db->my),
	    mysql_errno(db->my));
	return -1;
}

int
records_db_migrate(struct records_db *db, int *applied, char *why,
    size_t whylen)
{
	unsigned have;
	int rc = -1;
	MYSQL_RES *res;

	*applied = 0;
	if (mysql_query(db->my, "SELECT GET_LOCK('taskspool_migrate', 60)") !=
	    0) {
		my_fail(db, why, whylen);
		return -1;
	}
	if ((res = mysql_store_result(db->my)) != NULL)
		mysql_free_result(res);
	/* The version table may not exist yet: 0. */
	if (records_db_version(db, &have, why, whylen) != 0)
		goto out;
	for (const struct records_migration *m = records_migrations;
	    m->name != NULL; m++) {
		MYSQL_BIND b[3];
		int64_t v = m->version, now = tstime_now_ms();

		if (m->version <= have)
			continue;
		if (run_script(db, m, why, whylen) != 0)
			goto out;
		p_i64(&b[0], &v);
		p_str(&b[1], m->name);
		p_i64(&b[2], &now);
		if (run(db, ST_MIGRATED, b, why, whylen) != RECORDS_APPLY_OK ||
		    mysql_commit(db->my) != 0)
			goto out;
		(*applied)++;
	}
	rc = 0;
out:
	if (mysql_query(db->my, "SELECT RELEASE_LOCK('taskspool_migrate')") ==
	    0 && (res = mysql_store_result(db->my)) != NULL)
		mysql_free_result(res);
	return rc;
}

/* --- queries --- */

/* Result bindings of one records_task row. */
struct task_out {
	MYSQL_BIND b[15];
	my_bool nul[15];
	unsigned long len[15];
	long long attempt, tt, cr, st, fi, du, ex, mr;
	struct records_task *t;
};

static void
r_str(MYSQL_BIND *b, char *buf, size_t size, unsigned long *len,
    my_bool *nul)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = buf;
	b->buffer_length = size - 1;
	b->length = len;
	b->is_null = nul;
}

static void
r_i64(MYSQL_BIND *b, long long *v, my_bool *nul)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = v;
	b->is_null = nul;
}

static void
term(char *buf, size_t size, unsigned long len, my_bool nul)
{
	size_t n = nul ? 0 : len < size - 1 ? len : size - 1;

	buf[n] = '\0';
}

static int list_run(MYSQL_STMT *st, MYSQL_BIND *p, struct records_task *rows,
    size_t max, size_t *n, char *why, size_t whylen);

int
records_db_list(struct records_db *db, const struct records_filter *f,
    int64_t after_created, const char *after_id, struct records_task *rows,
    size_t max, size_t *n, char *why, size_t whylen)
{
	enum stmt_id id = f->task_code != NULL && f->status != NULL ?
	    ST_LIST_BOTH : f->task_code != NULL ? ST_LIST_CODE :
	    f->status != NULL ? ST_LIST_STATUS : ST_LIST;
	MYSQL_BIND p[7];
	int64_t since = f->since_ms == RECORDS_NULL ? INT64_MIN + 1 :
	    f->since_ms, lim = (int64_t)max;
	int k = 0;
	enum records_apply rc;
	MYSQL_STMT *st = stmt(db, id, &rc, why, whylen);

	*n = 0;
	if (st == NULL)
		return -1;
	if (after_id == NULL) {
		after_id = "";
		after_created = INT64_MIN + 1;
	}
	if (f->task_code != NULL)
		p_str(&p[k++], f->task_code);
	if (f->status != NULL)
		p_str(&p[k++], f->status);
	p_i64(&p[k++], &since);
	p_i64(&p[k++], &after_created);
	p_i64(&p[k++], &after_created);
	p_str(&p[k++], after_id);
	p_i64(&p[k++], &lim);
	return list_run(st, p, rows, max, n, why, whylen);
}

/* Execute st (a LIST_COLS statement) with parameters p; rows as in
 * records_db_list. */
static int
list_run(MYSQL_STMT *st, MYSQL_BIND *p, struct records_task *rows,
    size_t max, size_t *n, char *why, size_t whylen)
{
	struct task_out o;
	struct records_task t;
	struct traceparent tp;
	int frc;

	*n = 0;
	memset(&o, 0, sizeof(o));
	r_str(&o.b[0], t.request_id, sizeof(t.request_id), &o.len[0],
	    &o.nul[0]);
	r_str(&o.b[1], t.task_code, sizeof(t.task_code), &o.len[1], &o.nul[1]);
	r_str(&o.b[2], t.status, sizeof(t.status), &o.len[2], &o.nul[2]);
	r_str(&o.b[3], t.node, sizeof(t.node), &o.len[3], &o.nul[3]);
	r_i64(&o.b[4], &o.attempt, &o.nul[4]);
	r_i64(&o.b[5], &o.tt, &o.nul[5]);
	r_i64(&o.b[6], &o.cr, &o.nul[6]);
	r_i64(&o.b[7], &o.st, &o.nul[7]);
	r_i64(&o.b[8], &o.fi, &o.nul[8]);
	r_i64(&o.b[9], &o.du, &o.nul[9]);
	r_i64(&o.b[10], &o.ex, &o.nul[10]);
	r_str(&o.b[11], t.failure_code, sizeof(t.failure_code), &o.len[11],
	    &o.nul[11]);
	r_i64(&o.b[12], &o.mr, &o.nul[12]);
	r_str(&o.b[13], t.failure_reason, sizeof(t.failure_reason),
	    &o.len[13], &o.nul[13]);
	r_str(&o.b[14], t.traceparent, sizeof(t.traceparent), &o.len[14],
	    &o.nul[14]);
	if (mysql_stmt_bind_param(st, p) != 0 || mysql_stmt_execute(st) != 0 ||
	    mysql_stmt_bind_result(st, o.b) != 0 ||
	    mysql_stmt_store_result(st) != 0) {
		st_fail(st, why, whylen);
		return -1;
	}
	while (*n < max && ((frc = mysql_stmt_fetch(st)) == 0 ||
	    frc == MYSQL_DATA_TRUNCATED)) {
		term(t.request_id, sizeof(t.request_id), o.len[0], o.nul[0]);
		term(t.task_code, sizeof(t.task_code), o.len[1], o.nul[1]);
		term(t.status, sizeof(t.status), o.len[2], o.nul[2]);
		term(t.node, sizeof(t.node), o.len[3], o.nul[3]);
		term(t.failure_code, sizeof(t.failure_code), o.len[11],
		    o.nul[11]);
		term(t.failure_reason, sizeof(t.failure_reason), o.len[13],
		    o.nul[13]);
		term(t.traceparent, sizeof(t.traceparent), o.len[14],
		    o.nul[14]);
		/* A column is an answer from outside: what is not a
		 * version-00 traceparent is shown as none. */
		if (t.traceparent[0] != '\0' && traceparent_parse(
		    t.traceparent, strlen(t.traceparent), &tp, NULL) != 0)
			t.traceparent[0] = '\0';
		t.max_retries = o.nul[12] ? RECORDS_NULL : o.mr;
		t.attempt = o.nul[4] ? 0 : (int)o.attempt;
		t.trigger_time = o.nul[5] ? RECORDS_NULL : o.tt;
		t.created_at = o.nul[6] ? RECORDS_NULL : o.cr;
		t.started_at = o.nul[7] ? RECORDS_NULL : o.st;
		t.finished_at = o.nul[8] ? RECORDS_NULL : o.fi;
		t.duration_ms = o.nul[9] ? RECORDS_NULL : o.du;
		t.exit_code = o.nul[10] ? RECORDS_NULL : o.ex;
		rows[(*n)++] = t;
	}
	mysql_stmt_free_result(st);
	return 0;
}

int
records_db_list_app(struct records_db *db, const char *app_id,
    const char *statuses, const char *task_code, int64_t since_ms,
    int64_t before_created, const char *before_id, struct records_task *rows,
    size_t max, size_t *n, char *why, size_t whylen)
{
	MYSQL_BIND p[10];
	int64_t since = since_ms == RECORDS_NULL ? INT64_MIN + 1 : since_ms,
	    lim = (int64_t)max;
	enum records_apply rc;
	MYSQL_STMT *st = stmt(db, ST_LIST_APP, &rc, why, whylen);

	*n = 0;
	if (st == NULL)
		return -1;
	if (before_id == NULL) {
		before_id = "";
		before_created = INT64_MAX;
	}
	p_str(&p[0], app_id);
	p_i64(&p[1], &since);
	p_str(&p[2], task_code);
	p_str(&p[3], task_code);
	p_str(&p[4], statuses);
	p_str(&p[5], statuses);
	p_i64(&p[6], &before_created);
	p_i64(&p[7], &before_created);
	p_str(&p[8], before_id);
	p_i64(&p[9], &lim);
	return list_run(st, p, rows, max, n, why, whylen);
}

static struct records_stat *
stat_for(struct records_stat **v, size_t *n, const char *code)
{
	struct records_stat *nv;

	if (*n > 0 && strcmp((*v)[*n - 1].task_code, code) == 0)
		return &(*v)[*n - 1];
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].task_code, code) == 0)
			return &(*v)[i];
	if ((nv = reallocarray(*v, *n + 1, sizeof(**v))) == NULL)
		return NULL;
	*v = nv;
	memset(&nv[*n], 0, sizeof(nv[*n]));
	snprintf(nv[*n].task_code, sizeof(nv[*n].task_code), "%s", code);
	nv[*n].p50_ms = nv[*n].p95_ms = RECORDS_NULL;
	return &nv[(*n)++];
}

int
records_db_stats(struct records_db *db, int64_t since_ms,
    struct records_stat **out, size_t *n, char *why, size_t whylen)
{
	MYSQL_BIND p[1], r[4];
	my_bool nul[4];
	unsigned long len[4];
	char code[TASK_CODE_MAX + 1], status[17];
	long long attempt, dur;
	int64_t *durs = NULL;
	size_t nd = 0, cap = 0;
	struct records_stat *cur = NULL, *s;
	enum records_apply rc;
	MYSQL_STMT *st;
	int frc, ret = -1;

	*out = NULL;
	*n = 0;
	if (since_ms == RECORDS_NULL)
		since_ms = INT64_MIN + 1;
	if ((st = stmt(db, ST_STATS, &rc, why, whylen)) == NULL)
		return -1;
	p_i64(&p[0], &since_ms);
	r_str(&r[0], code, sizeof(code), &len[0], &nul[0]);
	r_str(&r[1], status, sizeof(status), &len[1], &nul[1]);
	r_i64(&r[2], &attempt, &nul[2]);
	r_i64(&r[3], &dur, &nul[3]);
	if (mysql_stmt_bind_param(st, p) || mysql_stmt_execute(st) ||
	    mysql_stmt_bind_result(st, r) || mysql_stmt_store_result(st)) {
		st_fail(st, why, whylen);
		return -1;
	}
	/* Rows come by code, then duration: percentiles per run of code. */
	while ((frc = mysql_stmt_fetch(st)) == 0 ||
	    frc == MYSQL_DATA_TRUNCATED) {
		term(code, sizeof(code), len[0], nul[0]);
		term(status, sizeof(status), len[1], nul[1]);
		if (cur == NULL || strcmp(cur->task_code, code) != 0) {
			if (cur != NULL) {
				cur->p50_ms = records_percentile(durs, nd, 50);
				cur->p95_ms = records_percentile(durs, nd, 95);
			}
			nd = 0;
			if ((cur = stat_for(out, n, code)) == NULL)
				goto nomem;
		}
		cur->count++;
		if (strcmp(status, "SUCCESS") == 0)
			cur->success++;
		else if (strcmp(status, "FAILED") == 0)
			cur->failed++;
		else
			cur->cancelled++;
		if (!nul[2] && attempt > 1)
			cur->retries += (long)attempt - 1;
		if (!nul[3]) {
			if (nd == cap) {
				int64_t *nv;

				cap = cap ? cap * 2 : 256;
				if ((nv = reallocarray(durs, cap,
				    sizeof(*durs))) == NULL)
					goto nomem;
				durs = nv;
			}
			durs[nd++] = dur;
		}
	}
	if (cur != NULL) {
		cur->p50_ms = records_percentile(durs, nd, 50);
		cur->p95_ms = records_percentile(durs, nd, 95);
	}
	mysql_stmt_free_result(st);
	if ((st = stmt(db, ST_STATS_CB, &rc, why, whylen)) == NULL)
		goto out;
	r_str(&r[0], code, sizeof(code), &len[0], &nul[0]);
	r_i64(&r[1], &attempt, &nul[1]);
	if (mysql_stmt_bind_param(st, p) || mysql_stmt_execute(st) ||
	    mysql_stmt_bind_result(st, r) || mysql_stmt_store_result(st)) {
		st_fail(st, why, whylen);
		goto out;
	}
	while ((frc = mysql_stmt_fetch(st)) == 0 ||
	    frc == MYSQL_DATA_TRUNCATED) {
		term(code, sizeof(code), len[0], nul[0]);
		if ((s = stat_for(out, n, code)) == NULL)
			goto nomem;
		s->callback_failures = (long)attempt;
	}
	mysql_stmt_free_result(st);
	ret = 0;
	goto out;
nomem:
	mysql_stmt_free_result(st);
	snprintf(why, whylen, "out of memory");
out:
	free(durs);
	if (ret != 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return ret;
}

int
records_db_purge(struct records_db *db, int64_t before_ms, long *deleted,
    char *why, size_t whylen)
{
	MYSQL_BIND p[1];

	*deleted = 0;
	p_i64(&p[0], &before_ms);
	if (records_db_begin(db, why, whylen) != RECORDS_APPLY_OK)
		return -1;
	if (run(db, ST_PURGE_ATT, p, why, whylen) != RECORDS_APPLY_OK ||
	    run(db, ST_PURGE_CB, p, why, whylen) != RECORDS_APPLY_OK ||
	    run(db, ST_PURGE_EXEC, p, why, whylen) != RECORDS_APPLY_OK) {
		records_db_rollback(db);
		return -1;
	}
	*deleted = (long)mysql_stmt_affected_rows(db->st[ST_PURGE_EXEC]);
	if (records_db_commit(db, why, whylen) != RECORDS_APPLY_OK)
		return -1;
	return 0;
}
