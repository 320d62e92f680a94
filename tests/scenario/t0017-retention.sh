#!/bin/sh
# Retention without logrotate (issue 13 item 6): `taskspool purge
# --older-than D` removes finished tasks (done/, failed/, cancelled/ with
# their results and logs) and corrupt/ files whose time is past D, leaves
# younger ones, and adds what it removed to state/purge, which a running
# daemon's metrics file shows as taskspool_purge_removed_total{dir} and
# taskspool_purge_last_run_timestamp_seconds.  The counts are the files
# laid out here, counted by hand.
. "$(dirname "$0")/test-lib.sh"

cat >>"$CONF" <<C
metrics_interval_ms = 200
C
printf '#!/bin/sh\nexit 3\n' >"$HOOKS/fail" && chmod +x "$HOOKS/fail"
m="$SPOOL/metrics/n1.prom"
metric() { awk -v k="$1" '$1 == k { print $2 }' "$m"; }
old() { touch -d "10 days ago" "$@"; }

test_expect_success 'three done, one failed, two corrupt files: all made old but one of each' '
	start_daemon n1 &&
	for i in 1 2 3 4; do ts submit --code probe --id ok$i >/dev/null || return 1; done &&
	ts submit --code fail --id bad1 --retries 0 >/dev/null &&
	printf "{\"taskCode\":\"probe\",\"bogus\":1}" >"$SPOOL/incoming/c1.json" &&
	printf "{\"taskCode\":\"probe\",\"bogus\":2}" >"$SPOOL/incoming/c2.json" &&
	for i in ok1 ok2 ok3 ok4 bad1; do wait_terminal $i || return 1; done &&
	wait_for "test -f \"$SPOOL/corrupt/c2.json.reason\"" &&
	for i in ok1 ok2 ok3 bad1; do
		old "$SPOOL/results/$i.json" "$SPOOL"/*/"$i.json" || return 1
	done &&
	old "$SPOOL/corrupt/c1.json" "$SPOOL/corrupt/c1.json.reason"
'

test_expect_success 'before any purge: the counters are 0, no last run' '
	wait_for "grep -q taskspool_purge_removed_total \"$m\"" &&
	test "$(metric "taskspool_purge_removed_total{node=\"n1\",dir=\"done\"}")" = 0 &&
	! grep -q "^taskspool_purge_last_run_timestamp_seconds" "$m"
'

test_expect_success '--dry-run lists, removes nothing, counts nothing' '
	ts purge --older-than 7d --dry-run >"$TRASH/dry" &&
	test "$(sort "$TRASH/dry" | tr "\n" " ")" = "corrupt/c1.json done/ok1 done/ok2 done/ok3 failed/bad1 " &&
	test -f "$SPOOL/done/ok1.json" && test -f "$SPOOL/corrupt/c1.json" &&
	test ! -f "$SPOOL/state/purge"
'

test_expect_success 'purge --older-than 7d: the old ones go, the young stay' '
	ts purge --older-than 7d >"$TRASH/out" &&
	grep -q "^purged 4 task(s) from the spool, 1 file(s) from corrupt/$" "$TRASH/out" &&
	for i in ok1 ok2 ok3; do
		test ! -e "$SPOOL/done/$i.json" && test ! -e "$SPOOL/results/$i.json" &&
		test ! -e "$SPOOL/logs/$i" || return 1
	done &&
	test ! -e "$SPOOL/failed/bad1.json" &&
	test ! -e "$SPOOL/corrupt/c1.json" && test ! -e "$SPOOL/corrupt/c1.json.reason" &&
	test -f "$SPOOL/done/ok4.json" && test -f "$SPOOL/results/ok4.json" &&
	test -f "$SPOOL/corrupt/c2.json" && test -f "$SPOOL/corrupt/c2.json.reason"
'

test_expect_success 'the daemon metrics show what was removed, and when' '
	wait_for "grep -q \"^taskspool_purge_last_run_timestamp_seconds\" \"$m\"" &&
	test "$(metric "taskspool_purge_removed_total{node=\"n1\",dir=\"done\"}")" = 3 &&
	test "$(metric "taskspool_purge_removed_total{node=\"n1\",dir=\"failed\"}")" = 1 &&
	test "$(metric "taskspool_purge_removed_total{node=\"n1\",dir=\"cancelled\"}")" = 0 &&
	test "$(metric "taskspool_purge_removed_total{node=\"n1\",dir=\"corrupt\"}")" = 1 &&
	t=$(metric "taskspool_purge_last_run_timestamp_seconds{node=\"n1\"}") &&
	awk -v t="$t" -v now="$(date +%s)" "BEGIN { exit !(t > now - 60 && t <= now + 1) }"
'

test_expect_success 'a second purge adds to the totals (a counter)' '
	old "$SPOOL/results/ok4.json" "$SPOOL/done/ok4.json" &&
	ts purge --older-than 7d >"$TRASH/out2" &&
	grep -q "^purged 1 task(s) from the spool$" "$TRASH/out2" &&
	grep -qx "done=4" "$SPOOL/state/purge" &&
	grep -qx "corrupt=1" "$SPOOL/state/purge"
'

test_expect_success 'a damaged state/purge starts the totals again, without failing the purge' '
	printf "done=x\n" >"$SPOOL/state/purge" &&
	ts purge --older-than 7d >/dev/null &&
	grep -qx "done=0" "$SPOOL/state/purge"
'

test_done
