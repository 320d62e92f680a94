/*
 * records — the records interface (records.h): the embedded
 * implementation, the outbox of record files, their codec, and the record
 * writer thread that drains the outbox into MariaDB through
 * records_mariadb.h (and nothing else of records_mariadb.c).
 *
 * Threads: records_append() runs on the daemon's main thread only; the
 * writer thread owns its own directory handles and database connection,
 * and shares with the main thread only the stop flag and the wake-up
 * condition (under r->mu).  The spool handle is read, never changed.
 */
#include "records/records.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/jsontext.h"
#include "core/traceparent.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "records/records_mariadb.h"

#define BACKOFF_MIN_MS	500
#define BACKOFF_MAX_MS	30000
#define RESCAN_MS	1000	/* other daemons' records: polled */
#define NODE_SEEN_MS	10000	/* node_registry refresh */
#define DEPTH_EVERY_MS	2000	/* outbox depth gauge refresh (at most) */

struct records {
	const struct records_ops *ops;

	struct config cfg;		/* the writer's copy */
	const struct spool *sp;
	int recfd;			/* outbox/records */
	int claimfd;			/* outbox/records-claimed */
	int mine;		/* outbox/records-claimed/<node>, locked */
	unsigned long seq;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, kick;
};

struct records_ops {
	int (*start)(struct records *);
	int (*append)(struct records *, enum records_kind, const char *,
	    const struct task *, const struct task_attempt *, const char *,
	    size_t);
	void (*free)(struct records *);
};

/* --- embedded: the result files are the record --- */

static int
emb_start(struct records *r)
{
	(void)r;
	return 0;
}

static int
emb_append(struct records *r, enum records_kind k, const char *id,
    const struct task *t, const struct task_attempt *a, const char *env,
    size_t len)
{
	(void)r; (void)k; (void)id; (void)t; (void)a; (void)env; (void)len;
	return 0;
}

static void
emb_free(struct records *r)
{
	free(r);
}

static const struct records_ops embedded_ops = {
	emb_start, emb_append, emb_free
};

/* --- record file names and codec --- */

int
records_file_name(char *out, size_t outlen, int64_t ms, unsigned long seq,
    const char *node)
{
	int n = snprintf(out, outlen, "%015lld.%09lu.%s.json", (long long)ms,
	    seq % 1000000000UL, node);

	if (n < 0 || (size_t)n >= outlen) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static void
put_ms(json_t *o, const char *k, int64_t ms)
{
	char b[TSTIME_BUF];

	json_object_set_new(o, k, ms >= 0 ?
	    json_string(tstime_format_ms(b, sizeof(b), ms)) : json_null());
}

static void
put_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, v != NULL ? json_string(v) : json_null());
}

/* Encode a RUNNING or RETRY record into out.  Returns 0 or -1 (ENOMEM). */
static int
encode_attempt(struct buf *out, const char *state, const char *id,
    const struct task *t, const struct task_attempt *a)
{
	json_t *o = json_object(), *ao = NULL;
	struct buf ab;
	char *s = NULL;
	int rc = -1;

	buf_init(&ab, 0);
	if (o == NULL || task_attempt_encode(a, &ab) != 0 ||
	    (ao = jsontext_loadb(ab.data, ab.len, 0, NULL)) == NULL)
		goto out;
	json_object_set_new(o, "v", json_integer(1));
	put_str(o, "state", state);
	put_str(o, "requestId", id);
	put_str(o, "taskCode", t->task_code);
	put_str(o, "jobCode", t->job_code);
	put_str(o, "appId", t->app_id);
	if (t->traceparent != NULL)
		put_str(o, "traceparent", t->traceparent);
	put_ms(o, "createdAt", t->created_ms);
	put_ms(o, "triggerTime", t->trigger_ms);
	json_object_set_new(o, "maxRetries", t->max_retries >= 0 ?
	    json_integer(t->max_retries) : json_null());
	json_object_set_new(o, "attempt", ao);
	ao = NULL;
	if ((s = json_dumps(o, JSON_COMPACT)) != NULL && buf_puts(out, s) == 0)
		rc = 0;
out:
	free(s);
	json_decref(ao);
	json_decref(o);
	buf_fini(&ab);
	if (rc != 0)
		errno = ENOMEM;
	return rc;
}

/* Encode a RESULT record: the envelope wrapped with the ids it lacks. */
static int
encode_result(struct buf *out, const char *id, const struct task *t,
    const char *env, size_t len)
{
	json_t *o = json_object(), *e = jsontext_loadb(env, len, 0, NULL);
	char *s = NULL;
	int rc = -1;

	if (o == NULL || e == NULL) {
		json_decref(o);
		json_decref(e);
		errno = e == NULL ? EINVAL : ENOMEM;
		return -1;
	}
	json_object_set_new(o, "v", json_integer(1));
	put_str(o, "state", "RESULT");
	put_str(o, "requestId", id);
	put_str(o, "jobCode", t != NULL ? t->job_code : NULL);
	put_str(o, "appId", t != NULL ? t->app_id : NULL);
	json_object_set_new(o, "result", e);
	if ((s = json_dumps(o, JSON_COMPACT)) != NULL && buf_puts(out, s) == 0)
		rc = 0;
	free(s);
	json_decref(o);
	if (rc != 0)
		errno = ENOMEM;
	return rc;
}

static char *
dup_str(json_t *v)
{
	return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

/* An optional RFC 3339 time member → ms or RECORDS_NULL; -1 if bad. */
static int
get_ms(json_t *o, const char *k, int64_t *out)
{
	json_t *v = json_object_get(o, k);

	*out = RECORDS_NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v) ||
	    tstime_parse_rfc3339(json_string_value(v), out) != 0)
		return -1;
	return 0;
}

static int64_t
get_int(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) :
	    RECORDS_NULL;
}

static int
bad(char *why, size_t whylen, const char *field, const char *rule)
{
	snprintf(why, whylen, "%s: %s", field, rule);
	return -1;
}

/*
 * An optional "traceparent" member of o → *out (new, canonical version 00,
 * or NULL when absent or null).  Returns 0, or -1 with why naming field
 * when the value is not a W3C traceparent (core/traceparent.h: W3C Trace
 * Context Level 1, §3.2): a record file is read back from disk, and
 * what goes into the 55-character column is never longer.
 */
static int
get_traceparent(json_t *o, const char *field, char **out, char *why,
    size_t whylen)
{
	json_t *v = json_object_get(o, "traceparent");
	struct traceparent tp;
	char canon[TRACEPARENT_LEN + 1];
	const char *rule = "must be a string";

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v) || traceparent_parse(json_string_value(v),
	    json_string_length(v), &tp, &rule) != 0)
		return bad(why, whylen, field, rule);
	traceparent_format(&tp, canon);
	if ((*out = strdup(canon)) == NULL)
		return bad(why, whylen, field, "out of memory");
	return 0;
}

static int
decode_attempt(json_t *ao, struct records_attempt_row *ar, int ended,
    char *why, size_t whylen)
{
	json_t *v = json_object_get(ao, "attempt");

	if (!json_is_object(ao))
		return bad(why, whylen, "attempt", "must be an object");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > 1000000)
		return bad(why, whylen, "attempt.attempt",
		    "must be an integer 1..1000000");
	ar->attempt = (int)json_integer_value(v);
	ar->node = dup_str(json_object_get(ao, "node"));
	if (get_ms(ao, "startedAt", &ar->started_at) ||
	    get_ms(ao, "finishedAt", &ar->finished_at) ||
	    get_ms(ao, "retryAt", &ar->retry_at))
		return bad(why, whylen, "attempt times", "must be RFC 3339 "
		    "or null");
	ar->duration_ms = get_int(ao, "durationMs");
	ar->exit_code = get_int(ao, "exitCode");
	ar->sig = get_int(ao, "signal");
	ar->reason = dup_str(json_object_get(ao, "reason"));
	if (get_traceparent(ao, "attempt.traceparent", &ar->traceparent, why,
	    whylen) != 0)
		return -1;
	if (ended) {
		ar->state = dup_str(json_object_get(ao, "outcome"));
		ar->fence = 3;
	} else {
		ar->state = strdup("RUNNING");
		ar->fence = 1;
	}
	if (ar->state == NULL)
		return bad(why, whylen, "attempt.outcome", "must be a string");
	return 0;
}

static int
decode_result(json_t *o, struct records_row *row, char *why, size_t whylen)
{
	json_t *e = json_object_get(o, "result"), *arr, *fr, *res;
	size_t i;

	if (!json_is_object(e))
		return bad(why, whylen, "result", "must be an object");
	row->task_code = dup_str(json_object_get(e, "taskCode"));
	row->status = dup_str(json_object_get(e, "status"));
	row->node = dup_str(json_object_get(e, "node"));
	if (row->task_code == NULL || row->status == NULL)
		return bad(why, whylen, "result.taskCode/status",
		    "must be strings");
	if (get_ms(e, "createdAt", &row->created_at) ||
	    get_ms(e, "startedAt", &row->started_at) ||
	    get_ms(e, "finishedAt", &row->finished_at) ||
	    get_ms(e, "triggerTime", &row->trigger_time))
		return bad(why, whylen, "result times", "must be RFC 3339 or "
		    "null");
	if (get_traceparent(e, "result.traceparent", &row->traceparent, why,
	    whylen) != 0)
		return -1;
	row->duration_ms = get_int(e, "durationMs");
	row->max_retries = get_int(e, "maxRetries");
	row->attempt = (int)(get_int(e, "attempt") == RECORDS_NULL ? 0 :
	    get_int(e, "attempt"));
	fr = json_object_get(e, "failureReason");
	if (json_is_object(fr)) {
		row->failure_code = dup_str(json_object_get(fr, "code"));
		row->failure_reason = dup_str(json_object_get(fr, "message"));
	}
	res = json_object_get(e, "result");
	if (res != NULL && !json_is_null(res))
		row->result_summary = json_dumps(res, JSON_COMPACT |
		    JSON_ENCODE_ANY);
	arr = json_object_get(e, "attempts");
	if (!json_is_array(arr))
		return bad(why, whylen, "result.attempts", "must be an array");
	if (json_array_size(arr) > 0) {
		row->att = calloc(json_array_size(arr), sizeof(*row->att));
		if (row->att == NULL)
			return bad(why, whylen, "result", "out of memory");
	}
	for (i = 0; i < json_array_size(arr); i++) {
		/* Counted before it is decoded: what a failing attempt has
		 * already copied (its node, ...) is freed with the row. */
		row->natt++;
		if (decode_attempt(json_array_get(arr, i), &row->att[i], 1, why,
		    whylen) != 0)
			return -1;
	}
	if (row->natt > 0) {
		row->exit_code = row->att[row->natt - 1].exit_code;
		if (row->attempt == 0)
			row->attempt = row->att[row->natt - 1].attempt;
	}
	row->fence = (int64_t)row->attempt * 4 + 3;
	return 0;
}

/* The members of a CALLBACK record into row->cb. */
static int
decode_callback(json_t *o, struct records_row *row, char *why,
    size_t whylen)
{
	struct records_callback_row *c = calloc(1, sizeof(*c));

	if ((row->cb = c) == NULL)
		return bad(why, whylen, "record", "out of memory");
	c->delivery_id = dup_str(json_object_get(o, "deliveryId"));
	c->url = dup_str(json_object_get(o, "url"));
	c->state = dup_str(json_object_get(o, "status"));
	c->last_error = dup_str(json_object_get(o, "lastError"));
	c->attempts = get_int(o, "attempts");
	c->last_status = get_int(o, "lastHttpStatus");
	if (c->delivery_id == NULL || c->url == NULL || c->state == NULL)
		return bad(why, whylen, "deliveryId/url/status", "must be "
		    "strings");
	if (c->attempts == RECORDS_NULL)
		return bad(why, whylen, "attempts", "must be an integer");
	if (get_ms(o, "nextTryAt", &c->next_try_at) || get_ms(o, "updatedAt",
	    &c->updated_at) || c->updated_at == RECORDS_NULL)
		return bad(why, whylen, "nextTryAt/updatedAt", "must be RFC "
		    "3339 (updatedAt not null)");
	return 0;
}

/* The members of a DEFINITION record into row->def. */
static int
decode_definition(json_t *o, struct records_row *row, char *why,
    size_t whylen)
{
	struct records_definition_row *d = calloc(1, sizeof(*d));
	json_t *def = json_object_get(o, "definition");

	if ((row->def = d) == NULL)
		return bad(why, whylen, "record", "out of memory");
	d->job_code = dup_str(json_object_get(o, "jobCode"));
	d->task_code = dup_str(json_object_get(o, "taskCode"));
	d->schedule = dup_str(json_object_get(o, "schedule"));
	d->enabled = json_is_true(json_object_get(o, "enabled"));
	if (d->job_code == NULL || d->task_code == NULL)
		return bad(why, whylen, "jobCode/taskCode", "must be strings");
	if (json_is_object(def) && (d->definition = json_dumps(def,
	    JSON_COMPACT)) == NULL)
		return bad(why, whylen, "record", "out of memory");
	if (!json_is_object(def) && !json_is_null(def))
		return bad(why, whylen, "definition", "must be an object or "
		    "null (removed)");
	if (get_ms(o, "updatedAt", &d->updated_at) || d->updated_at ==
	    RECORDS_NULL)
		return bad(why, whylen, "updatedAt", "must be RFC 3339");
	return 0;
}

int
records_decode(const char *data, size_t len, struct records_row *row,
    char *why, size_t whylen)
{
	json_t *o, *v;
	json_error_t je;
	const char *state;
	int rc = -1;

	memset(row, 0, sizeof(*row));
	row->trigger_time = row->created_at = row->started_at = RECORDS_NULL;
	row->finished_at = row->duration_ms = row->exit_code = RECORDS_NULL;
	row->max_retries = RECORDS_NULL;
	o = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (o == NULL) {
		snprintf(why, whylen, "json: %s (line %d)", je.text, je.line);
		return -1;
	}
	v = json_object_get(o, "v");
	if (!json_is_object(o) || !json_is_integer(v) ||
	    json_integer_value(v) != 1) {
		bad(why, whylen, "v", "must be 1 (record format version)");
		goto out;
	}
	row->request_id = dup_str(json_object_get(o, "requestId"));
	if (row->request_id == NULL) {
		bad(why, whylen, "requestId", "must be a string");
		goto out;
	}
	row->app_id = dup_str(json_object_get(o, "appId"));
	row->job_code = dup_str(json_object_get(o, "jobCode"));
	state = json_string_value(json_object_get(o, "state"));
	if (state != NULL && strcmp(state, "CALLBACK") == 0) {
		rc = decode_callback(o, row, why, whylen);
		goto out;
	}
	if (state != NULL && strcmp(state, "DEFINITION") == 0) {
		rc = decode_definition(o, row, why, whylen);
		goto out;
	}
	if (state != NULL && strcmp(state, "RESULT") == 0) {
		if (decode_result(o, row, why, whylen) != 0)
			goto out;
	} else if (state != NULL && (strcmp(state, "RUNNING") == 0 ||
	    strcmp(state, "PENDING") == 0)) {
		int ended = strcmp(state, "PENDING") == 0;
		struct records_attempt_row *ar;

		row->status = strdup(state);
		row->task_code = dup_str(json_object_get(o, "taskCode"));
		if (row->task_code == NULL) {
			bad(why, whylen, "taskCode", "must be a string");
			goto out;
		}
		if (get_ms(o, "createdAt", &row->created_at) ||
		    get_ms(o, "triggerTime", &row->trigger_time)) {
			bad(why, whylen, "createdAt/triggerTime", "must be RFC "
			    "3339 or null");
			goto out;
		}
		row->max_retries = get_int(o, "maxRetries");
		if (get_traceparent(o, "traceparent", &row->traceparent, why,
		    whylen) != 0)
			goto out;
		if ((row->att = calloc(1, sizeof(*row->att))) == NULL) {
			bad(why, whylen, "record", "out of memory");
			goto out;
		}
		ar = row->att;
		row->natt = 1;
		if (decode_attempt(json_object_get(o, "attempt"), ar, ended,
		    why, whylen) != 0)
			goto out;
		row->attempt = ar->attempt;
		row->node = ar->node != NULL ? strdup(ar->node) : NULL;
		row->started_at = ar->started_at;
		if (ended) {
			row->exit_code = ar->exit_code;
			row->duration_ms = ar->duration_ms;
		}
		row->fence = (int64_t)ar->attempt * 4 + (ended ? 2 : 1);
	} else {
		bad(why, whylen, "state", "must be RUNNING, PENDING or RESULT");
		goto out;
	}
	if (row->trigger_time == RECORDS_NULL)
		row->trigger_time = row->created_at;
	if (row->trigger_time == RECORDS_NULL)
		row->trigger_time = row->started_at;
	if (row->trigger_time == RECORDS_NULL)
		row->trigger_time = 0;
	rc = 0;
out:
	json_decref(o);
	if (rc != 0)
		records_row_fini(row);
	return rc;
}

void
records_row_fini(struct records_row *row)
{
	if (row == NULL)
		return;
	if (row->def != NULL) {
		free(row->def->job_code);
		free(row->def->task_code);
		free(row->def->schedule);
		free(row->def->definition);
		free(row->def);
	}
	if (row->cb != NULL) {
		free(row->cb->delivery_id);
		free(row->cb->url);
		free(row->cb->state);
		free(row->cb->last_error);
		free(row->cb);
	}
	free(row->request_id);
	free(row->app_id);
	free(row->task_code);
	free(row->job_code);
	free(row->status);
	free(row->node);
	free(row->failure_code);
	free(row->failure_reason);
	free(row->result_summary);
	free(row->traceparent);
	for (size_t i = 0; i < row->natt; i++) {
		free(row->att[i].node);
		free(row->att[i].state);
		free(row->att[i].reason);
		free(row->att[i].traceparent);
	}
	/* An attempt half-decoded when decoding failed. */
	if (row->att != NULL && row->natt == 0) {
		free(row->att[0].node);
		free(row->att[0].state);
		free(row->att[0].reason);
		free(row->att[0].traceparent);
	}
	free(row->att);
	memset(row, 0, sizeof(*row));
}

/* --- MariaDB: the outbox and its writer --- */

/*
 * The writer protocol without fsync, for RUNNING and PENDING records: a
 * crash may lose one (never half of one: tmp + rename), which costs only
 * an intermediate state, since the RESULT record — published durably —
 * carries every attempt.  Halves the fsyncs that records add per task.
 */
static int
publish_nosync(struct records *r, const char *name, const struct buf *b)
{
	char tmp[SPOOL_NAME_MAX + 8];
	int fd, tdir = r->sp->dir[SPOOL_TMP];
	ssize_t w;

	snprintf(tmp, sizeof(tmp), "rec.%s", name);
	fd = openat(tdir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0640);
	if (fd < 0)
		return -1;
	w = write(fd, b->data, b->len);
	if (w < 0 || (size_t)w != b->len || close(fd) != 0 ||
	    renameat(tdir, tmp, r->recfd, name) != 0) {
		int e = w >= 0 && (size_t)w != b->len ? ENOSPC : errno;

		if (w < 0 || (size_t)w != b->len)
			close(fd);
		(void)unlinkat(tdir, tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

static int
db_append(struct records *r, enum records_kind kind, const char *id,
    const struct task *t, const struct task_attempt *a, const char *env,
    size_t len)
{
	struct buf b;
	struct task_attempt run;
	char name[SPOOL_NAME_MAX];
	int rc, e;

	buf_init(&b, RECORDS_FILE_MAX);
	if (kind == RECORDS_RUNNING && a == NULL) {
		/* The attempt starting now: t's next one, on this node. */
		memset(&run, 0, sizeof(run));
		run.attempt = (int)t->nattempts + 1;
		snprintf(run.node, sizeof(run.node), "%s", r->sp->node);
		run.start_ms = tstime_now_ms();
		run.end_ms = run.retry_at_ms = -1;
		run.exit_code = -1;
		a = &run;
	}
	if (kind == RECORDS_RESULT)
		rc = encode_result(&b, id, t, env, len);
	else
		rc = encode_attempt(&b, kind == RECORDS_RUNNING ? "RUNNING" :
		    "PENDING", id, t, a);
	if (rc == 0)
		rc = records_file_name(name, sizeof(name), tstime_now_ms(),
		    r->seq++, r->sp->node);
	if (rc == 0 && kind == RECORDS_RESULT)
		rc = spool_publish(r->sp, r->recfd, name, b.data, b.len, -1, 0);
	else if (rc == 0)
		rc = publish_nosync(r, name, &b);
	e = errno;
	buf_fini(&b);
	if (rc == 0) {
		pthread_mutex_lock(&r->mu);
		r->kick = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	errno = e;
	return rc;
}

/* Publish the record o (stolen) into outbox/records/ with the writer
 * protocol, named with node "<sp->node>~<tag>".  0 or -1 with errno. */
static int
publish_other(const struct spool *sp, json_t *o, const char *tag)
{
	static unsigned long seq;	/* shared by the threads: atomic */
	char name[SPOOL_NAME_MAX], node[SPOOL_NAME_MAX];
	char *text = json_dumps(o, JSON_COMPACT);
	int fd, rc = -1, e = ENOMEM;

	json_decref(o);
	snprintf(node, sizeof(node), "%s~%s", sp->node, tag);
	if (text != NULL && records_file_name(name, sizeof(name),
	    tstime_now_ms(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED),
	    node) != 0)
		e = EINVAL;
	else if (text != NULL && (fd = openat(sp->dir[SPOOL_OUTBOX],
	    RECORDS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) >= 0) {
		rc = spool_publish(sp, fd, name, text, strlen(text), -1, 0);
		e = errno;
		close(fd);
	} else if (text != NULL)
		e = errno;
	free(text);
	errno = e;
	return rc;
}

int
records_append_callback(const struct spool *sp,
    const struct records_callback *cb)
{
	json_t *o = json_object();

	json_object_set_new(o, "v", json_integer(1));
	json_object_set_new(o, "state", json_string("CALLBACK"));
	put_str(o, "requestId", cb->request_id);
	put_str(o, "deliveryId", cb->delivery_id);
	put_str(o, "url", cb->url);
	put_str(o, "status", cb->state);
	json_object_set_new(o, "attempts", json_integer(cb->attempts));
	json_object_set_new(o, "lastHttpStatus", cb->last_http > 0 ?
	    json_integer(cb->last_http) : json_null());
	put_str(o, "lastError", cb->last_error);
	put_ms(o, "nextTryAt", cb->next_try_ms);
	put_ms(o, "updatedAt", cb->updated_ms);
	return publish_other(sp, o, "cb");
}

int
records_append_definition(const struct spool *sp, const char *job_code,
    const char *task_code, const char *schedule, int enabled,
    const char *definition, size_t len, int64_t updated_ms)
{
	json_t *o = json_object(), *d = NULL;

	if (definition != NULL && (d = jsontext_loadb(definition, len, 0,
	    NULL)) == NULL) {
		json_decref(o);
		errno = EINVAL;
		return -1;
	}
	json_object_set_new(o, "v", json_integer(1));
	json_object_set_new(o, "state", json_string("DEFINITION"));
	put_str(o, "requestId", job_code);
	put_str(o, "jobCode", job_code);
	put_str(o, "taskCode", task_code);
	put_str(o, "schedule", schedule);
	json_object_set_new(o, "enabled", json_boolean(enabled));
	json_object_set_new(o, "definition", d != NULL ? d : json_null());
	put_ms(o, "updatedAt", updated_ms);
	return publish_other(sp, o, "job");
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
is_record_name(const char *n)
{
	size_t l = strlen(n);

	return n[0] >= '0' && n[0] <= '9' && l > 5 &&
	    strcmp(n + l - 5, ".json") == 0;
}

/* Names of the record files in dirfd, sorted; *n of them (at most max).
 * Returns new (each and the array: free_names), or NULL (none or error). */
static char **
list_names(int dirfd, size_t max, size_t *n)
{
	DIR *d = spool_opendir(dirfd);
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (!is_record_name(de->d_name))
			continue;
		if (*n == cap) {
			char **nv;

			cap = cap ? cap * 2 : 64;
			nv = reallocarray(v, cap, sizeof(*v));
			if (nv == NULL)
				break;
			v = nv;
		}
		if ((v[*n] = strdup(de->d_name)) == NULL)
			break;
		(*n)++;
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof(*v), name_cmp);
	/* Keep the oldest max (names sort in time order). */
	while (*n > max)
		free(v[--(*n)]);
	return v;
}

static void
free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * Claimed directories of writers that are gone (their flock is free):
 * move their files back to outbox/records/ for anyone to claim.
 */
static void
reclaim_orphans(struct records *r)
{
	DIR *d = spool_opendir(r->claimfd);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int fd;
		char **v;
		size_t n;

		if (de->d_name[0] == '.' ||
		    strcmp(de->d_name, r->sp->node) == 0)
			continue;
		fd = openat(r->claimfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			v = list_names(fd, (size_t)-1, &n);
			for (size_t i = 0; i < n; i++)
				(void)renameat(fd, v[i], r->recfd, v[i]);
			free_names(v, n);
			if (n > 0)
				log_info("records: %zu record(s) claimed by "
				    "stopped writer %s put back", n,
				    de->d_name);
		}
		close(fd);
	}
	closedir(d);
}

/* Record files in dirfd (0 when it cannot be read). */
static long
count_records(int dirfd)
{
	DIR *d = spool_opendir(dirfd);
	struct dirent *de;
	long n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += is_record_name(de->d_name);
	closedir(d);
	return n;
}

/* Claim up to RECORDS_BATCH files: rename records/X → claimed/<self>/X.
 * Files already in claimed/<self>/ (a previous life) come first. */
static char **
claim_batch(struct records *r, size_t *n)
{
	char **have, **v;
	size_t nh, nv, i;

	have = list_names(r->mine, RECORDS_BATCH, &nh);
	*n = nh;
	if (nh >= RECORDS_BATCH)
		return have;
	v = list_names(r->recfd, RECORDS_BATCH - nh, &nv);
	for (i = 0; i < nv; i++) {
		if (renameat(r->recfd, v[i], r->mine, v[i]) != 0)
			continue;	/* ENOENT: another writer has it */
		if (nh % 64 == 0) {
			char **nn = reallocarray(have, nh + 64, sizeof(*have));

			if (nn == NULL) {
				(void)renameat(r->mine, v[i], r->recfd, v[i]);
				continue;
			}
			have = nn;
		}
		have[nh++] = v[i];
		v[i] = NULL;
	}
	free_names(v, nv);
	*n = nh;
	if (nh > 1)
		qsort(have, nh, sizeof(*have), name_cmp);
	return have;
}

static int64_t
jitter(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ms - (int64_t)((unsigned long)ts.tv_nsec % (unsigned long)
	    (ms / 5 + 1));
}

/* Sleep up to ms unless stopped or kicked.  Returns 1 when stopping. */
static int
wait_ms(struct records *r, int64_t ms, int kickable)
{
	struct timespec ts;
	int stop;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&r->mu);
	while (!r->stop && !(kickable && r->kick))
		if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == ETIMEDOUT)
			break;
	if (kickable)
		r->kick = 0;
	stop = r->stop;
	pthread_mutex_unlock(&r->mu);
	return stop;
}

/*
 * Apply the claimed files names[0..n) in one transaction.  A file that
 * does not decode, or whose values the server rejects, goes to corrupt/
 * (the batch is then redone without it).  Returns RECORDS_APPLY_OK when
 * the batch is committed (and its files removed), RETRY when the link
 * failed (the files stay claimed).
 */
static enum records_apply
apply_batch(struct records *r, struct records_db *db, char **names, size_t n,
    char *why, size_t whylen)
{
	struct records_row *rows = calloc(n, sizeof(*rows));
	char *ok = calloc(n, 1), rwhy[1024];
	enum records_apply rc = RECORDS_APPLY_OK;
	size_t i;

	if (rows == NULL || ok == NULL) {
		free(rows);
		free(ok);
		snprintf(why, whylen, "out of memory");
		return RECORDS_APPLY_RETRY;
	}
	for (i = 0; i < n; i++) {
		size_t len;
		char *data = spool_read_file(r->mine, names[i],
		    RECORDS_FILE_MAX, &len);

		if (data == NULL) {
			if (errno != ENOENT) {
				snprintf(rwhy, sizeof(rwhy), "unreadable: %s",
				    strerror(errno));
				(void)spool_quarantine(r->sp, r->mine,
				    names[i], rwhy);
			}
			continue;
		}
		if (records_decode(data, len, &rows[i], rwhy,
		    sizeof(rwhy)) != 0) {
			log_warnx("records: %s: %s; moved to corrupt/",
			    names[i], rwhy);
			(void)spool_quarantine(r->sp, r->mine, names[i], rwhy);
		} else
			ok[i] = 1;
		free(data);
	}
again:
	if ((rc = records_db_begin(db, why, whylen)) != RECORDS_APPLY_OK)
		goto out;
	for (i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		rc = records_db_apply(db, &rows[i], rwhy, sizeof(rwhy));
		if (rc == RECORDS_APPLY_RETRY) {
			snprintf(why, whylen, "%s", rwhy);
			records_db_rollback(db);
			goto out;
		}
		if (rc == RECORDS_APPLY_REJECT) {
			char reason[1200];

			records_db_rollback(db);
			snprintf(reason, sizeof(reason), "MariaDB rejected the "
			    "record: %s", rwhy);
			log_warnx("records: %s: %s; moved to corrupt/",
			    names[i], reason);
			(void)spool_quarantine(r->sp, r->mine, names[i],
			    reason);
			ok[i] = 0;
			goto again;
		}
	}
	if ((rc = records_db_commit(db, why, whylen)) != RECORDS_APPLY_OK)
		goto out;
	for (i = 0; i < n; i++)
		if (ok[i] && unlinkat(r->mine, names[i], 0) != 0 &&
		    errno != ENOENT)
			log_warn("records: remove %s", names[i]);
out:
	for (i = 0; i < n; i++)
		records_row_fini(&rows[i]);
	free(rows);
	free(ok);
	return rc;
}

/* Publish taskspool_outbox_depth{kind="record"}: what waits in
 * outbox/records/ and in this writer's claimed batch. */
static void
update_depth(struct records *r)
{
	metrics_outbox_depth("record", count_records(r->recfd) +
	    count_records(r->mine));
}

/* The backoff sleep of ms while MariaDB is down, in steps of at most
 * DEPTH_EVERY_MS so that the depth gauge follows the outbox's growth.
 * Returns 1 when stopping. */
static int
backoff_wait(struct records *r, int64_t ms)
{
	while (ms > 0) {
		int64_t step = ms > DEPTH_EVERY_MS ? DEPTH_EVERY_MS : ms;

		if (wait_ms(r, step, 0))
			return 1;
		ms -= step;
		update_depth(r);
	}
	return 0;
}

/*
 * The row of request id from its result file (results/<id>.json) and its
 * task file in done|failed|cancelled/ (appId, jobCode): decoded into row,
 * as a RESULT record of it would be.  Returns 0, or -1 (unreadable or
 * malformed: a torn result is not a row; the reader's business).
 */
static int
row_from_result(struct records *r, const char *id, struct records_row *row)
{
	struct buf rec;
	struct task t;
	struct task_error te;
	enum spool_dir where;
	char name[SPOOL_NAME_MAX], why[256], *env, *tf = NULL;
	size_t len, tlen = 0;
	int rc = -1, have_t = 0;

	snprintf(name, sizeof(name), "%s.json", id);
	env = spool_read_file(r->sp->dir[SPOOL_RESULTS], name,
	    RECORDS_FILE_MAX, &len);
	if (env == NULL)
		return -1;
	task_init(&t);
	if (spool_locate(r->sp, id, &where, NULL) == 0 && (where ==
	    SPOOL_DONE || where == SPOOL_FAILED || where == SPOOL_CANCELLED) &&
	    (tf = spool_read_file(r->sp->dir[where], name, TASK_FILE_MAX,
	    &tlen)) != NULL && task_decode(tf, tlen, &t, &te) == 0)
		have_t = 1;
	buf_init(&rec, RECORDS_FILE_MAX);
	if (encode_result(&rec, id, have_t ? &t : NULL, env, len) == 0 &&
	    records_decode(rec.data, rec.len, row, why, sizeof(why)) == 0)
		rc = 0;
	buf_fini(&rec);
	task_fini(&t);
	free(tf);
	free(env);
	return rc;
}

/*
 * The reconcile pass: every result file (modified at or after since_ms,
 * epoch ms; 0 = all) whose task_execution row is missing or not terminal
 * gets its row from the file, in transactions of RECORDS_BATCH rows.  So
 * a RESULT record lost to a full disk (records_append failed) or to a
 * hand-removed outbox file is repaired, and the rows end equal to the
 * result files (DESIGN §1: the spool is the source of truth).  Applying
 * what a RESULT record would apply is idempotent (fences).  Returns OK,
 * or RETRY with why when the link failed.
 */
static enum records_apply
reconcile(struct records *r, struct records_db *db, int64_t since_ms,
    char *why, size_t whylen)
{
	struct records_row *rows;
	enum records_apply rc = RECORDS_APPLY_OK;
	struct dirent *de;
	long checked = 0, repaired = 0, bad = 0;
	size_t n = 0;
	DIR *dp;

	if ((dp = spool_opendir(r->sp->dir[SPOOL_RESULTS])) == NULL)
		return RECORDS_APPLY_OK;	/* tried again next pass */
	if ((rows = calloc(RECORDS_BATCH, sizeof(*rows))) == NULL) {
		closedir(dp);
		return RECORDS_APPLY_OK;
	}
	for (;;) {
		char id[TASK_ID_MAX + 1];
		size_t l;
		struct stat st;
		int term;

		de = readdir(dp);
		if (de != NULL) {
			l = strlen(de->d_name);
			if (l <= 5 || l - 5 > TASK_ID_MAX ||
			    strcmp(de->d_name + l - 5, ".json") != 0)
				continue;
			memcpy(id, de->d_name, l - 5);
			id[l - 5] = '\0';
			if (!spool_id_ok(id))
				continue;
			if (since_ms > 0 && (fstatat(r->sp->dir[SPOOL_RESULTS],
			    de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			    (int64_t)st.st_mtim.tv_sec * 1000 < since_ms))
				continue;
			checked++;
			if ((term = records_db_terminal(db, id, why,
			    whylen)) < 0) {
				rc = RECORDS_APPLY_RETRY;
				break;
			}
			if (term == 1)
				continue;
			if (row_from_result(r, id, &rows[n]) != 0) {
				records_row_fini(&rows[n]);
				bad++;
				continue;
			}
			if (++n < RECORDS_BATCH)
				continue;
		}
		if (n > 0) {
			char rwhy[1024];

			if ((rc = records_db_begin(db, why, whylen)) !=
			    RECORDS_APPLY_OK)
				break;
			for (size_t i = 0; i < n; i++) {
				enum records_apply a = records_db_apply(db,
				    &rows[i], rwhy, sizeof(rwhy));

				if (a == RECORDS_APPLY_RETRY) {
					snprintf(why, whylen, "%s", rwhy);
					records_db_rollback(db);
					rc = RECORDS_APPLY_RETRY;
					break;
				}
				if (a == RECORDS_APPLY_REJECT) {
					/* Rolled back with the rest: this
					 * batch is redone row by row. */
					log_warnx("records: reconcile: %s: "
					    "MariaDB rejected the row: %s",
					    rows[i].request_id, rwhy);
					records_row_fini(&rows[i]);
					memmove(&rows[i], &rows[i + 1],
					    (n - i - 1) * sizeof(*rows));
					memset(&rows[n - 1], 0,
					    sizeof(*rows));
					n--;
					records_db_rollback(db);
					i = (size_t)-1;
					if ((rc = records_db_begin(db, why,
					    whylen)) != RECORDS_APPLY_OK)
						break;
				}
			}
			if (rc == RECORDS_APPLY_OK && (rc = records_db_commit(
			    db, why, whylen)) == RECORDS_APPLY_OK)
				repaired += (long)n;
			for (size_t i = 0; i < n; i++)
				records_row_fini(&rows[i]);
			n = 0;
			if (rc != RECORDS_APPLY_OK)
				break;
		}
		if (de == NULL)
			break;
	}
	for (size_t i = 0; i < n; i++)
		records_row_fini(&rows[i]);
	free(rows);
	closedir(dp);
	if (repaired > 0 || bad > 0)
		log_info("records: reconcile: %ld row(s) written from results/ "
		    "(missing or not terminal) of %ld checked%s", repaired,
		    checked, bad > 0 ? "; some result files unreadable" : "");
	return rc;
}

static void *
writer_main(void *arg)
{
	struct records *r = arg;
	struct records_db *db = NULL;
	int64_t backoff = BACKOFF_MIN_MS, started = tstime_now_ms();
	int64_t next_seen = 0, next_orphans = 0, next_depth = 0;
	int64_t next_reconcile = 0, reconciled_ms = 0;
	char why[1024];
	int down = 0;

	for (;;) {
		char **names;
		size_t n = 0;
		enum records_apply rc;

		pthread_mutex_lock(&r->mu);
		if (r->stop) {
			pthread_mutex_unlock(&r->mu);
			break;
		}
		pthread_mutex_unlock(&r->mu);
		if (tstime_mono_ms() >= next_depth) {
			update_depth(r);
			next_depth = tstime_mono_ms() + DEPTH_EVERY_MS;
		}
		if (db == NULL) {
			unsigned ver = 0;

			db = records_db_connect(&r->cfg, why, sizeof(why));
			if (db != NULL && (records_db_version(db, &ver, why,
			    sizeof(why)) != 0 ||
			    ver < records_latest_version())) {
				if (ver < records_latest_version())
					snprintf(why, sizeof(why), "schema "
					    "version %u < %u: run `taskspool db "
					    "migrate`", ver,
					    records_latest_version());
				records_db_close(db);
				db = NULL;
			}
			if (db == NULL) {
				if (!down)
					log_warnx("records: MariaDB unavailable "
					    "(%s); records wait in outbox/, "
					    "retrying with backoff", why);
				down = 1;
				if (backoff_wait(r, jitter(backoff)))
					break;
				backoff = backoff * 2 > BACKOFF_MAX_MS ?
				    BACKOFF_MAX_MS : backoff * 2;
				continue;
			}
			if (down)
				log_info("records: MariaDB reachable again; "
				    "replaying the outbox");
			down = 0;
			backoff = BACKOFF_MIN_MS;
		}
		if (tstime_mono_ms() >= next_seen) {
			if (records_db_node_seen(db, r->sp->node, started,
			    tstime_now_ms(), why, sizeof(why)) ==
			    RECORDS_APPLY_RETRY) {
				records_db_close(db);
				db = NULL;
				continue;
			}
			next_seen = tstime_mono_ms() + NODE_SEEN_MS;
		}
		if (tstime_mono_ms() >= next_orphans) {
			reclaim_orphans(r);
			next_orphans = tstime_mono_ms() + NODE_SEEN_MS;
		}
		if (next_reconcile >= 0 && tstime_mono_ms() >= next_reconcile) {
			/* At start every result file; then those written since
			 * the last pass began, less a minute (clock steps). */
			int64_t began = tstime_now_ms();

			if (reconcile(r, db, reconciled_ms > 0 ? reconciled_ms -
			    60000 : 0, why, sizeof(why)) != RECORDS_APPLY_OK) {
				log_warnx("records: reconcile: MariaDB failed "
				    "(%s); reconnecting", why);
				records_db_close(db);
				db = NULL;
				continue;
			}
			reconciled_ms = began;
			next_reconcile = r->cfg.records_reconcile_sec > 0 ?
			    tstime_mono_ms() + r->cfg.records_reconcile_sec *
			    1000 : -1;
		}
		names = claim_batch(r, &n);
		if (n == 0) {
			free_names(names, n);
			if (wait_ms(r, RESCAN_MS, 1))
				break;
			continue;
		}
		rc = apply_batch(r, db, names, n, why, sizeof(why));
		free_names(names, n);
		if (rc == RECORDS_APPLY_RETRY) {
			log_warnx("records: MariaDB write failed (%s); "
			    "reconnecting", why);
			records_db_close(db);
			db = NULL;
			down = 1;
			if (backoff_wait(r, jitter(backoff)))
				break;
			backoff = backoff * 2 > BACKOFF_MAX_MS ?
			    BACKOFF_MAX_MS : backoff * 2;
		}
	}
	records_db_close(db);
	return NULL;
}

static int
db_start(struct records *r)
{
	int e = pthread_create(&r->thread, NULL, writer_main, r);

	if (e != 0) {
		errno = e;
		return -1;
	}
	r->started = 1;
	return 0;
}

static void
db_free(struct records *r)
{
	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	if (r->recfd >= 0)
		close(r->recfd);
	if (r->claimfd >= 0)
		close(r->claimfd);
	if (r->mine >= 0)
		close(r->mine);
	free(r);
}

static const struct records_ops mariadb_ops = {
	db_start, db_append, db_free
};

static int
open_subdir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 02770) != 0 && errno != EEXIST)
		return -1;
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

struct records *
records_new(const struct config *cfg, const struct spool *sp, char *why,
    size_t whylen)
{
	struct records *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}

	r->cfg = *cfg;
	r->sp = sp;
	r->recfd = r->claimfd = r->mine = -1;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if (cfg->mariadb[0] == '\0') {
		r->ops = &embedded_ops;
		return r;
	}
	r->ops = &mariadb_ops;
	if ((r->recfd = open_subdir(sp->dir[SPOOL_OUTBOX], RECORDS_DIR)) < 0 ||
	    (r->claimfd = open_subdir(sp->dir[SPOOL_OUTBOX],
	    RECORDS_CLAIMED_DIR)) < 0 ||
	    (r->mine = open_subdir(r->claimfd, sp->node)) < 0) {
		snprintf(why, whylen, "outbox/%s: %s", RECORDS_DIR,
		    strerror(errno));
		goto fail;
	}
	/* One daemon per node id (the node lock), so only another writer
	 * checking whether we are gone holds this, for a moment: wait. */
	if (flock(r->mine, LOCK_EX) != 0) {
		snprintf(why, whylen, "outbox/%s/%s is locked by another "
		    "writer", RECORDS_CLAIMED_DIR, sp->node);
		goto fail;
	}
	return r;
fail:
	{
		int e = errno;

		db_free(r);
		errno = e;
	}
	return NULL;
}

int
records_start(struct records *r)
{
	return r->ops->start(r);
}

int
records_append(struct records *r, enum records_kind kind, const char *id,
    const struct task *t, const struct task_attempt *a, const char *envelope,
    size_t len)
{
	return r->ops->append(r, kind, id, t, a, envelope, len);
}

void
records_free(struct records *r)
{
	if (r != NULL)
		r->ops->free(r);
}
