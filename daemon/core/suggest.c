/*
 * suggest — nearest known name by optimal string alignment distance; see
 * suggest.h.  The dynamic programme is the textbook one (Wagner-Fischer
 * with the transposition step of Damerau 1964), three rows of
 * SUGGEST_NAME_MAX + 1 cells on the stack.
 */
#include "core/suggest.h"

#include <string.h>

static int
fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static size_t
min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

size_t
suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t r0[SUGGEST_NAME_MAX + 1], r1[SUGGEST_NAME_MAX + 1],
	    r2[SUGGEST_NAME_MAX + 1];
	size_t *pp = r0, *p = r1, *c = r2, *t;

	if (la > SUGGEST_NAME_MAX || lb > SUGGEST_NAME_MAX)
		return SUGGEST_NAME_MAX + 1;
	for (size_t j = 0; j <= lb; j++)
		p[j] = j;
	for (size_t i = 1; i <= la; i++) {
		c[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = fold(a[i - 1]) != fold(b[j - 1]);

			c[j] = min3(p[j] + 1, c[j - 1] + 1, p[j - 1] + cost);
			if (i > 1 && j > 1 && fold(a[i - 1]) ==
			    fold(b[j - 2]) && fold(a[i - 2]) ==
			    fold(b[j - 1]) && pp[j - 2] + 1 < c[j])
				c[j] = pp[j - 2] + 1;
		}
		t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb];
}

const char *
suggest_name(const char *word, const char *const *names, size_t n)
{
	size_t len = strlen(word), best = SUGGEST_NAME_MAX + 1;
	const char *pick = NULL;

	if (len > SUGGEST_NAME_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = suggest_distance(word, names[i]);
		size_t l = strlen(names[i]) > len ? strlen(names[i]) : len;
		size_t limit = l <= 4 ? 1 : l <= 8 ? 2 : 3;

		if (d <= limit && d < best) {
			best = d;
			pick = names[i];
		}
	}
	return pick;
}
