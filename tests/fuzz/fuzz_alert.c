/*
 * fuzz_alert — the byte-level readers of core/alert.h: byte 0 picks the
 * reader, the rest is its input.  Even: alert_prev_parse() (the state
 * file state/alerts/<jobCode>, read back from disk); what it accepts
 * must be exactly alert_prev_word() of the outcome it reports.  Odd:
 * alert_params() (the alert task's executeParams from a result
 * envelope), kind from bit 1; what it accepts must begin with '{', end
 * with the "alert" member and '}', and be the trimmed input without its
 * closing brace plus that member.
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "core/alert.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data + 1;
	size_t n = size - 1;
	enum alert_prev p = ALERT_PREV_NONE;
	enum alert_kind k;
	struct buf b;

	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0) {
		if (alert_prev_parse(d, n, &p) == 0) {
			const char *w = alert_prev_word(p == ALERT_PREV_FAILED);

			if (p == ALERT_PREV_NONE || strlen(w) != n ||
			    memcmp(w, d, n) != 0)
				fuzz_fail("alert_prev_parse accepted %.*s",
				    (int)n, d);
		}
		return 0;
	}
	k = (data[0] & 2) ? ALERT_KIND_RECOVERED : ALERT_KIND_FAILED;
	buf_init(&b, 0);
	if (alert_params(d, n, k, &b) == 0) {
		const char *tail = k == ALERT_KIND_FAILED ?
		    "\"alert\":\"failed\"}" : "\"alert\":\"recovered\"}";
		size_t tl = strlen(tail);

		if (b.len < tl + 1 || b.data[0] != '{' ||
		    memcmp(b.data + b.len - tl, tail, tl) != 0)
			fuzz_fail("alert_params wrote %.*s", (int)b.len,
			    b.data);
		if (memmem(d, n, b.data, b.len - tl - 1) == NULL)
			fuzz_fail("alert_params changed the envelope");
	}
	buf_fini(&b);
	return 0;
}
