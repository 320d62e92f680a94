#!/bin/sh
# The task_definition mirror (issue 6): when the leader loads a jobs/
# definition (added, changed) a DEFINITION record goes through the
# records outbox and the writer upserts the row; a removed job's row is
# deleted.  Rows equal the jobs/ files.  Needs mariadbd (TS_TEST_MARIADB,
# or a private server).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/records-lib.sh"	# (it moves into $TRASH)
mdb_use_server
mdb_database
echo "fsync = 0" >>"$CONF"

# defs: the rows as "job task schedule enabled" + the definition (sorted
# keys); files: the same from jobs/.
defs() {
	sql "SELECT job_code, task_code, schedule, enabled, definition FROM task_definition ORDER BY job_code" |
	while IFS="	" read -r j t s e d; do
		echo "$j $t $s $e $(printf "%s" "$d" | jq -S -c .)"
	done
}
files() {
	for f in "$SPOOL"/jobs/*.json; do
		[ -f "$f" ] || continue
		echo "$(jq -r '"\(.jobCode) \(.taskCode) \(.cron // (if .fixedRateMs then "fixedRateMs=\(.fixedRateMs)" else "fixedDelayMs=\(.fixedDelayMs)" end)) \(if .enabled == false then 0 else 1 end)"' "$f") $(jq -S -c . "$f")"
	done
}
rows() { sql "SELECT COUNT(*) FROM task_definition"; }
enabled_of() { sql "SELECT enabled FROM task_definition WHERE job_code = '$1'"; }

test_expect_success 'db migrate; the daemon leads; two jobs added' '
	ts db migrate >/dev/null &&
	start_daemon n1 &&
	printf "{\"jobCode\":\"nightly\",\"taskCode\":\"probe\",\"cron\":\"0 3 * * *\",\"timezone\":\"UTC\"}" >job1.json &&
	printf "{\"jobCode\":\"every\",\"taskCode\":\"probe\",\"fixedRateMs\":3600000,\"enabled\":false}" >job2.json &&
	ts jobs add job1.json >/dev/null && ts jobs add job2.json >/dev/null &&
	wait_for "test \$(rows) -eq 2 && test \$(outbox_count) -eq 0" 30
'

test_expect_success 'task_definition rows equal the jobs/ files' '
	defs >rows.txt && files >files.txt && cat rows.txt &&
	grep -q "^every probe fixedRateMs=3600000 0 " rows.txt &&
	grep -q "^nightly probe 0 3 \* \* \* 1 " rows.txt &&
	diff files.txt rows.txt
'

test_expect_success 'a job disabled: its row follows; a job removed: its row goes' '
	ts jobs disable nightly >/dev/null &&
	wait_for "test \"\$(enabled_of nightly)\" = 0" 30 &&
	defs >rows.txt && files >files.txt && diff files.txt rows.txt &&
	ts jobs remove every >/dev/null &&
	wait_for "test \$(rows) -eq 1" 30 &&
	test "$(sql "SELECT job_code FROM task_definition")" = nightly
'

test_done
