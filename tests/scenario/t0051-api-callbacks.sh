#!/bin/sh
# The API end to end with its callback (issue 5): a signed registration
# through lighttpd (POST /api/callbacks/register), a signed submit, the
# hook runs, GET shows SUCCESS with the hook's result, a local receiver
# (tests/tools/cbrecv.py) gets the signed callback, the Python client
# (contrib/clients/tsapi.py verify) verifies it, GET shows the delivery
# DELIVERED after one attempt with HTTP 200.  Also a per-task callbackUrl
# (it overrides the registration's URL; the registration's secret signs,
# API.md §4.3) on a receiver that fails twice, and tsapi.py's verifier
# against the callback_verification vectors of api-vectors.json.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
trap api_cleanup EXIT
PYCLIENT="$API_HERE/contrib/clients/tsapi.py"
RECV="$API_HERE/tests/tools/cbrecv.py"
VEC="${TESTDATA:-$API_HERE/tests/data}/api-vectors.json"
# The secret of api-vectors.json C01: a secret that is not the app's.
C01=whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=
echo "fsync = 0" >>"$CONF"
local_callbacks 300,300,300,300
api_server

cat >"$HOOKS/echo" <<'H'
#!/bin/sh
printf '{"got":%s,"n":"\344\273\273"}\n' "$(cat)" >"$TASKSPOOL_RESULT_FILE"
H
chmod +x "$HOOKS/echo"

export TS_APP_ID=tester
TS_SECRET=$(ts apps add tester --codes echo) || exit 1
export TS_SECRET

# The receiver saves every request raw in $TRASH/dump (its own check,
# with C01, is not used: the app's secret is issued later).
mkdir -p "$TRASH/dump"
CBRECV_DUMP="$TRASH/dump" python3 "$RECV" "$TRASH/recv.port" "$TRASH/recv.log" "$C01" \
    2>>"$TRASH/recv.err" &
DAEMON_PIDS="$DAEMON_PIDS $!"
wait_for "test -f $TRASH/recv.port" 20 || { echo "Bail out! receiver did not start"; exit 1; }
RPORT=$(cat "$TRASH/recv.port")

# get ID: GET /api/tasks/ID through the Python client into $TRASH/get.
get() { python3 "$PYCLIENT" get "$1" >"$TRASH/get"; }
# hdr N NAME: a header value of the receiver's request N.
hdr() { jq -r ".[\"$2\"]" "$TRASH/dump/$1.hdr"; }
# dumped_for ID: the number of the saved request carrying task ID.
dumped_for() {
	for _f in "$TRASH"/dump/*.hdr; do
		[ -f "$_f" ] || continue
		_n=$(basename "$_f" .hdr)
		[ "$(jq -r .data.requestId "$TRASH/dump/$_n.body")" = "$1" ] && { echo "$_n"; return 0; }
	done
	return 1
}

test_expect_success 'tsapi.py verify_webhook: callback_verification vectors CV01-CV04' '
	PYTHONPATH="$API_HERE/contrib/clients" python3 - "$VEC" <<-"P"
	import json, sys, tsapi
	v = json.load(open(sys.argv[1]))
	c = {x["id"]: x for x in v["callback_signing"]}
	for cv in v["callback_verification"][:4]:
	    b = c[cv["based_on"]]
	    body = b["body"].encode()
	    if "re-serialises" in cv.get("change", ""):
	        body = json.dumps(json.loads(b["body"])).encode()
	    secret = cv.get("receiver_secret", b["secrets"][0])
	    now = cv.get("receiver_time", b["webhook_timestamp"])
	    h = b["headers"]
	    ok, why = tsapi.verify_webhook(secret, h["webhook-id"],
	                                   h["webhook-timestamp"],
	                                   h["webhook-signature"], body, now)
	    want = cv["expected"].startswith("accept")
	    print(cv["id"], ok, why)
	    assert ok == want, cv["id"]
	P
'

test_expect_success 'daemon starts with callback_allow_http, allow_cidrs 127.0.0.0/8' '
	start_daemon n1 -j 2
'

test_expect_success 'POST /api/callbacks/register (signed, through lighttpd): 201 with a whsec_ secret' '
	python3 "$PYCLIENT" register "http://127.0.0.1:$RPORT/ok" >"$TRASH/reg" &&
	SECRET=$(jq -r .secret "$TRASH/reg") &&
	echo "$SECRET" | grep -Eq "^whsec_[A-Za-z0-9+/]{43}=$" &&
	test "$(jq -r .url "$SPOOL/state/callbacks/tester.json")" = "http://127.0.0.1:$RPORT/ok" &&
	echo "$SECRET" >"$TRASH/secret"
'

test_expect_success 'submit -> 202 -> hook runs -> GET shows SUCCESS with the hook result' '
	printf "{\"requestId\":\"cbe2e-1\",\"taskCode\":\"echo\",\"executeParams\":{\"x\":[1,2]}}" >"$TRASH/t1.json" &&
	python3 "$PYCLIENT" submit "$TRASH/t1.json" >"$TRASH/out" &&
	test "$(jq -r .requestId "$TRASH/out")" = cbe2e-1 &&
	python3 "$PYCLIENT" wait cbe2e-1 30 >"$TRASH/out" &&
	test "$(jq -r .status "$TRASH/out")" = SUCCESS &&
	test "$(jq -c .result "$TRASH/out")" = "{\"got\":{\"x\":[1,2]},\"n\":\"任\"}"
'

test_expect_success 'the receiver gets the callback; tsapi.py verify accepts it with the registration secret' '
	wait_for "dumped_for cbe2e-1 >/dev/null" 30 &&
	n=$(dumped_for cbe2e-1) &&
	b="$TRASH/dump/$n.body" &&
	test "$(jq -r .type "$b")" = task.finished &&
	test "$(jq -r .data.status "$b")" = SUCCESS &&
	test "$(jq -c .data.result "$b")" = "{\"got\":{\"x\":[1,2]},\"n\":\"任\"}" &&
	TS_WEBHOOK_SECRET=$(cat "$TRASH/secret") python3 "$PYCLIENT" verify \
	    "$(hdr "$n" webhook-id)" "$(hdr "$n" webhook-timestamp)" "$(hdr "$n" webhook-signature)" "$b" >"$TRASH/v" &&
	test "$(cat "$TRASH/v")" = ok
'

test_expect_success 'tsapi.py verify rejects another secret, a changed body, an old timestamp' '
	n=$(dumped_for cbe2e-1) && b="$TRASH/dump/$n.body" &&
	id=$(hdr "$n" webhook-id) && t=$(hdr "$n" webhook-timestamp) && s=$(hdr "$n" webhook-signature) &&
	! TS_WEBHOOK_SECRET=$C01 python3 "$PYCLIENT" verify "$id" "$t" "$s" "$b" &&
	sed "s/SUCCESS/FAILED/" "$b" >"$TRASH/changed" &&
	! TS_WEBHOOK_SECRET=$(cat "$TRASH/secret") python3 "$PYCLIENT" verify "$id" "$t" "$s" "$TRASH/changed" &&
	! TS_WEBHOOK_SECRET=$(cat "$TRASH/secret") python3 "$PYCLIENT" verify "$id" "$((t - 301))" "$s" "$b" >"$TRASH/v" &&
	grep -q "300 s" "$TRASH/v"
'

test_expect_success 'GET shows callback DELIVERED, attempts 1, lastHttpStatus 200' '
	wait_for "get cbe2e-1 && test \"\$(jq -r .callback.status $TRASH/get)\" = DELIVERED" 30 &&
	test "$(jq -r .callback.attempts "$TRASH/get")" = 1 &&
	test "$(jq -r .callback.lastHttpStatus "$TRASH/get")" = 200 &&
	test "$(jq -c "select(.path == \"/ok\")" "$TRASH/recv.log" | wc -l)" = 1
'

test_expect_success 'a per-task callbackUrl, 500 twice: the registration secret signs; DELIVERED after 3 tries' '
	printf "{\"requestId\":\"cbe2e-2\",\"taskCode\":\"echo\",\"callbackUrl\":\"http://127.0.0.1:$RPORT/flaky\"}" >"$TRASH/t2.json" &&
	python3 "$PYCLIENT" submit "$TRASH/t2.json" >"$TRASH/out" &&
	python3 "$PYCLIENT" wait cbe2e-2 30 >"$TRASH/out" &&
	wait_for "get cbe2e-2 && test \"\$(jq -r .callback.status $TRASH/get)\" = DELIVERED" 30 &&
	test "$(jq -r .callback.attempts "$TRASH/get")" = 3 &&
	test "$(jq -r .callback.lastHttpStatus "$TRASH/get")" = 200 &&
	n=$(dumped_for cbe2e-2) && b="$TRASH/dump/$n.body" &&
	test "$(jq -r .data.requestId "$b")" = cbe2e-2 &&
	TS_WEBHOOK_SECRET=$(cat "$TRASH/secret") python3 "$PYCLIENT" verify \
	    "$(hdr "$n" webhook-id)" "$(hdr "$n" webhook-timestamp)" "$(hdr "$n" webhook-signature)" "$b" &&
	test "$(jq -c "select(.path == \"/flaky\")" "$TRASH/recv.log" | wc -l)" = 3
'

test_done
