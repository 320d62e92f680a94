/*
 * fuzz_record — the API's idempotency record reader (api.h:
 * state/requests/<requestId>.json, {appId, requestId, taskCode,
 * fingerprint, createdAt}): the input is planted as the record of
 * requestId RID, next to a valid task file of RID in incoming/, and read
 * through every request that looks a record up, each signed as the
 * harness does (fuzz_api_call): GET /api/tasks/RID, the list GET
 * /api/tasks and a replayed submission of RID (POST /api/tasks).  Not a
 * cancel: DELETE reads the record as GET does (own_marker) and then
 * waits up to 2 s for a daemon to act, which would make this target a
 * few inputs a second.  Checked: what api.h promises of every answer
 * (harness.c, check_response).
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"

#define RID	"fuzz-record-1"
#define TASK	"{\"requestId\":\"" RID "\",\"taskCode\":\"x\"}"

static struct config cfg;

FUZZ_SPOOL_INITIALIZE(cfg)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_request rqs[] = {
		{ "GET", "/tasks/" RID, NULL, NULL, NULL, "", 0 },
		{ "GET", "/tasks", "limit=5", NULL, NULL, "", 0 },
		{ "POST", "/tasks", NULL, "application/json", NULL, TASK,
		    sizeof(TASK) - 1 },
	};
	struct buf out;

	fuzz_spool_wipe(&cfg);
	fuzz_spool_put(&cfg, "state/requests/" RID ".json", data, size);
	fuzz_spool_put(&cfg, "incoming/" RID ".json", TASK, sizeof(TASK) - 1);
	buf_init(&out, 0);
	for (size_t i = 0; i < sizeof(rqs) / sizeof(rqs[0]); i++)
		(void)fuzz_api_call(&cfg, &rqs[i], &out);
	buf_fini(&out);
	return 0;
}
