/*
 * fuzz_hold — the hold marker codec (holdmark.h): holdmark_decode()
 * on any bytes; when they decode, the round trip: holdmark_encode(),
 * holdmark_decode() of that text must succeed, and encoding the second
 * value must give the same bytes as the first.  The by decoded never
 * holds a control byte (it reaches logs and terminals).
 */
#include <stdint.h>

#include "harness.h"
#include "core/holdmark.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct holdmark m, m2;
	struct task_error err;
	struct buf a, b;

	buf_init(&a, 0);
	buf_init(&b, 0);
	if (holdmark_decode((const char *)data, size, &m, &err) == 0) {
		if (!holdmark_by_ok(m.by) || !holdmark_from_ok(m.from))
			fuzz_fail("a decoded by holds a control byte, or "
			    "from is not a place");
		if (holdmark_encode(&m, &a) != 0)
			fuzz_fail("holdmark_encode failed on a decoded "
			    "marker");
		if (holdmark_decode(a.data, a.len, &m2, &err) != 0)
			fuzz_fail("holdmark_decode refuses what "
			    "holdmark_encode wrote: %s: %s; text: %.*s",
			    err.field, err.rule, (int)a.len, a.data);
		if (holdmark_encode(&m2, &b) != 0)
			fuzz_fail("holdmark_encode failed on the second "
			    "decode");
		fuzz_same_encoding("hold marker", &a, &b);
	}
	buf_fini(&a);
	buf_fini(&b);
	return 0;
}
