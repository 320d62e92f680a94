/*
 * api_marker — the idempotency record of a submission (API.md §4.1),
 * state/requests/<requestId>.json: {appId, requestId, taskCode,
 * fingerprint, createdAt}.  The codec and the read; api_submit.c
 * publishes records, api_tasks.c reads them to find the caller's tasks.
 *
 * Invariant: the decoder accepts exactly the grammar the encoder writes,
 * so decode(encode(decode(x))) == decode(x) (api_marker_roundtrip, for
 * the unit tests and the fuzz target).  No writes here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_impl.h"
#include "core/jsontext.h"
#include "core/tstime.h"

#define API_MARKER_MAX	4096	/* bytes of a requests/ record */

/* --- task records and views ------------------------------------------ */
static int
copy_member(json_t *o, const char *k, char *out, size_t len)
{
	const char *v = json_string_value(json_object_get(o, k));

	if (v == NULL || strlen(v) >= len)
		return -1;
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/*
 * Decode an idempotency record (state/requests/<id>.json) into m, mtime
 * left 0.  Every member is required and checked against the grammar
 * api_marker_encode() writes (names, 64 hex digits, a time not before 1970),
 * so decode(encode(decode(x))) == decode(x).  Returns 0, or -1 (EINVAL).
 */
static int
marker_decode(const char *data, size_t len, struct api_marker *m)
{
	json_t *o;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	o = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	if (o != NULL && copy_member(o, "appId", m->app_id,
	    sizeof(m->app_id)) == 0 && apps_id_ok(m->app_id) &&
	    copy_member(o, "requestId", m->request_id,
	    sizeof(m->request_id)) == 0 && spool_id_ok(m->request_id) &&
	    copy_member(o, "taskCode", m->task_code,
	    sizeof(m->task_code)) == 0 && spool_code_ok(m->task_code) &&
	    copy_member(o, "fingerprint", m->fingerprint,
	    sizeof(m->fingerprint)) == 0 &&
	    strlen(m->fingerprint) == SIGN_HEX_LEN &&
	    strspn(m->fingerprint, "0123456789abcdef") == SIGN_HEX_LEN &&
	    json_string_value(json_object_get(o, "createdAt")) != NULL &&
	    tstime_parse_rfc3339(json_string_value(json_object_get(o,
	    "createdAt")), &m->created_ms) == 0 && m->created_ms >= 0)
		rc = 0;
	else
		errno = EINVAL;
	json_decref(o);
	return rc;
}

/* Append the record of m to out.  Returns 0, or -1 (ENOMEM, EFBIG). */
void
api_marker_fill(struct api_ctx *c, struct api_marker *m, const char *id,
    const char *code, int64_t created_ms)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->app_id, sizeof(m->app_id), "%s", c->app_id);
	snprintf(m->request_id, sizeof(m->request_id), "%s", id);
	snprintf(m->task_code, sizeof(m->task_code), "%s", code);
	memcpy(m->fingerprint, c->body_hex, sizeof(m->fingerprint));
	m->created_ms = created_ms;
}

int
api_marker_encode(const struct api_marker *m, struct buf *out)
{
	char b[TSTIME_BUF];
	json_t *r = json_object();
	char *s;
	int rc;

	if (r == NULL)
		return -1;
	json_object_set_new(r, "appId", json_string(m->app_id));
	json_object_set_new(r, "requestId", json_string(m->request_id));
	json_object_set_new(r, "taskCode", json_string(m->task_code));
	json_object_set_new(r, "fingerprint", json_string(m->fingerprint));
	json_object_set_new(r, "createdAt", json_string(api_fmt_time(b,
	    m->created_ms)));
	s = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	if (s == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rc = buf_puts(out, s);
	free(s);
	return rc;
}

int
api_marker_roundtrip(const char *data, size_t len)
{
	struct api_marker a, b;
	struct buf out;
	int rc = -1;

	if (marker_decode(data, len, &a) != 0)
		return 1;
	buf_init(&out, 0);
	if (api_marker_encode(&a, &out) == 0 &&
	    marker_decode(out.data, out.len, &b) == 0 &&
	    strcmp(a.app_id, b.app_id) == 0 &&
	    strcmp(a.request_id, b.request_id) == 0 &&
	    strcmp(a.task_code, b.task_code) == 0 &&
	    strcmp(a.fingerprint, b.fingerprint) == 0 &&
	    a.created_ms == b.created_ms)
		rc = 0;
	buf_fini(&out);
	return rc;
}

/* Read requests/<id>.json: 0, -1 with ENOENT when absent, -1 on error. */
int
api_marker_read(int dfd, const char *id, struct api_marker *m)
{
	char file[SPOOL_NAME_MAX];
	size_t len;
	char *data;
	struct stat st;
	int rc;

	snprintf(file, sizeof(file), "%s.json", id);
	data = spool_read_file(dfd, file, API_MARKER_MAX, &len);
	if (data == NULL)
		return -1;
	rc = marker_decode(data, len, m);
	free(data);
	if (rc == 0 && fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0)
		m->mtime = st.st_mtime;
	return rc;
}
