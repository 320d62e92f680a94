#!/bin/sh
# systemd readiness (issue 13 item 3), against a stand-in notification
# socket (tools/notifyrecv.py) as sd_notify(3) describes it: READY=1 with
# STATUS= and MAINPID= once the daemon has its spool, locks and
# coordination; WATCHDOG=1 at least every half of WATCHDOG_USEC; SIGHUP
# → RELOADING=1 (with MONOTONIC_USEC) then READY=1; SIGTERM → STOPPING=1
# with the number of hooks it drains; WATCHDOG_PID of another process
# turns the watchdog off; an abstract "@name" socket works too; and the
# shipped unit is Type=notify with WatchdogSec= and
# RestartPreventExitStatus=64 78.
. "$(dirname "$0")/test-lib.sh"

RECV="$(dirname "$0")/../tools/notifyrecv.py"
N="$TRASH/notify.out"
recv() {	# recv SOCKET: start the stand-in, wait until it is bound
	python3 "$RECV" "$1" "$N" & echo $! >"$TRASH/recv.pid"
	wait_for "grep -q BOUND \"$N\""
}
stop_recv() { kill "$(cat "$TRASH/recv.pid" 2>/dev/null)" 2>/dev/null; :; }
trap 'stop_recv; cleanup' EXIT
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

test_expect_success 'the shipped units: Type=notify, WatchdogSec=, RestartPreventExitStatus=64 78' '
	for u in taskspoold.service taskspoold@.service; do
		f="$(dirname "$0")/../../contrib/systemd/$u" &&
		grep -q "^Type=notify$" "$f" && grep -q "^NotifyAccess=main$" "$f" &&
		grep -q "^WatchdogSec=[1-9]" "$f" &&
		grep -q "^RestartPreventExitStatus=64 78$" "$f" || { echo "$u"; return 1; }
	done
'

test_done
