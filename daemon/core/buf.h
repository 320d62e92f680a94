/*
 * buf — one growable, capped byte buffer for task files, hook output and
 * HTTP bodies (after qmail's stralloc and Postfix's vstring).
 *
 * The data is always NUL-terminated (the NUL is not counted in len), so a
 * buffer holding text can be handed to C string functions; binary data may
 * contain NULs.  A buffer never grows past its cap: an append that would
 * returns -1 with errno EFBIG and leaves the buffer unchanged.
 */
#ifndef TASKSPOOL_BUF_H
#define TASKSPOOL_BUF_H

#include <stddef.h>

struct buf {
	char *data;	/* new; NULL until the first append */
	size_t len;	/* bytes used, excluding the NUL */
	size_t size;	/* bytes allocated */
	size_t cap;	/* most bytes len may reach; 0 = SIZE_MAX/2 */
};

/* Initialise an empty buffer that may hold at most cap bytes. */
void buf_init(struct buf *b, size_t cap);

/* Free the data; b is empty and reusable afterwards.  NULL is accepted. */
void buf_fini(struct buf *b);

/* Drop the contents, keep the allocation. */
void buf_reset(struct buf *b);

/* Append n bytes.  Returns 0, or -1 with errno ENOMEM or EFBIG. */
int buf_append(struct buf *b, const void *p, size_t n);

/* Append a C string.  Returns 0 or -1 as buf_append. */
int buf_puts(struct buf *b, const char *s);

/* Append printf-style text.  Returns 0 or -1 as buf_append. */
int buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
