# records-lib.sh — sourced after test-lib.sh by the records scenarios.
#
# mdb_use_server: use the MariaDB named by TS_TEST_MARIADB (host:port;
# user/password TS_TEST_MARIADB_USER/_PASSWORD, default taskspool/taskspool
# as created by tests/servers/mariadb.sh), or start a private one with
# tests/servers/mariadb.sh in $TRASH/mariadb (stopped at exit).
# mdb_own_server: always a private server (an outage test stops it).
# Then mdb_database creates a fresh database for this script and adds the
# mariadb keys to $CONF.
MDB_SCRIPT="$(cd "$(dirname "$0")/../servers" && pwd)/mariadb.sh"
MDB_DIR=""
MDB_USER=${TS_TEST_MARIADB_USER:-taskspool}
MDB_PASS=${TS_TEST_MARIADB_PASSWORD:-taskspool}
MDB_DB="ts_$(echo "$test_name" | tr -c 'A-Za-z0-9\n' _)_$$"

mdb_cleanup() {
	[ -n "$MDB_DIR" ] && sh "$MDB_SCRIPT" stop "$MDB_DIR" >/dev/null 2>&1
	cleanup
}
trap mdb_cleanup EXIT

mdb_own_server() {
	MDB_DIR="$TRASH/mariadb"
	_ml_out=$(sh "$MDB_SCRIPT" start "$MDB_DIR") ||
	    { echo "Bail out! cannot start mariadbd"; exit 1; }
	MDB_ADDR=${_ml_out#TS_TEST_MARIADB=}
	MDB_USER=taskspool MDB_PASS=taskspool
}

mdb_use_server() {
	if [ -n "${TS_TEST_MARIADB:-}" ]; then
		MDB_ADDR=$TS_TEST_MARIADB
	else
		mdb_own_server
	fi
}

mdb_database() {
	sqlq "DROP DATABASE IF EXISTS $MDB_DB; CREATE DATABASE $MDB_DB CHARACTER SET utf8mb4" ||
	    { echo "Bail out! cannot create database $MDB_DB"; exit 1; }
	cat >>"$CONF" <<CONF
mariadb = $MDB_ADDR
mariadb_user = $MDB_USER
mariadb_password = $MDB_PASS
mariadb_database = $MDB_DB
CONF
}

# sqlq SQL: run SQL on the server (no database selected).
sqlq() {
	mariadb --no-defaults -N -B -h"${MDB_ADDR%:*}" -P"${MDB_ADDR##*:}" \
	    -u"$MDB_USER" -p"$MDB_PASS" -e "$1"
}

# sql SQL: run SQL in this script's database; tab-separated, no header.
sql() {
	mariadb --no-defaults -N -B -h"${MDB_ADDR%:*}" -P"${MDB_ADDR##*:}" \
	    -u"$MDB_USER" -p"$MDB_PASS" "$MDB_DB" -e "$1"
}

# outbox_count: record files not yet applied (waiting or claimed).
outbox_count() {
	find "$SPOOL/outbox/records" "$SPOOL/outbox/records-claimed" -type f \
	    -name '*.json' 2>/dev/null | wc -l
}

# terminal_count: tasks in done/, failed/, cancelled/.
terminal_count() {
	echo $(( $(count_files "$SPOOL/done") + $(count_files "$SPOOL/failed") +
	    $(count_files "$SPOOL/cancelled") ))
}

# A jq prelude: RFC 3339 ms → epoch ms, null → "NULL", tab-safe text.
JQREC='def ms: if . == null then "NULL" else
    ((.[0:19] + "Z" | fromdateiso8601) * 1000 + (.[20:23] | tonumber)) end;
  def n: if . == null then "NULL" else . end;'

# expected_exec / db_exec: one line per task, the result files' values and
# the task_execution row's, in the same column order.
expected_exec() {
	for f in "$SPOOL"/results/*.json; do cat "$f"; done | jq -r "$JQREC
	    [.requestId, .status, .attempt, .node, (.createdAt | ms),
	     (.startedAt | ms), (.finishedAt | ms), .durationMs,
	     (.attempts[-1].exitCode | n), (.failureReason.code | n),
	     (.failureReason.message | n), .maxRetries,
	     (if .result == null then \"NULL\" else (.result | tojson) end),
	     (.traceparent | n)]
	    | @tsv" | sort
}
db_exec() {
	sql "SELECT request_id, status, attempt, node, created_at, started_at,
	    finished_at, duration_ms, exit_code, failure_code, failure_reason,
	    max_retries, result_summary, traceparent FROM task_execution" | sort
}
expected_attempts() {
	for f in "$SPOOL"/results/*.json; do cat "$f"; done | jq -r "$JQREC
	    .requestId as \$id | .attempts[] |
	    [\$id, .attempt, .node, .outcome, (.startedAt | ms),
	     (.finishedAt | ms), (.durationMs | n), (.exitCode | n),
	     (.signal | n), .reason, (.retryAt | ms), (.traceparent | n)] |
	    @tsv" | sort
}
db_attempts() {
	sql "SELECT request_id, attempt, node, state, started_at, finished_at,
	    duration_ms, exit_code, sig, reason, retry_at, traceparent
	    FROM task_attempt" |
	    sort
}

# rows_match: the database holds exactly the result files' values: one
# task_execution row per result file, one task_attempt row per attempt.
rows_match() {
	expected_exec >"$TRASH/exp.exec" && db_exec >"$TRASH/db.exec" &&
	expected_attempts >"$TRASH/exp.att" && db_attempts >"$TRASH/db.att" &&
	echo "tasks: $(wc -l <"$TRASH/exp.exec") result files," \
	    "$(wc -l <"$TRASH/db.exec") rows; attempts:" \
	    "$(wc -l <"$TRASH/exp.att") in results, $(wc -l <"$TRASH/db.att") rows" &&
	test -s "$TRASH/exp.exec" &&
	diff "$TRASH/exp.exec" "$TRASH/db.exec" &&
	diff "$TRASH/exp.att" "$TRASH/db.att"
}

# submit_mix FROM TO: tasks mixNNNN (or $MIX_PREFIX NNNN) with retries and
# failures: i%4 = 0
# fails once then succeeds; 1 succeeds with a hook result; 2 fails every
# attempt (TEMPFAIL, 1 retry); 3 exits 65 (permanent, no retry).  1 also
# writes 10 bytes to stdout (logs/<id>/ exists for purge to remove).
# Every third task carries a W3C traceparent (trace-id = i in hex), so
# its row and its attempts' rows have one (migration 0003).
submit_mix() {
	_ml_i=$1
	while [ "$_ml_i" -le "$2" ]; do
		case $((_ml_i % 4)) in
		0) _ml_p='{"fail_attempts": 1}'; _ml_r=2;;
		1) _ml_p='{"result": true, "out_bytes": 10}'; _ml_r=2;;
		2) _ml_p='{"fail_attempts": 9}'; _ml_r=1;;
		3) _ml_p='{"exit": 65}'; _ml_r=3;;
		esac
		_ml_t=
		[ $((_ml_i % 3)) = 0 ] &&
		    _ml_t=$(printf -- "--traceparent=00-%032x-00f067aa0ba902b7-01" "$_ml_i")
		ts submit --code probe --id "${MIX_PREFIX:-mix}$_ml_i" --retries "$_ml_r" \
		    --params "$_ml_p" $_ml_t >/dev/null || return 1
		_ml_i=$((_ml_i + 1))
	done
}

# Test bodies write their scratch files (out, ids, ...) where they run:
# in the trash directory, never in the source tree.
cd "$TRASH" || exit 1
