#!/bin/sh
# systemd readiness (issue 13 item 3), against a stand-in notification
# socket (tools/notifyrecv.py) as sd_notify(3) describes it: READY=1 with
# STATUS= and MAINPID= once the daemon has its spool, locks and
# coordination; WATCHDOG=1 at least every half of WATCHDOG_USEC; SIGHUP
# → RELOADING=1 (with MONOTONIC_USEC) then READY=1; SIGTERM → STOPPING=1
# with the number of hooks it drains; log_target = journal sends native
# journal entries with REQUEST_ID, TASK_CODE, NODE and ATTEMPT (decoded by
# tools/journalrecv.py), stderr when no journal listens; WATCHDOG_PID of another process
# turns the watchdog off; an abstract "@name" socket works too; and the
# shipped unit is Type=notify with WatchdogSec= and
# RestartPreventExitStatus=64 78.
. "$(dirname "$0")/test-lib.sh"

RECV="$(dirname "$0")/../tools/notifyrecv.py"
JRECV="$(dirname "$0")/../tools/journalrecv.py"
N="$TRASH/notify.out"
recv() {	# recv SOCKET: start the stand-in, wait until it is bound
	python3 "$RECV" "$1" "$N" & echo $! >"$TRASH/recv.pid"
	wait_for "grep -q BOUND \"$N\""
}
jrecv() {	# jrecv OUT: the stand-in journal on $TRASH/journal.sock
	python3 "$JRECV" "$TRASH/journal.sock" "$1" & echo $! >"$TRASH/jrecv.pid"
	wait_for "grep -q BOUND \"$1\""
}
stop_recv() { kill "$(cat "$TRASH/recv.pid" 2>/dev/null)" 2>/dev/null; :; }
trap 'stop_recv; kill "$(cat "$TRASH/jrecv.pid" 2>/dev/null)" "$(cat "$TRASH/deaf.pid" 2>/dev/null)" 2>/dev/null; cleanup' EXIT
count() { grep -c "$1" "$N"; }

test_expect_success 'READY=1 once started, with STATUS= and MAINPID=' '
	recv "$TRASH/notify.sock" &&
	export NOTIFY_SOCKET="$TRASH/notify.sock" WATCHDOG_USEC=400000 &&
	start_daemon n1 && unset NOTIFY_SOCKET WATCHDOG_USEC &&
	wait_for "grep -q READY=1 \"$N\"" &&
	pid=$(daemon_pid n1) &&
	grep -q "^READY=1|STATUS=node n1: .* slot(s), file coordination|MAINPID=$pid$" "$N" &&
	grep -q "node n1 started" "$TRASH/log.n1"
'

test_expect_success 'WATCHDOG=1 at least every half of WATCHDOG_USEC (0.4 s)' '
	a=$(count "^WATCHDOG=1$") && sleep 2 && b=$(count "^WATCHDOG=1$") &&
	echo "WATCHDOG=1 in 2 s: $((b - a))" &&
	test $((b - a)) -ge 4
'

test_expect_success 'SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1' '
	kill -HUP "$(daemon_pid n1)" &&
	wait_for "grep -q RELOADING=1 \"$N\"" &&
	grep -q "^RELOADING=1|MONOTONIC_USEC=[0-9][0-9]*$" "$N" &&
	wait_for "test \$(grep -c ^READY=1 \"$N\") = 2" &&
	test "$(grep -n "^RELOADING=1\|^READY=1" "$N" | tail -2 | cut -d: -f2 | cut -c1-8 | tr "\n" " ")" = "RELOADIN READY=1| "
'

test_expect_success 'SIGTERM: STOPPING=1 naming the hooks it drains' '
	cat >"$HOOKS/hold" <<H &&
#!/bin/sh
touch "$TRASH/held"; sleep 1
H
	chmod +x "$HOOKS/hold" &&
	ts submit --code hold --id h1 >/dev/null &&
	wait_for "test -f \"$TRASH/held\"" &&
	kill -TERM "$(daemon_pid n1)" &&
	wait_for "grep -q STOPPING=1 \"$N\"" &&
	grep -q "^STOPPING=1|STATUS=draining: waiting for 1 running hook(s)$" "$N" &&
	wait_for "grep -q \"node n1 stopped\" \"$TRASH/log.n1\"" &&
	wait_terminal h1 && test "$(state_of h1)" = done &&
	test "$(jq -r .status "$SPOOL/results/h1.json")" = SUCCESS
'

test_expect_success 'WATCHDOG_PID of another process: no WATCHDOG=1; an abstract socket' '
	stop_recv && : >"$N" &&
	recv "@taskspool-t0018-$$" &&
	export NOTIFY_SOCKET="@taskspool-t0018-$$" WATCHDOG_USEC=200000 WATCHDOG_PID=1 &&
	start_daemon n2 && unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID &&
	wait_for "grep -q READY=1 \"$N\"" && sleep 1 &&
	test "$(count "^WATCHDOG=1$")" = 0
'

test_expect_success 'log_target = journal: native entries with the task fields' '
	stop_daemon n2 && J="$TRASH/journal.out" && jrecv "$J" &&
	TASKSPOOL_JOURNAL_SOCKET="$TRASH/journal.sock" start_daemon n3 \
	    -o log_target=journal &&
	printf "#!/bin/sh\necho hi\n" >"$HOOKS/jhook" && chmod +x "$HOOKS/jhook" &&
	ts submit --code jhook --id j1 >/dev/null && wait_terminal j1 &&
	wait_for "grep -q task.success \"$J\"" &&
	! grep -q BAD "$J" &&
	jq -se "any(.[]; .EVENT == \"task.success\" and .REQUEST_ID == \"j1\" and
	    .TASK_CODE == \"jhook\" and .NODE == \"n3\" and .ATTEMPT == \"1\" and
	    .PRIORITY == \"6\" and .SYSLOG_IDENTIFIER == \"taskspoold\" and
	    (.MESSAGE | length > 0))" "$J" >/dev/null &&
	jq -se "any(.[]; (.MESSAGE // \"\") | test(\"node n3 started\"))" "$J" >/dev/null &&
	! grep -q "node n3 started" "$TRASH/log.n3"
'

test_expect_success 'log_target = journal without journald: lines go to stderr' '
	kill "$(cat "$TRASH/jrecv.pid")" && stop_daemon n3 &&
	rm -f "$TRASH/journal.sock" &&
	TASKSPOOL_JOURNAL_SOCKET="$TRASH/journal.sock" start_daemon n4 \
	    -o log_target=journal &&
	grep -q "node n4 started" "$TRASH/log.n4"
'

test_expect_success 'log_target = journal, a journal that never reads: the daemon goes on, lines to stderr' '
	stop_daemon n4 &&
	python3 -c "import socket, sys, time; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); open(sys.argv[2], \"w\").close(); time.sleep(120)" \
	    "$TRASH/deaf.sock" "$TRASH/deaf.bound" & echo $! >"$TRASH/deaf.pid"
	wait_for "test -e \"$TRASH/deaf.bound\"" &&
	TASKSPOOL_JOURNAL_SOCKET="$TRASH/deaf.sock" start_daemon n5 \
	    -o log_target=journal &&
	for i in $(seq 1 30); do ts submit --code jhook --id d$i >/dev/null || return 1; done &&
	for i in $(seq 1 30); do wait_terminal d$i 30 || return 1; done &&
	test "$(ls "$SPOOL/done" | grep -c "^d[0-9]*\.json$")" = 30 &&
	grep -q "d30: SUCCESS" "$TRASH/log.n5" &&
	kill "$(cat "$TRASH/deaf.pid")"
'

test_expect_success 'the shipped units: Type=notify, WatchdogSec=, RestartPreventExitStatus=64 78' '
	for u in taskspoold.service taskspoold@.service; do
		f="$(dirname "$0")/../../contrib/systemd/$u" &&
		grep -q "^Type=notify$" "$f" && grep -q "^NotifyAccess=main$" "$f" &&
		grep -q "^WatchdogSec=[1-9]" "$f" &&
		grep -q "^RestartPreventExitStatus=64 78$" "$f" || { echo "$u"; return 1; }
	done
'

test_done
