/*
 * fuzz_task — the task file codec (task.h): task_decode() on any bytes;
 * when they decode, the round trip of issue 10 item 2: task_encode(),
 * task_decode() of that text must succeed, and encoding the second value
 * must give the same bytes as the first (decode → encode → decode gives
 * the same value, compared through its canonical encoding).  A value the
 * encoder writes and the decoder refuses is what sends a task to
 * corrupt/ after one retry.  And the executeParams bytes (the hook's
 * stdin, found by task.c's own scanner) parse, by jansson alone, to the
 * value jansson finds as the member of the whole text ("{}" when it is
 * absent), and hold no NUL: the scanner and the parser agree.
 */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "harness.h"
#include "core/task.h"

/* The executeParams copy of t against jansson's parse of data. */
static void
same_params(const uint8_t *data, size_t size, const struct task *t)
{
	json_t *root = json_loadb((const char *)data, size, JSON_DECODE_ANY,
	    NULL);
	json_t *want = json_object_get(root, "executeParams");
	json_t *got = json_loadb(t->params, t->params_len, JSON_DECODE_ANY,
	    NULL);

	if (root == NULL)
		fuzz_fail("task_decode accepts what jansson refuses");
	if (memchr(t->params, '\0', t->params_len) != NULL)
		fuzz_fail("executeParams holds a NUL");
	if (want == NULL ? t->params_len != 2 || memcmp(t->params, "{}", 2) :
	    got == NULL || !json_equal(got, want))
		fuzz_fail("executeParams bytes differ from the member: %.*s",
		    (int)t->params_len, t->params);
	json_decref(got);
	json_decref(root);
}

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
		same_params(data, size, &t);
	}
	buf_fini(&a);
	buf_fini(&b);
	task_fini(&t);
	task_fini(&t2);
	return 0;
}
