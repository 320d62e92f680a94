/*
 * depend — task dependencies: the dependsOn/releasedBy codec and the
 * condition table; see depend.h.
 */
#include "core/depend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define fail(...) jsonfield_fail(__VA_ARGS__)

static const char *const cond_names[] = { "afterok", "afternotok",
	"afterany" };
static const char *const parent_names[] = { "PENDING", "SUCCESS", "FAILED",
	"CANCELLED", "UNKNOWN" };

void
depend_list_init(struct depend_list *l)
{
	l->v = NULL;
	l->n = 0;
}

void
depend_list_fini(struct depend_list *l)
{
	if (l == NULL)
		return;
	free(l->v);
	depend_list_init(l);
}

const char *
depend_cond_name(enum depend_cond c)
{
	return (size_t)c < 3 ? cond_names[c] : "afterok";
}

int
depend_cond_parse(const char *s, enum depend_cond *c)
{
	for (size_t i = 0; i < 3; i++)
		if (strcmp(s, cond_names[i]) == 0) {
			*c = (enum depend_cond)i;
			return 0;
		}
	return -1;
}

const char *
depend_parent_name(enum depend_parent p)
{
	return (size_t)p < 5 ? parent_names[p] : "UNKNOWN";
}

/* Whether s matches [A-Za-z0-9][A-Za-z0-9_.-]{0,127} (spool_id_ok). */
static int
id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > DEPEND_ID_MAX || strchr("_.-", s[0]) != NULL)
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-") == n;
}

static int
cmp_edge(const void *a, const void *b)
{
	const struct depend_edge *const *x = a, *const *y = b;

	return strcmp((*x)->id, (*y)->id);
}

/* The first requestId twice in l: its later index, or -1; -2 on ENOMEM. */
static long
first_duplicate(const struct depend_list *l)
{
	const struct depend_edge **p;
	long dup = -1;

	if (l->n < 2)
		return -1;
	if ((p = calloc(l->n, sizeof(*p))) == NULL)
		return -2;
	for (size_t i = 0; i < l->n; i++)
		p[i] = &l->v[i];
	qsort(p, l->n, sizeof(*p), cmp_edge);
	for (size_t i = 1; i < l->n; i++)
		if (strcmp(p[i - 1]->id, p[i]->id) == 0) {
			long k = (long)(p[i] > p[i - 1] ? p[i] - l->v :
			    p[i - 1] - l->v);

			if (dup < 0 || k < dup)
				dup = k;
		}
	free(p);
	return dup;
}

static int
decode_edge(json_t *o, const char *field, size_t i, int released,
    struct depend_edge *e, struct task_error *err)
{
	char f[64];
	const char *k, *s;
	json_t *m;
	int have_id = 0;

	e->cond = DEPEND_AFTEROK;
	e->state = DEPEND_PARENT_UNKNOWN;
	if (!json_is_object(o))
		return fail(err, field, "[%zu] must be an object", i);
	json_object_foreach(o, k, m) {
		if (strcmp(k, "requestId") == 0) {
			snprintf(f, sizeof(f), "%s[%zu].requestId", field, i);
			if (jsonfield_string(m, f, DEPEND_ID_MAX, &s, err))
				return -1;
			if (!id_ok(s))
				return fail(err, f, "must match "
				    "[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
			memcpy(e->id, s, strlen(s) + 1);
			have_id = 1;
		} else if (!released && strcmp(k, "condition") == 0) {
			snprintf(f, sizeof(f), "%s[%zu].condition", field, i);
			if (!json_is_string(m) || depend_cond_parse(
			    json_string_value(m), &e->cond) != 0)
				return fail(err, f, "must be one of afterok, "
				    "afternotok, afterany");
		} else if (released && strcmp(k, "state") == 0) {
			snprintf(f, sizeof(f), "%s[%zu].state", field, i);
			s = json_is_string(m) ? json_string_value(m) : "";
			if (strcmp(s, "SUCCESS") == 0)
				e->state = DEPEND_PARENT_SUCCESS;
			else if (strcmp(s, "FAILED") == 0)
				e->state = DEPEND_PARENT_FAILED;
			else if (strcmp(s, "CANCELLED") == 0)
				e->state = DEPEND_PARENT_CANCELLED;
			else
				return fail(err, f, "must be one of SUCCESS, "
				    "FAILED, CANCELLED");
		} else {
			snprintf(f, sizeof(f), "%s[%zu].%.20s", field, i, k);
			return fail(err, f, "unknown member (allowed: "
			    "requestId, %s)", released ? "state" :
			    "condition");
		}
	}
	if (!have_id) {
		snprintf(f, sizeof(f), "%s[%zu].requestId", field, i);
		return fail(err, f, "required member missing");
	}
	if (released && e->state == DEPEND_PARENT_UNKNOWN) {
		snprintf(f, sizeof(f), "%s[%zu].state", field, i);
		return fail(err, f, "required member missing");
	}
	return 0;
}

int
depend_decode(json_t *v, const char *field, int released,
    struct depend_list *l, struct task_error *err)
{
	size_t i, n;
	json_t *o;
	long d;

	depend_list_fini(l);
	if (!json_is_array(v))
		return fail(err, field, "must be an array of objects");
	n = json_array_size(v);
	if (n < 1 || n > DEPEND_MAX)
		return fail(err, field, "must hold 1..%d entries", DEPEND_MAX);
	if ((l->v = calloc(n, sizeof(*l->v))) == NULL)
		return fail(err, field, "out of memory");
	json_array_foreach(v, i, o) {
		if (decode_edge(o, field, i, released, &l->v[i], err) != 0) {
			depend_list_fini(l);
			return -1;
		}
		l->n = i + 1;
	}
	if ((d = first_duplicate(l)) != -1) {
		char f[64];

		depend_list_fini(l);
		if (d == -2)
			return fail(err, field, "out of memory");
		snprintf(f, sizeof(f), "%s[%ld].requestId", field, d);
		return fail(err, f, "names a requestId an earlier entry "
		    "names (each parent once)");
	}
	return 0;
}

json_t *
depend_json(const struct depend_list *l, int released)
{
	json_t *a = json_array();

	if (a == NULL)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		json_t *o = json_object();

		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
		json_object_set_new(o, "requestId", json_string(l->v[i].id));
		if (released)
			json_object_set_new(o, "state", json_string(
			    depend_parent_name(l->v[i].state)));
		else
			json_object_set_new(o, "condition", json_string(
			    depend_cond_name(l->v[i].cond)));
	}
	return a;
}

int
depend_differs(const struct depend_list *a, const struct depend_list *b)
{
	if (a->n != b->n)
		return 1;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].id, b->v[i].id) != 0 ||
		    a->v[i].cond != b->v[i].cond ||
		    a->v[i].state != b->v[i].state)
			return 1;
	return 0;
}

long
depend_find(const struct depend_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].id, id) == 0)
			return (long)i;
	return -1;
}

enum depend_verdict
depend_cond_eval(enum depend_cond c, enum depend_parent p)
{
	switch (p) {
	case DEPEND_PARENT_SUCCESS:
		return c == DEPEND_AFTERNOTOK ? DEPEND_NEVER : DEPEND_READY;
	case DEPEND_PARENT_FAILED:
	case DEPEND_PARENT_CANCELLED:
		return c == DEPEND_AFTEROK ? DEPEND_NEVER : DEPEND_READY;
	default:
		return DEPEND_WAIT;
	}
}

enum depend_verdict
depend_eval(const struct depend_list *l, const enum depend_parent *states,
    size_t *which)
{
	enum depend_verdict r = DEPEND_READY;
	size_t w = 0;

	for (size_t i = 0; i < l->n; i++) {
		enum depend_verdict e = depend_cond_eval(l->v[i].cond,
		    states[i]);

		if (e == DEPEND_NEVER) {
			if (which != NULL)
				*which = i;
			return DEPEND_NEVER;
		}
		if (e == DEPEND_WAIT && r == DEPEND_READY) {
			r = DEPEND_WAIT;
			w = i;
		}
	}
	if (which != NULL)
		*which = w;
	return r;
}
