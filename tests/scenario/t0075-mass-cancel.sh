#!/bin/sh
# A mass cancel must not wedge the daemon (issue 11 item 3).
#
# MASS_N delayed tasks (default 5,000; s0075 runs 100,000) wait in
# delayed/ of a daemon started with `ulimit -n 200` and 4 slots; then a
# cancel marker is published for every one of them (the first 20 with
# `taskspool cancel`, the rest by the writer protocol in one burst, so
# the inotify queue is full of them).  Cancelling a pending task claims
# it, and a claimed task holds its lease (the claimed file's descriptor)
# until its result is written: before the fix every cancel was claimed
# at once, the result writer had no descriptor left, and the daemon
# looped on EMFILE for ever.  Asserted:
#  - every task ends in cancelled/ with a result whose status is
#    CANCELLED, and nothing stays in delayed/ or active/;
#  - the daemon's descriptors, sampled from /proc/PID/fd every 50 ms
#    during the run, stay under the bound README.md states (idle count
#    + 5 per slot + 2 per queued result, COMMITS_MAX = 32 + slots of
#    them: idle + 5*4 + 2*36);
#  - the log has no EMFILE loop: at most a few "Too many open files"
#    lines, and not many more lines than tasks (one CANCELLED line each);
#  - a task submitted afterwards runs;
#  - a restart with MASS_N/5 tasks lying in active/<node>/ (the state
#    the old daemon wedged in) with their cancel markers: all of them end
#    CANCELLED too, under the same bound.
. "$(dirname "$0")/test-lib.sh"

N=${MASS_N:-5000}
LIMIT=200
SLOTS=4
TMO=$(( N / 50 + 60 ))	# seconds allowed for the whole cancel

fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# start_limited NODE: a daemon with ulimit -n $LIMIT and $SLOTS slots.
start_limited() {
	rm -f "$SPOOL/state/heartbeat.$1"
	( ulimit -n $LIMIT; exec "$TSD" -d -c "$CONF" -i "$1" -j $SLOTS ) \
	    >>"$TRASH/log.$1" 2>&1 &
	echo $! >"$TRASH/pid.$1"
	DAEMON_PIDS="$DAEMON_PIDS $!"
	DAEMONS="$DAEMONS $1"
	wait_for "test -f $SPOOL/state/heartbeat.$1" 30
}

# sampler PID FILE: the descriptor count of PID every 50 ms into FILE,
# in the background; stop it with kill "$(cat FILE.pid)".
sampler() {
	( while kill -0 "$1" 2>/dev/null; do
		fds_of "$1" >>"$2"; sleep 0.05
	done ) &
	echo $! >"$2.pid"
}

# make_tasks DIR PREFIX FROM TO: task files due in an hour, as a daemon
# leaves them in delayed/ (createdAt and notBefore set, the due time as
# the mtime), written to tmp/
# and renamed into DIR, one burst.  (Laid out by hand: a daemon moving
# them from incoming/ fsyncs each, a minute for 5,000 on this machine.)
make_tasks() {
	python3 - "$SPOOL" "$1" "$2" "$3" "$4" <<'PY'
import json, os, sys, time
sp, d, p, a, b = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
iso = lambda s: time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(s))
now = time.time()
for k in range(a, b):
    t = os.path.join(sp, "tmp", "mk.%s%d" % (p, k))
    with open(t, "w") as f:
        json.dump({"requestId": "%s%d" % (p, k), "taskCode": "probe",
                   "triggerType": "delay", "delayMs": 3600000,
                   "createdAt": iso(now), "notBefore": iso(now + 3600)}, f)
    os.utime(t, (now + 3600, now + 3600))	# delayed/: mtime = due time
    os.rename(t, os.path.join(d, "%s%d.json" % (p, k)))
PY
}

# mark_cancels PREFIX FROM TO: cancel markers state/cancel/<id>, written
# as the CLI writes them (an empty file renamed in).
mark_cancels() {
	python3 - "$SPOOL" "$1" "$2" "$3" <<'PY'
import os, sys
sp, p, a, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for k in range(a, b):
    t = os.path.join(sp, "tmp", "cx.%s%d" % (p, k))
    open(t, "w").close()
    os.rename(t, os.path.join(sp, "state", "cancel", "%s%d" % (p, k)))
PY
}

# check_cancelled PREFIX FROM TO: each id in cancelled/ only, with a
# result saying CANCELLED.  Prints what is wrong.
check_cancelled() {
	python3 - "$SPOOL" "$1" "$2" "$3" <<'PY'
import json, os, sys
sp, p, a, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
bad = 0
for k in range(a, b):
    i = "%s%d" % (p, k)
    if not os.path.exists(os.path.join(sp, "cancelled", i + ".json")):
        bad += 1; print("not in cancelled/:", i); continue
    try:
        r = json.load(open(os.path.join(sp, "results", i + ".json")))
    except Exception as e:
        bad += 1; print("no valid result:", i, e); continue
    if r.get("status") != "CANCELLED" or r.get("requestId") != i:
        bad += 1; print("wrong result:", i, r.get("status"))
    if bad > 20:
        break
for d in ("delayed", "incoming"):
    left = [f for f in os.listdir(os.path.join(sp, d)) if f.startswith(p)]
    if left:
        bad += 1; print("left in %s/: %d" % (d, len(left)))
for n in os.listdir(os.path.join(sp, "active")):
    left = [f for f in os.listdir(os.path.join(sp, "active", n)) if f.startswith(p)]
    if left:
        bad += 1; print("left in active/%s/: %d" % (n, len(left)))
sys.exit(1 if bad else 0)
PY
}

test_expect_success 'the idle descriptors of a daemon with 4 slots' '
	start_limited idle &&
	sleep 1 &&
	fds_of "$(daemon_pid idle)" >"$TRASH/idle" &&
	echo "idle: $(cat "$TRASH/idle") descriptors" &&
	test "$(cat "$TRASH/idle")" -gt 10 &&
	stop_daemon idle
'

bound() { echo $(( $(cat "$TRASH/idle") + 5 * SLOTS + 2 * (32 + SLOTS) )); }

test_expect_success "$N delayed tasks wait in delayed/" '
	start_limited m1 &&
	make_tasks "$SPOOL/delayed" mc 0 "$N" &&
	sleep 2 &&
	test "$(ls $SPOOL/delayed | wc -l)" -eq "$N"
'

test_expect_success "$N cancels (20 by taskspool cancel, the rest in a burst): all CANCELLED with a result" '
	sampler "$(daemon_pid m1)" "$TRASH/fds.1" &&
	for k in $(seq 0 19); do
		ts cancel "mc$k" >"$TRASH/cancel.out" || return 1
		grep -q "^mc$k CANCELLED$" "$TRASH/cancel.out" || return 1
	done &&
	mark_cancels mc 20 "$N" &&
	wait_for "test \$(ls $SPOOL/cancelled | wc -l) -eq $N" $TMO &&
	wait_for "test -z \"\$(ls -A $SPOOL/state/cancel)\"" 30 &&
	check_cancelled mc 0 "$N"
'

test_expect_success 'descriptors stayed under the stated bound; no EMFILE loop in the log' '
	kill "$(cat "$TRASH/fds.1.pid")" 2>/dev/null
	max=$(sort -n "$TRASH/fds.1" | tail -1) &&
	echo "descriptors: max $max of $(wc -l <"$TRASH/fds.1") samples, bound $(bound)" &&
	test "$max" -le "$(bound)" &&
	emfile=$(grep -c "Too many open files" "$TRASH/log.m1") ;
	lines=$(wc -l <"$TRASH/log.m1") &&
	echo "log: $lines lines, $emfile with EMFILE" &&
	test "$emfile" -le 5 &&
	test "$lines" -le $((N + 100))
'

test_expect_success 'a task submitted afterwards runs' '
	ts submit --code probe --id after1 --wait >/dev/null &&
	test "$(jq -r .status "$SPOOL/results/after1.json")" = SUCCESS &&
	kill -0 "$(daemon_pid m1)"
'

M=$((N / 5))
test_expect_success "restart with $M cancelled tasks left in active/m1/ (the old wedge): all CANCELLED" '
	stop_daemon m1 &&
	make_tasks "$SPOOL/active/m1" rc 0 "$M" &&
	mark_cancels rc 0 "$M" &&
	start_limited m1 &&
	sampler "$(daemon_pid m1)" "$TRASH/fds.2" &&
	wait_for "test \$(ls $SPOOL/cancelled | grep -c ^rc) -eq $M" $TMO &&
	kill "$(cat "$TRASH/fds.2.pid")" 2>/dev/null
	check_cancelled rc 0 "$M" &&
	max=$(sort -n "$TRASH/fds.2" | tail -1) &&
	echo "descriptors: max $max, bound $(bound)" &&
	test "$max" -le "$(bound)" &&
	ts submit --code probe --id after2 --wait >/dev/null &&
	test "$(jq -r .status "$SPOOL/results/after2.json")" = SUCCESS
'

test_expect_success 'it stops cleanly' 'stop_daemon m1'

test_done
