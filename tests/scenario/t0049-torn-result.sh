#!/bin/sh
# A torn result file (issue 11 item 5): results/<id>.json cut short (a
# crash on a file system that does not order writes, or a hand edit) is
# a missing result, never the answer:
#  - `taskspool result` and `taskspool status` exit 65 with a message
#    naming the file; nothing of the broken JSON on stdout;
#  - after a daemon restart (the leader's repair pass) the result is
#    valid again: the original status, attempt count and attempts'
#    nodes and times, the hook's result; the damaged copy is kept as
#    corrupt/<id>.result.torn with a .reason, and nothing else is in
#    corrupt/;
#  - the callback of a task is delivered once: not again after the
#    rebuild when it was delivered before, and made when it was lost;
#  - a task in active/ whose result is torn (a crash before its
#    conclusion) is run again (a lost attempt, then SUCCESS);
#  - a torn result beside a task in incoming/ does not send that task to
#    corrupt/: it runs.
. "$(dirname "$0")/test-lib.sh"

RECV="$(dirname "$0")/../tools/cbrecv.py"
SECRET=whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=
local_callbacks 300,300,300,300 "$SECRET"
cat >"$HOOKS/res" <<'HOOK'
#!/bin/sh
echo "out of $TASKSPOOL_REQUEST_ID"
printf '{"pages":%s}' "$TASKSPOOL_ATTEMPT" >"$TASKSPOOL_RESULT_FILE"
HOOK
chmod +x "$HOOKS/res"

python3 "$RECV" "$TRASH/recv.port" "$TRASH/recv.log" whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8= 2>>"$TRASH/recv.err" &
DAEMON_PIDS="$DAEMON_PIDS $!"
wait_for "test -f $TRASH/recv.port" 20 || { echo "Bail out! no receiver"; exit 1; }
URL="http://127.0.0.1:$(cat "$TRASH/recv.port")/ok"
arrivals() { jq -r "select(.path != null and .sigOk) | .body | fromjson | .data.requestId" "$TRASH/recv.log" 2>/dev/null | grep -c "^$1\$"; }

# tear ID: cut results/ID.json to half its size (in place, as a crash
# would leave it), keeping the original as $TRASH/ID.orig.
tear() {
	cp "$SPOOL/results/$1.json" "$TRASH/$1.orig" &&
	_n=$(( $(wc -c <"$TRASH/$1.orig") / 2 )) &&
	head -c "$_n" "$TRASH/$1.orig" >"$TRASH/$1.half" &&
	cat "$TRASH/$1.half" >"$SPOOL/results/$1.json"
}
# same ID: the rebuilt result has the original's status, attempt count,
# attempts' node/attempt/times/outcome and the hook's result.
same() {
	_q='{status, attempt, node, startedAt, finishedAt, result, attempts: [.attempts[] | {attempt, node, startedAt, finishedAt, outcome}]}'
	jq -S "$_q" "$TRASH/$1.orig" >"$TRASH/$1.want" &&
	jq -S "$_q" "$SPOOL/results/$1.json" >"$TRASH/$1.got" &&
	diff "$TRASH/$1.want" "$TRASH/$1.got"
}

test_expect_success 'three tasks finish; two with a callback, delivered' '
	start_daemon n1 &&
	drop t1.json "{\"requestId\":\"t1\",\"taskCode\":\"res\",\"callbackUrl\":\"$URL\"}" &&
	drop t2.json "{\"requestId\":\"t2\",\"taskCode\":\"res\",\"callbackUrl\":\"$URL\"}" &&
	drop t3.json "{\"requestId\":\"t3\",\"taskCode\":\"res\",\"maxRetries\":2}" &&
	wait_terminal t1 && wait_terminal t2 && wait_terminal t3 &&
	wait_for "test \$(arrivals t1) = 1 && test \$(arrivals t2) = 1" 30 &&
	test "$(state_of t1)" = done
'

test_expect_success 'a torn result: result and status exit 65 naming the file, print no JSON' '
	tear t1 && tear t2 && tear t3 &&
	! jq . "$SPOOL/results/t1.json" >/dev/null 2>&1 &&
	{ ts result t1 >"$TRASH/r.out" 2>"$TRASH/r.err"; rc=$?; } ;
	cat "$TRASH/r.err" && test "$rc" = 65 &&
	test ! -s "$TRASH/r.out" &&
	grep -F "$SPOOL/results/t1.json is damaged" "$TRASH/r.err" &&
	{ ts status t1 >"$TRASH/s.out" 2>"$TRASH/s.err"; rc=$?; } ;
	cat "$TRASH/s.out" "$TRASH/s.err" && test "$rc" = 65 &&
	test "$(cat "$TRASH/s.out")" = "t1 SUCCESS (result damaged)" &&
	grep -F "damaged" "$TRASH/s.err" &&
	ts list --state SUCCESS | grep -E "^SUCCESS +t1 +res +\(result-damaged\)\$"
'

test_expect_success 'the delivery of t2 lost with the crash (removed by hand)' '
	rm "$SPOOL"/outbox/callbacks/delivered/t2.json &&
	stop_daemon n1
'

test_expect_success 'after a restart: the results are valid, with the original status and attempts' '
	start_daemon n1 &&
	wait_for "ts result t1 >/dev/null 2>&1 && ts result t2 >/dev/null 2>&1 && ts result t3 >/dev/null 2>&1" 20 &&
	same t1 && same t2 && same t3 &&
	ts status t1 && test "$(ts status t1)" = "t1 SUCCESS" &&
	grep -q "t1: results/t1.json was not valid JSON" "$TRASH/log.n1"
'

test_expect_success 'the damaged copies are kept in corrupt/ with a reason, nothing else' '
	ls "$SPOOL/corrupt" >"$TRASH/corrupt.ls" && cat "$TRASH/corrupt.ls" &&
	test "$(tr "\n" " " <"$TRASH/corrupt.ls")" = "t1.result.torn t1.result.torn.reason t2.result.torn t2.result.torn.reason t3.result.torn t3.result.torn.reason " &&
	cmp "$SPOOL/corrupt/t1.result.torn" "$TRASH/t1.half" &&
	grep -q "^results/t1.json: not valid JSON" "$SPOOL/corrupt/t1.result.torn.reason"
'

test_expect_success 'callbacks: t1 not delivered again, the lost delivery of t2 made' '
	wait_for "test \$(arrivals t2) = 2" 30 &&
	sleep 1 &&
	test "$(arrivals t1)" = 1 && test "$(arrivals t2)" = 2
'

test_expect_success 'an unfinished task whose result is torn (crash before its conclusion) is run again' '
	stop_daemon n1 &&
	mkdir -p "$SPOOL/active/n1" &&
	printf "{\"requestId\":\"t4\",\"taskCode\":\"res\",\"maxRetries\":2}" >"$SPOOL/active/n1/t4.json" &&
	head -c 300 "$SPOOL/results/t3.json" | sed "s/t3/t4/g" >"$SPOOL/results/t4.json" &&
	start_daemon n1 &&
	wait_terminal t4 20 && test "$(state_of t4)" = done &&
	ts result t4 >"$TRASH/t4.json" &&
	test "$(jq -r "[.attempts[].outcome] | join(\",\")" "$TRASH/t4.json")" = "LOST,SUCCESS" &&
	test -f "$SPOOL/corrupt/t4.result.torn" &&
	test ! -e "$SPOOL/corrupt/t4.json"
'

test_expect_success 'a torn result beside a task of incoming/ does not send it to corrupt/' '
	printf "{\"status\":\"SUCC" >"$SPOOL/results/t5.json" &&
	drop t5.json "{\"requestId\":\"t5\",\"taskCode\":\"res\"}" &&
	wait_terminal t5 20 && test "$(state_of t5)" = done &&
	ts result t5 | jq -e ".status == \"SUCCESS\" and .attempt == 1" &&
	test ! -e "$SPOOL/corrupt/t5.json" &&
	test -f "$SPOOL/corrupt/t5.result.torn"
'

test_expect_success 'daemon stops' 'stop_daemon n1'

test_done
