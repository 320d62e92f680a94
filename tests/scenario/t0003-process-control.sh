#!/bin/sh
# Process control (FIELD-FAILURES B35, B37, B38): completion is decided by
# the hook process, not by EOF on its pipes; a timeout kills the hook's
# whole process group (SIGTERM, then SIGKILL after kill_grace_ms); a hook
# killed by SIGKILL is retried up to maxRetries and then FAILED, the
# daemon staying up; no zombies pile up, even with the daemon as PID 1 of
# its own PID namespace; output beyond log_cap_bytes is dropped and said.
. "$(dirname "$0")/test-lib.sh"

# Background sleeps carry a run-unique duration so that pgrep -f finds
# only this run's processes (600.5<pid> s is still "600 s and a bit").
TOKEN=$$

cat >"$HOOKS/bgchild" <<H
#!/bin/sh
sleep 600.5$TOKEN &
echo ok
exit 0
H
cat >"$HOOKS/slowbg" <<H
#!/bin/sh
sleep 31.5$TOKEN &
sleep 30
echo survived
H
cat >"$HOOKS/stubborn" <<H
#!/bin/sh
trap '' TERM
sleep 32.5$TOKEN &
sleep 30
echo survived
H
cat >"$HOOKS/selfkill" <<'H'
#!/bin/sh
kill -9 $$
H
cat >"$HOOKS/orphan" <<'H'
#!/bin/sh
(sleep 0.2 &); exit 0
H
chmod +x "$HOOKS/bgchild" "$HOOKS/slowbg" "$HOOKS/stubborn" \
    "$HOOKS/selfkill" "$HOOKS/orphan"

# res ID JQ: evaluate JQ on results/ID.json (raw output).
res() { jq -r "$2" "$SPOOL/results/$1.json"; }

# A jq function: RFC 3339 "YYYY-MM-DDTHH:MM:SS.mmmZ" → epoch ms.
JQMS='def ms: (.[0:19] + "Z" | fromdateiso8601) * 1000 + (.[20:23] | tonumber);'

# gone PATTERN: no process's command line matches PATTERN.
gone() { ! pgrep -f "$1" >/dev/null; }

now_ms() { date +%s%3N; }

test_expect_success 'daemon starts (4 slots)' '
	start_daemon n1 -j 4 &&
	pid1=$(daemon_pid n1)
'

test_expect_success 'B35: a background grandchild holding stdout does not delay completion' '
	t0=$(now_ms) &&
	ts submit --code bgchild --id b35 --timeout 60 >/dev/null &&
	for k in 1 2 3 4 5 6 7 8 9 10; do
		ts submit --code probe --id "b35-other-$k" --params "{\"sleep_ms\": 1000}" >/dev/null || exit_loop=1
	done &&
	test -z "${exit_loop:-}" &&
	wait_terminal b35 20 &&
	t1=$(now_ms) &&
	echo "terminal after $((t1 - t0)) ms" &&
	# The grandchild keeps stdout open for 600 s and the timeout is
	# 60 s: 20 s tells "did not wait for it" apart on a loaded machine.
	test $((t1 - t0)) -le 20000 &&
	test "$(res b35 .status)" = SUCCESS &&
	test "$(res b35 .stdoutTail)" = ok &&
	test "$(res b35 "$JQMS (.finishedAt | ms) - (.createdAt | ms)")" -le 20000
'

test_expect_success 'B35: the background sleep dies with the hook group within 5 s' '
	wait_for "gone 600.5$TOKEN" 5 || { pgrep -af "600.5$TOKEN"; false; }
'

test_expect_success 'B35: the 10 concurrent ordinary tasks are unaffected' '
	ok=0 &&
	for k in 1 2 3 4 5 6 7 8 9 10; do
		wait_terminal "b35-other-$k" 20 &&
		test "$(res "b35-other-$k" .status)" = SUCCESS || ok=1
	done &&
	test $ok = 0
'

test_expect_success 'timeout: FAILED/TIMEOUT and the whole process group is gone within 3 s' '
	ts submit --code slowbg --id to1 --timeout 1 --retries 0 >/dev/null &&
	wait_for "pgrep -f 31.5$TOKEN >/dev/null" 5 &&
	wait_terminal to1 10 &&
	wait_for "gone 31.5$TOKEN" 3 &&
	test "$(state_of to1)" = failed &&
	test "$(res to1 .status)" = FAILED &&
	test "$(res to1 .failureReason.code)" = TIMEOUT &&
	test "$(res to1 ".attempts | length")" = 1 &&
	test "$(res to1 ".attempts[0].outcome")" = TIMEOUT &&
	test "$(res to1 ".attempts[0].durationMs")" -ge 950 &&
	test "$(res to1 ".attempts[0].durationMs")" -lt 10000 &&
	! grep -q survived "$SPOOL/logs/to1/1.out" 2>/dev/null
'

test_expect_success 'timeout: a hook ignoring SIGTERM dies by SIGKILL after the grace' '
	ts submit --code stubborn --id to2 --timeout 1 --retries 0 >/dev/null &&
	wait_for "pgrep -f 32.5$TOKEN >/dev/null" 5 &&
	wait_terminal to2 10 &&
	wait_for "gone 32.5$TOKEN" 3 &&
	test "$(res to2 .status)" = FAILED &&
	test "$(res to2 .failureReason.code)" = TIMEOUT &&
	test "$(res to2 ".attempts[0].outcome")" = TIMEOUT &&
	test "$(res to2 ".attempts[0].signal")" = 9 &&
	d=$(res to2 ".attempts[0].durationMs") && echo "durationMs $d" &&
	test "$d" -ge 1450 &&
	test "$d" -lt 10000 &&
	grep -q "grace over; SIGKILL" "$TRASH/log.n1"
'

test_expect_success 'B38: a hook dying by SIGKILL: exactly 4 attempts, signal 9, FAILED' '
	ts submit --code selfkill --id b38 --retries 3 >/dev/null &&
	wait_terminal b38 20 &&
	test "$(state_of b38)" = failed &&
	test "$(res b38 .status)" = FAILED &&
	test "$(res b38 ".attempts | length")" = 4 &&
	test "$(res b38 "[.attempts[] | select(.signal == 9 and .outcome == \"FAILED\")] | length")" = 4 &&
	test "$(res b38 "[.attempts[] | select(.exitCode != null)] | length")" = 0 &&
	test "$(res b38 "[.attempts[].attempt] | map(tostring) | join(\",\")")" = "1,2,3,4" &&
	res b38 .failureReason.code | grep -q SIGNAL
'

test_expect_success 'B38: the retries were spaced by the backoff (startedAt >= previous retryAt)' '
	test "$(res b38 "$JQMS [range(1; .attempts | length) as \$i |
	    select((.attempts[\$i].startedAt | ms) < (.attempts[\$i - 1].retryAt | ms))] | length")" = 0 &&
	test "$(res b38 "[.attempts[0:3][] | select(.retryAt == null)] | length")" = 0
'

test_expect_success 'B38: the daemon is still up and runs other tasks' '
	kill -0 "$pid1" &&
	test "$(grep -c "node n1 started" "$TRASH/log.n1")" = 1 &&
	ts submit --code probe --id after-b38 >/dev/null &&
	wait_terminal after-b38 10 &&
	test "$(res after-b38 .status)" = SUCCESS
'

test_expect_success 'log cap: 3 MB of output keeps 1 MiB in the log, notes the rest, tail <= 4096' '
	ts submit --code probe --id big-out --params "{\"out_bytes\": 3145728}" >/dev/null &&
	wait_terminal big-out 20 &&
	test "$(res big-out .status)" = SUCCESS &&
	test "$(stat -c %s "$SPOOL/logs/big-out/1.out")" = 1048576 &&
	res big-out ".attempts[0].reason" | grep -E "dropped" | grep -q 2097152 &&
	n=$(res big-out ".stdoutTail | length") && echo "tail $n" &&
	test "$n" -gt 0 && test "$n" -le 4096 &&
	test "$(res big-out ".stdoutTail | test(\"^x+\$\")")" = true
'

# A result file that is not a regular file is ignored and said so (a FIFO
# must not block the daemon, a symbolic link is not followed).
cat >"$HOOKS/resfifo" <<'H'
#!/bin/sh
mkfifo "$TASKSPOOL_RESULT_FILE"
H
cat >"$HOOKS/reslink" <<'H'
#!/bin/sh
echo '{"leak":true}' >"$TASKSPOOL_RESULT_FILE.target"
ln -s "$TASKSPOOL_RESULT_FILE.target" "$TASKSPOOL_RESULT_FILE"
H
chmod +x "$HOOKS/resfifo" "$HOOKS/reslink"

for kind in fifo link; do
	test_expect_success "a $kind as result file is ignored: not a regular file" '
		ts submit --code res$kind --id res-$kind >/dev/null &&
		wait_terminal res-$kind 20 &&
		test "$(res res-$kind .status)" = SUCCESS &&
		test "$(res res-$kind .result)" = null &&
		res res-$kind ".attempts[0].reason" &&
		test "$(res res-$kind ".attempts[0].reason")" = "exit 0; result file ignored: not a regular file"
	'
done

test_expect_success 'stop the first daemon' '
	stop_daemon n1 && ! kill -0 "$pid1" 2>/dev/null
'

# start_daemon_pid1 NODE [options]: the daemon as PID 1 of a new PID
# namespace (as in a container without --init): orphans of its hooks are
# re-parented to it.  pid.NODE is unshare's pid (killed by cleanup, which
# kills the namespace through --kill-child); $nspid is the daemon's pid.
start_daemon_pid1() {
	node=$1; shift
	unshare --pid --fork --kill-child "$TSD" -d -c "$CONF" -i "$node" "$@" \
	    >>"$TRASH/log.$node" 2>&1 &
	echo $! >"$TRASH/pid.$node"
	DAEMONS="$DAEMONS $node"
	wait_for "test -f \"$SPOOL/state/heartbeat.$node\"" 5 || {
		sed 's/^/# /' "$TRASH/log.$node"; return 1; }
	nspid=$(pgrep -P "$(daemon_pid "$node")" | head -n 1)
	test -n "$nspid" && grep -q "^pid=1\$" "$SPOOL/state/heartbeat.$node"
}

# sample_zombies PID OUT: until OUT.stop exists, every 50 ms append to OUT
# a line "Z-per-ps Z-per-snapshot": the number of zombie children of PID
# by `ps -o stat= --ppid PID` (which reads each process at a slightly
# different moment: with hooks lasting ~3 ms one scan spans several
# tasks), and by one snapshot of PID's children list
# (/proc/PID/task/PID/children) whose members ps then reads.  The bound
# is asserted on the snapshot count; the plain ps count is reported.
sample_zombies() {
	while [ ! -f "$2.stop" ]; do
		a=$(ps -o stat= --ppid "$1" | grep -c "^Z")
		kids=$(cat "/proc/$1/task/$1/children" 2>/dev/null | tr -s " " ",")
		kids=${kids%,}
		if [ -n "$kids" ]; then
			b=$(ps -o stat= -p "$kids" | grep -c "^Z")
		else
			b=0
		fi
		echo "$a $b" >>"$2"
		sleep 0.05
	done
}

# One slot: then at any instant the daemon has at most the running hook
# and the previous hook's killed orphan as children, so "at most 2
# zombies" is a hard bound and any excess means children are not reaped.
test_expect_success 'B37: a daemon as PID 1 of its PID namespace' '
	if unshare --pid --fork --kill-child true 2>/dev/null; then
		start_daemon_pid1 n2 -j 1 && echo "daemon pid $nspid (1 inside)"
	else
		echo "# no PID namespaces here: running as an ordinary process" &&
		start_daemon n2 -j 1 && nspid=$(daemon_pid n2)
	fi
'

test_expect_success 'B37: 300 tasks whose hooks orphan a child: at most 2 zombies at any sample' '
	for k in $(seq 1 300); do
		printf "{\"requestId\":\"z$k\",\"taskCode\":\"orphan\"}" >"$SPOOL/tmp/z$k.json"
	done &&
	: >"$TRASH/zsamples" && rm -f "$TRASH/zsamples.stop" &&
	{ sample_zombies "$nspid" "$TRASH/zsamples" & } &&
	sampler=$! &&
	for k in $(seq 1 300); do
		# One file per mv: a multi-file mv stats each destination
		# after renaming it, and fails when the daemon was quicker.
		mv "$SPOOL/tmp/z$k.json" "$SPOOL/incoming/" || break
	done &&
	test -z "$(ls "$SPOOL/tmp" | grep "^z[0-9]*\.json\$")" &&
	wait_for "test \$(ls \"$SPOOL/done\" | grep -c \"^z\") -ge 300" 50;
	rc=$?;
	: >"$TRASH/zsamples.stop"; wait "$sampler";
	zps=$(cut -d " " -f 1 "$TRASH/zsamples" | sort -n | tail -n 1) &&
	zsnap=$(cut -d " " -f 2 "$TRASH/zsamples" | sort -n | tail -n 1) &&
	echo "samples: $(wc -l <"$TRASH/zsamples"), max zombies: $zsnap (snapshot), $zps (ps --ppid)" &&
	test $rc = 0 &&
	test "$(wc -l <"$TRASH/zsamples")" -ge 5 &&
	# The scenario measure (ps --ppid, FIELD-FAILURES B37): at most 2 at
	# any sample.  The snapshot of /proc/<pid>/task/<pid>/children is
	# printed only: it reads the list and the states at two moments, so
	# on a loaded machine it can see 3 that never coexisted.
	test "$zps" -le 2
'

test_expect_success 'B37: all 300 SUCCESS, the daemon never restarted' '
	test "$(ls "$SPOOL/done" | grep -c "^z")" = 300 &&
	test "$(jq -r .status "$SPOOL"/results/z*.json | grep -c "^SUCCESS\$")" = 300 &&
	kill -0 "$nspid" &&
	test "$(grep -c "node n2 started" "$TRASH/log.n2")" = 1 &&
	# Once the run is over nothing stays unreaped (the last orphans
	# end 0.2 s after their hooks).
	wait_for "test \$(ps -o stat= --ppid $nspid | grep -c ^Z) = 0" 10
'

test_expect_success 'B37: the daemon stops, its namespace leaves nothing behind' '
	kill -TERM "$nspid" &&
	wait_for "! kill -0 $nspid 2>/dev/null" 10 &&
	wait_for "! kill -0 $(daemon_pid n2) 2>/dev/null" 5 &&
	test -z "$(ls -A "$SPOOL/active/n2" 2>/dev/null)"
'

test_expect_success 'no process of this run survives' '
	wait_for "gone \"\\.5$TOKEN\"" 3 &&
	wait_for "gone \"$CONF\"" 3
'

test_done
