/*
 * jsontext — RFC 8259 byte gate before any JSON parse; see jsontext.h.
 */
#include "core/jsontext.h"

#include <stdio.h>
#include <string.h>

static const char rule_ws[] = "RFC 8259 §2: only space, tab, LF and CR "
    "may stand between tokens";
static const char rule_str[] = "RFC 8259 §7: control characters in a "
    "string must be escaped";

static int
refuse(size_t at, unsigned char c, int in_string, size_t *offset, char *why,
    size_t whylen)
{
	if (offset != NULL)
		*offset = at;
	if (why == NULL || whylen == 0)
		return -1;
	if (c == '\0')
		snprintf(why, whylen, "raw NUL byte at offset %zu %s (%s)", at,
		    in_string ? "inside a string" : "outside a string",
		    in_string ? rule_str : rule_ws);
	else if (in_string)
		snprintf(why, whylen, "raw control byte 0x%02x at offset %zu "
		    "inside a string (%s)", c, at, rule_str);
	else
		snprintf(why, whylen, "%s byte 0x%02x at offset %zu outside a "
		    "string (%s)", c < 0x20 || c == 0x7f ? "control" :
		    "non-ASCII", c, at, rule_ws);
	return -1;
}

int
jsontext_check(const char *data, size_t len, size_t *offset, char *why,
    size_t whylen)
{
	const unsigned char *d = (const unsigned char *)data;
	int in_string = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = d[i];

		if (in_string) {
			if (c < 0x20)
				return refuse(i, c, 1, offset, why, whylen);
			if (c == '"')
				in_string = 0;
			else if (c == '\\' && i + 1 < len) {
				/* the escaped byte is in the string too */
				if (d[++i] < 0x20)
					return refuse(i, d[i], 1, offset, why,
					    whylen);
			}
			continue;
		}
		if (c == '"')
			in_string = 1;
		else if ((c < 0x20 && c != ' ' && c != '\t' && c != '\n' &&
		    c != '\r') || c >= 0x7f)
			return refuse(i, c, 0, offset, why, whylen);
	}
	return 0;
}

json_t *
jsontext_loadb(const char *data, size_t len, size_t flags, json_error_t *err)
{
	json_error_t own;
	size_t at = 0;
	int line = 1, col = 1;

	if (err == NULL)
		err = &own;
	memset(err, 0, sizeof(*err));
	/* jansson keeps the error code in the last byte of text */
	if (jsontext_check(data, len, &at, err->text,
	    sizeof(err->text) - 1) == 0) {
		json_t *o = json_loadb(data, len, flags, err);

		/* jansson names its own flag; say what the rule is */
		if (o == NULL && json_error_code(err) ==
		    json_error_null_character)
			snprintf(err->text, sizeof(err->text) - 1, "\\u0000 "
			    "in a string: valid JSON (RFC 8259 §7), refused "
			    "here (a limit RFC 8259 §9 allows)");
		return o;
	}
	for (size_t i = 0; i < at; i++) {
		if (data[i] == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	err->line = line;
	err->column = col;
	err->position = (int)at;
	snprintf(err->source, sizeof(err->source), "%s", JSONTEXT_SOURCE);
	err->text[sizeof(err->text) - 1] = (char)json_error_invalid_syntax;
	return NULL;
}
