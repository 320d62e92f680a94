/*
 * jsontext — the byte-level gate every JSON text from outside passes
 * before it is parsed (pure: no I/O, no clock, no logging).
 *
 * RFC 8259 §2 allows only four bytes between tokens (space, tab, LF, CR)
 * and §7 requires every control character (U+0000..U+001F) inside a
 * string to be escaped; §8.1 requires UTF-8, so no byte 0x80..0xFF can
 * stand outside a string either.  jansson enforces most of that, but it
 * swallows a raw NUL right after a number or a literal ("[1<NUL>]"), and
 * then every copy that stops at the NUL disagrees with the length kept
 * beside it (issue 10: a hook read the daemon's heap).  jsontext_check()
 * refuses those bytes wherever they stand, with a reason that names the
 * byte and its offset; jsontext_loadb() checks, then parses, so no
 * caller can forget the check.  Printable ASCII that breaks the grammar
 * ("{x}") is left to the parser, which names it.
 *
 * Never: it does not parse numbers, validate UTF-8 sequences or match
 * brackets (jansson does, after the check); it does not allocate.
 */
#ifndef TASKSPOOL_JSONTEXT_H
#define TASKSPOOL_JSONTEXT_H

#include <stddef.h>

#include <jansson.h>

/* json_error_t.source of a refusal by jsontext_loadb(), not jansson. */
#define JSONTEXT_SOURCE	"<RFC 8259 byte check>"

/* Enough for every reason jsontext_check() writes (json_error_t.text). */
#define JSONTEXT_WHY_MAX (JSON_ERROR_TEXT_LENGTH - 1)

/*
 * Check the len bytes at data (any bytes; NULs included) for a byte RFC
 * 8259 forbids where it stands.  Returns 0 when there is none; -1 at the
 * first one, with *offset (when not NULL) its 0-based byte offset and
 * why (when not NULL, whylen > 0) a reason such as "raw NUL byte at offset
 * 27 outside a string (RFC 8259 §2: only space, tab, LF and CR may stand
 * between tokens)".  Thread-safe; borrows data.
 */
int jsontext_check(const char *data, size_t len, size_t *offset, char *why,
    size_t whylen);

/*
 * json_loadb(data, len, flags, err) after jsontext_check().  Returns a
 * new reference (the caller json_decref()s it), or NULL: on a refused
 * byte err (when not NULL) holds the reason in err->text, err->source
 * JSONTEXT_SOURCE, err->position the offset, err->line and err->column
 * (1-based) where it stands, and json_error_code() json_error_invalid_syntax;
 * otherwise err is as json_loadb() leaves it, but for an escaped \u0000
 * in a string (json_error_null_character), whose err->text says so and
 * names RFC 8259 §7 and §9 instead of jansson's flag.  Every parse of
 * bytes from outside (files, HTTP bodies, Redis, hooks) goes through
 * this function.
 */
json_t *jsontext_loadb(const char *data, size_t len, size_t flags,
    json_error_t *err);

#endif
