/*
 * callback — delivery files and the callback sender; see callback.h.
 *
 * Layout under outbox/callbacks/ (spool-layout/README.md):
 *   pending/<id>.json        waiting; mtime = when the next try is due
 *   active/<node>/<id>.json  claimed by node (flock held while it works)
 *   delivered/<id>.json      DELIVERED
 *   failed/<id>.json         CALLBACK_FAILED
 * A delivery moves only by rename or by the writer protocol, so it is in
 * exactly one of them, except for a crash between writing its new state
 * and removing the old copy from active/: the copy outside active/ is the
 * newer, and the sender that finds both removes the one in active/.
 */
#include "callback/callback.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "core/delivery.h"
#include "spool/hook.h"
#include "core/jsontext.h"
#include "spool/log.h"
#include "core/ssrf.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "core/whsign.h"

#include "callback/callback_impl.h"

/* --- directories ------------------------------------------------------- */

static int
subdir(int parent, const char *name, mode_t mode)
{
	int fd;

	/* A reader without write access (the CGI, a group member) opens
	 * what exists; a directory that does not exist yet is ENOENT. */
	if (mkdirat(parent, name, mode) != 0 && errno != EEXIST &&
	    errno != EACCES && errno != EPERM && errno != EROFS)
		return -1;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	return fd;
}

void
cbdirs_close(struct cbdirs *d)
{
	for (int i = 0; i < D_N; i++)
		if (d->fd[i] >= 0)
			close(d->fd[i]);
	if (d->self >= 0)
		close(d->self);
	for (int i = 0; i < D_N; i++)
		d->fd[i] = -1;
	d->self = -1;
}

/* Open (creating) outbox/callbacks/ and its subdirectories, active/<node>
 * when node is not NULL, and state/callbacks/. */
int
cbdirs_open(const struct spool *s, const char *node, struct cbdirs *d)
{
	static const char *const names[] = { "pending", "active", "delivered",
	    "failed" };

	for (int i = 0; i < D_N; i++)
		d->fd[i] = -1;
	d->self = -1;
	if ((d->fd[D_CB] = subdir(s->dir[SPOOL_OUTBOX], "callbacks",
	    02750)) < 0)
		goto fail;
	for (int i = 0; i < 4; i++)
		if ((d->fd[D_PENDING + i] = subdir(d->fd[D_CB], names[i],
		    02750)) < 0)
			goto fail;
	if ((d->fd[D_REG] = subdir(s->dir[SPOOL_STATE], "callbacks",
	    02770)) < 0)
		goto fail;
	if (node != NULL && (d->self = subdir(d->fd[D_ACTIVE], node,
	    02750)) < 0)
		goto fail;
	return 0;
fail:
	{
		int e = errno;

		cbdirs_close(d);
		errno = e;
	}
	return -1;
}

/* --- the delivery file codec ------------------------------------------- */

void
cbdel_fini(struct cbdel *c)
{
	free(c->url);
	free(c->body);
	memset(c, 0, sizeof(*c));
}

static json_t *
time_or_null(int64_t ms)
{
	char t[TSTIME_BUF];

	return ms < 0 ? json_null() : json_string(tstime_format_ms(t,
	    sizeof(t), ms));
}

int
cbdel_encode(const struct cbdel *c, struct buf *out)
{
	const char *err = delivery_error_name(c->st.last_error);
	const char *reason = delivery_reason_name(c->st.reason);
	json_t *o;
	char *text;
	int rc = -1;

	o = json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:s, s:o, s:i, s:o, "
	    "s:o, s:o, s:o, s:o, s:s%}",
	    "version", 1,
	    "webhookId", c->webhook_id,
	    "requestId", c->request_id,
	    "appId", c->app_id[0] != '\0' ? json_string(c->app_id) :
	    json_null(),
	    "url", c->url != NULL ? json_string(c->url) : json_null(),
	    "createdAt", time_or_null(c->created_ms),
	    "status", delivery_status_name(c->st.status),
	    "reason", reason != NULL ? json_string(reason) : json_null(),
	    "attempts", c->st.attempts,
	    "nextAttemptAt", time_or_null(c->st.next_ms),
	    "lastAttemptAt", time_or_null(c->st.last_attempt_ms),
	    "lastHttpStatus", c->st.last_http > 0 ?
	    json_integer(c->st.last_http) : json_null(),
	    "lastError", err != NULL ? json_string(err) : json_null(),
	    "finishedAt", time_or_null(c->finished_ms),
	    "body", c->body, c->body_len);
	if (o == NULL) {
		errno = ENOMEM;
		return -1;
	}
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL) {
		errno = ENOMEM;
		return -1;
	}
	buf_reset(out);
	if (buf_puts(out, text) == 0 && buf_puts(out, "\n") == 0)
		rc = 0;
	free(text);
	return rc;
}

static int
get_time(json_t *o, const char *k, int64_t *out)
{
	json_t *v = json_object_get(o, k);

	if (v == NULL || json_is_null(v)) {
		*out = -1;
		return 0;
	}
	/* A time before 1970 would be written back as null (-1 is "none"),
	 * so decode(encode(x)) would differ: refuse it; the sender never
	 * writes one. */
	if (!json_is_string(v) || tstime_parse_rfc3339(json_string_value(v),
	    out) != 0 || *out < 0)
		return -1;
	return 0;
}

/* Decode a delivery file.  Returns 0, or -1 with the bad member in why. */
int
cbdel_decode(const char *data, size_t len, struct cbdel *c, char *why,
    size_t whylen)
{
	json_error_t jerr;
	json_t *o, *v;
	const char *k = "JSON";

	memset(c, 0, sizeof(*c));
	o = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL) {
		snprintf(why, whylen, "delivery file: invalid JSON at line %d "
		    "column %d: %s", jerr.line, jerr.column, jerr.text);
		errno = EINVAL;
		return -1;
	}
	if (!json_is_object(o))
		goto bad;
	k = "webhookId";
	v = json_object_get(o, k);
	if (!json_is_string(v) || !whsign_id_ok(json_string_value(v)))
		goto bad;
	snprintf(c->webhook_id, sizeof(c->webhook_id), "%s",
	    json_string_value(v));
	k = "requestId";
	v = json_object_get(o, k);
	if (!json_is_string(v) || !spool_id_ok(json_string_value(v)))
		goto bad;
	snprintf(c->request_id, sizeof(c->request_id), "%s",
	    json_string_value(v));
	k = "appId";
	v = json_object_get(o, k);
	if (json_is_string(v) && spool_code_ok(json_string_value(v)))
		snprintf(c->app_id, sizeof(c->app_id), "%s",
		    json_string_value(v));
	else if (v != NULL && !json_is_null(v))
		goto bad;
	k = "url";
	v = json_object_get(o, k);
	if (json_is_string(v) && json_string_length(v) <= TASK_URL_MAX) {
		if ((c->url = strdup(json_string_value(v))) == NULL)
			goto bad;
	} else if (v != NULL && !json_is_null(v))
		goto bad;
	k = "status";
	v = json_object_get(o, k);
	if (!json_is_string(v) || delivery_status_parse(json_string_value(v),
	    &c->st.status) != 0)
		goto bad;
	k = "reason";
	v = json_object_get(o, k);
	if (json_is_string(v)) {
		if (delivery_reason_parse(json_string_value(v),
		    &c->st.reason) != 0)
			goto bad;
	} else if (v != NULL && !json_is_null(v))
		goto bad;
	k = "attempts";
	v = json_object_get(o, k);
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > 1000)
		goto bad;
	c->st.attempts = (int)json_integer_value(v);
	k = "lastHttpStatus";
	v = json_object_get(o, k);
	if (json_is_integer(v) && json_integer_value(v) > 0 &&
	    json_integer_value(v) < 1000)
		c->st.last_http = (int)json_integer_value(v);
	else if (v != NULL && !json_is_null(v))
		goto bad;
	k = "lastError";
	v = json_object_get(o, k);
	if (json_is_string(v)) {
		if (delivery_error_parse(json_string_value(v),
		    &c->st.last_error) != 0)
			goto bad;
	} else if (v != NULL && !json_is_null(v))
		goto bad;
	if (get_time(o, (k = "createdAt"), &c->created_ms) != 0 ||
	    get_time(o, (k = "nextAttemptAt"), &c->st.next_ms) != 0 ||
	    get_time(o, (k = "lastAttemptAt"), &c->st.last_attempt_ms) != 0 ||
	    get_time(o, (k = "finishedAt"), &c->finished_ms) != 0)
		goto bad;
	k = "body";
	v = json_object_get(o, k);
	if (!json_is_string(v) || json_string_length(v) > CALLBACK_BODY_MAX +
	    1024)
		goto bad;
	c->body_len = json_string_length(v);
	if ((c->body = malloc(c->body_len + 1)) == NULL)
		goto bad;
	memcpy(c->body, json_string_value(v), c->body_len + 1);
	if (c->st.status == DELIVERY_PENDING && c->st.next_ms < 0)
		c->st.next_ms = 0;
	json_decref(o);
	return 0;
bad:
	snprintf(why, whylen, "delivery file: member \"%s\" missing or "
	    "invalid", k);
	json_decref(o);
	free(c->url);
	free(c->body);
	c->url = c->body = NULL;
	errno = EINVAL;
	return -1;
}

const char *
cbdel_diff(const struct cbdel *a, const struct cbdel *b)
{
	if (strcmp(a->webhook_id, b->webhook_id) != 0)
		return "webhookId";
	if (strcmp(a->request_id, b->request_id) != 0)
		return "requestId";
	if (strcmp(a->app_id, b->app_id) != 0)
		return "appId";
	if (task_str_differs(a->url, b->url))
		return "url";
	if (a->created_ms != b->created_ms)
		return "createdAt";
	if (a->finished_ms != b->finished_ms)
		return "finishedAt";
	if (a->st.status != b->st.status)
		return "status";
	if (a->st.reason != b->st.reason)
		return "reason";
	if (a->st.attempts != b->st.attempts)
		return "attempts";
	if (a->st.next_ms != b->st.next_ms)
		return "nextAttemptAt";
	if (a->st.last_attempt_ms != b->st.last_attempt_ms)
		return "lastAttemptAt";
	if (a->st.last_http != b->st.last_http)
		return "lastHttpStatus";
	if (a->st.last_error != b->st.last_error)
		return "lastError";
	if (a->body_len != b->body_len ||
	    memcmp(a->body, b->body, a->body_len) != 0)
		return "body";
	return NULL;
}

int
cbdel_roundtrip(const char *data, size_t len, char *why, size_t whylen)
{
	struct cbdel a, b;
	struct buf out;
	const char *d;
	int rc = -1;

	buf_init(&out, 0);
	if (cbdel_decode(data, len, &a, why, whylen) != 0)
		return 1;
	if (cbdel_encode(&a, &out) != 0)
		snprintf(why, whylen, "encode: out of memory");
	else if (cbdel_decode(out.data, out.len, &b, why, whylen) != 0)
		;	/* why names what the encoder wrote wrong */
	else {
		if ((d = cbdel_diff(&a, &b)) != NULL)
			snprintf(why, whylen, "%s differs after decode, "
			    "encode, decode", d);
		else
			rc = 0;
		cbdel_fini(&b);
	}
	cbdel_fini(&a);
	buf_fini(&out);
	return rc;
}

/* --- creation ----------------------------------------------------------- */

/* The §6.2 envelope from a result envelope (results/<id>.json). */
static int
envelope(const char *result, size_t rlen, char **body, size_t *blen)
{
	json_t *r, *data, *env;
	char *text;
	static const char *const copy[] = { "requestId", "taskCode", "status",
	    "result", "failureReason", "startedAt", "finishedAt",
	    "durationMs" };

	r = jsontext_loadb(result, rlen, 0, NULL);
	if (r == NULL || !json_is_object(r) ||
	    !json_is_string(json_object_get(r, "finishedAt"))) {
		json_decref(r);
		errno = EINVAL;
		return -1;
	}
	data = json_object();
	for (size_t i = 0; i < sizeof(copy) / sizeof(copy[0]); i++) {
		json_t *v = json_object_get(r, copy[i]);

		json_object_set(data, copy[i], v != NULL ? v : json_null());
	}
	/* The task's trace (README.md, "Trace context"), only when it has
	 * one: the body is signed, the traceparent header derives from it. */
	if (json_is_string(json_object_get(r, "traceparent")))
		json_object_set(data, "traceparent",
		    json_object_get(r, "traceparent"));
	env = json_pack("{s:s, s:O, s:o}", "type", "task.finished",
	    "timestamp", json_object_get(r, "finishedAt"), "data", data);
	json_decref(r);
	if (env == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* Compact, raw UTF-8 (no ensure-ascii), key order kept (C05). */
	text = json_dumps(env, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text != NULL && strlen(text) > CALLBACK_BODY_MAX) {
		/* Thin payload: the receiver GETs the task for the result. */
		free(text);
		json_object_set_new(json_object_get(env, "data"), "result",
		    json_null());
		json_object_set_new(json_object_get(env, "data"),
		    "resultTruncated", json_true());
		text = json_dumps(env, JSON_COMPACT | JSON_PRESERVE_ORDER);
	}
	json_decref(env);
	if (text == NULL) {
		errno = ENOMEM;
		return -1;
	}
	*body = text;
	*blen = strlen(text);
	return 0;
}

int
callback_registered(const struct spool *s, const char *app)
{
	char path[TASK_CODE_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "callbacks/%s.json", app);
	return fstatat(s->dir[SPOOL_STATE], path, &st, AT_SYMLINK_NOFOLLOW) ==
	    0;
}

int
callback_prepare(const struct spool *s, const struct task *t,
    const char *result, size_t rlen, int64_t now_ms, struct buf *out)
{
	struct cbdel c;
	int rc;

	if (t->callback_url == NULL && (t->app_id == NULL ||
	    !callback_registered(s, t->app_id)))
		return 0;
	memset(&c, 0, sizeof(c));
	if (whsign_id_new(c.webhook_id) != 0)
		return -1;
	snprintf(c.request_id, sizeof(c.request_id), "%s", t->request_id);
	if (t->app_id != NULL)
		snprintf(c.app_id, sizeof(c.app_id), "%s", t->app_id);
	c.url = t->callback_url;	/* borrowed for the encoding */
	c.created_ms = now_ms;
	c.finished_ms = -1;
	delivery_init(&c.st, now_ms);
	if (envelope(result, rlen, &c.body, &c.body_len) != 0)
		return -1;
	rc = cbdel_encode(&c, out);
	free(c.body);
	return rc == 0 ? 1 : -1;
}

/* Whether file exists in pending/, delivered/, failed/ or any active/. */
static int
delivery_exists(const struct cbdirs *d, const char *file, char *where,
    size_t wlen)
{
	static const int dirs[] = { D_PENDING, D_DELIVERED, D_FAILED };
	static const char *const names[] = { "pending", "delivered",
	    "failed" };
	struct stat st;
	struct dirent *de;
	DIR *dp;

	for (size_t i = 0; i < 3; i++)
		if (fstatat(d->fd[dirs[i]], file, &st, AT_SYMLINK_NOFOLLOW) ==
		    0) {
			snprintf(where, wlen, "%s", names[i]);
			return 1;
		}
	if ((dp = spool_opendir(d->fd[D_ACTIVE])) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		char p[SPOOL_NAME_MAX * 2 + 2];

		if (!spool_code_ok(de->d_name))
			continue;
		snprintf(p, sizeof(p), "%s/%s", de->d_name, file);
		if (fstatat(d->fd[D_ACTIVE], p, &st, AT_SYMLINK_NOFOLLOW) ==
		    0) {
			snprintf(where, wlen, "active/%.64s", de->d_name);
			closedir(dp);
			return 1;
		}
	}
	closedir(dp);
	return 0;
}

static int cbdel_read(int dirfd, const char *file, struct cbdel *c);

/* Whether the finished delivery dirfd/file carries another event than
 * the prepared delivery (a task run again with `taskspool retry`). */
static int
other_event(int dirfd, const char *file, const struct buf *delivery)
{
	struct cbdel old, cur;
	char why[128];
	int other = 0;

	if (cbdel_read(dirfd, file, &old) != 0)
		return 0;
	if (cbdel_decode(delivery->data, delivery->len, &cur, why,
	    sizeof(why)) == 0) {
		other = old.body_len != cur.body_len || memcmp(old.body,
		    cur.body, cur.body_len) != 0;
		cbdel_fini(&cur);
	}
	cbdel_fini(&old);
	return other;
}

int
callback_publish(const struct spool *s, const char *id,
    const struct buf *delivery)
{
	struct cbdirs d;
	char file[SPOOL_NAME_MAX], where[80];
	int rc = 0, e;

	if (cbdirs_open(s, NULL, &d) != 0)
		return -1;
	snprintf(file, sizeof(file), "%s.json", id);
	if (!delivery_exists(&d, file, where, sizeof(where))) {
		if (spool_publish(s, d.fd[D_PENDING], file, delivery->data,
		    delivery->len, -1, SPOOL_PUBLISH_EXCL) != 0 &&
		    errno != EEXIST)
			rc = -1;
	} else if (strcmp(where, "delivered") == 0 ||
	    strcmp(where, "failed") == 0) {
		/* One delivery per event: the same body again (a recovery
		 * repeating the publication) is the same event and is left
		 * alone; a new outcome (the task was retried and finished
		 * again) replaces the finished delivery. */
		int fd = where[0] == 'd' ? d.fd[D_DELIVERED] : d.fd[D_FAILED];

		if (other_event(fd, file, delivery)) {
			if (spool_publish(s, d.fd[D_PENDING], file,
			    delivery->data, delivery->len, -1,
			    SPOOL_PUBLISH_EXCL) != 0 && errno != EEXIST)
				rc = -1;
			else
				(void)unlinkat(fd, file, 0);
		}
	}
	e = errno;
	cbdirs_close(&d);
	errno = e;
	return rc;
}

int
callback_enqueue(const struct spool *s, const struct task *t,
    const char *result, size_t rlen)
{
	struct buf b;
	int rc;

	buf_init(&b, 0);
	rc = callback_prepare(s, t, result, rlen, tstime_now_ms(), &b);
	if (rc > 0)
		rc = callback_publish(s, t->request_id, &b);
	buf_fini(&b);
	return rc < 0 ? -1 : 0;
}

int
callback_enqueue_missing(const struct spool *s, const struct task *t,
    const char *result, size_t rlen)
{
	struct cbdirs d;
	char file[SPOOL_NAME_MAX], where[80];
	int exists;

	if (cbdirs_open(s, NULL, &d) != 0)
		return -1;
	snprintf(file, sizeof(file), "%s.json", t->request_id);
	exists = delivery_exists(&d, file, where, sizeof(where));
	cbdirs_close(&d);
	return exists ? 0 : callback_enqueue(s, t, result, rlen);
}

/* --- reading, listing, redelivery -------------------------------------- */

static void
info_fill(const struct cbdel *c, const char *where, struct callback_info *ci)
{
	const char *e = delivery_error_name(c->st.last_error);
	const char *r = delivery_reason_name(c->st.reason);

	memset(ci, 0, sizeof(*ci));
	snprintf(ci->webhook_id, sizeof(ci->webhook_id), "%s", c->webhook_id);
	snprintf(ci->status, sizeof(ci->status), "%s",
	    delivery_status_name(c->st.status));
	snprintf(ci->reason, sizeof(ci->reason), "%s", r != NULL ? r : "");
	snprintf(ci->last_error, sizeof(ci->last_error), "%s",
	    e != NULL ? e : "");
	ci->attempts = c->st.attempts;
	ci->last_http = c->st.last_http;
	ci->last_attempt_ms = c->st.last_attempt_ms;
	ci->next_ms = c->st.status == DELIVERY_PENDING ? c->st.next_ms : -1;
	snprintf(ci->where, sizeof(ci->where), "%s", where);
}

/* Read and decode dirfd/file into c.  Returns 0 or -1 with errno. */
static int
cbdel_read(int dirfd, const char *file, struct cbdel *c)
{
	char why[128];
	size_t len;
	char *data = spool_read_file(dirfd, file, CB_FILE_MAX, &len);
	int rc;

	if (data == NULL)
		return -1;
	rc = cbdel_decode(data, len, c, why, sizeof(why));
	free(data);
	return rc;
}

/* Open the directory holding a delivery by its "where" text. */
static int
where_fd(const struct cbdirs *d, const char *where)
{
	if (strcmp(where, "pending") == 0)
		return dup(d->fd[D_PENDING]);
	if (strcmp(where, "delivered") == 0)
		return dup(d->fd[D_DELIVERED]);
	if (strcmp(where, "failed") == 0)
		return dup(d->fd[D_FAILED]);
	return openat(d->fd[D_ACTIVE], where + strlen("active/"),
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int
callback_info_read(const struct spool *s, const char *id,
    struct callback_info *ci)
{
	struct cbdirs d;
	struct cbdel c;
	char file[SPOOL_NAME_MAX], where[80];
	int fd, rc = -1, e;

	if (!spool_id_ok(id)) {
		errno = EINVAL;
		return -1;
	}
	if (cbdirs_open(s, NULL, &d) != 0)
		return -1;
	snprintf(file, sizeof(file), "%s.json", id);
	if (!delivery_exists(&d, file, where, sizeof(where)))
		errno = ENOENT;
	else if ((fd = where_fd(&d, where)) >= 0) {
		if (cbdel_read(fd, file, &c) == 0) {
			info_fill(&c, where, ci);
			cbdel_fini(&c);
			rc = 0;
		}
		e = errno;
		close(fd);
		errno = e;
	}
	e = errno;
	cbdirs_close(&d);
	errno = e;
	return rc;
}

static void
list_dir(int dirfd, const char *where, FILE *fp, int *n)
{
	struct dirent *de;
	DIR *dp;

	if ((dp = spool_opendir(dirfd)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		struct callback_info ci;
		struct cbdel c;
		char t1[TSTIME_BUF], t2[TSTIME_BUF];
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0 ||
		    cbdel_read(dirfd, de->d_name, &c) != 0)
			continue;
		info_fill(&c, where, &ci);
		fprintf(fp, "%-28s %-15s %3d %4s %-19s %-24s %-24s %s\n",
		    c.request_id, ci.status, ci.attempts,
		    ci.last_http > 0 ? (snprintf(t1, sizeof(t1), "%d",
		    ci.last_http), t1) : "-",
		    ci.last_error[0] != '\0' ? ci.last_error : "-",
		    ci.last_attempt_ms >= 0 ? tstime_format_ms(t2, sizeof(t2),
		    ci.last_attempt_ms) : "-",
		    ci.next_ms >= 0 ? tstime_format_ms(t1, sizeof(t1),
		    ci.next_ms) : "-", where);
		cbdel_fini(&c);
		(*n)++;
	}
	closedir(dp);
}

int
callback_list(const struct spool *s, FILE *fp)
{
	struct cbdirs d;
	struct dirent *de;
	DIR *dp;
	int n = 0;

	fprintf(fp, "%-28s %-15s %3s %4s %-19s %-24s %-24s %s\n", "REQUEST_ID",
	    "STATUS", "TRY", "HTTP", "LAST_ERROR", "LAST_ATTEMPT",
	    "NEXT_ATTEMPT", "WHERE");
	if (cbdirs_open(s, NULL, &d) != 0)
		return errno == ENOENT ? 0 : -1;	/* none made yet */
	list_dir(d.fd[D_PENDING], "pending", fp, &n);
	if ((dp = spool_opendir(d.fd[D_ACTIVE])) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			char where[80];
			int fd;

			if (!spool_code_ok(de->d_name))
				continue;
			fd = openat(d.fd[D_ACTIVE], de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				continue;
			snprintf(where, sizeof(where), "active/%.64s",
			    de->d_name);
			list_dir(fd, where, fp, &n);
			close(fd);
		}
		closedir(dp);
	}
	list_dir(d.fd[D_DELIVERED], "delivered", fp, &n);
	list_dir(d.fd[D_FAILED], "failed", fp, &n);
	cbdirs_close(&d);
	return n;
}

int
callback_redeliver(const struct spool *s, const char *id, char *why,
    size_t whylen)
{
	struct cbdirs d;
	struct cbdel c;
	struct buf b;
	char file[SPOOL_NAME_MAX], where[80];
	int fd, rc = -1;
	int64_t now = tstime_now_ms();

	if (!spool_id_ok(id)) {
		snprintf(why, whylen, "\"%s\" is not a requestId", id);
		errno = EINVAL;
		return -1;
	}
	if (cbdirs_open(s, NULL, &d) != 0) {
		snprintf(why, whylen, "outbox/callbacks: %s", strerror(errno));
		return -1;
	}
	snprintf(file, sizeof(file), "%s.json", id);
	buf_init(&b, 0);
	if (!delivery_exists(&d, file, where, sizeof(where))) {
		snprintf(why, whylen, "%s has no callback delivery", id);
		errno = ENOENT;
		goto out;
	}
	if (strncmp(where, "active/", 7) == 0) {
		snprintf(why, whylen, "%s: a try is in flight on node %s; "
		    "try again in a few seconds", id, where + 7);
		errno = EBUSY;
		goto out;
	}
	if ((fd = where_fd(&d, where)) < 0 || cbdel_read(fd, file, &c) != 0) {
		snprintf(why, whylen, "%s/%s: %s", where, file,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	/* A fresh attempt sequence: same webhook-id and body. */
	delivery_init(&c.st, now);
	c.finished_ms = -1;
	if (cbdel_encode(&c, &b) != 0 || spool_publish(s, d.fd[D_PENDING],
	    file, b.data, b.len, now, 0) != 0) {
		snprintf(why, whylen, "pending/%s: %s", file, strerror(errno));
		cbdel_fini(&c);
		close(fd);
		goto out;
	}
	cbdel_fini(&c);
	if (strcmp(where, "pending") != 0) {
		(void)unlinkat(fd, file, 0);
		(void)spool_sync_dir(s, fd);
	}
	close(fd);
	rc = 0;
out:
	buf_fini(&b);
	cbdirs_close(&d);
	return rc;
}

/* --- configuration ------------------------------------------------------ */
