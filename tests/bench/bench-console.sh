#!/bin/sh
# make bench, web console part (issue 17 targets): the server time of
# taskspool.cgi answering GET /console/ (the overview) and GET
# /console/tasks (the first page of the list) with $NTASKS (default
# 100000) finished tasks in the spool, embedded mode, run as a CGI
# directly (no web server: the program's own time, fork+exec included),
# median and max of $REPS (default 5) runs each.  The session is made
# as a login would make it (state/console/<SHA-256 of the cookie>).
# Prints numbers only.  The console reads the spool, not MariaDB: the
# 1,000,000-row target of the issue does not apply to it.
set -u
: "${BUILD:?BUILD must name the build directory}"
N=${NTASKS:-100000}
REPS=${REPS:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-console.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
"$BUILD/taskspool" init "$T/spool" >/dev/null || exit 1
"$BUILD/taskspool" -c "$T/spool/taskspool.conf" apps add ops --codes '*' >/dev/null || exit 1
python3 - "$T/spool" "$N" "$BUILD/taskspool.cgi" "$REPS" <<'PY'
import hashlib, os, secrets, statistics, subprocess, sys, time
spool, n, cgi, reps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
done = os.path.join(spool, "done")
t0 = time.time()
for i in range(n):
    with open(os.path.join(done, "b%06d.json" % i), "w") as f:
        f.write('{"requestId":"b%06d","taskCode":"c%d","createdAt":'
                '"2026-01-01T00:00:00.000Z"}\n' % (i, i % 7))
sid = secrets.token_hex(32)
os.makedirs(os.path.join(spool, "state", "console"), exist_ok=True)
with open(os.path.join(spool, "state", "console",
                       hashlib.sha256(sid.encode()).hexdigest() + ".session"), "w") as f:
    f.write("app=ops\ncsrf=%s\nexpires=%d\n" % ("0" * 64, time.time() + 3600))
env = dict(os.environ, TASKSPOOL_CONFIG=os.path.join(spool, "taskspool.conf"),
           REQUEST_METHOD="GET", HTTP_COOKIE="ts_console=" + sid,
           GATEWAY_INTERFACE="CGI/1.1")
print("bench-console: %d finished tasks written in %.1f s" % (n, time.time() - t0))
for path, target in (("/console/", 20), ("/console/tasks", 50)):
    ms = []
    for _ in range(reps):
        e = dict(env, PATH_INFO=path)
        a = time.perf_counter()
        r = subprocess.run([cgi], env=e, capture_output=True)
        ms.append((time.perf_counter() - a) * 1000)
        if not r.stdout.startswith(b"Status: 200"):
            print("bench-console: %s answered %r" % (path, r.stdout[:80]))
            sys.exit(1)
    print("bench-console: GET %-15s %d tasks: median %.1f ms, max %.1f ms "
          "(target <= %d ms)" % (path, n, statistics.median(ms), max(ms), target))
PY
