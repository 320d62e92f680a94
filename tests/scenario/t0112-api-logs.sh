#!/bin/sh
# GET /api/tasks/{id}/logs and POST .../retry (issue 17 item 1): pages
# of a hook's output
# through lighttpd + taskspool.cgi, signed by the Python client
# (t0112-api-logs.py holds the expected bytes and names their rules):
#  1. hostile output (<script>, an ANSI escape, UTF-8) arrives as an
#     inert JSON string, byte for byte; stderr's NUL and 0xFF as base64;
#     a page never ends inside a UTF-8 character; 5-byte pages put back
#     together are the file; past the end an empty page;
#  2. a retried task: attempt 1's output, the latest by default, an
#     empty stream;
#  3. bad parameters 422 naming each; another app's task and an unknown
#     one 404 TASK_NOT_FOUND; POST 405;
#  4. POST /api/tasks/{id}/retry (coord/retry.h, as `taskspool retry`):
#     a FAILED task runs again and succeeds, its second attempt's log
#     apart; a SUCCESS task 409 TASK_NOT_RETRYABLE, another app's 404, a
#     body member 422, GET 405; 8 retries of one FAILED task at once
#     (coord/retry.c's lock): one 202, seven 409, one run, no copy left
#     in failed/ or corrupt/;
#  5. following a running hook from nextOffset: each byte once,
#     "complete" only after the hook's end.
# About 10 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
PY="$(dirname "$0")/t0112-api-logs.py"

api_server
trap api_cleanup EXIT
api_tester || exit 1
# The app of this test, and "other", which must not see its tasks.
TS_SECRET=$(ts apps add viewer --codes out,twice,slow) &&
TS_OTHER_SECRET=$(ts apps add other --codes out) || exit 1
TS_APP_ID=viewer
export TS_APP_ID TS_SECRET TS_OTHER_SECRET
cat >"$HOOKS/out" <<'H'
#!/bin/sh
printf 'h\303\251llo <script>alert(1)</script> \033[31mred\033[0m\n'
printf '\377\000bin\n' >&2
H
cat >"$HOOKS/twice" <<'H'
#!/bin/sh
echo "try $TASKSPOOL_ATTEMPT"
[ "$TASKSPOOL_ATTEMPT" -ge 2 ]
H
cat >"$HOOKS/slow" <<H
#!/bin/sh
echo a
i=0
while [ ! -e "$TRASH/go" ] && [ \$i -lt 300 ]; do sleep 0.05; i=\$((i + 1)); done
echo b
H
chmod +x "$HOOKS/out" "$HOOKS/twice" "$HOOKS/slow"

# submit ID CODE [MAXRETRIES]: through the shell client, as app viewer.
submit() {
	printf '{"requestId":"%s","taskCode":"%s","maxRetries":%s}' "$1" "$2" "${3:-0}" >"$TRASH/sub.json" &&
	sh "$(dirname "$0")/../../contrib/clients/tsapi.sh" submit "$TRASH/sub.json" >/dev/null
}

test_expect_success 'a daemon runs out-1 and twice-1 (attempt 1 fails, 2 succeeds)' '
	start_daemon n1 -j 2 &&
	submit out-1 out && submit twice-1 twice 1 &&
	wait_terminal out-1 && wait_terminal twice-1 &&
	test "$(state_of out-1)" = done && test "$(state_of twice-1)" = done
'

test_expect_success 'hostile output: an inert JSON string byte for byte; NUL and 0xFF in base64; paging' '
	python3 "$PY" hostile "$TRASH"
'

test_expect_success 'a retried task: each attempt its own log, the latest by default' '
	python3 "$PY" attempts "$TRASH"
'

test_expect_success 'bad parameters 422; other app and unknown task 404; POST 405' '
	python3 "$PY" problems "$TRASH"
'

test_expect_success 'POST retry: a FAILED task runs again (SUCCESS, attempt 2); 409, 404, 422, 405' '
	submit fail-1 twice 0 && wait_terminal fail-1 &&
	test "$(state_of fail-1)" = failed &&
	python3 "$PY" retry "$TRASH" &&
	ts status fail-1 | grep -q SUCCESS
'

test_expect_success '8 retries of one FAILED task at once: one 202, seven 409, one run, one copy' '
	submit fail-2 twice 0 && wait_terminal fail-2 &&
	test "$(state_of fail-2)" = failed &&
	python3 "$PY" race "$TRASH"
'

test_expect_success 'following a running hook: each byte once, complete after its end' '
	submit slow-1 slow &&
	wait_for "test -s \"$SPOOL\"/logs/slow-1/1.out" &&
	python3 "$PY" follow "$TRASH" &&
	wait_terminal slow-1 && test "$(state_of slow-1)" = done
'

test_done
