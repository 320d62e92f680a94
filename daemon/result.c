/*
 * result — result envelope codec; see result.h.
 */
#include "result.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "jsontext.h"
#include "tstime.h"

/* A JSON string from bytes that may not be UTF-8: bad bytes → U+FFFD. */
static json_t *
string_lossy(const char *p, size_t n)
{
	struct buf b;
	json_t *s;
	size_t i = 0;

	if (p == NULL)
		return json_string("");
	/* NUL is valid UTF-8 but not allowed in our JSON (API.md §4.1):
	 * such tails take the lossy path too. */
	if (memchr(p, 0, n) == NULL && (s = json_stringn(p, n)) != NULL)
		return s;
	buf_init(&b, 0);
	while (i < n) {
		unsigned char c = (unsigned char)p[i];
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 :
		    (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		json_t *probe;

		if (c == 0) {
			buf_puts(&b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		probe = len > 0 && i + len <= n ? json_stringn(p + i, len) :
		    NULL;
		if (probe != NULL) {
			buf_append(&b, p + i, len);
			json_decref(probe);
			i += len;
		} else {
			buf_puts(&b, "\xef\xbf\xbd");
			i++;
		}
	}
	s = json_stringn(b.data != NULL ? b.data : "", b.len);
	buf_fini(&b);
	return s;
}

static void
put_time(json_t *o, const char *k, int64_t ms)
{
	char b[TSTIME_BUF];

	json_object_set_new(o, k, ms >= 0 ?
	    json_string(tstime_format_ms(b, sizeof(b), ms)) : json_null());
}

int
result_encode(const struct task *t, const struct result_info *ri,
    struct buf *out)
{
	json_t *o = json_object(), *arr, *hr = NULL;
	const struct task_attempt *first = NULL, *last = NULL;
	int64_t start = -1, end = -1;
	char *s;
	int rc;

	if (o == NULL)
		return -1;
	for (size_t i = 0; i < t->nattempts; i++)
		if (t->attempts[i].start_ms >= 0) {
			first = &t->attempts[i];
			break;
		}
	if (t->nattempts > 0)
		last = &t->attempts[t->nattempts - 1];
	if (first != NULL)
		start = first->start_ms;
	if (last != NULL)
		end = last->end_ms;
	json_object_set_new(o, "requestId", json_string(t->request_id));
	json_object_set_new(o, "taskCode", json_string(t->task_code));
	json_object_set_new(o, "taskName", t->task_name != NULL ?
	    json_string(t->task_name) : json_null());
	json_object_set_new(o, "status", json_string(ri->status));
	put_time(o, "createdAt", t->created_ms);
	put_time(o, "startedAt", start);
	put_time(o, "finishedAt", end);
	json_object_set_new(o, "durationMs", start >= 0 && end >= start ?
	    json_integer(end - start) : json_integer(0));
	json_object_set_new(o, "attempt", json_integer((json_int_t)
	    t->nattempts));
	json_object_set_new(o, "maxRetries", json_integer(ri->max_retries));
	json_object_set_new(o, "node", last != NULL ? json_string(last->node) :
	    json_null());
	put_time(o, "triggerTime", t->trigger_ms);
	if (ri->fence > 0)
		json_object_set_new(o, "fencingToken", json_integer(
		    (json_int_t)ri->fence));
	if (ri->hook_result != NULL)
		hr = jsontext_loadb(ri->hook_result, ri->hook_result_len,
		    JSON_DECODE_ANY, NULL);
	json_object_set_new(o, "result", hr != NULL ? hr : json_null());
	if (ri->failure_code != NULL) {
		json_t *fr = json_object();

		json_object_set_new(fr, "code", json_string(ri->failure_code));
		json_object_set_new(fr, "message", string_lossy(
		    ri->failure_message != NULL ? ri->failure_message : "",
		    ri->failure_message != NULL ?
		    strlen(ri->failure_message) : 0));
		json_object_set_new(o, "failureReason", fr);
	} else
		json_object_set_new(o, "failureReason", json_null());
	arr = json_array();
	for (size_t i = 0; i < t->nattempts; i++) {
		json_t *a = task_attempt_json(&t->attempts[i]);

		if (a != NULL)
			json_array_append_new(arr, a);
	}
	json_object_set_new(o, "attempts", arr);
	json_object_set_new(o, "stdoutTail", string_lossy(ri->stdout_tail,
	    ri->stdout_len));
	json_object_set_new(o, "stderrTail", string_lossy(ri->stderr_tail,
	    ri->stderr_len));
	s = json_dumps(o, JSON_INDENT(2));
	json_decref(o);
	if (s == NULL)
		return -1;
	rc = buf_puts(out, s);
	if (rc == 0)
		rc = buf_puts(out, "\n");
	free(s);
	return rc;
}

int
result_peek(const char *data, size_t len, char *status, size_t *nattempts)
{
	json_t *o = jsontext_loadb(data, len, 0, NULL), *st, *arr;

	if (o == NULL)
		return -1;
	st = json_object_get(o, "status");
	arr = json_object_get(o, "attempts");
	if (!json_is_string(st) || !json_is_array(arr) ||
	    strlen(json_string_value(st)) > 15) {
		json_decref(o);
		return -1;
	}
	strcpy(status, json_string_value(st));
	*nattempts = json_array_size(arr);
	json_decref(o);
	return 0;
}

int
result_json_ok(const char *data, size_t len)
{
	json_t *v = jsontext_loadb(data, len, JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES, NULL);

	if (v == NULL)
		return 0;
	json_decref(v);
	return 1;
}
