/*
 * fuzz_drain — the drain marker codec (drainmark.h): drainmark_decode()
 * on any bytes; when they decode, the round trip: drainmark_encode(),
 * drainmark_decode() of that text must succeed, and encoding the second
 * value must give the same bytes as the first.  The reason decoded never
 * holds a control byte (it reaches logs and terminals).
 */
#include <stdint.h>

#include "harness.h"
#include "core/drainmark.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct drainmark m, m2;
	struct task_error err;
	struct buf a, b;

	buf_init(&a, 0);
	buf_init(&b, 0);
	if (drainmark_decode((const char *)data, size, &m, &err) == 0) {
		if (!drainmark_reason_ok(m.reason))
			fuzz_fail("a decoded reason holds a control byte");
		if (drainmark_encode(&m, &a) != 0)
			fuzz_fail("drainmark_encode failed on a decoded "
			    "marker");
		if (drainmark_decode(a.data, a.len, &m2, &err) != 0)
			fuzz_fail("drainmark_decode refuses what "
			    "drainmark_encode wrote: %s: %s; text: %.*s",
			    err.field, err.rule, (int)a.len, a.data);
		if (drainmark_encode(&m2, &b) != 0)
			fuzz_fail("drainmark_encode failed on the second "
			    "decode");
		fuzz_same_encoding("drain marker", &a, &b);
	}
	buf_fini(&a);
	buf_fini(&b);
	return 0;
}
