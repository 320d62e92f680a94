#!/bin/sh
# Cluster stress (make stress only): three daemons (a, b, c; -j 4) on a
# real redis-server, N probe tasks (default 3000, env N; sleeping 0-400
# ms, so that the run outlasts the kills) with routes any and
# round_robin, and for STRESS_SECONDS (default 60) a kill -9 of a
# random node every 2-5 s (seeded: SEED, default 42), restarted 1 s
# later.  Then: every task SUCCESS exactly once, no two attempts of a
# task overlapping (probe START/END; an attempt cut by a kill ends at the
# kill), nothing left in queue/ or active/, and in tmp/ only what the
# killed daemons were writing (removed by the leader after an hour).  Uses $TS_TEST_REDIS
# when set, else its own server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup

SEED=${SEED:-42}
N=${N:-3000}
SECS=${STRESS_SECONDS:-60}

test_expect_success 'three daemons' '
	: >"$TRASH/ids" && : >"$TRASH/kills" &&
	start_daemon a -j 4 && start_daemon b -j 4 && start_daemon c -j 4
'

test_expect_success "$N tasks under $SECS s of seeded kill -9 and restarts" '
	awk -v n=$N -v dir="$TRASH/stage" "BEGIN {
		system(\"mkdir -p \" dir)
		for (i = 1; i <= n; i++) {
			id = sprintf(\"cs-%05d\", i)
			print id >\"$TRASH/ids\"
			f = dir \"/\" id \".json\"
			printf \"{\\\"requestId\\\":\\\"%s\\\",\\\"taskCode\\\":\\\"probe\\\",\\\"maxRetries\\\":30,\\\"route\\\":\\\"%s\\\",\\\"executeParams\\\":{\\\"sleep_ms\\\":%d}}\", id, (i % 3 ? \"any\" : \"round_robin\"), (i * 37) % 400 >f
			close(f)
		}
	}" &&
	for f in "$TRASH"/stage/*.json; do mv "$f" "$SPOOL/incoming/" || return 1; done &
	mover=$!
	awk -v s=$SEED -v t=$SECS "BEGIN { srand(s); while (el < t) { d = 2 + int(rand() * 4); el += d; print d, substr(\"abc\", 1 + int(rand() * 3), 1) } }" >"$TRASH/plan" &&
	while read -r d victim; do
		sleep "$d"
		kill9_logged "$victim"
		sleep 1
		rm -f "$SPOOL/state/heartbeat.$victim"
		start_daemon "$victim" -j 4 || return 1
	done <"$TRASH/plan" &&
	wait $mover &&
	echo "# $(wc -l <"$TRASH/plan") kills" >&3
' 3>&1

test_expect_success 'all tasks SUCCESS exactly once; no overlap; nothing left over' '
	wait_for "test \$(count_files $SPOOL/done) -ge $N" 300 &&
	cut -d" " -f1,2 "$TRASH/kills" >"$TRASH/kill.pids" &&
	check_once "$TRASH/ids" "$TRASH/kill.pids" &&
	check_no_overlap &&
	(cd "$SPOOL/results" && jq -r "select(.status != \"SUCCESS\") | .requestId" cs-*.json) >"$TRASH/notok" &&
	test ! -s "$TRASH/notok" &&
	lost=$(cd "$SPOOL/results" && jq -r "[.attempts[] | select(.outcome == \"LOST\")] | length" cs-*.json | awk "{ s += \$1 } END { print s + 0 }") &&
	echo "# $N tasks, $lost lost attempts rerun, 0 lost tasks, 0 overlaps" >&3
' 3>&1

test_expect_success 'daemons stop' '
	stop_daemon a && stop_daemon b && stop_daemon c
'

test_done
