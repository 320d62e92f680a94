#!/bin/sh
# Recurring jobs over HTTP (issue 17 item 1): /api/jobs through
# lighttpd + taskspool.cgi and the Python client, checked against the
# calendar and against `taskspool jobs` on the same files
# (t0114-api-jobs.py names the sources):
#  1. create (201, Location, createdAt stamped, the next five fires in
#     the job's zone and UTC: the Mondays of January 2030 in
#     Europe/Berlin), the same as `jobs next`; POST again 409
#     JOB_EXISTS; PUT replaces (200) keeping createdAt, twice the same
#     file; PUT creates (201); a body whose jobCode is not the path's
#     422; the list in pages;
#  2. refused definitions: 422 naming the field with the rule `jobs add`
#     prints for the same bytes (one codec); no hook 422
#     UNKNOWN_TASK_CODE; a taskCode or onFailure not granted 403; none
#     stored;
#  3. scoping: another app sees none of them (404 JOB_NOT_FOUND for
#     GET, DELETE, run, disable; 403 for PUT over one; 409 for POST of
#     its name); an app granted "*" sees all, an undecodable file as
#     valid false, and deletes it;
#  4. disable and enable rewrite "enabled" (no next fires while off);
#  5. a run is the caller's task: it runs, GET and logs see it, another
#     app does not; a forbid job's second run while the first is live
#     409 JOB_RUN_IN_PROGRESS naming it;
#  6. 8 PUTs of one job at once: one whole definition, createdAt kept;
#  7. a submitted requestId of a fire's shape 422; a run of a job whose
#     onFailure is not granted 403; a definition whose tasks would not
#     fit in a task file 422 executeParams; no fire before createdAt;
#  8. a retry of an old run of a forbid job while another run is live
#     409 JOB_RUN_IN_PROGRESS naming it (coord/retry.c takes the job's
#     run marker), 202 after it ended;
#  9. DELETE (file gone, then 404); 405 with Allow, 404 for bad paths,
#     401 unsigned.
# About 10 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
PY="$(dirname "$0")/t0114-api-jobs.py"

api_server
trap api_cleanup EXIT
api_tester || exit 1
TS_SECRET=$(ts apps add planner --codes report,slow,flip) &&
TS_OTHER_SECRET=$(ts apps add other --codes out) &&
TS_ALL_SECRET=$(ts apps add admin --codes '*') || exit 1
TS_APP_ID=planner
export TS_APP_ID TS_SECRET TS_OTHER_SECRET TS_ALL_SECRET SPOOL TS CONF
printf '#!/bin/sh\necho report ran\n' >"$HOOKS/report"
printf '#!/bin/sh\nexit 0\n' >"$HOOKS/out"
cat >"$HOOKS/slow" <<H
#!/bin/sh
i=0
while [ ! -e "$TRASH/go" ] && [ \$i -lt 300 ]; do sleep 0.05; i=\$((i + 1)); done
H
cat >"$HOOKS/flip" <<H
#!/bin/sh
i=0
while [ -e "$TRASH/flip-slow" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
exit 1
H
chmod +x "$HOOKS/report" "$HOOKS/out" "$HOOKS/slow" "$HOOKS/flip"

test_expect_success 'create, read, replace, list: the next five Mondays, as jobs next' '
	python3 "$PY" crud "$TRASH"
'

test_expect_success 'refused definitions name the field and rule jobs add prints' '
	python3 "$PY" validation "$TRASH"
'

test_expect_success 'another app sees none; "*" sees all, an undecodable one too' '
	python3 "$PY" scoping "$TRASH"
'

test_expect_success 'disable, enable' '
	python3 "$PY" enable "$TRASH"
'

test_expect_success 'a run is the caller'"'"'s task; forbid: 409 while live' '
	start_daemon n1 -j 2 &&
	python3 "$PY" run "$TRASH"
'

test_expect_success '8 PUTs at once: one whole definition, createdAt kept' '
	python3 "$PY" race "$TRASH"
'

test_expect_success 'a fire id taken first, ungranted onFailure, oversize tasks, createdAt' '
	python3 "$PY" fences "$TRASH"
'

test_expect_success 'retry of an old run beside a live one of a forbid job: 409' '
	python3 "$PY" retry_fence "$TRASH"
'

test_expect_success 'DELETE; methods 405 with Allow; bad paths 404; unsigned 401' '
	python3 "$PY" delete "$TRASH" && python3 "$PY" methods "$TRASH"
'

test_done
