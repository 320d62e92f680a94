/*
 * task — task file codec; see task.h.
 */
#include "core/task.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonfield.h"
#include "core/jsontext.h"
#include "core/conckey.h"
#include "core/fairshare.h"
#include "core/priority.h"
#include "core/suggest.h"
#include "core/tags.h"
#include "core/traceparent.h"
#include "core/alert.h"
#include "core/tstime.h"

/* The refusal of jsonfield.h, under the short name the decoders use. */
#define fail(...) jsonfield_fail(__VA_ARGS__)

static const char *const outcome_names[] = { "SUCCESS", "FAILED",
	"TEMPFAIL", "TIMEOUT", "LOST", "CANCELLED", "ERROR" };

const char *
task_outcome_name(enum task_outcome o)
{
	if ((size_t)o >= sizeof(outcome_names) / sizeof(outcome_names[0]))
		return "UNKNOWN";
	return outcome_names[o];
}

static int
outcome_parse(const char *s, enum task_outcome *o)
{
	for (size_t i = 0;
	    i < sizeof(outcome_names) / sizeof(outcome_names[0]); i++)
		if (strcmp(s, outcome_names[i]) == 0) {
			*o = (enum task_outcome)i;
			return 0;
		}
	return -1;
}

int
task_app_id_ok(const char *s)
{
	size_t len = strlen(s);

	return len >= 1 && len <= TASK_APP_ID_MAX && strspn(s,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_-") == len;
}

int
task_name_ok(const char *s, size_t max)
{
	size_t n = 0;

	if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') ||
	    (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (; s[n] != '\0'; n++) {
		char c = s[n];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		    c == '-'))
			return 0;
	}
	return n <= max;
}

int
task_json_name(json_t *v, const char *field, size_t max, char *out,
    struct task_error *err)
{
	const char *s = NULL;

	if (jsonfield_string(v, field, max, &s, err) != 0)
		return -1;
	if (!task_name_ok(s, max))
		return fail(err, field, "must match [A-Za-z0-9]"
		    "[A-Za-z0-9_.-]{0,%zu}", max - 1);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

void
task_init(struct task *t)
{
	memset(t, 0, sizeof(*t));
	t->trigger = TASK_TRIGGER_NOW;
	t->delay_ms = t->run_at_ms = -1;
	t->max_retries = t->timeout_sec = -1;
	t->shard_index = t->shard_total = -1;
	t->created_ms = t->not_before_ms = t->trigger_ms = -1;
	t->on_failure_mode = -1;
	t->priority = -1;
	t->max_per_key = -1;
	t->app_weight = -1;
}

void
task_fini(struct task *t)
{
	if (t == NULL)
		return;
	free(t->task_name);
	free(t->params);
	free(t->callback_url);
	free(t->route);
	free(t->require_tags);
	free(t->conc_key_tmpl);
	free(t->conc_key);
	free(t->traceparent);
	free(t->shard_key);
	free(t->job_code);
	free(t->app_id);
	free(t->attempts);
	depend_list_fini(&t->depends);
	depend_list_fini(&t->released);
	task_init(t);
}

int
task_json_alert_mode(json_t *v, const char *field, int *out,
    struct task_error *err)
{
	enum alert_mode m;

	if (!json_is_string(v) ||
	    alert_mode_parse(json_string_value(v), &m) != 0)
		return fail(err, field, "must be \"every\" or \"transition\"");
	*out = (int)m;
	return 0;
}

int
task_add_attempt(struct task *t, const struct task_attempt *a)
{
	struct task_attempt *p;

	if (t->nattempts == TASK_ATTEMPTS_MAX) {
		memmove(t->attempts, t->attempts + 1,
		    (t->nattempts - 1) * sizeof(*p));
		t->nattempts--;
	}
	p = reallocarray(t->attempts, t->nattempts + 1, sizeof(*p));
	if (p == NULL)
		return -1;
	t->attempts = p;
	p[t->nattempts++] = *a;
	return 0;
}

/* The members of a task file and of an attempts[] entry (decode_member,
 * decode_attempt), for the "did you mean" of an unknown one. */
static const char *const task_members[] = {
	"requestId", "taskCode", "taskName", "triggerType", "delayMs",
	"runAt", "executeParams", "callbackUrl", "maxRetries", "timeoutSec",
	"route", "shardKey", "shardIndex", "shardTotal", "jobCode", "appId",
	"batchId", "createdAt", "notBefore", "triggerTime", "attempts",
	"traceparent", "dependsOn", "releasedBy", "onFailure", "onFailureMode",
	"alertFor", "priority", "requireTags", "concurrencyKey",
	"maxConcurrentPerKey", "appWeight"
};
static const char *const attempt_members[] = {
	"attempt", "node", "startedAt", "finishedAt", "retryAt",
	"durationMs", "exitCode", "signal", "outcome", "reason", "traceparent"
};
#define NELEM_T(a)	(sizeof(a) / sizeof((a)[0]))

/* "unknown member": field is the error's field, name the member as
 * written; with a close known name, "did you mean" it. */
static int
unknown(struct task_error *err, const char *field, const char *name,
    const char *const *known, size_t n, const char *where)
{
	const char *near = suggest_name(name, known, n);

	if (near != NULL)
		return fail(err, field, "unknown member (did you mean "
		    "\"%s\"? see %s)", near, where);
	return fail(err, field, "unknown member (see %s)", where);
}

/* Depth of nesting below v, failing past TASK_DEPTH_MAX. */
static int
depth_ok(json_t *v, int depth)
{
	size_t i;
	const char *k;
	json_t *e;

	/* Depth counts containers: executeParams itself is level 1, a
	 * scalar adds none; 32 nested arrays pass, 33 do not. */
	if ((json_is_array(v) || json_is_object(v)) && depth > TASK_DEPTH_MAX)
		return 0;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if (!depth_ok(e, depth + 1))
				return 0;
	} else if (json_is_object(v)) {
		json_object_foreach(v, k, e)
			if (!depth_ok(e, depth + 1))
				return 0;
	}
	return 1;
}

/*
 * --- raw member span finder ---
 *
 * The input has passed jsontext_check() and jansson, but the scanner
 * still never steps past n and never takes a byte that cannot end a
 * scalar for part of one, so a broken text (member_at() scans those)
 * cannot make it reach memory it does not own.
 */

static size_t
skip_ws(const char *d, size_t i, size_t n)
{
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' ||
	    d[i] == '\r'))
		i++;
	return i;
}

/* Index just past the string starting at d[i] == '"'; at most n. */
static size_t
skip_string(const char *d, size_t i, size_t n)
{
	for (i++; i < n && d[i] != '"'; i++)
		if (d[i] == '\\')
			i++;
	return i < n ? i + 1 : n;
}

/* A byte of a number or of true, false, null (RFC 8259 §3, §6). */
static int
scalar_byte(char c)
{
	return (c >= '0' && c <= '9') || (c != '\0' &&
	    strchr("+-.eEtrufalsn", c) != NULL);
}

static size_t
skip_value(const char *d, size_t i, size_t n)
{
	int depth = 0;

	if (i >= n)
		return n;	/* a text that ends after ':' (not JSON) */
	if (d[i] == '"')
		return skip_string(d, i, n);
	if (d[i] != '{' && d[i] != '[') {
		while (i < n && scalar_byte(d[i]))
			i++;
		return i;
	}
	for (; i < n; i++) {
		if (d[i] == '"') {
			i = skip_string(d, i, n) - 1;
			continue;
		}
		if (d[i] == '{' || d[i] == '[')
			depth++;
		else if ((d[i] == '}' || d[i] == ']') && --depth == 0)
			return i + 1;
	}
	return i;
}

/* Find the raw bytes of top-level member `name`; 0 found, -1 not. */
static int
member_span(const char *d, size_t n, const char *name, size_t *start,
    size_t *end)
{
	size_t i = skip_ws(d, 0, n);

	if (i >= n || d[i] != '{')
		return -1;
	i++;
	for (;;) {
		size_t ks, ke, vs;
		int match;

		i = skip_ws(d, i, n);
		if (i >= n || d[i] != '"')
			return -1;
		ks = i;
		ke = skip_string(d, i, n);
		if (memchr(d + ks, '\\', ke - ks) == NULL)
			match = ke - ks >= 2 && ke - ks - 2 == strlen(name) &&
			    memcmp(d + ks + 1, name, ke - ks - 2) == 0;
		else {
			json_t *k = jsontext_loadb(d + ks, ke - ks,
			    JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

			match = k != NULL && json_is_string(k) &&
			    json_string_length(k) == strlen(name) &&
			    memcmp(json_string_value(k), name,
			    strlen(name)) == 0;
			json_decref(k);
		}
		i = skip_ws(d, ke, n);
		if (i >= n || d[i] != ':')
			return -1;
		vs = skip_ws(d, i + 1, n);
		i = skip_value(d, vs, n);
		if (match) {
			*start = vs;
			*end = i;
			return 0;
		}
		i = skip_ws(d, i, n);
		if (i >= n || d[i] != ',')
			return -1;
		i++;
	}
}

int
task_copy_params(const char *data, size_t len, int present, char **params,
    size_t *plen, struct task_error *err)
{
	size_t ps, pe;

	if (!present) {
		*params = strdup("{}");
		*plen = 2;
	} else if (member_span(data, len, "executeParams", &ps, &pe) != 0)
		return fail(err, "executeParams", "could not locate value");
	else if (pe <= ps || pe > len ||
	    memchr(data + ps, '\0', pe - ps) != NULL)
		return fail(err, "executeParams", "could not locate value");
	else if ((*params = malloc(pe - ps + 1)) != NULL) {
		/* one length for the bytes and the copy (issue 10) */
		memcpy(*params, data + ps, pe - ps);
		(*params)[pe - ps] = '\0';
		*plen = pe - ps;
	}
	if (*params == NULL)
		return fail(err, "executeParams", "out of memory");
	return 0;
}

/* --- member decoders --- */

/* A time member; every instant before 1970 is simply in the past, which
 * is all a task's times need to say (-1 means "absent" in struct task). */
static int
get_time(json_t *v, const char *field, int64_t *out, struct task_error *err)
{
	if (jsonfield_time(v, field, out, err) != 0)
		return -1;
	if (*out < 0)
		*out = 0;
	return 0;
}

/* traceparent: a W3C value (core/traceparent.h), kept in its version-00
 * form so that a task file and what the hook gets agree. */
static int
decode_traceparent(json_t *v, const char *field, struct task *t,
    struct task_error *err)
{
	struct traceparent tp;
	const char *why = "invalid";
	char out[TRACEPARENT_LEN + 1];

	if (!json_is_string(v))
		return fail(err, field, "must be a string (a W3C "
		    "traceparent)");
	if (traceparent_parse(json_string_value(v), json_string_length(v),
	    &tp, &why) != 0)
		return fail(err, field, "must be a W3C traceparent: %s", why);
	traceparent_format(&tp, out);
	free(t->traceparent);
	if ((t->traceparent = strdup(out)) == NULL)
		return fail(err, field, "out of memory");
	return 0;
}

int
task_route_ok(const char *s)
{
	static const char *const routes[] = { "any", "round_robin",
		"least_active", "consistent_hash", "broadcast" };

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(s, routes[i]) == 0)
			return 1;
	return (strncmp(s, "node:", 5) == 0 && task_name_ok(s + 5,
	    TASK_CODE_MAX)) || tags_route_ok(s);
}

static int
decode_attempt(json_t *o, size_t idx, struct task_attempt *a,
    struct task_error *err)
{
	char field[64];
	const char *k;
	json_t *v;
	int64_t n;

	/* attempt and node are required: the encoder always writes both
	 * and an entry without them would come back as "attempt":0 and
	 * "node":"", which nothing can decode (issue 10, item 2). */
	snprintf(field, sizeof(field), "attempts[%zu]", idx);
	if (!json_is_object(o))
		return fail(err, field, "must be an object");
	memset(a, 0, sizeof(*a));
	a->start_ms = a->end_ms = a->retry_at_ms = -1;
	a->exit_code = -1;
	a->outcome = TASK_OUTCOME_LOST;
	json_object_foreach(o, k, v) {
		snprintf(field, sizeof(field), "attempts[%zu].%s", idx, k);
		if (strcmp(k, "attempt") == 0) {
			if (jsonfield_int(v, field, 1, 1000000, &n, err))
				return -1;
			a->attempt = (int)n;
		} else if (strcmp(k, "node") == 0) {
			if (task_json_name(v, field, TASK_CODE_MAX, a->node,
			    err))
				return -1;
		} else if (strcmp(k, "startedAt") == 0) {
			if (!json_is_null(v) && get_time(v, field,
			    &a->start_ms, err))
				return -1;
		} else if (strcmp(k, "finishedAt") == 0) {
			if (!json_is_null(v) && get_time(v, field, &a->end_ms,
			    err))
				return -1;
		} else if (strcmp(k, "retryAt") == 0) {
			if (!json_is_null(v) && get_time(v, field,
			    &a->retry_at_ms, err))
				return -1;
		} else if (strcmp(k, "durationMs") == 0) {
			if (!json_is_null(v) && !json_is_integer(v))
				return fail(err, field, "must be an integer");
		} else if (strcmp(k, "exitCode") == 0) {
			if (!json_is_null(v)) {
				if (jsonfield_int(v, field, 0, 255, &n, err))
					return -1;
				a->exit_code = (int)n;
			}
		} else if (strcmp(k, "signal") == 0) {
			if (!json_is_null(v)) {
				if (jsonfield_int(v, field, 1, 128, &n, err))
					return -1;
				a->signal = (int)n;
			}
		} else if (strcmp(k, "outcome") == 0) {
			if (!json_is_string(v) ||
			    outcome_parse(json_string_value(v), &a->outcome))
				return fail(err, field, "must be one of "
				    "SUCCESS FAILED TEMPFAIL TIMEOUT LOST "
				    "CANCELLED ERROR");
		} else if (strcmp(k, "reason") == 0) {
			const char *s;

			if (jsonfield_string(v, field, TASK_REASON_MAX - 1, &s,
			    err))
				return -1;
			memcpy(a->reason, s, strlen(s) + 1);
		} else if (strcmp(k, "traceparent") == 0) {
			struct traceparent tp;
			const char *why = "must be a string";

			if (!json_is_string(v) || traceparent_parse(
			    json_string_value(v), json_string_length(v), &tp,
			    &why) != 0)
				return fail(err, field, "must be a W3C "
				    "traceparent: %s", why);
			traceparent_format(&tp, a->traceparent);
		} else
			return unknown(err, field, k, attempt_members,
			    NELEM_T(attempt_members), "an attempts[] entry");
	}
	if (a->attempt == 0) {
		snprintf(field, sizeof(field), "attempts[%zu].attempt", idx);
		return fail(err, field, "required member missing");
	}
	if (a->node[0] == '\0') {
		snprintf(field, sizeof(field), "attempts[%zu].node", idx);
		return fail(err, field, "required member missing");
	}
	return 0;
}

static int
decode_member(struct task *t, const char *k, json_t *v,
    struct task_error *err)
{
	int64_t n;

	if (strcmp(k, "requestId") == 0)
		return task_json_name(v, k, TASK_ID_MAX, t->request_id, err);
	if (strcmp(k, "taskCode") == 0)
		return task_json_name(v, k, TASK_CODE_MAX, t->task_code, err);
	if (strcmp(k, "taskName") == 0)
		return jsonfield_dup(v, k, TASK_NAME_MAX, &t->task_name, err);
	if (strcmp(k, "triggerType") == 0) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(s, "now") == 0)
			t->trigger = TASK_TRIGGER_NOW;
		else if (strcmp(s, "delay") == 0)
			t->trigger = TASK_TRIGGER_DELAY;
		else if (strcmp(s, "at") == 0)
			t->trigger = TASK_TRIGGER_AT;
		else
			return fail(err, k, "must be one of now, delay, at");
		return 0;
	}
	if (strcmp(k, "delayMs") == 0)
		return jsonfield_int(v, k, 0, 31536000000LL, &t->delay_ms, err);
	if (strcmp(k, "runAt") == 0)
		return get_time(v, k, &t->run_at_ms, err);
	if (strcmp(k, "executeParams") == 0)
		return depth_ok(v, 1) ? 0 : fail(err, k, "nested deeper than "
		    "%d levels", TASK_DEPTH_MAX);
	if (strcmp(k, "callbackUrl") == 0) {
		if (json_is_null(v))
			return 0;
		if (jsonfield_dup(v, k, TASK_URL_MAX, &t->callback_url, err))
			return -1;
		if (strncmp(t->callback_url, "https://", 8) != 0 &&
		    strncmp(t->callback_url, "http://", 7) != 0)
			return fail(err, k, "must be an http:// or https:// "
			    "URL");
		return 0;
	}
	if (strcmp(k, "maxRetries") == 0) {
		if (jsonfield_int(v, k, 0, 100, &n, err))
			return -1;
		t->max_retries = (int)n;
		return 0;
	}
	if (strcmp(k, "priority") == 0) {
		if (jsonfield_int(v, k, PRIORITY_MIN, PRIORITY_MAX, &n, err))
			return -1;
		t->priority = (int)n;
		return 0;
	}
	if (strcmp(k, "timeoutSec") == 0) {
		if (jsonfield_int(v, k, 1, 604800, &n, err))
			return -1;
		t->timeout_sec = (int)n;
		return 0;
	}
	if (strcmp(k, "route") == 0) {
		if (jsonfield_dup(v, k, TASK_CODE_MAX + 5, &t->route, err))
			return -1;
		if (!task_route_ok(t->route))
			return fail(err, k, "must be any, round_robin, "
			    "least_active, consistent_hash, broadcast, "
			    "node:<id> or tag:<tag>");
		return 0;
	}
	if (strcmp(k, "requireTags") == 0)
		return tags_json_decode(v, k, &t->require_tags, err);
	if (strcmp(k, "concurrencyKey") == 0) {
		if (jsonfield_dup(v, k, CONCKEY_TEMPLATE_MAX,
		    &t->conc_key_tmpl, err) != 0)
			return -1;
		return conckey_template_check(t->conc_key_tmpl, k, err);
	}
	if (strcmp(k, "maxConcurrentPerKey") == 0) {
		if (jsonfield_int(v, k, 1, CONCKEY_LIMIT_MAX, &n, err))
			return -1;
		t->max_per_key = (int)n;
		return 0;
	}
	if (strcmp(k, "appWeight") == 0) {
		if (jsonfield_int(v, k, 1, FAIR_WEIGHT_MAX, &n, err))
			return -1;
		t->app_weight = (int)n;
		return 0;
	}
	if (strcmp(k, "shardKey") == 0)
		return jsonfield_dup(v, k, TASK_NAME_MAX, &t->shard_key, err);
	if (strcmp(k, "traceparent") == 0)
		return decode_traceparent(v, k, t, err);
	if (strcmp(k, "shardIndex") == 0 || strcmp(k, "shardTotal") == 0) {
		if (jsonfield_int(v, k, k[5] == 'I' ? 0 : 1, 65536, &n, err))
			return -1;
		*(k[5] == 'I' ? &t->shard_index : &t->shard_total) = (int)n;
		return 0;
	}
	if (strcmp(k, "jobCode") == 0) {
		char code[TASK_CODE_MAX + 1];

		if (task_json_name(v, k, TASK_CODE_MAX, code, err))
			return -1;
		return (t->job_code = strdup(code)) ? 0 :
		    fail(err, k, "out of memory");
	}
	if (strcmp(k, "appId") == 0) {
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;

		if (s == NULL || !task_app_id_ok(s))
			return fail(err, k, "must match [A-Za-z0-9_-]{1,64}");
		return (t->app_id = strdup(s)) ? 0 :
		    fail(err, k, "out of memory");
	}
	if (strcmp(k, "batchId") == 0)
		return task_json_name(v, k, TASK_BATCH_ID_MAX, t->batch_id,
		    err);
	if (strcmp(k, "onFailure") == 0)
		return task_json_name(v, k, TASK_CODE_MAX, t->on_failure, err);
	if (strcmp(k, "alertFor") == 0)
		return task_json_name(v, k, TASK_ID_MAX, t->alert_for, err);
	if (strcmp(k, "onFailureMode") == 0)
		return task_json_alert_mode(v, k, &t->on_failure_mode, err);
	if (strcmp(k, "createdAt") == 0)
		return get_time(v, k, &t->created_ms, err);
	if (strcmp(k, "notBefore") == 0)
		return get_time(v, k, &t->not_before_ms, err);
	if (strcmp(k, "triggerTime") == 0)
		return get_time(v, k, &t->trigger_ms, err);
	if (strcmp(k, "attempts") == 0) {
		size_t i;
		json_t *e;

		if (!json_is_array(v))
			return fail(err, k, "must be an array");
		if (json_array_size(v) > TASK_ATTEMPTS_MAX)
			return fail(err, k, "more than %d entries",
			    TASK_ATTEMPTS_MAX);
		json_array_foreach(v, i, e) {
			struct task_attempt a;

			if (decode_attempt(e, i, &a, err) ||
			    task_add_attempt(t, &a))
				return -1;
		}
		return 0;
	}
	if (strcmp(k, "dependsOn") == 0 || strcmp(k, "releasedBy") == 0)
		return depend_decode(v, k, k[0] == 'r', k[0] == 'r' ?
		    &t->released : &t->depends, err);
	return unknown(err, k, k, task_members, NELEM_T(task_members),
	    "the task file format");
}

/*
 * The top-level member whose key or value spans byte pos of a document
 * that failed to parse, found by a tolerant scan; "" when pos is outside
 * every member (or the text is too broken to tell).
 */
static void
member_at(const char *d, size_t n, size_t pos, char *name, size_t len)
{
	size_t i = skip_ws(d, 0, n);

	name[0] = '\0';
	if (i >= n || d[i] != '{')
		return;
	for (i++;;) {
		size_t ks, ke, ve;

		i = skip_ws(d, i, n);
		if (i >= n || d[i] != '"')
			return;
		ks = i;
		ke = skip_string(d, i, n);
		if (ke > n)
			ke = n;
		i = skip_ws(d, ke, n);
		if (i >= n || d[i] != ':') {
			ve = i;
		} else {
			i = skip_ws(d, i + 1, n);
			ve = i < n ? skip_value(d, i, n) : n;
		}
		if (pos >= ks && pos <= ve) {
			size_t kl = ke - ks >= 2 ? ke - ks - 2 : 0;

			if (kl >= len)
				kl = len - 1;
			if (memchr(d + ks + 1, '\\', kl) == NULL) {
				memcpy(name, d + ks + 1, kl);
				name[kl] = '\0';
			} else {
				/* an escaped key: let jansson decode it */
				json_t *k = jsontext_loadb(d + ks, ke - ks,
				    JSON_DECODE_ANY, NULL);

				if (json_is_string(k))
					snprintf(name, len, "%s",
					    json_string_value(k));
				json_decref(k);
			}
			return;
		}
		i = skip_ws(d, ve, n);
		if (i >= n || d[i] != ',')
			return;
		i++;
	}
}

/* Turn a jansson parse error into (field, rule), naming the member. */
static int
parse_error(const char *data, size_t len, const json_error_t *jerr,
    struct task_error *err)
{
	char member[64];
	const char *why = jerr->text;

	member_at(data, len, (size_t)jerr->position, member, sizeof(member));
	err->truncated = json_error_code(jerr) ==
	    json_error_premature_end_of_input;
	if (strcmp(jerr->source, JSONTEXT_SOURCE) == 0)
		return fail(err, member[0] != '\0' ? member : "json", "%s",
		    jerr->text);
	if (strstr(why, "NUL") != NULL || strstr(why, "\\u0000") != NULL)
		why = "strings must not contain \\u0000";
	if (member[0] != '\0' && strstr(jerr->text, "maximum parsing depth"))
		return fail(err, member, "nested deeper than %d levels",
		    TASK_DEPTH_MAX);
	if (member[0] != '\0' && (strstr(jerr->text, "real number overflow") ||
	    strstr(jerr->text, "too big")))
		return fail(err, member, "number out of range (%s)",
		    jerr->text);
	if (member[0] != '\0')
		return fail(err, member, "invalid JSON at line %d column %d: "
		    "%s", jerr->line, jerr->column, why);
	return fail(err, "json", "invalid JSON at line %d column %d: %s",
	    jerr->line, jerr->column, why);
}

int
task_decode(const char *data, size_t len, struct task *t,
    struct task_error *err)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *k;

	task_fini(t);
	err->truncated = 0;
	if (len > TASK_FILE_MAX)
		return fail(err, "file", "larger than %d bytes",
		    TASK_FILE_MAX);
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		return fail(err, "json", "starts with a UTF-8 byte order mark "
		    "(not allowed)");
	if (len == 0) {
		err->truncated = 1;
		return fail(err, "json", "empty file");
	}
	root = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, &jerr);
	if (root == NULL)
		return parse_error(data, len, &jerr, err);
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(err, "json", "top level must be an object");
	}
	json_object_foreach(root, k, v) {
		if (decode_member(t, k, v, err) != 0)
			goto bad;
	}
	if (t->task_code[0] == '\0') {
		fail(err, "taskCode", "required member missing");
		goto bad;
	}
	if (t->trigger == TASK_TRIGGER_DELAY && t->delay_ms < 0) {
		fail(err, "delayMs", "required when triggerType is \"delay\"");
		goto bad;
	}
	if (t->trigger == TASK_TRIGGER_AT && t->run_at_ms < 0) {
		fail(err, "runAt", "required when triggerType is \"at\"");
		goto bad;
	}
	if (t->delay_ms >= 0 && t->trigger != TASK_TRIGGER_DELAY) {
		fail(err, "delayMs", "only allowed with triggerType \"delay\"");
		goto bad;
	}
	if (t->run_at_ms >= 0 && t->trigger != TASK_TRIGGER_AT) {
		fail(err, "runAt", "only allowed with triggerType \"at\"");
		goto bad;
	}
	if (t->request_id[0] != '\0' &&
	    depend_find(&t->depends, t->request_id) >= 0) {
		fail(err, "dependsOn", "a task cannot depend on itself (%s)",
		    t->request_id);
		goto bad;
	}
	if (t->released.n > 0 && t->depends.n == 0) {
		fail(err, "releasedBy", "only allowed with dependsOn");
		goto bad;
	}
	/* route tag:<name> is requireTags [name] with route any */
	if (tags_route_fold(&t->route, &t->require_tags, err) != 0)
		goto bad;
	if (t->app_weight >= 0 && t->app_id == NULL) {
		fail(err, "appWeight", "only allowed with appId");
		goto bad;
	}
	if (t->max_per_key >= 0 && t->conc_key_tmpl == NULL) {
		fail(err, "maxConcurrentPerKey", "only allowed with "
		    "concurrencyKey");
		goto bad;
	}
	if (t->conc_key_tmpl != NULL && conckey_expand(t->conc_key_tmpl,
	    json_object_get(root, "executeParams"), "concurrencyKey",
	    &t->conc_key, err) != 0)
		goto bad;
	if (task_copy_params(data, len, json_object_get(root,
	    "executeParams") != NULL, &t->params, &t->params_len, err) != 0)
		goto bad;
	json_decref(root);
	return 0;
bad:
	json_decref(root);
	task_fini(t);
	return -1;
}

/* --- encoding --- */

static json_t *
attempt_json(const struct task_attempt *a)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "attempt", json_integer(a->attempt));
	json_object_set_new(o, "node", json_string(a->node));
	jsonfield_put_time(o, "startedAt", a->start_ms);
	jsonfield_put_time(o, "finishedAt", a->end_ms);
	json_object_set_new(o, "durationMs", a->start_ms >= 0 &&
	    a->end_ms >= a->start_ms ? json_integer(a->end_ms - a->start_ms) :
	    json_null());
	json_object_set_new(o, "exitCode", a->exit_code >= 0 ?
	    json_integer(a->exit_code) : json_null());
	json_object_set_new(o, "signal", a->signal > 0 ?
	    json_integer(a->signal) : json_null());
	json_object_set_new(o, "outcome",
	    json_string(task_outcome_name(a->outcome)));
	json_object_set_new(o, "reason", json_string(a->reason));
	jsonfield_put_time(o, "retryAt", a->retry_at_ms);
	if (a->traceparent[0] != '\0')
		json_object_set_new(o, "traceparent",
		    json_string(a->traceparent));
	return o;
}

json_t *
task_attempt_json(const struct task_attempt *a)
{
	return attempt_json(a);
}

int
task_attempt_encode(const struct task_attempt *a, struct buf *out)
{
	json_t *o = attempt_json(a);
	char *s;
	int rc;

	if (o == NULL)
		return -1;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL)
		return -1;
	rc = buf_puts(out, s);
	free(s);
	return rc;
}

int
task_encode(const struct task *t, struct buf *out)
{
	static const char *const triggers[] = { "now", "delay", "at" };
	json_t *o = json_object(), *arr;
	char *s;
	size_t n;
	int rc = -1;

	if (o == NULL)
		return -1;
	if (t->request_id[0] != '\0')
		json_object_set_new(o, "requestId", json_string(t->request_id));
	json_object_set_new(o, "taskCode", json_string(t->task_code));
	if (t->task_name != NULL)
		json_object_set_new(o, "taskName", json_string(t->task_name));
	json_object_set_new(o, "triggerType",
	    json_string(triggers[t->trigger]));
	if (t->delay_ms >= 0)
		json_object_set_new(o, "delayMs", json_integer(t->delay_ms));
	if (t->run_at_ms >= 0)
		jsonfield_put_time(o, "runAt", t->run_at_ms);
	if (t->callback_url != NULL)
		json_object_set_new(o, "callbackUrl",
		    json_string(t->callback_url));
	if (t->max_retries >= 0)
		json_object_set_new(o, "maxRetries",
		    json_integer(t->max_retries));
	if (t->timeout_sec >= 0)
		json_object_set_new(o, "timeoutSec",
		    json_integer(t->timeout_sec));
	if (t->priority >= 0)
		json_object_set_new(o, "priority", json_integer(t->priority));
	if (t->route != NULL)
		json_object_set_new(o, "route", json_string(t->route));
	if (t->require_tags != NULL)
		json_object_set_new(o, "requireTags",
		    tags_json(t->require_tags));
	if (t->conc_key_tmpl != NULL)
		json_object_set_new(o, "concurrencyKey",
		    json_string(t->conc_key_tmpl));
	if (t->max_per_key >= 0)
		json_object_set_new(o, "maxConcurrentPerKey",
		    json_integer(t->max_per_key));
	if (t->shard_key != NULL)
		json_object_set_new(o, "shardKey", json_string(t->shard_key));
	if (t->traceparent != NULL)
		json_object_set_new(o, "traceparent",
		    json_string(t->traceparent));
	if (t->shard_index >= 0)
		json_object_set_new(o, "shardIndex",
		    json_integer(t->shard_index));
	if (t->shard_total >= 0)
		json_object_set_new(o, "shardTotal",
		    json_integer(t->shard_total));
	if (t->job_code != NULL)
		json_object_set_new(o, "jobCode", json_string(t->job_code));
	if (t->app_id != NULL)
		json_object_set_new(o, "appId", json_string(t->app_id));
	if (t->app_weight >= 0)
		json_object_set_new(o, "appWeight",
		    json_integer(t->app_weight));
	if (t->batch_id[0] != '\0')
		json_object_set_new(o, "batchId", json_string(t->batch_id));
	if (t->on_failure[0] != '\0')
		json_object_set_new(o, "onFailure", json_string(t->on_failure));
	if (t->on_failure_mode >= 0)
		json_object_set_new(o, "onFailureMode", json_string(
		    t->on_failure_mode == ALERT_MODE_TRANSITION ?
		    "transition" : "every"));
	if (t->alert_for[0] != '\0')
		json_object_set_new(o, "alertFor", json_string(t->alert_for));
	if (t->created_ms >= 0)
		jsonfield_put_time(o, "createdAt", t->created_ms);
	if (t->not_before_ms >= 0)
		jsonfield_put_time(o, "notBefore", t->not_before_ms);
	if (t->trigger_ms >= 0)
		jsonfield_put_time(o, "triggerTime", t->trigger_ms);
	if (t->nattempts > 0) {
		arr = json_array();
		for (size_t i = 0; i < t->nattempts; i++)
			json_array_append_new(arr,
			    attempt_json(&t->attempts[i]));
		json_object_set_new(o, "attempts", arr);
	}
	if (t->depends.n > 0)
		json_object_set_new(o, "dependsOn", depend_json(&t->depends, 0));
	if (t->released.n > 0)
		json_object_set_new(o, "releasedBy",
		    depend_json(&t->released, 1));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL)
		return -1;
	/* Splice executeParams before the closing brace, byte-for-byte. */
	n = strlen(s);
	if (buf_append(out, s, n - 1) == 0 &&
	    buf_puts(out, ",\"executeParams\":") == 0 &&
	    buf_append(out, t->params != NULL ? t->params : "{}",
	    t->params != NULL ? t->params_len : 2) == 0 &&
	    buf_puts(out, "}\n") == 0)
		rc = 0;
	free(s);
	return rc;
}

int64_t
task_set_not_before(struct task *t)
{
	int64_t due = -1;

	if (t->trigger == TASK_TRIGGER_DELAY)
		due = t->created_ms + t->delay_ms;
	else if (t->trigger == TASK_TRIGGER_AT)
		due = t->run_at_ms;
	if (due <= t->created_ms)
		return -1;
	t->not_before_ms = due;
	return due;
}

/* --- the round-trip property --- */

int
task_str_differs(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

const char *
task_diff(const struct task *a, const struct task *b)
{
	if (strcmp(a->request_id, b->request_id) != 0)
		return "requestId";
	if (strcmp(a->task_code, b->task_code) != 0)
		return "taskCode";
	if (task_str_differs(a->task_name, b->task_name))
		return "taskName";
	if (a->trigger != b->trigger)
		return "triggerType";
	if (a->delay_ms != b->delay_ms)
		return "delayMs";
	if (a->run_at_ms != b->run_at_ms)
		return "runAt";
	if (a->params_len != b->params_len || (a->params_len > 0 &&
	    memcmp(a->params, b->params, a->params_len) != 0))
		return "executeParams";
	if (task_str_differs(a->callback_url, b->callback_url))
		return "callbackUrl";
	if (a->max_retries != b->max_retries)
		return "maxRetries";
	if (a->timeout_sec != b->timeout_sec)
		return "timeoutSec";
	if (a->priority != b->priority)
		return "priority";
	if (task_str_differs(a->route, b->route))
		return "route";
	if (task_str_differs(a->require_tags, b->require_tags))
		return "requireTags";
	if (task_str_differs(a->conc_key_tmpl, b->conc_key_tmpl))
		return "concurrencyKey";
	if (a->max_per_key != b->max_per_key)
		return "maxConcurrentPerKey";
	if (task_str_differs(a->shard_key, b->shard_key))
		return "shardKey";
	if (task_str_differs(a->traceparent, b->traceparent))
		return "traceparent";
	if (a->shard_index != b->shard_index)
		return "shardIndex";
	if (a->shard_total != b->shard_total)
		return "shardTotal";
	if (task_str_differs(a->job_code, b->job_code))
		return "jobCode";
	if (a->app_weight != b->app_weight)
		return "appWeight";
	if (task_str_differs(a->app_id, b->app_id))
		return "appId";
	if (strcmp(a->batch_id, b->batch_id) != 0)
		return "batchId";
	if (strcmp(a->on_failure, b->on_failure) != 0)
		return "onFailure";
	if (a->on_failure_mode != b->on_failure_mode)
		return "onFailureMode";
	if (strcmp(a->alert_for, b->alert_for) != 0)
		return "alertFor";
	if (a->created_ms != b->created_ms)
		return "createdAt";
	if (a->not_before_ms != b->not_before_ms)
		return "notBefore";
	if (a->trigger_ms != b->trigger_ms)
		return "triggerTime";
	if (depend_differs(&a->depends, &b->depends))
		return "dependsOn";
	if (depend_differs(&a->released, &b->released))
		return "releasedBy";
	if (a->nattempts != b->nattempts)
		return "attempts";
	for (size_t i = 0; i < a->nattempts; i++) {
		const struct task_attempt *x = &a->attempts[i];
		const struct task_attempt *y = &b->attempts[i];

		if (x->attempt != y->attempt || strcmp(x->node, y->node) != 0 ||
		    x->start_ms != y->start_ms || x->end_ms != y->end_ms ||
		    x->exit_code != y->exit_code || x->signal != y->signal ||
		    x->outcome != y->outcome ||
		    strcmp(x->reason, y->reason) != 0 ||
		    strcmp(x->traceparent, y->traceparent) != 0 ||
		    x->retry_at_ms != y->retry_at_ms)
			return "attempts[]";
	}
	return NULL;
}

int
task_roundtrip(const char *data, size_t len, struct task_error *err)
{
	struct task a, b;
	struct buf out;
	const char *d;
	int rc = -1;

	task_init(&a);
	task_init(&b);
	buf_init(&out, 0);
	if (task_decode(data, len, &a, err) != 0)
		return 1;
	if (task_encode(&a, &out) != 0)
		fail(err, "encode", "out of memory");
	else if (task_decode(out.data, out.len, &b, err) != 0) {
		struct task_error e = *err;

		fail(err, e.field, "the encoder wrote what the decoder "
		    "refuses: %.200s", e.rule);
	} else if ((d = task_diff(&a, &b)) != NULL)
		fail(err, d, "differs after decode, encode, decode");
	else
		rc = 0;
	task_fini(&a);
	task_fini(&b);
	buf_fini(&out);
	return rc;
}
