/*
 * drainmark — a node's drain marker, codec; see drainmark.h.
 */
#include "core/drainmark.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/task.h"

int
drainmark_reason_ok(const char *reason)
{
	return jsonfield_text_ok(reason, DRAINMARK_REASON_MAX);
}

/* What decode_member fills: the marker, and the required members seen. */
struct decoding {
	struct drainmark *m;
	int seen;
};

/* One member k = v of the marker into d->m; d->seen counts the required. */
static int
decode_member(void *ctx, const char *k, json_t *v, struct task_error *err)
{
	struct drainmark *m = ((struct decoding *)ctx)->m;
	int *seen = &((struct decoding *)ctx)->seen;

	if (strcmp(k, "node") == 0) {
		*seen |= 1;
		return task_json_name(v, k, DRAINMARK_NODE_MAX, m->node, err);
	}
	if (strcmp(k, "reason") == 0)
		return jsonfield_text(v, k, DRAINMARK_REASON_MAX, m->reason,
		    err);
	if (strcmp(k, "since") == 0) {
		*seen |= 2;
		return jsonfield_epoch_time(v, k, &m->since_ms, err);
	}
	return jsonfield_fail(err, k, "unknown member (a drain marker has "
	    "node, reason and since)");
}

int
drainmark_decode(const char *data, size_t len, struct drainmark *m,
    struct task_error *err)
{
	struct decoding d = { m, 0 };
	int rc, seen;

	memset(m, 0, sizeof(*m));
	rc = jsonfield_each_member(data, len, DRAINMARK_FILE_MAX, decode_member,
	    &d, err);
	seen = d.seen;
	if (rc == 0 && !(seen & 1))
		rc = jsonfield_fail(err, "node", "required member missing");
	if (rc == 0 && !(seen & 2))
		rc = jsonfield_fail(err, "since", "required member missing");
	if (rc != 0)
		memset(m, 0, sizeof(*m));
	return rc;
}

int
drainmark_encode(const struct drainmark *m, struct buf *out)
{
	json_t *o;
	char *s;
	int bad;

	if (!task_name_ok(m->node, DRAINMARK_NODE_MAX) ||
	    !drainmark_reason_ok(m->reason)) {
		errno = EINVAL;
		return -1;
	}
	if ((o = json_object()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	bad = json_object_set_new(o, "node", json_string(m->node));
	bad |= json_object_set_new(o, "reason", json_string(m->reason));
	bad |= jsonfield_put_time(o, "since", m->since_ms);
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
