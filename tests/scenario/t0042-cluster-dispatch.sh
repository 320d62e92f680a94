#!/bin/sh
# Dispatch (DESIGN §6) in cluster mode: the leader moves routed tasks
# from incoming/ to queue/<node>/.  round_robin spreads 30 tasks over 3
# nodes within ±1; consistent_hash keeps every shardKey on one node;
# node:<id> runs there; broadcast runs once per live node with shard
# indices 0..n-1; a node gives back a task of its queue routed elsewhere;
# the queue of an offline node is routed again.  Uses $TS_TEST_REDIS when
# set, else its own server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup

routed() {	# routed ID ROUTE [KEY]
	echo "$1" >>"$TRASH/ids"
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"probe\",\"route\":\"$2\"${3:+,\"shardKey\":\"$3\"}}"
}
node_of() { jq -r .node "$SPOOL/results/$1.json"; }
all_done() { wait_for "test \$(count_files $SPOOL/done) -ge \$(wc -l <$TRASH/ids)" 60; }

test_expect_success 'three daemons, all three in the registry' '
	: >"$TRASH/ids" &&
	start_daemon a -j 2 && start_daemon b -j 2 && start_daemon c -j 2 &&
	wait_for "test \$(ts nodes | grep -c \" alive \") = 3" 20 &&
	sleep 1		# the dispatcher re-reads the registry every 0.5 s
'

test_expect_success 'round_robin: 30 tasks, each node 10 ± 1' '
	i=1 && while [ $i -le 30 ]; do routed rr-$i round_robin || return 1; i=$((i + 1)); done &&
	all_done &&
	for i in $(seq 1 30); do node_of rr-$i; done | sort | uniq -c >"$TRASH/rr" &&
	cat "$TRASH/rr" &&
	test "$(wc -l <"$TRASH/rr")" = 3 &&
	awk "\$1 < 9 || \$1 > 11 { bad = 1 } END { exit bad }" "$TRASH/rr"
'

test_expect_success 'consistent_hash: every shardKey on one node' '
	for k in 0 1 2 3 4 5; do
		for j in 1 2 3 4 5; do routed ch-$k-$j consistent_hash key-$k || return 1; done
	done &&
	all_done &&
	for k in 0 1 2 3 4 5; do
		test "$(for j in 1 2 3 4 5; do node_of ch-$k-$j; done | sort -u | wc -l)" = 1 || return 1
	done &&
	test "$(for k in 0 1 2 3 4 5; do node_of ch-$k-1; done | sort -u | wc -l)" -ge 2
'

test_expect_success 'node:b runs on b only' '
	for j in 1 2 3 4 5 6; do routed nb-$j node:b || return 1; done &&
	all_done &&
	test "$(for j in 1 2 3 4 5 6; do node_of nb-$j; done | sort -u)" = b
'

test_expect_success 'broadcast: one shard per live node, indices 0..2 of 3' '
	cat >"$HOOKS/shard" <<-HOOK &&
	#!/bin/sh
	printf "{\"i\":%s,\"n\":%s}" "\$TASKSPOOL_SHARD_INDEX" "\$TASKSPOOL_SHARD_TOTAL" >"\$TASKSPOOL_RESULT_FILE"
	HOOK
	chmod +x "$HOOKS/shard" &&
	# broadcast goes to the live nodes that have the hook (issue 11
	# item 4): wait until all three advertise it (a heartbeat or two)
	wait_for "test \$(ts nodes --json | jq \"map(select(.hooks | split(\\\",\\\") | index(\\\"shard\\\"))) | length\") = 3" 20 &&
	sleep 1 &&	# the dispatcher re-reads the registry every 0.5 s
	drop bc.json "{\"requestId\":\"bc\",\"taskCode\":\"shard\",\"route\":\"broadcast\"}" &&
	for i in 0 1 2; do echo bc.$i >>"$TRASH/ids"; done &&
	all_done &&
	for i in 0 1 2; do
		jq -e --argjson i $i ".status == \"SUCCESS\" and .result.i == \$i and .result.n == 3" "$SPOOL/results/bc.$i.json" || return 1
	done &&
	test "$(for i in 0 1 2; do node_of bc.$i; done | sort | tr "\n" " ")" = "a b c " &&
	test ! -e "$SPOOL/results/bc.json"
'

test_expect_success 'a node gives back a queued task routed to another node' '
	echo back-1 >>"$TRASH/ids" &&
	printf "{\"requestId\":\"back-1\",\"taskCode\":\"probe\",\"route\":\"node:c\"}" >"$SPOOL/tmp/back-1" &&
	mv "$SPOOL/tmp/back-1" "$SPOOL/queue/a/back-1.json" &&
	all_done &&
	test "$(node_of back-1)" = c &&
	grep -q "back-1: in queue/a/ but routed to node:c" "$TRASH/log.a"
'

test_expect_success 'the queue of an offline node is routed again' '
	kill9_daemon c &&
	wait_for "! ts nodes | grep -q \"^c alive\"" 30 &&
	for j in 1 2 3 4; do
		echo off-$j >>"$TRASH/ids"
		printf "{\"requestId\":\"off-$j\",\"taskCode\":\"probe\",\"route\":\"round_robin\"}" >"$SPOOL/tmp/off-$j"
		mv "$SPOOL/tmp/off-$j" "$SPOOL/queue/c/off-$j.json" || return 1
	done &&
	all_done &&
	for j in 1 2 3 4; do
		case $(node_of off-$j) in a|b) ;; *) return 1;; esac
	done &&
	grep -q "node c is offline" "$TRASH/log.a" "$TRASH/log.b"
'

test_expect_success 'everything exactly once, nothing left in queue/' '
	check_once "$TRASH/ids" &&
	check_no_overlap &&
	stop_daemon a && stop_daemon b
'

test_done
