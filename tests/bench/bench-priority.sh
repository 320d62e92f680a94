#!/bin/sh
# bench-priority.sh — claim throughput with priorities versus plain FIFO
# (issue 15 item 1; target: at most 10 % slower), numbers only (asserts
# nothing).  Runs alone as  BUILD=build sh tests/bench/bench-priority.sh
#
# N (default 4000) task files of the no-op hook `stamp` are written into
# incoming/ while no daemon runs, then one daemon (SLOTS, default 2;
# fsync 0, so the claim path and not the disk is measured) starts and
# the wall time until all N are in done/ is taken; once with no priority
# member (every task 5: the FIFO path), once with priorities 0..9 mixed
# (i mod 10: the bounded 4,096-candidate comparison on every claim, and
# the read of each file's priority as it becomes a candidate), and once
# with those priorities and a concurrencyKey over KEYS (default 10,000)
# distinct keys with max_concurrent_per_key = stamp=2 (issue 15 item 2:
# a key's slot taken and freed on every claim; N is raised to KEYS so
# that every key is active).  RUNS (default 3) alternating triples; the
# best of each is printed, and what the keys left once idle: slot files
# of keys in state/limits/ and the daemon's resident memory against the
# FIFO run's (target: zero per idle key).
set -eu
. "$(dirname "$0")/bench-lib.sh"
N=${N:-10000}
KEYS=${KEYS:-10000}
[ "$N" -ge "$KEYS" ] || N=$KEYS
SLOTS=${SLOTS:-2}
RUNS=${RUNS:-3}
bench_workdir taskspool-bench-prio
# one_run runs in a command substitution (a subshell): its daemon's pid
# is kept in $work/daemon.pid for this trap (never `kill 0`).
trap 'test -s "$work/daemon.pid" && kill "$(cat "$work/daemon.pid")" 2>/dev/null
rm -rf "$work"' EXIT

# one_run MODE: prints the ms of N tasks (MODE fifo, mixed or keys);
# leaves in $work/rss.MODE the daemon's VmRSS (kB) once all are done
# and in $work/left.MODE the slot files of keys left in state/limits/.
one_run() {
	rm -rf "$work/spool" "$work/hooks"
	bench_spool "$work/spool" "$work/hooks" "$SLOTS" 0
	[ "$1" = keys ] &&
	    echo "max_concurrent_per_key = stamp=2" >>"$work/spool/taskspool.conf"
	i=0
	while [ $i -lt "$N" ]; do
		case $1 in
		mixed) p=",\"priority\":$((i % 10))" ;;
		keys) p=",\"priority\":$((i % 10)),\"concurrencyKey\":\"k{k}\",\"executeParams\":{\"k\":$((i % KEYS))}" ;;
		*) p="" ;;
		esac
		printf '{"requestId":"b%d","taskCode":"stamp"%s}' $i "$p" \
		    >"$work/spool/tmp/b$i"
		mv "$work/spool/tmp/b$i" "$work/spool/incoming/b$i.json"
		i=$((i + 1))
	done
	t0=$(date +%s%N)
	bench_daemon "$work/spool" b1 "$work/log" -c "$work/spool/taskspool.conf" -i b1
	echo "$bench_pid" >"$work/daemon.pid"
	while [ "$(ls "$work/spool/done" | wc -l)" -lt "$N" ]; do sleep 0.05; done
	t1=$(date +%s%N)
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$bench_pid/status" >"$work/rss.$1"
	ls "$work/spool/state/limits" 2>/dev/null | grep -c @ >"$work/left.$1" || true
	kill "$bench_pid"; wait "$bench_pid" 2>/dev/null || true
	: >"$work/daemon.pid"
	echo $(( (t1 - t0) / 1000000 ))
}

best_fifo="" best_mixed="" best_keys=""
r=0
while [ $r -lt "$RUNS" ]; do
	f=$(one_run fifo); m=$(one_run mixed); k=$(one_run keys)
	echo "run $r: fifo ${f} ms, mixed priorities ${m} ms, priorities and $KEYS keys ${k} ms"
	[ -z "$best_fifo" ] || [ "$f" -lt "$best_fifo" ] && best_fifo=$f
	[ -z "$best_mixed" ] || [ "$m" -lt "$best_mixed" ] && best_mixed=$m
	[ -z "$best_keys" ] || [ "$k" -lt "$best_keys" ] && best_keys=$k
	r=$((r + 1))
done
echo "claim throughput, $N tasks, $SLOTS slots, fsync 0 (best of $RUNS):"
echo "  plain FIFO        $best_fifo ms  ($(( N * 1000 / best_fifo )) tasks/s)"
echo "  priorities 0..9   $best_mixed ms  ($(( N * 1000 / best_mixed )) tasks/s)"
echo "  slower by         $(( (best_mixed - best_fifo) * 100 / best_fifo )) %  (target: at most 10 %)"
echo "  + $KEYS keys      $best_keys ms  ($(( N * 1000 / best_keys )) tasks/s)"
echo "  slower by         $(( (best_keys - best_fifo) * 100 / best_fifo )) %  (target: at most 10 %)"
echo "idle keys (last run): $(cat "$work/left.keys") slot files left in state/limits/;"
echo "  daemon VmRSS $(cat "$work/rss.keys") kB after the keys run, $(cat "$work/rss.fifo") kB after FIFO"
