#!/bin/sh
# Basic lifecycle on one daemon: CLI submit, files dropped by hand (plain
# cp straight into incoming/, and cp to tmp/ + mv), results, exit codes.
. "$(dirname "$0")/test-lib.sh"

cat >"$HOOKS/echo" <<'H'
#!/bin/sh
cat >"$TASKSPOOL_WORK_DIR/params"
printf '{"got":%s,"attempt":%s}\n' "$(cat "$TASKSPOOL_WORK_DIR/params")" \
    "$TASKSPOOL_ATTEMPT" >"$TASKSPOOL_RESULT_FILE"
echo "out:$TASKSPOOL_REQUEST_ID"
echo "err:$TASKSPOOL_TASK_CODE" >&2
H
chmod +x "$HOOKS/echo"

test_expect_success 'daemon starts' 'start_daemon n1 -j 2'

test_expect_success 'submit --wait succeeds, result holds the hook JSON' '
	id=$(ts submit --code echo --params "{\"a\": [1, 2]}" --wait) &&
	test -f "$SPOOL/done/$id.json" &&
	test -f "$SPOOL/results/$id.json" &&
	test "$(jq -r .status "$SPOOL/results/$id.json")" = SUCCESS &&
	test "$(jq -c .result.got "$SPOOL/results/$id.json")" = "{\"a\":[1,2]}" &&
	test "$(jq -r .stdoutTail "$SPOOL/results/$id.json")" = "out:$id" &&
	test "$(jq -r .stderrTail "$SPOOL/results/$id.json")" = "err:echo" &&
	test "$(jq -r ".attempts[0].exitCode" "$SPOOL/results/$id.json")" = 0
'

test_expect_success 'executeParams reach the hook byte for byte' '
	printf "{\"taskCode\":\"echo\",\"requestId\":\"bytes1\",\"executeParams\":{ \"x\" :  1.50 ,\"y\":\"\\\\u00e9\"}}" >"$TRASH/b.json" &&
	ts submit "$TRASH/b.json" &&
	wait_terminal bytes1 &&
	test "$(cat "$SPOOL/logs/bytes1/1.out")" = "out:bytes1" &&
	test "$(jq -r .status "$SPOOL/results/bytes1.json")" = SUCCESS
'

test_expect_success 'a file copied straight into incoming/ with cp runs' '
	printf "{\"requestId\":\"cp-direct\",\"taskCode\":\"echo\"}" >"$TRASH/cp-direct.json" &&
	cp "$TRASH/cp-direct.json" "$SPOOL/incoming/" &&
	wait_terminal cp-direct &&
	test "$(jq -r .status "$SPOOL/results/cp-direct.json")" = SUCCESS
'

test_expect_success 'a file copied to tmp/ and moved into incoming/ runs' '
	printf "{\"requestId\":\"cp-mv\",\"taskCode\":\"echo\"}" >"$TRASH/x" &&
	cp "$TRASH/x" "$SPOOL/tmp/cp-mv.json" &&
	mv "$SPOOL/tmp/cp-mv.json" "$SPOOL/incoming/cp-mv.json" &&
	wait_terminal cp-mv &&
	test "$(jq -r .status "$SPOOL/results/cp-mv.json")" = SUCCESS
'

test_expect_success 'a file without requestId gets a generated time-ordered id' '
	printf "{\"taskCode\":\"echo\"}" >"$TRASH/anon.json" &&
	cp "$TRASH/anon.json" "$SPOOL/incoming/my-job.json" &&
	wait_for "ls $SPOOL/results | grep -q ^req_" &&
	f=$(ls "$SPOOL/results" | grep ^req_) &&
	echo "$f" | grep -Eq "^req_[0-9]{8}T[0-9]{9}Z_[0-9a-f]{12}\.json$" &&
	test ! -e "$SPOOL/incoming/my-job.json"
'

test_expect_success 'a slow cp into incoming/ is not claimed half-written' '
	( printf "{\"requestId\":\"slowcp\"," ; sleep 0.6; printf "\"taskCode\":\"echo\"}" ) >"$SPOOL/incoming/slowcp.json" &&
	wait_terminal slowcp &&
	test "$(jq -r .status "$SPOOL/results/slowcp.json")" = SUCCESS &&
	test "$(ls "$SPOOL/corrupt" | wc -l)" = 0
'

test_expect_success 'exit codes: 0 for SUCCESS, 1 for FAILED, 66 unknown id, 73 duplicate' '
	ts submit --code probe --id fails1 --params "{\"exit\": 3}" --retries 0 --wait; test $? = 1 &&
	test "$(jq -r .failureReason.code "$SPOOL/results/fails1.json")" = WORKER_EXIT &&
	{ ts status no-such-task; test $? = 66; } &&
	{ ts submit --code probe --id fails1; test $? = 73; }
'

test_expect_success 'a task file under 1 MiB that the members submit adds would push over it: exit 65, nothing written' '
	# 1,048,575 bytes as given; requestId and createdAt make it larger
	pad=$(head -c 1048530 /dev/zero | tr "\0" a) &&
	printf "{\"taskCode\":\"echo\",\"executeParams\":\"%s\"}" "$pad" >"$TRASH/near.json" &&
	test "$(wc -c <"$TRASH/near.json")" -le 1048576 &&
	n=$(ls "$SPOOL/incoming" | wc -l) &&
	{ ts submit "$TRASH/near.json" 2>"$TRASH/near.err"; test $? = 65; } &&
	grep -q "at most 1048576" "$TRASH/near.err" &&
	test "$(ls "$SPOOL/incoming" | wc -l)" = "$n" &&
	test -z "$(ls "$SPOOL/corrupt")"
'

test_expect_success 'status, result, logs, list answer for a finished task' '
	id=$(ts submit --code echo --wait) &&
	ts status "$id" | grep -q "SUCCESS" &&
	test "$(ts --json status "$id" | jq -r .status)" = SUCCESS &&
	ts result "$id" | jq -e ".status == \"SUCCESS\"" &&
	test "$(ts logs "$id" 2>/dev/null)" = "out:$id" &&
	ts list --state SUCCESS | grep -q "$id" &&
	test "$(ts --json list --code echo | jq "map(select(.requestId == \"$id\")) | length")" = 1 &&
	# A finished task shows the node of its last attempt.
	test "$(ts list --state SUCCESS | awk -v id="$id" "\$2 == id { print \$4 }")" = n1 &&
	test "$(ts --json list --code echo | jq -r ".[] | select(.requestId == \"$id\") | .node")" = n1
'

test_expect_success 'purge claims a task before removing it; an interrupted purge is finished, unless the id is in use again' '
	ts submit --code echo --id pg1 --wait >/dev/null &&
	ts submit --code echo --id pg3 --wait >/dev/null &&
	touch -d "8 days ago" "$SPOOL/done/pg1.json" "$SPOOL/results/pg1.json" &&
	# an interrupted purge of pg2: its claimed file, result and logs
	cp "$SPOOL/done/pg1.json" "$SPOOL/done/.purging.pg2.json" &&
	cp "$SPOOL/results/pg1.json" "$SPOOL/results/pg2.json" &&
	mkdir -p "$SPOOL/logs/pg2" && : >"$SPOOL/logs/pg2/1.out" &&
	# one of pg3, whose id has a new task since: left alone
	cp "$SPOOL/done/pg1.json" "$SPOOL/done/.purging.pg3.json" &&
	ts --json purge --older-than 7d --dry-run >"$TRASH/dry.json" &&
	jq -e ".tasks == 1 and .rows == null and .wouldPurge == [\"done/pg1\"]" "$TRASH/dry.json" &&
	test -e "$SPOOL/done/pg1.json" &&
	ts purge --older-than 7d >"$TRASH/purge.out" &&
	grep -q "^purged 1 task(s)" "$TRASH/purge.out" &&
	test ! -e "$SPOOL/done/pg1.json" && test ! -e "$SPOOL/results/pg1.json" &&
	test ! -e "$SPOOL/done/.purging.pg1.json" &&
	test ! -e "$SPOOL/done/.purging.pg2.json" && test ! -e "$SPOOL/results/pg2.json" &&
	test ! -e "$SPOOL/logs/pg2" &&
	test -e "$SPOOL/done/.purging.pg3.json" && test -e "$SPOOL/results/pg3.json" &&
	test "$(ts --json status pg3 | jq -r .status)" = SUCCESS &&
	rm "$SPOOL/done/.purging.pg3.json"
'

test_expect_success 'sysexits 64-78 other than 75 fail at once (no retry)' '
	ts submit --code probe --id perm1 --params "{\"exit\": 65}" --retries 3 --wait; test $? = 1 &&
	test "$(jq ".attempts | length" "$SPOOL/results/perm1.json")" = 1
'

test_expect_success 'cancel a pending delayed task' '
	ts submit --code echo --id later1 --delay 60000 &&
	test "$(state_of later1)" = delayed &&
	ts cancel later1 &&
	test "$(state_of later1)" = cancelled &&
	test "$(jq -r .status "$SPOOL/results/later1.json")" = CANCELLED
'

test_expect_success 'cancel a running task kills it' '
	ts submit --code probe --id run1 --params "{\"sleep_ms\": 30000}" &&
	wait_for "test \"\$(state_of run1)\" = active" &&
	ts cancel run1 &&
	wait_terminal run1 5 &&
	test "$(state_of run1)" = cancelled &&
	test "$(jq -r .attempts[0].outcome "$SPOOL/results/run1.json")" = CANCELLED
'

test_expect_success 'retry runs a FAILED task again as a new attempt' '
	ts retry fails1 &&
	wait_terminal fails1 &&
	test "$(jq ".attempts | length" "$SPOOL/results/fails1.json")" = 2
'

test_expect_success 'SIGTERM drains: the running hook finishes, then the daemon exits 0' '
	ts submit --code probe --id drain1 --params "{\"sleep_ms\": 700}" &&
	wait_for "test \"\$(state_of drain1)\" = active" &&
	kill -TERM $(daemon_pid n1) &&
	wait $(daemon_pid n1) && 
	test -z "$(ls "$SPOOL/active/n1")" &&
	test "$(state_of drain1)" = done
'

test_done
