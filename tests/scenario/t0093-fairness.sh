#!/bin/sh
# Fair sharing between sources (issue 15 item 5; README.md "Fair
# sharing"), in embedded mode and then in cluster mode (Redis:
# $TS_TEST_REDIS, else its own server).  Task files are dropped as the
# HTTP API writes them (appId, appWeight) so that the floods are large
# and their timing exact:
#  - one app floods 200 tasks; once its tasks run, another app submits 5:
#    those 5 start within their fair share (1:1), i.e. at most
#    5 + slots + 2 of the flood start between their submission and the
#    last of them (first come, first served would run the ~190 queued
#    ones first);
#  - weights (appWeight 3 against 1, from apps.conf weight=): of the
#    first 40 starts of two backlogged apps, 30 +- 3 are the heavy one's;
#  - a retry storm (60 tasks failing 10 times with exit 75, retried
#    every 50 ms)
#    does not starve 5 fresh tasks: the same bound;
#  - the API writes the app's apps.conf weight into its tasks
#    (appWeight), and `taskspool apps weight` sets it.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
trap 'api_stop; redis_teardown' EXIT
TSAPI="$API_HERE/contrib/clients/tsapi.sh"
cat >>"$CONF" <<CONF
fsync = 0
retry_base_ms = 50
retry_max_ms = 50
retry_jitter_pct = 0
CONF

# flood PREFIX APP COUNT SLEEP_MS [WEIGHT]: COUNT tasks of app APP.
flood() {
	_i=1
	while [ $_i -le "$3" ]; do
		_id=$(printf '%s-%03d' "$1" $_i)
		printf '{"requestId":"%s","taskCode":"probe","appId":"%s"%s,"executeParams":{"sleep_ms":%d}}' \
		    "$_id" "$2" "${5:+,\"appWeight\":$5}" "$4" >"$SPOOL/tmp/drop.$_id"
		mv "$SPOOL/tmp/drop.$_id" "$SPOOL/incoming/$_id.json" || return 1
		_i=$((_i + 1))
	done
}

# starts_between PREFIX T0 T1: STARTs of PREFIX-* (attempt 1 or more)
# with a time in [T0, T1] (ns).
starts_between() {
	awk -v p="$1-" -v a="$2" -v b="$3" '$1 == "START" && index($2, p) == 1 &&
	    $4 >= a && $4 <= b { n++ } END { print n + 0 }' "$SPOOL/probe.log"
}

# last_start PREFIX: the time (ns) of the last START of PREFIX-*.
last_start() {
	awk -v p="$1-" '$1 == "START" && index($2, p) == 1 && $4 > m { m = $4 }
	    END { printf "%d\n", m }' "$SPOOL/probe.log"
}

# done_count PREFIX
done_count() { ls "$SPOOL/done" | grep -c "^$1-"; }

phase() {	# phase M NODES SLOTS
M=$1 NODES=$2 SLOTS=$3
BOUND=$((5 + NODES * SLOTS + 2))

test_expect_success "$M: $NODES daemon(s) of $SLOTS slots; one app floods 200 tasks, another submits 5: they start within the fair share" '
	i=1 && while [ $i -le $NODES ]; do start_daemon $M$i -j $SLOTS || return 1; i=$((i + 1)); done &&
	flood $M-fl flooder 200 40 &&
	wait_for "test \$(grep -c \"^START $M-fl-\" $SPOOL/probe.log 2>/dev/null) -ge 10" 30 &&
	t0=$(date +%s%N) &&
	flood $M-few few 5 40 &&
	wait_for "test \$(done_count $M-few) -ge 5" 60 &&
	n=$(starts_between $M-fl $t0 $(last_start $M-few)) &&
	echo "# flood tasks started while the 5 waited: $n (bound $BOUND; of $(($(grep -c "^START $M-fl-" $SPOOL/probe.log))) so far)" &&
	test "$n" -le $BOUND &&
	wait_for "test \$(done_count $M-fl) -ge 200" 120
'

test_expect_success "$M: weights: appWeight 3 against 1, both backlogged: 30 +- 3 of the first 40 starts are the heavy app's" '
	i=1 && while [ $i -le $NODES ]; do stop_daemon $M$i || return 1; i=$((i + 1)); done &&
	flood $M-hv heavy 60 30 3 &&
	flood $M-lt light 60 30 &&
	i=1 && while [ $i -le $NODES ]; do start_daemon $M$i -j $SLOTS || return 1; i=$((i + 1)); done &&
	wait_for "test \$(done_count $M-hv) -ge 60 && test \$(done_count $M-lt) -ge 60" 120 &&
	grep -E "^START $M-(hv|lt)-" "$SPOOL/probe.log" | sort -k4,4n | head -40 >"$TRASH/$M.first40" &&
	h=$(grep -c " $M-hv-" "$TRASH/$M.first40") &&
	echo "# heavy starts in the first 40: $h" &&
	test "$h" -ge 27 && test "$h" -le 33
'

test_expect_success "$M: a retry storm (60 tasks retried every 50 ms) does not starve 5 fresh tasks" '
	i=1 && while [ $i -le 60 ]; do
		drop $M-rs-$i.json "{\"requestId\":\"$M-rs-$i\",\"taskCode\":\"probe\",\"maxRetries\":12,\"executeParams\":{\"sleep_ms\":20,\"fail_attempts\":10}}" || return 1
		i=$((i + 1))
	done &&
	wait_for "test \$(grep -c \"^START $M-rs-[0-9]* [3-9]\" $SPOOL/probe.log 2>/dev/null) -ge 20" 60 &&
	t0=$(date +%s%N) &&
	flood $M-fr fresh 5 20 &&
	wait_for "test \$(done_count $M-fr) -ge 5" 60 &&
	n=$(awk -v a="$t0" -v b="$(last_start $M-fr)" "\$1 == \"START\" && index(\$2, \"$M-rs-\") == 1 && \$3 > 1 && \$4 >= a && \$4 <= b { n++ } END { print n + 0 }" "$SPOOL/probe.log") &&
	echo "# retries started while the 5 fresh ones waited: $n (bound $BOUND)" &&
	test "$n" -le $BOUND &&
	wait_for "test \$(done_count $M-rs) -ge 60" 180
'

test_expect_success "$M: daemons stop" '
	i=1 && while [ $i -le $NODES ]; do stop_daemon $M$i || return 1; i=$((i + 1)); done
'
}

api_server
export TS_APP_ID=tester
TS_SECRET=$(ts apps add tester --codes probe) || exit 1
export TS_SECRET

test_expect_success 'the API writes the app'"'"'s apps.conf weight into its tasks; taskspool apps weight sets it' '
	ts apps weight tester 4 &&
	ts apps list | grep -q "^tester .* weight=4 " &&
	ts --json apps list | jq -e "select(.appId == \"tester\") | .weight == 4" &&
	printf "{\"requestId\":\"w-api\",\"taskCode\":\"probe\",\"runAt\":\"2099-01-01T00:00:00Z\",\"triggerType\":\"at\"}" >"$TRASH/w.json" &&
	sh "$TSAPI" submit "$TRASH/w.json" >/dev/null &&
	f=$(ls "$SPOOL"/incoming/w-api.json "$SPOOL"/delayed/w-api.json 2>/dev/null | head -1) &&
	jq -e ".appId == \"tester\" and .appWeight == 4" "$f" &&
	ts cancel w-api >/dev/null &&
	rc=0 && ts apps weight tester 0 2>"$TRASH/err" || rc=$? &&
	test $rc -ne 0 && grep -q "1..100" "$TRASH/err" &&
	ts apps weight tester default &&
	ts apps list | grep -q "^tester .* weight=1 "
'

phase e 1 2
redis_setup
phase c 2 2
test_done
