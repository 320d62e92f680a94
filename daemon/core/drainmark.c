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
	size_t n = 0;

	for (; reason[n] != '\0'; n++)
		if ((unsigned char)reason[n] < 0x20 || reason[n] == 0x7f)
			return 0;
	return n <= DRAINMARK_REASON_MAX;
}

/* One member k = v of the marker into *m; seen counts the required. */
static int
decode_member(struct drainmark *m, const char *k, json_t *v, int *seen,
    struct task_error *err)
{
	const char *s = NULL;

	if (strcmp(k, "node") == 0) {
		*seen |= 1;
		return task_json_name(v, k, DRAINMARK_NODE_MAX, m->node, err);
	}
	if (strcmp(k, "reason") == 0) {
		if (jsonfield_string(v, k, DRAINMARK_REASON_MAX, &s, err) != 0)
			return -1;
		if (!drainmark_reason_ok(s))
			return jsonfield_fail(err, k, "must not contain a "
			    "control character");
		memcpy(m->reason, s, strlen(s) + 1);
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
	return jsonfield_fail(err, k, "unknown member (a drain marker has "
	    "node, reason and since)");
}

int
drainmark_decode(const char *data, size_t len, struct drainmark *m,
    struct task_error *err)
{
	json_t *root, *v;
	const char *k;
	int seen = 0, rc = 0;

	memset(m, 0, sizeof(*m));
	root = jsonfield_load_object(data, len, DRAINMARK_FILE_MAX, err);
	if (root == NULL)
		return -1;
	json_object_foreach(root, k, v)
		if ((rc = decode_member(m, k, v, &seen, err)) != 0)
			break;
	json_decref(root);
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
