#!/bin/sh
# bench-records.sh (part of make bench): numbers only, no assertions.
#   0. The same run in embedded mode (no records), for comparison.
#   1. N tasks (default 2000, env N) with the static no-op hook, one
#      daemon with 2 slots, durable writes, records to MariaDB: task rate,
#      record files written, and the outbox lag (time from the last task's
#      terminal move until the outbox is empty).
#   2. Replay: the same number of tasks run while MariaDB is unreachable,
#      then a daemon with the right address drains the outbox: rows/s of
#      the record writer alone (4 records → rows per task: RUNNING and
#      RESULT, upserts of task_execution and task_attempt).
# MariaDB: TS_TEST_MARIADB (user/password TS_TEST_MARIADB_USER/_PASSWORD,
# default taskspool/taskspool), else a private server started here.
set -eu
: "${BUILD:=build}"
N=${N:-2000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/taskspool-bench-records.XXXXXX")
pid=""
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
	[ -d "$work/mariadb" ] && sh "$here/../servers/mariadb.sh" stop "$work/mariadb"
	rm -rf "$work"
}
trap cleanup EXIT
if [ -n "${TS_TEST_MARIADB:-}" ]; then
	addr=$TS_TEST_MARIADB
else
	out=$(sh "$here/../servers/mariadb.sh" start "$work/mariadb")
	addr=${out#TS_TEST_MARIADB=}
fi
user=${TS_TEST_MARIADB_USER:-taskspool}
pass=${TS_TEST_MARIADB_PASSWORD:-taskspool}
db="ts_bench_$$"
q() { mariadb --no-defaults -N -B -h"${addr%:*}" -P"${addr##*:}" -u"$user" -p"$pass" -e "$1"; }
q "CREATE DATABASE $db CHARACTER SET utf8mb4"

ms() { echo $(( $(date +%s%N) / 1000000 )); }
nfiles() { find "$1" -type f -name '*.json' 2>/dev/null | wc -l; }

# run NAME MARIADB_ADDR: a fresh spool, N stamp tasks, daemon until done.
setup() {
	spool="$work/$1"
	"$BUILD/taskspool" init "$spool" >/dev/null
	mkdir -p "$work/hooks"
	cp "$BUILD/tools/stamp" "$work/hooks/stamp"
	cat >"$spool/taskspool.conf" <<CONF
spool = $spool
hooks_dir = $work/hooks
node_id = bench
slots = 2
fsync = 1
log_level = warning
mariadb = $2
mariadb_user = $user
mariadb_password = $pass
mariadb_database = $db
CONF
	"$BUILD/taskspool" -s "$spool" db migrate >/dev/null 2>&1 || true
}
start() {
	rm -f "$spool/state/heartbeat.bench"
	"$BUILD/taskspoold" -d -s "$spool" >>"$work/daemon.log" 2>&1 &
	pid=$!
	while [ ! -f "$spool/state/heartbeat.bench" ]; do sleep 0.01; done
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=""; }

echo "records bench: N=$N tasks, 2 slots, fsync on, MariaDB $addr"
setup embedded ""
start
t0=$(ms)
"$BUILD/tools/spoolbench" throughput "$spool" "$N" >/dev/null
t1=$(ms)
stop
echo "  embedded (no records, same machine now): $N tasks in $((t1 - t0)) ms" \
    "($(echo "$N $t0 $t1" | awk '{printf "%.0f", $1 * 1000 / ($3 - $2)}') tasks/s)"
setup live "$addr"
start
t0=$(ms)
"$BUILD/tools/spoolbench" throughput "$spool" "$N" >/dev/null
t1=$(ms)
while [ "$(nfiles "$spool/outbox")" -gt 0 ]; do sleep 0.01; done
t2=$(ms)
rows=$(q "SELECT COUNT(*) FROM $db.task_execution")
stop
echo "  live: $N tasks in $((t1 - t0)) ms ($(echo "$N $t0 $t1" | awk '{printf "%.0f", $1 * 1000 / ($3 - $2)}') tasks/s);" \
    "$rows task_execution rows; outbox lag after the last task: $((t2 - t1)) ms (target <= 1000)"

q "DROP DATABASE $db; CREATE DATABASE $db CHARACTER SET utf8mb4"
setup replay "127.0.0.1:1"	# nothing listens on port 1: the outbox grows
"$BUILD/taskspool" -s "$spool" -c "$work/live/taskspool.conf" db migrate >/dev/null
start
"$BUILD/tools/spoolbench" throughput "$spool" "$N" >/dev/null
stop
files=$(nfiles "$spool/outbox")
sed -i "s/^mariadb = .*/mariadb = $addr/" "$spool/taskspool.conf"
t0=$(ms)
start
while [ "$(nfiles "$spool/outbox")" -gt 0 ]; do sleep 0.01; done
t1=$(ms)
stop
echo "  replay: $files record files (tasks run while MariaDB was unreachable)" \
    "drained in $((t1 - t0)) ms including daemon start:" \
    "$(echo "$files $t0 $t1" | awk '{printf "%.0f", $1 * 1000 / ($3 - $2)}') records/s"
q "DROP DATABASE $db"
