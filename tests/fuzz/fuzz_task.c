/*
 * fuzz_task — the task file codec (task.h): task_decode() on any bytes;
 * when they decode, the round trip of issue 10 item 2: task_encode(),
 * task_decode() of that text must succeed, and encoding the second value
 * must give the same bytes as the first (decode → encode → decode gives
 * the same value, compared through its canonical encoding).  A value the
 * encoder writes and the decoder refuses is what sends a task to
 * corrupt/ after one retry.
 */
#include <stdint.h>

#include "harness.h"
#include "task.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task t, t2;
	struct task_error err;
	struct buf a, b;

	task_init(&t);
	task_init(&t2);
	buf_init(&a, 0);
	buf_init(&b, 0);
	if (task_decode((const char *)data, size, &t, &err) == 0) {
		if (task_encode(&t, &a) != 0)
			fuzz_fail("task_encode failed on a decoded task");
		if (task_decode(a.data, a.len, &t2, &err) != 0)
			fuzz_fail("task_decode refuses what task_encode wrote: "
			    "%s: %s; text: %.*s", err.field, err.rule,
			    (int)a.len, a.data);
		if (task_encode(&t2, &b) != 0)
			fuzz_fail("task_encode failed on the second decode");
		fuzz_same_encoding("task", &a, &b);
	}
	buf_fini(&a);
	buf_fini(&b);
	task_fini(&t);
	task_fini(&t2);
	return 0;
}
