#!/bin/sh
# The web console in a real browser (issue 17 items 2-4): Debian's
# chromium driven by puppeteer-core (tests/console/console-test.mjs,
# versions pinned by tests/console/package-lock.json, npm ci), against
# lighttpd + taskspool.cgi at /console/ and a daemon:
#  - no session leads to the login form; a wrong secret is refused; a
#    login shows the overview (node n1 live, the leader); the cookie is
#    HttpOnly, Secure, SameSite=Strict, Path=/console;
#  - a task named "<script>window.__pwned=1</script>" is listed as
#    text and no script runs; hook output "<b>bold</b>" and an ANSI
#    escape render inert (the escape as its control picture U+241B);
#  - a task that failed once (exit 3) and then succeeded shows both
#    attempts with node, exit and its output;
#  - a running task's log grows while its page reloads itself;
#  - cancelling it through the console ends in cancelled/ (CANCELLED);
#  - the jobs page gives a job's next fires in its zone and UTC (the
#    Mondays of January 2030 in Europe/Berlin, +01:00);
#  - a POST without the session's CSRF token is 403; logout ends the
#    session; a read-only app has no action buttons;
#  - a session ends when the secret it was made with is revoked (apps
#    rotate --revoke-old); a malformed first ts_console cookie does not
#    hide a good one; a login removes expired session files;
#  - axe-core finds no serious or critical violation on the login,
#    overview, tasks, task and jobs pages.
#  - a finished task file stamped 3000 days ahead (a node whose clock
#    runs ahead) counts in the last minute (before, the overview's
#    per-minute array was written out of bounds: a crash);
# Screenshots of each page: $BUILD/artifacts/console/*.png.  About 40 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
here=$(cd "$(dirname "$0")/../.." && pwd)
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$CHROMIUM" ]; then
	echo "Bail out! chromium is not installed (make deps installs it)"
	exit 1
fi
(cd "$here/tests/console" && npm ci --no-audit --no-fund --loglevel=error) >"$TRASH/npm.log" 2>&1 ||
    { cat "$TRASH/npm.log"; echo "Bail out! npm ci in tests/console failed (the npm registry is needed)"; exit 1; }

api_server
trap api_cleanup EXIT
api_tester || exit 1
OPS=$(ts apps add ops --codes '*') && ts apps console ops operate &&
READER=$(ts apps add reader --codes flaky,slow) || exit 1
GO_FILE="$TRASH/go"
cat >"$HOOKS/flaky" <<'H'
#!/bin/sh
echo "try $TASKSPOOL_ATTEMPT"
[ "$TASKSPOOL_ATTEMPT" -ge 2 ] || exit 3
H
printf '#!/bin/sh\nprintf "<b>bold</b> \\033[31mred\\n"\n' >"$HOOKS/hostile"
cat >"$HOOKS/slow" <<H
#!/bin/sh
echo "line 1"
i=0
while [ ! -e "$GO_FILE" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
echo "line 2"; sleep 1; echo "line 3"; sleep 60
H
chmod +x "$HOOKS/flaky" "$HOOKS/hostile" "$HOOKS/slow"
echo "retry_base_ms = 100" >>"$CONF"

test_expect_success 'the scene: a flaky, a hostile and a running task; a job' '
	start_daemon n1 -j 2 &&
	printf "{\"requestId\":\"flaky-1\",\"taskCode\":\"flaky\",\"maxRetries\":1}" >"$TRASH/a.json" &&
	printf "{\"requestId\":\"hostile-1\",\"taskCode\":\"hostile\",\"taskName\":\"<script>window.__pwned=1</script>\"}" >"$TRASH/b.json" &&
	printf "{\"requestId\":\"slow-1\",\"taskCode\":\"slow\"}" >"$TRASH/c.json" &&
	printf "%s" "{\"jobCode\":\"weekly\",\"taskCode\":\"flaky\",\"cron\":\"0 12 * * 1\",\"timezone\":\"Europe/Berlin\",\"startAt\":\"2030-01-01T00:00:00Z\"}" >"$TRASH/j.json" &&
	ts submit "$TRASH/a.json" >/dev/null && ts submit "$TRASH/b.json" >/dev/null &&
	ts jobs add "$TRASH/j.json" >/dev/null &&
	wait_terminal flaky-1 && wait_terminal hostile-1 &&
	test "$(state_of flaky-1)" = done &&
	touch -d "+3000 days" "$SPOOL/done/hostile-1.json" &&
	ts submit "$TRASH/c.json" >/dev/null &&
	wait_for "test -s \"$SPOOL\"/logs/slow-1/1.out"
'

test_expect_success 'the console in chromium: login, pages, hostile data, follow, cancel, axe' '
	TS_APP=ops TS_SECRET=$OPS TS_READER=reader TS_READER_SECRET=$READER \
	    SPOOL=$SPOOL ARTIFACTS=$BUILD/artifacts/console CHROMIUM=$CHROMIUM \
	    GO_FILE=$GO_FILE TS_URL=$TS_URL \
	    node "$here/tests/console/console-test.mjs" >"$TRASH/browser" 2>&1
	rc=$?
	sed "s/^/    /" "$TRASH/browser"
	test $rc = 0 && ! grep -q "^not ok" "$TRASH/browser" &&
	test "$(grep -c "^ok" "$TRASH/browser")" -ge 17 &&
	ls "$BUILD"/artifacts/console/0[1-9]-*.png >/dev/null
'

# curl JAR APP SECRET: log in, the cookie into JAR.
login() {
	curl -s -c "$1" -o /dev/null --data-urlencode "app=$2" \
	    --data-urlencode "secret=$3" "$TS_URL/console/login"
}
status() { curl -s -o /dev/null -w "%{http_code}" "$@"; }

test_expect_success 'a session ends with the secret it was made with (rotate --revoke-old)' '
	login "$TRASH/jar" ops "$OPS" &&
	test "$(status -b "$TRASH/jar" "$TS_URL/console/")" = 200 &&
	NEW=$(ts apps rotate ops) &&
	test "$(status -b "$TRASH/jar" "$TS_URL/console/")" = 200 &&
	ts apps rotate ops --revoke-old &&
	test "$(status -b "$TRASH/jar" "$TS_URL/console/")" = 303 &&
	login "$TRASH/jar2" ops "$NEW" &&
	test "$(status -b "$TRASH/jar2" "$TS_URL/console/")" = 200
'

test_expect_success 'a malformed ts_console cookie does not hide a good one; expired files go' '
	sid=$(awk "\$6 == \"ts_console\" { print \$7 }" "$TRASH/jar2") &&
	test ${#sid} = 64 &&
	test "$(status -H "Cookie: ts_console=x; ts_console=$sid" "$TS_URL/console/")" = 200 &&
	old=$(ls "$SPOOL"/state/console/*.session | head -n 1) &&
	cp "$old" "$SPOOL/state/console/$(printf %064d 0).session" &&
	touch -d "-2 days" "$SPOOL/state/console/$(printf %064d 0).session" &&
	login "$TRASH/jar3" ops "$NEW" &&
	! test -e "$SPOOL/state/console/$(printf %064d 0).session"
'

test_done
