#!/bin/sh
# Prepared fires (issue 16; daemon/node/scheduler.c, "prepared fires";
# README.md "Recurring jobs"): the leader writes and syncs the task file of
# a job's next instant into tmp/ up to 250 ms before the instant, and at
# the instant only decides and renames it.  What must stay true, checked
# from outside by a watcher that looks at tmp/ and the task directories
# every 2 ms (tests/scenario/t0096-watch.py):
#  1. never early: no task of an instant is in incoming/ (or further)
#     before that instant, and no hook starts before it; and the file was
#     prepared: tmp/ held a fire.* file with that requestId before the
#     instant, for most instants (a loaded machine may prepare late);
#  2. a job removed once its next fire is prepared: that instant is never
#     fired, and its prepared file does not stay in tmp/;
#  3. the same for a job disabled (enabled false) once prepared;
#  4. overlap forbid: the instants skipped while a run is live leave no
#     prepared file behind, and are never fired;
#  5. a file of the name a fire would take is left alone.
# Every job is Quartz "* * * * * ?" in UTC: the fire of job J at second t
# is the task J.<yyyymmddThhmmss>Z.  About 25 s.
. "$(dirname "$0")/test-lib.sh"
WATCH="$(dirname "$0")/t0096-watch.py"

# A hook that records "<requestId> <start epoch ms>" and may sleep.
cat >"$HOOKS/pf" <<H
#!/bin/sh
echo "\$TASKSPOOL_REQUEST_ID \$(date +%s%3N)" >>"$SPOOL/pf.log"
[ -n "\$PF_SLEEP" ] && sleep "\$PF_SLEEP"
case \$TASKSPOOL_REQUEST_ID in f.*) sleep 2.5 ;; esac
exit 0
H
chmod +x "$HOOKS/pf"

# job CODE [OVERLAP]: the per-second job CODE (overlap allow unless
# OVERLAP says otherwise).
job() {
	printf '{"jobCode":"%s","taskCode":"pf","cron":"* * * * * ?","dialect":"quartz","timezone":"UTC","overlap":"%s"}\n' \
	    "$1" "${2:-allow}" >"$SPOOL/tmp/job.$1" &&
	mv "$SPOOL/tmp/job.$1" "$SPOOL/jobs/$1.json"
}

# leftovers J: fire.* files in tmp/ holding a task of J of an instant
# already past (a prepared file that was not removed).
leftovers() {
	now=$(date -u +%Y%m%dT%H%M%S)
	for f in "$SPOOL"/tmp/fire.*; do
		[ -f "$f" ] || continue
		id=$(jq -r .requestId "$f" 2>/dev/null) || continue
		case $id in "$1".*) ;; *) continue ;; esac
		t=${id#"$1".}; t=${t%Z}
		[ "$t" \< "$now" ] && echo "$f: $id"
	done
	return 0
}

test_expect_success 'never early, and prepared before the instant' '
	start_daemon n1 &&
	job a &&
	python3 "$WATCH" observe "$SPOOL" a 5 >"$TRASH/obs" &&
	cat "$TRASH/obs" &&
	grep -q "^early 0\$" "$TRASH/obs" &&
	n=$(sed -n "s/^instants \([0-9]*\)\$/\1/p" "$TRASH/obs") &&
	p=$(sed -n "s/^prepared \([0-9]*\)\$/\1/p" "$TRASH/obs") &&
	test "$n" -ge 4 && test $((p * 2)) -ge "$n" &&
	awk "\$1 ~ /^a\\./ { split(\$1, x, \".\"); print x[2], \$2 }" "$SPOOL/pf.log" >"$TRASH/starts" &&
	test -s "$TRASH/starts" &&
	python3 "$WATCH" starts "$TRASH/starts"
'

# unfired MODE J: remove (MODE remove) or disable (disable) job J once
# its next fire is prepared; that instant is then never fired and its
# prepared file does not stay in tmp/.
unfired() {
	python3 "$WATCH" "$1" "$SPOOL" "$2" >"$TRASH/$1" && cat "$TRASH/$1" &&
	id=$(sed -n "s/^prepared-then-removed \(.*\)\$/\1/p" "$TRASH/$1") &&
	test -n "$id" && sleep 1.5 &&
	test -z "$(state_of "$id")" && test ! -e "$SPOOL/results/$id.json" &&
	test -z "$(leftovers "$2")"
}

test_expect_success 'a job removed once its next fire is prepared: not fired, no file left' '
	unfired remove a
'

test_expect_success 'a job disabled once its next fire is prepared: not fired, no file left' '
	job d && unfired disable d
'

test_expect_success 'overlap forbid: skipped instants leave no prepared file and never fire' '
	job f forbid &&
	sleep 6.2 &&
	rm -f "$SPOOL/jobs/f.json" && sleep 1 &&
	n=$(grep -c "^f\\." "$SPOOL/pf.log") &&
	echo "# runs of f: $n" && test "$n" -ge 2 && test "$n" -le 3 &&
	grep -q "fire skipped: f\\..* still pending or running (overlap forbid)" "$TRASH/log.n1" &&
	test -z "$(leftovers f)"
'

test_expect_success 'the daemon stops' '
	stop_daemon n1 &&
	test -z "$(ls "$SPOOL/tmp" | grep "^fire\\.")"
'

# The leader names its files fire.<pid>.<n>, n from 0 in each process: a
# file of that name already in tmp/ (left by an earlier process with the
# same pid, or another host's on a shared spool) is never truncated and
# reused, the next name is taken.  Restarted with no enabled job (d is
# disabled), the new leader has written no fire yet when the names are
# taken.
test_expect_success 'a fire.<pid>.<n> already in tmp/ is not overwritten: the next name is used' '
	start_daemon n1 &&
	pid=$(daemon_pid n1) &&
	for i in 0 1 2 3 4; do echo "foreign $i" >"$SPOOL/tmp/fire.$pid.$i"; done &&
	job g &&
	wait_for "test \$(ls \"$SPOOL/done\" | grep -c \"^g\\.\") -ge 3" 8 &&
	rm -f "$SPOOL/jobs/g.json" &&
	for i in 0 1 2 3 4; do
		test "$(cat "$SPOOL/tmp/fire.$pid.$i")" = "foreign $i" || return 1
	done &&
	rm -f "$SPOOL"/tmp/fire.$pid.[0-4] &&
	stop_daemon n1
'

test_done
