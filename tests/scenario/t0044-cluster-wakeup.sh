#!/bin/sh
# Wake-ups across hosts (cluster mode): a daemon that cannot see the
# spool's changes (inotify = 0, as on NFS for other hosts' writes) and
# rescans only every 30 s still starts a task within a fraction of that
# when it was submitted with taskspool submit or announced on the Redis
# channel <prefix>wake; a file merely dropped (no wake-up) waits for the
# rescan.  A retry that becomes due is promoted and picked up the same
# way.  This is the path that covers FIELD-FAILURES B58 (inotify blind
# to other NFS clients' writes) on this machine, which has no NFS.  Uses
# $TS_TEST_REDIS when set (own key prefix), else its own server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup
SCAN_MS=30000
cat >>"$CONF" <<CONF
scan_interval_ms = $SCAN_MS
retry_base_ms = 200
retry_jitter_pct = 0
CONF

# start_ns ID ATTEMPT: the probe's START time of that attempt, ns.
start_ns() { awk -v i="$1" -v a="$2" '$1 == "START" && $2 == i && $3 == a { print $4 }' "$SPOOL/probe.log"; }

# started_soon ID ATTEMPT FROM WHAT: wait for the probe's START of that
# attempt, print its latency after FROM (ns; evaluated once the START is
# there, so it may name an earlier attempt's start_ns) as "# WHAT: N ms",
# and succeed only when it is below scan_interval_ms / 4.
started_soon() {
	wait_for "grep -q \"^START $1 $2 \" \"$SPOOL/probe.log\"" 20 &&
	eval "from=$3" &&
	lat=$(( ($(start_ns "$1" "$2") - from) / 1000000 )) &&
	echo "# $4: $lat ms (scan_interval_ms $SCAN_MS)" >&3 &&
	test "$lat" -lt $((SCAN_MS / 4))
}

test_expect_success 'a daemon with inotify = 0 subscribes to the wake-up channel' '
	start_daemon w -j 2 -o inotify=0 &&
	wait_for "grep -q \"subscribed to the wake-up channel\" \"$TRASH/log.w\"" 20 &&
	grep -q "inotify = 0" "$TRASH/log.w" &&
	wait_for "test \$(rcli PUBSUB NUMSUB ${PREFIX}wake | tail -1) = 1" 20
'

test_expect_success 'a file dropped without a wake-up waits (no inotify, rescan in 30 s)' '
	printf "{\"requestId\":\"quiet\",\"taskCode\":\"probe\"}" >"$SPOOL/tmp/q" &&
	mv "$SPOOL/tmp/q" "$SPOOL/incoming/quiet.json" &&
	sleep 1.5 &&
	test -e "$SPOOL/incoming/quiet.json" &&
	! grep -q "^START quiet " "$SPOOL/probe.log" 2>/dev/null
'

test_expect_success 'taskspool submit wakes it: started far sooner than the rescan' '
	t0=$(now_ns) &&
	ts submit --code probe --id sub1 >/dev/null &&
	started_soon sub1 1 "$t0" "submit -> START"
' 3>&1

test_expect_success 'a PUBLISH on the channel makes it take the dropped file' '
	t0=$(now_ns) &&
	rcli PUBLISH "${PREFIX}wake" "incoming/quiet.json" >/dev/null &&
	started_soon quiet 1 "$t0" "PUBLISH -> START"
' 3>&1

test_expect_success 'a retry that becomes due is picked up without a rescan' '
	ts submit --code probe --id rt1 --params "{\"fail_attempts\":1}" >/dev/null &&
	started_soon rt1 2 "\$(start_ns rt1 1)" "retry gap (retry_base_ms 200)" &&
	wait_for "test -e \"$SPOOL/done/rt1.json\"" 20
' 3>&1

test_expect_success 'a routed task (node:w) reaches the node through its queue' '
	t0=$(now_ns) &&
	printf "{\"requestId\":\"routed\",\"taskCode\":\"probe\",\"route\":\"node:w\"}" >"$TRASH/r.json" &&
	ts submit "$TRASH/r.json" >/dev/null &&
	started_soon routed 1 "$t0" "routed submit -> START" &&
	wait_for "test -e \"$SPOOL/done/routed.json\"" 20 &&
	jq -e ".status == \"SUCCESS\"" "$SPOOL/results/sub1.json" "$SPOOL/results/quiet.json"
' 3>&1

test_done
