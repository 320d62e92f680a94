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

# as APP SECRET CMD...: the Python client as another app.
as() { _a=$1; _s=$2; shift 2; TS_APP_ID=$_a TS_SECRET=$_s "$@"; }

test_expect_success 'finished before its app registered: NOT_REGISTERED, also after the registration' '
	LATE=$(ts apps add late --codes echo) &&
	printf "{\"requestId\":\"late-1\",\"taskCode\":\"echo\"}" >"$TRASH/late.json" &&
	as late "$LATE" python3 "$PYCLIENT" submit "$TRASH/late.json" >"$TRASH/out" &&
	as late "$LATE" python3 "$PYCLIENT" wait late-1 30 >"$TRASH/out" &&
	test "$(jq -r .callback.status "$TRASH/out")" = NOT_REGISTERED &&
	as late "$LATE" python3 "$PYCLIENT" register "http://127.0.0.1:$RPORT/ok" >"$TRASH/reg2" &&
	test -f "$SPOOL/state/callbacks/late.json" &&
	as late "$LATE" python3 "$PYCLIENT" get late-1 >"$TRASH/out" &&
	cat "$TRASH/out" &&
	test "$(jq -r .callback.status "$TRASH/out")" = NOT_REGISTERED &&
	test "$(jq -r .callback.attempts "$TRASH/out")" = 0 &&
	test ! -e "$SPOOL/outbox/callbacks/pending/late-1.json"
'

test_expect_success 'a callbackUrl and no secret (no callback_secret, app not registered): 422 naming the keys, nothing stored' '
	NOSEC=$(ts apps add nosec --codes echo) &&
	printf "{\"requestId\":\"nosec-1\",\"taskCode\":\"echo\",\"callbackUrl\":\"http://127.0.0.1:$RPORT/ok\"}" >"$TRASH/nosec.json" &&
	! as nosec "$NOSEC" python3 "$PYCLIENT" submit "$TRASH/nosec.json" >"$TRASH/out" &&
	cat "$TRASH/out" &&
	test "$(jq -r .status "$TRASH/out")" = 422 &&
	test "$(jq -r .code "$TRASH/out")" = CALLBACK_SECRET_MISSING &&
	test "$(jq -r .type "$TRASH/out")" = urn:ts:problem:callback-secret-missing &&
	test "$(jq -r .field "$TRASH/out")" = callbackUrl &&
	jq -r .detail "$TRASH/out" | grep -q "^callbackUrl: no secret to sign its callbacks with.*set callback_secret.*in taskspool.conf, or register the app" &&
	test ! -e "$SPOOL/state/requests/nosec-1.json" &&
	test -z "$(find "$SPOOL" -name "nosec-1.json")" &&
	# taskspool submit (no app, no callback_secret) refuses it too
	{ ts submit "$TRASH/nosec.json" 2>"$TRASH/err"; test $? = 65; } &&
	cat "$TRASH/err" &&
	grep -q "^taskspool submit: invalid task: callbackUrl: no secret to sign its callbacks with.*callback_secret" "$TRASH/err" &&
	test -z "$(find "$SPOOL" -name "nosec-1.json")"
'

test_expect_success 'an unknown member (task, registration): 422 with "did you mean" the member' '
	printf "{\"taskCode\":\"echo\",\"timeoutsec\":5}" >"$TRASH/typo.json" &&
	! python3 "$PYCLIENT" submit "$TRASH/typo.json" >"$TRASH/out" &&
	cat "$TRASH/out" &&
	test "$(jq -r .code "$TRASH/out")" = VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/out")" = timeoutsec &&
	test "$(jq -r ".errors[0].reason" "$TRASH/out")" = "unknown member (did you mean \"timeoutSec\"?)" &&
	printf "{\"taskCode\":\"echo\",\"colour\":5}" >"$TRASH/typo.json" &&
	! python3 "$PYCLIENT" submit "$TRASH/typo.json" >"$TRASH/out" &&
	test "$(jq -r ".errors[0].reason" "$TRASH/out")" = "unknown member" &&
	# the registration body too
	printf "{\"url\":\"http://127.0.0.1:$RPORT/ok\",\"rotateSecrets\":true}" >"$TRASH/reg.json" &&
	! TS_VERBOSE=0 sh "$API_HERE/contrib/clients/tsapi.sh" request POST /api/callbacks/register "$TRASH/reg.json" >"$TRASH/out" &&
	cat "$TRASH/out" &&
	test "$(jq -r ".errors[0].field" "$TRASH/out")" = rotateSecrets &&
	test "$(jq -r ".errors[0].reason" "$TRASH/out")" = "unknown member (did you mean \"rotateSecret\"?)"
'

# set_key KEY VALUE: rewrite KEY's line of $CONF (the daemon reads it on
# SIGHUP, the CGI at each request).
set_key() {
	grep -v "^$1 *=" "$CONF" >"$CONF.new" && echo "$1 = $2" >>"$CONF.new" &&
	cat "$CONF.new" >"$CONF" && rm -f "$CONF.new"
}
# reloaded N: the daemon logged its N-th "configuration reloaded".
reloaded() { test "$(grep -c "configuration reloaded" "$TRASH/log.n1")" -ge "$1"; }

test_expect_success 'http://127.0.0.1 refused without callback_allow_http: the detail names the three keys (API and CLI)' '
	set_key callback_allow_http 0 &&
	! python3 "$PYCLIENT" register "http://127.0.0.1:$RPORT/ok" >"$TRASH/out" &&
	cat "$TRASH/out" &&
	test "$(jq -r .code "$TRASH/out")" = INVALID_CALLBACK_URL &&
	d=$(jq -r .detail "$TRASH/out") &&
	for k in "callback_allow_http = 1" callback_allow_cidrs callback_allowed_ports; do
		case $d in *"$k"*) ;; *) echo "detail lacks $k"; return 1;; esac
	done &&
	# still the old registration
	test "$(jq -r .url "$SPOOL/state/callbacks/tester.json")" = "http://127.0.0.1:$RPORT/ok" &&
	printf "{\"taskCode\":\"echo\",\"callbackUrl\":\"http://127.0.0.1:$RPORT/ok\"}" >"$TRASH/cli.json" &&
	{ ts submit "$TRASH/cli.json" 2>"$TRASH/err"; test $? = 65; } &&
	cat "$TRASH/err" &&
	grep -q "callback_allow_http = 1.*callback_allow_cidrs.*callback_allowed_ports" "$TRASH/err" &&
	# allowed scheme, loopback address denied: the key with the address
	set_key callback_allow_http 1 && set_key callback_allow_cidrs "" &&
	! python3 "$PYCLIENT" register "http://127.0.0.1:$RPORT/ok" >"$TRASH/out" &&
	test "$(jq -r .code "$TRASH/out")" = CALLBACK_URL_FORBIDDEN &&
	jq -r .detail "$TRASH/out" | grep -qF "the address 127.0.0.1 is a denied destination (loopback, private or another special-purpose range); callback_allow_cidrs = 127.0.0.1/32 in taskspool.conf allows it" &&
	# a port outside the list: the key and the port
	set_key callback_allow_cidrs 127.0.0.0/8 && set_key callback_allowed_ports 443 &&
	! python3 "$PYCLIENT" register "http://127.0.0.1/ok" >"$TRASH/out" &&
	test "$(jq -r .code "$TRASH/out")" = INVALID_CALLBACK_URL &&
	jq -r .detail "$TRASH/out" | grep -qF "port 80 is not an allowed port: callback_allowed_ports" &&
	set_key callback_allowed_ports ""
'

test_expect_success 'SIGHUP applies changed callback keys to the sender: http refused, then allowed again' '
	n0=$(grep -c "configuration reloaded" "$TRASH/log.n1" || :) &&
	set_key callback_allow_http 0 &&
	kill -HUP "$(daemon_pid n1)" &&
	wait_for "reloaded $((n0 + 1))" 10 &&
	drop hup1.json "{\"requestId\":\"hup1\",\"taskCode\":\"echo\",\"appId\":\"tester\",\"callbackUrl\":\"http://127.0.0.1:$RPORT/ok\"}" &&
	wait_for "test -f $SPOOL/outbox/callbacks/failed/hup1.json" 30 &&
	grep -q "hup1: callback try 1 to http://127.0.0.1:$RPORT/ok: BLOCKED_DESTINATION (URL not allowed)" "$TRASH/log.n1" &&
	! dumped_for hup1 &&
	set_key callback_allow_http 1 &&
	kill -HUP "$(daemon_pid n1)" &&
	wait_for "reloaded $((n0 + 2))" 10 &&
	drop hup2.json "{\"requestId\":\"hup2\",\"taskCode\":\"echo\",\"appId\":\"tester\",\"callbackUrl\":\"http://127.0.0.1:$RPORT/ok\"}" &&
	wait_for "test -f $SPOOL/outbox/callbacks/delivered/hup2.json" 30 &&
	dumped_for hup2 >/dev/null
'

test_done
