#!/bin/sh
# Crash points, set up by hand (C3: B15, B16, B17, B22).  With no daemon
# running, lay on disk what a daemon killed at each crash point leaves
# behind, then start one and check the repair.  Each state is laid twice:
# in active/deadnode/ (repaired by the leader's reaper) and in active/n1/
# (repaired by n1 itself at start, before it claims anything).
#
#   row      on disk                                   repair
#   lost     active/ only (killed after the claim       LOST attempt recorded;
#            or while the hook ran)                     retried (SUCCESS), or
#   lost0    the same, no retry left                    FAILED (code LOST)
#   res      active/ + results/ (attempts = task's+1,   the terminal move is
#            SUCCESS): killed before the move           finished; hook not run
#   resf     the same with a FAILED result              → failed/; not run
#   retried  active/ only, with the attempt history     LOST attempt appended;
#            `taskspool retry` carried over             retried (SUCCESS)
#   del      active/ + delayed/ (retry published,       active copy removed;
#            killed before the unlink)                  the delayed one runs once
#   inc      active/ + incoming/ (retry already         active copy removed;
#            promoted)                                  the incoming one runs once
#   done     active/ + done/ (+ its result)             active copy removed;
#   canc     active/ + cancelled/ (+ its result)        result untouched, not run
#   rtorn    active/ + results/ cut short (a file       the result kept as
#            system that does not order writes)        corrupt/<id>.result.torn;
#                                                      LOST, retried (SUCCESS)
#   dtorn    done/ + results/ cut short                the result rebuilt from
#                                                      the task file and what
#                                                      still parses; not run
#   empty    a zero-length file in active/ (torn        → corrupt/ with a reason
#   torn     write after power loss), or a cut one     (never run, never deleted)
#   tmp      stray files in tmp/ (a writer died         never published, never
#            before its rename); leftovers in a         run; the work dir is
#            slot's workdirs/<node>.<slot>/                 emptied at start; the
#                                                       leader sweeps files
#                                                       older than an hour
# Then, with daemons running (rows of spool-layout/README.md's crash-state
# table that need them):
#   f-dup    incoming/ + delayed/ copies of a due delay task (claim cut
#            after publishing delayed/, before unlinking incoming/): runs once
#   h-gap    the same, the incoming/ copy locked (its claimer is dying) while
#            the delayed/ copy falls due: runs once
#   g-gap    a stale orphan in active/deadnode/ while the promoted retry
#            runs on a live node: runs once
# and B16: a result that cannot be written (chattr +i results/) keeps the
# task RUNNING in active/, locked; kill -9 and drain with it pending.
. "$(dirname "$0")/test-lib.sh"

# restart NODE [opts]: start_daemon, also after a kill -9 (whose heartbeat
# file is still there), keeping each node once in $DAEMONS.
restart() {
	rm -f "$SPOOL/state/heartbeat.$1"
	start_daemon "$@" || return 1
	DAEMONS=$(for d in $DAEMONS; do echo "$d"; done | sort -u | tr "\n" " ")
}

# cpu_ticks PID: user+system clock ticks used so far
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# put DIR NAME CONTENT: write a file into the spool (no daemon runs).
put() {
	mkdir -p "$SPOOL/$1" && printf '%s' "$3" >"$SPOOL/$1/$2"
}

PAST="2020-01-01T00:00:00.000Z"

# att N OUTCOME NODE: one attempt record
att() {
	printf '{"attempt":%d,"node":"%s","startedAt":"%s","finishedAt":"%s","exitCode":null,"signal":null,"outcome":"%s","reason":"set up by hand","retryAt":null}' \
	    "$1" "$3" "$PAST" "$PAST" "$2"
}

# tj ID RETRIES [ATTEMPTS]: a task file body
tj() {
	printf '{"requestId":"%s","taskCode":"probe","maxRetries":%d,"executeParams":{"sleep_ms":0},"attempts":[%s]}' \
	    "$1" "$2" "${3:-}"
}

# rj ID STATUS ATTEMPTS: a result envelope
rj() {
	printf '{"requestId":"%s","taskCode":"probe","status":"%s","attempts":[%s],"result":null,"failureReason":null}' \
	    "$1" "$2" "$3"
}

# starts ID [ATTEMPT]: number of START lines in probe.log
starts() {
	[ -f "$SPOOL/probe.log" ] || { echo 0; return; }
	awk -v id="$1" -v a="${2:-}" '$1 == "START" && $2 == id && (a == "" || $3 == a)' \
	    "$SPOOL/probe.log" | wc -l
}

# where ID: every place the id is found (one line each)
where() {
	for d in incoming delayed done failed cancelled corrupt; do
		[ -e "$SPOOL/$d/$1.json" ] && echo "$d"
	done
	for d in "$SPOOL"/active/*/; do
		[ -e "$d$1.json" ] && echo "active/$(basename "$d")"
	done
	true
}

# setup_rows OWNER P: the crash states for active/OWNER/, ids P-<row>
setup_rows() {
	o=$1; p=$2
	put "active/$o" "$p-lost.json" "$(tj "$p-lost" 1)"
	put "active/$o" "$p-lost0.json" "$(tj "$p-lost0" 0)"
	put "active/$o" "$p-res.json" "$(tj "$p-res" 1)"
	put results "$p-res.json" "$(rj "$p-res" SUCCESS "$(att 1 SUCCESS "$o")")"
	put "active/$o" "$p-resf.json" "$(tj "$p-resf" 0)"
	put results "$p-resf.json" "$(rj "$p-resf" FAILED "$(att 1 FAILED "$o")")"
	put "active/$o" "$p-retried.json" "$(tj "$p-retried" 2 "$(att 1 FAILED "$o")")"
	put "active/$o" "$p-del.json" "$(tj "$p-del" 1)"
	put delayed "$p-del.json" "$(tj "$p-del" 1 "$(att 1 LOST "$o")")"
	put "active/$o" "$p-inc.json" "$(tj "$p-inc" 1)"
	put incoming "$p-inc.json" "$(tj "$p-inc" 1 "$(att 1 LOST "$o")")"
	put "active/$o" "$p-done.json" "$(tj "$p-done" 1)"
	put done "$p-done.json" "$(tj "$p-done" 1 "$(att 1 SUCCESS "$o")")"
	put results "$p-done.json" "$(rj "$p-done" SUCCESS "$(att 1 SUCCESS "$o")")"
	put "active/$o" "$p-canc.json" "$(tj "$p-canc" 1)"
	put cancelled "$p-canc.json" "$(tj "$p-canc" 1 "$(att 1 CANCELLED "$o")")"
	put results "$p-canc.json" "$(rj "$p-canc" CANCELLED "$(att 1 CANCELLED "$o")")"
	put "active/$o" "$p-rtorn.json" "$(tj "$p-rtorn" 1)"
	put results "$p-rtorn.json" "$(rj "$p-rtorn" SUCCESS "$(att 1 SUCCESS "$o")" | head -c 60)"
	put done "$p-dtorn.json" "$(tj "$p-dtorn" 1)"
	# cut after its attempts[] (before ,"result"): the attempt survives
	put results "$p-dtorn.json" "$(rj "$p-dtorn" SUCCESS "$(att 1 SUCCESS "$o")" | sed "s/,\"result\".*/,\"resu/")"
	put "active/$o" "$p-empty.json" ""
	put "active/$o" "$p-torn.json" "{\"requestId\":\"$p-torn\",\"taskCo"
	# results that must not change: keep a copy
	mkdir -p "$TRASH/res0" &&
	for r in res resf done canc; do
		cp "$SPOOL/results/$p-$r.json" "$TRASH/res0/"
	done
}

# result ID: "status nattempts outcome/node,..." of results/ID.json
result() {
	jq -r '[.status, (.attempts | length | tostring),
	    ([.attempts[] | .outcome + "/" + .node] | join(","))] | join(" ")' \
	    "$SPOOL/results/$1.json"
}

# expect ID WHERE RESULT STARTS: check one row (prints what it found)
expect() {
	w=$(where "$1" | tr "\n" " "); r=$(result "$1" 2>/dev/null); s=$(starts "$1")
	echo "$1: in [$w] result [$r] starts $s"
	[ "$w" = "$2 " ] && [ "$r" = "$3" ] && [ "$s" = "$4" ]
}

# check_rows OWNER P: the repairs expected for setup_rows OWNER P
check_rows() {
	o=$1; p=$2; bad=0
	expect "$p-lost"  done   "SUCCESS 2 LOST/$o,SUCCESS/n1"  1 || bad=1
	expect "$p-lost0" failed "FAILED 1 LOST/$o"              0 || bad=1
	expect "$p-res"   done   "SUCCESS 1 SUCCESS/$o"          0 || bad=1
	expect "$p-resf"  failed "FAILED 1 FAILED/$o"            0 || bad=1
	expect "$p-retried" done "SUCCESS 3 FAILED/$o,LOST/$o,SUCCESS/n1" 1 || bad=1
	expect "$p-del"   done   "SUCCESS 2 LOST/$o,SUCCESS/n1"  1 || bad=1
	expect "$p-inc"   done   "SUCCESS 2 LOST/$o,SUCCESS/n1"  1 || bad=1
	expect "$p-done"  done   "SUCCESS 1 SUCCESS/$o"          0 || bad=1
	expect "$p-canc"  cancelled "CANCELLED 1 CANCELLED/$o"   0 || bad=1
	expect "$p-rtorn" done   "SUCCESS 2 LOST/$o,SUCCESS/n1"  1 || bad=1
	expect "$p-dtorn" done   "SUCCESS 1 SUCCESS/$o"          0 || bad=1
	for r in rtorn dtorn; do
		test -f "$SPOOL/corrupt/$p-$r.result.torn.reason" ||
		    { echo "$p-$r: damaged result not kept"; bad=1; }
	done
	expect "$p-empty" corrupt "" 0 || bad=1
	expect "$p-torn"  corrupt "" 0 || bad=1
	for r in res resf done canc; do
		cmp "$TRASH/res0/$p-$r.json" "$SPOOL/results/$p-$r.json" ||
		    { echo "$p-$r: result rewritten"; bad=1; }
	done
	for r in empty torn; do
		test -f "$SPOOL/corrupt/$p-$r.json.reason" ||
		    { echo "$p-$r: no reason file"; bad=1; }
	done
	# retried attempts ran as the right attempt number
	test "$(starts "$p-lost" 2)" = 1 || bad=1
	test "$(starts "$p-retried" 3)" = 1 || bad=1
	test "$(starts "$p-del" 2)" = 1 || bad=1
	test "$(starts "$p-inc" 2)" = 1 || bad=1
	return $bad
}

test_expect_success 'lay the crash states (no daemon running)' '
	setup_rows deadnode d &&
	setup_rows n1 s &&
	put tmp "1796025606.123456789.P99999.0" "$(tj e-pub 1)" &&
	put tmp "drop.77" "$(tj e-drop 1)" &&
	put tmp "e-tmp.json" "$(tj e-tmp 1)" &&
	put workdirs/e-work.1 result.json "{\"ok\":" &&
	put tmp old-writer.tmp "$(tj e-old 1)" &&
	touch -d "2 hours ago" "$SPOOL/tmp/old-writer.tmp" &&
	put workdirs/n1.0 leftover "from a killed hook" &&
	test "$(count_files "$SPOOL/active/deadnode")" = 12 &&
	test "$(count_files "$SPOOL/active/n1")" = 12
'

test_expect_success 'start n1: its own active/n1/ and the dead node are repaired' '
	start_daemon n1 -j 2 &&
	for p in d s; do
		for r in lost retried del inc rtorn; do
			wait_terminal "$p-$r" 20 || echo "$p-$r did not finish"
		done
	done >"$TRASH/w" &&
	cat "$TRASH/w" && ! grep -q . "$TRASH/w" &&
	test -z "$(ls "$SPOOL/active/deadnode")" &&
	test -z "$(ls "$SPOOL/active/n1")"
'

test_expect_success 'reaper path (active/deadnode/): every row repaired as listed' '
	check_rows deadnode d
'

test_expect_success 'own recovery path (active/n1/): every row repaired as listed' '
	check_rows n1 s
'

test_expect_success 'LOST attempts name the finder; own ones were found at start' '
	jq -r .attempts[0].reason "$SPOOL/results/d-lost.json" | grep -q "node deadnode died.*found by n1" &&
	jq -r .attempts[0].reason "$SPOOL/results/s-lost.json" | grep -q "node n1 died.*found by n1" &&
	grep -q "s-lost: attempt 1 on node n1 lost" "$TRASH/log.n1"
'

test_expect_success 'stray files in tmp/ are never published nor run' '
	for id in e-pub e-drop e-tmp e-work; do
		test -z "$(where $id)" && test "$(starts $id)" = 0 &&
		test ! -e "$SPOOL/results/$id.json" || echo "$id disturbed"
	done >"$TRASH/e" &&
	cat "$TRASH/e" && ! grep -q . "$TRASH/e" &&
	test "$(ls "$SPOOL/corrupt" | grep -c "^e-")" = 0
'

test_expect_success 'workdirs/: the work directory of n1 was emptied at its start; fresh strays stay' '
	test ! -e "$SPOOL/workdirs/n1.0/leftover" &&
	test -e "$SPOOL/tmp/1796025606.123456789.P99999.0" &&
	test -e "$SPOOL/tmp/drop.77" && test -e "$SPOOL/tmp/e-tmp.json"
'

test_expect_success 'nothing else moved: no leftovers, corrupt/ holds only the torn files' '
	test "$(count_files "$SPOOL/incoming")" = 0 &&
	test "$(count_files "$SPOOL/delayed")" = 0 &&
	test "$(ls "$SPOOL/corrupt" | LC_ALL=C sort | tr "\n" " ")" = "d-dtorn.result.torn d-dtorn.result.torn.reason d-empty.json d-empty.json.reason d-rtorn.result.torn d-rtorn.result.torn.reason d-torn.json d-torn.json.reason s-dtorn.result.torn s-dtorn.result.torn.reason s-empty.json s-empty.json.reason s-rtorn.result.torn s-rtorn.result.torn.reason s-torn.json s-torn.json.reason "
'

# --- the same id in incoming/ and delayed/ -----------------------------

# iso MS: RFC 3339 UTC time of epoch milliseconds MS
iso() { printf '%s.%03dZ' "$(date -u -d "@$(($1 / 1000))" +%Y-%m-%dT%H:%M:%S)" $(($1 % 1000)); }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# put_delayed NAME CONTENT DUE_MS: a delayed/ file as the daemon writes it
# (its mtime is its due time)
put_delayed() {
	put delayed "$1" "$2" &&
	touch -d "@$(($3 / 1000)).$(printf %03d $(($3 % 1000)))" "$SPOOL/delayed/$1"
}

test_expect_success 'delay claim cut after publishing delayed/: both copies, due; 2 nodes: runs once' '
	stop_daemon n1 &&
	c=$(( $(now_ms) - 10000 )) &&
	body="{\"requestId\":\"f-dup\",\"taskCode\":\"probe\",\"triggerType\":\"delay\",\"delayMs\":1000,\"createdAt\":\"$(iso $c)\",\"maxRetries\":0,\"executeParams\":{\"sleep_ms\":2000}}" &&
	put incoming f-dup.json "$body" &&
	put_delayed f-dup.json "$(printf "%s" "$body" | sed "s/}\$/,\"notBefore\":\"$(iso $((c + 1000)))\"}/")" $((c + 1000)) &&
	restart n1 -j 1 &&
	restart n2 -j 2 &&
	wait_terminal f-dup 20 &&
	sleep 3 &&
	echo "where: $(where f-dup | tr "\n" " ") starts: $(starts f-dup)" &&
	grep -h "f-dup" "$TRASH/log.n1" "$TRASH/log.n2";
	test "$(starts f-dup)" = 1 &&
	test "$(where f-dup | grep -v corrupt)" = done &&
	result f-dup | grep -Eqx "SUCCESS 1 SUCCESS/n[12]"
'

test_expect_success 'delay claim cut while the leader runs, copy due before the rescan: runs once' '
	d=$(( $(now_ms) + 1500 )) &&
	body="{\"requestId\":\"h-gap\",\"taskCode\":\"probe\",\"triggerType\":\"delay\",\"delayMs\":1500,\"createdAt\":\"$(iso $((d - 1500)))\",\"maxRetries\":0,\"executeParams\":{\"sleep_ms\":0}}" &&
	put tmp h-gap.json "$body" &&
	{ flock -x "$SPOOL/tmp/h-gap.json" sleep 3 & } &&
	fl=$! &&
	wait_for "! flock -n $SPOOL/tmp/h-gap.json true" 10 &&
	mv "$SPOOL/tmp/h-gap.json" "$SPOOL/incoming/h-gap.json" &&
	put_delayed h-gap.json "$(printf "%s" "$body" | sed "s/}\$/,\"notBefore\":\"$(iso $d)\"}/")" $d &&
	wait $fl &&
	wait_terminal h-gap 30 &&
	sleep 1 &&
	echo "where: $(where h-gap | tr "\n" " ") starts: $(starts h-gap)" &&
	grep -h "h-gap" "$TRASH/log.n1" "$TRASH/log.n2";
	test "$(starts h-gap)" = 1 &&
	test "$(where h-gap | grep -v corrupt)" = done &&
	result h-gap | grep -Eqx "SUCCESS 1 SUCCESS/n[12]"
'

test_expect_success 'retry promoted and claimed elsewhere while a stale orphan is left: runs once' '
	put tmp g-gap.json "$(tj g-gap 2 "$(att 1 LOST deadnode)" | sed "s/\"sleep_ms\":0/\"sleep_ms\":3000/")" &&
	mv "$SPOOL/tmp/g-gap.json" "$SPOOL/incoming/g-gap.json" &&
	wait_for "test \"\$(starts g-gap 2)\" = 1" 10 &&
	put active/deadnode g-gap.json "$(tj g-gap 2)" &&
	wait_terminal g-gap 20 &&
	sleep 2 &&
	echo "where: $(where g-gap | tr "\n" " ") starts: $(starts g-gap) result: $(result g-gap)" &&
	grep -h "g-gap" "$TRASH/log.n1" "$TRASH/log.n2";
	test "$(starts g-gap)" = 1 &&
	test "$(where g-gap | grep -v corrupt)" = done &&
	test -z "$(ls "$SPOOL/active/deadnode")" &&
	result g-gap | grep -Eq "^SUCCESS .*SUCCESS/n[12]\$"
'

# The retry crash state with a live owner (issue 11, found by s0003): n9
# published the retry (attempt 1 TEMPFAIL) but has not yet removed its
# active/ copy -- stopped (SIGSTOP) between the two steps, its lease held.
# The retry is neither a duplicate (corrupt/) nor run beside the stale
# copy: it waits, and runs once the owner removes that copy.
test_expect_success 'retry published, owner stopped before removing its active/ copy: waits, then runs' '
	put active/n9 r-gap.json "$(tj r-gap 2)" &&
	{ flock -x "$SPOOL/active/n9/r-gap.json" sleep 6 & } &&
	fl=$! &&
	wait_for "! flock -n $SPOOL/active/n9/r-gap.json true" 10 &&
	put tmp r-gap.json "$(tj r-gap 2 "$(att 1 TEMPFAIL n9)")" &&
	mv "$SPOOL/tmp/r-gap.json" "$SPOOL/incoming/r-gap.json" &&
	sleep 3 &&
	echo "while held: $(where r-gap | tr "\n" " ") starts: $(starts r-gap)" &&
	test "$(starts r-gap)" = 0 &&
	test ! -e "$SPOOL/corrupt/r-gap.json" &&
	test -e "$SPOOL/incoming/r-gap.json" &&
	rm "$SPOOL/active/n9/r-gap.json" &&
	wait $fl &&
	wait_terminal r-gap 30 &&
	echo "after: $(where r-gap | tr "\n" " ") starts: $(starts r-gap) result: $(result r-gap)" &&
	grep -h "r-gap" "$TRASH/log.n1" "$TRASH/log.n2";
	test "$(starts r-gap 2)" = 1 &&
	test "$(starts r-gap)" = 1 &&
	test "$(where r-gap)" = done &&
	result r-gap | grep -Eq "^SUCCESS 2 .*SUCCESS/n[12]\$"
'

test_expect_success 'tmp/: the leader removes a stray file untouched for over an hour' '
	wait_for "test ! -e $SPOOL/tmp/old-writer.tmp" 40 &&
	grep -q "removed stale tmp/old-writer.tmp" "$TRASH"/log.* &&
	test "$(starts e-old)" = 0 &&
	test -e "$SPOOL/tmp/drop.77"
'

# --- B16: the result cannot be written ---------------------------------

trap 'chattr -i "$SPOOL/results" 2>/dev/null; cleanup' EXIT

immutable_ok() {
	command -v chattr >/dev/null 2>&1 &&
	chattr +i "$SPOOL/results" 2>/dev/null &&
	! touch "$SPOOL/results/.probe" 2>/dev/null &&
	chattr -i "$SPOOL/results"
}

skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count # SKIP $1"
}

if immutable_ok; then
	test_expect_success 'B16: results/ immutable; the task stays RUNNING in active/, lease held' '
		stop_daemon n2 &&
		chattr +i "$SPOOL/results" &&
		ts submit --code probe --id b16 --params "{\"sleep_ms\": 100}" &&
		wait_for "grep -q \"^END b16 1 \" $SPOOL/probe.log" 10 &&
		wait_for "grep -q \"b16: cannot write results\" $TRASH/log.n1" 5 &&
		sleep 1.5 &&
		test "$(where b16)" = active/n1 &&
		test ! -e "$SPOOL/results/b16.json" &&
		test "$(ts --json status b16 | jq -r .status)" = RUNNING
	'

	test_expect_success 'B16: another node does not reap it while n1 holds it' '
		restart n2 -j 2 &&
		sleep 1.5 &&
		test "$(where b16)" = active/n1 &&
		test "$(starts b16)" = 1
	'

	test_expect_success 'B16: once results/ is writable again, SUCCESS with one attempt' '
		chattr -i "$SPOOL/results" &&
		wait_terminal b16 10 &&
		test "$(where b16)" = done &&
		test "$(result b16)" = "SUCCESS 1 SUCCESS/n1" &&
		test "$(starts b16)" = 1 &&
		grep -q "b16: result written after earlier failures" "$TRASH/log.n1"
	'

	test_expect_success 'B16: n1 killed while its result is pending: LOST, rerun on n2, still pending' '
		stop_daemon n2 &&
		chattr +i "$SPOOL/results" &&
		ts submit --code probe --id b16k --params "{\"sleep_ms\": 100}" --retries 2 &&
		wait_for "grep -q \"b16k: cannot write results\" $TRASH/log.n1" 10 &&
		test "$(where b16k)" = active/n1 &&
		kill9_daemon n1 &&
		restart n2 -j 2 &&
		wait_for "grep -q \"b16k: cannot write results\" $TRASH/log.n2" 10 &&
		sleep 1 &&
		test ! -e "$SPOOL/results/b16k.json" &&
		test "$(where b16k)" = active/n2 &&
		test "$(starts b16k 1)" = 1 && test "$(starts b16k 2)" = 1
	'

	test_expect_success 'B16: draining with a result pending: waits idle; 2nd SIGTERM stops it, task kept' '
		pid=$(daemon_pid n2) &&
		kill -TERM $pid &&
		sleep 0.5 &&
		kill -0 $pid &&
		c0=$(cpu_ticks $pid) && sleep 2 && c1=$(cpu_ticks $pid) &&
		echo "cpu ticks in 2 s while draining: $((c1 - c0)) (CLK_TCK $(getconf CLK_TCK))" &&
		kill -0 $pid &&
		kill -TERM $pid &&
		wait_for "! kill -0 $pid 2>/dev/null" 10 &&
		grep -q "stopping with results not yet written" "$TRASH/log.n2" &&
		test "$(where b16k)" = active/n2 &&
		test ! -e "$SPOOL/results/b16k.json" &&
		test $((c1 - c0)) -lt 40
	'

	test_expect_success 'B16: results/ writable, n2 restarted: one SUCCESS result, every attempt recorded' '
		chattr -i "$SPOOL/results" &&
		restart n2 -j 2 &&
		wait_terminal b16k 10 &&
		test "$(where b16k)" = done &&
		test "$(result b16k)" = "SUCCESS 3 LOST/n1,LOST/n2,SUCCESS/n2" &&
		test "$(starts b16k)" = 3 &&
		test "$(find "$SPOOL/active" -type f | wc -l)" = 0
	'
else
	skip "B16: chattr +i unsupported here (file system or privileges)"
fi

test_expect_success 'daemons stop' '
	for d in n1 n2; do
		[ -e "$SPOOL/state/heartbeat.$d" ] && { stop_daemon $d || echo "$d did not stop"; }
	done >"$TRASH/stop" 2>&1; ! grep -q . "$TRASH/stop"
'

test_done
