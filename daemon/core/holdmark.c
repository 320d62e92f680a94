/*
 * holdmark — a task's hold marker, codec; see holdmark.h.
 */
#include "core/holdmark.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsontext.h"
#include "core/task.h"

static const char *const froms[] = {
	"incoming", "delayed", "queue", "active", "hold"
};

int
holdmark_from_ok(const char *from)
{
	for (size_t i = 0; i < sizeof(froms) / sizeof(froms[0]); i++)
		if (strcmp(from, froms[i]) == 0)
			return 1;
	return 0;
}

int
holdmark_by_ok(const char *by)
{
	size_t n = 0;

	for (; by[n] != '\0'; n++)
		if ((unsigned char)by[n] < 0x20 || by[n] == 0x7f)
			return 0;
	return n <= HOLDMARK_BY_MAX;
}

/* One member k = v of the marker into *m; seen counts the required. */
static int
decode_member(struct holdmark *m, const char *k, json_t *v, int *seen,
    struct task_error *err)
{
	const char *s = NULL;

	if (strcmp(k, "requestId") == 0) {
		*seen |= 1;
		return task_json_name(v, k, HOLDMARK_ID_MAX, m->request_id,
		    err);
	}
	if (strcmp(k, "from") == 0) {
		*seen |= 4;
		if (jsonfield_string(v, k, HOLDMARK_FROM_MAX, &s, err) != 0)
			return -1;
		if (!holdmark_from_ok(s))
			return jsonfield_fail(err, k, "must be incoming, "
			    "delayed, queue, active or hold");
		memcpy(m->from, s, strlen(s) + 1);
		return 0;
	}
	if (strcmp(k, "by") == 0) {
		if (jsonfield_string(v, k, HOLDMARK_BY_MAX, &s, err) != 0)
			return -1;
		if (!holdmark_by_ok(s))
			return jsonfield_fail(err, k, "must not contain a "
			    "control character");
		memcpy(m->by, s, strlen(s) + 1);
		return 0;
	}
	if (strcmp(k, "since") == 0) {
		*seen |= 2;
		if (jsonfield_time(v, k, &m->since_ms, err) != 0)
			return -1;
		if (m->since_ms < 0)
			return jsonfield_fail(err, k, "must not be before "
			    "1970-01-01T00:00:00Z");
		return 0;
	}
	return jsonfield_fail(err, k, "unknown member (a hold marker has "
	    "requestId, since, from and by)");
}

int
holdmark_decode(const char *data, size_t len, struct holdmark *m,
    struct task_error *err)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *k;
	int seen = 0, rc = 0;

	memset(m, 0, sizeof(*m));
	if (len > HOLDMARK_FILE_MAX)
		return jsonfield_fail(err, "file", "larger than %d bytes",
		    HOLDMARK_FILE_MAX);
	root = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return jsonfield_fail(err, "json", "invalid JSON at line %d "
		    "column %d: %s", jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return jsonfield_fail(err, "json", "top level must be an "
		    "object");
	}
	json_object_foreach(root, k, v)
		if ((rc = decode_member(m, k, v, &seen, err)) != 0)
			break;
	json_decref(root);
	if (rc == 0 && !(seen & 1))
		rc = jsonfield_fail(err, "requestId", "required member "
		    "missing");
	if (rc == 0 && !(seen & 2))
		rc = jsonfield_fail(err, "since", "required member missing");
	if (rc == 0 && !(seen & 4))
		rc = jsonfield_fail(err, "from", "required member missing");
	if (rc != 0)
		memset(m, 0, sizeof(*m));
	return rc;
}

int
holdmark_encode(const struct holdmark *m, struct buf *out)
{
	json_t *o;
	char *s;
	int bad;

	if (!task_name_ok(m->request_id, HOLDMARK_ID_MAX) ||
	    !holdmark_from_ok(m->from) || !holdmark_by_ok(m->by) ||
	    m->since_ms < 0) {
		errno = EINVAL;
		return -1;
	}
	if ((o = json_object()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	bad = json_object_set_new(o, "requestId", json_string(m->request_id));
	bad |= jsonfield_put_time(o, "since", m->since_ms);
	bad |= json_object_set_new(o, "from", json_string(m->from));
	bad |= json_object_set_new(o, "by", json_string(m->by));
	s = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (s == NULL || buf_puts(out, s) != 0 || buf_puts(out, "\n") != 0) {
		free(s);
		errno = ENOMEM;
		return -1;
	}
	free(s);
	return 0;
}
