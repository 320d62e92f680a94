/*
 * jsonfield — member decoders of the task and job codecs; see
 * jsonfield.h.
 */
#include "core/jsonfield.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsontext.h"
#include "core/tstime.h"

int
jsonfield_fail(struct task_error *err, const char *field, const char *fmt,
    ...)
{
	va_list ap;

	(void)snprintf(err->field, sizeof(err->field), "%s", field);
	va_start(ap, fmt);
	(void)vsnprintf(err->rule, sizeof(err->rule), fmt, ap);
	va_end(ap);
	return -1;
}

int
jsonfield_string(json_t *v, const char *field, size_t max, const char **out,
    struct task_error *err)
{
	if (!json_is_string(v))
		return jsonfield_fail(err, field, "must be a string");
	if (json_string_length(v) > max)
		return jsonfield_fail(err, field, "longer than %zu bytes", max);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return jsonfield_fail(err, field, "must not contain \\u0000");
	*out = json_string_value(v);
	return 0;
}

int
jsonfield_int(json_t *v, const char *field, int64_t lo, int64_t hi,
    int64_t *out, struct task_error *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi)
		return jsonfield_fail(err, field, "must be an integer "
		    "%lld..%lld", (long long)lo, (long long)hi);
	*out = (int64_t)json_integer_value(v);
	return 0;
}

int
jsonfield_time(json_t *v, const char *field, int64_t *out,
    struct task_error *err)
{
	int64_t t;

	if (!json_is_string(v) ||
	    tstime_parse_rfc3339(json_string_value(v), &t) != 0)
		return jsonfield_fail(err, field, "must be an RFC 3339 "
		    "date-time with offset, years 0001-9999, e.g. "
		    "2024-06-01T12:00:00Z");
	*out = t;
	return 0;
}

int
jsonfield_dup(json_t *v, const char *field, size_t max, char **out,
    struct task_error *err)
{
	const char *s = NULL;
	char *c;

	if (jsonfield_string(v, field, max, &s, err) != 0)
		return -1;
	if ((c = strdup(s)) == NULL)
		return jsonfield_fail(err, field, "out of memory");
	*out = c;
	return 0;
}

int
jsonfield_put_time(json_t *o, const char *k, int64_t ms)
{
	char b[TSTIME_BUF];

	if (ms < 0)
		return json_object_set_new(o, k, json_null());
	return json_object_set_new(o, k,
	    json_string(tstime_format_ms(b, sizeof(b), ms)));
}

json_t *
jsonfield_load_object(const char *data, size_t len, size_t max,
    struct task_error *err)
{
	json_error_t jerr;
	json_t *root;

	if (len > max) {
		(void)jsonfield_fail(err, "file", "larger than %zu bytes", max);
		return NULL;
	}
	root = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		(void)jsonfield_fail(err, "json", "invalid JSON at line %d "
		    "column %d: %s", jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		(void)jsonfield_fail(err, "json", "top level must be an "
		    "object");
		return NULL;
	}
	return root;
}
