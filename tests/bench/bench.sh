#!/bin/sh
# make bench: numbers only, no assertions about speed.
#   N tasks (default 2000, env N) with a no-op static hook, one daemon with
#   2 slots and durable writes (fsync = 1), versus `xargs -P2` running the
#   same hook N times, paired rep by rep (REPS, default 3: the median and
#   the range of the ratios); plus drop→hook-start latency.
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
REPS=${REPS:-3}
echo "taskspool bench: N=$N tasks, 2 slots, fsync ${FSYNC:-1}; $REPS paired reps; $(nproc) CPU(s)"

# rep I: xargs -P2 (the same hook, N times, two at a time) and just after
# it the daemon on a fresh spool (2 slots, durable unless FSYNC=0): one
# pair, so that both see the same machine.  Appends "xargs daemon ratio
# tasks/s" to $work/reps.
: >"$work/reps"
rep() {
	spool="$work/spool$1"
	bench_spool "$spool" "$work/hooks" 2 "${FSYNC:-1}"
	echo "node_id = bench" >>"$spool/taskspool.conf"
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
	echo "$xw $dw $(echo "$dw $xw" | awk '{printf "%.2f", $1/$2}') $(echo "$tp" | awk '{print $4}')" >>"$work/reps"
	printf '  rep %d: xargs -P2 %s s, taskspoold %s s, ratio %s\n' "$1" "$xw" "$dw" \
	    "$(tail -n 1 "$work/reps" | cut -d" " -f3)"
}
i=1
while [ $i -le "$REPS" ]; do
	rep $i
	# The spool of a rep stays until the end: removing its thousands
	# of files would slow every inode allocation of the next rep (ext4
	# without a journal passes over each inode freed in the last 5 to
	# 300 s, fs/ext4/ialloc.c recently_deleted()), an artefact of the
	# bench, not of the daemon.
	if [ $i -lt "$REPS" ]; then
		kill -TERM "$pid" 2>/dev/null; wait "$pid" || true; pid=
	fi
	i=$((i + 1))
done
lat=$("$BUILD/tools/spoolbench" latency "$spool" "$LAT")

# The median rep by ratio (the middle one of the sorted list; of an even
# count the lower middle), and the range of the ratios.
sort -k3,3n "$work/reps" >"$work/reps.sorted"
med=$(sed -n "$(( (REPS + 1) / 2 ))p" "$work/reps.sorted")
printf '%-34s %10s %12s\n' "(median rep by ratio)" "wall s" "tasks/s"
printf '%-34s %10s %12s\n' "xargs -P2 (same hook)" "$(echo "$med" | cut -d" " -f1)" \
    "$(echo "$N $med" | awk '{printf "%.1f", $1/$2}')"
printf '%-34s %10s %12s\n' "taskspoold, 2 slots, durable" "$(echo "$med" | cut -d" " -f2)" \
    "$(echo "$med" | cut -d" " -f4)"
echo "ratio taskspoold/xargs wall time: median $(echo "$med" | cut -d" " -f3), range $(head -n 1 "$work/reps.sorted" | cut -d" " -f3)-$(tail -n 1 "$work/reps.sorted" | cut -d" " -f3) over $REPS paired reps (target <= 0.75)"
echo "$lat" | awk '{printf "drop->hook-start latency over %d idle drops: p50 %.3f ms, p99 %.3f ms, max %.3f ms (targets: p50 <= 1, p99 <= 3)\n", $2, $3, $4, $5}'
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
