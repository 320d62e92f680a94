#!/bin/sh
# POST /api/tasks:bulk (issue 17 item 1) through lighttpd + taskspool.cgi
# and the Python client (t0113-api-bulk.py), no daemon running, so what
# is stored stays where the API put it:
#  1. four items, two refused (maxRetries 101: VALIDATION_FAILED naming
#     the field; an unknown task code): each answered as POST /tasks
#     would answer it alone, only the two accepted stored (task file and
#     idempotency record); the same request again replays them; a used
#     requestId with other params is IDEMPOTENCY_KEY_REUSED;
#  2. 500 items in one request: 500 task files, 500 distinct ids;
#  3. 501 items, none, not an array, an unknown member, an
#     Idempotency-Key header: 422 naming each; items that are not objects
#     400 INVALID_JSON each; GET 405.
# About 5 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
PY="$(dirname "$0")/t0113-api-bulk.py"

api_server
trap api_cleanup EXIT
api_tester || exit 1

test_expect_success 'mixed items: each answered as alone, only the accepted stored, replays' '
	python3 "$PY" mixed "$SPOOL"
'

test_expect_success '500 tasks in one request' '
	python3 "$PY" many "$SPOOL"
'

test_expect_success 'bad envelopes 422 naming the field; non-object items 400; GET 405' '
	python3 "$PY" problems "$SPOOL"
'

test_done
