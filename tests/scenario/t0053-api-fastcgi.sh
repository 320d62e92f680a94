#!/bin/sh
# The HTTP API as FastCGI: taskspool.fcgi behind a real lighttpd
# (mod_fastcgi, "bin-path", ONE long-lived process, so every request below
# goes through the same process) and curl.  A subset of t0050: signed
# submit -> 202 -> hook -> GET SUCCESS; the idempotent replay; 50
# concurrent submissions of one requestId; nonce replay; a few rows of
# API.md §5.  Then what only a long-lived process can get wrong: apps.conf
# and taskspool.conf changes seen on the next request, a body left unread
# or read to exactly CONTENT_LENGTH followed by another request, and no
# state, descriptor or process lost between requests.
#
# Always starts its own lighttpd (tests/servers/lighttpd.sh with
# TS_LIGHTTPD_FASTCGI=1 TS_LIGHTTPD_FCGI_PROCS=1).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
here=$(cd "$(dirname "$0")/../.." && pwd)

TS_LIGHTTPD_FASTCGI=1 TS_LIGHTTPD_FCGI_PROCS=1
export TS_LIGHTTPD_FASTCGI TS_LIGHTTPD_FCGI_PROCS
api_server
SRV=$API_SRV
trap api_cleanup EXIT
api_tester || exit 1

# The one taskspool.fcgi process lighttpd started ("bin-path").
fcgi_pid() {
	ps -o pid= --ppid "$(cat "$SRV/lighttpd.pid.start")" | tr -d ' '
}
FPID=$(fcgi_pid)

# req [options] METHOD PATH [BODY]: one request signed with tsapi.py's
# canonical_string and sign (options: --app ID --key SECRET --nonce N
# --ctype TYPE --unsigned); prints the status, writes the body to
# $TRASH/body and the headers to $TRASH/hdr.  pipe: two signed requests,
# a POST of BODY and a GET of ID, sent back to back on one connection.
cat >"$TRASH/req.py" <<'PY'
import argparse, http.client, os, secrets, socket, sys, time
sys.path.insert(0, sys.argv.pop(1))
import tsapi
a = argparse.ArgumentParser()
a.add_argument("--app", default=os.environ["TS_APP_ID"])
a.add_argument("--key", default=os.environ["TS_SECRET"])
a.add_argument("--nonce")
a.add_argument("--ctype", default="application/json")
a.add_argument("--unsigned", action="store_true")
a.add_argument("method")
a.add_argument("path")
a.add_argument("body", nargs="?")
o = a.parse_args()
host, port = os.environ["TS_URL"][len("http://"):].split(":")
trash = os.environ["TRASH"]

def headers(method, path, body, nonce=None):
    ts = int(time.time())
    nonce = nonce or secrets.token_hex(16)
    cs = tsapi.canonical_string(method, path, "", o.app, ts, nonce, body)
    h = {"X-App-Id": o.app, "X-Timestamp": str(ts), "X-Nonce": nonce,
         "X-Signature": tsapi.sign(o.key, cs)}
    return {} if o.unsigned else h

if o.method == "pipe":
    body = o.path.encode()
    h1 = headers("POST", "/api/tasks", body)
    h2 = headers("GET", "/api/tasks/" + o.body, b"")
    msg = b"POST /api/tasks HTTP/1.1\r\nHost: x\r\n"
    msg += b"Content-Type: application/json\r\n"
    msg += b"Content-Length: %d\r\n" % len(body)
    msg += b"".join(b"%s: %s\r\n" % (k.encode(), v.encode())
                    for k, v in h1.items())
    msg += b"\r\n" + body
    msg += b"GET /api/tasks/%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" % o.body.encode()
    msg += b"".join(b"%s: %s\r\n" % (k.encode(), v.encode())
                    for k, v in h2.items())
    msg += b"\r\n"
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(msg)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    sys.stdout.write(data.decode("utf-8", "replace"))
    sys.exit(0)
body = open(o.body, "rb").read() if o.body else b""
h = headers(o.method, o.path, body, o.nonce)
if o.body:
    h["Content-Type"] = o.ctype
c = http.client.HTTPConnection(host, int(port), timeout=30)
c.request(o.method, o.path, body=body if o.body else None, headers=h)
r = c.getresponse()
open(os.path.join(trash, "body"), "wb").write(r.read())
open(os.path.join(trash, "hdr"), "w").write(
    "".join("%s: %s\n" % kv for kv in r.getheaders()))
print(r.status)
PY
export TRASH
req() { python3 "$TRASH/req.py" "$here/contrib/clients" "$@"; }
fds() { ls "/proc/$FPID/fd" | wc -l; }

test_expect_success 'lighttpd runs one taskspool.fcgi; /api/health answers 200' '
	test -n "$FPID" && test "$(echo "$FPID" | wc -w)" = 1 &&
	test "$(readlink "/proc/$FPID/exe")" = "$(readlink -f "$BUILD/taskspool.fcgi")" &&
	start_daemon n1 -j 4 &&
	st=$(req GET /api/health) && test "$st" = 200 &&
	test "$(jq -r .nodes "$TRASH/body")" = 1 &&
	fds >"$TRASH/fds.0"
'

test_expect_success 'end to end: signed submit -> 202 -> hook -> GET SUCCESS' '
	api_e2e e2e-1
'

test_expect_success 'same requestId and body again: 202 Idempotent-Replayed, current status' '
	st=$(req POST /api/tasks "$TRASH/e2e.json") && test "$st" = 202 &&
	grep -qi "^Idempotent-Replayed: true" "$TRASH/hdr" &&
	test "$(jq -r .status "$TRASH/body")" = SUCCESS &&
	printf "{\"requestId\":\"e2e-1\",\"taskCode\":\"echo\",\"executeParams\":3}" >"$TRASH/other.json" &&
	st=$(req POST /api/tasks "$TRASH/other.json") && expect 422 IDEMPOTENCY_KEY_REUSED
'

test_expect_success '50 concurrent submissions of one requestId create exactly one task' '
	api_race race-1
'

test_expect_success 'a replayed nonce is refused: 401 NONCE_REPLAYED' '
	st=$(req --nonce 0123456789abcdef0123456789abcdef GET /api/tasks/e2e-1) && test "$st" = 200 &&
	st=$(req --nonce 0123456789abcdef0123456789abcdef GET /api/tasks/e2e-1) &&
	expect 401 NONCE_REPLAYED &&
	grep -q "^WWW-Authenticate: TS1-HMAC-SHA256" "$TRASH/hdr"
'

test_expect_success 'API.md §5 rows: 401, 404, 405 with Allow, 413, 415, 422 VALIDATION_FAILED' '
	st=$(req --unsigned GET /api/tasks/e2e-1) && expect 401 AUTH_HEADER_MISSING &&
	st=$(req --key not-the-secret GET /api/tasks/e2e-1) && expect 401 SIGNATURE_MISMATCH &&
	st=$(req GET /api/tasks/no-such-task) && expect 404 TASK_NOT_FOUND &&
	st=$(req --unsigned GET /api/nothing) && expect 404 NOT_FOUND &&
	st=$(req --unsigned PUT /api/tasks) && expect 405 METHOD_NOT_ALLOWED &&
	grep -q "^Allow: GET, POST" "$TRASH/hdr" &&
	head -c 1048577 /dev/zero | tr "\0" " " >"$TRASH/big" &&
	st=$(req POST /api/tasks "$TRASH/big") && test "$st" = 413 &&
	st=$(req --ctype text/plain POST /api/tasks "$(body "{\"taskCode\":\"echo\"}")") &&
	expect 415 UNSUPPORTED_MEDIA_TYPE &&
	st=$(req POST /api/tasks "$(body "{\"taskcode\":\"echo\"}")") && expect 422 VALIDATION_FAILED &&
	test "$(jq -r ".errors[0].field" "$TRASH/body")" = taskcode
'

test_expect_success 'apps add and apps disable take effect on the next request, same process' '
	NEW_SECRET=$(ts apps add newapp --codes echo) &&
	st=$(req --app newapp --key="$NEW_SECRET" POST /api/tasks "$(body "{\"requestId\":\"new-1\",\"taskCode\":\"echo\"}")") &&
	test "$st" = 202 &&
	ts apps disable newapp &&
	st=$(req --app newapp --key="$NEW_SECRET" GET /api/tasks/new-1) && expect 403 APP_DISABLED &&
	test "$(fcgi_pid)" = "$FPID"
'

test_expect_success 'taskspool.conf is read per request: unreadable -> 500, back -> 200' '
	ln -sf "$TRASH/no-such.conf" "$SRV/taskspool.conf" &&
	st=$(req --unsigned GET /api/health); ln -sf "$CONF" "$SRV/taskspool.conf" &&
	expect 500 INTERNAL_ERROR &&
	tid=$(jq -r .traceId "$TRASH/body") &&
	grep -q "trace $tid: configuration: .*taskspool.conf" "$SRV/error.log" &&
	st=$(req GET /api/health) && test "$st" = 200 &&
	test "$(fcgi_pid)" = "$FPID"
'

test_expect_success 'a body left unread (415), then a request on the same process gets its own body' '
	head -c 4000 /dev/zero | tr "\0" "{" >"$TRASH/junk" &&
	st=$(req --ctype text/plain POST /api/tasks "$TRASH/junk") && expect 415 UNSUPPORTED_MEDIA_TYPE &&
	st=$(req POST /api/tasks "$(body "{\"requestId\":\"after-1\",\"taskCode\":\"echo\",\"executeParams\":7}")") &&
	test "$st" = 202 && wait_terminal after-1 &&
	test "$(jq -c .result "$SPOOL/results/after-1.json")" = "{\"got\":7}"
'

test_expect_success 'pipelined on one connection: a body of exactly Content-Length, then a GET' '
	req pipe "{\"requestId\":\"pipe-1\",\"taskCode\":\"echo\",\"executeParams\":\"p\"}" pipe-1 >"$TRASH/pipe.out" &&
	# the first body has no final newline: the second status line follows it
	test "$(grep -o "HTTP/1.1 [0-9]*" "$TRASH/pipe.out" | tr "\n" " ")" = "HTTP/1.1 202 HTTP/1.1 200 " &&
	grep -q "\"requestId\":\"pipe-1\"" "$TRASH/pipe.out" &&
	wait_terminal pipe-1 &&
	test "$(jq -c .result "$SPOOL/results/pipe-1.json")" = "{\"got\":\"p\"}"
'

test_expect_success 'nothing carries over: new trace id each request, auth not remembered' '
	st=$(req GET /api/tasks/e2e-1) && test "$st" = 200 &&
	t1=$(sed -n "s/^X-Trace-Id: //p" "$TRASH/hdr") &&
	st=$(req --unsigned GET /api/tasks/e2e-1) && expect 401 AUTH_HEADER_MISSING &&
	t2=$(sed -n "s/^X-Trace-Id: //p" "$TRASH/hdr") &&
	test ${#t1} = 32 && test ${#t2} = 32 && test "$t1" != "$t2"
'

test_expect_success 'the same process served everything, with as many descriptors as at first' '
	test "$(fcgi_pid)" = "$FPID" &&
	test "$(fds)" = "$(cat "$TRASH/fds.0")"
'

test_done
