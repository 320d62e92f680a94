#!/bin/sh
# Metrics of a dead node (issue 11 item 9): two daemons, the leader (n2,
# which sorts after n1, so that "the last node claiming it" is wrong) killed
# with -9.  Its metrics/<node>.prom stays behind, frozen; once it is older
# than 3 of its own rewrite intervals GET /metrics (build/taskspool.cgi run
# directly with CGI variables) serves it marked taskspool_metrics_stale 1
# without its gauges — no taskspool_leader, slots, queue depth or
# heartbeat ages — but with its counters and its written-at time, and
# exactly one taskspool_leader 1: the node that took over.  `taskspool
# status` names the live leader only.  Then the last daemon is killed too:
# with no fresh file left the reader's clock judges, and every file is
# stale.  A restarted node is fresh again.
. "$(dirname "$0")/test-lib.sh"

CGI="$BUILD/taskspool.cgi"
cat >>"$CONF" <<C
metrics_interval_ms = 1000
C
# The view's heartbeat limit: 3 × 3 s, generous on a loaded machine.
sed "s/^heartbeat_ms = .*/heartbeat_ms = 3000/" "$CONF" >"$TRASH/view.conf"
M="$TRASH/merged"

# scrape: GET /metrics through the CGI into $M (the body); fails unless 200.
scrape() {
	env -i PATH="$PATH" TASKSPOOL_CONFIG="$CONF" REQUEST_METHOD=GET \
	    PATH_INFO=/metrics QUERY_STRING= "$CGI" </dev/null >"$TRASH/resp" \
	    2>>"$TRASH/cgi.err" || return 1
	tr -d '\r' <"$TRASH/resp" | sed '1,/^$/d' >"$M"
	head -1 "$TRASH/resp" | grep -q "^Status: 200"
}
# value NAME{LABELS}: the value of one sample of the last scrape.
value() { awk -v k="$1" '$1 == k { print $2 }' "$M"; }
# leaders: the nodes with taskspool_leader 1 in the last scrape.
leaders() { sed -n 's/^taskspool_leader{node="\([^"]*\)"} 1$/\1/p' "$M" | sort | tr '\n' ' '; }
stale_is() { scrape && test "$(value "taskspool_metrics_stale{node=\"$1\"}")" = "$2"; }

test_expect_success 'two daemons: n2 leads, both files fresh, one leader' '
	start_daemon n2 && wait_for "grep -q \"^leader=1\$\" $SPOOL/state/heartbeat.n2" 20 &&
	start_daemon n1 &&
	ts submit --id t1 --code probe >/dev/null && wait_terminal t1 30 &&
	wait_for "stale_is n2 0 && stale_is n1 0 && test \"\$(leaders)\" = \"n2 \"" 20 &&
	cat "$M" | grep -E "^taskspool_(leader|metrics)" &&
	test "$(value "taskspool_metrics_interval_seconds{node=\"n2\"}")" = 1.000 &&
	test "$(value "taskspool_metrics_stopped{node=\"n1\"}")" = 0 &&
	promtool check metrics <"$M"
'

test_expect_success 'kill -9 of the leader: after 3 intervals its file is stale, n1 the only leader' '
	kill9_daemon n2 &&
	wait_for "stale_is n2 1" 30 &&
	now=$(date +%s.%N) && cp "$M" "$TRASH/after-kill" && cat "$M" | grep -E "^taskspool_(leader|metrics)" &&
	w=$(value "taskspool_metrics_written_timestamp_seconds{node=\"n2\"}") &&
	awk -v n="$now" -v w="$w" "BEGIN { exit !(n - w > 3) }" &&
	test "$(value "taskspool_metrics_stale{node=\"n1\"}")" = 0 &&
	wait_for "scrape && test \"\$(leaders)\" = \"n1 \"" 30 &&
	! grep -q "^taskspool_leader{node=\"n2\"}" "$M" &&
	! grep -q "^taskspool_slots{node=\"n2\"" "$M" &&
	! grep -q "^taskspool_queue_depth{node=\"n2\"" "$M" &&
	! grep -q "^taskspool_node_heartbeat_age_seconds{node=\"n2\"" "$M" &&
	grep -q "^taskspool_node_heartbeat_age_seconds{node=\"n1\",peer=\"n2\"}" "$M" &&
	grep -q "^taskspool_queue_depth{node=\"n1\",state=\"pending\"} " "$M" &&
	test -n "$(value "taskspool_retries_total{node=\"n2\"}")" &&
	test "$(value "taskspool_metrics_interval_seconds{node=\"n2\"}")" = 1.000 &&
	grep -q "^taskspool_leader{node=\"n2\"} 1$" "$SPOOL/metrics/n2.prom" &&
	promtool check metrics <"$M"
'

test_expect_success 'taskspool status names the live leader n1, not the dead n2' '
	wait_for "\"$TS\" -c \"$TRASH/view.conf\" --json status | jq -e \".nodesLive == 1\" >/dev/null" 30 &&
	"$TS" -c "$TRASH/view.conf" status >"$TRASH/status.out" && cat "$TRASH/status.out" &&
	grep -q "^NODES 1 live of 2, leader n1$" "$TRASH/status.out" &&
	grep -q "^  n1\* " "$TRASH/status.out" && grep -q "^  n2 " "$TRASH/status.out" &&
	"$TS" -c "$TRASH/view.conf" --json status >"$TRASH/status.json" &&
	test "$(jq -r ".leader" "$TRASH/status.json")" = n1 &&
	test "$(jq -c "[.nodes[] | [.node, .live, .leader]]" "$TRASH/status.json")" = "[[\"n1\",true,true],[\"n2\",false,false]]" &&
	grep -q "^leader=1$" "$SPOOL/state/heartbeat.n2"
'

test_expect_success 'the last daemon killed too: every file stale by the reader clock, no leader' '
	kill9_daemon n1 &&
	wait_for "stale_is n1 1" 30 &&
	test "$(value "taskspool_metrics_stale{node=\"n2\"}")" = 1 &&
	test "$(leaders)" = "" && ! grep -q "^taskspool_leader{" "$M" &&
	test -n "$(value "taskspool_metrics_written_timestamp_seconds{node=\"n1\"}")" &&
	wait_for "\"$TS\" -c \"$TRASH/view.conf\" --json status | jq -e \".nodesLive == 0 and .leader == null\" >/dev/null" 30 &&
	"$TS" -c "$TRASH/view.conf" status | grep "^NODES 0 live of 2, leader none$"
'

test_expect_success 'n2 restarted: fresh again, the leader again' '
	start_daemon n2 &&
	wait_for "stale_is n2 0 && test \"\$(leaders)\" = \"n2 \"" 30 &&
	test "$(value "taskspool_metrics_stale{node=\"n1\"}")" = 1 &&
	"$TS" -c "$TRASH/view.conf" status | grep "^NODES 1 live of 2, leader n2$"
'

test_expect_success 'a clean stop: the last file says stopped, and goes stale like any' '
	stop_daemon n2 &&
	grep -q "^taskspool_metrics_stopped{node=\"n2\"} 1$" "$SPOOL/metrics/n2.prom" &&
	wait_for "stale_is n2 1" 30 &&
	test "$(value "taskspool_metrics_stopped{node=\"n2\"}")" = 1
'

test_done
