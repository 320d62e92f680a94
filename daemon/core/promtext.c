/*
 * promtext — merge Prometheus text exposition files; see promtext.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/promtext.h"

struct family {
	char *name;		/* "" for samples before any header */
	size_t name_len;	/* bytes of name (a NUL in it included) */
	struct buf head;	/* HELP and TYPE lines, each once */
	struct buf body;	/* sample lines */
	int help, type;		/* header kinds already kept */
};

struct famset {
	struct family *f;
	size_t n;
};

static struct family *
family_get(struct famset *fs, const char *name, size_t nl)
{
	struct family *nf;

	for (size_t i = 0; i < fs->n; i++)
		if (fs->f[i].name_len == nl &&
		    memcmp(fs->f[i].name, name, nl) == 0)
			return &fs->f[i];
	if ((nf = realloc(fs->f, (fs->n + 1) * sizeof(*nf))) == NULL)
		return NULL;
	fs->f = nf;
	nf = &fs->f[fs->n];
	/* one length for the bytes and the copy (issue 10) */
	if ((nf->name = malloc(nl + 1)) == NULL)
		return NULL;
	memcpy(nf->name, name, nl);
	nf->name[nl] = '\0';
	nf->name_len = nl;
	buf_init(&nf->head, 0);
	buf_init(&nf->body, 0);
	nf->help = nf->type = 0;
	fs->n++;
	return nf;
}

/* "# HELP name ..." or "# TYPE name ...": kind 1 help, 2 type, else 0;
 * (*name, *nl) the family name. */
static int
header(const char *l, size_t ll, const char **name, size_t *nl)
{
	int kind;
	size_t i;

	if (ll > 7 && memcmp(l, "# HELP ", 7) == 0)
		kind = 1;
	else if (ll > 7 && memcmp(l, "# TYPE ", 7) == 0)
		kind = 2;
	else
		return 0;
	for (i = 7; i < ll && l[i] != ' ' && l[i] != '\t'; i++)
		;
	*name = l + 7;
	*nl = i - 7;
	return *nl > 0 ? kind : 0;
}

int
promtext_merge(const char *const *text, const size_t *len, size_t n,
    struct buf *out)
{
	struct famset fs = { NULL, 0 };
	int rc = 0;

	if (family_get(&fs, "", 0) == NULL)
		rc = -1;
	for (size_t t = 0; rc == 0 && t < n; t++) {
		const char *p = text[t], *end = text[t] + len[t];
		struct family *cur = &fs.f[0];
		size_t curi = 0;

		while (rc == 0 && p < end) {
			const char *nlp = memchr(p, '\n', (size_t)(end - p));
			size_t ll = nlp != NULL ? (size_t)(nlp - p) :
			    (size_t)(end - p);
			const char *name;
			size_t nl;
			int kind;

			if ((kind = header(p, ll, &name, &nl)) != 0) {
				if ((cur = family_get(&fs, name, nl)) == NULL) {
					rc = -1;
					break;
				}
				curi = (size_t)(cur - fs.f);
				if ((kind == 1 && !cur->help) ||
				    (kind == 2 && !cur->type)) {
					if (buf_append(&cur->head, p, ll) ||
					    buf_puts(&cur->head, "\n"))
						rc = -1;
					if (kind == 1)
						cur->help = 1;
					else
						cur->type = 1;
				}
			} else if (ll > 0 && p[0] != '#') {
				cur = &fs.f[curi];
				if (buf_append(&cur->body, p, ll) ||
				    buf_puts(&cur->body, "\n"))
					rc = -1;
			}
			p += ll + (nlp != NULL);
		}
	}
	for (size_t i = 0; i < fs.n; i++) {
		if (rc == 0 && fs.f[i].head.len > 0 &&
		    buf_append(out, fs.f[i].head.data, fs.f[i].head.len))
			rc = -1;
		if (rc == 0 && fs.f[i].body.len > 0 &&
		    buf_append(out, fs.f[i].body.data, fs.f[i].body.len))
			rc = -1;
		buf_fini(&fs.f[i].head);
		buf_fini(&fs.f[i].body);
		free(fs.f[i].name);
	}
	free(fs.f);
	return rc;
}

/* The next line of [p, end): its length; *next is where the one after
 * it starts. */
static size_t
line_at(const char *p, const char *end, const char **next)
{
	const char *nlp = memchr(p, '\n', (size_t)(end - p));
	size_t ll = nlp != NULL ? (size_t)(nlp - p) : (size_t)(end - p);

	*next = p + ll + (nlp != NULL);
	return ll;
}

int
promtext_value(const char *text, size_t len, const char *name, double *v)
{
	const char *p = text, *end = text + len, *next;
	size_t nl = strlen(name);

	for (; p < end; p = next) {
		size_t ll = line_at(p, end, &next);
		const char *q, *vp;
		char num[64], *ep;

		if (ll <= nl || memcmp(p, name, nl) != 0 ||
		    (p[nl] != '{' && p[nl] != ' '))
			continue;
		q = p + nl;
		if (*q == '{') {	/* past the labels: quoted values may
					 * hold '}' and backslash escapes */
			int quoted = 0;

			for (q++; q < p + ll && (quoted || *q != '}'); q++)
				if (*q == '\\' && quoted && q + 1 < p + ll)
					q++;
				else if (*q == '"')
					quoted = !quoted;
			if (q == p + ll)
				return -1;
			q++;
		}
		for (vp = q; vp < p + ll && *vp == ' '; vp++)
			;
		if (vp == p + ll || (size_t)(p + ll - vp) >= sizeof(num))
			return -1;
		memcpy(num, vp, (size_t)(p + ll - vp));
		num[p + ll - vp] = '\0';
		num[strcspn(num, " ")] = '\0';	/* an optional timestamp */
		*v = strtod(num, &ep);
		return ep == num || *ep != '\0' ? -1 : 0;
	}
	return -1;
}

/* Whether text has the line "# TYPE <name> <type>". */
static int
has_type(const char *text, size_t len, const char *name, size_t nl,
    const char *type)
{
	const char *p = text, *end = text + len, *next;
	size_t tl = strlen(type);

	for (; p < end; p = next) {
		size_t ll = line_at(p, end, &next);

		if (ll == 7 + nl + 1 + tl && memcmp(p, "# TYPE ", 7) == 0 &&
		    memcmp(p + 7, name, nl) == 0 && p[7 + nl] == ' ' &&
		    memcmp(p + 8 + nl, type, tl) == 0)
			return 1;
	}
	return 0;
}

int
promtext_drop_type(const char *text, size_t len, const char *type,
    const char *keep_prefix, struct buf *out)
{
	const char *p = text, *end = text + len, *next;
	const char *cur = NULL;		/* the current family's name */
	size_t curl = 0, kl = strlen(keep_prefix);
	int drop = 0;

	for (; p < end; p = next) {
		size_t ll = line_at(p, end, &next), nl;
		const char *name;

		if (header(p, ll, &name, &nl) != 0 && (cur == NULL ||
		    nl != curl || memcmp(name, cur, nl) != 0)) {
			cur = name;
			curl = nl;
			drop = !(kl > 0 && nl >= kl && memcmp(name, keep_prefix,
			    kl) == 0) && has_type(text, len, name, nl, type);
		}
		if (drop)
			continue;
		if (buf_append(out, p, ll) || buf_puts(out, "\n"))
			return -1;
	}
	return 0;
}

/* --- the grammar check ------------------------------------------------ */

static int
name_byte(int c, int first, int colon)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (colon && c == ':') || (!first && c >= '0' && c <= '9');
}

/* Index past the name at l[i] (metric names may hold ':'), i if none. */
static size_t
skip_name(const char *l, size_t i, size_t ll, int colon)
{
	size_t s = i;

	while (i < ll && name_byte((unsigned char)l[i], i == s, colon))
		i++;
	return i;
}

static size_t
skip_blanks(const char *l, size_t i, size_t ll)
{
	while (i < ll && (l[i] == ' ' || l[i] == '\t'))
		i++;
	return i;
}

/* The label set at l[i] == '{': index past its '}', or 0 when bad. */
static size_t
skip_labels(const char *l, size_t i, size_t ll)
{
	for (i = skip_blanks(l, i + 1, ll); i < ll && l[i] != '}';) {
		size_t e = skip_name(l, i, ll, 0);

		if (e == i)
			return 0;
		i = skip_blanks(l, e, ll);
		if (i >= ll || l[i] != '=')
			return 0;
		i = skip_blanks(l, i + 1, ll);
		if (i >= ll || l[i] != '"')
			return 0;
		for (i++; i < ll && l[i] != '"'; i++)
			if (l[i] == '\\' && (++i >= ll ||
			    strchr("\\\"n", l[i]) == NULL || l[i] == '\0'))
				return 0;
		if (i >= ll)
			return 0;
		i = skip_blanks(l, i + 1, ll);
		if (i < ll && l[i] == ',')
			i = skip_blanks(l, i + 1, ll);
		else if (i < ll && l[i] != '}')
			return 0;
	}
	return i < ll ? i + 1 : 0;
}

/* A float of the format at [s, e): Go's ParseFloat forms without hex. */
static int
float_ok(const char *s, const char *e)
{
	static const char *const word[] = { "NaN", "+Inf", "-Inf", "Inf" };
	char b[64], *end;
	size_t n = (size_t)(e - s);
	double v;

	for (size_t k = 0; k < 4; k++)
		if (n == strlen(word[k]) && memcmp(s, word[k], n) == 0)
			return 1;
	if (n == 0 || n >= sizeof(b))
		return 0;
	for (size_t k = 0; k < n; k++)
		if (strchr("0123456789.eE+-", s[k]) == NULL || s[k] == '\0')
			return 0;
	memcpy(b, s, n);
	b[n] = '\0';
	errno = 0;
	v = strtod(b, &end);
	/* Go's ParseFloat, Prometheus's parser, refuses an overflow */
	return end == b + n && !(errno == ERANGE && isinf(v));
}

static int
check_fail(char *why, size_t whylen, size_t line, size_t col,
    const char *what)
{
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "line %zu column %zu: %s (Prometheus "
		    "text format 0.0.4)", line, col, what);
	return -1;
}

/* Check one line l of ll bytes; NULL when fine, else what is wrong and
 * *col (1-based) where. */
static const char *
line_error(const char *l, size_t ll, size_t *col)
{
	static const char *const types[] = { "counter", "gauge", "histogram",
	    "summary", "untyped" };
	size_t i, e;

	*col = 1;
	if (memchr(l, '\r', ll) != NULL) {
		*col = (size_t)((const char *)memchr(l, '\r', ll) - l) + 1;
		return "a CR byte (lines end with LF only)";
	}
	if (ll == 0)
		return NULL;
	if (l[0] == '#') {
		const char *name;
		size_t nl;
		int kind = header(l, ll, &name, &nl);

		if (kind == 0)
			return NULL;	/* a plain comment */
		*col = 8;
		if (skip_name(name, 0, nl, 1) != nl)
			return "a HELP or TYPE line names no valid metric";
		if (kind == 1)
			return NULL;
		i = skip_blanks(l, 7 + nl, ll);
		e = ll;
		while (e > i && (l[e - 1] == ' ' || l[e - 1] == '\t'))
			e--;
		for (size_t k = 0; k < 5; k++)
			if (e - i == strlen(types[k]) &&
			    memcmp(l + i, types[k], e - i) == 0)
				return NULL;
		*col = i + 1;
		return "TYPE is not counter, gauge, histogram, summary or "
		    "untyped";
	}
	i = skip_blanks(l, 0, ll);
	if ((e = skip_name(l, i, ll, 1)) == i) {
		*col = i + 1;
		return "a sample line does not start with a metric name";
	}
	i = skip_blanks(l, e, ll);
	if (i < ll && l[i] == '{') {
		if ((i = skip_labels(l, i, ll)) == 0) {
			*col = e + 1;
			return "a malformed label set";
		}
	} else
		i = e;
	e = skip_blanks(l, i, ll);
	if (e == i || e >= ll) {
		*col = i + 1;
		return "no value after the name and labels";
	}
	for (i = e; i < ll && l[i] != ' ' && l[i] != '\t'; i++)
		;
	if (!float_ok(l + e, l + i)) {
		*col = e + 1;
		return "the value is not a float, NaN, +Inf or -Inf";
	}
	e = skip_blanks(l, i, ll);
	for (i = e + (e < ll && l[e] == '-'); i < ll && l[i] >= '0' &&
	    l[i] <= '9'; i++)
		;
	if (e < ll && (i == e + (l[e] == '-') ||
	    skip_blanks(l, i, ll) != ll)) {
		*col = e + 1;
		return "after the value only an integer timestamp may follow";
	}
	return NULL;
}

int
promtext_check(const char *text, size_t len, char *why, size_t whylen)
{
	const char *p = text, *end;
	json_t *s;
	size_t line = 1, col;

	if (len == 0)
		return 0;	/* text may be NULL (an empty buf) */
	end = text + len;
	if (memchr(text, '\0', len) != NULL)
		return check_fail(why, whylen, 1, 1, "a raw NUL byte");
	/* jansson's UTF-8 check (RFC 3629: no overlong form, no surrogate) */
	if ((s = json_stringn(text, len)) == NULL)
		return check_fail(why, whylen, 1, 1, "not UTF-8");
	json_decref(s);
	for (; p < end; line++) {
		const char *nlp = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nlp != NULL ? (size_t)(nlp - p) :
		    (size_t)(end - p);
		const char *what = line_error(p, ll, &col);

		if (what != NULL)
			return check_fail(why, whylen, line, col, what);
		p += ll + (nlp != NULL);
	}
	return 0;
}
