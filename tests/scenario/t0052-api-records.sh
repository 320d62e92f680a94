#!/bin/sh
# GET /api/tasks answered from MariaDB (issue 6 item 3) through lighttpd:
# with `mariadb` configured the CGI reads task_execution (keyset pages by
# (created_at, request_id), newest first) and still does not link
# libmariadb (it loads it with dlopen only for this request).  Pages of 4
# return every task of the caller's app exactly once, in order; the
# status, taskCode and since filters return exactly the tasks the spool
# says; another app sees only its own.  Needs mariadbd (TS_TEST_MARIADB,
# or a private server) and lighttpd.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
. "$(dirname "$0")/records-lib.sh"	# (it moves into $TRASH)
trap 'api_stop; mdb_cleanup' EXIT
mdb_use_server
mdb_database
echo "fsync = 0" >>"$CONF"
api_server
cp "$PROBE" "$HOOKS/probe2"
N=${API_RECORDS_TASKS:-30}

export TS_APP_ID=tester
TS_SECRET=$(ts apps add tester --codes probe,probe2) || exit 1
export TS_SECRET
OTHER_SECRET=$(ts apps add other --codes probe) || exit 1

# pylist APP SECRET QUERY OUT: every page of GET /api/tasks?QUERY&limit=4
# through tsapi.py's signed client; OUT gets one line per item
# (requestId status taskCode createdAt attempt durationMs), in page order.
pylist() {
	PYTHONPATH="$API_HERE/contrib/clients" python3 - "$@" <<-"P"
	import json, os, sys, tsapi
	app, secret, query, out = sys.argv[1:5]
	c = tsapi.Client(os.environ["TS_URL"], app, secret)
	cursor, lines, pages = None, [], 0
	while True:
	    q = query + "&limit=4" + ("&cursor=" + cursor if cursor else "")
	    st, _, body = c.request("GET", "/api/tasks", query=q.lstrip("&"))
	    assert st == 200, (st, body)
	    o = json.loads(body)
	    assert len(o["items"]) <= 4
	    for it in o["items"]:
	        lines.append("%s %s %s %s %s %s" % (it["requestId"], it["status"],
	                     it["taskCode"], it["createdAt"], it["attempt"],
	                     it["durationMs"]))
	    pages += 1
	    cursor = o["nextCursor"]
	    if cursor is None:
	        break
	    assert len(o["items"]) == 4
	with open(out, "w") as f:
	    f.write("".join(l + "\n" for l in lines))
	print("pages", pages, "items", len(lines))
	P
}
# finished_rows: task_execution rows of finished tasks.
finished_rows() {
	sql "SELECT COUNT(*) FROM task_execution WHERE status IN ('SUCCESS', 'FAILED')"
}
# expected FILTER OUT: the spool's view (result files and request
# markers) of the tester's tasks in the list's order, through jq FILTER.
expected() {
	for f in "$SPOOL"/results/*.json; do
		id=$(basename "$f" .json)
		[ "$(jq -r .appId "$SPOOL/state/requests/$id.json")" = tester ] && cat "$f"
	done | jq -s -r "map(select($1)) | sort_by(.createdAt, .requestId) | reverse | .[] |
	    \"\(.requestId) \(.status) \(.taskCode) \(.createdAt) \(.attempt) \(.durationMs)\"" >"$2"
}

test_expect_success 'the CGI and the CLI do not need libmariadb (it is loaded with dlopen); the daemon does' '
	! readelf -d "$BUILD/taskspool.cgi" | grep -q "NEEDED.*libmariadb" &&
	! readelf -d "$BUILD/taskspool" | grep -q "NEEDED.*libmariadb" &&
	readelf -d "$BUILD/taskspoold" | grep -q "NEEDED.*libmariadb"
'

test_expect_success "db migrate; a daemon; $N tasks of tester (two codes, some failing) and 3 of other through the API" '
	ts db migrate >/dev/null &&
	start_daemon n1 -j 4 &&
	PYTHONPATH="$API_HERE/contrib/clients" python3 - "$N" "$OTHER_SECRET" <<-"P"
	import json, os, sys, tsapi
	n, other = int(sys.argv[1]), sys.argv[2]
	me = tsapi.Client(os.environ["TS_URL"], "tester", os.environ["TS_SECRET"])
	ot = tsapi.Client(os.environ["TS_URL"], "other", other)
	for i in range(n):
	    p = {"exit": 65} if i % 3 == 2 else {"result": True}
	    t = {"requestId": "ls-%03d" % i, "taskCode": "probe2" if i % 2 else "probe",
	         "executeParams": p, "maxRetries": 0}
	    st, _, body = me.submit(json.dumps(t).encode())
	    assert st == 202, (st, body)
	for i in range(3):
	    t = {"requestId": "other-%d" % i, "taskCode": "probe", "executeParams": {}}
	    st, _, body = ot.submit(json.dumps(t).encode())
	    assert st == 202, (st, body)
	P
	wait_for "test \$(terminal_count) -eq $((N + 3))" 60 &&
	wait_for "test \$(outbox_count) -eq 0 && test \$(finished_rows) -eq $((N + 3))" 60
'

test_expect_success 'pages of 4: every tester task exactly once, newest first, values as in the spool' '
	pylist tester "$TS_SECRET" "" "$TRASH/all" &&
	expected true "$TRASH/exp.all" &&
	test "$(wc -l <"$TRASH/exp.all")" = "$N" &&
	test "$(cut -d" " -f1 "$TRASH/all" | sort | uniq -d | wc -l)" = 0 &&
	diff "$TRASH/exp.all" "$TRASH/all"
'

test_expect_success 'status=FAILED, taskCode=probe2, both, and since: exactly the spool'"'"'s tasks' '
	pylist tester "$TS_SECRET" "status=FAILED" "$TRASH/failed" &&
	expected ".status == \"FAILED\"" "$TRASH/exp.failed" &&
	test "$(wc -l <"$TRASH/exp.failed")" = $((N / 3)) &&
	diff "$TRASH/exp.failed" "$TRASH/failed" &&
	pylist tester "$TS_SECRET" "taskCode=probe2" "$TRASH/p2" &&
	expected ".taskCode == \"probe2\"" "$TRASH/exp.p2" &&
	test "$(wc -l <"$TRASH/exp.p2")" = $((N / 2)) &&
	diff "$TRASH/exp.p2" "$TRASH/p2" &&
	pylist tester "$TS_SECRET" "status=SUCCESS&status=FAILED&taskCode=probe2" "$TRASH/both" &&
	diff "$TRASH/exp.p2" "$TRASH/both" &&
	since=$(sed -n 10p "$TRASH/exp.all" | cut -d" " -f4) &&
	pylist tester "$TS_SECRET" "since=$since" "$TRASH/since" &&
	expected ".createdAt >= \"$since\"" "$TRASH/exp.since" &&
	test "$(wc -l <"$TRASH/exp.since")" -ge 10 &&
	diff "$TRASH/exp.since" "$TRASH/since"
'

test_expect_success 'another app sees only its own three tasks' '
	pylist other "$OTHER_SECRET" "" "$TRASH/other" &&
	test "$(cut -d" " -f1 "$TRASH/other" | sort | tr "\n" " ")" = "other-0 other-1 other-2 "
'

test_expect_success 'the answer comes from MariaDB: a row deleted there leaves the list' '
	sql "DELETE FROM task_execution WHERE request_id = \"ls-000\"" &&
	pylist tester "$TS_SECRET" "" "$TRASH/all2" &&
	grep -v "^ls-000 " "$TRASH/all" | diff - "$TRASH/all2"
'

test_done
