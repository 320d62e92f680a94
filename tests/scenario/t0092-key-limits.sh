#!/bin/sh
# Per-key concurrency (issue 15 item 2; README.md "Per-key
# concurrency"): concurrencyKey "customer:{customer}" with
# max_concurrent_per_key = probe=2, in embedded mode (flock slot files
# state/limits/probe@<hash>.<i>) and then in cluster mode (Redis sorted
# sets limit:probe:k:<hash>; $TS_TEST_REDIS, else its own server):
#  - three daemons, 200 tasks over 20 keys, dropped key after key: never
#    more than 2 attempts of one key at once (the probe's START/END), all
#    200 SUCCESS, each run once; some were WAITING with the key named;
#  - idle keys cost nothing: no slot file of a key left in
#    state/limits/, no limit:*:k:* key left in Redis;
#  - a task's maxConcurrentPerKey 1 overrides the config's 2;
#  - a concurrencyKey naming a member executeParams lacks, dropped into
#    incoming/: corrupt/ with a reason naming concurrencyKey;
#  - kill -9 of a node holding key slots: no slot leaked, all finish;
#    (the overlap with a killed hook's leftovers: t0094)
#  - (embedded) the API: POST /api/tasks with concurrencyKey waits behind
#    the key's holders, its view shows the template and the key; a bad
#    template is 422 naming concurrencyKey; the CLI's submit
#    --concurrency-key/--max-per-key, a bad template exit 65.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
trap 'api_stop; redis_teardown' EXIT
TSAPI="$API_HERE/contrib/clients/tsapi.sh"
echo "fsync = 0" >>"$CONF"
echo "max_concurrent_per_key = probe=2" >>"$CONF"
: >"$TRASH/ids"		# every id dropped, both phases (check_once)
: >"$TRASH/kills"	# every kill -9, both phases (check_no_overlap)

# drop_keys PREFIX KEYS PER SLEEP_MS [EXTRA]: PER tasks of each of KEYS
# keys, key after key: PREFIX-kNN-III with executeParams.customer cNN.
drop_keys() {
	_k=1
	while [ $_k -le "$2" ]; do
		_i=1
		while [ $_i -le "$3" ]; do
			_id=$(printf '%s-k%02d-%03d' "$1" $_k $_i)
			echo "$_id" >>"$TRASH/ids"
			printf '{"requestId":"%s","taskCode":"probe","concurrencyKey":"customer:{customer}","executeParams":{"customer":"c%02d","sleep_ms":%d}%s}' \
			    "$_id" $_k "$4" "${5:-}" >"$SPOOL/tmp/drop.$_id"
			mv "$SPOOL/tmp/drop.$_id" "$SPOOL/incoming/$_id.json" || return 1
			_i=$((_i + 1))
		done
		_k=$((_k + 1))
	done
}

# max_running PREFIX: the largest number of attempts of ids starting
# with PREFIX between their START and END at one instant (probe.log; an
# attempt without END never ends — or, with MR_ENDED=1, is left out:
# the hooks of a daemon killed with -9 die with it (PR_SET_PDEATHSIG)
# but write no END, and in file mode its slots are free the moment it
# dies, so the probe cannot time their end).
max_running() {
	grep " $1" "$SPOOL/probe.log" |
	awk -v ended="${MR_ENDED:-0}" '
	     $1 == "START" { s[$2 " " $3] = $4; next }
	     $1 == "END" { e[$2 " " $3] = $4 }
	     END { for (a in s) { if (!(a in e) && ended) continue
			print s[a], 1
			print (a in e) ? e[a] : 9e18, -1 } }' |
	sort -k1,1n -k2,2n | awk '{ n += $2; if (n > m) m = n } END { print m + 0 }'
}

# keys_max PREFIX KEYS: the largest max_running over the keys.
keys_max() {
	_m=0 _k=1
	while [ $_k -le "$2" ]; do
		_r=$(max_running "$(printf '%s-k%02d-' "$1" $_k)")
		[ "$_r" -gt $_m ] && _m=$_r
		_k=$((_k + 1))
	done
	echo $_m
}

# all_success PREFIX COUNT: COUNT results of PREFIX*, all SUCCESS.
all_success() {
	test "$(ls "$SPOOL/done" | grep -c "^$1")" = "$2" &&
	test -z "$(ls "$SPOOL/failed" | grep "^$1")"
}

# key_residue: slot files of keys in state/limits/ and limit:*:k:* keys
# of this script's prefix in Redis (cluster phase), one per line.
key_residue() {
	ls "$SPOOL/state/limits" 2>/dev/null | grep @
	[ -n "${PREFIX:-}" ] && rcli --scan --pattern "${PREFIX}limit:*:k:*"
	true
}

phase() {	# phase M: the scenario with prefix M (e = embedded, c = cluster)
M=$1

test_expect_success "$M: three daemons, 200 tasks over 20 keys (probe=2 per key): never more than 2 of a key at once, all SUCCESS" '
	start_daemon ${M}1 -j 4 && start_daemon ${M}2 -j 4 && start_daemon ${M}3 -j 4 &&
	drop_keys $M 20 10 150 &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^$M-k\") -ge 200" 180 &&
	all_success $M-k 200 &&
	m=$(keys_max $M 20) && echo "# most of one key at once: $m" &&
	test "$m" = 2 &&
	check_once "$TRASH/ids" &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: the tasks over a key's limit were WAITING with the key named" '
	grep -h "WAITING: max_concurrent_per_key probe=2 reached for key '"'"'customer:c" \
	    "$TRASH/log.${M}1" "$TRASH/log.${M}2" "$TRASH/log.${M}3" >"$TRASH/$M.waited" &&
	echo "# $(wc -l <"$TRASH/$M.waited") WAITING lines" &&
	test "$(wc -l <"$TRASH/$M.waited")" -ge 20 &&
	test "$(ls "$SPOOL/state/waiting" | wc -l)" = 0
'

test_expect_success "$M: status shows WAITING with the key while a key is busy" '
	drop_keys $M-st 1 3 5000 &&
	wait_for "ts status $M-st-k01-003 | grep -q WAITING" 20 &&
	test "$(ts status $M-st-k01-003)" = "$M-st-k01-003 WAITING (max_concurrent_per_key probe=2 reached for key '"'"'customer:c01'"'"')" &&
	ts --json status $M-st-k01-003 | jq -e ".status == \"WAITING\" and (.reason | test(\"customer:c01\"))" &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^$M-st-\") -ge 3" 40
'

test_expect_success "$M: idle keys leave nothing behind (no slot file, no Redis key)" '
	wait_for "test -z \"\$(key_residue)\"" 10 ||
	    { key_residue; return 1; }
'

test_expect_success "$M: a task's maxConcurrentPerKey 1 overrides the config's 2" '
	drop_keys $M-one 2 6 200 ",\"maxConcurrentPerKey\":1" &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^$M-one-\") -ge 12" 60 &&
	all_success $M-one- 12 &&
	test "$(keys_max $M-one 2)" = 1
'

test_expect_success "$M: a concurrencyKey naming a member executeParams lacks: corrupt/ naming concurrencyKey" '
	drop $M-bad.json "{\"requestId\":\"$M-bad\",\"taskCode\":\"probe\",\"concurrencyKey\":\"t:{tenant}\",\"executeParams\":{}}" &&
	drop $M-bad2.json "{\"requestId\":\"$M-bad2\",\"taskCode\":\"probe\",\"concurrencyKey\":\"t:{tenant\"}" &&
	wait_for "test -f $SPOOL/corrupt/$M-bad.json.reason && test -f $SPOOL/corrupt/$M-bad2.json.reason" 20 &&
	cat "$SPOOL/corrupt/$M-bad.json.reason" "$SPOOL/corrupt/$M-bad2.json.reason" &&
	grep -q "^concurrencyKey: {tenant}: executeParams has no member" "$SPOOL/corrupt/$M-bad.json.reason" &&
	grep -q "^concurrencyKey: .{. at byte 3" "$SPOOL/corrupt/$M-bad2.json.reason" &&
	rm -f "$SPOOL"/corrupt/$M-bad*
'

test_expect_success "$M: kill -9 of a node holding key slots: nothing leaked, all finish" '
	drop_keys $M-k9 2 4 1500 &&
	wait_for "test \$(find $SPOOL/active -name \"$M-k9-*.json\" | wc -l) -ge 3" 20 &&
	victim=$(basename "$(dirname "$(find "$SPOOL/active" -name "$M-k9-*.json" | head -1)")") &&
	echo "# kill -9 of node $victim" &&
	kill9_logged "$victim" &&
	wait_for "test \$(ls $SPOOL/done | grep -c \"^$M-k9-\") -ge 8" 120 &&
	test "$(MR_ENDED=1 keys_max $M-k9 2)" -le 2 &&
	check_no_overlap &&
	start_daemon "$victim" -j 4
'

[ $M = e ] && test_expect_success "$M: API: a task with concurrencyKey waits behind its key, its view shows template and key; a bad one is 422" '
	drop_keys $M-ab 1 2 2500 &&
	wait_for "test \$(find $SPOOL/active -name \"$M-ab-*.json\" | wc -l) = 2" 20 &&
	printf "{\"requestId\":\"$M-api\",\"taskCode\":\"probe\",\"concurrencyKey\":\"customer:{customer}\",\"executeParams\":{\"customer\":\"c01\"}}" >"$TRASH/$M-api.json" &&
	sh "$TSAPI" submit "$TRASH/$M-api.json" >"$TRASH/out" &&
	wait_for "ts status $M-api | grep -q WAITING" 10 &&
	sh "$TSAPI" get $M-api >"$TRASH/out" && cat "$TRASH/out" &&
	jq -e ".status == \"WAITING\" and .concurrencyKey == \"customer:{customer}\" and .concurrencyKeyValue == \"customer:c01\"" "$TRASH/out" &&
	sh "$TSAPI" wait $M-api 30 >/dev/null &&
	test "$(state_of $M-api)" = done &&
	printf "{\"requestId\":\"$M-api2\",\"taskCode\":\"probe\",\"concurrencyKey\":\"c:{nope}\"}" >"$TRASH/$M-api2.json" &&
	rc=0 && sh "$TSAPI" submit "$TRASH/$M-api2.json" >"$TRASH/out" || rc=$? &&
	test $rc = 1 && cat "$TRASH/out" &&
	test "$(jq -r .code "$TRASH/out")" = VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/out")" = concurrencyKey &&
	test ! -e "$SPOOL/incoming/$M-api2.json" &&
	echo "$M-api" >>"$TRASH/ids"
'

[ $M = e ] && test_expect_success "$M: CLI: submit --concurrency-key with --params and --max-per-key; bad ones are refused" '
	ts submit --code probe --id $M-cli --params "{\"customer\":\"c07\"}" --concurrency-key "customer:{customer}" --max-per-key 1 >/dev/null &&
	wait_terminal $M-cli 20 && test "$(state_of $M-cli)" = done &&
	jq -e ".concurrencyKey == \"customer:{customer}\" and .maxConcurrentPerKey == 1" "$SPOOL/done/$M-cli.json" &&
	rc=0 && ts submit --code probe --concurrency-key "c:{x" 2>"$TRASH/err" || rc=$? &&
	test $rc = 65 && cat "$TRASH/err" && grep -q "concurrencyKey" "$TRASH/err" &&
	rc=0 && ts submit --code probe --max-per-key 2 2>"$TRASH/err" || rc=$? &&
	test $rc = 64 && grep -q "max-per-key goes with --concurrency-key" "$TRASH/err" &&
	echo "$M-cli" >>"$TRASH/ids"
'

test_expect_success "$M: daemons stop" '
	stop_daemon ${M}1 && stop_daemon ${M}2 && stop_daemon ${M}3
'
}

api_server
export TS_APP_ID=tester
TS_SECRET=$(ts apps add tester --codes probe) || exit 1
export TS_SECRET
phase e
redis_setup
phase c
test_done
