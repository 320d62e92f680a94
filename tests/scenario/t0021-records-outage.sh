#!/bin/sh
# MariaDB records (issue 6) through an outage: MariaDB stopped while tasks
# run — the daemon keeps running them and the outbox grows; MariaDB back
# but slow (tables locked) while the writer replays, the daemon killed
# (SIGKILL) in the middle of that replay and restarted.  Afterwards the
# rows equal the result files exactly: no duplicate, none missing, and a
# task whose row was RUNNING when MariaDB stopped is SUCCESS with its own
# finish time (FIELD-FAILURES B21).
# Always uses a private mariadbd (it is stopped and started here).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/records-lib.sh"
mdb_own_server
mdb_database
N1=${OUTAGE_TASKS1:-60}
N2=${OUTAGE_TASKS2:-140}
N=$((N1 + N2))

# submit_slow FROM TO: like submit_mix, each attempt sleeping 100 ms.
submit_slow() {
	_t_i=$1
	while [ "$_t_i" -le "$2" ]; do
		case $((_t_i % 3)) in
		0) _t_p='{"sleep_ms": 100, "fail_attempts": 1}';;
		1) _t_p='{"sleep_ms": 100, "result": true}';;
		2) _t_p='{"sleep_ms": 100, "exit": 65}';;
		esac
		ts submit --code probe --id "out$_t_i" --retries 2 \
		    --params "$_t_p" >/dev/null || return 1
		_t_i=$((_t_i + 1))
	done
}

# Sessions running the SLEEP(90) of the lock holder (the pattern is built
# with CONCAT so that this query does not match itself), their ids, and
# sessions waiting for the locked tables.
lock_sessions() {
	sql "SELECT COUNT(*) FROM information_schema.processlist
	    WHERE info LIKE CONCAT('%SLE', 'EP(90)%')"
}
lock_ids() {
	sql "SELECT id FROM information_schema.processlist
	    WHERE info LIKE CONCAT('%SLE', 'EP(90)%')"
}
blocked_sessions() {
	sql "SELECT COUNT(*) FROM information_schema.processlist
	    WHERE state LIKE 'Waiting for table%'"
}

# record_depth: the gauge taskspool_outbox_depth{kind="record"} of n1.
record_depth() {
	sed -n "s/^taskspool_outbox_depth{node=\"n1\",kind=\"record\"} //p" \
	    "$SPOOL/metrics/n1.prom" 2>/dev/null
}

mdb_alive() { mariadb-admin --no-defaults -h127.0.0.1 -P"${MDB_ADDR##*:}" \
    -u"$MDB_USER" -p"$MDB_PASS" ping >/dev/null 2>&1; }

test_expect_success 'schema migrated, daemon with 4 slots started' '
	ts db migrate && start_daemon n1 -j 4
'

# B21: task v runs 4 s; its row is RUNNING when MariaDB stops, it ends
# during the outage, and after the return its row must be SUCCESS with the
# result file's finishedAt (rows_match below), not stay RUNNING.
test_expect_success "B21: task v RUNNING in MariaDB; MariaDB stopped while v and $N1 tasks run; $N2 more run during the outage" '
	ts submit --code probe --id v --params "{\"sleep_ms\": 4000}" >/dev/null &&
	wait_for "test \"\$(sql \"SELECT status FROM task_execution WHERE request_id = '"'"'v'"'"'\")\" = RUNNING" 30 &&
	submit_slow 1 "$N1" &&
	sh "$MDB_SCRIPT" stop "$MDB_DIR" &&
	! mdb_alive &&
	echo "terminal when MariaDB was down: $(terminal_count) of $N1" &&
	submit_slow $((N1 + 1)) "$N" &&
	wait_for "test \$(terminal_count) -eq $((N + 1))" 120 &&
	! mdb_alive &&
	kill -0 "$(daemon_pid n1)" &&
	echo "outbox during the outage: $(outbox_count) record file(s)" &&
	test "$(outbox_count)" -gt "$N2"
'

test_expect_success 'the outbox depth gauge shows the waiting records during the outage' '
	# Nothing is appended any more: the gauge (refreshed every 2 s,
	# written every metrics_interval_ms) settles at the file count.
	want=$(outbox_count) &&
	wait_for "test \"\$(record_depth)\" = $want" 30 ||
	{ echo "gauge $(record_depth), want $want"; return 1; }
'

test_expect_success 'every task ran once during the outage (probe log)' '
	test "$(grep -c "^START out" "$SPOOL/probe.log")" = \
	    "$(for f in "$SPOOL"/results/out*.json; do jq ".attempts | length" "$f"; done | awk "{ s += \$1 } END { print s }")"
'

test_expect_success 'MariaDB back but slow; the daemon is killed while it replays' '
	kill -STOP "$(daemon_pid n1)" &&
	port=${MDB_ADDR##*:} &&
	out=$(sh "$MDB_SCRIPT" start "$MDB_DIR") &&
	test "$out" = "TS_TEST_MARIADB=127.0.0.1:$port" &&
	( sql "LOCK TABLES task_execution WRITE, task_attempt WRITE;
	    SELECT SLEEP(90); UNLOCK TABLES" >/dev/null 2>&1 & ) &&
	wait_for "test \$(lock_sessions) = 1" 20 &&
	kill -CONT "$(daemon_pid n1)" &&
	wait_for "test \$(count_files \"$SPOOL/outbox/records-claimed/n1\") -gt 0" 60 &&
	wait_for "test \$(blocked_sessions) -gt 0" 60 &&
	claimed=$(count_files "$SPOOL/outbox/records-claimed/n1") &&
	echo "claimed by the writer when killed: $claimed" &&
	kill9_daemon n1 &&
	test "$(count_files "$SPOOL/outbox/records-claimed/n1")" = "$claimed"
'

test_expect_success 'lock holder killed; restarted daemon replays the outbox to the end' '
	for id in $(lock_ids); do sql "KILL $id"; done &&
	wait_for "test \$(lock_sessions) = 0" 30 &&
	start_daemon n1 &&
	wait_for "test \$(outbox_count) -eq 0" 90
'

test_expect_success 'rows equal the result files exactly: no duplicate, none missing' '
	test "$(sql "SELECT COUNT(*) FROM task_execution")" = "$((N + 1))" &&
	rows_match &&
	# B21: v ran once; its row left RUNNING for SUCCESS, finished when
	# the result file says (rows_match compared every column)
	test "$(grep -c "^START v " "$SPOOL/probe.log")" = 1 &&
	test "$(sql "SELECT status FROM task_execution WHERE request_id = '"'"'v'"'"'")" = SUCCESS &&
	test "$(sql "SELECT COUNT(*) FROM task_execution WHERE status = \"RUNNING\" OR status = \"PENDING\"")" = 0 &&
	test "$(ls "$SPOOL/corrupt" | wc -l)" = 0
'

test_done
