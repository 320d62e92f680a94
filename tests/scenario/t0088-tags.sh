#!/bin/sh
# Node tags (issue 15 item 4; README.md "Node tags"), in embedded mode
# (file heartbeats, flock leases) and then in cluster mode (Redis:
# $TS_TEST_REDIS, else its own server).  Two daemons, 1 with tags = gpu,
# 2 with none, both with every hook:
#  - each node advertises its tags (`taskspool nodes --json` .tags, the
#    text listing's tags=);
#  - 20 tasks with requireTags ["gpu"] (route any, round_robin,
#    least_active): all SUCCESS, every attempt on node 1 (results'
#    attempts[].node), nothing in corrupt/;
#  - the fires of a job with route tag:gpu carry requireTags ["gpu"] and
#    run on node 1;
#  - a gpu task put in queue/2/ goes back to incoming/, runs on node 1;
#  - node:2 with requireTags gpu waits with "node '2' lacks tags 'gpu'";
#  - route tag:ssd waits WAITING with "no live node has tags 'ssd'"
#    (status, list --state WAITING) in incoming/ while no node has ssd,
#    and runs on node 2 once it restarts with tags = ssd;
#  - requireTags that is not an array, or has a duplicate, dropped into
#    incoming/: corrupt/ with a reason naming requireTags;
#  - the API: POST /api/tasks with requireTags runs on node 1; a GET of a
#    waiting one shows requireTags; a duplicate is 422 naming
#    requireTags[1]; the CLI's submit --require-tag runs on node 1, a bad
#    name is exit 64;
#  - SIGHUP reads tags again (embedded): advertised at once, the task that
#    waited for them runs; a bad value is refused, the old tags kept.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
trap 'api_stop; redis_teardown' EXIT
TSAPI="$API_HERE/contrib/clients/tsapi.sh"
echo "fsync = 0" >>"$CONF"
api_server
export TS_APP_ID=tester
TS_SECRET=$(ts apps add tester --codes probe) || exit 1
export TS_SECRET

# ran_on ID: the nodes of task ID's attempts (from its result), joined.
ran_on() { jq -r '[.attempts[].node] | unique | join(",")' "$SPOOL/results/$1.json"; }

# reason_is ID TEXT: task ID is WAITING with reason TEXT (status, text
# and --json).
reason_is() {
	test "$(ts status "$1")" = "$1 WAITING ($2)" &&
	ts --json status "$1" | jq -e --arg r "$2" '.status == "WAITING" and .reason == $r' >/dev/null
}

phase() {	# phase M: the scenario with prefix M (e = embedded, c = cluster)
M=$1
N1=${M}1 N2=${M}2

test_expect_success "$M: two daemons, $N1 with tags gpu, $N2 none, both advertised" '
	start_daemon $N1 -j 4 -o tags=gpu &&
	start_daemon $N2 -j 4 &&
	wait_for "test \$(ts nodes | grep -c \" alive \") = 2" 20 &&
	ts nodes --json >"$TRASH/$M.nodes" && cat "$TRASH/$M.nodes" &&
	test "$(jq -c ".[] | select(.node == \"$N1\") | .tags" "$TRASH/$M.nodes")" = "[\"gpu\"]" &&
	test "$(jq -c ".[] | select(.node == \"$N2\") | .tags" "$TRASH/$M.nodes")" = "[]" &&
	ts nodes | grep -q "^$N1 alive .* tags=gpu" &&
	! ts nodes | grep "^$N2 " | grep -q tags= &&
	grep -qx "tags=gpu" "$SPOOL/state/heartbeat.$N1" &&
	sleep 1		# the dispatcher re-reads the registry every 0.5 s
'

test_expect_success "$M: 20 tasks requiring gpu (any, round_robin, least_active): all SUCCESS on $N1 only" '
	i=1 && while [ $i -le 20 ]; do
		case $((i % 3)) in
		0) r="";; 1) r=",\"route\":\"round_robin\"";;
		2) r=",\"route\":\"least_active\"";; esac
		drop "$M-g$i.json" "{\"requestId\":\"$M-g$i\",\"taskCode\":\"probe\",\"requireTags\":[\"gpu\"],\"executeParams\":{\"sleep_ms\":50}$r}" || return 1
		i=$((i + 1))
	done &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^$M-g\") = 20" 60 &&
	for f in "$SPOOL"/results/$M-g*.json; do
		jq -e --arg n $N1 ".status == \"SUCCESS\" and ([.attempts[].node] | unique) == [\$n]" "$f" >/dev/null ||
		    { echo "not SUCCESS on $N1 only: $f"; jq -c "{status, attempts: [.attempts[] | {node, outcome}]}" "$f"; return 1; }
	done &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: a per-second job with route tag:gpu: its fires carry requireTags and run on $N1" '
	printf "{\"jobCode\":\"${M}job\",\"taskCode\":\"probe\",\"route\":\"tag:gpu\",\"cron\":\"* * * * * ?\",\"dialect\":\"quartz\",\"timezone\":\"UTC\"}\n" >"$TRASH/$M.job" &&
	cp "$TRASH/$M.job" "$SPOOL/tmp/$M.job" && mv "$SPOOL/tmp/$M.job" "$SPOOL/jobs/${M}job.json" &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^${M}job\.\") -ge 3" 30 &&
	ts jobs remove "${M}job" >/dev/null &&
	sleep 1 &&
	for f in "$SPOOL"/done/${M}job.*.json; do
		id=$(basename "$f" .json) &&
		jq -e ".requireTags == [\"gpu\"] and (has(\"route\") | not)" "$f" >/dev/null &&
		test "$(ran_on $id)" = $N1 || { echo "$f: $(cat "$f")"; return 1; }
	done &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: a gpu task found in queue/$N2/ goes back to incoming/ and runs on $N1" '
	test -d "$SPOOL/queue/$N2" &&
	printf "{\"requestId\":\"$M-q\",\"taskCode\":\"probe\",\"requireTags\":[\"gpu\"]}" >"$SPOOL/tmp/$M-q.json" &&
	mv "$SPOOL/tmp/$M-q.json" "$SPOOL/queue/$N2/$M-q.json" &&
	wait_terminal $M-q 20 && test "$(state_of $M-q)" = done &&
	test "$(ran_on $M-q)" = $N1 &&
	grep -q "$M-q: in queue/$N2/ but this node lacks some of its tags \"gpu\" (tags = none); back to incoming/" "$TRASH/log.$N2"
'

test_expect_success "$M: node:$N2 requiring gpu waits ($N2 lacks the tag)" '
	drop "$M-nb.json" "{\"requestId\":\"$M-nb\",\"taskCode\":\"probe\",\"requireTags\":[\"gpu\"],\"route\":\"node:$N2\"}" &&
	wait_for "ts status $M-nb | grep -q WAITING" 10 &&
	reason_is $M-nb "node '"'"'$N2'"'"' lacks tags '"'"'gpu'"'"'" &&
	test -f "$SPOOL/incoming/$M-nb.json"
'

test_expect_success "$M: route tag:ssd no live node has: WAITING with the reason for 3 s, in incoming/, never corrupt/" '
	drop "$M-ssd.json" "{\"requestId\":\"$M-ssd\",\"taskCode\":\"probe\",\"route\":\"tag:ssd\"}" &&
	wait_for "ts status $M-ssd | grep -q WAITING" 10 &&
	sleep 3 &&
	reason_is $M-ssd "no live node has tags '"'"'ssd'"'"'" &&
	ts list --state WAITING >"$TRASH/$M.waiting" && cat "$TRASH/$M.waiting" &&
	grep -E "^WAITING +$M-ssd +probe +- +no live node has tags '"'"'ssd'"'"'\$" "$TRASH/$M.waiting" &&
	test -f "$SPOOL/incoming/$M-ssd.json" &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: $N2 restarted with tags ssd: the tag:ssd task runs there" '
	stop_daemon $N2 &&
	start_daemon $N2 -j 4 -o tags=ssd &&
	wait_terminal $M-ssd 20 && test "$(state_of $M-ssd)" = done &&
	test "$(ran_on $M-ssd)" = $N2 &&
	test ! -e "$SPOOL/state/waiting/$M-ssd" &&
	reason_is $M-nb "node '"'"'$N2'"'"' lacks tags '"'"'gpu'"'"'" &&
	ts cancel $M-nb >/dev/null &&
	wait_terminal $M-nb 20 && test "$(state_of $M-nb)" = cancelled
'

test_expect_success "$M: malformed requireTags dropped into incoming/: corrupt/ naming requireTags" '
	drop "$M-bad1.json" "{\"requestId\":\"$M-bad1\",\"taskCode\":\"probe\",\"requireTags\":\"gpu\"}" &&
	drop "$M-bad2.json" "{\"requestId\":\"$M-bad2\",\"taskCode\":\"probe\",\"requireTags\":[\"gpu\",\"gpu\"]}" &&
	drop "$M-bad3.json" "{\"requestId\":\"$M-bad3\",\"taskCode\":\"probe\",\"requireTags\":[\"g/pu\"]}" &&
	wait_for "test -f $SPOOL/corrupt/$M-bad1.json.reason && test -f $SPOOL/corrupt/$M-bad2.json.reason && test -f $SPOOL/corrupt/$M-bad3.json.reason" 20 &&
	cat "$SPOOL"/corrupt/$M-bad*.reason &&
	grep -q "^requireTags: must be an array of tag names" "$SPOOL/corrupt/$M-bad1.json.reason" &&
	grep -q "^requireTags\[1\]: duplicate tag \"gpu\"" "$SPOOL/corrupt/$M-bad2.json.reason" &&
	grep -q "^requireTags\[0\]: must match" "$SPOOL/corrupt/$M-bad3.json.reason" &&
	rm -f "$SPOOL"/corrupt/$M-bad*
'

test_expect_success "$M: API: requireTags runs on $N1, a waiting one shows them, a duplicate is 422" '
	printf "{\"requestId\":\"$M-api\",\"taskCode\":\"probe\",\"requireTags\":[\"gpu\"]}" >"$TRASH/$M-api.json" &&
	sh "$TSAPI" submit "$TRASH/$M-api.json" >"$TRASH/out" &&
	test "$(jq -r .status "$TRASH/out")" = PENDING &&
	sh "$TSAPI" wait $M-api 30 >"$TRASH/out" &&
	test "$(ran_on $M-api)" = $N1 &&
	printf "{\"requestId\":\"$M-apiw\",\"taskCode\":\"probe\",\"requireTags\":[\"fpga\",\"gpu\"]}" >"$TRASH/$M-apiw.json" &&
	sh "$TSAPI" submit "$TRASH/$M-apiw.json" >"$TRASH/out" &&
	wait_for "ts status $M-apiw | grep -q WAITING" 10 &&
	reason_is $M-apiw "no live node has tags '"'"'fpga,gpu'"'"'" &&
	sh "$TSAPI" get $M-apiw >"$TRASH/out" && cat "$TRASH/out" &&
	jq -e ".status == \"WAITING\" and .requireTags == [\"fpga\",\"gpu\"]" "$TRASH/out" &&
	ts cancel $M-apiw >/dev/null &&
	printf "{\"requestId\":\"$M-api2\",\"taskCode\":\"probe\",\"requireTags\":[\"gpu\",\"gpu\"]}" >"$TRASH/$M-api2.json" &&
	rc=0 && sh "$TSAPI" submit "$TRASH/$M-api2.json" >"$TRASH/out" || rc=$? &&
	test $rc = 1 && cat "$TRASH/out" &&
	test "$(jq -r .code "$TRASH/out")" = VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/out")" = "requireTags[1]" &&
	test ! -e "$SPOOL/incoming/$M-api2.json"
'

test_expect_success "$M: CLI: submit --require-tag runs on $N1; a bad name is exit 64" '
	ts submit --code probe --id $M-cli --require-tag gpu >/dev/null &&
	wait_terminal $M-cli 20 && test "$(state_of $M-cli)" = done &&
	test "$(ran_on $M-cli)" = $N1 &&
	rc=0 && ts submit --code probe --require-tag "g pu" 2>"$TRASH/err" || rc=$? &&
	test $rc = 64 && grep -q "require-tag" "$TRASH/err" &&
	rc=0 && ts submit --code probe --require-tag gpu --require-tag gpu 2>"$TRASH/err" || rc=$? &&
	test $rc = 65 && grep -q "requireTags\[1\]: duplicate" "$TRASH/err"
'

test_expect_success "$M: daemons stop" 'stop_daemon $N1 && stop_daemon $N2'
}

phase e

# Tags are read again on SIGHUP: a daemon with its own configuration file
# (the later -c wins) given tags = late advertises them at once and runs
# the task that waited for them (embedded mode, a 60 s heartbeat).
test_expect_success 'e: SIGHUP reads tags again, advertises them at once, the waiting task runs' '
	cp "$CONF" "$TRASH/h.conf" &&
	start_daemon h -c "$TRASH/h.conf" -o heartbeat_ms=60000 &&
	grep -qx "tags=" "$SPOOL/state/heartbeat.h" &&
	drop e-late.json "{\"requestId\":\"e-late\",\"taskCode\":\"probe\",\"route\":\"tag:late\"}" &&
	wait_for "ts status e-late | grep -q WAITING" 10 &&
	reason_is e-late "no live node has tags '"'"'late'"'"'" &&
	echo "tags = late" >>"$TRASH/h.conf" &&
	kill -HUP "$(daemon_pid h)" &&
	wait_for "grep -qx tags=late $SPOOL/state/heartbeat.h" 10 &&
	wait_terminal e-late 20 && test "$(state_of e-late)" = done &&
	test "$(ran_on e-late)" = h &&
	echo "tags = la te" >>"$TRASH/h.conf" &&
	kill -HUP "$(daemon_pid h)" &&
	wait_for "grep -q \"SIGHUP: configuration not reloaded: .*tags: \\\"la te\\\" does not match\" $TRASH/log.h" 10 &&
	grep -qx "tags=late" "$SPOOL/state/heartbeat.h" &&
	stop_daemon h
'

redis_setup
phase c

test_done
