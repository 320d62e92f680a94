/*
 * tags — node tags and the tags a task requires; see tags.h.
 */
#include "core/tags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUTE_PREFIX	"tag:"
#define ROUTE_PREFIX_LEN 4

/* The name grammar's bytes: [A-Za-z0-9] first, then also _ . - */
static int
name_byte(char c, int first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || (!first && (c == '_' || c == '.' ||
	    c == '-'));
}

int
tags_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > TAGS_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!name_byte(s[i], i == 0))
			return 0;
	return 1;
}

/*
 * The next name of the list at *p: *name and *len receive it, *p moves
 * past it and its ','.  Returns 1, or 0 at the end of the list.
 */
static int
next_name(const char **p, const char **name, size_t *len)
{
	if (**p == '\0')
		return 0;
	*name = *p;
	*len = strcspn(*p, ",");
	*p += *len;
	if (**p == ',')
		(*p)++;
	return 1;
}

/* Whether the list holds the len bytes at name as one of its names. */
static int
has_span(const char *list, const char *name, size_t len)
{
	const char *n;
	size_t l;

	while (next_name(&list, &n, &l))
		if (l == len && memcmp(n, name, len) == 0)
			return 1;
	return 0;
}

int
tags_has(const char *list, const char *name)
{
	return list != NULL && has_span(list, name, strlen(name));
}

int
tags_has_all(const char *have, const char *need)
{
	const char *n;
	size_t l;

	if (need == NULL)
		return 1;
	while (next_name(&need, &n, &l))
		if (l > 0 && (have == NULL || !has_span(have, n, l)))
			return 0;
	return 1;
}

int
tags_list_ok(const char *list)
{
	size_t n = 0, len = strnlen(list, TAGS_TEXT_MAX);

	if (len == 0)
		return 1;
	if (len >= TAGS_TEXT_MAX)
		return 0;
	for (const char *p = list;; p++) {
		size_t l = strcspn(p, ",");

		/* each name once: not among those before it */
		if (!tags_name_ok(p, l) || ++n > TAGS_MAX)
			return 0;
		for (const char *q = list; q < p;) {
			size_t ql = strcspn(q, ",");

			if (ql == l && memcmp(q, p, l) == 0)
				return 0;
			q += ql + 1;
		}
		p += l;
		if (*p == '\0')
			return 1;
	}
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
tags_parse_config(const char *value, char *out, size_t outlen, char *why,
    size_t whylen)
{
	char names[TAGS_MAX][TAGS_NAME_MAX + 1];
	const char *v[TAGS_MAX];
	size_t n = 0, used = 0;
	const char *p = value;

	if (outlen > 0)
		out[0] = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0')
		return 0;		/* no tags */
	for (;;) {
		size_t l, e;

		while (*p == ' ' || *p == '\t')
			p++;
		l = strcspn(p, ",");
		for (e = l; e > 0 && (p[e - 1] == ' ' || p[e - 1] == '\t');)
			e--;
		if (e == 0) {
			snprintf(why, whylen, "tags: empty name in the list "
			    "(names separated by \",\")");
			return -1;
		}
		if (e > TAGS_NAME_MAX) {
			snprintf(why, whylen, "tags: \"%.*s...\" longer than "
			    "%d bytes", 16, p, TAGS_NAME_MAX);
			return -1;
		}
		if (!tags_name_ok(p, e)) {
			snprintf(why, whylen, "tags: \"%.*s\" does not match "
			    "[A-Za-z0-9][A-Za-z0-9_.-]{0,%d}", (int)e, p,
			    TAGS_NAME_MAX - 1);
			return -1;
		}
		if (n == TAGS_MAX) {
			snprintf(why, whylen, "tags: more than %d names",
			    TAGS_MAX);
			return -1;
		}
		memcpy(names[n], p, e);
		names[n][e] = '\0';
		for (size_t i = 0; i < n; i++)
			if (strcmp(names[i], names[n]) == 0) {
				snprintf(why, whylen, "tags: \"%s\" given "
				    "twice", names[n]);
				return -1;
			}
		v[n] = names[n];
		n++;
		p += l;
		if (*p == '\0')
			break;
		p++;			/* the ',' */
	}
	qsort(v, n, sizeof(v[0]), name_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i]);

		if (used + l + (i > 0) + 1 > outlen) {
			if (outlen > 0)
				out[0] = '\0';
			snprintf(why, whylen, "tags: list longer than %zu "
			    "bytes", outlen > 0 ? outlen - 1 : 0);
			return -1;
		}
		if (i > 0)
			out[used++] = ',';
		memcpy(out + used, v[i], l + 1);
		used += l;
	}
	return 0;
}

int
tags_json_decode(json_t *v, const char *field, char **out,
    struct task_error *err)
{
	char list[TAGS_TEXT_MAX], f[96];
	size_t i, used = 0;
	json_t *e;

	if (!json_is_array(v))
		return jsonfield_fail(err, field, "must be an array of tag "
		    "names");
	if (json_array_size(v) > TAGS_MAX)
		return jsonfield_fail(err, field, "more than %d tags",
		    TAGS_MAX);
	list[0] = '\0';
	json_array_foreach(v, i, e) {
		const char *s = json_is_string(e) ? json_string_value(e) :
		    NULL;
		size_t l = s != NULL ? json_string_length(e) : 0;

		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		/* a \u0000 in the string makes l differ from strlen */
		if (s == NULL || strlen(s) != l || !tags_name_ok(s, l))
			return jsonfield_fail(err, f, "must match [A-Za-z0-9]"
			    "[A-Za-z0-9_.-]{0,%d}", TAGS_NAME_MAX - 1);
		if (has_span(list, s, l))
			return jsonfield_fail(err, f, "duplicate tag \"%s\"",
			    s);
		/* fits: at most TAGS_MAX names of TAGS_NAME_MAX bytes */
		if (i > 0)
			list[used++] = ',';
		memcpy(list + used, s, l + 1);
		used += l;
	}
	if (used == 0) {
		free(*out);
		*out = NULL;
		return 0;
	}
	{
		char *dup = strdup(list);

		if (dup == NULL)
			return jsonfield_fail(err, field, "out of memory");
		free(*out);
		*out = dup;
	}
	return 0;
}

json_t *
tags_json(const char *list)
{
	json_t *a = json_array();
	const char *p = list != NULL ? list : "", *n;
	size_t l;

	if (a == NULL)
		return NULL;
	while (next_name(&p, &n, &l))
		if (l > 0 && json_array_append_new(a, json_stringn(n, l)) !=
		    0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int
tags_route_ok(const char *route)
{
	return route != NULL && strncmp(route, ROUTE_PREFIX,
	    ROUTE_PREFIX_LEN) == 0 && tags_name_ok(route + ROUTE_PREFIX_LEN,
	    strlen(route + ROUTE_PREFIX_LEN));
}

int
tags_route_fold(char **route, char **tags, struct task_error *err)
{
	const char *name;
	size_t n = 0, tl, nl;
	char *nt;

	if (!tags_route_ok(*route))
		return 0;
	name = *route + ROUTE_PREFIX_LEN;
	if (tags_has(*tags, name)) {
		free(*route);
		*route = NULL;
		return 0;
	}
	tl = *tags != NULL ? strlen(*tags) : 0;
	for (size_t i = 0; i < tl; i++)
		n += (*tags)[i] == ',';
	if (tl > 0 && n + 1 >= TAGS_MAX)
		return jsonfield_fail(err, "requireTags", "more than %d tags "
		    "(with the route's \"%s\")", TAGS_MAX, name);
	nl = strlen(name);
	if ((nt = malloc(tl + nl + 2)) == NULL)
		return jsonfield_fail(err, "requireTags", "out of memory");
	if (tl > 0) {
		memcpy(nt, *tags, tl);
		nt[tl] = ',';
		memcpy(nt + tl + 1, name, nl + 1);
	} else
		memcpy(nt, name, nl + 1);
	free(*tags);
	*tags = nt;
	free(*route);
	*route = NULL;
	return 0;
}
