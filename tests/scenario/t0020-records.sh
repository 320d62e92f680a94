#!/bin/sh
# MariaDB records (issue 6): migrations, one task_execution row per task
# and one task_attempt row per attempt equal to the result files, with two
# daemons draining one outbox; a record MariaDB rejects goes to corrupt/
# without blocking the rest; keyset pagination of the history; purge.
# Needs mariadbd (TS_TEST_MARIADB, or a private server).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/records-lib.sh"
mdb_use_server
mdb_database
N=${RECORDS_TASKS:-240}

test_expect_success 'db status on an empty database: version 0, 0001 to 0003 pending' '
	ts db status >out && cat out &&
	grep "^schema version 0 (latest 3)" out &&
	grep "^pending: 0001_initial" out &&
	grep "0002_app_created_index" out &&
	grep "0003_traceparent" out
'

test_expect_success 'db migrate from empty creates the seven tables' '
	ts db migrate >out &&
	grep "^applied 3 migration(s); schema version 3" out &&
	test "$(sql "SELECT version, name FROM schema_migrations ORDER BY version")" = "$(printf "1\t0001_initial\n2\t0002_app_created_index\n3\t0003_traceparent")" &&
	sql "SHOW TABLES" | sort >tables &&
	printf "%s\n" api_app callback_record node_registry schema_migrations \
	    task_attempt task_definition task_execution >want &&
	diff want tables &&
	test "$(sql "SELECT COUNT(*) FROM information_schema.tables
	    WHERE table_schema = DATABASE() AND (engine <> \"InnoDB\"
	    OR table_collation NOT LIKE \"utf8mb4%\")")" = 0
'

test_expect_success 'the indexes the queries use exist' '
	sql "SHOW INDEX FROM task_execution" | awk "{ print \$3, \$2, \$4, \$5 }" >idx &&
	grep "^ix_status_trigger 1 1 status$" idx &&
	grep "^ix_status_trigger 1 2 trigger_time$" idx &&
	grep "^ix_code_trigger 1 1 task_code$" idx &&
	grep "^ix_code_trigger 1 2 trigger_time$" idx &&
	grep "^uk_app_request 0 1 app_id$" idx &&
	grep "^uk_app_request 0 2 request_id$" idx &&
	grep "^ix_created_request 1 1 created_at$" idx &&
	grep "^ix_app_created_request 1 1 app_id$" idx &&
	grep "^ix_app_created_request 1 2 created_at$" idx &&
	grep "^ix_app_created_request 1 3 request_id$" idx
'

test_expect_success 'the URL form of mariadb, and a bad port named' '
	grep -v "^mariadb" "$CONF" >url.conf &&
	echo "mariadb = mariadb://$MDB_USER:$MDB_PASS@$MDB_ADDR/$MDB_DB" >>url.conf &&
	"$TS" -c url.conf db status >out &&
	grep "^schema version 3 (latest 3)" out &&
	grep -v "^mariadb =" "$CONF" >bad.conf &&
	echo "mariadb = 127.0.0.1:99999" >>bad.conf &&
	{ "$TS" -c bad.conf db status 2>err; test $? = 69; } &&
	grep "port must be 1..65535" err
'

test_expect_success 're-running db migrate is a no-op' '
	sql "SHOW CREATE TABLE task_execution; SHOW CREATE TABLE task_attempt" >before &&
	ts db migrate >out &&
	grep "^applied 0 migration(s); schema version 3" out &&
	sql "SHOW CREATE TABLE task_execution; SHOW CREATE TABLE task_attempt" >after &&
	diff before after &&
	test "$(sql "SELECT COUNT(*) FROM schema_migrations")" = 3 &&
	ts --json db status >out && test "$(jq -c . out)" = "{\"version\":3,\"latest\":3,\"pending\":[]}"
'

test_expect_success 'a database at version 1 is upgraded to 3 by db migrate' '
	sql "SHOW CREATE TABLE task_execution; SHOW CREATE TABLE task_attempt" >v3 &&
	sql "DROP INDEX ix_app_created_request ON task_execution;
	    ALTER TABLE task_execution DROP COLUMN traceparent;
	    ALTER TABLE task_attempt DROP COLUMN traceparent;
	    DELETE FROM schema_migrations WHERE version >= 2" &&
	ts --json db status >out && test "$(jq -c . out)" = "{\"version\":1,\"latest\":3,\"pending\":[\"0002_app_created_index\",\"0003_traceparent\"]}" &&
	ts db migrate >out &&
	grep "^applied 2 migration(s); schema version 3" out &&
	sql "SHOW CREATE TABLE task_execution; SHOW CREATE TABLE task_attempt" >after &&
	diff v3 after
'

test_expect_success '0003 interrupted after its ALTER (not recorded) runs again cleanly' '
	sql "DELETE FROM schema_migrations WHERE version = 3" &&
	ts db migrate >out &&
	grep "^applied 1 migration(s); schema version 3" out &&
	sql "SHOW CREATE TABLE task_execution; SHOW CREATE TABLE task_attempt" >after &&
	diff v3 after
'

test_expect_success "$N tasks with retries and failures on two daemons" '
	start_daemon n1 && start_daemon n2 &&
	submit_mix 1 "$N" &&
	wait_for "test \$(terminal_count) -eq $N" 120 &&
	wait_for "test \$(outbox_count) -eq 0" 60
'

test_expect_success 'one task_execution row per task, values equal to the result files' '
	test "$(sql "SELECT COUNT(*) FROM task_execution")" = "$N" &&
	rows_match &&
	test "$(sql "SELECT COUNT(*) FROM task_execution WHERE status = \"SUCCESS\"")" = $((N / 2)) &&
	test "$(sql "SELECT COUNT(*) FROM task_execution WHERE status = \"FAILED\"")" = $((N / 2))
'

test_expect_success 'one task_attempt row per attempt (hand count of the mix)' '
	# i%4: 0 → 2 attempts, 1 → 1, 2 → 2 (1 retry), 3 → 1 (permanent)
	test "$(sql "SELECT COUNT(*) FROM task_attempt")" = $((N / 4 * 6)) &&
	test "$(sql "SELECT COUNT(*) FROM task_attempt WHERE state = \"TEMPFAIL\"")" = $((N / 4 * 3))
'

test_expect_success 'node_registry lists both writers' '
	test "$(sql "SELECT node_id FROM node_registry ORDER BY node_id" | tr "\n" " ")" = "n1 n2 "
'

test_expect_success 'history filters by code and state' '
	{ ts history --state BOGUS >out 2>err; test $? = 64; } &&
	grep -q "one of PENDING RUNNING SUCCESS FAILED CANCELLED" err &&
	ts history --state FAILED >out &&
	test "$(wc -l <out)" = $((N / 2)) &&
	! grep -v " FAILED " out &&
	ts history --code probe --state SUCCESS --json >out.json &&
	test "$(jq length out.json)" = $((N / 2)) &&
	test "$(jq "[.[] | select(.status != \"SUCCESS\")] | length" out.json)" = 0 &&
	ts history --code nosuch >out && test ! -s out &&
	ts history --since 2000-01-01T00:00:00Z >out && test "$(wc -l <out)" = "$N" &&
	ts history --since 1h >out && test "$(wc -l <out)" = "$N" &&
	ts history --since 2999-01-01T00:00:00Z >out && test ! -s out
'

test_expect_success 'history shows the task traceparent: the one submitted, else the fresh root submit gave' '
	ts --json history >h.json &&
	test "$(jq -r ".[] | select(.requestId == \"mix3\") | .traceparent" h.json)" = 00-00000000000000000000000000000003-00f067aa0ba902b7-01 &&
	test "$(jq -r ".[] | select(.requestId == \"mix4\") | .traceparent" h.json)" = "$(jq -r .traceparent "$SPOOL/results/mix4.json")" &&
	jq -r ".[] | select(.requestId == \"mix4\") | .traceparent" h.json | grep -Eqx "00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]" &&
	test "$(jq "[.[] | select(.traceparent | test(\"^00-0{29}[0-9a-f]{3}-00f067aa0ba902b7-01\$\"))] | length" h.json)" = $((N / 3)) &&
	ts history >h.txt &&
	test "$(awk "\$1 == \"mix3\" { print \$NF }" h.txt)" = 00-00000000000000000000000000000003-00f067aa0ba902b7-01 &&
	sql "UPDATE task_execution SET traceparent = \"00-NOT-HEX\" WHERE request_id = \"mix6\"" &&
	ts history >h.txt &&
	test "$(awk "\$1 == \"mix6\" { print \$NF }" h.txt)" = - &&
	sql "UPDATE task_execution SET traceparent = \"$(jq -r .traceparent "$SPOOL/results/mix6.json")\" WHERE request_id = \"mix6\""
'

test_expect_success 'stats: count, success rate, nearest-rank p50/p95, retries' '
	ts --json stats >st.json &&
	test "$(jq -r ".[0].taskCode" st.json)" = probe &&
	test "$(jq ".[0].count" st.json)" = "$N" &&
	test "$(jq ".[0].success" st.json)" = $((N / 2)) &&
	test "$(jq ".[0].successRate" st.json)" = 0.5 &&
	# retries = sum(attempt - 1): N/4 tasks (i%4 = 0) and N/4 (i%4 = 2) retried once
	test "$(jq ".[0].retries" st.json)" = $((N / 2)) &&
	# p50/p95 from the durations in the result files, nearest rank
	jq -s "map(.durationMs) | sort" "$SPOOL"/results/*.json >d.json &&
	test "$(jq ".[0].p50Ms" st.json)" = "$(jq ".[(($N * 50 + 99) / 100 | floor) - 1]" d.json)" &&
	test "$(jq ".[0].p95Ms" st.json)" = "$(jq ".[(($N * 95 + 99) / 100 | floor) - 1]" d.json)" &&
	test "$(jq ".[0].callbackFailures" st.json)" = 0
'

test_expect_success 'stats counts callbacks that ended CALLBACK_FAILED' '
	sql "INSERT INTO callback_record (delivery_id, request_id, url, attempts,
	    state, updated_at) VALUES
	    (\"d1\", \"mix1\", \"http://a.example/\", 6, \"CALLBACK_FAILED\", 0),
	    (\"d2\", \"mix2\", \"http://a.example/\", 1, \"CALLBACK_OK\", 0),
	    (\"d3\", \"mix3\", \"http://a.example/\", 6, \"CALLBACK_FAILED\", 0)" &&
	ts --json stats >st.json &&
	test "$(jq ".[0].callbackFailures" st.json)" = 2 &&
	ts stats >st.txt &&
	test "$(awk "\$1 == \"probe\" { print \$2, \$NF }" st.txt)" = "$N 2" &&
	sql "DELETE FROM callback_record"
'

# A record whose taskCode (100 bytes) does not fit VARCHAR(64), named to
# sort before the records of new tasks.
test_expect_success 'a record MariaDB rejects goes to corrupt/ and does not block' '
	long=$(printf "x%.0s" $(seq 1 100)) &&
	printf "{\"v\":1,\"state\":\"RUNNING\",\"requestId\":\"toolong\",\"taskCode\":\"%s\",\"attempt\":{\"attempt\":1,\"node\":\"n1\",\"startedAt\":\"2026-01-01T00:00:00.000Z\"}}" "$long" \
	    >"$SPOOL/tmp/bad" &&
	mv "$SPOOL/tmp/bad" "$SPOOL/outbox/records/000000000000001.000000000.x.json" &&
	printf "{not json" >"$SPOOL/tmp/bad2" &&
	mv "$SPOOL/tmp/bad2" "$SPOOL/outbox/records/000000000000001.000000001.x.json" &&
	ts submit --code probe --id after-bad >/dev/null &&
	wait_terminal after-bad 20 &&
	wait_for "test \$(outbox_count) -eq 0" 30 &&
	test -f "$SPOOL/corrupt/000000000000001.000000000.x.json" &&
	grep "MariaDB rejected the record: Data too long for column .task_code." \
	    "$SPOOL/corrupt/000000000000001.000000000.x.json.reason" &&
	test -f "$SPOOL/corrupt/000000000000001.000000001.x.json" &&
	grep "^json: " "$SPOOL/corrupt/000000000000001.000000001.x.json.reason" &&
	test "$(sql "SELECT status FROM task_execution WHERE request_id = \"after-bad\"")" = SUCCESS &&
	test "$(sql "SELECT COUNT(*) FROM task_execution WHERE request_id = \"toolong\"")" = 0
'

# A writer that died with claimed files: its directory's flock is free, so
# a running writer moves them back and applies them (within 10 s).
test_expect_success 'records claimed by a dead writer are applied by another' '
	mkdir -p "$SPOOL/outbox/records-claimed/ghost" &&
	printf "{\"v\":1,\"state\":\"RUNNING\",\"requestId\":\"ghost1\",\"taskCode\":\"probe\",\"createdAt\":\"2026-01-02T03:04:05.678Z\",\"attempt\":{\"attempt\":1,\"node\":\"ghost\",\"startedAt\":\"2026-01-02T03:04:06.001Z\"}}" \
	    >"$SPOOL/outbox/records-claimed/ghost/000000000000002.000000000.ghost.json" &&
	wait_for "test \$(outbox_count) -eq 0" 40 &&
	test "$(sql "SELECT status, attempt, node, created_at, started_at FROM task_execution WHERE request_id = \"ghost1\"")" = \
	    "$(printf "RUNNING\t1\tghost\t1767323045678\t1767323046001")" &&
	sql "DELETE FROM task_execution WHERE request_id = \"ghost1\";
	    DELETE FROM task_attempt WHERE request_id = \"ghost1\""
'

test_expect_success 'keyset pages (7 rows) list every row exactly once while rows are added' '
	sql "SELECT request_id FROM task_execution" | sort >before &&
	MIX_PREFIX=page submit_mix 1 40 &&
	ts history --page-size 7 --json >pages.json &&
	jq -r ".[].requestId" pages.json >ids &&
	test "$(sort ids | uniq -d | wc -l)" = 0 &&
	sort ids | comm -23 before - >missing && test ! -s missing &&
	jq -r ".[] | \"\(.createdAt) \(.requestId)\"" pages.json >keys &&
	LC_ALL=C sort -c keys &&
	wait_for "test \$(terminal_count) -eq $((N + 41))" 60 &&
	wait_for "test \$(outbox_count) -eq 0" 30 &&
	ts history --page-size 3 --json | jq -r ".[].requestId" | sort >all3 &&
	sql "SELECT request_id FROM task_execution" | sort >alldb &&
	diff alldb all3 &&
	rows_match
'

test_expect_success 'purge --older-than 7d removes old terminal tasks from the spool only' '
	stop_daemon n1 && stop_daemon n2 &&
	for i in 1 2 3; do
		touch -d "10 days ago" "$SPOOL/results/mix$i.json"
	done &&
	test -d "$SPOOL/logs/mix1" &&
	ts purge --older-than 7d >out &&
	grep "^purged 3 task(s) from the spool" out &&
	for i in 1 2 3; do
		test ! -e "$SPOOL/results/mix$i.json" &&
		test ! -e "$SPOOL/logs/mix$i" &&
		test -z "$(state_of mix$i)" || return 1
	done &&
	test -f "$SPOOL/results/mix4.json" && test "$(state_of mix4)" = done &&
	test "$(sql "SELECT COUNT(*) FROM task_execution WHERE request_id IN (\"mix1\", \"mix2\", \"mix3\")")" = 3
'

test_expect_success 'purge --db removes rows finished before the cut-off' '
	old=$(( $(date +%s) * 1000 - 8 * 86400000 )) &&
	sql "UPDATE task_execution SET finished_at = $old WHERE request_id IN (\"mix1\", \"mix2\")" &&
	ts purge --older-than 7d --db >out &&
	grep "0 task(s) from the spool, 2 row(s) from MariaDB" out &&
	test "$(sql "SELECT COUNT(*) FROM task_execution WHERE request_id IN (\"mix1\", \"mix2\", \"mix3\")")" = 1 &&
	test "$(sql "SELECT COUNT(*) FROM task_attempt WHERE request_id IN (\"mix1\", \"mix2\")")" = 0 &&
	test "$(sql "SELECT COUNT(*) FROM task_attempt WHERE request_id = \"mix3\"")" = 1
'

sqlq "DROP DATABASE IF EXISTS $MDB_DB" >/dev/null 2>&1
test_done
