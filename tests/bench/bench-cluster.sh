#!/bin/sh
# make bench, cluster part: numbers only, no assertions about speed.
# The same workload as bench.sh (N no-op "stamp" tasks staged, then
# renamed into incoming/ at once; then LAT idle drops for the drop→start
# latency) on a fresh spool each time: embedded mode with 1 daemon, and
# cluster mode (a real redis-server) with 1 and with 3 daemons, every
# daemon 2 slots, durable writes.  Prints tasks/s, p50/p99 latency and the
# cluster/embedded throughput ratio (target: at least 0.70).  Uses
# $TS_TEST_REDIS when set, else starts its own server.
set -eu
. "$(dirname "$0")/bench-lib.sh"
N=${N:-2000}
LAT=${LAT:-300}
bench_workdir taskspool-benchc
pids=""
cleanup() {
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	bench_servers_stop
	rm -rf "$work"
}
trap cleanup EXIT
bench_server redis TS_TEST_REDIS
redis=$bench_addr

# run MODE NDAEMONS: prints "TASKS_PER_S P50_MS P99_MS"
run() {
	spool="$work/$1-$2/spool"
	bench_spool "$spool" "$work/$1-$2/hooks" 2 "${FSYNC:-1}"
	if [ "$1" = cluster ]; then
		echo "redis = $redis"
		echo "redis_prefix = bench:$$:$2:"
	fi >>"$spool/taskspool.conf"
	i=1
	while [ "$i" -le "$2" ]; do
		bench_daemon "$spool" "b$i" "$work/$1-$2/daemon.log" -i "b$i"
		pids="$pids $bench_pid"
		i=$((i + 1))
	done
	tp=$("$BUILD/tools/spoolbench" throughput "$spool" "$N")
	lat=$("$BUILD/tools/spoolbench" latency "$spool" "$LAT")
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	pids=""
	echo "$(echo "$tp" | awk '{print $4}') $(echo "$lat" | awk '{print $3, $4}')"
}

echo "cluster mode: N=$N tasks, LAT=$LAT drops, 2 slots per daemon, Redis $redis"
e1=$(run embedded 1)
c1=$(run cluster 1)
c3=$(run cluster 3)
printf '%-34s %10s %10s %10s\n' "" "tasks/s" "p50 ms" "p99 ms"
printf '%-34s %10s %10s %10s\n' "embedded, 1 daemon" $e1
printf '%-34s %10s %10s %10s\n' "cluster (Redis), 1 daemon" $c1
printf '%-34s %10s %10s %10s\n' "cluster (Redis), 3 daemons" $c3
echo "$e1 $c1 $c3" | awk '{printf "ratio cluster/embedded tasks/s: 1 daemon %.2f, 3 daemons %.2f (target >= 0.70)\n", $4/$1, $7/$1}'
