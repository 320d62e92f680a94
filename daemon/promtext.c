/*
 * promtext — merge Prometheus text exposition files; see promtext.h.
 */
#include <stdlib.h>
#include <string.h>

#include "promtext.h"

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
