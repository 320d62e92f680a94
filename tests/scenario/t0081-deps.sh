#!/bin/sh
# Task dependencies (issue 14 item 1; Slurm's sbatch --dependency), in
# embedded mode and then in cluster mode (Redis):
#  - a diamond A -> {B, C} -> D: D waits in blocked/ (status BLOCKED,
#    "waiting for"), its hook runs once, after both B and C ended, and
#    its file records releasedBy B and C; its hook reads B's and C's
#    results through TASKSPOOL_PARENT_RESULTS and TASKSPOOL_PARENTS_DIR;
#  - afterok on a failing parent: A -> B -> C, B and C end CANCELLED with
#    DEPENDENCY_NEVER_SATISFIED naming their parent, neither hook runs;
#  - afternotok and afterany on a failed parent run; afternotok on a
#    succeeded one is cancelled;
#  - an unknown parent is refused by submit (65) and a dropped file
#    naming one goes to corrupt/ with the reason; a dropped file with a
#    known parent is moved into blocked/ and released;
#  - purge keeps the result of a parent a blocked task waits on;
#  - the API: dependsOn accepted (BLOCKED, waitingFor), an unknown parent
#    422 UNKNOWN_DEPENDENCY naming dependsOn[0].requestId;
#  - the leader killed -9 while dependents are blocked: the next leader
#    releases each once;
#  - trace continuation (issue 14 item 6): a dependent submitted without
#    a traceparent runs in the trace of its first parent (dependsOn order)
#    that has one (submit gives a task with dependsOn no new trace);
#    with no such parent (one dropped without) it has none.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
. "$(dirname "$0")/api-lib.sh"
trap 'api_stop; redis_teardown' EXIT
TSAPI="$API_HERE/contrib/clients/tsapi.sh"

# rec: records each run (id, and the state of each parent it names).
cat >"$HOOKS/rec" <<H
#!/bin/sh
echo "\$TASKSPOOL_REQUEST_ID" >>"$TRASH/runs"
# The parents' results, as the hook finds them.
if [ -n "\$TASKSPOOL_PARENTS_DIR" ]; then
	echo "\$TASKSPOOL_PARENT_RESULTS" | tr : '\\n' | while read -r f; do
		[ -n "\$f" ] && jq -r '.requestId + "=" + .status' "\$f"
	done >"$TRASH/parents.\$TASKSPOOL_REQUEST_ID"
	ls "\$TASKSPOOL_PARENTS_DIR" >"$TRASH/pdir.\$TASKSPOOL_REQUEST_ID"
fi
H
cat >"$HOOKS/fail" <<H
#!/bin/sh
echo "\$TASKSPOOL_REQUEST_ID" >>"$TRASH/runs"
exit 65
H
# gate: runs until \$TRASH/go.<id> exists (at most 30 s).
cat >"$HOOKS/gate" <<H
#!/bin/sh
i=0
while [ ! -e "$TRASH/go.\$TASKSPOOL_REQUEST_ID" ] && [ \$i -lt 300 ]; do
	sleep 0.1; i=\$((i + 1))
done
echo "\$TASKSPOOL_REQUEST_ID" >>"$TRASH/runs"
H
# trc: records the TRACEPARENT the hook gets ("-" when none).
cat >"$HOOKS/trc" <<H
#!/bin/sh
echo "\${TRACEPARENT:--}" >"$TRASH/tp.\$TASKSPOOL_REQUEST_ID"
H
chmod +x "$HOOKS/rec" "$HOOKS/fail" "$HOOKS/gate" "$HOOKS/trc"
: >"$TRASH/runs"

runs() { grep -cx "$1" "$TRASH/runs"; }
status_of() { jq -r .status "$SPOOL/results/$1.json"; }

phase() {
M=$1

test_expect_success "$M: diamond A -> {B, C} -> D: D once, after B and C, releasedBy recorded" '
	start_daemon ${M}1 -j 4 && start_daemon ${M}2 -j 4 &&
	ts submit --code gate --id $M-A >/dev/null &&
	ts submit --code gate --id $M-B --after $M-A >/dev/null &&
	ts submit --code rec --id $M-C --after $M-A:afterok >/dev/null &&
	ts submit --code rec --id $M-D --after $M-B --after $M-C:afterany >/dev/null &&
	test -e "$SPOOL/blocked/$M-D.json" &&
	ts status $M-D >"$TRASH/$M.st" && cat "$TRASH/$M.st" &&
	grep -q "^$M-D BLOCKED" "$TRASH/$M.st" &&
	grep -q "^waiting for $M-B (afterok, BLOCKED)" "$TRASH/$M.st" &&
	grep -q "^waiting for $M-C (afterany, BLOCKED)" "$TRASH/$M.st" &&
	ts list --state BLOCKED | grep -q "$M-D" &&
	ts deps $M-A >"$TRASH/$M.deps" && cat "$TRASH/$M.deps" &&
	grep -q "before $M-B (afterok)" "$TRASH/$M.deps" &&
	touch "$TRASH/go.$M-A" && wait_terminal $M-A &&
	wait_terminal $M-C && test "$(state_of $M-D)" = "" &&
	test -e "$SPOOL/blocked/$M-D.json" &&
	touch "$TRASH/go.$M-B" && wait_terminal $M-D &&
	test "$(status_of $M-D)" = SUCCESS && test "$(runs $M-D)" = 1 &&
	test "$(cat "$TRASH/parents.$M-D" | tr "\n" " ")" = "$M-B=SUCCESS $M-C=SUCCESS " &&
	test "$(cat "$TRASH/pdir.$M-D" | tr "\n" " ")" = "$M-B.json $M-C.json " &&
	test "$(jq -r "[.releasedBy[] | .requestId + \"=\" + .state] | join(\",\")" "$SPOOL/done/$M-D.json")" = "$M-B=SUCCESS,$M-C=SUCCESS" &&
	test "$(grep -nx "$M-D" "$TRASH/runs" | cut -d: -f1)" -gt "$(grep -nx "$M-B" "$TRASH/runs" | cut -d: -f1)"
'

# The W3C Trace Context example value (§3.2.2.5, "traceparent" examples).
TPA=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
test_expect_success "$M: a released task continues its first traced parent's trace" '
	drop $M-TN.json "{\"requestId\":\"$M-TN\",\"taskCode\":\"rec\"}" &&
	wait_for "test -e \"$SPOOL/results/$M-TN.json\" || test -e \"$SPOOL/incoming/$M-TN.json\"" &&
	ts submit --code rec --id $M-TA --traceparent $TPA >/dev/null &&
	ts submit --code trc --id $M-TD --after $M-TN --after $M-TA >/dev/null &&
	ts submit --code trc --id $M-TE --after $M-TN >/dev/null &&
	wait_terminal $M-TD && wait_terminal $M-TE &&
	test "$(status_of $M-TD)" = SUCCESS &&
	cat "$TRASH/tp.$M-TD" "$TRASH/tp.$M-TE" &&
	test "$(cut -d- -f1,2 "$TRASH/tp.$M-TD")" = 00-4bf92f3577b34da6a3ce929d0e0e4736 &&
	test "$(cut -d- -f3 "$TRASH/tp.$M-TD")" != 00f067aa0ba902b7 &&
	jq -r .traceparent "$SPOOL/done/$M-TD.json" | grep -q "^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]\{16\}-01$" &&
	test "$(jq -r .traceparent "$SPOOL/done/$M-TD.json" | cut -d- -f3)" != 00f067aa0ba902b7 &&
	test "$(jq -r ".traceparent // \"-\"" "$SPOOL/done/$M-TN.json")" = - &&
	test "$(cat "$TRASH/tp.$M-TE")" = -
'

test_expect_success "$M: afterok on a failing parent cancels the chain with DEPENDENCY_NEVER_SATISFIED" '
	ts submit --code fail --id $M-F >/dev/null &&
	ts submit --code rec --id $M-F1 --after $M-F >/dev/null &&
	ts submit --code rec --id $M-F2 --after $M-F1 >/dev/null &&
	wait_terminal $M-F2 && test "$(status_of $M-F)" = FAILED &&
	test "$(state_of $M-F1)" = cancelled && test "$(state_of $M-F2)" = cancelled &&
	jq -r ".attempts[-1].reason" "$SPOOL/results/$M-F1.json" | grep -q "DEPENDENCY_NEVER_SATISFIED: $M-F ended FAILED (condition afterok)" &&
	jq -r ".attempts[-1].reason" "$SPOOL/results/$M-F2.json" | grep -q "DEPENDENCY_NEVER_SATISFIED: $M-F1 ended CANCELLED" &&
	test "$(jq -r .cancelReason.code "$SPOOL/results/$M-F2.json")" = DEPENDENCY_NEVER_SATISFIED &&
	jq -r .cancelReason.message "$SPOOL/results/$M-F1.json" | grep -q "^DEPENDENCY_NEVER_SATISFIED: $M-F ended FAILED (condition afterok)" &&
	test "$(runs $M-F1)" = 0 && test "$(runs $M-F2)" = 0
'

test_expect_success "$M: afternotok and afterany on a failed parent run; afternotok on a success is cancelled" '
	ts submit --code fail --id $M-G >/dev/null &&
	ts submit --code rec --id $M-G1 --after $M-G:afternotok >/dev/null &&
	ts submit --code rec --id $M-G2 --after $M-G:afterany >/dev/null &&
	ts submit --code rec --id $M-G3 --after $M-A:afternotok >/dev/null &&
	wait_terminal $M-G1 && wait_terminal $M-G2 && wait_terminal $M-G3 &&
	test "$(status_of $M-G1)" = SUCCESS && test "$(status_of $M-G2)" = SUCCESS &&
	test "$(state_of $M-G3)" = cancelled && test "$(runs $M-G3)" = 0
'

test_expect_success "$M: unknown parent refused (submit 65, dropped file to corrupt/); a dropped dependent is released" '
	rc=0 && ts submit --code rec --id $M-U --after nosuch-$M 2>"$TRASH/$M.err" || rc=$? &&
	test $rc = 65 && grep -q "dependsOn\[0\].requestId: no task nosuch-$M in the spool" "$TRASH/$M.err" &&
	rc=0 && ts submit --code rec --id $M-S --after $M-S2 --after $M-A:sometimes 2>/dev/null || rc=$? && test $rc = 64 &&
	drop $M-X.json "{\"requestId\":\"$M-X\",\"taskCode\":\"rec\",\"dependsOn\":[{\"requestId\":\"nosuch-$M\"}]}" &&
	wait_for "test -e \"$SPOOL/corrupt/$M-X.json.reason\"" &&
	grep -q "dependsOn\[0\].requestId: no task nosuch-$M in the spool" "$SPOOL/corrupt/$M-X.json.reason" &&
	drop $M-Y.json "{\"requestId\":\"$M-Y\",\"taskCode\":\"rec\",\"dependsOn\":[{\"requestId\":\"$M-A\"}]}" &&
	wait_terminal $M-Y && test "$(status_of $M-Y)" = SUCCESS &&
	jq -e ".releasedBy[0].state == \"SUCCESS\"" "$SPOOL/done/$M-Y.json" >/dev/null
'

test_expect_success "$M: purge keeps a parent a blocked task waits on" '
	ts submit --code gate --id $M-PG >/dev/null &&
	ts submit --code rec --id $M-P >/dev/null && wait_terminal $M-P &&
	ts submit --code rec --id $M-PW --after $M-P --after $M-PG >/dev/null &&
	sleep 1 && ts purge --older-than 1s >/dev/null &&
	test -e "$SPOOL/done/$M-P.json" && test -e "$SPOOL/results/$M-P.json" &&
	touch "$TRASH/go.$M-PG" && wait_terminal $M-PW &&
	test "$(status_of $M-PW)" = SUCCESS
'

test_expect_success "$M: a blocked task can be cancelled (no run) and held (released, it waits in blocked/ again)" '
	ts submit --code gate --id $M-QX --delay 600000 >/dev/null &&
	ts submit --code rec --id $M-QY --after $M-QX >/dev/null &&
	ts submit --code rec --id $M-QZ --after $M-QX >/dev/null &&
	ts cancel $M-QY >/dev/null &&
	wait_terminal $M-QY && test "$(status_of $M-QY)" = CANCELLED &&
	test "$(runs $M-QY)" = 0 &&
	ts hold $M-QZ | grep -q "^$M-QZ HELD" && test -e "$SPOOL/hold/$M-QZ.json" &&
	ts release $M-QZ >/dev/null &&
	wait_for "test -e \"$SPOOL/blocked/$M-QZ.json\"" &&
	ts cancel $M-QZ >/dev/null && ts cancel $M-QX >/dev/null &&
	wait_terminal $M-QZ && test "$(runs $M-QZ)" = 0
'

test_expect_success "$M: a cycle dropped by hand ends CANCELLED, a forged releasedBy does not open the gate" '
	printf "{\"requestId\":\"$M-cyB\",\"taskCode\":\"rec\",\"dependsOn\":[{\"requestId\":\"$M-cyA\"}]}" >"$SPOOL/tmp/$M-cyB.json" &&
	mv "$SPOOL/tmp/$M-cyB.json" "$SPOOL/hold/" &&
	drop $M-cyA.json "{\"requestId\":\"$M-cyA\",\"taskCode\":\"rec\",\"dependsOn\":[{\"requestId\":\"$M-cyB\"}]}" &&
	wait_for "test -e \"$SPOOL/blocked/$M-cyA.json\"" &&
	ts release $M-cyB >/dev/null &&
	wait_terminal $M-cyA && wait_terminal $M-cyB &&
	test "$(status_of $M-cyA)" = CANCELLED && test "$(status_of $M-cyB)" = CANCELLED &&
	jq -r ".attempts[-1].reason" "$SPOOL/results/$M-cyA.json" "$SPOOL/results/$M-cyB.json" >"$TRASH/$M.cy" &&
	cat "$TRASH/$M.cy" && grep -q "^DEPENDENCY_NEVER_SATISFIED: a cycle through $M-cy" "$TRASH/$M.cy" &&
	test "$(runs $M-cyA)" = 0 && test "$(runs $M-cyB)" = 0 &&
	ts submit --code fail --id $M-fp --retries 0 >/dev/null && wait_terminal $M-fp &&
	printf "{\"requestId\":\"$M-fg\",\"taskCode\":\"rec\",\"dependsOn\":[{\"requestId\":\"$M-fp\"}],\"releasedBy\":[{\"requestId\":\"$M-fp\",\"state\":\"SUCCESS\"}]}" >"$TRASH/fg.json" &&
	{ ts submit "$TRASH/fg.json" 2>"$TRASH/fg.err"; test $? = 65; } &&
	grep -q "releasedBy" "$TRASH/fg.err" &&
	drop $M-fg.json "$(cat "$TRASH/fg.json")" &&
	wait_terminal $M-fg && test "$(status_of $M-fg)" = CANCELLED &&
	test "$(runs $M-fg)" = 0
'

test_expect_success "$M: leader kill -9 while dependents are blocked: released once" '
	ts submit --code gate --id $M-K >/dev/null &&
	for i in 1 2 3 4 5 6 7 8; do ts submit --code rec --id $M-K$i --after $M-K >/dev/null || return 1; done &&
	L=$(grep -l "is now the leader" "$TRASH"/log.${M}* | head -1 | sed "s/.*log\.//") &&
	kill9_daemon "$L" && start_daemon ${M}3 -j 4 &&
	touch "$TRASH/go.$M-K" &&
	for i in 1 2 3 4 5 6 7 8; do wait_terminal $M-K$i 40 || return 1; done &&
	for i in 1 2 3 4 5 6 7 8; do test "$(runs $M-K$i)" = 1 || return 1; done &&
	for n in ${M}1 ${M}2 ${M}3; do stop_daemon $n 2>/dev/null; done; true
'
}

phase e

test_expect_success "api: dependsOn: 202 BLOCKED with waitingFor, released after the parent; unknown parent 422" '
	api_server && api_tester && start_daemon a1 -j 2 &&
	printf "{\"requestId\":\"api-P\",\"taskCode\":\"echo\",\"triggerType\":\"delay\",\"delayMs\":1500}" >"$TRASH/p.json" &&
	sh "$TSAPI" submit "$TRASH/p.json" >/dev/null &&
	printf "{\"requestId\":\"api-W\",\"taskCode\":\"echo\",\"dependsOn\":[{\"requestId\":\"api-P\",\"condition\":\"afterany\"}]}" >"$TRASH/w.json" &&
	sh "$TSAPI" submit "$TRASH/w.json" >"$TRASH/api.out" && cat "$TRASH/api.out" &&
	test "$(jq -r .status "$TRASH/api.out")" = BLOCKED &&
	sh "$TSAPI" get api-W >"$TRASH/api.get" && cat "$TRASH/api.get" &&
	test "$(jq -r .status "$TRASH/api.get")" = BLOCKED &&
	test "$(jq -c .waitingFor "$TRASH/api.get")" = "[{\"requestId\":\"api-P\",\"condition\":\"afterany\",\"state\":\"PENDING\"}]" &&
	sh "$TSAPI" wait api-W 30 >"$TRASH/api.w" &&
	test "$(jq -r .status "$TRASH/api.w")" = SUCCESS &&
	printf "{\"requestId\":\"api-U\",\"taskCode\":\"echo\",\"dependsOn\":[{\"requestId\":\"api-nosuch\"}]}" >"$TRASH/u.json" &&
	rc=0 && sh "$TSAPI" submit "$TRASH/u.json" >"$TRASH/api.u" 2>&1 || rc=$? &&
	cat "$TRASH/api.u" && test $rc != 0 &&
	grep -q UNKNOWN_DEPENDENCY "$TRASH/api.u" && grep -q "dependsOn\[0\].requestId" "$TRASH/api.u" &&
	other=$(ts apps add other --codes echo) &&
	printf "{\"requestId\":\"api-O\",\"taskCode\":\"echo\",\"dependsOn\":[{\"requestId\":\"api-P\"}]}" >"$TRASH/o.json" &&
	rc=0 && TS_APP_ID=other TS_SECRET=$other sh "$TSAPI" submit "$TRASH/o.json" >"$TRASH/api.o" 2>&1 || rc=$? &&
	cat "$TRASH/api.o" && test $rc != 0 &&
	grep -q UNKNOWN_DEPENDENCY "$TRASH/api.o" && grep -q "no task api-P of AppId other" "$TRASH/api.o" &&
	test ! -e "$SPOOL/blocked/api-O.json" &&
	stop_daemon a1 && api_stop
'

redis_setup
phase c

test_expect_success "c: a parent ended on a non-leader: its daemon publishes done/<name> (the leader on another host releases at once)" '
	start_daemon c6 -j 1 && start_daemon c7 -j 1 &&
	grep -q "is now the leader" "$TRASH/log.c6" &&
	{ timeout 30 redis-cli -h "${REDIS%:*}" -p "${REDIS##*:}" SUBSCRIBE "${PREFIX}wake" >"$TRASH/wake.out" & sub=$!; } &&
	sleep 0.3 &&
	drop c-W1.json "{\"requestId\":\"c-W1\",\"taskCode\":\"rec\",\"route\":\"node:c7\"}" &&
	ts submit --code rec --id c-W2 --after c-W1 >/dev/null &&
	ok=0 &&
	wait_terminal c-W2 20 &&
	test "$(jq -r .node "$SPOOL/results/c-W1.json")" = c7 &&
	wait_for "grep -qx done/c-W1.json \"$TRASH/wake.out\"" 5 && ok=1
	kill $sub 2>/dev/null; wait $sub 2>/dev/null
	stop_daemon c6 && stop_daemon c7 && test $ok = 1
'

test_done
