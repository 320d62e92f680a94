#!/bin/sh
# Liveness judged with another host's clock (FIELD-FAILURES B31).  Three
# daemons on one Redis: a with the real clock (it starts first and leads),
# b with its clock 30 s ahead, c with its clock 30 s behind (libfaketime).
# Liveness must come from Redis (the heartbeat key's TTL), not from the
# timestamps the nodes write: no node is seen offline, the leader routes
# round_robin tasks to all three and never re-routes a queue, nothing is
# lost or run twice; once c is killed, it leaves the registry within the
# heartbeat key's TTL, as any node does.  Needs faketime (make deps).
# Uses $TS_TEST_REDIS when set (own key prefix), else its own server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup

FT=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -1)

# skewed NODE OFFSET: start NODE with its clock moved by OFFSET (+30s).
skewed() {
	_n=$1 _o=$2; shift 2
	_ao=${ASAN_OPTIONS-}
	# (an ASan build wants its runtime first; libfaketime comes first here)
	LD_PRELOAD=$FT FAKETIME=$_o ASAN_OPTIONS=${_ao:+$_ao:}verify_asan_link_order=0
	export LD_PRELOAD FAKETIME ASAN_OPTIONS
	start_daemon "$_n" "$@"; _rc=$?
	unset LD_PRELOAD FAKETIME
	if [ -n "$_ao" ]; then ASAN_OPTIONS=$_ao; else unset ASAN_OPTIONS; fi
	return $_rc
}

routed() {	# routed ID
	echo "$1" >>"$TRASH/ids"
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"probe\",\"route\":\"round_robin\",\"executeParams\":{\"sleep_ms\":50}}"
}

test_expect_success 'B31: a (real clock) leads; b +30 s, c -30 s join' '
	test -n "$FT" &&
	: >"$TRASH/ids" &&
	start_daemon a -j 2 &&
	wait_for "rcli GET ${PREFIX}leader | grep -q \"^a:\"" 20 &&
	skewed b +30s -j 2 && skewed c -30s -j 2 &&
	# the skew is real: each writes its own clock into its heartbeat
	now=$(date +%s%3N) &&
	wait_for "test -n \"\$(rcli HGET ${PREFIX}node:c at_ms)\"" 20 &&
	cb=$(rcli HGET "${PREFIX}node:b" at_ms) && cc=$(rcli HGET "${PREFIX}node:c" at_ms) &&
	echo "at_ms - now: b $((cb - now)) c $((cc - now))" &&
	test $((cb - now)) -gt 25000 && test $((now - cc)) -gt 25000
'

test_expect_success 'B31: taskspool nodes (real clock) shows all three alive' '
	wait_for "test \$(ts nodes | grep -c \" alive \") = 3" 20 &&
	ts nodes
'

test_expect_success 'B31: 60 round_robin tasks: each node 20 ± 1, no queue re-routed' '
	sleep 1 &&	# the dispatcher re-reads the registry every 0.5 s
	i=1 && while [ $i -le 60 ]; do routed sk-$i || return 1; i=$((i + 1)); done &&
	wait_for "test \$(count_files $SPOOL/done) -ge 60" 60 &&
	check_once "$TRASH/ids" &&
	for i in $(seq 1 60); do jq -r ".node" "$SPOOL/results/sk-$i.json"; done | sort | uniq -c >"$TRASH/split" &&
	cat "$TRASH/split" &&
	test "$(wc -l <"$TRASH/split")" = 3 &&
	awk "\$1 < 19 || \$1 > 21 { bad = 1 } END { exit bad }" "$TRASH/split" &&
	# exactly one attempt each: no lost attempt, no re-routing
	(cd "$SPOOL/results" && jq -r "select((.attempts | length) != 1) | .requestId" sk-*.json) >"$TRASH/multi" &&
	test ! -s "$TRASH/multi" &&
	! grep -h "is offline" "$TRASH/log.a" "$TRASH/log.b" "$TRASH/log.c"
'

test_expect_success 'B31: c (clock -30 s) killed: gone from the registry within its TTL' '
	kill9_logged c &&
	t0=$(date +%s%3N) &&
	wait_for "! ts nodes | grep -q \"^c \"" 30 &&
	echo "c left the registry after $(( $(date +%s%3N) - t0 )) ms (key TTL $((3 * 1000)) ms)" &&
	test "$(ts nodes | grep -c " alive ")" = 2
'

test_expect_success 'daemons drain and stop' '
	stop_daemon a && stop_daemon b
'

test_done
