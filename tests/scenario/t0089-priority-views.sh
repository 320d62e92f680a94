#!/bin/sh
# Where a task's priority shows (issue 15 item 1; README.md "Priorities"),
# embedded mode, one daemon with one slot held by a gate task so that the
# others stay PENDING while they are looked at:
#  - `submit --priority 7`: `list` prints "priority 7" after the node
#    column (nothing for the default 5), `list --json` and `status --json`
#    give 7 and 5, `status` prints "priority 7";
#  - `submit --priority 10` exits 65 naming priority, `--priority x` 64;
#  - the API: POST with "priority": 2 is 202 and GET shows 2 while the
#    task is not finished; "priority": 12 is 422 VALIDATION_FAILED with
#    errors[0].field priority;
#  - the metric taskspool_priority_wait_seconds counts the first attempt
#    of each task under its priority label once they ran.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
trap 'api_cleanup' EXIT
TSAPI="$API_HERE/contrib/clients/tsapi.sh"
echo "fsync = 0" >>"$CONF"
api_server
export TS_APP_ID=tester
TS_SECRET=$(ts apps add tester --codes rec) || exit 1
export TS_SECRET

# rec: a gate (id gate) waits for $TRASH/go; the others end at once.
cat >"$HOOKS/rec" <<H
#!/bin/sh
if [ "\$TASKSPOOL_REQUEST_ID" = gate ]; then
	i=0
	while [ ! -e "$TRASH/go" ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
fi
exit 0
H
chmod +x "$HOOKS/rec"

# pcount P: the metric's count of first attempts of priority P on n1.
pcount() {
	sed -n "s/^taskspool_priority_wait_seconds_count{node=\"n1\",priority=\"$1\"} //p" \
	    "$SPOOL/metrics/n1.prom" 2>/dev/null
}

test_expect_success 'one slot held by the gate; p7 (--priority 7) and pd (none) wait' '
	start_daemon n1 -j 1 -o metrics_interval_ms=200 &&
	ts submit --code rec --id gate >/dev/null &&
	wait_for "ls \"\$SPOOL\"/active/*/gate.json >/dev/null 2>&1" 10 &&
	ts submit --code rec --id p7 --priority 7 >/dev/null &&
	ts submit --code rec --id pd >/dev/null
'

test_expect_success 'list: "priority 7" after the node column, nothing for the default' '
	ts list --state PENDING >"$TRASH/list" && cat "$TRASH/list" &&
	test "$(awk "\$2 == \"p7\" { print \$5, \$6 }" "$TRASH/list")" = "priority 7" &&
	test "$(awk "\$2 == \"pd\" { print NF }" "$TRASH/list")" = 4 &&
	ts --json list --state PENDING >"$TRASH/list.json" &&
	test "$(jq ".[] | select(.requestId == \"p7\") | .priority" "$TRASH/list.json")" = 7 &&
	test "$(jq ".[] | select(.requestId == \"pd\") | .priority" "$TRASH/list.json")" = 5
'

test_expect_success 'status: priority 7 (text and --json), 5 for none' '
	test "$(ts status p7)" = "p7 PENDING priority 7" &&
	test "$(ts --json status p7 | jq .priority)" = 7 &&
	test "$(ts --json status pd | jq .priority)" = 5
'

test_expect_success 'submit --priority 10: 65 naming priority; --priority x: 64' '
	rc=0 && ts submit --code rec --id p10 --priority 10 2>"$TRASH/err" || rc=$? &&
	test $rc = 65 && grep -q "priority: must be an integer 0..9" "$TRASH/err" &&
	rc=0 && ts submit --code rec --id px --priority x 2>"$TRASH/err" || rc=$? &&
	test $rc = 64 && grep -q -- "--priority" "$TRASH/err" &&
	test ! -e "$SPOOL/incoming/p10.json" && test ! -e "$SPOOL/incoming/px.json"
'

test_expect_success 'API: priority 2 is kept and shown by GET; 12 is 422 naming priority' '
	printf "{\"requestId\":\"pa\",\"taskCode\":\"rec\",\"priority\":2}" >"$TRASH/pa.json" &&
	sh "$TSAPI" submit "$TRASH/pa.json" >"$TRASH/out" &&
	sh "$TSAPI" get pa >"$TRASH/get" &&
	test "$(jq -r .status "$TRASH/get")" = PENDING &&
	test "$(jq .priority "$TRASH/get")" = 2 &&
	printf "{\"requestId\":\"pb\",\"taskCode\":\"rec\",\"priority\":12}" >"$TRASH/pb.json" &&
	rc=0 && sh "$TSAPI" submit "$TRASH/pb.json" >"$TRASH/out" 2>&1 || rc=$? &&
	test $rc != 0 && cat "$TRASH/out" &&
	grep -q "VALIDATION_FAILED" "$TRASH/out" &&
	grep -q "\"field\": *\"priority\"" "$TRASH/out"
'

test_expect_success 'after the gate: p7, pd, pa ran in priority order; the metric counts each under its priority' '
	touch "$TRASH/go" &&
	wait_terminal p7 20 && wait_terminal pd 20 && wait_terminal pa 20 &&
	s7=$(jq -r .startedAt "$SPOOL/results/p7.json") &&
	s5=$(jq -r .startedAt "$SPOOL/results/pd.json") &&
	s2=$(jq -r .startedAt "$SPOOL/results/pa.json") &&
	echo "# started: p7 $s7, pd $s5, pa $s2" &&
	# startedAt has millisecond resolution (two starts can share one):
	# not decreasing in priority order, and the log, written in the
	# order of the starts, names them p7, pd, pa.
	printf "%s\n" "$s7" "$s5" "$s2" | LC_ALL=C sort -c &&
	test "$(sed -n "s/.*: \(p[7da]\): attempt 1 started.*/\1/p" "$TRASH/log.n1" | tr "\n" " ")" = "p7 pd pa " &&
	wait_for "test \"\$(pcount 7)\" = 1" 10 &&
	grep "^taskspool_priority_wait_seconds_count" "$SPOOL/metrics/n1.prom" &&
	# the gate and pd: the default 5
	test "$(pcount 5)" = 2 && test "$(pcount 2)" = 1 && test "$(pcount 9)" = 0
'

test_done
