#!/bin/sh
# W3C trace context end to end (issue 14 item 6; README.md, "Trace
# context"), in embedded mode, then briefly in cluster mode (Redis):
#  - an API submit with a traceparent header: the hook gets TRACEPARENT
#    with the same trace-id and another parent-id (and TASKSPOOL_TRACE_ID),
#    the attempt records that value, the result and GET show the task's
#    traceparent, the log's start line says trace=<trace-id>, and the
#    callback receiver gets a traceparent header of the same trace (and
#    data.traceparent in the signed body);
#  - an invalid header is ignored (W3C §3.2: restart the trace): 202 with
#    a new valid trace; an invalid body member is 422 naming traceparent;
#  - the body member wins over the header;
#  - `taskspool submit --traceparent`, TRACEPARENT from the environment,
#    an invalid flag (64), a task without any: a fresh valid trace.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
trap 'api_stop; redis_teardown' EXIT
RECV="$API_HERE/tests/tools/cbrecv.py"
TSAPI="$API_HERE/contrib/clients/tsapi.sh"
TID=4bf92f3577b34da6a3ce929d0e0e4736
TP="00-$TID-00f067aa0ba902b7-01"
echo "fsync = 0" >>"$CONF"
sed -i "s/^log_format = text\$/log_format = logfmt/" "$CONF"
local_callbacks 300,300,300
api_server

cat >"$HOOKS/trace" <<H
#!/bin/sh
printf '%s %s\n' "\$TRACEPARENT" "\$TASKSPOOL_TRACE_ID" >"$TRASH/env.\$TASKSPOOL_REQUEST_ID"
printf '{}\n' >"\$TASKSPOOL_RESULT_FILE"
H
cat >"$HOOKS/flaky" <<H
#!/bin/sh
# Exits 75 (retry) on its first attempt.
echo "\$TRACEPARENT" >>"$TRASH/env.\$TASKSPOOL_REQUEST_ID"
test "\$TASKSPOOL_ATTEMPT" -gt 1 || exit 75
H
chmod +x "$HOOKS/trace" "$HOOKS/flaky"

export TS_APP_ID=tester
TS_SECRET=$(ts apps add tester --codes trace,flaky) || exit 1
export TS_SECRET

mkdir -p "$TRASH/dump"
CBRECV_DUMP="$TRASH/dump" python3 "$RECV" "$TRASH/recv.port" "$TRASH/recv.log" \
    whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8= 2>>"$TRASH/recv.err" &
DAEMON_PIDS="$DAEMON_PIDS $!"
wait_for "test -f $TRASH/recv.port" 20 || { echo "Bail out! receiver did not start"; exit 1; }
RPORT=$(cat "$TRASH/recv.port")

# dumped_for ID: the number of the receiver's saved request for task ID.
dumped_for() {
	_f=$(grep -l "\"requestId\":\"$1\"" "$TRASH"/dump/*.body 2>/dev/null | head -n 1) &&
	test -n "$_f" && test -f "${_f%.body}.hdr" && basename "$_f" .body
}
# valid TP: a version-00 traceparent, ids not all zeros (W3C §3.2).
valid() {
	echo "$1" | grep -Eq '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' &&
	! echo "$1" | grep -q -- '-00000000000000000000000000000000-' &&
	! echo "$1" | grep -q -- '-0000000000000000-'
}

test_expect_success 'daemon starts; a registration for the callbacks' '
	start_daemon n1 -j 2 &&
	python3 "$API_HERE/contrib/clients/tsapi.py" register "http://127.0.0.1:$RPORT/ok" >"$TRASH/reg"
'

test_expect_success 'API submit with a traceparent header: 202 body and GET show it' '
	printf "{\"requestId\":\"tr-1\",\"taskCode\":\"trace\"}" >"$TRASH/t1.json" &&
	TS_TRACEPARENT=$TP sh "$TSAPI" submit "$TRASH/t1.json" >"$TRASH/out" &&
	test "$(jq -r .traceparent "$TRASH/out")" = "$TP" &&
	sh "$TSAPI" wait tr-1 30 >"$TRASH/get" &&
	test "$(jq -r .status "$TRASH/get")" = SUCCESS &&
	test "$(jq -r .traceparent "$TRASH/get")" = "$TP" &&
	test "$(jq -r .traceparent "$SPOOL/results/tr-1.json")" = "$TP"
'

test_expect_success 'the hook got a child: same trace-id, another parent-id; the attempt records it' '
	read HTP HTID <"$TRASH/env.tr-1" &&
	valid "$HTP" && test "$HTID" = $TID &&
	test "$(echo "$HTP" | cut -d- -f2)" = $TID &&
	test "$(echo "$HTP" | cut -d- -f3)" != 00f067aa0ba902b7 &&
	test "$(echo "$HTP" | cut -d- -f4)" = 01 &&
	test "$(jq -r ".attempts[0].traceparent" "$SPOOL/results/tr-1.json")" = "$HTP"
'

test_expect_success 'the log lines of the attempt start and end say trace=<trace-id>' '
	grep "event=task.running" "$TRASH/log.n1" | grep "requestId=tr-1" | grep -q "trace=$TID" &&
	grep "event=task.success" "$TRASH/log.n1" | grep "requestId=tr-1" | grep -q "trace=$TID"
'

test_expect_success 'the callback: a traceparent header of the same trace, data.traceparent in the signed body' '
	wait_for "dumped_for tr-1 >/dev/null" 30 &&
	n=$(dumped_for tr-1) &&
	CTP=$(jq -r .traceparent "$TRASH/dump/$n.hdr") &&
	valid "$CTP" && test "$(echo "$CTP" | cut -d- -f2)" = $TID &&
	test "$(echo "$CTP" | cut -d- -f3)" != 00f067aa0ba902b7 &&
	test "$(jq -r .data.traceparent "$TRASH/dump/$n.body")" = "$TP"
'

test_expect_success 'an invalid header is ignored (a new trace); an invalid member is 422 naming it' '
	printf "{\"requestId\":\"tr-2\",\"taskCode\":\"trace\"}" >"$TRASH/t2.json" &&
	TS_TRACEPARENT="00-$(echo $TID | tr a-f A-F)-00f067aa0ba902b7-01" sh "$TSAPI" submit "$TRASH/t2.json" >"$TRASH/out" &&
	NTP=$(jq -r .traceparent "$TRASH/out") && valid "$NTP" &&
	test "$(echo "$NTP" | cut -d- -f2)" != $TID &&
	printf "{\"requestId\":\"tr-3\",\"taskCode\":\"trace\",\"traceparent\":\"ff-$TID-00f067aa0ba902b7-01\"}" >"$TRASH/t3.json" &&
	rc=0 && sh "$TSAPI" submit "$TRASH/t3.json" >"$TRASH/out" || rc=$? &&
	test $rc = 1 &&
	test "$(jq -r .code "$TRASH/out")" = VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/out")" = traceparent &&
	jq -r ".errors[0].reason" "$TRASH/out" | grep -q "version ff is invalid" &&
	test ! -e "$SPOOL/incoming/tr-3.json"
'

test_expect_success 'the body member wins over the header' '
	B="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00" &&
	printf "{\"requestId\":\"tr-4\",\"taskCode\":\"trace\",\"traceparent\":\"$B\"}" >"$TRASH/t4.json" &&
	TS_TRACEPARENT=$TP sh "$TSAPI" submit "$TRASH/t4.json" >"$TRASH/out" &&
	test "$(jq -r .traceparent "$TRASH/out")" = "$B" &&
	wait_terminal tr-4 &&
	read HTP HTID <"$TRASH/env.tr-4" &&
	test "$HTID" = 0af7651916cd43dd8448eb211c80319c &&
	test "$(echo "$HTP" | cut -d- -f4)" = 00
'

test_expect_success 'a replay with another traceparent header is the same request and keeps the first value' '
	TS_VERBOSE=1 TS_TRACEPARENT="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" \
	    sh "$TSAPI" submit "$TRASH/t1.json" >"$TRASH/out" 2>"$TRASH/hdr" &&
	grep -qi "^Idempotent-Replayed: true" "$TRASH/hdr" &&
	sh "$TSAPI" get tr-1 >"$TRASH/get" &&
	test "$(jq -r .traceparent "$TRASH/get")" = "$TP"
'

test_expect_success 'a retried task: each attempt its own span of the one trace' '
	printf "{\"requestId\":\"tr-r\",\"taskCode\":\"flaky\",\"maxRetries\":1}" >"$TRASH/tr.json" &&
	TS_TRACEPARENT=$TP sh "$TSAPI" submit "$TRASH/tr.json" >"$TRASH/out" &&
	sh "$TSAPI" wait tr-r 60 >"$TRASH/get" &&
	R="$SPOOL/results/tr-r.json" &&
	A1=$(jq -r ".attempts[0].traceparent" "$R") && A2=$(jq -r ".attempts[1].traceparent" "$R") &&
	valid "$A1" && valid "$A2" && test "$A1" != "$A2" &&
	test "$(echo "$A1" | cut -d- -f2)" = $TID && test "$(echo "$A2" | cut -d- -f2)" = $TID &&
	test "$(sed -n 1p "$TRASH/env.tr-r")" = "$A1" && test "$(sed -n 2p "$TRASH/env.tr-r")" = "$A2"
'

test_expect_success 'jobs: a fire and a run-now each start a new trace' '
	printf "{\"jobCode\":\"tj\",\"taskCode\":\"trace\",\"cron\":\"* * * * * ?\",\"timezone\":\"UTC\"}" >"$TRASH/tj.json" &&
	ts jobs add "$TRASH/tj.json" >/dev/null &&
	wait_for "ls \"$SPOOL/done\" | grep -q \"^tj\\.\"" 20 &&
	ts jobs remove tj >/dev/null &&
	F=$(ls "$SPOOL/done" | grep "^tj\\." | head -n 1) &&
	valid "$(jq -r .traceparent "$SPOOL/done/$F")" &&
	printf "{\"jobCode\":\"tk\",\"taskCode\":\"trace\",\"cron\":\"0 0 0 1 1 ?\",\"timezone\":\"UTC\"}" >"$TRASH/tk.json" &&
	ts jobs add "$TRASH/tk.json" >/dev/null &&
	N=$(TRACEPARENT=$TP ts jobs run-now tk) &&
	wait_terminal "$N" &&
	test "$(jq -r .traceparent "$SPOOL/results/$N.json")" = "$TP" &&
	ts jobs remove tk >/dev/null
'

test_expect_success 'CLI: --traceparent, TRACEPARENT from the environment, none: a fresh trace' '
	ts submit --code trace --id tr-5 --traceparent "$TP" >/dev/null &&
	TRACEPARENT="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" ts submit --code trace --id tr-6 >/dev/null &&
	TRACEPARENT=garbage ts submit --code trace --id tr-7 >/dev/null &&
	wait_terminal tr-5 && wait_terminal tr-6 && wait_terminal tr-7 &&
	test "$(ts --json status tr-5 | jq -r .traceparent)" = "$TP" &&
	read HTP HTID <"$TRASH/env.tr-5" && test "$HTID" = $TID &&
	read HTP HTID <"$TRASH/env.tr-6" && test "$HTID" = 0af7651916cd43dd8448eb211c80319c &&
	T7=$(ts --json status tr-7 | jq -r .traceparent) && valid "$T7" &&
	read HTP HTID <"$TRASH/env.tr-7" && test "$(echo "$T7" | cut -d- -f2)" = "$HTID"
'

test_expect_success 'CLI: an invalid --traceparent is 64 with the reason; a task file member that differs is 64' '
	rc=0 && ts submit --code trace --id tr-8 --traceparent "ff-$TID-00f067aa0ba902b7-01" 2>"$TRASH/err" || rc=$? &&
	test $rc = 64 && grep -q "version ff is invalid" "$TRASH/err" &&
	printf "{\"requestId\":\"tr-9\",\"taskCode\":\"trace\",\"traceparent\":\"$TP\"}" >"$TRASH/t9.json" &&
	rc=0 && ts submit "$TRASH/t9.json" --traceparent "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" 2>"$TRASH/err" || rc=$? &&
	test $rc = 64 && grep -q "differs" "$TRASH/err" &&
	test "$(state_of tr-8)" = "" && test "$(state_of tr-9)" = ""
'

test_expect_success 'a task file with an invalid traceparent goes to corrupt/ naming the member' '
	drop tr-10.json "{\"taskCode\":\"trace\",\"traceparent\":\"00-$TID-0000000000000000-01\"}" &&
	wait_for "test -s \"$SPOOL/corrupt/tr-10.json.reason\"" &&
	grep -q "^traceparent: must be a W3C traceparent: parent-id must not be all zeros" "$SPOOL/corrupt/tr-10.json.reason" &&
	stop_daemon n1
'

redis_setup

test_expect_success 'cluster: two nodes; the API header and the CLI flag reach the hook; status --json from the index shows it' '
	start_daemon c1 -j 2 && start_daemon c2 -j 2 &&
	printf "{\"requestId\":\"tc-1\",\"taskCode\":\"trace\"}" >"$TRASH/c1.json" &&
	TS_TRACEPARENT=$TP sh "$TSAPI" submit "$TRASH/c1.json" >"$TRASH/out" &&
	ts submit --code trace --id tc-2 --traceparent "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" >/dev/null &&
	wait_terminal tc-1 && wait_terminal tc-2 &&
	read HTP HTID <"$TRASH/env.tc-1" && test "$HTID" = $TID &&
	test "$(echo "$HTP" | cut -d- -f3)" != 00f067aa0ba902b7 &&
	read HTP HTID <"$TRASH/env.tc-2" && test "$HTID" = 0af7651916cd43dd8448eb211c80319c &&
	wait_for "ts --json status tc-1 | jq -e \".source == \\\"index\\\"\" >/dev/null" 10 &&
	test "$(ts --json status tc-1 | jq -r .traceparent)" = "$TP" &&
	test "$(ts --json status tc-2 | jq -r .traceparent)" = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" &&
	stop_daemon c1 && stop_daemon c2
'

test_done
