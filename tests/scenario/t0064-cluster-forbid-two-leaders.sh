#!/bin/sh
# Issue 11 item 1, the gap left by the failover rounds of t0062: two
# leaders at once.  A FLUSHALL takes the leader key away while the
# leader still believes it leads until its next renewal
# (reap_interval_ms, 1 s here); the other node takes the lock meanwhile
# and both fire the same per-second forbid job in the same seconds.
# The job's run marker (state/jobruns/, jobrun.h) fences the decision:
# asserted, whatever the timing, that no two runs of the job overlap,
# that no task of the job ran twice or went to corrupt/ ("already
# used"), and that the job fired on.  Then `jobs run-now` of a forbid
# job honours the marker.  Uses its own redis-server.  About 60 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup private
# n1 renews its leader lock every 450 ms, within the half of its TTL
# (heartbeat_ms 1000) after which it would renew before it fires
# (coord_leader_fresh): after a FLUSHALL it acts as the leader for up to
# 450 ms more.  n2 tries to take the lock every 100 ms, so it usually does
# within that window.
cp "$CONF" "$TRASH/n2.conf"
echo "reap_interval_ms = 450" >>"$CONF"
echo "reap_interval_ms = 100" >>"$TRASH/n2.conf"
. "$(dirname "$0")/runs-lib.sh"
: >"$TRASH/fl.kills"

# leads NODE: how many times NODE logged that it became the leader.
leads() { grep -c "node $1 is now the leader" "$TRASH/log.$1" 2>/dev/null; }
# leading NODE: NODE's log says it leads now.
leading() {
	test "$(leads $1)" -gt "$(grep -c "node $1 is no longer the leader" "$TRASH/log.$1")"
}
# start_n2: n2 with its own configuration file.
start_n2() {
	_t_conf=$CONF; CONF=$TRASH/n2.conf
	start_daemon n2 -j 2; _t_rc=$?
	CONF=$_t_conf
	return $_t_rc
}

test_expect_success 'two daemons, a per-second forbid job with a 2.5 s hook' '
	start_daemon n1 -j 2 &&
	wait_for "leading n1" 10 &&
	start_n2 &&
	printf "{\"jobCode\":\"fb\",\"taskCode\":\"probe\",\"cron\":\"* * * * * ?\",\"dialect\":\"quartz\",\"timezone\":\"UTC\",\"overlap\":\"forbid\",\"executeParams\":{\"sleep_ms\":2500}}\n" >"$TRASH/fb.json" &&
	ts jobs add "$TRASH/fb.json" >/dev/null &&
	wait_for "grep -q \"^START fb\\.\" $SPOOL/probe.log" 10
'

# A round: n1 leads (n2 is restarted if it leads, so that n1 takes the
# lock back), a FLUSHALL at a random moment of a second, n2 takes the
# lock while n1 still believes it leads.
t_round() {
	if ! leading n1; then
		stop_daemon n2 && wait_for "leading n1" 10 && start_n2 ||
		    return 1
	fi
	sleep "$(awk -v s=$1 "BEGIN { srand(s); printf \"%.2f\", 0.2 + rand() }")"
	l=$(leads n2)
	rcli FLUSHALL >/dev/null &&
	wait_for "test \$(leads n2) -gt $l" 5 ||
	    echo "round $1: n1 kept the lock"
}

test_expect_success '10 rounds: a FLUSHALL, the leader key taken by n2 while n1 still leads' '
	i=1 &&
	while [ $i -le 10 ]; do
		t_round $i || return 1
		i=$((i + 1))
	done &&
	echo "# n2 took the lock after a FLUSHALL $(leads n2) times" >&3 &&
	test "$(leads n2)" -ge 1
' 3>&1

test_expect_success 'no two runs of the job overlap; none ran twice; nothing in corrupt/' '
	sleep 3 &&
	ts jobs remove fb >/dev/null &&
	wait_for "test -z \"\$(ls $SPOOL/incoming $SPOOL/delayed $SPOOL/queue/* $SPOOL/active/* 2>/dev/null | grep \"^fb\\.\")\"" 30 &&
	fl_runs fb. >"$TRASH/fl.runs" &&
	test "$(wc -l <"$TRASH/fl.runs")" -ge 8 &&
	fl_disjoint "$TRASH/fl.runs" &&
	test -z "$(ls "$SPOOL/corrupt" | grep "^fb\\.")" &&
	! grep -h "already used" "$TRASH/log.n1" "$TRASH/log.n2" &&
	awk "\$1 == \"START\" { n[\$2]++ } END { for (k in n) if (n[k] > 1) { print k, n[k]; bad = 1 } exit bad }" "$SPOOL/probe.log" &&
	(cd "$SPOOL/results" && jq -r "select(.status != \"SUCCESS\") | .requestId" fb.*.json) >"$TRASH/notok" &&
	test ! -s "$TRASH/notok" &&
	m=$(cat "$TRASH/log.n1" "$TRASH/log.n2" | grep -c "already fired by another leader\|fire .* dropped: the job.s run marker" || :) &&
	s=$(cat "$TRASH/log.n1" "$TRASH/log.n2" | grep -c "job fb: fire skipped" || :) &&
	echo "# runs: $(wc -l <"$TRASH/fl.runs"); passes skipped (overlap forbid): $s; fires fenced by the marker (the other leader had made them): $m" >&3
' 3>&1

test_expect_success 'jobs run-now of a forbid job: refused (75) while its run is live, accepted after' '
	printf "{\"jobCode\":\"rn\",\"taskCode\":\"probe\",\"cron\":\"0 0 0 1 1 ?\",\"dialect\":\"quartz\",\"timezone\":\"UTC\",\"overlap\":\"forbid\",\"enabled\":false,\"executeParams\":{\"sleep_ms\":3000}}\n" >"$TRASH/rn.json" &&
	ts jobs add "$TRASH/rn.json" >/dev/null &&
	id=$(ts jobs run-now rn) &&
	test "$(cat "$SPOOL/state/jobruns/rn.run" | cut -d" " -f1)" = "$id" &&
	wait_for "grep -q \"^START $id \" $SPOOL/probe.log" 10 &&
	sleep 1 &&
	{ ts jobs run-now rn >"$TRASH/rn.out" 2>"$TRASH/rn.err"; rc=$?; } &&
	cat "$TRASH/rn.err" &&
	test "$rc" = 75 &&
	grep -q "rn: $id is still pending or running (overlap forbid)" "$TRASH/rn.err" &&
	test ! -s "$TRASH/rn.out" &&
	wait_terminal "$id" 20 &&
	id2=$(ts jobs run-now rn) &&
	test "$id2" != "$id" &&
	wait_terminal "$id2" 20 &&
	test "$(grep -c "^START rn\\." $SPOOL/probe.log)" = 2
'
test_done
