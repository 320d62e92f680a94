#!/bin/sh
# bench-deps.sh — the release of blocked tasks (README.md "Dependencies"),
# numbers only (asserts nothing).  Called from tests/bench/bench.sh; runs
# alone as  BUILD=build sh tests/bench/bench-deps.sh
#
#  (a) release latency: PARENTS (default 100) parents, delayed tasks due
#      one every GAP ms (default 1000) from BASE ms (default 20000) after
#      they are dropped, and KIDS (default 10000) blocked tasks, kid i
#      waiting on parent i % PARENTS; for each kid: its hook's start
#      (tools/stamp) - its parent's results/<id>.json rename
#      (tools/dirstamp, inotify); p50 and p99 over every kid (a kid may
#      queue behind its KIDS/PARENTS siblings for a slot) and over the
#      first kid of each parent (the release itself).  GAP is long
#      enough for one parent's KIDS/PARENTS kids to end before the next
#      parent does (about 0.3 s for 100 on 4 slots); with less, the kids
#      pile up and the first kid's number is the backlog's, not the
#      release's;
#  (b) fan-in: FANIN (default 10000) parents due together, one task
#      waiting on all of them: its hook's start - the last parent's
#      result rename;
#  (c) the plain drop -> hook start latency (tools/spoolbench latency,
#      LAT drops, default 200) on the same daemon, for comparison.
# One daemon, SLOTS (default 4) slots, fsync = FSYNC (default 1).  The
# issue's target: the release adds at most 2 ms to (c).
set -eu
. "$(dirname "$0")/bench-lib.sh"
PARENTS=${PARENTS:-100}
KIDS=${KIDS:-10000}
FANIN=${FANIN:-10000}
BASE=${BASE:-20000}
GAP=${GAP:-1000}
LAT=${LAT:-200}
SLOTS=${SLOTS:-4}
bench_workdir taskspool-bench-deps
pid= wpid=
trap 'for p in $wpid $pid; do kill -TERM $p 2>/dev/null; wait $p || true; done
[ -n "${KEEP_LOG:-}" ] && cp "$work/daemon.log" "$KEEP_LOG"; rm -rf "$work"' EXIT
spool="$work/spool"
bench_spool "$spool" "$work/hooks" "$SLOTS" "${FSYNC:-1}" "${LOG_LEVEL:-warning}"
echo "node_id = benchdeps" >>"$spool/taskspool.conf"
echo "taskspool bench-deps: $KIDS kids on $PARENTS parents; fan-in $FANIN; $SLOTS slots, fsync ${FSYNC:-1}; $(nproc) CPU(s)"

# stage DIR: task files written by awk (stdin: "id json" lines) into
# $work/stage, then renamed into DIR one after the other.
stage() {
	rm -rf "$work/stage" && mkdir "$work/stage"
	awk -v d="$work/stage" '{ f = d "/" $1 ".json"; sub(/^[^ ]* /, "");
	    print > f; close(f) }'
	# rename(2) each (mv(1) stats the target, which the daemon moves on)
	python3 -c 'import os, sys
for f in sorted(os.listdir(sys.argv[1])):
	os.rename(os.path.join(sys.argv[1], f), os.path.join(sys.argv[2], f))' \
	    "$work/stage" "$1"
}
# count DIR: files in DIR
count() { find "$1" -maxdepth 1 -name '*.json' | wc -l; }
# ended: tasks in done/, failed/ and cancelled/
ended() { find "$spool/done" "$spool/failed" "$spool/cancelled" -maxdepth 1 -name '*.json' | wc -l; }
# wait_ended N S: until N tasks ended, at most S seconds
wait_ended() {
	i=0
	while [ "$(ended)" -lt "$1" ]; do
		i=$((i + 1)); [ $i -gt $(($2 * 10)) ] && return 1; sleep 0.1
	done
}
# wait_count DIR N S: until DIR holds N files, at most S seconds
wait_count() {
	i=0
	while [ "$(count "$1")" -lt "$2" ]; do
		i=$((i + 1)); [ $i -gt $(($3 * 10)) ] && return 1; sleep 0.1
	done
}

bench_daemon "$spool" benchdeps "$work/daemon.log"
pid=$bench_pid
"$BUILD/tools/dirstamp" "$spool/results" "$work/results.stamps" &
wpid=$!
sleep 0.2

# (a) parents first (a kid's parent must exist), then the kids.
awk -v n="$PARENTS" -v b="$BASE" -v g="$GAP" 'BEGIN { for (j = 0; j < n; j++)
    printf "p%04d {\"requestId\":\"p%04d\",\"taskCode\":\"stamp\",\"triggerType\":\"delay\",\"delayMs\":%d}\n", j, j, b + j * g }' |
    stage "$spool/incoming"
t0=$(date +%s%N)
awk -v n="$KIDS" -v p="$PARENTS" 'BEGIN { for (i = 0; i < n; i++)
    printf "k%05d {\"requestId\":\"k%05d\",\"taskCode\":\"stamp\",\"dependsOn\":[{\"requestId\":\"p%04d\"}]}\n", i, i, i % p }' |
    stage "$spool/incoming"
wait_count "$spool/blocked" "$KIDS" 120 || echo "(a) only $(count "$spool/blocked") kids in blocked/"
t1=$(date +%s%N)
echo "(a) $KIDS kids into blocked/ in $(echo "$t0 $t1" | awk '{printf "%.2f", ($2-$1)/1e9}') s (first parent due $((BASE / 1000)) s after the drop)"
wait_ended $((PARENTS + KIDS)) $((BASE / 1000 + PARENTS * GAP / 1000 + 300)) ||
    echo "(a) timed out: $(ended) ended"

# (b) FANIN parents due together, then the one task on all of them.
awk -v n="$FANIN" 'BEGIN { for (j = 0; j < n; j++)
    printf "f%04d {\"requestId\":\"f%04d\",\"taskCode\":\"stamp\",\"triggerType\":\"delay\",\"delayMs\":%d}\n", j, j, 15000 }' |
    stage "$spool/incoming"
awk -v n="$FANIN" 'BEGIN { printf "fanin {\"requestId\":\"fanin\",\"taskCode\":\"stamp\",\"dependsOn\":["
    for (j = 0; j < n; j++) printf "%s{\"requestId\":\"f%04d\"}", j ? "," : "", j
    print "]}" }' | stage "$spool/incoming"
wait_ended $((PARENTS + KIDS + FANIN + 1)) 300 ||
    echo "(b) timed out: $(ended) ended"
test -e "$spool/done/fanin.json" || echo "(b) fanin did not succeed: $(ls "$spool"/*/fanin.json 2>/dev/null)"
echo "failed: $(count "$spool/failed"), corrupt: $(count "$spool/corrupt")"

# (c) the plain drop -> start on the same daemon.
lat=$("$BUILD/tools/spoolbench" latency "$spool" "$LAT")
kill -TERM $wpid; wait $wpid || true; wpid=

# The latencies, one "KIND MS" line each: a (every kid), f (the first
# kid of each parent), b (the fan-in task).
awk -v P="$PARENTS" '
FILENAME ~ /results.stamps$/ { id = $1; sub(/\.json$/, "", id)
	if (!(id in res)) res[id] = $2; next }
{ if (!($1 in st)) st[$1] = $2 }
END {
	for (id in st) if (id ~ /^k[0-9]+$/) {
		p = sprintf("p%04d", substr(id, 2) % P)
		if (!(p in res)) continue
		l = (st[id] - res[p]) / 1e6; print "a", l
		if (!(p in first) || l < first[p]) first[p] = l
	}
	for (p in first) print "f", first[p]
	last = 0
	for (id in res) if (id ~ /^f[0-9]+$/ && res[id] > last) last = res[id]
	if (("fanin" in st) && last > 0) print "b", (st["fanin"] - last) / 1e6
}' "$work/results.stamps" "$spool/stamps.log" >"$work/lat"
# show KIND TEXT: p50, p99 and max of the KIND lines
show() {
	grep "^$1 " "$work/lat" | cut -d" " -f2 | sort -g | awk -v t="$2" '
	    { v[NR] = $1 } END { if (NR == 0) { print t ": no samples"; exit }
	    k = int(NR * .99) + 1; if (k > NR) k = NR
	    printf "%s (n %d): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", t, NR,
	    v[int(NR / 2) + 1], v[k], v[NR] }'
}
show a "(a) release latency, result durable -> hook start, every kid"
show f "(a) the same, first kid of each parent (no queueing for a slot)"
grep "^b " "$work/lat" | awk -v n="$FANIN" '{ printf "(b) fan-in of %d parents: last result durable -> hook start %.3f ms\n", n, $2 }'
echo "$lat" | awk '{printf "(c) drop->hook-start latency over %d idle drops: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", $2, $3, $4, $5}'
echo "target: (a) p50 <= (c) p50 + 2 ms"
