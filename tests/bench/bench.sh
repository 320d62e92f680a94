#!/bin/sh
# make bench: numbers only, no assertions about speed.
#   N tasks (default 2000, env N) with a no-op static hook, one daemon with
#   2 slots and durable writes (fsync = 1), versus `xargs -P2` running the
#   same hook N times, in the same run; plus drop→hook-start latency.
set -eu
. "$(dirname "$0")/bench-lib.sh"
N=${N:-2000}
LAT=${LAT:-300}
bench_workdir taskspool-bench
pid=
# Wait for the daemon's exit before removing its spool (it writes its
# last metrics file while it stops).
trap 'if [ -n "$pid" ]; then kill -TERM $pid 2>/dev/null; wait $pid || true; fi
rm -rf "$work"' EXIT
spool="$work/spool"
bench_spool "$spool" "$work/hooks" 2 "${FSYNC:-1}"
echo "node_id = bench" >>"$spool/taskspool.conf"
echo "taskspool bench: N=$N tasks, 2 slots, fsync on; $(nproc) CPU(s)"

# xargs -P2 baseline: the same hook, N times, two at a time.
cd "$work"
t0=$(date +%s%N)
seq -f 'x%06g' "$N" | STAMP_LOG="$work/xargs.log" xargs -P2 -n1 "$work/hooks/stamp"
t1=$(date +%s%N)
cd - >/dev/null
xw=$(echo "$t0 $t1" | awk '{printf "%.3f", ($2-$1)/1e9}')

bench_daemon "$spool" bench "$work/daemon.log"
pid=$bench_pid

tp=$("$BUILD/tools/spoolbench" throughput "$spool" "$N")
dw=$(echo "$tp" | awk '{print $3}')
lat=$("$BUILD/tools/spoolbench" latency "$spool" "$LAT")

printf '%-34s %10s %12s\n' "" "wall s" "tasks/s"
printf '%-34s %10s %12s\n' "xargs -P2 (same hook)" "$xw" \
    "$(echo "$N $xw" | awk '{printf "%.1f", $1/$2}')"
printf '%-34s %10s %12s\n' "taskspoold, 2 slots, durable" "$dw" \
    "$(echo "$tp" | awk '{print $4}')"
echo "ratio taskspoold/xargs wall time: $(echo "$dw $xw" | awk '{printf "%.2f", $1/$2}') (target <= 1.0)"
echo "$lat" | awk '{printf "drop->hook-start latency over %d idle drops: p50 %.3f ms, p99 %.3f ms, max %.3f ms (targets: p50 < 2, p99 < 5)\n", $2, $3, $4, $5}'
if [ -x "$BUILD/tools/wheelbench" ]; then
	echo "timing wheel:"
	"$BUILD/tools/wheelbench" | sed 's/^/  /'
fi
BUILD="$BUILD" sh "$(dirname "$0")/bench-triggers.sh"
BUILD="$BUILD" sh "$(dirname "$0")/bench-callbacks.sh"
BUILD="$BUILD" sh "$(dirname "$0")/bench-records.sh"
BUILD="$BUILD" sh "$(dirname "$0")/bench-cluster.sh"
BUILD="$BUILD" sh "$(dirname "$0")/bench-deps.sh"
BUILD="$BUILD" sh "$(dirname "$0")/bench-priority.sh"
