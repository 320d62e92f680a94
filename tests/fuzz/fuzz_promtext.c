/*
 * fuzz_promtext — the Prometheus text merger (promtext.h) that GET
 * /metrics runs over every metrics/<node>.prom: the input is cut at NUL
 * bytes into up to TEXTS texts, merged with promtext_merge().  Checked,
 * from promtext.h's contract: every sample line (a non-empty line not
 * starting with '#') of the inputs is in the output once, so the output
 * has exactly as many; it has no more "# HELP"/"# TYPE" lines than the
 * inputs; it ends with a newline when it is not empty; and when every
 * input passes promtext_check(), so does the output (the merge keeps
 * the grammar GET /metrics promises).
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "core/promtext.h"

#define TEXTS	8

/* Count sample lines and header lines of len bytes at p. */
static void
count(const char *p, size_t len, size_t *samples, size_t *headers)
{
	const char *end;

	if (len == 0)
		return;		/* p may be NULL (an empty buf) */
	end = p + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		if (ll > 7 && (memcmp(p, "# HELP ", 7) == 0 ||
		    memcmp(p, "# TYPE ", 7) == 0))
			(*headers)++;
		else if (ll > 0 && p[0] != '#')
			(*samples)++;
		p += ll + (nl != NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text[TEXTS];
	size_t len[TEXTS], n = 0, s_in = 0, h_in = 0, s_out = 0, h_out = 0;
	int all_ok = 1;
	const char *p = (const char *)data, *end = p + size;
	struct buf out;
	char why[256];

	while (n < TEXTS) {
		const char *z = n + 1 < TEXTS ? memchr(p, '\0',
		    (size_t)(end - p)) : NULL;

		text[n] = p;
		len[n] = z != NULL ? (size_t)(z - p) : (size_t)(end - p);
		count(text[n], len[n], &s_in, &h_in);
		if (promtext_check(text[n], len[n], NULL, 0) != 0)
			all_ok = 0;
		n++;
		if (z == NULL)
			break;
		p = z + 1;
	}
	buf_init(&out, 0);
	if (promtext_merge(text, len, n, &out) != 0)
		fuzz_fail("promtext_merge failed (out of memory?)");
	count(out.data, out.len, &s_out, &h_out);
	if (s_out != s_in)
		fuzz_fail("%zu sample lines in, %zu out", s_in, s_out);
	if (h_out > h_in)
		fuzz_fail("%zu header lines in, %zu out", h_in, h_out);
	if (out.len > 0 && out.data[out.len - 1] != '\n')
		fuzz_fail("output does not end with a newline");
	if (all_ok && promtext_check(out.data, out.len, why, sizeof(why)))
		fuzz_fail("valid inputs, merged output refused: %s", why);
	buf_fini(&out);
	return 0;
}
