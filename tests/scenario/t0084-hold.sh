#!/bin/sh
# Holding and releasing tasks (issue 14 item 3; Postfix's hold queue,
# postsuper -h / -H), in embedded mode and then in cluster mode (Redis
# leases and index), one daemon with one slot so the order of hook
# starts is the claim order:
#  - a spool made before hold/ existed: the CLI works on it, `hold`
#    exits 74 saying what to do; a daemon's start, or `taskspool init`,
#    adds hold/ and state/hold/;
#  - 10 pending tasks o01..o10; o03 o05 o07 held (hold/, HELD in status and
#    list), released in the order o05 o03 o07; the daemon started then
#    finds them in readdir order and claims in mtime order: the hooks
#    start o01 o02 ... o10, their submit order (names break ties of the
#    coarse file times);
#  - held tasks never run: p2 p3 stay in hold/ while p1 p4 run and
#    finish; `release --all` → they run;
#  - a running task held: its hook exits 75, the retry sits in hold/
#    (attempt 1 recorded, not run again), `release` → attempt 2 runs,
#    SUCCESS; the marker is gone after;
#  - `hold --code C` holds the pending tasks of C (and counts them),
#    cancel of a held task ends CANCELLED with a result, `release --code`;
#  - hold of a finished task exits 69, of an unknown one 66, of a held
#    one 0 ("already held"); release of one not held says so (0);
#  - a marker written but the task not moved (the crash state): the node
#    that would claim it, from incoming/ or its queue/, moves it to hold/;
#  - a daemon restart keeps held tasks in hold/; released, they run;
#  - the API (lighttpd, signed by contrib/clients/tsapi.sh): POST
#    /api/tasks/{id}/hold 200 HELD, GET shows HELD, a second hold 200,
#    another app's task 404, release 200 PENDING, the task runs; a
#    finished task 409 TASK_FINISHED; a body with a member 422; GET on
#    the route 405 (embedded mode).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
. "$(dirname "$0")/api-lib.sh"
trap 'api_stop; redis_teardown' EXIT
TSAPI="$(cd "$(dirname "$0")/../.." && pwd)/contrib/clients/tsapi.sh"

# rec: records its id in $TRASH/order; a gate (id *-g*) waits for
# $TRASH/go.<id>; flaky exits 75 at its first attempt, after go.<id>.
cat >"$HOOKS/rec" <<H
#!/bin/sh
echo "\$TASKSPOOL_REQUEST_ID" >>"$TRASH/order"
case \$TASKSPOOL_REQUEST_ID in
*-g*)	i=0
	while [ ! -e "$TRASH/go.\$TASKSPOOL_REQUEST_ID" ] && [ \$i -lt 300 ]; do
		sleep 0.1; i=\$((i + 1))
	done;;
esac
exit 0
H
cat >"$HOOKS/flaky" <<H
#!/bin/sh
echo "\$TASKSPOOL_REQUEST_ID \$TASKSPOOL_ATTEMPT" >>"$TRASH/flaky"
[ "\$TASKSPOOL_ATTEMPT" -gt 1 ] && exit 0
i=0
while [ ! -e "$TRASH/go.\$TASKSPOOL_REQUEST_ID" ] && [ \$i -lt 300 ]; do
	sleep 0.1; i=\$((i + 1))
done
exit 75
H
cp "$HOOKS/rec" "$HOOKS/rec2"
chmod +x "$HOOKS/rec" "$HOOKS/rec2" "$HOOKS/flaky"

# gate ID: submit a gate task and wait until its hook runs.
gate() {
	ts submit --code rec --id "$1" >/dev/null &&
	wait_for "grep -qx \"$1\" \"$TRASH/order\""
}
# started ID...: the ids of $TRASH/order after the last gate, joined.
order_of() { grep -v -- "-g" "$TRASH/order" | grep "^$1" | tr "\n" " "; }

test_expect_success "a spool made before hold/: taskspool init or a daemon adds hold/ and state/hold/ (2770)" '
	test "$(stat -c %a "$SPOOL/hold") $(stat -c %a "$SPOOL/state/hold")" = "2770 2770" &&
	rmdir "$SPOOL/hold" "$SPOOL/state/hold" &&
	ts submit --code rec --id old-1 >/dev/null && ts list | grep -q old-1 &&
	rc=0 && ts hold old-1 2>"$TRASH/old.err" || rc=$? &&
	test $rc = 74 && grep -q "state/hold/ is missing (a spool made before holds existed: a daemon creates it" "$TRASH/old.err" &&
	ts cancel old-1 >/dev/null &&
	start_daemon o1 && stop_daemon o1 &&
	test "$(stat -c %a "$SPOOL/hold") $(stat -c %a "$SPOOL/state/hold")" = "2770 2770" &&
	rmdir "$SPOOL/hold" "$SPOOL/state/hold" &&
	ts init "$SPOOL" >/dev/null &&
	test "$(stat -c %a "$SPOOL/hold") $(stat -c %a "$SPOOL/state/hold")" = "2770 2770"
'

phase() {	# phase M: the scenario with prefix M (e embedded, c cluster)
M=$1

test_expect_success "$M: hold 3 of 10 pending tasks, release them: the order is kept" '
	: >"$TRASH/order" &&
	for i in 01 02 03 04 05 06 07 08 09 10; do
		ts submit --code rec --id $M-o$i >/dev/null || return 1
	done &&
	for i in 03 05 07; do
		ts hold $M-o$i >"$TRASH/$M.hold.out" &&
		grep -q "^$M-o$i HELD: moved from incoming/ to hold/" "$TRASH/$M.hold.out" &&
		test -e "$SPOOL/hold/$M-o$i.json" &&
		test -e "$SPOOL/state/hold/$M-o$i" || return 1
	done &&
	ts status $M-o05 | grep -q "^$M-o05 HELD (held since .*, from incoming/, by cli uid " &&
	test "$(ts list --state HELD | wc -l)" = 3 &&
	test "$(ts --json status $M-o03 | jq -r .status)" = HELD &&
	for i in 05 03 07; do
		ts release $M-o$i | grep -q "^$M-o$i PENDING: moved from hold/ to incoming/" || return 1
	done &&
	test ! -e "$SPOOL/state/hold/$M-o03" &&
	start_daemon ${M}1 -j 1 &&
	for i in 01 02 03 04 05 06 07 08 09 10; do wait_terminal $M-o$i || return 1; done &&
	test "$(order_of $M-o)" = "$M-o01 $M-o02 $M-o03 $M-o04 $M-o05 $M-o06 $M-o07 $M-o08 $M-o09 $M-o10 "
'

test_expect_success "$M: held tasks never run; release --all puts them back" '
	: >"$TRASH/order" &&
	gate $M-g2 &&
	for i in 1 2 3 4; do ts submit --code rec --id $M-p$i >/dev/null || return 1; done &&
	ts hold $M-p2 >/dev/null && ts hold $M-p3 >/dev/null &&
	touch "$TRASH/go.$M-g2" &&
	wait_terminal $M-p1 && wait_terminal $M-p4 && sleep 1.5 &&
	test -e "$SPOOL/hold/$M-p2.json" && test -e "$SPOOL/hold/$M-p3.json" &&
	test "$(order_of $M-p)" = "$M-p1 $M-p4 " &&
	ts release --all >"$TRASH/$M.rel.out" &&
	grep -q "^released 2 task(s)$" "$TRASH/$M.rel.out" &&
	wait_terminal $M-p2 && wait_terminal $M-p3 &&
	test "$(jq -r .status "$SPOOL/results/$M-p3.json")" = SUCCESS &&
	test -z "$(ls -A "$SPOOL/hold")"
'

test_expect_success "$M: a running task held: its retry sits in hold/ until released" '
	: >"$TRASH/flaky" &&
	ts submit --code flaky --id $M-f1 --retries 3 >/dev/null &&
	wait_for "grep -q \"^$M-f1 1\$\" \"$TRASH/flaky\"" &&
	ts hold $M-f1 >"$TRASH/$M.hf.out" &&
	grep -q "^$M-f1 HOLD_REQUESTED: it runs now; its next retry" "$TRASH/$M.hf.out" &&
	ts status $M-f1 | grep -q "RUNNING on ${M}1 (attempt 1) (hold requested .*: its next retry is held)" &&
	touch "$TRASH/go.$M-f1" &&
	wait_for "test -e \"$SPOOL/hold/$M-f1.json\"" &&
	# (the log line follows the move: wait for it too)
	wait_for "grep -q \"retry .* held in hold/\" \"$TRASH/log.${M}1\"" 10 &&
	sleep 1.5 &&
	test -e "$SPOOL/hold/$M-f1.json" &&
	test "$(wc -l <"$TRASH/flaky")" = 1 &&
	test "$(jq -r ".attempts | length" "$SPOOL/hold/$M-f1.json")" = 1 &&
	ts status $M-f1 | grep -q "^$M-f1 HELD (held since .*, from active/" &&
	ts release $M-f1 >/dev/null &&
	wait_terminal $M-f1 &&
	test "$(jq -r ".status, (.attempts | length)" "$SPOOL/results/$M-f1.json" | tr "\n" " ")" = "SUCCESS 2 " &&
	test ! -e "$SPOOL/state/hold/$M-f1"
'

test_expect_success "$M: hold --code; cancel of a held task; release --code" '
	: >"$TRASH/order" &&
	gate $M-g3 &&
	for i in 1 2 3; do ts submit --code rec2 --id $M-k$i >/dev/null || return 1; done &&
	ts submit --code rec --id $M-r1 >/dev/null &&
	ts hold --code rec2 >"$TRASH/$M.hc.out" &&
	grep -q "^held 3 task(s) of code rec2$" "$TRASH/$M.hc.out" &&
	test -e "$SPOOL/incoming/$M-r1.json" &&
	ts cancel $M-k2 | grep -q "^$M-k2 CANCELLED$" &&
	test "$(jq -r .status "$SPOOL/results/$M-k2.json")" = CANCELLED &&
	test ! -e "$SPOOL/state/hold/$M-k2" &&
	ts release --code rec2 | grep -q "^released 2 task(s) of code rec2$" &&
	touch "$TRASH/go.$M-g3" &&
	wait_terminal $M-k1 && wait_terminal $M-k3 && wait_terminal $M-r1 &&
	test "$(order_of $M-)" = "$M-k1 $M-k3 $M-r1 "
'

test_expect_success "$M: finished 69, unknown 66, already held 0, not held 0" '
	rc=0 && ts hold $M-o01 2>"$TRASH/$M.err" || rc=$? &&
	test $rc = 69 && grep -q "already finished (SUCCESS): nothing to hold" "$TRASH/$M.err" &&
	test ! -e "$SPOOL/state/hold/$M-o01" &&
	rc=0 && ts hold $M-nosuch 2>"$TRASH/$M.err" || rc=$? &&
	test $rc = 66 && grep -q "no task $M-nosuch" "$TRASH/$M.err" &&
	test ! -e "$SPOOL/state/hold/$M-nosuch" &&
	ts submit --code rec --id $M-a1 --delay 60000 >/dev/null &&
	wait_for "test -e \"$SPOOL/delayed/$M-a1.json\"" &&
	ts hold $M-a1 | grep -q "^$M-a1 HELD: moved from delayed/" &&
	ts hold $M-a1 | grep -q "^$M-a1 HELD: already held" &&
	ts release $M-a1 | grep -q "^$M-a1 PENDING: moved from hold/ to delayed/" &&
	ts release $M-a1 | grep -q "^$M-a1 NOT_HELD: not held (PENDING)" &&
	rc=0 && ts hold 2>/dev/null || rc=$? && test $rc = 64 &&
	ts cancel $M-a1 >/dev/null
'

test_expect_success "$M: a marker without the move (crash state): the claiming node holds the task" '
	for id in $M-m1 $M-m2; do
		printf "{\"requestId\":\"$id\",\"since\":\"2026-12-02T03:00:00Z\",\"from\":\"incoming\",\"by\":\"t\"}\n" >"$SPOOL/state/hold/$id" || return 1
	done &&
	drop $M-m1.json "{\"requestId\":\"$M-m1\",\"taskCode\":\"rec\"}" &&
	mkdir -p "$SPOOL/queue/${M}1" &&
	printf "{\"requestId\":\"$M-m2\",\"taskCode\":\"rec\"}" >"$SPOOL/tmp/m2" &&
	mv "$SPOOL/tmp/m2" "$SPOOL/queue/${M}1/$M-m2.json" &&
	wait_for "test -e \"$SPOOL/hold/$M-m1.json\" && test -e \"$SPOOL/hold/$M-m2.json\"" &&
	grep -q "$M-m1: held (state/hold/$M-m1): moved to hold/" "$TRASH/log.${M}1" &&
	test -z "$(ls -A "$SPOOL/queue/${M}1")" &&
	sleep 1 && ! grep -q "^$M-m" "$TRASH/order" &&
	ts release $M-m1 >/dev/null && ts release $M-m2 >/dev/null &&
	wait_terminal $M-m1 && wait_terminal $M-m2
'

test_expect_success "$M: held tasks stay held across a daemon restart" '
	: >"$TRASH/order" &&
	gate $M-g4 &&
	ts submit --code rec --id $M-s1 >/dev/null &&
	ts hold $M-s1 >/dev/null &&
	touch "$TRASH/go.$M-g4" && wait_terminal $M-g4 &&
	stop_daemon ${M}1 && start_daemon ${M}1 -j 1 && sleep 1.5 &&
	test -e "$SPOOL/hold/$M-s1.json" && ! grep -qx $M-s1 "$TRASH/order" &&
	ts release $M-s1 >/dev/null && wait_terminal $M-s1 &&
	test "$(jq -r .status "$SPOOL/results/$M-s1.json")" = SUCCESS &&
	stop_daemon ${M}1
'
}

test_expect_success "API: hold and release over HTTP" '
	api_server && api_tester &&
	OTHER=$(ts apps add other --codes echo) &&
	start_daemon a1 -j 1 &&
	: >"$TRASH/order" &&
	ts submit --code rec --id a-g1 >/dev/null &&
	wait_for "grep -qx a-g1 \"$TRASH/order\"" &&
	printf "{\"requestId\":\"api-1\",\"taskCode\":\"echo\"}" >"$TRASH/api1.json" &&
	"$TSAPI" submit "$TRASH/api1.json" >/dev/null &&
	"$TSAPI" hold api-1 >"$TRASH/api.out" &&
	test "$(jq -r .status "$TRASH/api.out")" = HELD &&
	test -e "$SPOOL/hold/api-1.json" &&
	grep -q "\"by\":\"api app tester\"" "$SPOOL/state/hold/api-1" &&
	"$TSAPI" get api-1 | jq -e ".status == \"HELD\"" >/dev/null &&
	"$TSAPI" hold api-1 | jq -e ".status == \"HELD\"" >/dev/null &&
	rc=0 && TS_APP_ID=other TS_SECRET=$OTHER "$TSAPI" hold api-1 >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = TASK_NOT_FOUND &&
	printf "{\"why\":1}" >"$TRASH/member.json" &&
	rc=0 && "$TSAPI" request POST /api/tasks/api-1/release "$TRASH/member.json" >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = VALIDATION_FAILED &&
	rc=0 && "$TSAPI" request GET /api/tasks/api-1/hold >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = METHOD_NOT_ALLOWED &&
	"$TSAPI" release api-1 >"$TRASH/api.out" &&
	test "$(jq -r .status "$TRASH/api.out")" = PENDING &&
	touch "$TRASH/go.a-g1" &&
	"$TSAPI" wait api-1 20 >/dev/null &&
	rc=0 && "$TSAPI" hold api-1 >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = TASK_FINISHED &&
	stop_daemon a1
'

test_expect_success "API: hold and release a batch (POST /api/batches/{id}/hold, /release)" '
	start_daemon a1 -j 1 &&
	: >"$TRASH/order" &&
	ts submit --code rec --id a-g2 >/dev/null &&
	wait_for "grep -qx a-g2 \"$TRASH/order\"" &&
	for i in 1 2 3; do
		printf "{\"requestId\":\"ab-$i\",\"taskCode\":\"echo\",\"batchId\":\"ab1\"}" >"$TRASH/ab$i.json" &&
		"$TSAPI" submit "$TRASH/ab$i.json" >/dev/null || return 1
	done &&
	"$TSAPI" request POST /api/batches/ab1/hold >"$TRASH/api.out" &&
	test "$(jq -c . "$TRASH/api.out")" = "{\"batchId\":\"ab1\",\"action\":\"hold\",\"held\":3,\"holdRequested\":0,\"unchanged\":0}" &&
	test -e "$SPOOL/hold/ab-1.json" && test -e "$SPOOL/hold/ab-2.json" && test -e "$SPOOL/hold/ab-3.json" &&
	grep -q "\"by\":\"api app tester\"" "$SPOOL/state/hold/ab-2" &&
	"$TSAPI" request POST /api/batches/ab1/hold >"$TRASH/api.out" &&
	test "$(jq -c "[.held, .unchanged]" "$TRASH/api.out")" = "[0,3]" &&
	rc=0 && TS_APP_ID=other TS_SECRET=$OTHER "$TSAPI" request POST /api/batches/ab1/release >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = BATCH_NOT_FOUND &&
	test -e "$SPOOL/hold/ab-1.json" &&
	rc=0 && "$TSAPI" request POST /api/batches/nosuch/hold >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = BATCH_NOT_FOUND &&
	rc=0 && "$TSAPI" request POST /api/batches/ab1/release "$TRASH/member.json" >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = VALIDATION_FAILED &&
	rc=0 && "$TSAPI" request GET /api/batches/ab1/hold >"$TRASH/api.out" || rc=$? &&
	test $rc = 1 && test "$(jq -r .code "$TRASH/api.out")" = METHOD_NOT_ALLOWED &&
	# the slot frees: the held members still do not run
	touch "$TRASH/go.a-g2" && wait_terminal a-g2 && sleep 1 &&
	test -e "$SPOOL/hold/ab-3.json" && test ! -e "$SPOOL/results/ab-1.json" &&
	"$TSAPI" get ab-2 | jq -e ".status == \"HELD\"" >/dev/null &&
	"$TSAPI" request POST /api/batches/ab1/release >"$TRASH/api.out" &&
	test "$(jq -c . "$TRASH/api.out")" = "{\"batchId\":\"ab1\",\"action\":\"release\",\"released\":3,\"requestsWithdrawn\":0,\"unchanged\":0}" &&
	for i in 1 2 3; do "$TSAPI" wait ab-$i 20 >/dev/null || return 1; done &&
	test ! -e "$SPOOL/state/hold/ab-1" &&
	stop_daemon a1
'

phase e
redis_setup
phase c

test_done
