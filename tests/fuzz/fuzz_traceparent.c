/*
 * fuzz_traceparent — the W3C traceparent parser (traceparent.h):
 * traceparent_parse() on any bytes; when they parse, the value formatted
 * is 55 characters of version 00 that parse again to the same ids and
 * flags, and the ids are not all zeros.
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "core/traceparent.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t zero[16];
	struct traceparent a, b;
	char out[TRACEPARENT_LEN + 1];

	if (traceparent_parse((const char *)data, size, &a, NULL) != 0)
		return 0;
	if (memcmp(a.trace_id, zero, 16) == 0 ||
	    memcmp(a.parent_id, zero, 8) == 0)
		fuzz_fail("an all-zero id was accepted");
	traceparent_format(&a, out);
	if (strlen(out) != TRACEPARENT_LEN || memcmp(out, "00-", 3) != 0)
		fuzz_fail("formatted value is not version 00: %s", out);
	if (traceparent_parse(out, TRACEPARENT_LEN, &b, NULL) != 0)
		fuzz_fail("parse refuses what format wrote: %s", out);
	if (memcmp(&a, &b, sizeof(a)) != 0)
		fuzz_fail("round trip changed the value: %s", out);
	return 0;
}
