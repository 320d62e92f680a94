# cluster-lib.sh — sourced after test-lib.sh by the cluster-mode scenario
# scripts (t004x): a Redis server for the test, the cluster keys in $CONF,
# and the checks every cluster test makes on probe.log.
#
# redis_setup [private]: use $TS_TEST_REDIS when set (CI's shared server;
# every script has its own key prefix), else — or always with "private",
# for tests that stop the server or FLUSHALL it — start one with
# tests/servers/redis.sh in $TRASH/redis, stopped at exit.
SERVERS="$(cd "$(dirname "$0")/../servers" && pwd)"
REDIS_DIR=""

redis_teardown() {
	[ -n "$REDIS_DIR" ] && sh "$SERVERS/redis.sh" stop "$REDIS_DIR" >/dev/null 2>&1
	cleanup
}
trap redis_teardown EXIT

redis_setup() {
	if [ "${1:-}" != private ] && [ -n "${TS_TEST_REDIS:-}" ]; then
		REDIS=$TS_TEST_REDIS
	else
		REDIS_DIR="$TRASH/redis"
		_cl_out=$(sh "$SERVERS/redis.sh" start "$REDIS_DIR") ||
		    { echo "Bail out! redis-server did not start"; exit 1; }
		REDIS=${_cl_out#TS_TEST_REDIS=}
	fi
	PREFIX="ts:$test_name:$$:"
	cat >>"$CONF" <<CONF
redis = $REDIS
redis_prefix = $PREFIX
lease_ms = 3000
lease_renew_ms = 500
heartbeat_ms = 1000
CONF
}

rcli() { redis-cli -h "${REDIS%:*}" -p "${REDIS##*:}" "$@"; }

# now_ns: wall clock, ns (the probe's clock).
now_ns() { date +%s%N; }

# kill9_logged NODE: kill -9 the daemon of NODE and append to $TRASH/kills
# "<ns before> <pid> <node> <ns after>", "after" being once the daemon is
# dead (a zombie or gone): its hooks have then been sent SIGKILL by
# PR_SET_PDEATHSIG.
kill9_logged() {
	_cl_pid=$(daemon_pid "$1")
	_cl_t0=$(now_ns)
	kill -9 "$_cl_pid" 2>/dev/null
	while [ -r "/proc/$_cl_pid/stat" ] &&
	    [ "$(cut -d" " -f3 "/proc/$_cl_pid/stat" 2>/dev/null)" != Z ]; do
		sleep 0.01
	done
	sleep 0.05	# SIGKILL delivery to the hooks
	echo "$_cl_t0 $_cl_pid $1 $(now_ns)" >>"$TRASH/kills"
}

# check_no_overlap: for every id of probe.log, no two attempts overlap.
# An attempt ends at its END line; one killed without END ends at its
# logs/<id>/<attempt>.stale record (self-fencing: written after the hook
# died), at the finishedAt its node recorded when it saw the hook exit
# (an outcome other than LOST, e.g. killed by a signal), or else at the
# first kill of its node (results/ names the node of
# each attempt; $TRASH/kills as written by kill9_logged) that was over
# after its START.  Prints the offending ids.
check_no_overlap() {
	find "$SPOOL/logs" -name '*.stale' 2>/dev/null | while read -r f; do
		_cl_id=$(basename "$(dirname "$f")")
		_cl_att=$(basename "$f" .stale)
		sed -n 's/.* at_ms=\([0-9]*\):.*/\1/p' "$f" | head -1 |
		    sed "s/^/STALE $_cl_id $_cl_att /"
	done >"$TRASH/stale.lines"
	touch "$TRASH/kills"
	sed 's/^/KILL /' "$TRASH/kills" >"$TRASH/kill.lines"
	(cd "$SPOOL/results" && find . -name "*.json" -print | xargs -r jq -r \
	    'def ms: if . == null then "-" else ((.[0:19] + "Z" | fromdateiso8601) * 1000 + (.[20:23] | tonumber)) end;
	    .requestId as $i | .attempts[] | "NODE \($i) \(.attempt) \(.node) \(.outcome) \(.finishedAt | ms)"') \
	    >"$TRASH/node.lines"
	cat "$TRASH/kill.lines" "$TRASH/node.lines" "$TRASH/stale.lines" \
	    "$SPOOL/probe.log" | awk '
		$1 == "KILL"  { nk++; kn[nk] = $4; kill[nk] = $5 + 0; next }
		$1 == "NODE"  { nd[$2 " " $3] = $4
				# concluded by its node (not LOST): it saw the
				# hook exit at finishedAt (e.g. killed by a signal)
				if ($5 != "LOST" && $6 != "-") fin[$2 " " $3] = $6 * 1000000
				next }
		$1 == "STALE" { st[$2 " " $3] = $4 * 1000000; next }
		$1 == "START" { s[$2 " " $3] = $4 + 0; ids[$2] = 1
				if ($3 + 0 > max[$2]) max[$2] = $3 + 0; next }
		$1 == "END"   { e[$2 " " $3] = $4 + 0; next }
		END {
			for (id in ids) {
				prev_end = -1
				for (a = 1; a <= max[id]; a++) {
					k = id " " a
					if (!(k in s)) continue
					if (prev_end >= 0 && s[k] <= prev_end) {
						print "overlap:", id, "attempt", a; bad = 1
					}
					if (k in e) prev_end = e[k]
					else if (k in st) prev_end = st[k]
					else if (k in fin) prev_end = fin[k]
					else {
						prev_end = 9e18
						for (i = 1; i <= nk; i++)
							if (kn[i] == nd[k] && kill[i] > s[k] &&
							    kill[i] < prev_end)
								prev_end = kill[i]
					}
				}
			}
			exit bad
		}'
}

# check_tmp_strays KILLS: no file in tmp/ but the temporaries of the
# daemons killed with kill -9 that KILLS lists ("<ns> <pid> [<node> ...]"
# lines): <s>.<ns>.P<pid>.<n> of a killed pid, or, when KILLS names the
# node, a record rec.<ms>.<seq>.<node>.json staged by that node at most
# 1 s before it was killed (records.c names those by time).
check_tmp_strays() {
	find "$SPOOL/tmp" -maxdepth 1 -type f | sed "s|.*/||" |
	    awk "FILENAME == ARGV[1] { killed[\$2] = 1; nk++
			kt[nk] = int(\$1 / 1000000); kn[nk] = \$3; next }
		function rec_killed(   i, ms) { ms = f[2] + 0
			for (i = 1; i <= nk; i++)
				if (kn[i] == f[4] && kt[i] >= ms && kt[i] - ms <= 1000)
					return 1
			return 0 }
		{ n = split(\$0, f, \".\") }
		n == 5 && f[1] == \"rec\" && rec_killed() { next }
		{ if (n != 4 || f[3] !~ /^P[0-9]+\$/ ||
		    !(substr(f[3], 2) in killed)) { print \"stray:\", \$0; bad = 1 } }
		END { exit bad }" "$1" -
}

# check_once IDS_FILE [KILLS]: every id terminal exactly once (one file
# in done|failed|cancelled, one result), none left in incoming/ delayed/
# active/*/ queue/*/, and no file in tmp/ (with KILLS, a file of
# "<ns> <pid> [<node>]" lines of killed daemons: only the temporaries
# those daemons were writing; check_tmp_strays).
check_once() {
	for d in done failed cancelled; do ls "$SPOOL/$d"; done |
	    sed 's/\.json$//' | sort >"$TRASH/terminal.ids" &&
	sort "$1" | diff - "$TRASH/terminal.ids" &&
	ls "$SPOOL/results" | sed 's/\.json$//' | sort | diff "$TRASH/terminal.ids" - &&
	# what is left where nothing should be, named when a check fails
	{ find "$SPOOL/incoming" "$SPOOL/delayed" "$SPOOL/active" "$SPOOL/queue" \
	    "$SPOOL/tmp" -type f | sed 's/^/# left: /'; true; } &&
	test "$(count_files "$SPOOL/incoming")" = 0 &&
	test "$(count_files "$SPOOL/delayed")" = 0 &&
	test "$(find "$SPOOL/active" "$SPOOL/queue" -mindepth 2 -type f | wc -l)" = 0 &&
	if [ -z "${2:-}" ]; then
		# A live daemon stages its heartbeat and metrics in tmp/ for
		# an instant (the writer protocol): what is lost stays.
		wait_for "test \$(find \"$SPOOL/tmp\" -type f | wc -l) = 0" 3
	else
		_co_k=$2
		{ wait_for 'check_tmp_strays "$_co_k" >/dev/null' 3 ||
		    check_tmp_strays "$_co_k"; } &&
		test "$(find "$SPOOL/tmp" -mindepth 2 -type f | wc -l)" = 0
	fi
}
