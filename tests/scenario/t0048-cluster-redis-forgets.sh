#!/bin/sh
# Redis forgets the leases while hooks run (issue 11 item 2): FLUSHALL,
# SHUTDOWN NOSAVE and an empty restart on the same port, and a replica
# promoted with REPLICAOF NO ONE that lacks the last writes, the daemons
# repointed at it with SIGHUP.  Each time a 10 s hook of a task with
# maxRetries 0 survives: the holder's next renewal finds its lease key
# absent (not another owner's), sets it again with a greater fencing
# token, and the reaper does not take the task meanwhile.  Each task ends
# SUCCESS after one attempt, its hook started once, and its result's
# fencingToken is greater than the TASKSPOOL_FENCE the hook was given
# when Redis had lost its key (the same when it had not: p1, which the
# replica had).
# A private redis-server (it is flushed and stopped) and a second one,
# the replica.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup private
REDIS2_DIR="$TRASH/redis2"
trap 'sh "$SERVERS/redis.sh" stop "$REDIS2_DIR" >/dev/null 2>&1; redis_teardown' EXIT

# Renewals every second; heartbeat 2 s, so a holder rides out 6 s
# without Redis (self-fence D = min(20000 - 1000, 3 x 2000 + 1000) = 7 s
# after its last renewal) and a reaper takes an absent key only after
# A = D + 2 s = 9 s: far longer than a holder needs to set it again.
sed -i -e 's/^lease_ms = .*/lease_ms = 20000/' \
    -e 's/^lease_renew_ms = .*/lease_renew_ms = 1000/' \
    -e 's/^heartbeat_ms = .*/heartbeat_ms = 2000/' "$CONF"

cat >"$HOOKS/fenced" <<H
#!/bin/sh
echo "FENCE \$TASKSPOOL_REQUEST_ID \$TASKSPOOL_ATTEMPT \$TASKSPOOL_FENCE" >>"$SPOOL/fence.log"
printf '{"sleep_ms":10000}' | exec "$HOOKS/probe"
H
chmod +x "$HOOKS/fenced"

long10() {	# long10 ID: a 10 s task, no retry
	echo "$1" >>"$TRASH/ids"
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"fenced\",\"maxRetries\":0}"
}
started() { grep -c "^START $1 " "$SPOOL/probe.log" 2>/dev/null; }

# survived ID [kept]: SUCCESS after one attempt, one START, and a
# fencingToken greater than the hook's TASKSPOOL_FENCE (the key was set
# again) or, with "kept" (Redis never lost that key), the same.
survived() {
	wait_terminal "$1" 60 &&
	old=$(awk -v i="$1" '$1 == "FENCE" && $2 == i { print $4 }' "$SPOOL/fence.log") &&
	echo "# $1: TASKSPOOL_FENCE $old; result $(jq -c "{status, attempts: (.attempts | length), fencingToken}" "$SPOOL/results/$1.json")" >&3 &&
	if [ "${2:-}" = kept ]; then
		cmp="==" && ! grep -q "$1: the lease was gone from Redis" "$TRASH"/log.*
	else
		cmp=">" && grep -h "$1: the lease was gone from Redis (its data lost); set again with fencing token [0-9]* (was $old), the hook runs on" "$TRASH"/log.* >"$TRASH/re.$1" &&
		sed "s/^/# /" "$TRASH/re.$1" >&3
	fi &&
	jq -e --argjson old "$old" ".status == \"SUCCESS\" and (.attempts | length) == 1 and
	    .attempts[0].outcome == \"SUCCESS\" and .fencingToken $cmp \$old" "$SPOOL/results/$1.json" >/dev/null &&
	test "$(started "$1")" = 1 &&
	test "$(grep -c "^FENCE $1 " "$SPOOL/fence.log")" = 1 &&
	! grep -h "$1: .*lease lost\|$1: attempt 1 on node .* lost" "$TRASH"/log.*
}

test_expect_success 'two daemons start' '
	: >"$TRASH/ids" &&
	start_daemon a -j 2 && start_daemon b -j 2 &&
	wait_for "rcli GET ${PREFIX}leader | grep -q ." 20
'

test_expect_success 'FLUSHALL while a 10 s hook runs: it survives, one attempt, a new fence' '
	long10 f1 && wait_for "test \$(started f1) = 1" 30 &&
	sleep 1.5 &&
	rcli FLUSHALL >/dev/null &&
	test "$(rcli EXISTS "${PREFIX}lease:f1")" = 0 &&
	wait_for "test \$(rcli EXISTS ${PREFIX}lease:f1) = 1" 10 &&
	survived f1
' 3>&1

test_expect_success 'SHUTDOWN NOSAVE and an empty restart on the same port: it survives' '
	long10 s1 && wait_for "test \$(started s1) = 1" 30 &&
	sleep 1.5 &&
	{ rcli SHUTDOWN NOSAVE >/dev/null 2>&1 || :; } &&
	! rcli PING >/dev/null 2>&1 &&
	sh "$SERVERS/redis.sh" start "$REDIS_DIR" >/dev/null &&
	test "$(rcli DBSIZE)" -le 3 &&
	wait_for "test \$(rcli EXISTS ${PREFIX}lease:s1) = 1" 10 &&
	survived s1
' 3>&1

rcli2() { redis-cli -h "${REDIS2%:*}" -p "${REDIS2##*:}" "$@"; }

test_expect_success 'a replica promoted without the last writes, daemons repointed (SIGHUP): both survive' '
	out=$(sh "$SERVERS/redis.sh" start "$REDIS2_DIR") &&
	REDIS2=${out#TS_TEST_REDIS=} &&
	rcli2 REPLICAOF "${REDIS%:*}" "${REDIS##*:}" >/dev/null &&
	wait_for "rcli2 INFO replication | grep -q master_link_status:up" 20 &&
	long10 p1 && wait_for "test \$(started p1) = 1" 30 &&
	wait_for "test \$(rcli2 EXISTS ${PREFIX}lease:p1) = 1" 10 &&
	# the replica stops following: what the master gets next is lost
	rcli2 REPLICAOF NO ONE >/dev/null &&
	long10 p2 && wait_for "test \$(started p2) = 1" 30 &&
	test "$(rcli2 EXISTS "${PREFIX}lease:p2")" = 0 &&
	sh "$SERVERS/redis.sh" stop "$REDIS_DIR" &&
	sed -i "s/^redis = .*/redis = $REDIS2/" "$CONF" &&
	kill -HUP "$(daemon_pid a)" "$(daemon_pid b)" &&
	wait_for "grep -q \"SIGHUP: Redis is now $REDIS2\" $TRASH/log.a && grep -q \"SIGHUP: Redis is now $REDIS2\" $TRASH/log.b" 20 &&
	wait_for "test \$(rcli2 EXISTS ${PREFIX}lease:p2) = 1" 10 &&
	survived p1 kept && survived p2
' 3>&1

test_expect_success 'after all that: a new task runs on the promoted server; no overlap' '
	long10 n1 && survived n1 kept &&
	check_once "$TRASH/ids" &&
	check_no_overlap &&
	stop_daemon a && stop_daemon b
' 3>&1

test_done
