#!/bin/sh
# contrib/openapi/openapi.yaml against the running API (issue 13 item 8):
# through lighttpd (shared, or tests/servers/lighttpd.sh), with a daemon,
# tests/openapi/replay.py (Debian's /usr/bin/python3, python3-yaml,
# python3-jsonschema) checks that the routes of daemon/api/api.c are the
# document's paths with the same methods, that every example of the
# document validates against its schema, and sends every request example
# signed as an app granted the examples' task code: each answer's status
# is documented for its operation (the paired example's status when a
# response example has the request example's name), its required headers
# are there, headers and body validate (JSON Schema 2020-12); that every
# problem code api*.c emits is documented under its status; and that a
# real callback (tests/tools/cbrecv.py) matches webhooks.taskFinished.
# The TS1 test vector of the document is recomputed with openssl dgst.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
here=$(cd "$(dirname "$0")/../.." && pwd)
SPEC="$here/contrib/openapi/openapi.yaml"
PY=/usr/bin/python3

if ! "$PY" -c 'import yaml, jsonschema' 2>/dev/null; then
	echo "Bail out! $PY lacks python3-yaml or python3-jsonschema (make deps)"
	exit 1
fi
api_server
trap api_cleanup EXIT
# The examples' callback URL is a documentation address (RFC 5737),
# allowed here so that the registration can succeed; the app "hooked"
# that registers it submits no task, so nothing is ever sent there.
# A real callback goes to tests/tools/cbrecv.py on 127.0.0.1 (http).
cat >>"$CONF" <<C
fsync = 0
callback_allow_http = 1
callback_allow_cidrs = 127.0.0.0/8,203.0.113.0/24
callback_allowed_ports =
callback_delays_ms = 300,300
callback_jitter_pct = 0
C
cat >"$HOOKS/report.generate" <<'H'
#!/bin/sh
printf '{"pages":3}\n' >"$TASKSPOOL_RESULT_FILE"
H
chmod +x "$HOOKS/report.generate"
SHOP=$(ts apps add shop-prod --codes report.generate) || exit 1
HOOKED=$(ts apps add hooked --codes report.generate) || exit 1
RECV_SECRET=$(ts apps add receiver --codes report.generate) || exit 1
mkdir -p "$TRASH/dump"
CBRECV_DUMP="$TRASH/dump" /usr/bin/python3 "$here/tests/tools/cbrecv.py" "$TRASH/recv.port" \
    "$TRASH/recv.log" whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8= 2>>"$TRASH/recv.err" &
DAEMON_PIDS="$DAEMON_PIDS $!"
wait_for "test -f $TRASH/recv.port" 20 || { echo "Bail out! receiver did not start"; exit 1; }

test_expect_success 'the TS1 test vector of the document, recomputed with openssl dgst' '
	printf "%s" "{\"requestId\":\"order-42\",\"taskCode\":\"report.generate\",\"executeParams\":{\"orderId\":42}}" >"$TRASH/v.json" &&
	h=$(openssl dgst -sha256 -r "$TRASH/v.json" | cut -d" " -f1) &&
	s=$(printf "TS1-HMAC-SHA256\nPOST\n/api/tasks\n\nshop-prod\n1717243200\n0123456789abcdef0123456789abcdef\n%s" "$h" |
	    openssl dgst -sha256 -hmac ts_example_secret_do_not_use | sed "s/.*= //") &&
	grep -q "$h" "$SPEC" && grep -q "$s" "$SPEC" &&
	e=$(printf "" | openssl dgst -sha256 -r | cut -d" " -f1) &&
	s2=$(printf "TS1-HMAC-SHA256\nGET\n/api/tasks\nlimit=5&status=FAILED\nshop-prod\n1717243200\nfedcba9876543210fedcba9876543210\n%s" "$e" |
	    openssl dgst -sha256 -hmac ts_example_secret_do_not_use | sed "s/.*= //") &&
	grep -q "$s2" "$SPEC"
'

test_expect_success 'daemon starts; /api/health answers 200; info.version is its release' '
	start_daemon n1 -j 2 &&
	test "$(curl -s -o "$TRASH/h" -w "%{http_code}" "$TS_URL/api/health")" = 200 &&
	v=$("$PY" -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))[\"info\"][\"version\"])" "$SPEC") &&
	case $(jq -r .version "$TRASH/h") in "$v"|"$v"[-+]*) ;; *) false ;; esac
'

test_expect_success 'every route, every example, every replayed answer matches the document' '
	"$PY" "$here/tests/openapi/replay.py" "$SPEC" "$here/daemon/api/api.c" \
	    "$TS_URL" shop-prod "$SHOP" "registerCallback=hooked:$HOOKED" >"$TRASH/replay" 2>&1
	rc=$?
	grep "^not ok\|^#" "$TRASH/replay"
	grep -c "^ok" "$TRASH/replay"
	test $rc = 0 && ! grep -q "^not ok" "$TRASH/replay" &&
	test "$(grep -c "^ok .*status .* is documented" "$TRASH/replay")" -ge 15
'

test_expect_success 'a real callback (registered URL, a task of that app) matches webhooks.taskFinished' '
	TS_APP_ID=receiver TS_SECRET=$RECV_SECRET /usr/bin/python3 "$here/contrib/clients/tsapi.py" register \
	    "http://127.0.0.1:$(cat "$TRASH/recv.port")/ok" >"$TRASH/reg" &&
	jq -r .secret "$TRASH/reg" >"$TRASH/whsec" &&
	printf "{\"requestId\":\"cb-1\",\"taskCode\":\"report.generate\"}" >"$TRASH/cb.json" &&
	TS_APP_ID=receiver TS_SECRET=$RECV_SECRET /usr/bin/python3 "$here/contrib/clients/tsapi.py" submit "$TRASH/cb.json" >/dev/null &&
	wait_for "test -f $TRASH/dump/1.hdr" 30 &&
	"$PY" "$here/tests/openapi/replay.py" --webhook "$SPEC" "$TRASH/dump" "$(cat "$TRASH/whsec")" >"$TRASH/wh" 2>&1
	rc=$?
	cat "$TRASH/wh"
	test $rc = 0 && grep -q "^ok callback 1: signature as documented: ok" "$TRASH/wh"
'

test_expect_success 'the replay fails on an undocumented status (a document without 404 on getTask)' '
	"$PY" - "$SPEC" "$TRASH/cut.yaml" <<-PY &&
	import sys, yaml
	d = yaml.safe_load(open(sys.argv[1]))
	del d["paths"]["/api/tasks/{requestId}"]["get"]["responses"]["404"]
	yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
	PY
	! "$PY" "$here/tests/openapi/replay.py" "$TRASH/cut.yaml" "$here/daemon/api/api.c" \
	    "$TS_URL" shop-prod "$SHOP" "registerCallback=hooked:$HOOKED" >"$TRASH/replay2" 2>&1 &&
	grep -q "^not ok GET /api/tasks/no-such-task \[missing\]: status 404 is documented" "$TRASH/replay2"
'

test_expect_success 'the route check fails for a route the document lacks' '
	"$PY" - "$SPEC" "$TRASH/cut2.yaml" <<-PY &&
	import sys, yaml
	d = yaml.safe_load(open(sys.argv[1]))
	del d["paths"]["/api/health"]
	yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
	PY
	! "$PY" "$here/tests/openapi/replay.py" "$TRASH/cut2.yaml" "$here/daemon/api/api.c" \
	    "$TS_URL" shop-prod "$SHOP" "registerCallback=hooked:$HOOKED" >"$TRASH/replay3" 2>&1 &&
	grep -q "^not ok route /api/health" "$TRASH/replay3"
'

test_done
