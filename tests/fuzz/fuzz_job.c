/*
 * fuzz_job — the job file codec (job.h): job_decode() on any bytes
 * (which also parses the cron expression and decodes the task the job
 * would fire); when they decode, the round trip job.h promises:
 * job_encode(), job_decode() of that text must succeed, and encoding the
 * second value must give the same bytes as the first.
 */
#include <stdint.h>

#include "harness.h"
#include "core/job.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job j, j2;
	struct task_error err;
	struct buf a, b;

	job_init(&j);
	job_init(&j2);
	buf_init(&a, 0);
	buf_init(&b, 0);
	if (job_decode((const char *)data, size, &j, &err) == 0) {
		if (job_encode(&j, &a) != 0)
			fuzz_fail("job_encode failed on a decoded job");
		if (job_decode(a.data, a.len, &j2, &err) != 0)
			fuzz_fail("job_decode refuses what job_encode wrote: "
			    "%s: %s; text: %.*s", err.field, err.rule,
			    (int)a.len, a.data);
		if (job_encode(&j2, &b) != 0)
			fuzz_fail("job_encode failed on the second decode");
		fuzz_same_encoding("job", &a, &b);
	}
	buf_fini(&a);
	buf_fini(&b);
	job_fini(&j);
	job_fini(&j2);
	return 0;
}
