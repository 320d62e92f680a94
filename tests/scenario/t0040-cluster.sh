#!/bin/sh
# Cluster mode (redis = ...): three daemons share one spool and a real
# redis-server.  N tasks run exactly once with no overlapping attempts
# and a fencing token each; kill -9 of a node mid-hook reruns its task
# elsewhere only once the node's lease is gone from Redis, and the hook's
# process group dies with the node; kill -9 of the leader: another node
# takes the leader lock with a greater epoch and nothing is lost or run
# twice.  Uses $TS_TEST_REDIS when set (own key prefix), else its own
# server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup

N=${CLUSTER_N:-3000}

drop_many() {	# drop_many PREFIX COUNT [extra members]
	_i=1
	while [ $_i -le "$2" ]; do
		_id=$(printf '%s-%05d' "$1" $_i)
		echo "$_id" >>"$TRASH/ids"
		printf '{"requestId":"%s","taskCode":"probe","executeParams":{"sleep_ms":%d}%s}' \
		    "$_id" $(( _i % 4 )) "${3:-}" >"$SPOOL/tmp/drop.$_id"
		mv "$SPOOL/tmp/drop.$_id" "$SPOOL/incoming/$_id.json" || return 1
		_i=$((_i + 1))
	done
}

# read_leader: LNODE and LEPOCH from one read of the leader key ("" when
# there is none at this instant).
read_leader() {
	_cl_v=$(rcli GET "${PREFIX}leader")
	LNODE=${_cl_v%:*}
	LEPOCH=${_cl_v##*:}
	test -n "$_cl_v"
}
leader_node() { read_leader && echo "$LNODE"; }

test_expect_success 'three daemons start in cluster mode' '
	: >"$TRASH/ids" &&
	start_daemon a -j 4 && start_daemon b -j 4 && start_daemon c -j 4 &&
	grep -q "redis coordination" "$TRASH/log.a"
'

test_expect_success 'taskspool nodes: three alive, one leader' '
	wait_for "test \$(ts nodes | grep -c \" leader\$\") = 1" 20 &&
	ts nodes >"$TRASH/nodes" &&
	cat "$TRASH/nodes" &&
	test "$(grep -c " alive " "$TRASH/nodes")" = 3 &&
	test "$(cut -d" " -f1 "$TRASH/nodes" | tr "\n" " ")" = "a b c " &&
	ts nodes --json | jq -e "length == 3 and ([.[] | select(.leader)] | length) == 1 and all(.[]; .slots == 4 and .state == \"alive\")" &&
	test "$(leader_node)" = "$(grep " leader$" "$TRASH/nodes" | cut -d" " -f1)"
'

test_expect_success "$N tasks over three nodes: all SUCCESS exactly once" '
	start=$(now_ns) &&
	drop_many ct "$N" &&
	wait_for "test \$(count_files $SPOOL/done) -ge $N" 120 &&
	end=$(now_ns) &&
	echo "# $N tasks in $(( (end - start) / 1000000 )) ms" >&3 &&
	check_once "$TRASH/ids" &&
	(cd "$SPOOL/results" && jq -r "[.requestId, .status, (.attempts|length), .node, .fencingToken] | @tsv" *.json) >"$TRASH/res.tsv" &&
	test "$(awk -F"\t" "\$2 == \"SUCCESS\" && \$3 == 1" "$TRASH/res.tsv" | wc -l)" = $N
' 3>&1

test_expect_success 'every result has a fencing token, all distinct' '
	cut -f5 "$TRASH/res.tsv" | grep -c "^[1-9][0-9]*\$" >"$TRASH/nfence" &&
	test "$(cat "$TRASH/nfence")" = $N &&
	test "$(cut -f5 "$TRASH/res.tsv" | sort -u | wc -l)" = $N
'

test_expect_success 'probe.log: one START and END per task, no overlap; every node ran some' '
	test "$(grep -c "^START " "$SPOOL/probe.log")" = $N &&
	test "$(grep -c "^END " "$SPOOL/probe.log")" = $N &&
	check_no_overlap &&
	for nd in a b c; do
		test "$(cut -f4 "$TRASH/res.tsv" | grep -cx $nd)" -gt 0 || return 1
	done
'

test_expect_success 'the hook sees TASKSPOOL_FENCE (the result fencing token)' '
	cat >"$HOOKS/fence" <<-HOOK &&
	#!/bin/sh
	printf "{\"fence\":%s}" "\$TASKSPOOL_FENCE" >"\$TASKSPOOL_RESULT_FILE"
	HOOK
	chmod +x "$HOOKS/fence" &&
	drop fence-1.json "{\"requestId\":\"fence-1\",\"taskCode\":\"fence\"}" &&
	echo fence-1 >>"$TRASH/ids" &&
	wait_terminal fence-1 30 &&
	jq -e ".status == \"SUCCESS\" and .fencingToken > 0 and .result.fence == .fencingToken" "$SPOOL/results/fence-1.json"
'

test_expect_success 'kill -9 of a node mid-hook: its process group dies with it' '
	drop k9.json "{\"requestId\":\"k9\",\"taskCode\":\"probe\",\"executeParams\":{\"sleep_ms\":5000}}" &&
	echo k9 >>"$TRASH/ids" &&
	wait_for "grep -q \"^START k9 1 \" $SPOOL/probe.log" 30 &&
	victim=$(basename "$(dirname "$(ls "$SPOOL"/active/*/k9.json)")") &&
	hookpid=$(awk "\$1 == \"START\" && \$2 == \"k9\" { print \$5 }" "$SPOOL/probe.log") &&
	echo "$victim" >"$TRASH/victim" &&
	rcli GET "${PREFIX}lease:k9" >"$TRASH/k9.token" &&
	grep -q "^$victim:" "$TRASH/k9.token" &&
	kill9_logged "$victim" &&
	wait_for "! kill -0 $hookpid 2>/dev/null" 10
'

test_expect_success 'k9 is rerun elsewhere only after the dead node lease is gone' '
	victim=$(cat "$TRASH/victim") &&
	while :; do
		started=$(grep -c "^START k9 2 " "$SPOOL/probe.log")
		holder=$(rcli GET "${PREFIX}lease:k9")
		case $holder in "$victim":*)
			test "$started" = 0 || { echo "attempt 2 began under $holder"; return 1; };;
		esac
		test "$started" -gt 0 && break
		sleep 0.05
	done &&
	wait_terminal k9 60 &&
	jq -e --arg v "$victim" ".status == \"SUCCESS\" and (.attempts | length) == 2 and .attempts[0].outcome == \"LOST\" and .attempts[0].node == \$v and .attempts[1].node != \$v" "$SPOOL/results/k9.json" &&
	start_daemon "$victim" -j 4
'

test_expect_success 'kill -9 of the leader: another node leads with a greater epoch' '
	wait_for read_leader 20 &&
	old=$LNODE && oldepoch=$LEPOCH &&
	t0=$(now_ns) &&
	kill9_logged "$old" &&
	wait_for "read_leader && test \$LNODE != $old" 30 &&
	t1=$(now_ns) &&
	echo "# new leader $LNODE (epoch $LEPOCH, was $old epoch $oldepoch) after $(( (t1 - t0) / 1000000 )) ms" >&3 &&
	test "$LEPOCH" -gt "$oldepoch" &&
	echo "$old" >"$TRASH/oldleader"
' 3>&1

test_expect_success 'after the leader died: delayed and immediate tasks all run once' '
	drop_many lt 100 &&
	drop_many dl 50 ",\"triggerType\":\"delay\",\"delayMs\":500" &&
	wait_for "test \$(count_files $SPOOL/done) -ge \$(wc -l <$TRASH/ids)" 60 &&
	start_daemon "$(cat "$TRASH/oldleader")" -j 4 &&
	check_once "$TRASH/ids" &&
	check_no_overlap &&
	test "$(grep -c "^START dl-" "$SPOOL/probe.log")" = 50
'

test_expect_success 'without node_id two daemons are <host>-<UTC date>-01 and -02' '
	"$TSD" -d -c "$CONF" -j 1 >>"$TRASH/log.auto1" 2>&1 &
	p1=$!
	DAEMON_PIDS="$DAEMON_PIDS $p1"
	"$TSD" -d -c "$CONF" -j 1 >>"$TRASH/log.auto2" 2>&1 &
	p2=$!
	DAEMON_PIDS="$DAEMON_PIDS $p2"
	day=$(date -u +%Y%m%d) &&
	wait_for "test \$(ts nodes | grep -c -- \"-$day-0[12] alive\") = 2" 20 &&
	ts nodes | grep -- "-$day-0[12] " | cut -d" " -f1 | sed "s/.*-//" | sort | tr "\n" " " >"$TRASH/seq" &&
	test "$(cat "$TRASH/seq")" = "01 02 " &&
	kill $p1 $p2 && wait $p1 $p2
'

test_expect_success 'daemons drain and stop; their registry entries go' '
	stop_daemon a && stop_daemon b && stop_daemon c &&
	test "$(ts nodes | wc -l)" = 0
'

test_done
