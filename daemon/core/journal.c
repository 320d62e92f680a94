/*
 * journal — native-protocol entries for systemd-journald; see journal.h.
 */
#include "core/journal.h"

#include <stdint.h>
#include <string.h>

size_t
journal_encode(char *out, size_t cap, const struct journal_field *f, int n)
{
	size_t o = 0;

	for (int i = 0; i < n; i++) {
		size_t nl = strlen(f[i].name), vl;

		if (f[i].value == NULL || f[i].value[0] == '\0')
			continue;
		vl = strlen(f[i].value);
		if (memchr(f[i].value, '\n', vl) == NULL) {
			/* NAME=value\n */
			if (cap - o < nl + vl + 2)
				return 0;
			memcpy(out + o, f[i].name, nl);
			out[o + nl] = '=';
			memcpy(out + o + nl + 1, f[i].value, vl);
			out[o + nl + 1 + vl] = '\n';
			o += nl + vl + 2;
		} else {
			/* NAME\n <le64 length> value \n */
			uint64_t len = vl;

			if (cap - o < nl + 1 + 8 + vl + 1)
				return 0;
			memcpy(out + o, f[i].name, nl);
			out[o + nl] = '\n';
			o += nl + 1;
			for (int b = 0; b < 8; b++)
				out[o + b] = (char)(len >> (8 * b) & 0xff);
			o += 8;
			memcpy(out + o, f[i].value, vl);
			out[o + vl] = '\n';
			o += vl + 1;
		}
	}
	return o;
}
