/*
 * conckey — the concurrencyKey template and its expansion; see
 * conckey.h.
 */
#include "core/conckey.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/sign.h"

#define fail(...) jsonfield_fail(__VA_ARGS__)

static int
name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static int
control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/*
 * Walk tmpl, checking its grammar; with b not NULL, append the
 * expansion with the members of params to *b.  Returns 0 or -1 with
 * err naming field.
 */
static int
walk(const char *tmpl, json_t *params, const char *field, struct buf *b,
    struct task_error *err)
{
	size_t len = strlen(tmpl);

	if (len == 0)
		return fail(err, field, "must not be empty");
	if (len > CONCKEY_TEMPLATE_MAX)
		return fail(err, field, "longer than %d bytes",
		    CONCKEY_TEMPLATE_MAX);
	for (size_t i = 0; i < len;) {
		char name[CONCKEY_NAME_MAX + 1];
		size_t j;
		json_t *v;

		if (tmpl[i] == '}')
			return fail(err, field, "'}' at byte %zu closes no "
			    "'{' (a placeholder is {member})", i + 1);
		if (tmpl[i] != '{') {
			if (control((unsigned char)tmpl[i]))
				return fail(err, field, "control character "
				    "at byte %zu", i + 1);
			if (b != NULL && buf_append(b, tmpl + i, 1) != 0)
				return fail(err, field, "out of memory");
			i++;
			continue;
		}
		for (j = i + 1; j < len && name_char(tmpl[j]); j++)
			;
		if (j >= len || tmpl[j] != '}')
			return fail(err, field, "'{' at byte %zu: a "
			    "placeholder is {member}, member of "
			    "[A-Za-z0-9_.-]", i + 1);
		if (j == i + 1 || j - i - 1 > CONCKEY_NAME_MAX)
			return fail(err, field, "placeholder at byte %zu: the "
			    "member name must be 1 to %d bytes", i + 1,
			    CONCKEY_NAME_MAX);
		memcpy(name, tmpl + i + 1, j - i - 1);
		name[j - i - 1] = '\0';
		i = j + 1;
		if (b == NULL)
			continue;
		v = json_is_object(params) ? json_object_get(params, name) :
		    NULL;
		if (v == NULL)
			return fail(err, field, "{%s}: executeParams has no "
			    "member \"%s\"", name, name);
		if (json_is_integer(v)) {
			char num[32];

			snprintf(num, sizeof(num), "%" PRId64,
			    (int64_t)json_integer_value(v));
			if (buf_puts(b, num) != 0)
				return fail(err, field, "out of memory");
		} else if (json_is_string(v)) {
			const char *s = json_string_value(v);
			size_t sl = json_string_length(v);

			for (size_t k = 0; k < sl; k++)
				if (control((unsigned char)s[k]))
					return fail(err, field, "{%s}: "
					    "executeParams.%s holds a control "
					    "character", name, name);
			if (buf_append(b, s, sl) != 0)
				return fail(err, field, "out of memory");
		} else
			return fail(err, field, "{%s}: executeParams.%s must "
			    "be a string or an integer", name, name);
		if (b->len > CONCKEY_MAX)
			break;
	}
	if (b != NULL && b->len == 0)
		return fail(err, field, "expands to the empty key");
	if (b != NULL && b->len > CONCKEY_MAX)
		return fail(err, field, "the key is longer than %d bytes",
		    CONCKEY_MAX);
	return 0;
}

int
conckey_template_check(const char *tmpl, const char *field,
    struct task_error *err)
{
	return walk(tmpl, NULL, field, NULL, err);
}

int
conckey_expand(const char *tmpl, json_t *params, const char *field,
    char **out, struct task_error *err)
{
	struct buf b;

	*out = NULL;
	buf_init(&b, 0);
	if (walk(tmpl, params, field, &b, err) != 0) {
		buf_fini(&b);
		return -1;
	}
	*out = b.data;		/* NUL-terminated (buf.h); ours now */
	return 0;
}

int
conckey_hash(const char *key, char *hex)
{
	char full[65];

	hex[0] = '\0';
	if (sign_sha256_hex(key, strlen(key), full) != 0)
		return -1;
	memcpy(hex, full, CONCKEY_HASH_LEN);
	hex[CONCKEY_HASH_LEN] = '\0';
	return 0;
}
