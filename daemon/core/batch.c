/*
 * batch — batch.json codec and the members' summary; see batch.h.
 */
#include "core/batch.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>


void
batch_init(struct batch *b)
{
	memset(b, 0, sizeof(*b));
	b->created_ms = b->closed_ms = b->completed_ms = -1;
}

int
batch_id_ok(const char *id)
{
	return task_name_ok(id, BATCH_ID_MAX);
}

/* A time member that must not be before 1970. */
static int
get_time(json_t *v, const char *k, int64_t *out, struct task_error *err)
{
	if (jsonfield_time(v, k, out, err) != 0)
		return -1;
	if (*out < 0)
		return jsonfield_fail(err, k, "must not be before "
		    "1970-01-01T00:00:00Z");
	return 0;
}

/* A string member copied into out (room for max + 1 bytes). */
static int
get_str(json_t *v, const char *k, size_t max, char *out,
    struct task_error *err)
{
	const char *s;

	if (jsonfield_string(v, k, max, &s, err) != 0)
		return -1;
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

/* One member k = v into *b; seen counts the required ones. */
static int
decode_member(struct batch *b, const char *k, json_t *v, int *seen,
    struct task_error *err)
{
	if (strcmp(k, "batchId") == 0) {
		*seen |= 1;
		return task_json_name(v, k, BATCH_ID_MAX, b->id, err);
	}
	if (strcmp(k, "createdAt") == 0) {
		*seen |= 2;
		return get_time(v, k, &b->created_ms, err);
	}
	if (strcmp(k, "onComplete") == 0)
		return task_json_name(v, k, TASK_CODE_MAX, b->on_complete,
		    err);
	if (strcmp(k, "callbackUrl") == 0) {
		if (get_str(v, k, TASK_URL_MAX, b->callback_url, err) != 0)
			return -1;
		if (strncmp(b->callback_url, "http://", 7) != 0 &&
		    strncmp(b->callback_url, "https://", 8) != 0)
			return jsonfield_fail(err, k, "must be an http or "
			    "https URL");
		return 0;
	}
	if (strcmp(k, "closedAt") == 0)
		return get_time(v, k, &b->closed_ms, err);
	if (strcmp(k, "completedAt") == 0)
		return get_time(v, k, &b->completed_ms, err);
	if (strcmp(k, "onCompleteRequestId") == 0)
		return task_json_name(v, k, TASK_ID_MAX, b->complete_id, err);
	if (strcmp(k, "appId") == 0) {
		if (get_str(v, k, TASK_APP_ID_MAX, b->app_id, err) != 0)
			return -1;
		if (!task_app_id_ok(b->app_id))
			return jsonfield_fail(err, k, "must match "
			    "[A-Za-z0-9_-]{1,64}");
		return 0;
	}
	return jsonfield_fail(err, k, "unknown member (a batch has batchId, "
	    "createdAt, onComplete, callbackUrl, closedAt, completedAt, "
	    "onCompleteRequestId and appId)");
}

int
batch_decode(const char *data, size_t len, struct batch *b,
    struct task_error *err)
{
	json_t *root, *v;
	const char *k;
	int seen = 0, rc = 0;

	batch_init(b);
	root = jsonfield_object(data, len, BATCH_FILE_MAX, err);
	if (root == NULL)
		return -1;
	json_object_foreach(root, k, v)
		if ((rc = decode_member(b, k, v, &seen, err)) != 0)
			break;
	json_decref(root);
	if (rc == 0 && !(seen & 1))
		rc = jsonfield_fail(err, "batchId", "required member missing");
	if (rc == 0 && !(seen & 2))
		rc = jsonfield_fail(err, "createdAt", "required member "
		    "missing");
	if (rc == 0 && b->completed_ms < 0 && b->complete_id[0] != '\0')
		rc = jsonfield_fail(err, "onCompleteRequestId", "only with "
		    "completedAt");
	if (rc == 0 && b->completed_ms >= 0 && b->closed_ms < 0)
		rc = jsonfield_fail(err, "completedAt", "a batch completes "
		    "only once closed (closedAt missing)");
	if (rc != 0)
		batch_init(b);
	return rc;
}

int
batch_encode(const struct batch *b, struct buf *out)
{
	json_t *o;
	char *s;
	int bad;

	if (!batch_id_ok(b->id) || b->created_ms < 0) {
		errno = EINVAL;
		return -1;
	}
	if ((o = json_object()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	bad = json_object_set_new(o, "batchId", json_string(b->id));
	bad |= jsonfield_put_time(o, "createdAt", b->created_ms);
	if (b->on_complete[0] != '\0')
		bad |= json_object_set_new(o, "onComplete",
		    json_string(b->on_complete));
	if (b->callback_url[0] != '\0')
		bad |= json_object_set_new(o, "callbackUrl",
		    json_string(b->callback_url));
	if (b->closed_ms >= 0)
		bad |= jsonfield_put_time(o, "closedAt", b->closed_ms);
	if (b->completed_ms >= 0) {
		bad |= jsonfield_put_time(o, "completedAt", b->completed_ms);
		if (b->complete_id[0] != '\0')
			bad |= json_object_set_new(o, "onCompleteRequestId",
			    json_string(b->complete_id));
	}
	if (b->app_id[0] != '\0')
		bad |= json_object_set_new(o, "appId", json_string(b->app_id));
	s = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (s == NULL || buf_puts(out, s) != 0 || buf_puts(out, "\n") != 0) {
		free(s);
		errno = bad ? EINVAL : ENOMEM;
		return -1;
	}
	free(s);
	return 0;
}

int
batch_state_terminal(const char *state)
{
	static const char *const terminal[] = { "SUCCESS", "FAILED",
	    "CANCELLED", "CORRUPT", "MISSING" };

	for (size_t i = 0; i < sizeof(terminal) / sizeof(terminal[0]); i++)
		if (strcmp(state, terminal[i]) == 0)
			return 1;
	return 0;
}

void
batch_summary_init(struct batch_summary *s)
{
	memset(s, 0, sizeof(*s));
}

void
batch_summary_fini(struct batch_summary *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nfailed; i++)
		free(s->failed[i]);
	free(s->failed);
	batch_summary_init(s);
}

int
batch_summary_add(struct batch_summary *s, const char *id, const char *state)
{
	size_t i;

	for (i = 0; i < s->nstates; i++)
		if (strcmp(s->counts[i].state, state) == 0)
			break;
	if (i == s->nstates && (s->nstates >= BATCH_NSTATES - 1 ||
	    strlen(state) >= sizeof(s->counts[0].state))) {
		/* The last slot is kept for OTHER. */
		state = "OTHER";
		for (i = 0; i < s->nstates; i++)
			if (strcmp(s->counts[i].state, state) == 0)
				break;
	}
	if (i == s->nstates) {
		memcpy(s->counts[i].state, state, strlen(state) + 1);
		s->counts[i].n = 0;
		s->nstates++;
	}
	if (batch_state_terminal(state) && strcmp(state, "SUCCESS") != 0) {
		char **p = reallocarray(s->failed, s->nfailed + 1,
		    sizeof(*p));

		if (p == NULL)
			return -1;
		s->failed = p;
		if ((p[s->nfailed] = strdup(id)) == NULL)
			return -1;
		s->nfailed++;
	}
	s->counts[i].n++;
	s->total++;
	if (batch_state_terminal(state))
		s->nterminal++;
	return 0;
}

int
batch_summary_done(const struct batch_summary *s)
{
	return s->total > 0 && s->nterminal == s->total;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmp_count(const void *a, const void *b)
{
	const struct batch_count *x = a, *y = b;

	return strcmp(x->state, y->state);
}

void
batch_summary_sort(struct batch_summary *s)
{
	if (s->nstates > 1)
		qsort(s->counts, s->nstates, sizeof(s->counts[0]), cmp_count);
	if (s->nfailed > 1)
		qsort(s->failed, s->nfailed, sizeof(s->failed[0]), cmp_str);
}

int
batch_summary_encode(const struct batch *b, const struct batch_summary *s,
    int full, struct buf *out)
{
	json_t *o, *counts, *failed;
	const char **ids = NULL, *names[BATCH_NSTATES];
	size_t order[BATCH_NSTATES];
	char *text;
	int bad = 0;

	o = json_object();
	counts = json_object();
	failed = json_array();
	if (s->nfailed > 0 &&
	    (ids = calloc(s->nfailed, sizeof(*ids))) == NULL)
		bad = 1;
	if (o == NULL || counts == NULL || failed == NULL || bad) {
		json_decref(o);
		json_decref(counts);
		json_decref(failed);
		free(ids);
		errno = ENOMEM;
		return -1;
	}
	/* Sorted, so two leaders (or a leader and the CLI) print the same
	 * bytes for the same members whatever order readdir gave. */
	for (size_t i = 0; i < s->nstates; i++) {
		names[i] = s->counts[i].state;
		order[i] = i;
	}
	for (size_t i = 1; i < s->nstates; i++)
		for (size_t j = i; j > 0 &&
		    strcmp(names[order[j - 1]], names[order[j]]) > 0; j--) {
			size_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t i = 0; i < s->nstates; i++)
		bad |= json_object_set_new(counts, names[order[i]],
		    json_integer((json_int_t)s->counts[order[i]].n));
	for (size_t i = 0; i < s->nfailed; i++)
		ids[i] = s->failed[i];
	if (s->nfailed > 1)
		qsort(ids, s->nfailed, sizeof(*ids), cmp_str);
	for (size_t i = 0; i < s->nfailed; i++)
		bad |= json_array_append_new(failed, json_string(ids[i]));
	free(ids);
	bad |= json_object_set_new(o, "batchId", json_string(b->id));
	bad |= json_object_set_new(o, "total",
	    json_integer((json_int_t)s->total));
	bad |= json_object_set_new(o, "counts", counts);
	bad |= json_object_set_new(o, "failed", failed);
	if (full) {
		bad |= json_object_set_new(o, "closed",
		    json_boolean(b->closed_ms >= 0));
		bad |= jsonfield_put_time(o, "closedAt", b->closed_ms);
		bad |= json_object_set_new(o, "completed",
		    json_boolean(b->completed_ms >= 0));
		bad |= jsonfield_put_time(o, "completedAt", b->completed_ms);
		bad |= json_object_set_new(o, "onComplete",
		    b->on_complete[0] != '\0' ?
		    json_string(b->on_complete) : json_null());
		bad |= json_object_set_new(o, "onCompleteRequestId",
		    b->complete_id[0] != '\0' ?
		    json_string(b->complete_id) : json_null());
		bad |= json_object_set_new(o, "callbackUrl",
		    b->callback_url[0] != '\0' ?
		    json_string(b->callback_url) : json_null());
		bad |= jsonfield_put_time(o, "createdAt", b->created_ms);
	}
	text = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL || buf_puts(out, text) != 0) {
		free(text);
		errno = ENOMEM;
		return -1;
	}
	free(text);
	return 0;
}
