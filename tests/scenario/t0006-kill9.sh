#!/bin/sh
# kill -9 of a daemon (C3: B14, B15).
#  1. B14: A claims 20 long tasks and is killed while their hooks run; A is
#     not restarted.  Its hooks die with it (PR_SET_PDEATHSIG); B, the new
#     leader, reaps the orphans as LOST attempts and runs them again.
#  2. B15: A is killed right after a claim (before or just as its hook
#     starts) and restarted 2 s later: A resolves its own active/A/.
#  3. Restart: A is killed while running 5 tasks and restarted alone: it
#     resolves its own active/A/ before it claims anything new.
. "$(dirname "$0")/test-lib.sh"

now_ns() { date +%s%N; }

# task ID SLEEP_MS RETRIES: drop a probe task.
task() {
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"probe\",\"maxRetries\":$3,\"executeParams\":{\"sleep_ms\":$2}}"
}

# starts PREFIX ATTEMPT: how many START lines of that attempt for ids PREFIX*
starts() {
	[ -f "$SPOOL/probe.log" ] || { echo 0; return; }
	awk -v p="$1" -v a="$2" '$1 == "START" && index($2, p) == 1 && $3 == a' \
	    "$SPOOL/probe.log" | wc -l
}

# pids_of PREFIX ATTEMPT: the pids of those hooks (from their START lines)
pids_of() {
	awk -v p="$1" -v a="$2" '$1 == "START" && index($2, p) == 1 && $3 == a { print $5 }' \
	    "$SPOOL/probe.log"
}

# alive PID...: true if one of them is still a live (non-zombie) probe
alive() {
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = probe ] || continue
		st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d" " -f1)
		[ -n "$st" ] && [ "$st" != Z ] && return 0
	done
	return 1
}

# restart NODE [opts]: start a daemon again after a kill -9 (its old
# heartbeat file is still there; start_daemon waits for a fresh one).
restart() {
	rm -f "$SPOOL/state/heartbeat.$1"
	start_daemon "$@" || return 1
	# once in $DAEMONS is enough (cleanup and failure logs go by it)
	DAEMONS=$(for d in $DAEMONS; do echo "$d"; done | sort -u | tr "\n" " ")
}

# --- 1. B14 -----------------------------------------------------------

test_expect_success 'B14: A claims all 20 tasks and starts their hooks' '
	start_daemon A -j 20 &&
	for k in $(seq 1 20); do task "k14-$k" 3000 1; done &&
	wait_for "test \$(count_files $SPOOL/active/A) = 20 && test \$(starts k14- 1) = 20" 20 &&
	pids_of k14- 1 >"$TRASH/a.pids" &&
	test "$(wc -l <"$TRASH/a.pids")" = 20 &&
	alive $(cat "$TRASH/a.pids")
'

test_expect_success 'B14: B starts; kill -9 A; A hooks die with it' '
	start_daemon B -j 20 &&
	now_ns >"$TRASH/kill14" &&
	kill9_daemon A &&
	wait_for "! alive \$(cat $TRASH/a.pids)" 2
'

test_expect_success 'B14: all 20 end SUCCESS on B (bounded wait)' '
	# (a for loop over a list: wait_terminal uses $i itself)
	ok=1 && for k in $(seq 1 20); do wait_terminal "k14-$k" 30 || ok=0; done &&
	test $ok = 1 &&
	test "$(ls "$SPOOL/done" | grep -c "^k14-")" = 20 &&
	test -z "$(ls "$SPOOL/active/A")" &&
	test -z "$(ls "$SPOOL/active/B")"
'

test_expect_success 'B14: each result: attempts = [LOST on A, SUCCESS on B]' '
	(cd "$SPOOL/results" && jq -r "[.requestId, .status, (.attempts|length),
	    .attempts[0].outcome, .attempts[0].node,
	    .attempts[1].outcome, .attempts[1].node] | @tsv" k14-*.json) >"$TRASH/r14" &&
	cat "$TRASH/r14" &&
	test "$(wc -l <"$TRASH/r14")" = 20 &&
	test "$(awk -F"\t" "\$2 \$3 \$4 \$5 \$6 \$7 == \"SUCCESS2LOSTASUCCESSB\"" "$TRASH/r14" | wc -l)" = 20
'

test_expect_success 'B14: probe.log: no END of attempt 1; attempt 2 started after the kill' '
	k=$(cat "$TRASH/kill14") &&
	awk -v k="$k" "
		index(\$2, \"k14-\") != 1 { next }
		\$1 == \"START\" { s[\$2 \" \" \$3]++; st[\$2 \" \" \$3] = \$4; ids[\$2] = 1 }
		\$1 == \"END\" { e[\$2 \" \" \$3]++; en[\$2 \" \" \$3] = \$4 }
		END {
			for (id in ids) {
				n++
				if (s[id \" 1\"] != 1 || s[id \" 2\"] != 1) { print id, \"STARTs:\", s[id \" 1\"] + 0, s[id \" 2\"] + 0; bad = 1 }
				if (e[id \" 1\"] != 0) { print id, \"attempt 1 has an END (hook outlived its daemon)\"; bad = 1 }
				if (e[id \" 2\"] != 1) { print id, \"attempt 2 has\", e[id \" 2\"] + 0, \"END\"; bad = 1 }
				if (!(st[id \" 1\"] + 0 < k + 0 && k + 0 < st[id \" 2\"] + 0)) { print id, \"overlap: start1\", st[id \" 1\"], \"kill\", k, \"start2\", st[id \" 2\"]; bad = 1 }
				if (en[id \" 2\"] + 0 < st[id \" 2\"] + 0) { print id, \"attempt 2 END before START\"; bad = 1 }
			}
			if (n != 20) { print n, \"ids\"; bad = 1 }
			exit bad
		}" "$SPOOL/probe.log" &&
	! alive $(cat "$TRASH/a.pids")
'

# --- 2. B15 -----------------------------------------------------------

test_expect_success 'B15: B stops; A (restarted alone) is idle' '
	stop_daemon B &&
	restart A -j 2 &&
	test -z "$(ls "$SPOOL/active/A")"
'

# kill_on_claim ID: drop task ID, spin until it appears in active/A/, kill
# A at once (sub-millisecond: the loop forks nothing), restart A 2 s later.
kill_on_claim() {
	task "$1" 300 3 || return 1
	f="$SPOOL/active/A/$1.json"
	i=0
	until [ -e "$f" ]; do
		i=$((i + 1))
		if [ $i -gt 3000000 ]; then echo "$1 never claimed"; return 1; fi
	done
	kill -9 "$(daemon_pid A)" || return 1
	now_ns >>"$TRASH/kill15"
	sleep 2
	test -e "$f" || { echo "$1 left active/A/ while A was dead"; return 1; }
	restart A -j 2 && wait_terminal "$1" 20
}

test_expect_success 'B15: kill -9 A right after each of 8 claims, restart after 2 s' '
	for k in 1 2 3 4 5 6 7 8; do
		kill_on_claim "k15-$k" || break
		echo "k15-$k $(state_of k15-$k)"
	done >"$TRASH/k15.out" 2>&1;
	cat "$TRASH/k15.out" &&
	test "$(grep -c " done\$" "$TRASH/k15.out")" = 8
'

test_expect_success 'B15: each ends SUCCESS with exactly one result; earlier attempts LOST on A' '
	test "$(ls "$SPOOL/results" | grep -c "^k15-")" = 8 &&
	test "$(ls "$SPOOL/done" | grep -c "^k15-")" = 8 &&
	(cd "$SPOOL/results" && jq -r "[.requestId, .status, (.attempts|length),
	    ([.attempts[:-1][] | select(.outcome == \"LOST\" and .node == \"A\" and
	      (.reason | test(\"found by A\")))] | length),
	    .attempts[-1].outcome, .attempts[-1].node] | @tsv" k15-*.json) >"$TRASH/r15" &&
	cat "$TRASH/r15" &&
	awk -F"\t" "\$2 != \"SUCCESS\" || \$4 != \$3 - 1 || \$5 != \"SUCCESS\" || \$6 != \"A\" { bad = 1; print \"bad:\", \$0 } END { exit bad }" "$TRASH/r15"
'

test_expect_success 'B15: probe.log: only the final attempt of each has an END' '
	for id in $(cut -f1 "$TRASH/r15"); do
		last=$(awk -F"\t" -v id="$id" "\$1 == id { print \$3 }" "$TRASH/r15")
		awk -v id="$id" -v last="$last" "
			\$2 != id { next }
			\$1 == \"START\" { s[\$3]++ }
			\$1 == \"END\" { e[\$3]++; if (\$3 != last) bad = 1 }
			END {
				for (a in s) if (s[a] > 1 || a + 0 > last + 0) bad = 1
				if (e[last] != 1 || s[last] != 1) bad = 1
				if (bad) print id, \"bad START/END set (last attempt\", last \")\"
				exit bad
			}" "$SPOOL/probe.log" || echo FAIL
	done >"$TRASH/p15" &&
	cat "$TRASH/p15" &&
	! grep -q . "$TRASH/p15"
'

test_expect_success 'B15: active/A/ is empty after recovery' '
	test -z "$(ls "$SPOOL/active/A")" &&
	test "$(count_files "$SPOOL/incoming")" = 0 &&
	test "$(count_files "$SPOOL/delayed")" = 0
'

# --- 3. restart -------------------------------------------------------

test_expect_success 'restart: A runs 5 tasks; kill -9 A; a new task arrives while A is dead' '
	stop_daemon A &&
	restart A -j 6 &&
	for i in 1 2 3 4 5; do task "kr-$i" 3000 1; done &&
	wait_for "test \$(count_files $SPOOL/active/A) = 5 && test \$(starts kr- 1) = 5" 20 &&
	pids_of kr- 1 >"$TRASH/r.pids" &&
	now_ns >"$TRASH/killr" &&
	kill9_daemon A &&
	wait_for "! alive \$(cat $TRASH/r.pids)" 2 &&
	test "$(count_files "$SPOOL/active/A")" = 5 &&
	task kr-new 0 0 &&
	sleep 0.5 &&
	test "$(state_of kr-new)" = incoming
'

test_expect_success 'restart: A alone resolves its own active/A/; all end SUCCESS' '
	restart A -j 6 &&
	ok=1 && for i in 1 2 3 4 5; do wait_terminal "kr-$i" 30 || ok=0; done &&
	test $ok = 1 &&
	wait_terminal kr-new 10 &&
	test -z "$(ls "$SPOOL/active/A")" &&
	(cd "$SPOOL/results" && jq -r "[.requestId, .status, (.attempts|length),
	    .attempts[0].outcome, .attempts[0].node, (.attempts[0].reason | test(\"found by A\")),
	    .attempts[1].outcome, .attempts[1].node] | @tsv" kr-[0-9].json) >"$TRASH/rr" &&
	cat "$TRASH/rr" &&
	test "$(awk -F"\t" "\$2 \$3 \$4 \$5 \$6 \$7 \$8 == \"SUCCESS2LOSTAtrueSUCCESSA\"" "$TRASH/rr" | wc -l)" = 5
'

test_expect_success 'restart: the LOST attempts were recorded before the new claim' '
	new=$(jq -r .attempts[0].startedAt "$SPOOL/results/kr-new.json") &&
	for i in 1 2 3 4 5; do
		f=$(jq -r .attempts[0].finishedAt "$SPOOL/results/kr-$i.json")
		echo "kr-$i lost recorded $f; kr-new started $new"
		[ "$f" \< "$new" ] || [ "$f" = "$new" ] || echo FAIL
	done >"$TRASH/order" &&
	cat "$TRASH/order" &&
	! grep -q FAIL "$TRASH/order"
'

test_expect_success 'restart: no END of attempt 1; attempt 2 after the kill' '
	k=$(cat "$TRASH/killr") &&
	test "$(grep -c "^END kr-[0-9] 1 " "$SPOOL/probe.log")" = 0 &&
	test "$(grep -c "^END kr-[0-9] 2 " "$SPOOL/probe.log")" = 5 &&
	awk -v k="$k" "\$1 == \"START\" && \$2 ~ /^kr-[0-9]\$/ && \$3 == 2 && \$4 + 0 <= k + 0 { bad = 1; print } END { exit bad }" "$SPOOL/probe.log" &&
	! alive $(cat "$TRASH/r.pids")
'

test_expect_success 'A stops cleanly' 'stop_daemon A'

test_done
