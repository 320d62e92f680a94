/*
 * buf — growable capped buffer; see buf.h.
 */
#include "core/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
buf_init(struct buf *b, size_t cap)
{
	b->data = NULL;
	b->len = b->size = 0;
	b->cap = cap != 0 ? cap : SIZE_MAX / 2;
}

void
buf_fini(struct buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->size = 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static int
buf_reserve(struct buf *b, size_t n)
{
	size_t want, nsize;
	char *p;

	if (n > b->cap - b->len) {
		errno = EFBIG;
		return -1;
	}
	want = b->len + n + 1;
	if (want <= b->size)
		return 0;
	nsize = b->size != 0 ? b->size : 256;
	while (nsize < want)
		nsize *= 2;
	p = realloc(b->data, nsize);
	if (p == NULL)
		return -1;
	b->data = p;
	b->size = nsize;
	return 0;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) != 0)
		return -1;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if (buf_reserve(b, (size_t)n) != 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}
