#!/bin/sh
# The requestId index of cluster mode: `taskspool status ID` answers from
# the Redis hash idx:<ID> when there is one, and what it says equals what
# the spool says (the same command with a configuration without redis)
# for tasks running, waiting for a retry, delayed, done, failed and
# cancelled.  After FLUSHALL the leader rebuilds the index from the spool
# (the unfinished tasks are indexed again, finished ones are read from
# the spool) and nothing is lost.  Always its own redis-server (FLUSHALL).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup private
cat >>"$CONF" <<CONF
retry_base_ms = 600000
retry_max_ms = 600000
retry_jitter_pct = 0
reap_interval_ms = 200
CONF
grep -v "^redis" "$CONF" >"$TRASH/spool.conf"

# same_status ID: index and spool agree (text; JSON without .source);
# prints the index side's source.
same_status() {
	a=$(ts status "$1") && b=$("$TS" -c "$TRASH/spool.conf" status "$1") &&
	test "$a" = "$b" || { echo "# $1: index \"$a\" spool \"$b\""; return 1; }
	ts --json status "$1" >"$TRASH/ji" &&
	"$TS" -c "$TRASH/spool.conf" --json status "$1" >"$TRASH/js" &&
	jq -e '.source == "spool"' "$TRASH/js" >/dev/null &&
	test "$(jq -cS 'del(.source)' "$TRASH/ji")" = "$(jq -cS 'del(.source)' "$TRASH/js")" ||
	    { echo "# $1: $(cat "$TRASH/ji") vs $(cat "$TRASH/js")"; return 1; }
	jq -r .source "$TRASH/ji"
}

# all_same IDS...: same_status for each; the sources in $TRASH/sources.
all_same() {
	: >"$TRASH/sources"
	for i in "$@"; do
		s=$(same_status "$i") || { echo "$s"; return 1; }
		echo "$i $s" >>"$TRASH/sources"
	done
}

IDS="ok1 ok2 ok3 bad1 rty1 later1 long1 long2"

test_expect_success 'tasks in every state over two daemons' '
	start_daemon a -j 3 && start_daemon b -j 3 &&
	for i in ok1 ok2 ok3; do ts submit --code probe --id $i >/dev/null || return 1; done &&
	ts submit --code probe --id bad1 --retries 0 --params "{\"fail_attempts\":9}" >/dev/null &&
	ts submit --code probe --id rty1 --retries 2 --params "{\"fail_attempts\":9}" >/dev/null &&
	ts submit --code probe --id later1 --delay 600000 >/dev/null &&
	ts submit --code probe --id long1 --params "{\"sleep_ms\":60000}" >/dev/null &&
	ts submit --code probe --id long2 --params "{\"sleep_ms\":60000}" >/dev/null &&
	wait_for "test -e $SPOOL/done/ok3.json && test -e $SPOOL/failed/bad1.json && test -e $SPOOL/delayed/rty1.json" 30 &&
	wait_for "grep -q \"^START long2 \" $SPOOL/probe.log && grep -q \"^START long1 \" $SPOOL/probe.log" 30
'

test_expect_success 'status from the index equals status from the spool' '
	all_same $IDS &&
	cat "$TRASH/sources" &&
	for i in ok1 ok2 ok3 bad1 rty1 long1 long2; do
		grep -qx "$i index" "$TRASH/sources" || return 1
	done &&
	ts status long1 | grep -q "^long1 RUNNING on [ab] (attempt 1)\$" &&
	ts status rty1 | grep -q "^rty1 PENDING (waiting until .*, 1 attempt(s) so far)\$" &&
	test "$(rcli HGET "${PREFIX}idx:ok1" state)" = SUCCESS &&
	test "$(rcli TTL "${PREFIX}idx:ok1")" -gt 0 &&
	test "$(rcli TTL "${PREFIX}idx:long1")" = -1
'

test_expect_success 'cancelled tasks: index and spool agree' '
	ts cancel long1 >/dev/null && ts cancel long2 >/dev/null &&
	wait_for "test -e $SPOOL/cancelled/long1.json && test -e $SPOOL/cancelled/long2.json" 30 &&
	all_same $IDS &&
	grep -qx "long1 index" "$TRASH/sources"
'

test_expect_success 'FLUSHALL: the leader rebuilds the index; statuses unchanged' '
	rcli FLUSHALL >/dev/null &&
	wait_for "test \"\$(rcli EXISTS ${PREFIX}idx_built)\" = 1" 30 &&
	grep -q "index rebuilt from the spool" "$TRASH/log.a" "$TRASH/log.b" &&
	all_same $IDS &&
	cat "$TRASH/sources" &&
	grep -qx "rty1 index" "$TRASH/sources" &&
	grep -qx "ok1 spool" "$TRASH/sources" &&
	test "$(rcli HGET "${PREFIX}idx:rty1" attempts)" = 1
'

test_expect_success 'nothing lost: new tasks run and are indexed after the flush' '
	ts submit --code probe --id ok4 >/dev/null &&
	wait_for "test -e $SPOOL/done/ok4.json" 30 &&
	all_same $IDS ok4 &&
	grep -qx "ok4 index" "$TRASH/sources" &&
	for i in ok1 ok2 ok3 ok4; do
		test "$(grep -c "^START $i " "$SPOOL/probe.log")" = 1 || return 1
	done &&
	test -e "$SPOOL/delayed/rty1.json" && test -e "$SPOOL/delayed/later1.json"
'

test_done
