#!/bin/sh
# Retries with capped exponential backoff and jitter, exhausted retries,
# delayed and scheduled ("at") tasks.  The harness config has
# retry_base_ms = 200, retry_max_ms = 2000 and the default jitter of 20 %,
# so the delay after failed attempt n is drawn from
# [0.8 * 200 * 2^(n-1), 200 * 2^(n-1)] ms: 160..200 after attempt 1,
# 320..400 after attempt 2, 640..800 after attempt 3.
#
# Lower bounds are exact (the daemon must never start early); upper
# bounds are generous (a loaded machine may start late).
. "$(dirname "$0")/test-lib.sh"

# res ID JQ: evaluate JQ on results/ID.json (raw output).
res() { jq -r "$2" "$SPOOL/results/$1.json"; }

# A jq function: RFC 3339 "YYYY-MM-DDTHH:MM:SS.mmmZ" → epoch ms.
JQMS='def ms: (.[0:19] + "Z" | fromdateiso8601) * 1000 + (.[20:23] | tonumber);'

# att_ms ID N FIELD: attempts[N].FIELD of ID's result in epoch ms.
att_ms() { res "$1" "$JQMS .attempts[$2].$3 | ms"; }

# top_ms ID FIELD: a top-level timestamp of ID's result in epoch ms.
top_ms() { res "$1" "$JQMS .$2 | ms"; }

# probe_ms ID ATTEMPT START|END: the probe's own clock (probe.log, ns) in ms.
probe_ms() {
	awk -v id="$1" -v a="$2" -v w="$3" \
	    '$1 == w && $2 == id && $3 == a { print substr($4, 1, length($4) - 6) }' \
	    "$SPOOL/probe.log"
}

# ge A B WHAT: A >= B, or say which bound was broken.
ge() {
	[ "$1" -ge "$2" ] || { echo "$3: $1 < $2"; return 1; }
}

# gap_ok ID N LO HI: attempt N+1 (0-based index N) starts no earlier than
# attempt N's finishedAt + LO and its retryAt; its retryAt lies in
# [finishedAt + LO, finishedAt + HI]; the probe saw the same gap.
gap_ok() {
	fin=$(att_ms "$1" "$2" finishedAt) && ret=$(att_ms "$1" "$2" retryAt) &&
	nst=$(att_ms "$1" $(($2 + 1)) startedAt) &&
	pend=$(probe_ms "$1" $(($2 + 1)) END) &&
	pst=$(probe_ms "$1" $(($2 + 2)) START) || return 1
	echo "$1 attempt $(($2 + 1)) -> $(($2 + 2)): retryAt-finishedAt $((ret - fin)) ms," \
	    "startedAt-finishedAt $((nst - fin)) ms, probe gap $((pst - pend)) ms"
	ge "$nst" $((fin + $3)) "startedAt vs finishedAt + $3" &&
	ge "$nst" "$ret" "startedAt vs retryAt" &&
	ge "$ret" $((fin + $3)) "retryAt vs finishedAt + $3" &&
	ge $((fin + $4 + 250)) "$ret" "retryAt vs finishedAt + $4 (+250 slack)" &&
	ge "$pst" $((pend + $3)) "probe START vs previous probe END + $3" &&
	ge $((ret + 3000)) "$nst" "startedAt vs retryAt + 3000 (late)"
}

test_expect_success 'daemon starts' 'start_daemon n1'

test_expect_success 'fail_attempts 2, maxRetries 3: TEMPFAIL, TEMPFAIL, SUCCESS' '
	ts submit --code probe --id rb1 --retries 3 \
	    --params "{\"fail_attempts\": 2}" >/dev/null &&
	wait_terminal rb1 20 &&
	test "$(state_of rb1)" = done &&
	test "$(res rb1 .status)" = SUCCESS &&
	test "$(res rb1 ".attempts | length")" = 3 &&
	test "$(res rb1 "[.attempts[].outcome] | join(\",\")")" = TEMPFAIL,TEMPFAIL,SUCCESS &&
	test "$(res rb1 "[.attempts[].exitCode | tostring] | join(\",\")")" = 75,75,0 &&
	test "$(res rb1 "[.attempts[].attempt | tostring] | join(\",\")")" = 1,2,3 &&
	test "$(res rb1 .attempts[2].retryAt)" = null &&
	test "$(res rb1 .failureReason)" = null
'

test_expect_success 'attempt 2 waits >= 160 ms (200 - 20%), attempt 3 >= 320 ms (400 - 20%)' '
	gap_ok rb1 0 160 200 &&
	gap_ok rb1 1 320 400
'

test_expect_success 'each attempt starts after its own start was recorded in order' '
	test "$(res rb1 "$JQMS [range(1; .attempts | length) as \$i |
	    select((.attempts[\$i].startedAt | ms) < (.attempts[\$i - 1].finishedAt | ms))] | length")" = 0 &&
	test "$(res rb1 "$JQMS [.attempts[] | select((.finishedAt | ms) < (.startedAt | ms))] | length")" = 0
'

test_expect_success 'exhausted retries: exit 1 with maxRetries 2 gives 3 attempts, FAILED, WORKER_EXIT' '
	ts submit --code probe --id rb2 --retries 2 --params "{\"exit\": 1}" --wait >/dev/null
	test $? = 1 &&
	test "$(state_of rb2)" = failed &&
	test "$(res rb2 .status)" = FAILED &&
	test "$(res rb2 .failureReason.code)" = WORKER_EXIT &&
	test "$(res rb2 ".attempts | length")" = 3 &&
	test "$(res rb2 "[.attempts[].outcome] | join(\",\")")" = FAILED,FAILED,FAILED &&
	test "$(res rb2 "[.attempts[].exitCode | tostring] | join(\",\")")" = 1,1,1 &&
	test "$(res rb2 .attempts[2].retryAt)" = null &&
	test "$(grep -c "^START rb2 " "$SPOOL/probe.log")" = 3 &&
	gap_ok rb2 0 160 200 &&
	gap_ok rb2 1 320 400
'

test_expect_success 'exhausted retries: no further attempt after FAILED' '
	sleep 1.5 &&
	test "$(grep -c "^START rb2 " "$SPOOL/probe.log")" = 3 &&
	test "$(state_of rb2)" = failed &&
	test -z "$(ls -A "$SPOOL/delayed")"
'

test_expect_success '--delay 1500: waits in delayed/, starts >= 1500 ms after createdAt' '
	ts submit --code probe --id dl1 --delay 1500 >/dev/null &&
	test "$(state_of dl1)" = delayed &&
	wait_terminal dl1 20 &&
	test "$(res dl1 .status)" = SUCCESS &&
	c=$(top_ms dl1 createdAt) && s=$(att_ms dl1 0 startedAt) &&
	p=$(probe_ms dl1 1 START) &&
	echo "startedAt - createdAt = $((s - c)) ms, probe START - createdAt = $((p - c)) ms" &&
	ge "$s" $((c + 1500)) "startedAt vs createdAt + 1500" &&
	ge "$p" $((c + 1500)) "probe START vs createdAt + 1500" &&
	ge $((c + 1500 + 3000)) "$s" "startedAt vs createdAt + 4500 (late)"
'

test_expect_success 'triggerType at, runAt 2 s ahead, dropped as a file: not started before runAt' '
	now=$(date +%s%3N) &&
	at=$((now + 2000)) &&
	runat=$(date -u -d "@$((at / 1000)).$(printf %03d $((at % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ) &&
	echo "runAt $runat ($at)" &&
	drop at1.json "{\"requestId\":\"at1\",\"taskCode\":\"probe\",\"triggerType\":\"at\",\"runAt\":\"$runat\"}" &&
	wait_for "test \"\$(state_of at1)\" = delayed" 2 &&
	test ! -e "$SPOOL/results/at1.json" &&
	wait_terminal at1 20 &&
	test "$(res at1 .status)" = SUCCESS &&
	s=$(att_ms at1 0 startedAt) && p=$(probe_ms at1 1 START) &&
	echo "startedAt - runAt = $((s - at)) ms, probe START - runAt = $((p - at)) ms" &&
	ge "$s" "$at" "startedAt vs runAt" &&
	ge "$p" "$at" "probe START vs runAt" &&
	ge $((at + 3000)) "$s" "startedAt vs runAt + 3000 (late)"
'

test_expect_success 'triggerType at with runAt in the past runs now' '
	drop at2.json "{\"requestId\":\"at2\",\"taskCode\":\"probe\",\"triggerType\":\"at\",\"runAt\":\"2020-01-01T00:00:00.000Z\"}" &&
	wait_terminal at2 5 &&
	test "$(res at2 .status)" = SUCCESS
'

test_expect_success 'daemon stops cleanly' 'stop_daemon n1'

test_done
