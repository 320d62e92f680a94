#!/bin/sh
# taskspool.fcgi under valgrind (memcheck, --leak-check=full) behind
# lighttpd mod_fastcgi, one process: serve N1 then, in a second run, N2
# mixed requests (signed submissions, GETs, a bad signature, no auth
# headers, 404, 405, 415 with an unread body, /api/health, /metrics) and
# print each run's valgrind summary: memory in use at exit, leaks, errors
# and the process's descriptors.  In use at exit that does not grow with
# the number of requests means nothing accumulates between requests.
# Prints numbers only (not part of make check: valgrind is slow).
#
#   BUILD=build sh tests/bench/valgrind-fcgi.sh [N1 [N2]]   (default 100 600)
set -u
: "${BUILD:?BUILD must name the build directory}"
. "$(dirname "$0")/bench-lib.sh"
build=$(cd "$BUILD" && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "valgrind-fcgi: valgrind not installed; skipped"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/valgrind-fcgi.XXXXXX")
trap 'sh "$here/tests/servers/lighttpd.sh" stop "$T/srv" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

one() {
	n=$1
	rm -rf "$T/spool" "$T/srv" "$T/bin"
	secret=$(bench_api_spool "$T/spool" 0 vg)
	# lighttpd.sh links DIR/taskspool.fcgi to $BUILD/taskspool.fcgi:
	# here a build directory whose taskspool.fcgi runs the real one
	# under valgrind.
	mkdir -p "$T/bin"
	ln -s "$build/taskspool.cgi" "$T/bin/taskspool.cgi"
	cat >"$T/bin/taskspool.fcgi" <<SH
#!/bin/sh
exec valgrind --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --track-fds=yes \
    --log-file="$T/vg.$n" "$build/taskspool.fcgi"
SH
	chmod +x "$T/bin/taskspool.fcgi"
	out=$(BUILD="$T/bin" TASKSPOOL_CONFIG="$T/spool/taskspool.conf" \
	    TS_LIGHTTPD_FASTCGI=1 TS_LIGHTTPD_FCGI_PROCS=1 \
	    sh "$here/tests/servers/lighttpd.sh" start "$T/srv") || exit 1
	eval "$out"
	python3 - "$here/contrib/clients" "$TS_TEST_LIGHTTPD_FCGI" "$secret" "$n" <<'PY' || exit 1
import http.client, secrets, sys, time
sys.path.insert(0, sys.argv[1])
import tsapi
host, port = sys.argv[2].split(":")
key, n = sys.argv[3], int(sys.argv[4])

def send(method, path, body=b"", key=key, signed=True, ctype="application/json"):
    h = {}
    if signed:
        ts, nonce = int(time.time()), secrets.token_hex(16)
        cs = tsapi.canonical_string(method, path, "", "vg", ts, nonce, body)
        h = {"X-App-Id": "vg", "X-Timestamp": str(ts), "X-Nonce": nonce,
             "X-Signature": tsapi.sign(key, cs)}
    if body or method == "POST":
        h["Content-Type"] = ctype
    c = http.client.HTTPConnection(host, int(port), timeout=120)
    c.request(method, path, body=body if body or method == "POST" else None, headers=h)
    r = c.getresponse()
    r.read()
    c.close()
    return r.status

# valgrind starts slowly: wait until the program itself answers.
for _ in range(600):
    try:
        c = http.client.HTTPConnection(host, int(port), timeout=120)
        c.request("GET", "/api/health")
        r = c.getresponse()
        r.read()
        if r.getheader("X-Trace-Id"):
            break
    except OSError:
        pass
    time.sleep(0.1)
mix = [
    lambda i: send("POST", "/api/tasks", b'{"requestId":"v%d","taskCode":"noop"}' % i) == 202,
    lambda i: send("GET", "/api/tasks/v%d" % (i - 1)) == 200,
    lambda i: send("GET", "/api/tasks/v1", key="wrong") == 401,
    lambda i: send("GET", "/api/tasks/v1", signed=False) == 401,
    lambda i: send("GET", "/api/nothing", signed=False) == 404,
    lambda i: send("PUT", "/api/tasks", signed=False) == 405,
    lambda i: send("POST", "/api/tasks", b"x" * 3000, ctype="text/plain") == 415,
    lambda i: send("GET", "/api/health", signed=False) in (200, 503),
    lambda i: send("GET", "/metrics", signed=False) == 200,
]
bad = [(i - 1) % len(mix) for i in range(1, n + 1)
       if not mix[(i - 1) % len(mix)](i)]
if bad:
    print("  unexpected answers to requests of kinds", sorted(set(bad)))
sys.exit(1 if bad else 0)
PY
	sh "$here/tests/servers/lighttpd.sh" stop "$T/srv"
	i=0
	while [ $i -lt 300 ] && ! grep -q "ERROR SUMMARY" "$T/vg.$n" 2>/dev/null; do
		sleep 0.1; i=$((i + 1))
	done
	inuse=$(sed -n 's/.*in use at exit: \(.*\)/\1/p' "$T/vg.$n")
	allocs=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$T/vg.$n")
	lost=$(grep -c "definitely lost in\|indirectly lost in" "$T/vg.$n")
	errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$T/vg.$n")
	fds=$(sed -n 's/.*FILE DESCRIPTORS: \([0-9]*\) open.*/\1/p' "$T/vg.$n")
	echo "  $n requests: ${allocs:-?} allocations; in use at exit ${inuse:-(no summary)}; leak records $lost; valgrind errors ${errs:-?}; open fds at exit ${fds:-?}"
}
echo "taskspool.fcgi under valgrind memcheck, lighttpd mod_fastcgi, 1 process:"
one "${1:-100}"
one "${2:-600}"
