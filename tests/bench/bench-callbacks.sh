#!/bin/sh
# make bench, callbacks: deliveries per second from one daemon's sender to
# a local receiver (tests/tools/cbsink, answering 200 on CB_PORTS ports of
# 127.0.0.1; one try in flight per endpoint, so the ports are the
# parallelism).  NCB delivery files (default 5000) are written straight
# into outbox/callbacks/pending/ of a running daemon whose sender is
# already active; the rate is measured from the first to the last file in
# delivered/, by their modification times (the sender writes each new
# state just before it is published), so that the wait for the end, a
# directory count every 0.1 s, takes no CPU from the daemon and the
# receiver while they run (the pick-up of the first file, up to one
# pending/ rescan, 1 s, is printed apart).  FSYNC=0 turns durable writes
# off.  Numbers only: nothing is asserted.
set -eu
. "$(dirname "$0")/bench-lib.sh"
NCB=${NCB:-5000}
PORTS=${CB_PORTS:-32}
bench_workdir taskspool-cbbench
dpid="" spid=""
trap 'kill -TERM $dpid $spid 2>/dev/null || true; sleep 0.2; rm -rf "$work"' EXIT
spool="$work/spool"
"$BUILD/taskspool" init "$spool" >/dev/null
cat >"$spool/taskspool.conf" <<CONF
spool = $spool
node_id = cbbench
fsync = ${FSYNC:-1}
log_level = warning
callback_allow_http = 1
callback_allow_cidrs = 127.0.0.0/8
callback_allowed_ports =
callback_secret = whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=
CONF
"$BUILD/tools/cbsink" "$work/ports" "$PORTS" >"$work/sink.out" &
spid=$!
while [ ! -f "$work/ports" ]; do sleep 0.01; done
bench_daemon "$spool" cbbench "$work/daemon.log"
dpid=$bench_pid

# Delivery files as the daemon writes them (spool-layout/README.md).
mkdir -p "$work/stage"
python3 - "$work/stage" "$work/ports" "$NCB" <<'PY'
import json, random, string, sys
stage, ports, n = sys.argv[1], open(sys.argv[2]).read().split(), int(sys.argv[3])
body = json.dumps({"type": "task.finished", "timestamp": "2024-06-01T12:00:07.250Z",
    "data": {"requestId": "x", "taskCode": "bench", "status": "SUCCESS",
             "result": {"pages": 3}, "failureReason": None,
             "startedAt": "2024-06-01T12:00:02.000Z",
             "finishedAt": "2024-06-01T12:00:07.250Z", "durationMs": 5250}},
    separators=(",", ":"))
alpha = string.digits + string.ascii_lowercase
for i in range(n + 1):
    rid = "cb%06d" % i
    d = {"version": 1, "webhookId": "whk_" + "".join(random.choice(alpha) for _ in range(26)),
         "requestId": rid, "appId": None,
         "url": "http://127.0.0.1:%s/cb" % ports[i % len(ports)],
         "createdAt": "2024-06-01T12:00:07.250Z", "status": "PENDING", "reason": None,
         "attempts": 0, "nextAttemptAt": "2024-06-01T12:00:07.250Z", "lastAttemptAt": None,
         "lastHttpStatus": None, "lastError": None, "finishedAt": None, "body": body}
    with open("%s/%s.json" % (stage, rid), "w") as f:
        f.write(json.dumps(d) + "\n")
PY
cb="$spool/outbox/callbacks"
# Warm-up: one delivery activates the sender.
mv "$work/stage/cb000000.json" "$spool/outbox/callbacks/pending/" 2>/dev/null ||
    { mkdir -p "$cb/pending" && mv "$work/stage/cb000000.json" "$cb/pending/"; }
while [ ! -f "$cb/delivered/cb000000.json" ]; do sleep 0.01; done
ndone() { find "$cb/delivered" -maxdepth 1 -name 'cb*.json' | wc -l; }
t_mv=$(date +%s%N)
find "$work/stage" -name '*.json' -exec mv -t "$cb/pending/" {} +
while [ "$(ndone)" -le "$NCB" ]; do sleep 0.1; done
# First and last new state written, in ns (the warm-up's excluded).
set -- $(find "$cb/delivered" -maxdepth 1 -name 'cb*.json' \
    ! -name cb000000.json -printf '%T@\n' | sort -n | sed -n '1p;$p' |
    sed 's/\.\([0-9]\{9\}\).*/\1/')
t0=$1 t1=$2
failed=$(find "$cb/failed" -maxdepth 1 -name '*.json' | wc -l)
echo "callbacks: $NCB deliveries to $PORTS local endpoints, fsync=${FSYNC:-1}, $(nproc) CPU(s)"
echo "$NCB $t_mv $t0 $t1 $failed" | awk '{
	printf "  first pick-up %.3f s; %d delivered in %.3f s: %.0f callbacks/s (target >= 2000); %d failed\n",
	    ($3-$2)/1e9, $1, ($4-$3)/1e9, $1/(($4-$3)/1e9), $5 }'
