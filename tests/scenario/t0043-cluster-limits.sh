#!/bin/sh
# maxConcurrent (max_concurrent = probe=N): a per-task-code limit across
# every daemon of the spool.  Embedded mode (flock slots in
# state/limits/) and cluster mode (a Redis sorted set of leased slots):
# never more than N probe hooks running at once, from the probe's own
# START/END timestamps; the others are reported WAITING (taskspool list,
# status) and each task runs once; a holder killed with kill -9 does not
# leak its slot (the remaining tasks finish).  Uses $TS_TEST_REDIS when
# set (own key prefix), else its own server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

drop_n() {	# drop_n PREFIX COUNT SLEEP_MS
	_i=1
	while [ $_i -le "$2" ]; do
		_id=$(printf '%s-%03d' "$1" $_i)
		echo "$_id" >>"$TRASH/ids"
		printf '{"requestId":"%s","taskCode":"probe","executeParams":{"sleep_ms":%d}}' \
		    "$_id" "$3" >"$SPOOL/tmp/drop.$_id"
		mv "$SPOOL/tmp/drop.$_id" "$SPOOL/incoming/$_id.json" || return 1
		_i=$((_i + 1))
	done
}

# max_running PREFIX: the largest number of PREFIX* attempts between
# their START and END at one instant (probe.log; an attempt without END
# ends at the first kill of $TRASH/kills, else never).
max_running() {
	touch "$TRASH/kills"
	{ sed 's/^/KILL /' "$TRASH/kills"; grep " $1-" "$SPOOL/probe.log"; } |
	awk '$1 == "KILL" { if (!k || $5 < k) k = $5; next }
	     $1 == "START" { s[$2 " " $3] = $4; next }
	     $1 == "END" { e[$2 " " $3] = $4 }
	     END { for (a in s) { print s[a], 1
			print (a in e) ? e[a] : (k ? k : 9e18), -1 } }' |
	sort -k1,1n -k2,2n | awk '{ n += $2; if (n > m) m = n } END { print m + 0 }'
}

# watch_waiting: poll taskspool list --state WAITING into $TRASH/waiting
# until $TRASH/stop-watch exists.
watch_waiting() {
	rm -f "$TRASH/stop-watch"
	while [ ! -e "$TRASH/stop-watch" ]; do
		ts list --state WAITING 2>/dev/null | awk '{ print $1, $2 }' >>"$TRASH/waiting"
		sleep 0.1
	done
}

test_expect_success 'max_concurrent is checked when the config is read' '
	printf "spool = %s\nmax_concurrent = probe=0\n" "$SPOOL" >"$TRASH/bad.conf" &&
	! "$TS" -c "$TRASH/bad.conf" list 2>"$TRASH/err" &&
	grep -q "max_concurrent" "$TRASH/err" &&
	printf "spool = %s\nmax_concurrent = probe=2,probe=3\n" "$SPOOL" >"$TRASH/bad.conf" &&
	! "$TS" -c "$TRASH/bad.conf" list 2>"$TRASH/err" &&
	grep -q "given twice" "$TRASH/err"
'

test_expect_success 'embedded: probe=1 over two daemons, 8 tasks: one at a time, each once' '
	echo "max_concurrent = probe=1" >>"$CONF" &&
	: >"$TRASH/ids" &&
	start_daemon e1 -j 3 && start_daemon e2 -j 3 &&
	drop_n emb 8 100 &&
	wait_for "test \$(count_files $SPOOL/done) -ge 8" 60 &&
	test "$(max_running emb)" = 1 &&
	test "$(grep -c "^START emb-" "$SPOOL/probe.log")" = 8 &&
	ls "$SPOOL/state/limits" >"$TRASH/slots" &&
	test "$(cat "$TRASH/slots")" = probe.0 &&
	grep -q "WAITING: maxConcurrent probe=1" "$TRASH/log.e1" "$TRASH/log.e2" &&
	stop_daemon e1 && stop_daemon e2 &&
	check_once "$TRASH/ids"
'

redis_setup
sed -i "s/^max_concurrent = .*/max_concurrent = probe=2/" "$CONF"

test_expect_success 'cluster: probe=2 over three nodes, 20 tasks: never more than 2 at once' '
	: >"$TRASH/waiting" &&
	start_daemon a -j 4 && start_daemon b -j 4 && start_daemon c -j 4 &&
	wait_for "test \$(ts nodes | grep -c \" leader\$\") = 1" 20 &&
	drop_n lim 20 200 &&
	{ watch_waiting & } && wpid=$! &&
	wait_for "test \$(count_files $SPOOL/done) -ge 28" 120 &&
	touch "$TRASH/stop-watch" && wait $wpid &&
	test "$(max_running lim)" = 2 &&
	check_once "$TRASH/ids"
'

test_expect_success 'the tasks over the limit were reported WAITING' '
	awk "\$1 == \"WAITING\" && \$2 ~ /^lim-/ { print \$2 }" "$TRASH/waiting" |
	    sort -u >"$TRASH/waited" &&
	echo "# $(wc -l <"$TRASH/waited") of 20 seen WAITING by taskspool list" >&3 &&
	test "$(wc -l <"$TRASH/waited")" -ge 5 &&
	grep -h "WAITING: maxConcurrent probe=2" "$TRASH/log.a" "$TRASH/log.b" "$TRASH/log.c" |
	    sed "s/.*\(lim-[0-9]*\).*/\1/" | sort -u >"$TRASH/logged" &&
	test "$(wc -l <"$TRASH/logged")" -ge 10 &&
	test ! -e "$SPOOL/state/waiting/lim-020" &&
	test "$(ls "$SPOOL/state/waiting" | wc -l)" = 0
' 3>&1

test_expect_success 'status of a waiting task says WAITING (CLI text and JSON)' '
	drop_n st 3 1500 &&
	wait_for "ts list --state WAITING | grep -q \" st-\"" 20 &&
	w=$(ts list --state WAITING | awk "\$2 ~ /^st-/ { print \$2; exit }") &&
	ts status "$w" | grep "^$w WAITING" &&
	ts --json status "$w" | jq -e ".status == \"WAITING\"" &&
	wait_for "test \$(count_files $SPOOL/done) -ge 31" 60
'

test_expect_success 'kill -9 of a slot holder: its slot is not leaked, all tasks finish' '
	: >"$TRASH/kills" &&
	drop_n k9 6 2000 &&
	wait_for "test \$(find $SPOOL/active -name \"k9-*.json\" | wc -l) = 2" 20 &&
	victim=$(basename "$(dirname "$(find "$SPOOL/active" -name "k9-*.json" | head -1)")") &&
	echo "# kill -9 of node $victim" >&3 &&
	kill9_logged "$victim" &&
	wait_for "test \$(count_files $SPOOL/done) -ge 37" 120 &&
	test "$(max_running k9)" -le 2 &&
	check_no_overlap &&
	check_once "$TRASH/ids" "$TRASH/kills"
' 3>&1

test_done
