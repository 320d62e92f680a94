/*
 * result — result envelope codec; see result.h.
 */
#include "core/result.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsontext.h"
#include "core/tstime.h"

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
	if (t->traceparent != NULL)
		json_object_set_new(o, "traceparent",
		    json_string(t->traceparent));
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
	/* Why a CANCELLED task was: its last attempt's reason, with the
	 * code a dependency's cancel (README.md, "Dependencies") names. */
	if (strcmp(ri->status, "CANCELLED") == 0 && last != NULL &&
	    last->reason[0] != '\0') {
		json_t *cr = json_object();
		size_t n = strlen(RESULT_NEVER_SATISFIED);

		json_object_set_new(cr, "code", json_string(strncmp(
		    last->reason, RESULT_NEVER_SATISFIED, n) == 0 &&
		    last->reason[n] == ':' ? RESULT_NEVER_SATISFIED :
		    "CANCELLED"));
		json_object_set_new(cr, "message", string_lossy(last->reason,
		    strlen(last->reason)));
		json_object_set_new(o, "cancelReason", cr);
	}
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

int
result_valid(const char *data, size_t len, char *why, size_t whylen)
{
	json_error_t je;
	json_t *o = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	const json_t *st;

	if (o == NULL) {
		if (why != NULL)
			snprintf(why, whylen, "not valid JSON (line %d, column "
			    "%d: %s)", je.line, je.column, je.text);
		return 0;
	}
	st = json_object_get(o, "status");
	if (!json_is_string(st) || strlen(json_string_value(st)) > 15 ||
	    !json_is_array(json_object_get(o, "attempts"))) {
		if (why != NULL)
			snprintf(why, whylen, "not a result envelope (no "
			    "status or attempts member)");
		json_decref(o);
		return 0;
	}
	json_decref(o);
	return 1;
}

#define SALVAGE_DEPTH	32	/* deeper nesting: nothing salvaged */
#define SALVAGE_TRIES	16	/* cut points tried, the last ones first */

/*
 * Scan data[0..len) outside strings: the open brackets at its end,
 * innermost last, into stack (the depth is returned, -1 when deeper than
 * SALVAGE_DEPTH); with cut != NULL, the offsets of its last
 * SALVAGE_TRIES commas into the ring cut, *ncut counting them all.
 */
static int
scan_json(const char *data, size_t len, char *stack, size_t *cut,
    size_t *ncut)
{
	int depth = 0, instr = 0, esc = 0;

	for (size_t i = 0; i < len; i++) {
		char c = data[i];

		if (instr) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				instr = 0;
		} else if (c == '"')
			instr = 1;
		else if (c == ',' && cut != NULL)
			cut[(*ncut)++ % SALVAGE_TRIES] = i;
		else if (c == '{' || c == '[') {
			if (depth == SALVAGE_DEPTH)
				return -1;
			stack[depth++] = c;
		} else if ((c == '}' || c == ']') && depth > 0)
			depth--;
	}
	return depth;
}

/*
 * What of a torn JSON object still parses: cut the text after the last
 * complete value (just before one of its last SALVAGE_TRIES commas
 * outside strings), close the brackets still open and parse that.
 * Returns a new object, or NULL when no cut gives one.
 */
static json_t *
salvage(const char *data, size_t len)
{
	size_t cut[SALVAGE_TRIES], ncut = 0;
	char stack[SALVAGE_DEPTH];

	(void)scan_json(data, len, stack, cut, &ncut);
	for (size_t k = 0; k < ncut && k < SALVAGE_TRIES; k++) {
		size_t at = cut[(ncut - 1 - k) % SALVAGE_TRIES];
		int depth = scan_json(data, at, stack, NULL, NULL);
		struct buf b;
		json_t *o;

		if (depth < 1 || stack[0] != '{')
			continue;
		buf_init(&b, 0);
		if (buf_append(&b, data, at) != 0) {
			buf_fini(&b);
			return NULL;
		}
		while (depth > 0)
			(void)buf_append(&b, stack[--depth] == '{' ? "}" : "]",
			    1);
		o = jsontext_loadb(b.data, b.len, 0, NULL);
		buf_fini(&b);
		if (json_is_object(o))
			return o;
		json_decref(o);
	}
	return NULL;
}

/* The attempts of the JSON array arr (salvaged) through the task codec,
 * into tmp (initialised); 0 or -1. */
static int
salvage_attempts(const char *code, json_t *arr, struct task *tmp)
{
	json_t *w = json_pack("{s:s, s:O}", "taskCode", code, "attempts",
	    arr);
	struct task_error te;
	char *text;
	int rc;

	if (w == NULL)
		return -1;
	text = json_dumps(w, JSON_COMPACT);
	json_decref(w);
	if (text == NULL)
		return -1;
	rc = task_decode(text, strlen(text), tmp, &te);
	free(text);
	return rc;
}

static int64_t
salvaged_time(json_t *o, const char *k)
{
	int64_t ms;

	if (!json_is_string(json_object_get(o, k)) || tstime_parse_rfc3339(
	    json_string_value(json_object_get(o, k)), &ms) != 0 || ms < 0)
		return -1;
	return ms;
}

/* The final attempt when the salvage did not reach it. */
static void
rebuilt_attempt(const struct task *t, json_t *sv, const char *status,
    struct task_attempt *a)
{
	const char *node = json_string_value(json_object_get(sv, "node"));
	const char *fc = json_string_value(json_object_get(json_object_get(
	    sv, "failureReason"), "code"));

	memset(a, 0, sizeof(*a));
	a->attempt = (int)t->nattempts + 1;
	snprintf(a->node, sizeof(a->node), "%s", node != NULL &&
	    task_name_ok(node, TASK_CODE_MAX) ? node : "unknown");
	a->start_ms = t->nattempts == 0 ? salvaged_time(sv, "startedAt") : -1;
	a->end_ms = salvaged_time(sv, "finishedAt");
	a->exit_code = strcmp(status, "SUCCESS") == 0 ? 0 : -1;
	a->retry_at_ms = -1;
	a->outcome = strcmp(status, "SUCCESS") == 0 ? TASK_OUTCOME_SUCCESS :
	    strcmp(status, "CANCELLED") == 0 ? TASK_OUTCOME_CANCELLED :
	    fc == NULL ? TASK_OUTCOME_FAILED :
	    strcmp(fc, "TIMEOUT") == 0 ? TASK_OUTCOME_TIMEOUT :
	    strcmp(fc, "LOST") == 0 ? TASK_OUTCOME_LOST :
	    strcmp(fc, "HOOK_ERROR") == 0 ? TASK_OUTCOME_ERROR :
	    TASK_OUTCOME_FAILED;
	snprintf(a->reason, sizeof(a->reason), "details lost: the result "
	    "file was torn; rebuilt from the task file%s", sv != NULL ?
	    " and what of the torn file still parsed" : "");
}

int
result_rebuild(const struct task *t, const char *status, const char *torn,
    size_t tornlen, int max_retries, struct buf *out)
{
	json_t *sv = torn != NULL ? salvage(torn, tornlen) : NULL;
	json_t *arr = json_object_get(sv, "attempts"), *fr, *hr;
	struct task tt, tmp;
	struct task_attempt fin;
	struct result_info ri;
	char *hrtext = NULL;
	int rc = -1, have = 0;

	/* tt: t's scalars (borrowed) with a history of its own. */
	tt = *t;
	tt.attempts = NULL;
	tt.nattempts = 0;
	for (size_t i = 0; i < t->nattempts; i++)
		if (task_add_attempt(&tt, &t->attempts[i]) != 0)
			goto out;
	task_init(&tmp);
	if (json_is_array(arr) && json_array_size(arr) > t->nattempts &&
	    salvage_attempts(t->task_code, arr, &tmp) == 0 &&
	    tmp.nattempts > t->nattempts) {
		fin = tmp.attempts[t->nattempts];
		have = 1;
	}
	task_fini(&tmp);
	if (!have)
		rebuilt_attempt(t, sv, status, &fin);
	if (task_add_attempt(&tt, &fin) != 0)
		goto out;
	memset(&ri, 0, sizeof(ri));
	ri.status = status;
	fr = json_object_get(sv, "failureReason");
	if (strcmp(status, "FAILED") == 0) {
		ri.failure_code = json_is_string(json_object_get(fr, "code")) ?
		    json_string_value(json_object_get(fr, "code")) :
		    fin.outcome == TASK_OUTCOME_TIMEOUT ? "TIMEOUT" :
		    fin.outcome == TASK_OUTCOME_LOST ? "LOST" :
		    fin.outcome == TASK_OUTCOME_ERROR ? "HOOK_ERROR" :
		    "WORKER_EXIT";
		ri.failure_message = json_is_string(json_object_get(fr,
		    "message")) ? json_string_value(json_object_get(fr,
		    "message")) : fin.reason;
	}
	hr = json_object_get(sv, "result");
	if (hr != NULL && !json_is_null(hr) && (hrtext = json_dumps(hr,
	    JSON_COMPACT | JSON_ENCODE_ANY)) != NULL) {
		ri.hook_result = hrtext;
		ri.hook_result_len = strlen(hrtext);
	}
	if (json_is_string(json_object_get(sv, "stdoutTail"))) {
		ri.stdout_tail = json_string_value(json_object_get(sv,
		    "stdoutTail"));
		ri.stdout_len = json_string_length(json_object_get(sv,
		    "stdoutTail"));
	}
	if (json_is_string(json_object_get(sv, "stderrTail"))) {
		ri.stderr_tail = json_string_value(json_object_get(sv,
		    "stderrTail"));
		ri.stderr_len = json_string_length(json_object_get(sv,
		    "stderrTail"));
	}
	ri.max_retries = json_is_integer(json_object_get(sv, "maxRetries")) ?
	    (int)json_integer_value(json_object_get(sv, "maxRetries")) :
	    max_retries;
	ri.fence = json_is_integer(json_object_get(sv, "fencingToken")) ?
	    (long long)json_integer_value(json_object_get(sv,
	    "fencingToken")) : 0;
	rc = result_encode(&tt, &ri, out);
out:
	free(tt.attempts);
	free(hrtext);
	json_decref(sv);
	return rc;
}
