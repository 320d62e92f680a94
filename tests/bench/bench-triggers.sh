#!/bin/sh
# bench-triggers.sh — the leader's triggers, numbers only (asserts nothing).
# Called from tests/bench/bench.sh; runs alone as
#   BUILD=build sh tests/bench/bench-triggers.sh
#
#  (a) fire lateness: JOBS (default 10000) recurring jobs, each Quartz
#      "* * * * * ?" (every second, overlap allow), hook = the static no-op
#      `stamp`; over SECS (default 10) seconds of due instants:
#        task file in incoming/ - due instant  (inotify, tools/trigbench)
#        hook start            - due instant  (stamp's clock reading)
#  (b) memory per scheduled entry: DELAYED (default 1000000) task files in
#      delayed/ due in an hour; the daemon starts as a follower (a helper
#      holds state/leader.lock), RSS is read, the lock is released, the
#      daemon becomes leader and indexes delayed/; RSS again.
#      bytes/entry = (RSS after - RSS before) / DELAYED.
# Env: BUILD, JOBS, SECS, DELAYED, RUNS (the (a) runs as JOBS:FSYNC pairs,
# default "$JOBS:1 $JOBS:0 100:1": durable writes as configured by default,
# then without fsync, then a light load), SLOTS (default 4 x CPUs), GRACE,
# TMPDIR, BDIR (see (b)).  Everything is removed at the end; about 2.5
# minutes on 2 CPUs.
set -eu
. "$(dirname "$0")/bench-lib.sh"
JOBS=${JOBS:-10000}
SECS=${SECS:-10}
DELAYED=${DELAYED:-1000000}
# (a) runs: JOBS:FSYNC pairs (fsync 1 = durable, the default config)
RUNS=${RUNS:-$JOBS:1 $JOBS:0 100:1}
SLOTS=${SLOTS:-$(( $(nproc) * 4 ))}
GRACE=${GRACE:-5}		# s after the window for late fires to count
TB="$BUILD/tools/trigbench"
bench_workdir taskspool-bench-triggers
pid= hold= bwork=
cleanup() {
	for p in $pid $hold; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$work" ${bwork:+"$bwork"}
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_s() { date +%s; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# stop PID [S]: SIGTERM (drain), then SIGKILL after S (15) seconds;
# false if it had to be killed
stop() {
	kill -TERM "$1" 2>/dev/null || return 0
	i=0 rc=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $(( ${2:-15} * 10 )) ] && { kill -9 "$1" 2>/dev/null || true; rc=1; break; }
		sleep 0.1
	done
	wait "$1" 2>/dev/null || true
	return $rc
}

# mkspool SPOOL LOG_LEVEL FSYNC
mkspool() {
	bench_spool "$1" "$work/hooks" "$SLOTS" "$3" "$2"
	cat >>"$1/taskspool.conf" <<CONF
node_id = bench
reap_interval_ms = 300
CONF
}

echo "taskspool trigger bench: $(nproc) CPU(s), $SLOTS slots, runs (jobs:fsync) $RUNS, SECS=$SECS DELAYED=$DELAYED"

# --- (a) fire lateness -------------------------------------------------------
# run_a JOBS FSYNC
run_a() {
	n=$1
	sp="$work/a"
	mkspool "$sp" warning "$2"
	"$TB" jobs "$sp" "$n" allow
	# The window opens a few seconds after the daemon starts, once it has
	# loaded the jobs (the first fires are the start-up transient).
	from=$(( $(now_s) + 4 ))
	to=$(( from + SECS ))
	until=$(( to + GRACE ))
	expect=$((n * SECS))
	"$TB" watch "$sp" "$from" "$to" "$until" "$expect" >"$work/watch.out" &
	wpid=$!
	while ! grep -q watching "$work/watch.out" 2>/dev/null; do sleep 0.01; done
	"$BUILD/taskspoold" -d -c "$sp/taskspool.conf" >"$work/a.log" 2>&1 &
	pid=$!
	t0=$(date +%s%N)
	wait "$wpid"
	ran=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "(a) $n jobs x $SECS s = $expect fires due in the window, fsync=$2"
	stop "$pid" 5 || echo "    (the daemon did not stop within 5 s of SIGTERM: killed)"; pid=
	tail -1 "$work/watch.out" | awk -v g="$GRACE" '{
		printf "    incoming/ file - due:  p50 %s ms, p99 %s ms, max %s ms   (target p99 < 5 ms)\n", $4, $6, $8
		printf "      %d seen within %d s after the window; inotify overflows: %s\n", $2, g, $10 }'
	"$TB" stamps "$sp/stamps.log" "$from" "$to" "$expect" | awk '{
		printf "    hook start - due:      p50 %s ms, p99 %s ms, max %s ms   (target p99 < 20 ms)\n", $4, $6, $8
		printf "      %d started before the daemon was stopped; started twice: %s\n", $2, $10 }'
	nf=$(find "$sp/incoming" "$sp/delayed" "$sp/active" "$sp/done" \
	    "$sp/failed" "$sp/cancelled" -name '*Z.json' 2>/dev/null | wc -l)
	nh=$(cat "$sp/stamps.log" 2>/dev/null | wc -l)
	echo "$nf $nh $ran" | awk '{ printf "      in the %.1f s the daemon ran: %d fires (%.0f/s), %d hooks (%.0f/s)\n", $3 / 1000, $1, $1 * 1000 / $3, $2, $2 * 1000 / $3 }'
	echo "      daemon warnings about late fires or misfires: $(grep -c "late\|misfire" "$work/a.log" || true)"
	rm -rf "$sp"
}
for r in $RUNS; do run_a "${r%:*}" "${r#*:}"; done

# --- (b) memory per delayed entry ---------------------------------------------
# A million small files cost ~100 s to create and as much to remove on this
# kind of disk; the daemon's RSS does not depend on the filesystem (tmpfs
# pages are not mapped by the daemon), so (b) uses /dev/shm when it has
# room (~5 kB per file), else the work directory.  BDIR overrides.
if [ -z "${BDIR:-}" ]; then
	BDIR=$work
	avail=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
	[ -w /dev/shm ] && [ "${avail:-0}" -gt $((DELAYED * 5)) ] && BDIR=/dev/shm
fi
bwork=$(mktemp -d "$BDIR/taskspool-bench-triggers-b.XXXXXX")
sp="$bwork/b"
mkspool "$sp" info 1
"$TB" hold "$sp/state/leader.lock" >"$work/hold.out" &
hold=$!
while ! grep -q locked "$work/hold.out" 2>/dev/null; do sleep 0.01; done
"$TB" delayed "$sp" "$DELAYED" 3600 2>&1 | sed 's/^trigbench: /(b) /'
"$BUILD/taskspoold" -d -c "$sp/taskspool.conf" >"$work/b.log" 2>&1 &
pid=$!
while [ ! -f "$sp/state/heartbeat.bench" ]; do sleep 0.05; done
sleep 1
before=$(rss_kb "$pid")
t0=$(date +%s%N)
kill "$hold"; wait "$hold" 2>/dev/null || true; hold=
# "recurring jobs: N loaded" is logged right after the delayed/ scan.
while ! grep -q "recurring jobs:" "$work/b.log"; do sleep 0.05; done
t1=$(date +%s%N)
# RSS settles once the index is built; take the largest of a few samples.
after=$(rss_kb "$pid")
for i in 1 2 3 4; do
	sleep 0.5
	r=$(rss_kb "$pid"); [ "$r" -gt "$after" ] && after=$r
done
echo "(b) spool on $(df -P "$sp" | awk 'NR == 2 { print $1 }') ($BDIR)"
echo "(b) leader indexed $DELAYED delayed/ files in $(( (t1 - t0) / 1000000 )) ms (from lock release to the log line)"
echo "$before $after $DELAYED" | awk '{
	printf "(b) RSS before %d kB, after %d kB: %.1f bytes per entry   (target <= 128)\n", $1, $2, ($2 - $1) * 1024 / $3 }'
stop "$pid" || true; pid=
t0=$(date +%s%N)
rm -rf "$bwork"; bwork=
echo "    (spool removed in $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
