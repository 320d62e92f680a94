#!/bin/sh
# make bench, HTTP API part: signed submissions per second through a real
# lighttpd (mod_cgi) with wrk, pre-signed requests with unique nonces and
# requestIds, $CONNS connections (default 2), for $SECS seconds (default
# 10); p50/p99 latency; beside the same server running a trivial C CGI
# (tests/tools/cgifloor.c), the floor of one fork+exec per request; then
# the same requests to taskspool.fcgi through mod_fastcgi ($FCGI_PROCS
# long-lived processes, default 2; a fresh spool with the same app), with
# its ratio to the same floor.  Prints numbers only.  Durable writes
# (fsync = 1) unless FSYNC=0.
set -u
: "${BUILD:?BUILD must name the build directory}"
. "$(dirname "$0")/bench-lib.sh"
SECS=${SECS:-10}
CONNS=${CONNS:-2}
FCGI_PROCS=${FCGI_PROCS:-2}
N=${NREQ:-30000}
command -v wrk >/dev/null 2>&1 || { echo "bench-api: wrk not installed; skipped"; exit 0; }
command -v lighttpd >/dev/null 2>&1 || { echo "bench-api: lighttpd not installed; skipped"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-api.XXXXXX")
trap 'sh "$here/tests/servers/lighttpd.sh" stop "$T/srv"
    sh "$here/tests/servers/lighttpd.sh" stop "$T/srv-f"; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

secret=$(bench_api_spool "$T/spool" "${FSYNC:-1}" bench)
# The FastCGI run's fresh spool: same settings, hook and app.
"$BUILD/taskspool" init "$T/spool-f" >/dev/null
echo "fsync = ${FSYNC:-1}" >>"$T/spool-f/taskspool.conf"
cp -p "$T/spool/hooks/noop" "$T/spool-f/hooks/noop"
cp -p "$T/spool/apps.conf" "$T/spool-f/apps.conf"
out=$(BUILD="$BUILD" TASKSPOOL_CONFIG="$T/spool/taskspool.conf" \
    sh "$here/tests/servers/lighttpd.sh" start "$T/srv") || exit 1
eval "$out"

# N pre-signed submissions as a wrk Lua script (one thread: each wrk
# thread has its own Lua state, and nonces must not repeat).
python3 - "$secret" "$N" >"$T/req.lua" <<'PY'
import hashlib, hmac, secrets, sys, time
key, n = sys.argv[1].encode(), int(sys.argv[2])
ts = str(int(time.time()) + 60)   # valid for the next 6 minutes
print("local r = {}")
for i in range(n):
    body = '{"requestId":"b%d","taskCode":"noop"}' % i
    nonce = secrets.token_hex(16)
    cs = "\n".join(["TS1-HMAC-SHA256", "POST", "/api/tasks", "", "bench", ts,
                    nonce, hashlib.sha256(body.encode()).hexdigest()])
    sig = hmac.new(key, cs.encode(), hashlib.sha256).hexdigest()
    print("r[%d] = {'%s', '%s', '%s'}" % (i + 1, nonce, sig, body))
print("local i = 0")
# wrk.format is called per request: at load time wrk.host (the Host
# header) is not known yet.
print("""request = function()
  i = i + 1
  local q = r[((i - 1) %% %d) + 1]
  return wrk.format("POST", "/api/tasks", {["Content-Type"] =
    "application/json", ["X-App-Id"] = "bench", ["X-Timestamp"] = "%s",
    ["X-Nonce"] = q[1], ["X-Signature"] = q[2]}, q[3])
end""" % (n, ts))
print('done = function() end')
PY
# run NAME [HOST:PORT]: wrk against the server (default the CGI's).
run() {
	wrk -t1 -c"$CONNS" -d"${SECS}s" --latency -s "$T/req.lua" \
	    "http://${2:-$TS_TEST_LIGHTTPD}/api/tasks" >"$T/wrk.$1" 2>&1
	rps=$(awk '/^Requests\/sec/ { print $2 }' "$T/wrk.$1")
	p50=$(awk '$1 == "50%" { print $2 }' "$T/wrk.$1")
	p99=$(awk '$1 == "99%" { print $2 }' "$T/wrk.$1")
	non2xx=$(awk '/Non-2xx/ { print $NF }' "$T/wrk.$1")
	echo "$rps $p50 $p99 ${non2xx:-0}"
}
echo "HTTP API through lighttpd/mod_cgi, wrk -t1 -c$CONNS ${SECS}s, fsync=${FSYNC:-1}:"
set -- $(run api)
api=$1
echo "  taskspool.cgi signed submissions: $1 req/s, p50 $2, p99 $3, non-2xx $4"
echo "  tasks written: $(ls "$T/spool/incoming" | wc -l)"
ln -sf "$BUILD/tools/cgifloor" "$T/srv/taskspool.cgi"
set -- $(run floor)
echo "  trivial C CGI (floor):            $1 req/s, p50 $2, p99 $3"
floor=$1
awk -v a="$api" -v f="$floor" 'BEGIN { if (f > 0) printf "  ratio: %.0f%% of the floor\n", 100 * a / f }'
out=$(BUILD="$BUILD" TASKSPOOL_CONFIG="$T/spool-f/taskspool.conf" \
    TS_LIGHTTPD_FASTCGI=1 TS_LIGHTTPD_FCGI_PROCS="$FCGI_PROCS" sh "$here/tests/servers/lighttpd.sh" start "$T/srv-f") || exit 1
eval "$out"
set -- $(run fcgi "$TS_TEST_LIGHTTPD_FCGI")
echo "  taskspool.fcgi (mod_fastcgi, $FCGI_PROCS processes) signed submissions: $1 req/s, p50 $2, p99 $3, non-2xx $4"
echo "  tasks written: $(ls "$T/spool-f/incoming" | wc -l)"
awk -v a="$1" -v f="$floor" 'BEGIN { if (f > 0) printf "  ratio: %.0f%% of the CGI floor\n", 100 * a / f }'
