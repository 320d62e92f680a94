/*
 * textfile — control-byte gate for line-based text files; see textfile.h.
 */
#include "core/textfile.h"

#include <stdio.h>

int
textfile_check(const char *name, const char *data, size_t len, char *why,
    size_t whylen)
{
	const unsigned char *d = (const unsigned char *)data;
	size_t line = 1, col = 1;
	char what[32];

	for (size_t i = 0; i < len; i++, col++) {
		unsigned char c = d[i];

		if (c == '\n') {
			line++;
			col = 0;
			continue;
		}
		if ((c >= 0x20 && c != 0x7f) || c == '\t' || c == '\r')
			continue;
		if (why == NULL || whylen == 0)
			return -1;
		if (c == '\0')
			snprintf(what, sizeof(what), "raw NUL byte");
		else
			snprintf(what, sizeof(what), "control byte 0x%02x", c);
		if (name != NULL)
			snprintf(why, whylen, "%s:%zu:%zu: %s (offset %zu; a "
			    "text file holds no control byte but tab, LF and "
			    "CR)", name, line, col, what, i);
		else
			snprintf(why, whylen, "line %zu column %zu: %s (offset "
			    "%zu; a text file holds no control byte but tab, "
			    "LF and CR)", line, col, what, i);
		return -1;
	}
	return 0;
}
