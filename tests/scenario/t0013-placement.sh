#!/bin/sh
# Placement (issue 11 item 4): a missing hook is a property of the node,
# not of the task.  Two daemons, only "a" has the hook "a" (each its own
# hooks_dir), in embedded mode (file heartbeats, flock leases) and then
# in cluster mode (Redis: $TS_TEST_REDIS, else its own server):
#  - each node advertises its hooks (`taskspool nodes --json`, .hooks);
#  - 50 tasks of code "a" (25 route any, 25 round_robin) and the fires of
#    a per-second job of "a": all SUCCESS, every attempt run by node a
#    (results' attempts[].node), nothing in corrupt/;
#  - node:b for code "a" waits with "node 'b' has no hook 'a'";
#  - a task of code "nohook" that no node has stays WAITING with "no live
#    node has hook 'nohook'" (status and list --state WAITING) for several
#    seconds, in incoming/; the hook installed on b → it runs there; the
#    hook "a" installed on b → the node:b task runs there;
#  - SIGHUP makes a daemon list its hooks_dir again and advertise it at
#    once (embedded mode, a 60 s heartbeat).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

mkdir -p "$TRASH/hooks-a" "$TRASH/hooks-b"
cp "$PROBE" "$TRASH/hooks-a/a"

# hook DIR CODE: install the probe as hook CODE in DIR (written aside, then
# renamed in: a node never sees a half-written hook).
hook() { cp "$PROBE" "$1/.new.$2" && mv "$1/.new.$2" "$1/$2"; }

# all_on_a M: every result of phase M ran all its attempts on node a.
all_on_a() {
	for f in "$SPOOL"/results/"$1"-*.json "$SPOOL"/results/"$1"job.*.json; do
		[ -e "$f" ] || continue
		jq -e '.status == "SUCCESS" and ([.attempts[].node] | unique) == ["a"]' "$f" >/dev/null ||
		    { echo "not SUCCESS on a only: $f"; jq -c '{status, attempts: [.attempts[] | {node, outcome}]}' "$f"; return 1; }
	done
}

phase() {	# phase M: the scenario with prefix M (e = embedded, c = cluster)
M=$1

test_expect_success "$M: two daemons, hooks a on node a only, both advertised" '
	rm -rf "$TRASH/hooks-b" && mkdir "$TRASH/hooks-b" &&
	start_daemon a -j 4 -o hooks_dir="$TRASH/hooks-a" &&
	start_daemon b -j 4 -o hooks_dir="$TRASH/hooks-b" &&
	wait_for "test \$(ts nodes | grep -c \" alive \") = 2" 20 &&
	ts nodes --json >"$TRASH/$M.nodes" && cat "$TRASH/$M.nodes" &&
	test "$(jq -r ".[] | select(.node == \"a\") | .hooks" "$TRASH/$M.nodes")" = a &&
	test "$(jq -r ".[] | select(.node == \"b\") | .hooks" "$TRASH/$M.nodes")" = "" &&
	sleep 1		# the dispatcher re-reads the registry every 0.5 s
'

test_expect_success "$M: 50 tasks of a (any, round_robin) and a per-second job: all SUCCESS on a, none in corrupt/" '
	printf "{\"jobCode\":\"${M}job\",\"taskCode\":\"a\",\"cron\":\"* * * * * ?\",\"dialect\":\"quartz\",\"timezone\":\"UTC\"}\n" >"$TRASH/$M.job" &&
	# (into jobs/ by hand: `jobs add` checks the hook in the CLI host'"'"'s
	# own hooks_dir, and no daemon here uses that one)
	cp "$TRASH/$M.job" "$SPOOL/tmp/$M.job" && mv "$SPOOL/tmp/$M.job" "$SPOOL/jobs/${M}job.json" &&
	i=1 && while [ $i -le 25 ]; do
		drop "$M-any-$i.json" "{\"requestId\":\"$M-any-$i\",\"taskCode\":\"a\"}" &&
		drop "$M-rr-$i.json" "{\"requestId\":\"$M-rr-$i\",\"taskCode\":\"a\",\"route\":\"round_robin\"}" || return 1
		i=$((i + 1))
	done &&
	sleep 5 &&
	ts jobs remove "${M}job" >/dev/null &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^$M-\") = 50" 60 &&
	jobs=$(ls "$SPOOL/done" "$SPOOL/incoming" "$SPOOL/delayed" "$SPOOL"/active/* "$SPOOL/failed" "$SPOOL/corrupt" 2>/dev/null | grep -c "^${M}job\.") &&
	echo "job fires: $jobs" && test "$jobs" -ge 3 &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^${M}job\.\") = $jobs" 30 &&
	test -z "$(ls -A "$SPOOL/corrupt")" &&
	all_on_a "$M" &&
	test "$(grep -c "^START $M-" "$SPOOL/probe.log")" = 50
'

test_expect_success "$M: node:b for code a waits (node b has no hook a)" '
	drop "$M-nb.json" "{\"requestId\":\"$M-nb\",\"taskCode\":\"a\",\"route\":\"node:b\"}" &&
	wait_for "ts status $M-nb | grep -q WAITING" 10 &&
	test "$(ts status $M-nb)" = "$M-nb WAITING (node '"'"'b'"'"' has no hook '"'"'a'"'"')"
'

test_expect_success "$M: a task no live node has a hook for: WAITING with the reason for 4 s, never corrupt/" '
	drop "$M-nh.json" "{\"requestId\":\"$M-nh\",\"taskCode\":\"nohook\"}" &&
	wait_for "ts status $M-nh | grep -q WAITING" 10 &&
	sleep 4 &&
	test "$(ts status $M-nh)" = "$M-nh WAITING (no live node has hook '"'"'nohook'"'"')" &&
	ts --json status $M-nh | jq -e ".status == \"WAITING\" and .reason == \"no live node has hook '"'"'nohook'"'"'\"" &&
	ts list --state WAITING >"$TRASH/$M.waiting" && cat "$TRASH/$M.waiting" &&
	grep -E "^WAITING +$M-nh +nohook +- +no live node has hook '"'"'nohook'"'"'\$" "$TRASH/$M.waiting" &&
	ts --json list --state WAITING | jq -e "map(select(.requestId == \"$M-nh\"))[0].reason == \"no live node has hook '"'"'nohook'"'"'\"" &&
	test -f "$SPOOL/incoming/$M-nh.json" &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: the hook installed on b: the waiting tasks run there" '
	hook "$TRASH/hooks-b" nohook &&
	wait_terminal "$M-nh" 20 && test "$(state_of $M-nh)" = done &&
	test "$(jq -r "[.attempts[].node] | unique | join(\",\")" "$SPOOL/results/$M-nh.json")" = b &&
	hook "$TRASH/hooks-b" a &&
	wait_terminal "$M-nb" 20 && test "$(state_of $M-nb)" = done &&
	test "$(jq -r "[.attempts[].node] | unique | join(\",\")" "$SPOOL/results/$M-nb.json")" = b &&
	test ! -e "$SPOOL/state/waiting/$M-nh" && test ! -e "$SPOOL/state/waiting/$M-nb" &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: daemons stop" 'stop_daemon a && stop_daemon b'
}

phase e

# The hooks are read again on SIGHUP at once, not only every heartbeat:
# a daemon with a 60 s heartbeat advertises a new hook right after it.
test_expect_success 'e: SIGHUP lists hooks_dir again and advertises it at once' '
	mkdir -p "$TRASH/hooks-s" &&
	start_daemon s -o hooks_dir="$TRASH/hooks-s" -o heartbeat_ms=60000 &&
	grep -qx "hooks=" "$SPOOL/state/heartbeat.s" &&
	hook "$TRASH/hooks-s" late &&
	sleep 1.5 &&
	grep -qx "hooks=" "$SPOOL/state/heartbeat.s" &&
	kill -HUP "$(daemon_pid s)" &&
	wait_for "grep -qx hooks=late $SPOOL/state/heartbeat.s" 10 &&
	stop_daemon s
'

redis_setup
phase c

test_done
