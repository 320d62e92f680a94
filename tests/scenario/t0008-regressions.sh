#!/bin/sh
# Regressions found by adversarial runs: a SIGHUP that changes tail_bytes
# while a hook writes (the tail ring kept its old size: heap overflow), and
# running out of file descriptors (start failures were final HOOK_ERRORs).
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

test_done
