#!/bin/sh
# The systemd calendar dialect (issue 18; daemon/core/cron_systemd.c,
# README "Cron expressions", dialect systemd):
#  1. generated calendar events give the instants systemd-analyze
#     calendar gives, in UTC and eight zones with DST, except the
#     differences the README names (t0110-systemd-calendar.py);
#  2. both refuse the same malformed events;
#  3. "inside": from inside the second pass of a repeated hour, systemd
#     may fire a fixed time's second pass; taskspool waits for the next
#     day (the README's rule) -- both outputs asserted;
#  4. cron explain says the README's words for a skipped and a repeated
#     fixed time;
#  5. a job file with "calendar" fires on its schedule: even seconds,
#     every one once, each task named after its instant.
# About 40 s.
. "$(dirname "$0")/test-lib.sh"
PY="$(dirname "$0")/t0110-systemd-calendar.py"

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "not ok 1 - systemd-analyze is missing (Debian package systemd: tests/install-deps.sh)"
	exit 1
fi

test_expect_success 'generated events: the instants of systemd-analyze, differences named' '
	python3 "$PY" "$TS" 20261206 360
'

test_expect_success 'inside a repeated hour: systemd fires 01:30 EST, taskspool the next night' '
	TZ=UTC systemd-analyze calendar --iterations=1 \
	    --base-time="2026-11-01 06:10:00 UTC" \
	    "*-*-* 01:30 America/New_York" >"$TRASH/sd" &&
	grep -q "Next elapse: Sun 2026-11-01 06:30:00 UTC" "$TRASH/sd" &&
	"$TS" cron next --from 2026-11-01T06:10:00Z -n 1 \
	    "*-*-* 01:30 America/New_York" >"$TRASH/ours" &&
	test "$(cat "$TRASH/ours")" = 2026-11-02T01:30:00-05:00
'

test_expect_success 'cron explain: the README example, and the rule for a repeated hour' '
	"$TS" cron explain "30 2 * * *" --tz America/New_York \
	    --from 2026-03-01T00:00:00Z -n 1 >"$TRASH/ex" &&
	grep -qx "means: at 02:30, every day, in America/New_York" "$TRASH/ex" &&
	grep -q "on 2026-03-08 it fires once at 03:00:00, the first instant after the jump, because 02:30:00 does not exist" "$TRASH/ex" &&
	"$TS" cron explain "*-*-* 01:30 America/New_York" \
	    --from 2026-10-20T00:00:00Z -n 1 >"$TRASH/ex2" &&
	grep -q "01:30:00 on 2026-11-01 occurs twice; it fires on the first pass only" "$TRASH/ex2"
'

cat >"$HOOKS/cal" <<H
#!/bin/sh
echo "\$TASKSPOOL_REQUEST_ID" >>"$SPOOL/cal.log"
H
chmod +x "$HOOKS/cal"

test_expect_success 'a "calendar" job fires every even second, each once' '
	printf "%s\n" "{\"jobCode\":\"c2\",\"taskCode\":\"cal\",\"calendar\":\"*:*:00/2 UTC\",\"overlap\":\"allow\"}" >"$TRASH/c2.json" &&
	ts jobs add "$TRASH/c2.json" &&
	ts jobs next c2 3 --from 2026-12-06T10:00:01Z >"$TRASH/next" &&
	grep -q "^2026-12-06T10:00:02Z " "$TRASH/next" &&
	grep -q "^2026-12-06T10:00:06Z " "$TRASH/next" &&
	start_daemon n1 &&
	sleep 7 &&
	stop_daemon n1 &&
	test "$(wc -l <"$SPOOL/cal.log")" -ge 2 &&
	test "$(sort "$SPOOL/cal.log" | uniq -d | wc -l)" = 0 &&
	! grep -v "^c2\.[0-9]\{8\}T[0-9]\{5\}[02468]Z\$" "$SPOOL/cal.log"
'

test_done
