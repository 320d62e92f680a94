#!/bin/sh
# Batches (issue 14 item 2; Sidekiq Pro's batches), in embedded mode and
# then in cluster mode (Redis):
#  - a batch of 6 tasks (2 failing) submitted over time: all terminal but
#    open → no completion; closed → the onComplete task runs exactly once
#    with the summary on stdin ({batchId, total 6, counts FAILED 2 SUCCESS
#    4, failed: the 2 ids sorted}); `batch status` text and --json;
#  - a closed batch refuses a new member (65, nothing published);
#  - the batch's callback: one signed batch.completed delivery;
#  - the HTTP API: POST /api/tasks with batchId, POST .../close,
#    GET /api/batches/<id> (counts, failed, completed, onCompleteRequestId),
#    404 BATCH_NOT_FOUND, 409 BATCH_CLOSED naming batchId;
#  - the leader killed -9 around completion (3 rounds): completion fired
#    once each; the crash point "onComplete task made, completed mark not
#    written" laid out by hand: the task is not made again.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

RECV="$(dirname "$0")/../tools/cbrecv.py"
CGI="$BUILD/taskspool.cgi"
CBSECRET=whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=
local_callbacks 300,300,300 "$CBSECRET"
echo "fsync = 0" >>"$CONF"

# The onComplete hook: one RUN line per run, its stdin kept per run.
cat >"$HOOKS/report" <<H
#!/bin/sh
echo "RUN \$TASKSPOOL_REQUEST_ID" >>"$TRASH/report.runs"
cat >"$TRASH/report.\$TASKSPOOL_REQUEST_ID.\$\$"
cp "$TRASH/report.\$TASKSPOOL_REQUEST_ID.\$\$" "$TRASH/report.\$TASKSPOOL_REQUEST_ID"
H
# A member that runs until $TRASH/go.<batch> appears (at most 30 s).
cat >"$HOOKS/hold" <<H
#!/bin/sh
i=0; b=\$(tr -d '"')
while [ ! -e "$TRASH/go.\$b" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
H
chmod +x "$HOOKS/report" "$HOOKS/hold"
: >"$TRASH/report.runs"
runs() { grep -c "^RUN $1\$" "$TRASH/report.runs"; }

python3 "$RECV" "$TRASH/cb.port" "$TRASH/cb.log" "$CBSECRET" 2>>"$TRASH/cb.err" &
DAEMON_PIDS="$DAEMON_PIDS $!"
: >"$TRASH/cb.log"
wait_for "test -f $TRASH/cb.port" 20 || { echo "Bail out! no receiver"; exit 1; }

KEY=$(ts apps add tester --codes '*') || exit 1
APP=tester
KEY2=$(ts apps add other --codes '*') || exit 1

# cgi METHOD PATH [BODY]: one signed request straight to the CGI; prints
# the status; the body of the answer in $TRASH/body.
cgi() {
	printf '%s' "${3:-}" >"$TRASH/req"
	_ts=$(date +%s); _n=$(openssl rand -hex 16)
	_h=$(openssl dgst -sha256 <"$TRASH/req" | sed 's/.*= //')
	_s=$(printf 'TS1-HMAC-SHA256\n%s\n%s\n%s\n%s\n%s\n%s\n%s' "$1" "$2" \
	    "" "$APP" "$_ts" "$_n" "$_h" |
	    openssl dgst -sha256 -hmac "$KEY" | sed 's/.*= //')
	env -i PATH="$PATH" TASKSPOOL_CONFIG="$CONF" REQUEST_METHOD="$1" \
	    PATH_INFO="${2#/api}" QUERY_STRING= HTTP_X_APP_ID="$APP" \
	    HTTP_X_TIMESTAMP="$_ts" HTTP_X_NONCE="$_n" \
	    CONTENT_TYPE=application/json \
	    CONTENT_LENGTH=$(wc -c <"$TRASH/req" | tr -d " ") \
	    HTTP_X_SIGNATURE="$_s" "$CGI" <"$TRASH/req" >"$TRASH/resp" \
	    2>>"$TRASH/cgi.err"
	tr -d '\r' <"$TRASH/resp" | sed '1,/^$/d' >"$TRASH/body"
	sed -n '1s/^Status: \([0-9]*\).*/\1/p' "$TRASH/resp"
}
# leader: the node whose heartbeat says it leads ("" while none does).
leader() { ts nodes | awk '/ alive .*leader/ { print $1; exit }'; }

phase() {	# phase M: the scenario with prefix M (e embedded, c cluster)
M=$1
B=$M-b

test_expect_success "$M: 6 members over time, 2 failing; open: no completion; closed: onComplete once with the summary" '
	start_daemon ${M}1 -j 2 && start_daemon ${M}2 -j 2 &&
	ts batch open $B --on-complete report | grep -q "^$B open$" &&
	ts submit --code probe --batch $B --id $M-m1 >/dev/null &&
	ts submit --code probe --batch $B --id $M-m2 --retries 0 --params "{\"exit\":3}" >/dev/null &&
	ts submit --code probe --batch $B --id $M-m3 >/dev/null &&
	wait_terminal $M-m1 && wait_terminal $M-m2 && wait_terminal $M-m3 &&
	ts submit --code probe --batch $B --id $M-m4 >/dev/null &&
	ts submit --code probe --batch $B --id $M-m0 --retries 0 --params "{\"exit\":4}" >/dev/null &&
	ts submit --code probe --batch $B --id $M-m5 >/dev/null &&
	for i in 0 4 5; do wait_terminal $M-m$i || return 1; done &&
	sleep 1.5 && test "$(runs $B.complete)" = 0 &&
	ts batch status $B >"$TRASH/$M.st" && cat "$TRASH/$M.st" &&
	grep -q "^batch $B: open$" "$TRASH/$M.st" &&
	grep -q "^total: 6 (FAILED 2, SUCCESS 4)$" "$TRASH/$M.st" &&
	ts batch close $B | grep -q "^$B closed$" &&
	wait_for "test \"\$(runs $B.complete)\" = 1" &&
	jq -ce . "$TRASH/report.$B.complete" >"$TRASH/$M.sum" &&
	test "$(cat "$TRASH/$M.sum")" = "{\"batchId\":\"$B\",\"total\":6,\"counts\":{\"FAILED\":2,\"SUCCESS\":4},\"failed\":[\"$M-m0\",\"$M-m2\"]}" &&
	wait_terminal $B.complete &&
	ts --json batch status $B >"$TRASH/$M.json" &&
	test "$(jq -r "[.completed, .closed, .onCompleteRequestId, .onComplete, .total] | join(\" \")" "$TRASH/$M.json")" = "true true $B.complete report 6" &&
	ts batch status $B | grep -q "^onComplete: report -> $B.complete$" &&
	ts batch list | grep -q "^$B completed 6 member(s), 6 terminal, 2 failed$" &&
	sleep 2 && test "$(runs $B.complete)" = 1 &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: a closed batch refuses a new member (65), nothing published" '
	rc=0 && ts submit --code probe --batch $B --id $M-late 2>"$TRASH/$M.err" || rc=$? &&
	test $rc = 65 && grep -q "batchId: batch $B is closed" "$TRASH/$M.err" &&
	test -z "$(state_of $M-late)" && test ! -e "$SPOOL/state/batches/$B/members/$M-late" &&
	rc=0 && ts batch close $M-nobatch 2>/dev/null || rc=$? && test $rc = 66 &&
	rc=0 && ts batch status $M-nobatch 2>/dev/null || rc=$? && test $rc = 66
'

test_expect_success "$M: the batch callback: one signed batch.completed delivery" '
	ts batch open $M-cb --callback-url "http://127.0.0.1:$(cat "$TRASH/cb.port")/ok" >/dev/null &&
	ts submit --code probe --batch $M-cb --id $M-cb1 >/dev/null &&
	ts batch close $M-cb >/dev/null &&
	wait_for "grep \"batch.completed\" \"$TRASH/cb.log\" | grep -q \"$M-cb\"" 20 &&
	grep "\"body\"" "$TRASH/cb.log" | jq -c "select(.path == \"/ok\") | .body | fromjson | select(.type == \"batch.completed\") | .data" >"$TRASH/$M.cb" &&
	test "$(grep -c "\"$M-cb\"" "$TRASH/$M.cb")" = 1 &&
	grep -q "{\"batchId\":\"$M-cb\",\"total\":1,\"counts\":{\"SUCCESS\":1},\"failed\":\[\]}" "$TRASH/$M.cb" &&
	grep "\"body\"" "$TRASH/cb.log" | jq -e "select(.body | contains(\"$M-cb\")) | .sigOk" >/dev/null &&
	ts --json batch status $M-cb | jq -e ".completed and .onCompleteRequestId == null" >/dev/null
'

test_expect_success "$M: the API: submit with batchId, close, GET /api/batches; 404 and 409" '
	test "$(cgi POST /api/tasks "{\"taskCode\":\"probe\",\"requestId\":\"$M-a1\",\"batchId\":\"$M-api\"}")" = 202 &&
	test "$(cgi POST /api/tasks "{\"taskCode\":\"probe\",\"requestId\":\"$M-a2\",\"batchId\":\"$M-api\",\"executeParams\":{\"exit\":3},\"maxRetries\":0}")" = 202 &&
	wait_terminal $M-a1 && wait_terminal $M-a2 &&
	test "$(cgi GET /api/batches/$M-api)" = 200 &&
	test "$(jq -c "[.total, .counts, .failed, .closed, .completed]" "$TRASH/body")" = "[2,{\"FAILED\":1,\"SUCCESS\":1},[\"$M-a2\"],false,false]" &&
	test "$(cgi POST /api/batches/$M-api/close "{\"onComplete\":\"report\"}")" = 200 &&
	jq -e ".closed == true" "$TRASH/body" >/dev/null &&
	wait_for "test \"\$(runs $M-api.complete)\" = 1" &&
	wait_for "test \"\$(cgi GET /api/batches/$M-api)\" = 200 && jq -e .completed \"$TRASH/body\" >/dev/null" &&
	test "$(jq -r .onCompleteRequestId "$TRASH/body")" = $M-api.complete &&
	wait_terminal $M-api.complete &&
	test "$(cgi GET /api/tasks/$M-api.complete)" = 200 &&
	test "$(jq -r .status "$TRASH/body")" = SUCCESS &&
	test "$(APP=other KEY=$KEY2; cgi GET /api/tasks/$M-api.complete)" = 404 &&
	for sfx in complete onfailure onrecovery; do
		test "$(APP=other KEY=$KEY2; cgi POST /api/tasks "{\"taskCode\":\"probe\",\"requestId\":\"$M-x.$sfx\"}")" = 422 &&
		test "$(jq -r ".code, .errors[0].field" "$TRASH/body" | tr "\n" " ")" = "VALIDATION_FAILED requestId " || return 1
	done &&
	test "$(jq -c .failed "$TRASH/report.$M-api.complete")" = "[\"$M-a2\"]" &&
	test "$(cgi GET /api/batches/$M-none)" = 404 &&
	test "$(jq -r ".code, .batchId" "$TRASH/body" | tr "\n" " ")" = "BATCH_NOT_FOUND $M-none " &&
	test "$(cgi POST /api/tasks "{\"taskCode\":\"probe\",\"requestId\":\"$M-a3\",\"batchId\":\"$M-api\"}")" = 409 &&
	test "$(jq -r ".code, .batchId" "$TRASH/body" | tr "\n" " ")" = "BATCH_CLOSED $M-api " &&
	test -z "$(state_of $M-a3)" && test ! -e "$SPOOL/state/requests/$M-a3.json" &&
	test "$(cgi POST /api/batches/$M-api/close "{\"onComplete\":\"probe\"}")" = 409
'

test_expect_success "$M: a batch belongs to the AppId that made it: to other apps it is not found (404), joining it is 409" '
	test "$(APP=other KEY=$KEY2; cgi GET /api/batches/$M-api)" = 404 &&
	test "$(jq -r ".code, .batchId" "$TRASH/body" | tr "\n" " ")" = "BATCH_NOT_FOUND $M-api " &&
	test "$(jq -r .detail "$TRASH/body")" = "no batch $M-api" &&
	test "$(APP=other KEY=$KEY2; cgi POST /api/batches/$M-api/close)" = 404 &&
	ts batch open $M-cli >/dev/null &&
	test "$(cgi GET /api/batches/$M-cli)" = 404 &&
	test "$(cgi POST /api/tasks "{\"taskCode\":\"probe\",\"requestId\":\"$M-a4\",\"batchId\":\"$M-cli\"}")" = 409 &&
	test "$(jq -r ".code, .batchId" "$TRASH/body" | tr "\n" " ")" = "BATCH_ID_TAKEN $M-cli " &&
	test -z "$(state_of $M-a4)" && test ! -e "$SPOOL/state/requests/$M-a4.json" &&
	test ! -e "$SPOOL/state/batches/$M-cli/members/$M-a4" &&
	test "$(APP=other KEY=$KEY2; cgi POST /api/tasks "{\"taskCode\":\"probe\",\"requestId\":\"$M-a5\",\"batchId\":\"$M-oth\"}")" = 202 &&
	test "$(jq -r .appId "$SPOOL/state/batches/$M-oth/batch.json")" = other &&
	test "$(cgi POST /api/tasks "{\"taskCode\":\"probe\",\"requestId\":\"$M-a6\",\"batchId\":\"$M-oth\"}")" = 409 &&
	test "$(APP=other KEY=$KEY2; cgi GET /api/batches/$M-oth)" = 200 &&
	test "$(jq -r .total "$TRASH/body")" = 1
'

test_expect_success "$M: hold --batch and release --batch act on the unfinished members" '
	for i in 1 2 3; do
		ts submit --code probe --batch $M-h --id $M-h$i --delay 600000 >/dev/null || return 1
	done &&
	ts submit --code probe --batch $M-h --id $M-h4 >/dev/null &&
	wait_for "test \"\$(state_of $M-h4)\" = done" &&
	test "$(ts hold --batch $M-h | tail -n 1)" = "held 3 task(s) of batch $M-h" &&
	test "$(ls "$SPOOL/hold" | grep -c "^$M-h[123].json")" = 3 &&
	test "$(ts batch --json status $M-h | jq -r ".counts.HELD")" = 3 &&
	test "$(ts release --batch $M-h | tail -n 1)" = "released 3 task(s) of batch $M-h" &&
	test "$(ls "$SPOOL/delayed" | grep -c "^$M-h[123].json")" = 3 &&
	{ ts hold --batch $M-nosuch 2>"$TRASH/err"; test $? = 66; } &&
	grep -q "no batch $M-nosuch" "$TRASH/err" &&
	{ ts hold --batch "../x" 2>/dev/null; test $? = 64; }
'

test_expect_success "$M: the leader killed -9 around completion: completed once each" '
	for r in 1 2 3; do
		ts batch open $M-k$r --on-complete report >/dev/null &&
		for i in 1 2 3; do
			ts submit --code hold --batch $M-k$r --id $M-k$r-$i --params "\"$M-k$r\"" >/dev/null || return 1
		done &&
		ts batch close $M-k$r >/dev/null &&
		wait_for "test -n \"\$(leader)\"" 20 && L=$(leader) &&
		touch "$TRASH/go.$M-k$r" &&
		sleep "0.$((r * 3))" && kill9_daemon "$L" &&
		start_daemon "$L" -j 2 || return 1
	done &&
	for r in 1 2 3; do
		wait_for "test \"\$(runs $M-k$r.complete)\" -ge 1" 30 || { echo "round $r: no completion"; return 1; }
	done &&
	sleep 2 &&
	for r in 1 2 3; do
		test "$(runs $M-k$r.complete)" = 1 || { echo "round $r: $(runs $M-k$r.complete) runs"; return 1; }
		test "$(jq -c .counts "$TRASH/report.$M-k$r.complete")" = "{\"SUCCESS\":3}" || return 1
	done
'

test_expect_success "$M: onComplete made, completed mark lost (crash between them): not made again" '
	F="$SPOOL/state/batches/$B/batch.json" &&
	jq -c "del(.completedAt, .onCompleteRequestId)" "$F" >"$SPOOL/tmp/bj" &&
	mv "$SPOOL/tmp/bj" "$F" &&
	wait_for "jq -e .completedAt \"$F\" >/dev/null" &&
	sleep 1.5 && test "$(runs $B.complete)" = 1 &&
	test "$(ls "$SPOOL/incoming" | grep -c complete)" = 0 &&
	stop_daemon ${M}1 && stop_daemon ${M}2
'
}

phase e
redis_setup
phase c

test_done
