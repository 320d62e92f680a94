#!/bin/sh
# The cron preview over HTTP and in the job list (issue 18 item 2):
#  1-3. GET /api/cron/next through lighttpd + taskspool.cgi and the
#       Python client: the instants, the words and the next offset
#       change for a vixie, a systemd and a quartz expression, against
#       hand-checked values (t0111-cron-api.py names their sources);
#       the same answer `taskspool cron next` and `cron explain` give;
#       the README's example through contrib/clients/tsapi.sh;
#  4.   every bad query parameter is 422 VALIDATION_FAILED naming it,
#       POST is 405, an unsigned request 401;
#  5.   `jobs list --long` (and with --json) says what each job matches
#       and what the next offset change does to it, from the job's next
#       fire (none for an ended or a disabled job); `jobs next` of an
#       ended job exits 1, as `cron next` does for no fire time.
# No daemon is needed: the preview reads no task.  About 5 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
PY="$(dirname "$0")/t0111-cron-api.py"

api_server
trap api_cleanup EXIT
api_tester || exit 1

test_expect_success 'a fixed time a forward jump skips: fires at 03:00 EDT, said so' '
	python3 "$PY" fixed-time-skip
'

test_expect_success 'a calendar event in its own zone; tz naming the same zone' '
	python3 "$PY" calendar-zone
'

test_expect_success 'quartz 6L, the default zone UTC, the default n, never' '
	python3 "$PY" quartz-and-default-zone
'

test_expect_success 'the API and the CLI agree, instant for instant and word for word' '
	python3 -c "
import os, sys
sys.path.insert(0, \"$(dirname "$0")/../../contrib/python/src\")
import taskspool
c = taskspool.Client(os.environ[\"TS_URL\"], os.environ[\"TS_APP_ID\"],
                     os.environ[\"TS_SECRET\"])
r = c.cron_next(\"*/20 1-2 * * *\", tz=\"Europe/London\",
                since=\"2027-10-30T00:00:00Z\", n=8)
print(\"\n\".join(r[\"next\"]))
print(r[\"means\"])
print(r[\"offsetChange\"][\"effect\"])
" >"$TRASH/api" &&
	"$TS" cron next "*/20 1-2 * * *" --tz Europe/London \
	    --from 2027-10-30T00:00:00Z -n 8 >"$TRASH/cli" &&
	"$TS" cron explain "*/20 1-2 * * *" --tz Europe/London \
	    --from 2027-10-30T00:00:00Z -n 1 >"$TRASH/ex" &&
	sed -n "s/^means: \(.*\), in Europe\/London$/\1/p" "$TRASH/ex" >>"$TRASH/cli" &&
	tail -n 1 "$TRASH/ex" | sed "s/^  //" >>"$TRASH/cli" &&
	diff -u "$TRASH/cli" "$TRASH/api"
'

# The README's API example: its query (in $TRASH/q) and the line it
# prints (in $TRASH/want).
README="$(dirname "$0")/../../README.md"
readme_example() {
	sed -n "s|^    \$ contrib/clients/tsapi.sh request GET '\(/api/cron/next?[^']*\)' .*|\1|p" \
	    "$README" >"$TRASH/q" &&
	grep -A2 "^    \$ contrib/clients/tsapi.sh request GET '/api/cron/next" "$README" |
	    sed -n "3s/^    //p" >"$TRASH/want" &&
	test -s "$TRASH/q" && test -s "$TRASH/want"
}

test_expect_success 'the README example through the shell client, word for word' '
	readme_example &&
	sh "$(dirname "$0")/../../contrib/clients/tsapi.sh" request GET "$(cat "$TRASH/q")" >"$TRASH/sh" &&
	test "$(jq -r .offsetChange.effect "$TRASH/sh")" = "$(cat "$TRASH/want")"
'

test_expect_success 'bad parameters: 422 naming each; POST 405; unsigned 401' '
	python3 "$PY" problems
'

test_expect_success 'jobs list --long: the words and the next offset change' '
	printf "#!/bin/sh\n" >"$HOOKS/report" && chmod +x "$HOOKS/report" &&
	printf "%s" "{\"jobCode\":\"night\",\"taskCode\":\"report\",\"cron\":\"30 2 * * *\",\"timezone\":\"Europe/Berlin\"}" >"$TRASH/night.json" &&
	printf "%s" "{\"jobCode\":\"tick\",\"taskCode\":\"report\",\"fixedRateMs\":60000}" >"$TRASH/tick.json" &&
	ts jobs add "$TRASH/night.json" >/dev/null &&
	ts jobs add "$TRASH/tick.json" >/dev/null &&
	ts jobs list --long >"$TRASH/long" &&
	grep -q "^    means: at 02:30, every day, in Europe/Berlin$" "$TRASH/long" &&
	grep -q "^    offset change at .* (+0[12]:00 to +0[12]:00): wall times 0[23]:00:00 to 0[23]:59:59 on " "$TRASH/long" &&
	grep -q "^    means: every 60000 ms (1 minute) from one start to the next$" "$TRASH/long" &&
	grep -q "^    offset changes: none moves it (it follows elapsed time)$" "$TRASH/long" &&
	ts jobs list >"$TRASH/short" && test "$(wc -l <"$TRASH/short")" = 2 &&
	ts jobs list --long --json >"$TRASH/lj" &&
	test "$(jq -r ".[0].means" "$TRASH/lj")" = "at 02:30, every day" &&
	test "$(jq -r ".[0].schedule" "$TRASH/lj")" = fixed-time &&
	test "$(jq -r ".[0].offsetChange.affected" "$TRASH/lj")" = true &&
	test "$(jq -r ".[1].schedule" "$TRASH/lj")" = elapsed &&
	test "$(jq -r ".[1].offsetChange" "$TRASH/lj")" = null &&
	ts jobs list --json | jq -e ".[0] | has(\"means\") | not" >/dev/null &&
	printf "%s" "{\"jobCode\":\"ended\",\"taskCode\":\"report\",\"cron\":\"30 2 * * *\",\"timezone\":\"Europe/Berlin\",\"endAt\":\"2000-01-01T00:00:00Z\"}" >"$TRASH/ended.json" &&
	printf "%s" "{\"jobCode\":\"off\",\"taskCode\":\"report\",\"cron\":\"30 2 * * *\",\"timezone\":\"Europe/Berlin\",\"enabled\":false}" >"$TRASH/off.json" &&
	ts jobs add "$TRASH/ended.json" >/dev/null && ts jobs add "$TRASH/off.json" >/dev/null &&
	ts jobs list --long >"$TRASH/long2" &&
	grep -A2 "^ended " "$TRASH/long2" | grep -q "^    offset change: not told (the job does not fire again)$" &&
	grep -A2 "^off " "$TRASH/long2" | grep -q "^    offset change: not told (the job is disabled)$" &&
	{ ts jobs next ended 2>"$TRASH/never"; test $? = 1; } &&
	grep -q "ended never fires after now (its schedule up to its endAt has no time left)" "$TRASH/never"
'

test_done
