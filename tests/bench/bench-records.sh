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
. "$(dirname "$0")/bench-lib.sh"
N=${N:-2000}
bench_workdir taskspool-bench-records
pid=""
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
	bench_servers_stop
	rm -rf "$work"
}
trap cleanup EXIT
bench_server mariadb TS_TEST_MARIADB
addr=$bench_addr
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
	bench_spool "$spool" "$work/hooks" 2 1
	cat >>"$spool/taskspool.conf" <<CONF
node_id = bench
mariadb = $2
mariadb_user = $user
mariadb_password = $pass
mariadb_database = $db
CONF
	"$BUILD/taskspool" -s "$spool" db migrate >/dev/null 2>&1 || true
}
start() {
	bench_daemon "$spool" bench "$work/daemon.log"
	pid=$bench_pid
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
