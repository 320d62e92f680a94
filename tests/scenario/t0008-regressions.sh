#!/bin/sh
# Regressions found by adversarial runs: a SIGHUP that changes tail_bytes
# while a hook writes (the tail ring kept its old size: heap overflow), and
# running out of file descriptors (start failures were final HOOK_ERRORs);
# descriptors back to their baseline after every kind of work (B39).
. "$(dirname "$0")/test-lib.sh"

cat >"$HOOKS/chatty" <<'H'
#!/bin/sh
sleep 1
head -c 300000 /dev/zero | tr '\0' y
sleep 0.5
H
chmod +x "$HOOKS/chatty"

test_expect_success 'daemon starts' 'start_daemon n1 -j 2'

test_expect_success 'SIGHUP raising tail_bytes while a hook writes: no crash, old cap kept' '
	pid=$(daemon_pid n1) &&
	ts submit --code chatty --id hup-up &&
	wait_for "test \"\$(state_of hup-up)\" = active" &&
	echo "tail_bytes = 1048576" >>"$CONF" &&
	kill -HUP "$pid" &&
	wait_terminal hup-up 20 &&
	kill -0 "$pid" &&
	test "$(jq -r .status "$SPOOL/results/hup-up.json")" = SUCCESS &&
	test "$(jq -r .stdoutTail "$SPOOL/results/hup-up.json" | wc -c)" -le 4097
'

test_expect_success 'SIGHUP lowering tail_bytes while a hook writes: no crash' '
	pid=$(daemon_pid n1) &&
	ts submit --code chatty --id hup-down &&
	wait_for "test \"\$(state_of hup-down)\" = active" &&
	echo "tail_bytes = 100" >>"$CONF" &&
	kill -HUP "$pid" &&
	wait_terminal hup-down 20 &&
	kill -0 "$pid" &&
	test "$(jq -r .status "$SPOOL/results/hup-down.json")" = SUCCESS
'

test_expect_success 'a task submitted after the reload gets the new, smaller tail' '
	ts submit --code chatty --id hup-after --wait &&
	test "$(jq -r .stdoutTail "$SPOOL/results/hup-after.json" | tr -d "\n" | wc -c)" -le 100
'

test_expect_success 'stop the first daemon' 'stop_daemon n1'

# With 8 slots and only a few descriptors more than the idle daemon
# holds, some hooks cannot be started (EMFILE): those attempts must be
# retried, never end the task.  The idle count is measured first (it
# grows with features: spool directories, work directories, threads).
test_expect_success 'measure the descriptors of an idle daemon with 8 slots' '
	start_daemon fd0 -j 8 &&
	sleep 0.5 &&
	idle=$(ls /proc/$(daemon_pid fd0)/fd | wc -l) &&
	echo "idle daemon: $idle descriptors" &&
	test "$idle" -gt 10 &&
	echo "$idle" >"$TRASH/idle.fds" &&
	stop_daemon fd0
'

test_expect_success 'out of descriptors: every task still succeeds, none HOOK_ERROR' '
	lim=$(( $(cat "$TRASH/idle.fds") + 10 )) &&
	echo "ulimit -n $lim" &&
	rm -f "$SPOOL/state/heartbeat.fd1" &&
	( ulimit -n "$lim"; exec "$TSD" -d -c "$CONF" -i fd1 -j 8 -o max_retries=20 ) \
	    >>"$TRASH/log.fd1" 2>&1 &
	echo $! >"$TRASH/pid.fd1" && DAEMON_PIDS="$DAEMON_PIDS $!" &&
	DAEMONS="$DAEMONS fd1" &&
	wait_for "test -f $SPOOL/state/heartbeat.fd1" &&
	for k in $(seq 1 30); do
		drop "fd$k.json" "{\"requestId\":\"fd$k\",\"taskCode\":\"probe\",\"executeParams\":{\"sleep_ms\":1500}}" || return 1
	done &&
	for k in $(seq 1 30); do wait_terminal "fd$k" 60 || return 1; done &&
	test "$(ls "$SPOOL/done" | grep -c "^fd[0-9]*\.json$")" = 30 &&
	! grep -l HOOK_ERROR "$SPOOL"/results/fd*.json &&
	# the limit did bite: some hook starts met EMFILE and were handed back
	grep -q "cannot start hook now (Too many open files)" "$TRASH/log.fd1" &&
	kill -0 "$(daemon_pid fd1)"
'

test_expect_success 'it stops cleanly' 'stop_daemon fd1'

# B39: descriptors must return to where they were after every kind of
# work: hooks, timeouts (process groups killed), malformed files
# (quarantined), callbacks whose receiver refuses the connection (three
# tries each).  A daemon with `ulimit -n 256`; the baseline is taken once
# one callback has been delivered (the sender opens its directories and
# its curl multi handle on first use).
fds_of() { ls "/proc/$(daemon_pid "$1")/fd" | wc -l; }
test_expect_success 'B39: after 100 tasks, 10 timeouts, 20 bad files, 20 refused callbacks: descriptors back to the baseline' '
	rm -f "$SPOOL/state/heartbeat.fd2" &&
	( ulimit -n 256; exec "$TSD" -d -c "$CONF" -i fd2 -j 8 -o callback_allow_http=1 \
	    -o callback_allow_cidrs=127.0.0.0/8 -o callback_allowed_ports= \
	    -o callback_delays_ms=100,100 -o callback_jitter_pct=0 \
	    -o callback_secret=whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8= ) >>"$TRASH/log.fd2" 2>&1 &
	echo $! >"$TRASH/pid.fd2" && DAEMON_PIDS="$DAEMON_PIDS $!" &&
	DAEMONS="$DAEMONS fd2" &&
	wait_for "test -f $SPOOL/state/heartbeat.fd2" &&
	drop cb0.json "{\"requestId\":\"cb0\",\"taskCode\":\"probe\",\"callbackUrl\":\"http://127.0.0.1:9/x\"}" &&
	wait_for "test -e $SPOOL/outbox/callbacks/failed/cb0.json" 30 &&
	sleep 1 && before=$(fds_of fd2) &&
	for k in $(seq 1 100); do
		drop "ok$k.json" "{\"requestId\":\"ok$k\",\"taskCode\":\"probe\"}" || return 1
	done &&
	for k in $(seq 1 10); do
		drop "to$k.json" "{\"requestId\":\"to$k\",\"taskCode\":\"probe\",\"timeoutSec\":1,\"maxRetries\":0,\"executeParams\":{\"sleep_ms\":60000}}" || return 1
	done &&
	for k in $(seq 1 20); do
		drop "bad$k.json" "{" || return 1
		drop "cb$k.json" "{\"requestId\":\"cb$k\",\"taskCode\":\"probe\",\"callbackUrl\":\"http://127.0.0.1:9/x\"}" || return 1
	done &&
	for k in $(seq 1 100); do wait_terminal "ok$k" 60 || return 1; done &&
	for k in $(seq 1 10); do wait_terminal "to$k" 60 || return 1; done &&
	for k in $(seq 1 20); do wait_terminal "cb$k" 60 || return 1; done &&
	wait_for "test \$(ls $SPOOL/corrupt | grep -c \"^bad[0-9]*\.json\$\") = 20" 30 &&
	# every delivery ran out of tries (connection refused three times)
	wait_for "test \$(ls $SPOOL/outbox/callbacks/failed 2>/dev/null | grep -c \"^cb[0-9]*\.json\$\") = 21" 60 &&
	# (the first ones connect and are refused; then the circuit
	# breaker of the endpoint opens: the rest fail without connecting)
	jq -e ".lastError == \"CONNECT_FAILED\"" "$SPOOL/outbox/callbacks/failed/cb0.json" &&
	jq -e ".status == \"CALLBACK_FAILED\" and .attempts == 3" "$SPOOL/outbox/callbacks/failed/cb1.json" &&
	test "$(jq -r .attempts[0].outcome "$SPOOL/results/to1.json")" = TIMEOUT &&
	sleep 2 && after=$(fds_of fd2) &&
	echo "descriptors of fd2: $before before, $after after" &&
	test "$after" -le $((before + 5)) &&
	! grep -l HOOK_ERROR "$SPOOL"/results/ok*.json "$SPOOL"/results/cb*.json &&
	kill -0 "$(daemon_pid fd2)" &&
	! grep -q "Too many open files" "$TRASH/log.fd2"
'

test_expect_success 'fd2 stops cleanly' 'stop_daemon fd2'

# A forced stop (SIGTERM twice: drain, then stop the hooks) is not the
# hook's fault: the attempt must not end the task as FAILED (with
# maxRetries 0 that would be final).  The task goes back to incoming/
# with no attempt used, and the next start runs it.
test_expect_success 'a forced stop is not charged to the hook: back to incoming/, run at the next start' '
	start_daemon fs1 &&
	drop forced.json "{\"requestId\":\"forced\",\"taskCode\":\"probe\",\"maxRetries\":0,\"executeParams\":{\"sleep_ms\":3000}}" &&
	wait_for "test \"\$(state_of forced)\" = active" &&
	pid=$(daemon_pid fs1) &&
	kill -TERM "$pid" && sleep 0.3 && kill -TERM "$pid" &&
	wait_for "! kill -0 $pid 2>/dev/null" &&
	test "$(state_of forced)" = incoming &&
	test ! -e "$SPOOL/results/forced.json" &&
	test "$(jq ".attempts | length" "$SPOOL/incoming/forced.json")" = 0 &&
	grep -q "forced: attempt 1 stopped with the daemon; back to incoming/" "$TRASH/log.fs1" &&
	start_daemon fs1 &&
	wait_terminal forced 30 &&
	test "$(state_of forced)" = done &&
	jq -r ".attempts[] | .outcome" "$SPOOL/results/forced.json" >"$TRASH/forced.outcomes" &&
	cat "$TRASH/forced.outcomes" &&
	echo SUCCESS | cmp - "$TRASH/forced.outcomes" &&
	stop_daemon fs1
'

test_done
