#!/bin/sh
# The HTTP API through a real lighttpd (mod_cgi) and curl: signed submit,
# the hook runs, GET shows the result; the shell and Python clients; a
# request signed by hand with openssl dgst (API.md §10); 50 concurrent
# submissions of one requestId; nonce replay; every row of API.md §5 a
# client can cause, each with its exact status and code; clients that
# leave before the answer (B55).
#
# Uses the lighttpd named by TS_TEST_LIGHTTPD / TS_TEST_LIGHTTPD_DIR when
# set (pointing its taskspool.cgi and taskspool.conf links at this test's
# build and spool), else starts its own with tests/servers/lighttpd.sh.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
here=$(cd "$(dirname "$0")/../.." && pwd)
CLIENT="$here/contrib/clients/tsapi.sh"
PYCLIENT="$here/contrib/clients/tsapi.py"

if [ -n "${TS_TEST_LIGHTTPD:-}" ]; then
	SRV=$TS_TEST_LIGHTTPD_DIR
	ln -sf "$BUILD/taskspool.cgi" "$SRV/taskspool.cgi"
	ln -sf "$CONF" "$SRV/taskspool.conf"
	HOSTPORT=$TS_TEST_LIGHTTPD
else
	SRV="$TRASH/lighttpd"
	out=$(BUILD="$BUILD" TASKSPOOL_CONFIG="$CONF" sh "$here/tests/servers/lighttpd.sh" start "$SRV") ||
	    { echo "Bail out! lighttpd did not start"; exit 1; }
	eval "$out"
	HOSTPORT=$TS_TEST_LIGHTTPD
	trap 'sh "$here/tests/servers/lighttpd.sh" stop "$SRV"; cleanup' EXIT
fi
export TS_URL="http://$HOSTPORT"
api_tester || exit 1
OTHER_SECRET=$(ts apps add other --codes echo) || exit 1
OFF_SECRET=$(ts apps add off --codes echo) && ts apps disable off || exit 1

# sreq METHOD PATH[?QUERY] [BODYFILE] [curl options...]: a request signed
# by hand (openssl dgst, API.md §10) as $APP/$KEY ($XTS, $NONCE, $CTYPE
# override the timestamp, nonce and media type); prints the status code
# and writes the body to $TRASH/body, the headers to $TRASH/hdr.
APP=tester
KEY=$TS_SECRET
sreq() {
	_m=$1; _p=${2%%\?*}; _q=; case $2 in *\?*) _q=${2#*\?} ;; esac
	_b=${3:-/dev/null}; shift 2; [ $# -gt 0 ] && shift
	_ts=${XTS:-$(date +%s)}; _n=${NONCE:-$(openssl rand -hex 16)}
	_h=$(openssl dgst -sha256 -r <"$_b" | cut -d' ' -f1)
	printf 'TS1-HMAC-SHA256\n%s\n%s\n%s\n%s\n%s\n%s\n%s' "$_m" "$_p" "$_q" \
	    "$APP" "$_ts" "$_n" "$_h" >"$TRASH/cs.txt"
	_s=${SIG:-$(openssl dgst -sha256 -hmac "$KEY" "$TRASH/cs.txt" | sed 's/.*= //')}
	if [ "$_b" != /dev/null ]; then
		set -- -H "Content-Type: ${CTYPE:-application/json}" --data-binary "@$_b" "$@"
	fi
	curl -s -o "$TRASH/body" -D "$TRASH/hdr" -w '%{http_code}' -X "$_m" \
	    -H "X-App-Id: $APP" -H "X-Timestamp: $_ts" -H "X-Nonce: $_n" \
	    -H "X-Signature: $_s" -H 'Expect:' "$@" "$TS_URL$_p${_q:+?$_q}"
}

test_expect_success 'daemon starts; /api/health answers 200 with one node' '
	start_daemon n1 -j 4 &&
	curl -s -o "$TRASH/h" -w "%{http_code}" "$TS_URL/api/health" >"$TRASH/st" &&
	test "$(cat "$TRASH/st")" = 200 &&
	test "$(jq -r .nodes "$TRASH/h")" = 1 &&
	test "$(jq -r .status "$TRASH/h")" = ok &&
	test "$(jq -r .version "$TRASH/h")" = "$("$BUILD/taskspool.cgi" --version | cut -d" " -f2)"
'

test_expect_success '/api/health: the only node drained is "drained" (still 200), resumed "ok"' '
	ts nodes drain n1 --reason maint >/dev/null 2>&1 &&
	curl -s -o "$TRASH/h" -w "%{http_code}" "$TS_URL/api/health" >"$TRASH/st" &&
	test "$(cat "$TRASH/st")" = 200 &&
	test "$(jq -c "[.status,.nodes,.draining]" "$TRASH/h")" = "[\"drained\",1,1]" &&
	ts nodes resume n1 >/dev/null 2>&1 &&
	curl -s -o "$TRASH/h" "$TS_URL/api/health" &&
	test "$(jq -c "[.status,.nodes,.draining]" "$TRASH/h")" = "[\"ok\",1,0]"
'

test_expect_success 'end to end: shell client submit -> 202 -> hook -> GET SUCCESS' '
	api_e2e e2e-1
'

test_expect_success 'end to end: Python client submits and polls' '
	printf "{\"requestId\":\"e2e-py\",\"taskCode\":\"echo\",\"executeParams\":\"hi\"}" >"$TRASH/py.json" &&
	python3 "$PYCLIENT" submit "$TRASH/py.json" >"$TRASH/out" &&
	test "$(jq -r .requestId "$TRASH/out")" = e2e-py &&
	python3 "$PYCLIENT" wait e2e-py 30 >"$TRASH/out" &&
	test "$(jq -c .result "$TRASH/out")" = "{\"got\":\"hi\"}"
'

test_expect_success 'a request signed by hand with openssl dgst (API.md §10) is accepted' '
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"by-hand\",\"taskCode\":\"echo\"}")") &&
	test "$st" = 202 &&
	grep -qi "^Location: /api/tasks/by-hand" "$TRASH/hdr" &&
	grep -qi "^X-Trace-Id: [0-9a-f]\{32\}" "$TRASH/hdr" &&
	grep -qi "^Cache-Control: no-store" "$TRASH/hdr" &&
	wait_terminal by-hand
'

test_expect_success 'onFailure and onFailureMode are accepted (README "Failure alerts"), a bad one is 422 naming it' '
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"alerting\",\"taskCode\":\"echo\",\"onFailure\":\"echo\",\"onFailureMode\":\"transition\"}")") &&
	test "$st" = 202 && wait_terminal alerting &&
	test "$(jq -r .onFailure "$SPOOL/done/alerting.json")" = echo &&
	test "$(jq -r .onFailureMode "$SPOOL/done/alerting.json")" = transition &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"onFailure\":\"no way\"}")") && expect 422 VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/body")" = onFailure &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"alertFor\":\"x\"}")") && expect 422 VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/body")" = alertFor
'

test_expect_success 'same requestId and body again: 202 replay with the current status' '
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"by-hand\",\"taskCode\":\"echo\"}")") &&
	test "$st" = 202 &&
	grep -qi "^Idempotent-Replayed: true" "$TRASH/hdr" &&
	test "$(jq -r .status "$TRASH/body")" = SUCCESS
'

test_expect_success 'a record left without its task (writer killed): 503 while it may still come, then a retry completes it' '
	b="{\"requestId\":\"orph-1\",\"taskCode\":\"echo\"}" &&
	fp=$(printf "%s" "$b" | openssl dgst -sha256 -r | cut -d" " -f1) &&
	printf "{\"appId\":\"tester\",\"requestId\":\"orph-1\",\"taskCode\":\"echo\",\"fingerprint\":\"%s\",\"createdAt\":\"%s\"}" \
	    "$fp" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" >"$SPOOL/state/requests/orph-1.json" &&
	st=$(sreq POST /api/tasks "$(body "$b")") && expect 503 SERVICE_UNAVAILABLE &&
	grep -qi "^Retry-After: 1" "$TRASH/hdr" &&
	test -z "$(state_of orph-1)" &&
	# older than the 60 s a live writer could still need: completed
	touch -d "2 minutes ago" "$SPOOL/state/requests/orph-1.json" &&
	st=$(sreq POST /api/tasks "$(body "$b")") && test "$st" = 202 &&
	grep -qi "^Idempotent-Replayed: true" "$TRASH/hdr" &&
	wait_terminal orph-1 && test "$(state_of orph-1)" = done
'

# FIELD-FAILURES B50: concurrent requests with one idempotency key.
test_expect_success '50 concurrent submissions of one requestId create exactly one task' '
	api_race race-1
'

# FIELD-FAILURES B48: a signed request replayed (timestamps: check_api V-vectors).
test_expect_success 'a replayed nonce is refused: 401 NONCE_REPLAYED' '
	XTS=$(date +%s) NONCE=0123456789abcdef0123456789abcdef &&
	export XTS NONCE &&
	st=$(sreq GET /api/tasks/e2e-1) && test "$st" = 200 &&
	st=$(sreq GET /api/tasks/e2e-1) && unset XTS NONCE && expect 401 NONCE_REPLAYED &&
	grep -q "^WWW-Authenticate: TS1-HMAC-SHA256" "$TRASH/hdr"
'

# --- API.md §5, row by row -------------------------------------------

test_expect_success '400 INVALID_QUERY: raw + in the query (checked before auth)' '
	st=$(curl -s -o "$TRASH/body" -D "$TRASH/hdr" -w "%{http_code}" "$TS_URL/api/tasks/e2e-1?q=a+b") &&
	expect 400 INVALID_QUERY
'

test_expect_success '400 INVALID_CONTENT_LENGTH: not a number (the server refuses it first)' '
	st=$(printf "POST /api/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\nConnection: close\r\n\r\n" |
	    python3 -c "import socket,sys; h,p=sys.argv[1].split(\":\"); s=socket.create_connection((h,int(p))); s.sendall(sys.stdin.buffer.read()); print(s.recv(100).split()[1].decode())" "$HOSTPORT") &&
	test "$st" = 400
'

test_expect_success '400 INVALID_JSON: bad JSON, duplicate member, BOM, not an object' '
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":")") && expect 400 INVALID_JSON &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"taskCode\":\"count\"}")") && expect 400 INVALID_JSON &&
	printf "\357\273\277{\"taskCode\":\"echo\"}" >"$TRASH/bom.json" &&
	st=$(sreq POST /api/tasks "$TRASH/bom.json") && expect 400 INVALID_JSON &&
	st=$(sreq POST /api/tasks "$(body "[1]")") && expect 400 INVALID_JSON
'

test_expect_success '401 AUTH_HEADER_MISSING / AUTH_HEADER_MALFORMED' '
	st=$(curl -s -o "$TRASH/body" -D "$TRASH/hdr" -w "%{http_code}" "$TS_URL/api/tasks/e2e-1") &&
	expect 401 AUTH_HEADER_MISSING &&
	test "$(jq -r .header "$TRASH/body")" = X-App-Id &&
	st=$(XTS=$(($(date +%s) * 1000)) sreq GET /api/tasks/e2e-1) &&
	expect 401 AUTH_HEADER_MALFORMED && jq -r .detail "$TRASH/body" | grep -q milliseconds &&
	st=$(NONCE=short sreq GET /api/tasks/e2e-1) && expect 401 AUTH_HEADER_MALFORMED
'

test_expect_success '401 APP_NOT_FOUND, 403 APP_DISABLED' '
	st=$(APP=nobody sreq GET /api/tasks/e2e-1) && expect 401 APP_NOT_FOUND &&
	st=$(APP=off KEY=$OFF_SECRET sreq GET /api/tasks/e2e-1) && expect 403 APP_DISABLED
'

test_expect_success '401 TIMESTAMP_EXPIRED carries serverTime' '
	st=$(XTS=$(($(date +%s) - 400)) sreq GET /api/tasks/e2e-1) &&
	expect 401 TIMESTAMP_EXPIRED &&
	d=$(( $(jq -r .serverTime "$TRASH/body") - $(date +%s) )) &&
	test "$d" -ge -5 && test "$d" -le 5
'

test_expect_success '401 SIGNATURE_MISMATCH carries the server canonical string' '
	st=$(KEY=not-the-secret sreq GET /api/tasks/e2e-1) &&
	expect 401 SIGNATURE_MISMATCH &&
	jq -r .canonicalString "$TRASH/body" >"$TRASH/srv-cs" &&
	printf "\n" >>"$TRASH/cs.txt" && cmp "$TRASH/srv-cs" "$TRASH/cs.txt"
'

test_expect_success '403 TASK_CODE_FORBIDDEN, 422 UNKNOWN_TASK_CODE' '
	st=$(APP=other KEY=$OTHER_SECRET sreq POST /api/tasks "$(body "{\"taskCode\":\"count\"}")") &&
	expect 403 TASK_CODE_FORBIDDEN &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"no.such.hook\"}")") &&
	expect 422 UNKNOWN_TASK_CODE && test "$(jq -r .taskCode "$TRASH/body")" = no.such.hook
'

test_expect_success '404 NOT_FOUND (no route), 404 TASK_NOT_FOUND (also for another app)' '
	st=$(curl -s -o "$TRASH/body" -D "$TRASH/hdr" -w "%{http_code}" "$TS_URL/api/nothing") &&
	expect 404 NOT_FOUND &&
	st=$(sreq GET /api/tasks/no-such-task) && expect 404 TASK_NOT_FOUND &&
	st=$(APP=other KEY=$OTHER_SECRET sreq GET /api/tasks/e2e-1) && expect 404 TASK_NOT_FOUND
'

test_expect_success '405 METHOD_NOT_ALLOWED with Allow' '
	st=$(curl -s -o "$TRASH/body" -D "$TRASH/hdr" -w "%{http_code}" -X PUT "$TS_URL/api/tasks") &&
	expect 405 METHOD_NOT_ALLOWED && grep -q "^Allow: GET, POST" "$TRASH/hdr" &&
	st=$(curl -s -o "$TRASH/body" -D "$TRASH/hdr" -w "%{http_code}" -X POST -H "Content-Type: application/json" -d "{}" "$TS_URL/api/tasks/e2e-1") &&
	expect 405 METHOD_NOT_ALLOWED && grep -q "^Allow: GET, DELETE" "$TRASH/hdr"
'

test_expect_success '409 REQUEST_ID_CONFLICT (another app), 409 TASK_FINISHED (cancel)' '
	st=$(APP=other KEY=$OTHER_SECRET sreq POST /api/tasks "$(body "{\"requestId\":\"e2e-1\",\"taskCode\":\"echo\"}")") &&
	expect 409 REQUEST_ID_CONFLICT &&
	st=$(sreq DELETE /api/tasks/e2e-1) && expect 409 TASK_FINISHED &&
	test "$(jq -r .taskStatus "$TRASH/body")" = SUCCESS
'

test_expect_success '411 without Content-Length, 413 over 1 MiB, 415 wrong media type' '
	st=$(curl -s -o "$TRASH/body" -w "%{http_code}" -X POST "$TS_URL/api/tasks") && test "$st" = 411 &&
	head -c 1048577 /dev/zero | tr "\0" " " >"$TRASH/big" &&
	st=$(sreq POST /api/tasks "$TRASH/big") && test "$st" = 413 &&
	st=$(CTYPE=text/plain sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\"}")") &&
	expect 415 UNSUPPORTED_MEDIA_TYPE &&
	st=$(CTYPE="application/json; charset=UTF-8" sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\"}")") &&
	test "$st" = 202
'

test_expect_success '413 for a body under 1 MiB whose task file would not be: no record, nothing in corrupt/' '
	pad=$(head -c 1048480 /dev/zero | tr "\0" a) &&
	printf "{\"requestId\":\"near-1\",\"taskCode\":\"echo\",\"executeParams\":\"%s\"}" "$pad" >"$TRASH/near.json" &&
	test "$(wc -c <"$TRASH/near.json")" -le 1048576 &&
	st=$(sreq POST /api/tasks "$TRASH/near.json") && expect 413 PAYLOAD_TOO_LARGE &&
	test "$(jq -r .limit "$TRASH/body")" = 1048576 &&
	test ! -e "$SPOOL/state/requests/near-1.json" &&
	test -z "$(ls "$SPOOL/corrupt")" &&
	st=$(sreq GET /api/tasks/near-1) && expect 404 TASK_NOT_FOUND
'

test_expect_success '422 VALIDATION_FAILED lists the field; IDEMPOTENCY_KEY_REUSED' '
	st=$(sreq POST /api/tasks "$(body "{\"taskcode\":\"echo\"}")") && expect 422 VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/body")" = taskcode &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"maxRetries\":101}")") && expect 422 VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/body")" = maxRetries &&
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"../x\",\"taskCode\":\"echo\"}")") && expect 422 VALIDATION_FAILED &&
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"e2e-1\",\"taskCode\":\"echo\",\"executeParams\":{\"x\":3}}")") &&
	expect 422 IDEMPOTENCY_KEY_REUSED && test "$(jq -r .requestId "$TRASH/body")" = e2e-1
'

test_expect_success '422 VALIDATION_FAILED of a query parameter names it, titled as a query error' '
	for q in limit=0 since=garbage cursor=nope status=NOPE; do
		st=$(sreq GET "/api/tasks?$q") && expect 422 VALIDATION_FAILED &&
		test "$(jq -r ".errors[0].field" "$TRASH/body")" = "${q%%=*}" &&
		test "$(jq -r .title "$TRASH/body")" = "Query parameter failed validation" || return 1
	done
'

test_expect_success 'an unreadable configuration: 500 INTERNAL_ERROR with a traceId, no Retry-After' '
	env -i REQUEST_METHOD=GET PATH_INFO=/health GATEWAY_INTERFACE=CGI/1.1 \
	    TASKSPOOL_CONFIG="$TRASH/no-such.conf" "$BUILD/taskspool.cgi" \
	    >"$TRASH/cgi.out" 2>"$TRASH/cgi.err" &&
	head -n 1 "$TRASH/cgi.out" | grep -q "^Status: 500 " &&
	! grep -qi "^Retry-After" "$TRASH/cgi.out" &&
	tid=$(sed -n "s/^X-Trace-Id: \([0-9a-f]*\)\r\$/\1/p" "$TRASH/cgi.out") &&
	test ${#tid} = 32 &&
	sed "1,/^\r\$/d" "$TRASH/cgi.out" >"$TRASH/cgi.body" &&
	test "$(jq -r .code "$TRASH/cgi.body")" = INTERNAL_ERROR &&
	test "$(jq -r .traceId "$TRASH/cgi.body")" = "$tid" &&
	grep -q "trace $tid: configuration: .*no-such.conf" "$TRASH/cgi.err"
'

test_expect_success 'a malformed apps file: 500 INTERNAL_ERROR (an operator must act), not 503' '
	cp "$SPOOL/apps.conf" "$TRASH/apps.keep" &&
	echo "bad line without enough fields" >>"$SPOOL/apps.conf" &&
	st=$(sreq GET /api/tasks/e2e-1) &&
	cp "$TRASH/apps.keep" "$SPOOL/apps.conf" &&
	expect 500 INTERNAL_ERROR &&
	! grep -qi "^Retry-After" "$TRASH/hdr" &&
	st=$(sreq GET /api/tasks/e2e-1) && test "$st" = 200
'

test_expect_success '422 callback URL errors: invalid, forbidden, unresolvable' '
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"http://hooks.example.com/cb\"}")") && expect 422 INVALID_CALLBACK_URL &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://u:p@hooks.example.com/cb\"}")") && expect 422 INVALID_CALLBACK_URL &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://93.184.216.34:8080/cb\"}")") && expect 422 INVALID_CALLBACK_URL &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://127.0.0.1/cb\"}")") && expect 422 CALLBACK_URL_FORBIDDEN &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://0x7f.1/cb\"}")") && expect 422 CALLBACK_URL_FORBIDDEN &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://[::ffff:10.0.0.1]/cb\"}")") && expect 422 CALLBACK_URL_FORBIDDEN &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://metadata.internal/cb\"}")") && expect 422 CALLBACK_URL_FORBIDDEN &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://no-such-host.invalid/cb\"}")") && expect 422 CALLBACK_URL_UNRESOLVABLE &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"callbackUrl\":\"https://169.254.169.254/\"}")") && expect 422 CALLBACK_URL_FORBIDDEN &&
	# a task callbackUrl gets the same codes as a registration url
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"callbackUrl\":\"ftp://hooks.example.com/\"}")") && expect 422 INVALID_CALLBACK_URL &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"callbackUrl\":\"/relative\"}")") && expect 422 INVALID_CALLBACK_URL &&
	st=$(sreq POST /api/tasks "$(body "{\"taskCode\":\"echo\",\"callbackUrl\":5}")") && expect 422 VALIDATION_FAILED
'

test_expect_success 'callback registration: 201 with the secret, 200 update, rotation' '
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://93.184.216.34/cb\"}")") &&
	test "$st" = 201 &&
	s1=$(jq -r .secret "$TRASH/body") &&
	echo "$s1" | grep -Eq "^whsec_[A-Za-z0-9+/]{43}=$" &&
	test "$(printf %s "${s1#whsec_}" | base64 -d | wc -c)" = 32 &&
	f="$SPOOL/state/callbacks/tester.json" &&
	test "$(jq -r .status "$f")" = ACTIVE && test "$(jq -r ".secrets[0].secret" "$f")" = "$s1" &&
	test "$(jq -r ".secrets[0].expiresAt" "$f")" = null &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://93.184.216.34:8443/cb2\"}")") &&
	test "$st" = 200 && test "$(jq -r .secret "$TRASH/body")" = null &&
	test "$(jq -r .url "$f")" = https://93.184.216.34:8443/cb2 &&
	st=$(sreq POST /api/callbacks/register "$(body "{\"url\":\"https://93.184.216.34/cb\",\"rotateSecret\":true}")") &&
	test "$st" = 200 && s2=$(jq -r .secret "$TRASH/body") && test "$s2" != "$s1" &&
	test "$(jq -r ".secrets[0].secret" "$f")" = "$s2" &&
	test "$(jq -r ".secrets[1].secret" "$f")" = "$s1" &&
	test "$(jq -r ".secrets[1].expiresAt" "$f")" = "$(jq -r .previousSecretExpiresAt "$TRASH/body")"
'

test_expect_success 'with a registration, a task shows callback PENDING' '
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"cb-1\",\"taskCode\":\"echo\"}")") && test "$st" = 202 &&
	wait_terminal cb-1 && st=$(sreq GET /api/tasks/cb-1) && test "$st" = 200 &&
	test "$(jq -r .callback.status "$TRASH/body")" = PENDING
'

test_expect_success 'DELETE cancels a pending task: 200 CANCELLED' '
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"later-1\",\"taskCode\":\"echo\",\"triggerType\":\"delay\",\"delayMs\":600000}")") &&
	test "$st" = 202 && test "$(jq -r .estimatedDelay "$TRASH/body")" -ge 590 &&
	test -f "$SPOOL/delayed/later-1.json" &&
	st=$(sreq DELETE /api/tasks/later-1) &&
	test "$st" = 200 && test "$(jq -r .status "$TRASH/body")" = CANCELLED
'

test_expect_success 'GET /api/tasks lists the caller tasks newest first, with a cursor' '
	st=$(sreq GET "/api/tasks?limit=2") && test "$st" = 200 &&
	test "$(jq ".items | length" "$TRASH/body")" = 2 &&
	cur=$(jq -r .nextCursor "$TRASH/body") && test "$cur" != null &&
	first=$(jq -r ".items[0].requestId" "$TRASH/body") &&
	st=$(sreq GET "/api/tasks?cursor=$cur&limit=500") && test "$st" = 200 &&
	jq -r ".items[].requestId" "$TRASH/body" >"$TRASH/rest" &&
	! grep -qx "$first" "$TRASH/rest" && grep -qx e2e-1 "$TRASH/rest" &&
	st=$(sreq GET "/api/tasks?status=CANCELLED") &&
	test "$(jq -r ".items[].requestId" "$TRASH/body")" = later-1 &&
	st=$(APP=other KEY=$OTHER_SECRET sreq GET /api/tasks) &&
	test "$(jq ".items | length" "$TRASH/body")" = 0
'

test_expect_success 'GET /metrics merges metrics/*.prom: one HELP/TYPE per family, every node'"'"'s samples' '
	printf "# HELP t_total Test.\n# TYPE t_total counter\nt_total{node=\"a\"} 1\n# HELP h_seconds H.\n# TYPE h_seconds histogram\nh_seconds_bucket{node=\"a\",le=\"+Inf\"} 1\nh_seconds_sum{node=\"a\"} 0.5\nh_seconds_count{node=\"a\"} 1\n" >"$SPOOL/metrics/zz-a.prom" &&
	printf "# HELP t_total Test.\n# TYPE t_total counter\nt_total{node=\"b\"} 2\n# HELP h_seconds H.\n# TYPE h_seconds histogram\nh_seconds_bucket{node=\"b\",le=\"+Inf\"} 2\nh_seconds_sum{node=\"b\"} 1.5\nh_seconds_count{node=\"b\"} 2\n" >"$SPOOL/metrics/zz-b.prom" &&
	curl -s -D "$TRASH/hdr" "$TS_URL/metrics" >"$TRASH/m" &&
	grep -qi "^Content-Type: text/plain; version=0.0.4" "$TRASH/hdr" &&
	test "$(grep -c "^# TYPE t_total counter\$" "$TRASH/m")" = 1 &&
	test "$(grep -c "^# HELP h_seconds H.\$" "$TRASH/m")" = 1 &&
	# the family block: header, then a'"'"'s sample, then b'"'"'s
	sed -n "/^# HELP t_total/,/^# HELP h_seconds/p" "$TRASH/m" >"$TRASH/t.block" &&
	printf "# HELP t_total Test.\n# TYPE t_total counter\nt_total{node=\"a\"} 1\nt_total{node=\"b\"} 2\n# HELP h_seconds H.\n" | cmp - "$TRASH/t.block" &&
	sed -n "/^# HELP h_seconds/,/^# HELP/p" "$TRASH/m" | grep -c "^h_seconds_" >"$TRASH/h.n" &&
	test "$(cat "$TRASH/h.n")" = 6 &&
	if command -v promtool >/dev/null 2>&1; then promtool check metrics <"$TRASH/m"; fi
'

test_expect_success 'after taskspool purge the requestId is new again (API.md §4.1 step 5)' '
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"old-1\",\"taskCode\":\"echo\"}")") &&
	test "$st" = 202 && wait_terminal old-1 &&
	test -f "$SPOOL/state/requests/old-1.json" &&
	touch -d "8 days ago" "$SPOOL/done/old-1.json" "$SPOOL/results/old-1.json" &&
	ts purge --older-than 7d >"$TRASH/purge.out" &&
	grep -q "^purged 1 task(s)" "$TRASH/purge.out" &&
	test ! -e "$SPOOL/state/requests/old-1.json" && test ! -e "$SPOOL/done/old-1.json" &&
	st=$(sreq GET /api/tasks/old-1) && expect 404 TASK_NOT_FOUND &&
	# a different body under the old requestId: a new task, not 422
	st=$(sreq POST /api/tasks "$(body "{\"requestId\":\"old-1\",\"taskCode\":\"echo\",\"executeParams\":2}")") &&
	test "$st" = 202 && ! grep -qi "^Idempotent-Replayed" "$TRASH/hdr" &&
	wait_terminal old-1 && test "$(jq -c .result "$SPOOL/results/old-1.json")" = "{\"got\":2}"
'

test_expect_success 'nonce markers live under state/nonces, one per accepted request' '
	# group-writable whatever the web server umask: the daemons user
	# (in the spool group) removes records there (taskspool purge)
	test "$(stat -c %a "$SPOOL/state/nonces")" = 2770 &&
	test "$(stat -c %a "$SPOOL/state/requests")" = 2770 &&
	n=$(ls "$SPOOL/state/nonces" | wc -l) && test "$n" -gt 50 &&
	ls "$SPOOL/state/nonces" | grep -q "^tester\.0123456789abcdef0123456789abcdef$"
'

# B55, the API half: a client that sends a signed POST and closes its
# socket at once, before reading the answer (the CGI may be cut off at any
# point of its work).  Retried with the same requestId, each ends as
# exactly one task run once, never two.
gone() {	# gone REQID
	printf '{"requestId":"%s","taskCode":"count"}' "$1" >"$TRASH/gone.$1"
	_ts=$(date +%s); _n=$(openssl rand -hex 16)
	_h=$(openssl dgst -sha256 -r <"$TRASH/gone.$1" | cut -d' ' -f1)
	printf 'TS1-HMAC-SHA256\nPOST\n/api/tasks\n\n%s\n%s\n%s\n%s' "$APP" "$_ts" "$_n" "$_h" >"$TRASH/cs.txt"
	_s=$(openssl dgst -sha256 -hmac "$KEY" "$TRASH/cs.txt" | sed 's/.*= //')
	python3 -c '
import socket, sys
hp, app, ts, nonce, sig, path = sys.argv[1:7]
body = open(path, "rb").read()
host, port = hp.rsplit(":", 1)
s = socket.create_connection((host, int(port)))
head = ("POST /api/tasks HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
    "Content-Length: %d\r\nX-App-Id: %s\r\nX-Timestamp: %s\r\nX-Nonce: %s\r\n"
    "X-Signature: %s\r\nConnection: close\r\n\r\n") % (hp, len(body), app, ts, nonce, sig)
s.sendall(head.encode() + body)
s.close()
' "$HOSTPORT" "$APP" "$_ts" "$_n" "$_s" "$TRASH/gone.$1"
}

test_expect_success 'B55: 20 submissions whose client leaves before the answer, then retried: one task each, run once' '
	for i in $(seq 1 20); do gone "gone-$i" || return 1; done &&
	for i in $(seq 1 20); do
		sh "$CLIENT" submit "$TRASH/gone.gone-$i" >"$TRASH/gone.out" 2>&1 &&
		test "$(jq -r .requestId "$TRASH/gone.out")" = "gone-$i" || { cat "$TRASH/gone.out"; return 1; }
	done &&
	for i in $(seq 1 20); do wait_terminal "gone-$i" 30 || return 1; done &&
	sleep 1 &&
	for i in $(seq 1 20); do
		test "$(wc -l <"$TRASH/count.gone-$i")" = 1 &&
		test "$(find "$SPOOL" -name "gone-$i.json" -not -path "*/results/*" -not -path "*/state/*" -not -path "*/outbox/*" | wc -l)" = 1 || return 1
	done &&
	kill -0 "$(daemon_pid n1)"
'

test_done
