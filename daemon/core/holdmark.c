/*
 * holdmark — a task's hold marker, codec; see holdmark.h.
 */
#include "core/holdmark.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/task.h"

static const char *const froms[] = {
	"incoming", "delayed", "queue", "active", "hold", "blocked"
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
	return jsonfield_text_ok(by, HOLDMARK_BY_MAX);
}

/* What decode_member fills: the marker, and the required members seen. */
struct decoding {
	struct holdmark *m;
	int seen;
};

/* One member k = v of the marker into d->m; d->seen counts the required. */
static int
decode_member(void *ctx, const char *k, json_t *v, struct task_error *err)
{
	struct holdmark *m = ((struct decoding *)ctx)->m;
	int *seen = &((struct decoding *)ctx)->seen;
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
			    "delayed, queue, active, hold or blocked");
		memcpy(m->from, s, strlen(s) + 1);
		return 0;
	}
	if (strcmp(k, "by") == 0)
		return jsonfield_text(v, k, HOLDMARK_BY_MAX, m->by, err);
	if (strcmp(k, "since") == 0) {
		*seen |= 2;
		return jsonfield_epoch_time(v, k, &m->since_ms, err);
	}
	return jsonfield_fail(err, k, "unknown member (a hold marker has "
	    "requestId, since, from and by)");
}

int
holdmark_decode(const char *data, size_t len, struct holdmark *m,
    struct task_error *err)
{
	static const char *const required[] = { "requestId", "since", "from" };
	struct decoding d = { m, 0 };
	int rc, seen;

	memset(m, 0, sizeof(*m));
	rc = jsonfield_each_member(data, len, HOLDMARK_FILE_MAX, decode_member,
	    &d, err);
	seen = d.seen;
	for (int i = 0; rc == 0 && i < 3; i++)
		if (!(seen & (1 << i)))
			rc = jsonfield_fail(err, required[i], "required "
			    "member missing");
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
