/*
 * fuzz_result — the readers of result files (result.h,
 * results/<requestId>.json): result_json_ok() and result_peek() (the
 * CLI's and the daemon's), the callback envelope built from a result
 * (callback_prepare(), for a task with a callbackUrl), and the API's view
 * of a finished task: the input is planted as the result of requestId
 * RID, whose task file is in done/ and whose idempotency record is the
 * harness app's, then GET /api/tasks/RID and GET /api/tasks are sent,
 * signed (fuzz_api_call).  Checked: result_peek's status fits its 16
 * bytes; a delivery callback_prepare() writes is one cbdel_decode()
 * reads back (else the sender drops it); what api.h promises of every
 * answer.
 */
#include <stdint.h>
#include <string.h>

#include "callback/callback.h"
#include "callback/callback_impl.h"
#include "harness.h"
#include "core/result.h"
#include "spool/spool.h"
#include "core/task.h"

#define RID	"fuzz-result-1"
#define TASK	"{\"requestId\":\"" RID "\",\"taskCode\":\"x\"," \
		"\"callbackUrl\":\"https://example.com/cb\"," \
		"\"createdAt\":\"2024-01-01T00:00:00.000Z\"}"
#define MARKER	"{\"appId\":\"" FUZZ_APP_ID "\",\"requestId\":\"" RID "\"," \
		"\"taskCode\":\"x\",\"fingerprint\":\"" \
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
		"\",\"createdAt\":\"2024-01-01T00:00:00.000Z\"}"

static struct config cfg;
static struct spool sp;
static struct task task;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char why[512];
	struct task_error err;

	(void)argc;
	(void)argv;
	fuzz_spool_init(&cfg);
	if (spool_open(&sp, cfg.spool, NULL, 0, why, sizeof(why)) != 0)
		fuzz_fail("spool_open: %s", why);
	task_init(&task);
	if (task_decode(TASK, sizeof(TASK) - 1, &task, &err) != 0)
		fuzz_fail("the harness's task: %s: %s", err.field, err.rule);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_request rqs[] = {
		{ "GET", "/tasks/" RID, NULL, NULL, NULL, "", 0 },
		{ "GET", "/tasks", NULL, NULL, NULL, "", 0 },
	};
	const char *text = (const char *)data;
	char status[16], why[256];
	size_t na;
	struct buf out;
	struct cbdel c;

	(void)result_json_ok(text, size);
	memset(status, 0x55, sizeof(status));
	if (result_peek(text, size, status, &na) == 0 &&
	    memchr(status, '\0', sizeof(status)) == NULL)
		fuzz_fail("result_peek: status not terminated in 16 bytes");
	buf_init(&out, 0);
	if (callback_prepare(&sp, &task, text, size, FUZZ_NOW * 1000,
	    &out) == 1) {
		if (cbdel_decode(out.data, out.len, &c, why, sizeof(why)) != 0)
			fuzz_fail("callback_prepare wrote a delivery that "
			    "cbdel_decode refuses: %s", why);
		cbdel_fini(&c);
	}
	fuzz_spool_wipe(&cfg);
	fuzz_spool_put(&cfg, "state/requests/" RID ".json", MARKER,
	    sizeof(MARKER) - 1);
	fuzz_spool_put(&cfg, "done/" RID ".json", TASK, sizeof(TASK) - 1);
	fuzz_spool_put(&cfg, "results/" RID ".json", data, size);
	for (size_t i = 0; i < sizeof(rqs) / sizeof(rqs[0]); i++)
		(void)fuzz_api_call(&cfg, &rqs[i], &out);
	buf_fini(&out);
	return 0;
}
