/*
 * fuzz_batch — the batch file codec (core/batch.h, batch.json of
 * state/batches/<batchId>/): batch_decode() on any bytes; when they
 * decode, the round trip: batch_encode(), batch_decode() of that text
 * must succeed, and encoding the second value must give the same bytes
 * as the first.  A decoded batch that is completed is closed.
 */
#include <stdint.h>

#include "harness.h"
#include "core/batch.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct batch m, m2;
	struct task_error err;
	struct buf a, b;

	buf_init(&a, 0);
	buf_init(&b, 0);
	if (batch_decode((const char *)data, size, &m, &err) == 0) {
		if (m.completed_ms >= 0 && m.closed_ms < 0)
			fuzz_fail("a completed batch that is not closed");
		if (batch_encode(&m, &a) != 0)
			fuzz_fail("batch_encode failed on a decoded batch");
		if (batch_decode(a.data, a.len, &m2, &err) != 0)
			fuzz_fail("batch_decode refuses what batch_encode "
			    "wrote: %s: %s; text: %.*s", err.field, err.rule,
			    (int)a.len, a.data);
		if (batch_encode(&m2, &b) != 0)
			fuzz_fail("batch_encode failed on the second decode");
		fuzz_same_encoding("batch", &a, &b);
	}
	buf_fini(&a);
	buf_fini(&b);
	return 0;
}
