#!/bin/sh
# Leases under pauses, deaths and Redis stalls (FIELD-FAILURES B07, B09,
# B10, B12), cluster mode with lease_ms 3000 renewed every 500 ms:
#   B12  the 12 tasks of a node killed with kill -9 are recovered once
#        each, by one survivor, and run once more (never on two nodes);
#   B07  a node frozen (daemon and hook stopped), and a node whose daemon
#        alone is stopped while its hook runs, for longer than the lease:
#        no other node starts those tasks meanwhile (the stopped daemon
#        still holds the file's flock on this host); once resumed, each
#        sees its lease lost, kills its hook (self-fencing) and publishes
#        nothing; the task then runs once more (one result: attempt 1
#        LOST, attempt 2 SUCCESS), never overlapping;
#   B09  a task delayed 8 s (more than twice the lease) stays in delayed/
#        without a lease until due, then runs exactly once;
#   B10  a task running 3 leases long while Redis stalls (CLIENT PAUSE
#        500 ms, five times) keeps its lease: one attempt, the lease key
#        never missing while it runs, deleted after it ends.
# Issue 11 item 8, with a lease of 60 s renewed every 2 s (heartbeat 1 s):
#        a node killed with -9 has its task run again once its lease went
#        unrenewed for the takeover time A = D + h = 6 s (self-fence D =
#        min(60 - 2, 3 x 1 + 2) = 5 s; coord.c), not after the 60 s lease;
#        a node frozen with its hook past D, resumed, kills its hook at
#        once and publishes nothing; no attempts overlap.
# Self-fencing when Redis itself is unreachable is t0041's.  Always a
# private redis-server (CLIENT PAUSE stalls every client of it).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup private

# Attempt 1 sleeps 30 s (it never ends on its own here), later ones 300 ms.
cat >"$HOOKS/longfirst" <<'H'
#!/bin/sh
if [ "$TASKSPOOL_ATTEMPT" = 1 ]; then p='{"sleep_ms":30000}'; else p='{"sleep_ms":300}'; fi
printf '%s' "$p" | "$(dirname "$0")/probe"
H
chmod +x "$HOOKS/longfirst"

now_ms() { date +%s%3N; }
long() {	# long ID
	echo "$1" >>"$TRASH/ids"
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"longfirst\"}"
}
started() { grep -c "^START $1 ${2:-1} " "$SPOOL/probe.log" 2>/dev/null; }
hook_pid() { awk -v i="$1" '$1 == "START" && $2 == i && $3 == 1 { print $5 }' "$SPOOL/probe.log"; }
all_logs() { cat "$TRASH"/log.*; }

# --- B12 ------------------------------------------------------------------

test_expect_success 'B12: node k (alone, leader) claims 12 tasks and starts them' '
	: >"$TRASH/ids" &&
	start_daemon k -j 12 &&
	wait_for "rcli GET ${PREFIX}leader | grep -q \"^k:\"" 20 &&
	for i in $(seq 1 12); do long r$i || return 1; done &&
	wait_for "test \$(grep -c \"^START r[0-9]* 1 \" $SPOOL/probe.log) = 12" 30 &&
	start_daemon b -j 4 && start_daemon c -j 4 && start_daemon d -j 4
'

test_expect_success 'B12: kill -9 k: each task recovered once, by one node, run once more' '
	kill9_logged k &&
	wait_for "test \$(count_files $SPOOL/done) -ge 12" 60 &&
	check_once "$TRASH/ids" "$TRASH/kills" &&
	check_no_overlap &&
	for i in $(seq 1 12); do
		jq -e ".status == \"SUCCESS\" and (.attempts | length) == 2 and
		    .attempts[0].outcome == \"LOST\" and .attempts[0].node == \"k\" and
		    .attempts[1].node != \"k\"" "$SPOOL/results/r$i.json" >/dev/null || return 1
		test "$(all_logs | grep -c "r$i: attempt 1 on node k lost")" = 1 || return 1
		test "$(started r$i 2)" = 1 || return 1
	done &&
	for n in b c d; do echo "# recovered by $n: $(grep -c ": attempt 1 on node k lost" "$TRASH/log.$n")"; done
'

test_expect_success 'stop b, c, d' '
	stop_daemon b && stop_daemon c && stop_daemon d
'

# --- B07, B09 ---------------------------------------------------------------

test_expect_success 'B09: Z submitted with a delay of 8 s; B07: f1 runs x1, f2 runs x2' '
	dropped=$(now_ms) && echo "$dropped" >"$TRASH/z.dropped" &&
	ts submit --code probe --id Z --delay 8000 >/dev/null &&
	echo Z >>"$TRASH/ids" &&
	( while ! grep -q "^START Z " "$SPOOL/probe.log" 2>/dev/null; do
		echo "$(now_ms) $(state_of Z) $(rcli EXISTS "${PREFIX}lease:Z")"
		sleep 0.2
	done ) >"$TRASH/z.samples" 2>&1 &
	start_daemon f1 -j 1 &&
	long x1 && wait_for "test \$(started x1) = 1" 30 &&
	start_daemon f2 -j 1 &&
	long x2 && wait_for "test \$(started x2) = 1" 30 &&
	test -e "$SPOOL/active/f1/x1.json" && test -e "$SPOOL/active/f2/x2.json"
'

# On one host the paused daemon still holds the claimed file's flock
# (its process lives), so no other node may start the task while it is
# stopped: the overlap of the field report cannot happen here at all.
test_expect_success 'B07: f1 frozen whole, f2 daemon stopped (hook running) for 5 s: nobody else starts them' '
	p1=$(hook_pid x1) && p2=$(hook_pid x2) &&
	g1=$(ps -o pgid= -p "$p1" | tr -d " ") &&
	kill -STOP "$(daemon_pid f1)" && kill -STOP -"$g1" &&
	kill -STOP "$(daemon_pid f2)" &&
	start_daemon s -j 2 &&
	sleep 5 &&
	test "$(rcli EXISTS "${PREFIX}lease:x1")" = 0 &&
	test "$(rcli EXISTS "${PREFIX}lease:x2")" = 0 &&
	test "$(started x1 2)" = 0 && test "$(started x2 2)" = 0 &&
	resumed=$(now_ms) &&
	kill -CONT -"$g1" && kill -CONT "$(daemon_pid f1)" && kill -CONT "$(daemon_pid f2)" &&
	wait_for "! kill -0 $p1 2>/dev/null && ! kill -0 $p2 2>/dev/null" 30 &&
	echo "# attempt-1 hooks gone $(( $(now_ms) - resumed )) ms after the resume" &&
	wait_terminal x1 30 && wait_terminal x2 30
'

test_expect_success 'B07: resumed, f1 and f2 see their leases lost, kill their hooks, publish nothing' '
	for n in 1 2; do
		grep -q "x$n: lease lost or not renewed in time; killing process group" "$TRASH/log.f$n" &&
		test -f "$SPOOL/logs/x$n/1.stale" &&
		jq -e ".status == \"SUCCESS\" and (.attempts | length) == 2 and .attempts[0].outcome == \"LOST\" and .attempts[0].node == \"f$n\" and .attempts[1].outcome == \"SUCCESS\"" "$SPOOL/results/x$n.json" || return 1
	done &&
	# no END of an attempt 1, one START and one END of each attempt 2
	test "$(grep -c "^END x[12] 1 " "$SPOOL/probe.log")" = 0 &&
	test "$(grep -c "^START x[12] 2 " "$SPOOL/probe.log")" = 2 &&
	test "$(grep -c "^END x[12] 2 " "$SPOOL/probe.log")" = 2 &&
	check_no_overlap &&
	kill -0 "$(daemon_pid f1)" && kill -0 "$(daemon_pid f2)"
'

test_expect_success 'B09: Z was never claimed nor leased before its time, then ran once' '
	wait_terminal Z 30 &&
	dropped=$(cat "$TRASH/z.dropped") &&
	awk -v due=$((dropped + 8000)) "\$1 < due - 200 && (\$2 != \"delayed\" || \$3 != 0) { print \"early:\", \$0; bad = 1 } \$1 < due { n++ } END { print n, \"samples before due\"; exit bad || n < 10 }" "$TRASH/z.samples" &&
	test "$(grep -c "^START Z " "$SPOOL/probe.log")" = 1 &&
	s=$(awk "\$1 == \"START\" && \$2 == \"Z\" { print int(\$4 / 1000000) }" "$SPOOL/probe.log") &&
	echo "Z started $((s - dropped)) ms after the submission" &&
	test "$s" -ge $((dropped + 8000)) &&
	jq -e ".status == \"SUCCESS\" and (.attempts | length) == 1" "$SPOOL/results/Z.json"
'

# --- B10 --------------------------------------------------------------------

test_expect_success 'B10: a 10 s task through five 500 ms Redis stalls keeps its lease' '
	echo L >>"$TRASH/ids" &&
	drop L.json "{\"requestId\":\"L\",\"taskCode\":\"probe\",\"executeParams\":{\"sleep_ms\":10000}}" &&
	wait_for "test \$(started L) = 1" 30 &&
	for k in 1 2 3 4 5; do
		rcli CLIENT PAUSE 500 ALL >/dev/null || return 1
		for j in 1 2 3 4 5 6; do
			echo "$(now_ms) $(rcli PTTL "${PREFIX}lease:L")" >>"$TRASH/l.ttl"
			sleep 0.25
		done
	done &&
	wait_terminal L 30 &&
	ended=$(now_ms) &&
	wait_for "test \$(rcli EXISTS ${PREFIX}lease:L) = 0" 10 &&
	echo "# lease:L deleted $(( $(now_ms) - ended )) ms after the task ended" &&
	# the samples taken while L ran (before its END line)
	e=$(awk "\$1 == \"END\" && \$2 == \"L\" { print int(\$4 / 1000000) }" "$SPOOL/probe.log") &&
	awk -v e="$e" "\$1 < e { n++; if (min == \"\" || \$2 < min) min = \$2; if (\$2 < 0) bad = 1 } END { print \"min PTTL\", min, \"ms of\", n, \"samples while L ran\"; exit bad || n < 20 }" "$TRASH/l.ttl" &&
	jq -e ".status == \"SUCCESS\" and (.attempts | length) == 1" "$SPOOL/results/L.json" &&
	test "$(grep -c "^START L " "$SPOOL/probe.log")" = 1 &&
	test "$(grep -c "^END L " "$SPOOL/probe.log")" = 1 &&
	! grep -h "L: .*lease lost" "$TRASH"/log.*
'

test_expect_success 'everything exactly once; daemons stop' '
	check_once "$TRASH/ids" "$TRASH/kills" &&
	stop_daemon f1 && stop_daemon f2 && stop_daemon s
'

# --- issue 11 item 8 --------------------------------------------------------

LONG="-o lease_ms=60000 -o lease_renew_ms=2000"

test_expect_success 'item 8: g1 killed with -9: attempt 2 starts A = 6 s after the last renewal, not 60 s' '
	start_daemon g1 -j 1 $LONG &&
	wait_for "rcli GET ${PREFIX}leader | grep -q \"^g1:\"" 20 &&
	long y1 && wait_for "test \$(started y1) = 1" 30 &&
	start_daemon g2 -j 1 $LONG &&
	sleep 2.5 &&
	pttl=$(rcli PTTL "${PREFIX}lease:y1") && t=$(now_ms) &&
	test "$pttl" -gt 50000 &&
	renewed=$((t - (60000 - pttl))) &&
	kill9_logged g1 && killed=$(now_ms) &&
	wait_for "test \$(started y1 2) = 1" 40 &&
	s2=$(awk "\$1 == \"START\" && \$2 == \"y1\" && \$3 == 2 { print int(\$4 / 1000000) }" "$SPOOL/probe.log") &&
	echo "# y1: attempt 2 started $((s2 - killed)) ms after the kill, $((s2 - renewed)) ms after the last renewal (A 6000 ms, bound O + r + M = 6000 ms after the kill, lease 60000 ms)" >&3 &&
	test $((s2 - renewed)) -ge 5900 &&
	test $((s2 - killed)) -lt 20000 &&
	wait_terminal y1 30 &&
	jq -e ".status == \"SUCCESS\" and (.attempts | length) == 2 and
	    .attempts[0].outcome == \"LOST\" and .attempts[0].node == \"g1\" and
	    .attempts[1].node == \"g2\"" "$SPOOL/results/y1.json" &&
	check_no_overlap
' 3>&1

test_expect_success 'item 8: g2 frozen with its hook for 10 s (past D = 5 s): resumed, it kills the hook and publishes nothing' '
	long y2 && wait_for "test \$(started y2) = 1" 30 &&
	start_daemon g3 -j 1 $LONG &&
	p=$(hook_pid y2) && g=$(ps -o pgid= -p "$p" | tr -d " ") &&
	kill -STOP "$(daemon_pid g2)" && kill -STOP -"$g" &&
	sleep 10 &&
	# the frozen daemon still holds the flock on this host: no takeover
	test "$(started y2 2)" = 0 &&
	resumed=$(now_ms) &&
	kill -CONT "$(daemon_pid g2)" && kill -CONT -"$g" &&
	wait_for "! kill -0 $p 2>/dev/null" 20 &&
	echo "# y2: attempt-1 hook gone $(( $(now_ms) - resumed )) ms after the resume" >&3 &&
	wait_terminal y2 40 &&
	grep -q "y2: lease lost or not renewed in time; killing process group" "$TRASH/log.g2" &&
	test -f "$SPOOL/logs/y2/1.stale" &&
	test "$(grep -c "^END y2 1 " "$SPOOL/probe.log")" = 0 &&
	jq -e ".status == \"SUCCESS\" and (.attempts | length) == 2 and
	    .attempts[0].outcome == \"LOST\" and .attempts[0].node == \"g2\" and
	    .attempts[1].outcome == \"SUCCESS\"" "$SPOOL/results/y2.json" &&
	check_no_overlap &&
	check_once "$TRASH/ids" "$TRASH/kills" &&
	stop_daemon g2 && stop_daemon g3
' 3>&1

test_done
