# forbid-lib.sh — sourced after test-lib.sh (and, for cluster mode, after
# cluster-lib.sh and redis_setup) by t0014 (embedded) and t0062 (cluster):
# issue 11 item 1, `overlap: forbid` across leader failovers.
#
# Two daemons, a per-second forbid job whose probe hook sleeps 4 s; the
# leader is killed with kill -9 while a run of the job is in progress,
# several times and at different moments — among them the moment the
# leader has just saved state/jobs/<J>.json on a fire pass (lastFire is
# then the instant of the run in progress) —, the other daemon takes
# over, the killed one is started again.  Asserted: no two runs of the
# job overlap (START/END of every attempt of every task of the job; an
# attempt killed with its daemon ends at that kill), and the job went on
# firing after each failover.

. "$(dirname "$0")/runs-lib.sh"

# fl_leads NODE: how many times NODE logged that it became the leader.
fl_leads() { grep -c "node $1 is now the leader" "$TRASH/log.$1" 2>/dev/null; }

# fl_running J: the requestId of a run of J in progress (a START line of
# probe.log without its END whose process is alive), or nothing.
fl_running() {
	awk -v j="$1" 'index($2, j ".") == 1 { k = $2 " " $3
		if ($1 == "START") s[k] = $5; else delete s[k] }
	    END { for (k in s) { split(k, f, " "); print f[1], s[k] } }' \
	    "$SPOOL/probe.log" 2>/dev/null | while read -r _fl_id _fl_p; do
		[ -d "/proc/$_fl_p" ] && echo "$_fl_id"
	done | head -1
}

# fl_instant ID: the instant of a job task id as the state file writes
# it (yyyy-mm-ddThh:mm:ss).
fl_instant() {
	echo "$1" | sed -n 's/^.*\.\([0-9]\{4\}\)\([0-9][0-9]\)\([0-9][0-9]\)T\([0-9][0-9]\)\([0-9][0-9]\)\([0-9][0-9]\)Z$/\1-\2-\3T\4:\5:\6/p'
}

# fl_saved_during ID: the state file was saved since the fire of ID (its
# lastFire is at or past ID's instant; lastFire only grows, and before
# that fire it was below the instant), within the first 2 s of the 4 s
# run, so that the kill still finds it running.  The scheduler saves at
# most every 10 s, so with 5 s runs a save lands on the fire pass of a
# run or on a skip pass during one: both are what a new leader reads
# while that run goes on.
fl_saved_during() {
	_fl_lf=$(jq -r .lastFire "$SPOOL/state/jobs/fb.json" 2>/dev/null) &&
	_fl_a=$(date -u -d "$(echo "$_fl_lf" | cut -c1-19)Z" +%s 2>/dev/null) &&
	_fl_b=$(date -u -d "$(fl_instant "$1")Z" +%s 2>/dev/null) &&
	[ $((_fl_a - _fl_b)) -ge 0 ] && [ $((_fl_a - _fl_b)) -le 2 ]
}

FL_ROUNDS=${FL_ROUNDS:-6}

test_expect_success 'two daemons, a per-second forbid job with a 4 s hook' '
	: >"$TRASH/fl.kills" && : >"$TRASH/fl.moments" &&
	start_daemon n1 -j 2 &&
	wait_for "test \$(fl_leads n1) -ge 1" 10 &&
	start_daemon n2 -j 2 &&
	LEADER=n1 && OTHER=n2 &&
	printf "{\"jobCode\":\"fb\",\"taskCode\":\"probe\",\"cron\":\"* * * * * ?\",\"dialect\":\"quartz\",\"timezone\":\"UTC\",\"overlap\":\"forbid\",\"executeParams\":{\"sleep_ms\":4000}}\n" >"$TRASH/fb.json" &&
	ts jobs add "$TRASH/fb.json" >/dev/null &&
	wait_for "test -n \"\$(fl_running fb)\"" 10
'

# Round r kills the leader while a run is in progress: odd rounds once the
# state file was saved during that run (lastFire at or past its instant:
# what a new leader reads), even rounds 0.3 s, 1.5 s or 3 s into a run.
fl_round() {
	r=$1
	if [ $((r % 2)) = 1 ]; then
		# Seen late in a run, the save is tried again on a later one.
		_fl_try=0
		while :; do
			wait_for "id=\$(fl_running fb) && test -n \"\$id\" &&
			    fl_saved_during \$id" 60 ||
			    { echo "round $r: no state save seen during a run"; return 1; }
			test -n "$(fl_running fb)" && break
			_fl_try=$((_fl_try + 1))
			[ $_fl_try -lt 5 ] || { echo "round $r: the run ended first, 5 times"; return 1; }
		done
		what="state saved during the run $(fl_running fb)"
	else
		case $((r % 3)) in 0) d=0.3 ;; 1) d=1.5 ;; *) d=3 ;; esac
		wait_for "test -z \"\$(fl_running fb)\"" 10 &&
		wait_for "test -n \"\$(fl_running fb)\"" 10 || return 1
		sleep $d
		what="$d s into the run $(fl_running fb)"
	fi
	test -n "$(fl_running fb)" || { echo "round $r: the run ended first"; return 1; }
	echo "round $r: kill -9 leader $LEADER, $what" | tee -a "$TRASH/fl.moments"
	leads=$(fl_leads $OTHER)
	fl_kill $LEADER &&
	wait_for "test \$(fl_leads $OTHER) -gt $leads" 20 || return 1
	start_daemon $LEADER -j 2 || return 1
	t=$LEADER; LEADER=$OTHER; OTHER=$t
}

r=1
while [ $r -le "$FL_ROUNDS" ]; do
	test_expect_success "failover round $r: kill -9 of the leader while a forbid run is in progress" "
		fl_round $r
	"
	r=$((r + 1))
done

# Cluster mode only (FL_STOP_ROUNDS, set by t0062): the leader is frozen
# with SIGSTOP (its daemon alone; its hooks run on) for 6 s while a run
# is in progress, far past its lock's TTL (heartbeat_ms): the other node
# takes the lock and fires the next run; resumed, the old leader must
# renew before it acts and find itself deposed, instead of firing the
# instants it missed beside the new leader's run (s0003 saw that).
fl_stop_round() {
	r=$1
	wait_for "test -n \"\$(fl_running fb)\"" 10 || return 1
	leads=$(fl_leads $OTHER)
	dep=$(grep -c "node $LEADER is no longer the leader" "$TRASH/log.$LEADER")
	echo "stop round $r: SIGSTOP leader $LEADER for 6 s, run $(fl_running fb) in progress" | tee -a "$TRASH/fl.moments"
	kill -STOP "$(daemon_pid $LEADER)" &&
	wait_for "test \$(fl_leads $OTHER) -gt $leads" 20 &&
	sleep 5 &&
	kill -CONT "$(daemon_pid $LEADER)" &&
	wait_for "test \$(grep -c \"node $LEADER is no longer the leader\" $TRASH/log.$LEADER) -gt $dep" 10 ||
	    { kill -CONT "$(daemon_pid $LEADER)" 2>/dev/null; return 1; }
	t=$LEADER; LEADER=$OTHER; OTHER=$t
}

r=1
while [ $r -le "${FL_STOP_ROUNDS:-0}" ]; do
	test_expect_success "stop round $r: the leader frozen past its lock, resumed: it fires nothing" "
		fl_stop_round $r
	"
	r=$((r + 1))
done

test_expect_success 'the job fires on after the failovers; no two runs of it overlap' '
	sleep 6 &&
	ts jobs remove fb >/dev/null &&
	wait_for "test -z \"\$(ls $SPOOL/incoming $SPOOL/delayed $SPOOL/queue/* $SPOOL/active/* 2>/dev/null | grep \"^fb\\.\")\"" 30 &&
	wait_for "test -z \"\$(fl_running fb)\"" 10 &&
	cat "$TRASH/fl.moments" &&
	fl_runs fb. >"$TRASH/fl.runs" && cat "$TRASH/fl.runs" &&
	test "$(wc -l <"$TRASH/fl.runs")" -ge $((FL_ROUNDS + 2)) &&
	fl_disjoint "$TRASH/fl.runs"
'
