#!/bin/sh
# taskspool submit --ndjson (issue 16: a bulk form with one group commit
# on the client side; README.md "The command-line client"), embedded:
#  - 2,500 lines (three groups of at most 1,000), a blank line and a CRLF
#    line among them: 2,500 requestIds printed in input order and sorted
#    (time-ordered, counting up within a ms), 2,500 files in incoming/,
#    nothing left in tmp/, all run once by a daemon;
#  - a line with a delay goes to delayed/, one with dependsOn to blocked/;
#  - an invalid line (no hook, bad JSON, a requestId given twice, a
#    requestId already used) submits nothing: exit 65 or 73 naming the
#    line and "nothing was submitted";
#  - --ndjson with --code or a second operand is a usage error (64).
. "$(dirname "$0")/test-lib.sh"
echo "fsync = 0" >>"$CONF"
printf '#!/bin/sh\nexit 0\n' >"$HOOKS/noop" && chmod +x "$HOOKS/noop"

test_expect_success '2,500 lines in three groups: ids in input order, all in incoming/, all run' '
	i=0 && while [ $i -lt 2499 ]; do
		echo "{\"taskCode\":\"noop\",\"taskName\":\"b$i\"}"
		[ $i = 1200 ] && echo
		i=$((i + 1))
	done >"$TRASH/bulk.ndjson" &&
	printf "{\"taskCode\":\"noop\",\"requestId\":\"crlf-1\"}\r\n" >>"$TRASH/bulk.ndjson" &&
	ts submit --ndjson "$TRASH/bulk.ndjson" >"$TRASH/ids" &&
	test "$(wc -l <"$TRASH/ids")" = 2500 &&
	test "$(tail -n 1 "$TRASH/ids")" = crlf-1 &&
	head -n 2499 "$TRASH/ids" | sort -c &&
	test "$(ls "$SPOOL/incoming" | wc -l)" = 2500 &&
	test "$(ls -A "$SPOOL/tmp" | wc -l)" = 0 &&
	id=$(sed -n 1p "$TRASH/ids") &&
	grep -q "\"taskName\": *\"b0\"" "$SPOOL/incoming/$id.json" &&
	id=$(sed -n 2499p "$TRASH/ids") &&
	grep -q "\"taskName\": *\"b2498\"" "$SPOOL/incoming/$id.json" &&
	start_daemon n1 -j 4 &&
	wait_for "test \$(ls \"$SPOOL/done\" | wc -l) -ge 2500" 120 &&
	test "$(ls "$SPOOL/failed" | wc -l)" = 0 &&
	stop_daemon n1
'

test_expect_success 'a delayed line goes to delayed/, one with dependsOn to blocked/' '
	printf "{\"taskCode\":\"noop\",\"requestId\":\"bd-1\",\"triggerType\":\"delay\",\"delayMs\":600000}\n{\"taskCode\":\"noop\",\"requestId\":\"bd-2\",\"dependsOn\":[{\"requestId\":\"bd-1\"}]}\n" |
	    ts --json submit --ndjson - >"$TRASH/out" &&
	grep -q "{\"requestId\":\"bd-1\",\"status\":\"PENDING\"}" "$TRASH/out" &&
	grep -q "{\"requestId\":\"bd-2\",\"status\":\"BLOCKED\"}" "$TRASH/out" &&
	test -e "$SPOOL/delayed/bd-1.json" && test -e "$SPOOL/blocked/bd-2.json"
'

# bad_input WANT_RC WANT_TEXT: stdin's lines are refused, nothing lands.
bad_input() {
	before=$(find "$SPOOL/incoming" "$SPOOL/delayed" "$SPOOL/blocked" -type f | wc -l)
	rc=0 && ts submit --ndjson - >"$TRASH/out" 2>"$TRASH/err" || rc=$?
	cat "$TRASH/err"
	test $rc = "$1" && grep -q "$2" "$TRASH/err" &&
	grep -q "nothing was submitted" "$TRASH/err" &&
	test ! -s "$TRASH/out" &&
	test "$(find "$SPOOL/incoming" "$SPOOL/delayed" "$SPOOL/blocked" -type f | wc -l)" = "$before"
}

test_expect_success 'an invalid line submits nothing, naming the line' '
	printf "{\"taskCode\":\"noop\"}\n{\"taskCode\":\"nohook\"}\n" |
	    bad_input 65 "^taskspool submit: line 2: taskCode: no executable hook" &&
	printf "{\"taskCode\":\"noop\"}\n\n{\"taskCode\":\"noop\",}\n" |
	    bad_input 65 "^taskspool submit: line 3: invalid task:" &&
	printf "{\"taskCode\":\"noop\",\"requestId\":\"dup\"}\n{\"taskCode\":\"noop\",\"requestId\":\"dup\"}\n" |
	    bad_input 73 "^taskspool submit: line 2: requestId dup is given by an earlier line" &&
	printf "{\"taskCode\":\"noop\",\"requestId\":\"bd-1\"}\n" |
	    bad_input 73 "^taskspool submit: line 1: requestId bd-1 already used"
'

test_expect_success '--ndjson with --code or two operands: usage, 64' '
	rc=0 && ts submit --ndjson --code noop - </dev/null 2>"$TRASH/err" || rc=$? &&
	test $rc = 64 && grep -q "usage: taskspool submit --ndjson" "$TRASH/err" &&
	rc=0 && ts submit --ndjson a b 2>"$TRASH/err" || rc=$? &&
	test $rc = 64
'

test_done
