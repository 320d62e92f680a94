/*
 * fuzz_delivery — the callback-delivery file reader (callback_impl.h,
 * outbox/callbacks/<dir>/<requestId>.json): cbdel_decode() of any bytes;
 * when they decode, the round trip of issue 10 item 2: cbdel_encode(),
 * cbdel_decode() of that text must succeed, and encoding the second value
 * must give the same bytes.  The sender rewrites a delivery file after
 * every try, so a value it cannot read back loses the delivery.
 */
#include <stdint.h>

#include "callback/callback_impl.h"
#include "harness.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cbdel c, c2;
	char why[256];
	struct buf a, b;

	if (cbdel_decode((const char *)data, size, &c, why, sizeof(why)) != 0)
		return 0;
	buf_init(&a, 0);
	buf_init(&b, 0);
	if (cbdel_encode(&c, &a) != 0)
		fuzz_fail("cbdel_encode failed on a decoded delivery");
	if (cbdel_decode(a.data, a.len, &c2, why, sizeof(why)) != 0)
		fuzz_fail("cbdel_decode refuses what cbdel_encode wrote: %s; "
		    "text: %.*s", why, (int)a.len, a.data);
	if (cbdel_encode(&c2, &b) != 0)
		fuzz_fail("cbdel_encode failed on the second decode");
	fuzz_same_encoding("delivery", &a, &b);
	cbdel_fini(&c);
	cbdel_fini(&c2);
	buf_fini(&a);
	buf_fini(&b);
	return 0;
}
