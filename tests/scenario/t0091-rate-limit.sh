#!/bin/sh
# Execution rate limits (issue 15 item 3; README.md "Execution rate
# limits"), in embedded mode (state/rates/ under flock) and then in
# cluster mode (one Lua script on Redis: $TS_TEST_REDIS, else its own
# server).  Three daemons with rate_limit = probe=10/1s (burst 10:
# T = 100 ms, tau = 900 ms):
#  - 150 probe tasks dropped at once: all SUCCESS with one attempt each,
#    none failed, nothing in corrupt/;
#  - the hooks' START times (probe.log): in every closed window of W ms
#    at most 10 + floor(W / 100) starts, the GCRA's bound (gcra.h), for
#    W = 1000, 2000 and 5000 (the bound holds for claims; a hook starts a
#    little after its claim, and any spawn delay under 100 ms leaves
#    these bounds unchanged since floor((W + d) / 100) = floor(W / 100));
#  - a throttled task shows WAITING with "rate_limit probe=10/1s: next
#    start at <time>" (taskspool status) while it waits;
#  - taskspool_rate_limited_total{task_code="probe"} counts the claims
#    held back;
#  - when idle, no state is left: embedded, the leader's sweep removes
#    state/rates/probe; cluster, the Redis key execrate:probe expires;
#  - SIGHUP applies a changed rate_limit to the tasks already waiting
#    (embedded); a malformed value is refused naming the key and item.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
trap 'redis_teardown' EXIT
NTASKS=150
cat >>"$CONF" <<C
fsync = 0
rate_limit = probe=10/1s
metrics_interval_ms = 1000
C

# windows P: for the START times of tasks with prefix P (ns), print the
# largest number of starts in a closed window of W ms for each W, and
# fail when one is over 10 + floor(W / 100).
windows() {
	grep "^START $1" "$SPOOL/probe.log" | awk '{ print $4 }' | sort -n >"$TRASH/starts.$1" &&
	test "$(wc -l <"$TRASH/starts.$1")" -eq $NTASKS &&
	awk 'BEGIN { split("1000 2000 5000", ws, " ") }
	    { t[NR] = $1 }
	    END {
		for (k = 1; k <= 3; k++) {
			w = ws[k] * 1000000; max = 0; j = 1
			for (i = 1; i <= NR; i++) {
				while (t[i] - t[j] > w) j++
				if (i - j + 1 > max) max = i - j + 1
			}
			lim = 10 + int(ws[k] / 100)
			printf "W=%d ms: at most %d starts (bound %d)\n", ws[k], max, lim
			if (max > lim) bad = 1
		}
		exit bad
	    }' "$TRASH/starts.$1"
}

phase() {	# phase M: e = embedded, c = cluster
M=$1

test_expect_success "$M: three daemons, $NTASKS probe tasks under probe=10/1s" '
	start_daemon ${M}1 -j 4 &&
	start_daemon ${M}2 -j 4 &&
	start_daemon ${M}3 -j 4 &&
	i=1 && while [ $i -le $NTASKS ]; do
		id=$M-r$(printf %03d $i) && drop "$id.json" "{\"requestId\":\"$id\",\"taskCode\":\"probe\"}" || return 1
		i=$((i + 1))
	done
'

test_expect_success "$M: a throttled task shows WAITING with the rate_limit reason" '
	wait_for "ts status $M-r$NTASKS | grep -q \"^$M-r$NTASKS WAITING (rate_limit probe=10/1s: next start at 20[0-9-]*T[0-9:.]*Z)\$\"" 20 &&
	ts status $M-r$NTASKS &&
	ts --json status $M-r$NTASKS | jq -e ".status == \"WAITING\" and (.reason | startswith(\"rate_limit probe=10/1s: next start at \"))" >/dev/null &&
	test -f "$SPOOL/incoming/$M-r$NTASKS.json"
'

test_expect_success "$M: all $NTASKS SUCCESS with one attempt each, none failed" '
	wait_for "test \$(ls $SPOOL/done | grep -c \"^$M-r\") -eq $NTASKS" 60 &&
	test "$(ls $SPOOL/failed | grep -c "^$M-r")" -eq 0 &&
	for f in "$SPOOL"/results/$M-r*.json; do
		jq -e ".status == \"SUCCESS\" and (.attempts | length) == 1" "$f" >/dev/null ||
		    { echo "$f: $(cat "$f")"; return 1; }
	done &&
	test -z "$(ls -A "$SPOOL/corrupt")" &&
	test -z "$(ls -A "$SPOOL/state/waiting" 2>/dev/null)"
'

test_expect_success "$M: in every window of W ms at most 10 + floor(W/100) starts" '
	windows $M-r
'

test_expect_success "$M: taskspool_rate_limited_total counts the claims held back" '
	wait_for "cat $SPOOL/metrics/${M}*.prom | grep \"^taskspool_rate_limited_total{.*task_code=\\\"probe\\\"} [1-9]\"" 10 &&
	grep -h "^taskspool_rate_limited_total" "$SPOOL"/metrics/${M}*.prom
'
}

phase e

test_expect_success "e: idle: the leader's sweep removes state/rates/probe" '
	wait_for "test -z \"\$(ls -A $SPOOL/state/rates)\"" 30
'

test_expect_success 'e: SIGHUP: a changed rate_limit applies to the waiting task at once' '
	stop_daemon e1 && stop_daemon e2 && stop_daemon e3 &&
	cp "$CONF" "$TRASH/h.conf" && echo "rate_limit = probe=1/1h" >>"$TRASH/h.conf" &&
	start_daemon h -c "$TRASH/h.conf" &&
	drop e-h1.json "{\"requestId\":\"e-h1\",\"taskCode\":\"probe\"}" &&
	wait_terminal e-h1 20 &&
	test "$(grep -c "e-h1: WAITING" "$TRASH/log.h")" -eq 0 &&
	drop e-h2.json "{\"requestId\":\"e-h2\",\"taskCode\":\"probe\"}" &&
	wait_for "ts status e-h2 | grep -q \"WAITING (rate_limit probe=1/1h: next start at \"" 10 &&
	sleep 1 && test -f "$SPOOL/incoming/e-h2.json" &&
	test "$(grep -c "e-h2: WAITING: rate_limit probe=1/1h: next start at " "$TRASH/log.h")" -eq 1 &&
	echo "rate_limit = probe=100/1s" >>"$TRASH/h.conf" &&
	kill -HUP "$(daemon_pid h)" &&
	wait_terminal e-h2 10 && test "$(state_of e-h2)" = done &&
	echo "rate_limit = probe=10/1q" >>"$TRASH/h.conf" &&
	kill -HUP "$(daemon_pid h)" &&
	wait_for "grep -q \"SIGHUP: configuration not reloaded: .*rate_limit: \\\"probe=10/1q\\\": period is not\" $TRASH/log.h" 10
'
test_expect_success 'e: the daemon with its own configuration stops' 'stop_daemon h'

# Per key (rate_limit_per_key, the task's expanded concurrencyKey): 2/1s
# burst 1, so T = 500 ms and tau = 0 for each key: in any window of
# 1000 ms at most 1 + floor(1000/500) = 3 starts of one key; the two
# keys are separate buckets, so all 8 run and both keys are throttled.
test_expect_success 'e: rate_limit_per_key: each concurrencyKey its own bucket (2/1s burst 1)' '
	start_daemon k -j 4 -o "rate_limit=" -o "rate_limit_per_key=probe=2/1s:1" &&
	for c in a b; do for i in 1 2 3 4; do
		drop "e-pk$c$i.json" "{\"requestId\":\"e-pk$c$i\",\"taskCode\":\"probe\",\"concurrencyKey\":\"cust:{c}\",\"executeParams\":{\"c\":\"$c\"}}" || return 1
	done; done &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^e-pk\") -eq 8" 30 &&
	for c in a b; do
		grep "^START e-pk$c" "$SPOOL/probe.log" | awk "{ print \$4 }" | sort -n |
		awk "{ t[NR] = \$1 } END { m = 0; j = 1
			for (i = 1; i <= NR; i++) { while (t[i] - t[j] > 1000000000) j++
				if (i - j + 1 > m) m = i - j + 1 }
			print \"key $c: at most\", m, \"starts in 1 s (bound 3) of\", NR
			exit !(m <= 3 && NR == 4) }" || return 1
	done &&
	grep -q "e-pka[0-9]: WAITING: rate_limit_per_key probe=2/1s:1" "$TRASH/log.k" &&
	grep -q "e-pkb[0-9]: WAITING: rate_limit_per_key probe=2/1s:1" "$TRASH/log.k" &&
	stop_daemon k
'

test_expect_success 'a malformed rate_limit is refused at start (exit 78), naming the key and the item' '
	rc=0 && "$TSD" -n -c "$CONF" -o "rate_limit=probe=10/1s,mail=0/1m" 2>"$TRASH/err" || rc=$? &&
	cat "$TRASH/err" && test $rc = 78 &&
	grep -q "rate_limit: \"mail=0/1m\": N is not" "$TRASH/err" &&
	rc=0 && "$TSD" -n -c "$CONF" -o "rate_limit_per_key=probe=1/1s:0" 2>"$TRASH/err" || rc=$? &&
	test $rc = 78 && grep -q "rate_limit_per_key: \"probe=1/1s:0\": burst" "$TRASH/err"
'

redis_setup
: >"$SPOOL/probe.log"
rm -rf "$SPOOL/state/rates"	# the file of e-h2, left by daemon h
phase c

test_expect_success "c: idle: no execrate key is left in Redis, no state/rates/" '
	wait_for "test -z \"\$(rcli --scan --pattern \"${PREFIX}execrate:*\")\"" 10 &&
	test ! -e "$SPOOL/state/rates"	# cluster mode keeps no file
'

test_done
