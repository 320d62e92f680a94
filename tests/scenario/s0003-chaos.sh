#!/bin/sh
# Chaos (make stress only; issue 11, "A chaos test that mixes the
# faults"): three daemons (a, b, c; -j 4) in cluster mode on a private
# redis-server with MariaDB records on a private mariadbd, the spool on a
# small loop-mounted ext4 file system.  N tasks (default 3000, env N) of
# five kinds — delayed, failing once then retried, failing for good
# (exit 65), failing every attempt until the retries run out, plain with
# a hook result — are dropped into incoming/ over the first half of the
# run, and two per-second jobs run throughout (jf overlap forbid with
# 1.5 s runs, ja overlap allow).  For STRESS_SECONDS (default 120) a
# seeded plan (SEED, default the time; printed) picks one fault every
# 2–5 s:
#   kill9     kill -9 of a random daemon, restarted 1 s later
#   sigstop   SIGSTOP of a daemon (not its hooks) for lease + 2 s
#   redis     redis-server stopped (SHUTDOWN SAVE) for 2–6 s, restarted
#             with its data
#   redisempty  SHUTDOWN NOSAVE, restarted empty after 2–6 s
#   promote   a replica started and synced; the primary shut down NOSAVE;
#             the replica promoted (REPLICAOF NO ONE); a new server on the
#             primary's address syncs from it and is promoted in turn
#             (the address moves to the promoted data set, as a VIP or a
#             Sentinel-managed name would); the replica stopped
#   mariadb   mariadbd stopped for 3–8 s
#   diskfull  the spool's file system filled (dd until ENOSPC) for 3–6 s
#             (skipped, and said so, when no loop device can be mounted)
# Then: every task in exactly one terminal state with one valid result;
# no two attempts of a task overlapping (probe START/END; cluster-lib.sh);
# no attempt that was fenced (logs/<id>/<n>.stale) reported as concluded
# by its hook; no two runs of the forbid job overlapping; MariaDB rows
# equal to the result files (records-lib.sh); nothing left in tmp/ (but
# the temporaries of killed writers) or active/; each kind ending as its
# hook decides.  Prints the count of each fault and each outcome.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
. "$(dirname "$0")/records-lib.sh"

SEED=${SEED:-$(date +%s)}
N=${N:-3000}
SECS=${STRESS_SECONDS:-120}
echo "# seed $SEED (SEED=$SEED to repeat the plan), $N tasks, $SECS s"

# --- the spool on a small file system of its own -----------------------
MNT="$TRASH/mnt"
LOOP=""
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null 2>&1 &&
    dd if=/dev/zero of="$TRASH/disk.img" bs=1M count=0 seek=256 2>/dev/null &&
    mkfs.ext4 -q -F -m 0 -N 120000 "$TRASH/disk.img" >/dev/null 2>&1 &&
    mkdir -p "$MNT" && mount -o loop "$TRASH/disk.img" "$MNT" 2>/dev/null; then
	LOOP=1
	"$TS" init "$MNT/spool" >/dev/null || { echo "Bail out! init on the loop fs"; exit 1; }
	SPOOL="$MNT/spool"
	export TASKSPOOL_SPOOL="$SPOOL"
	sed -i "s|^spool = .*|spool = $SPOOL|" "$CONF"
else
	echo "# no loop device can be mounted here (needs root, mkfs.ext4, /dev/loop*): the diskfull fault is skipped"
fi
# The probes log outside the spool: a full disk must not eat START/END.
PLOG="$TRASH/probe.log"
: >"$PLOG"
ln -s "$PLOG" "$SPOOL/probe.log"

redis_setup private
mdb_own_server
mdb_database
# Tasks are staged on the spool's file system, so that a drop is a
# rename (never a copy cut short by the full disk).
STAGE="$(dirname "$SPOOL")/stage"
RPORT=${REDIS##*:}
R2_DIR="$TRASH/redis2"

chaos_teardown() {
	for _p in $DAEMON_PIDS; do
		tr "\0" " " 2>/dev/null <"/proc/$_p/cmdline" | grep -qF "$TRASH" &&
		    { kill -CONT "$_p"; kill -9 "$_p"; } 2>/dev/null
	done
	sleep 0.3
	[ -n "$LOOP" ] && { rm -f "$MNT/fill" "$MNT/fill2"; umount "$MNT" 2>/dev/null || umount -l "$MNT"; }
	sh "$SERVERS/redis.sh" stop "$R2_DIR" >/dev/null 2>&1
	sh "$SERVERS/redis.sh" stop "$REDIS_DIR" >/dev/null 2>&1
	sh "$MDB_SCRIPT" stop "$MDB_DIR" >/dev/null 2>&1
	cleanup
}
trap chaos_teardown EXIT

# rport PORT CMD...: redis-cli on 127.0.0.1:PORT.
rport() { _rp=$1; shift; redis-cli -h 127.0.0.1 -p "$_rp" "$@"; }
# redis_at PORT DIR [replicaof PORT2]: a server as tests/servers/redis.sh
# starts it, optionally a replica; waits for PING (and the sync).
redis_at() {
	mkdir -p "$2" && : >"$2/redis.log"
	if [ -n "${3:-}" ]; then
		redis-server --bind 127.0.0.1 --port "$1" --dir "$2" --save "" \
		    --appendonly no --daemonize yes --pidfile "$2/redis.pid" \
		    --logfile "$2/redis.log" --replicaof 127.0.0.1 "$3" >/dev/null 2>&1 || return 1
	else
		redis-server --bind 127.0.0.1 --port "$1" --dir "$2" --save "" \
		    --appendonly no --daemonize yes --pidfile "$2/redis.pid" \
		    --logfile "$2/redis.log" >/dev/null 2>&1 || return 1
	fi
	echo "$1" >"$2/redis.port"
	wait_for "test \"\$(rport $1 ping 2>/dev/null)\" = PONG" 20 || return 1
	[ -z "${3:-}" ] || wait_for "rport $1 info replication | grep -q master_link_status:up" 30
}
free_port() {
	while :; do
		_fp=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 12000 ))
		rport "$_fp" ping 2>&1 | grep -q "Could not connect" && { echo "$_fp"; return; }
	done
}

# The faults.  Each appends "<fault> <detail>" to $TRASH/faults.
fault_kill9() {
	kill9_logged "$1" && sleep 1 && rm -f "$SPOOL/state/heartbeat.$1" &&
	    start_daemon "$1" -j 4 && echo "kill9 $1" >>"$TRASH/faults"
}
fault_sigstop() {
	kill -STOP "$(daemon_pid "$1")" && sleep 5 && kill -CONT "$(daemon_pid "$1")" &&
	    echo "sigstop $1 5s" >>"$TRASH/faults"
}
fault_redis() {
	rport "$RPORT" SHUTDOWN SAVE >/dev/null 2>&1
	wait_for "! rport $RPORT ping >/dev/null 2>&1" 10 && sleep "$1" &&
	redis_at "$RPORT" "$REDIS_DIR" && rm -f "$REDIS_DIR/dump.rdb" &&
	echo "redis stop ${1}s" >>"$TRASH/faults"
}
fault_redisempty() {
	rport "$RPORT" SHUTDOWN NOSAVE >/dev/null 2>&1
	wait_for "! rport $RPORT ping >/dev/null 2>&1" 10 && rm -f "$REDIS_DIR/dump.rdb" &&
	sleep "$1" && redis_at "$RPORT" "$REDIS_DIR" &&
	echo "redisempty ${1}s" >>"$TRASH/faults"
}
fault_promote() {
	_p2=$(free_port) &&
	redis_at "$_p2" "$R2_DIR" "$RPORT" &&
	rport "$RPORT" SHUTDOWN NOSAVE >/dev/null 2>&1
	wait_for "! rport $RPORT ping >/dev/null 2>&1" 10 &&
	rport "$_p2" REPLICAOF NO ONE >/dev/null && rm -f "$REDIS_DIR/dump.rdb" &&
	redis_at "$RPORT" "$REDIS_DIR" "$_p2" &&
	rport "$RPORT" REPLICAOF NO ONE >/dev/null &&
	rport "$_p2" SHUTDOWN NOSAVE >/dev/null 2>&1
	rm -f "$R2_DIR/dump.rdb" "$REDIS_DIR/dump.rdb"
	rport "$RPORT" ping >/dev/null && echo "promote via $_p2" >>"$TRASH/faults"
}
fault_mariadb() {
	sh "$MDB_SCRIPT" stop "$MDB_DIR" >/dev/null 2>&1 && sleep "$1" &&
	sh "$MDB_SCRIPT" start "$MDB_DIR" >/dev/null && echo "mariadb stop ${1}s" >>"$TRASH/faults"
}
fault_diskfull() {
	if [ -z "$LOOP" ]; then echo "diskfull skipped (no loop device)" >>"$TRASH/faults"; return 0; fi
	dd if=/dev/zero of="$MNT/fill" bs=1M 2>/dev/null
	dd if=/dev/zero of="$MNT/fill2" bs=4k 2>/dev/null
	sync
	echo "# disk full: $(df -k "$MNT" | awk "NR == 2 { print \$4 }") KiB free"
	sleep "$1"; rm -f "$MNT/fill" "$MNT/fill2"
	echo "diskfull ${1}s" >>"$TRASH/faults"
}

test_expect_success 'schema migrated, three daemons, two per-second jobs (forbid and allow)' '
	: >"$TRASH/kills" && : >"$TRASH/faults" && ts db migrate >/dev/null &&
	start_daemon a -j 4 && start_daemon b -j 4 && start_daemon c -j 4 &&
	printf "{\"jobCode\":\"jf\",\"taskCode\":\"probe\",\"cron\":\"* * * * * ?\",\"dialect\":\"quartz\",\"timezone\":\"UTC\",\"overlap\":\"forbid\",\"maxRetries\":5,\"executeParams\":{\"sleep_ms\":1500,\"log\":\"%s\"}}\n" "$PLOG" >"$TRASH/jf.json" &&
	printf "{\"jobCode\":\"ja\",\"taskCode\":\"probe\",\"cron\":\"* * * * * ?\",\"dialect\":\"quartz\",\"timezone\":\"UTC\",\"overlap\":\"allow\",\"maxRetries\":5,\"executeParams\":{\"sleep_ms\":300,\"log\":\"%s\"}}\n" "$PLOG" >"$TRASH/ja.json" &&
	ts jobs add "$TRASH/jf.json" >/dev/null && ts jobs add "$TRASH/ja.json" >/dev/null
'

# Kinds by i % 5: 0 delayed 1-16 s; 1 fails once (75), retried; 2 exit 65
# (FAILED at once); 3 fails every attempt, 2 retries (FAILED); 4 plain,
# with a hook result.  Kinds 0, 1, 4 have 30 retries so that LOST
# attempts cannot use them up.
test_expect_success "$N tasks under $SECS s of seeded faults" '
	# createdAt as a client (taskspool submit, the API) sets it
	awk -v n=$N -v dir="$STAGE" -v plog="$PLOG" -v now="$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" "BEGIN {
		system(\"mkdir -p \" dir)
		for (i = 1; i <= n; i++) {
			id = sprintf(\"cx-%05d\", i); k = i % 5
			print id >\"$TRASH/ids\"
			print id, k >\"$TRASH/kinds\"
			p = \"\\\"log\\\":\\\"\" plog \"\\\",\\\"sleep_ms\\\":\" ((i * 37) % 400)
			extra = \"\"; r = 30
			if (k == 0) extra = \",\\\"triggerType\\\":\\\"delay\\\",\\\"delayMs\\\":\" (1000 + (i * 53) % 15000)
			else if (k == 1) p = p \",\\\"fail_attempts\\\":1\"
			else if (k == 2) p = p \",\\\"exit\\\":65\"
			else if (k == 3) { p = p \",\\\"fail_attempts\\\":99\"; r = 2 }
			else p = p \",\\\"result\\\":true\"
			f = dir \"/\" id \".json\"
			printf \"{\\\"requestId\\\":\\\"%s\\\",\\\"createdAt\\\":\\\"\" now \"\\\",\\\"taskCode\\\":\\\"probe\\\",\\\"maxRetries\\\":%d,\\\"route\\\":\\\"%s\\\",\\\"executeParams\\\":{%s}%s}\", id, r, (i % 3 ? \"any\" : \"round_robin\"), p, extra >f
			close(f)
		}
	}" &&
	# The drops spread over the first half of the run, 50 at a time.
	( b=0; for f in "$STAGE"/*.json; do
		t=0; until mv "$f" "$SPOOL/incoming/" 2>/dev/null; do
			t=$((t + 1)); [ $t -gt 120 ] && { echo "# drop failed: $f"; break; }
			sleep 0.5
		done
		b=$((b + 1)); [ $((b % 50)) = 0 ] && sleep $(awk -v s=$SECS -v n=$N "BEGIN { printf \"%.2f\", s / 2 / (n / 50) }")
	done ) &
	mover=$!
	awk -v s=$SEED -v t=$SECS "BEGIN { srand(s); split(\"kill9 kill9 kill9 sigstop sigstop redis redisempty promote mariadb diskfull\", f, \" \")
		while (el < t) { d = 2 + int(rand() * 4); el += d
			print d, f[1 + int(rand() * 10)], substr(\"abc\", 1 + int(rand() * 3), 1), 2 + int(rand() * 5) } }" >"$TRASH/plan" &&
	while read -r d fault victim dur; do
		sleep "$d"
		echo "# $(date -u +%T) $fault $victim $dur"
		case $fault in
		kill9) fault_kill9 "$victim" ;;
		sigstop) fault_sigstop "$victim" ;;
		redis) fault_redis "$dur" ;;
		redisempty) fault_redisempty "$dur" ;;
		promote) fault_promote ;;
		mariadb) fault_mariadb "$((dur + 1))" ;;
		diskfull) fault_diskfull "$((dur < 6 ? dur : 6))" ;;
		esac || echo "# fault $fault did not complete"
	done <"$TRASH/plan"
	wait $mover
	ts jobs disable jf >/dev/null && ts jobs disable ja >/dev/null &&
	echo "# faults: $(awk "{ print \$1 }" "$TRASH/faults" | sort | uniq -c | awk "{ printf \"%s %s  \", \$2, \$1 }")" >&3 &&
	grep -q . "$TRASH/faults"
' 3>&1

# pending: files of tasks not yet terminal.
pending() {
	find "$SPOOL/incoming" "$SPOOL/delayed" "$SPOOL/queue" "$SPOOL/active" -type f -name "*.json" | wc -l
}

test_expect_success 'every task ends in exactly one terminal state with one valid result' '
	wait_for "test \$(pending) = 0 && test \$(terminal_count) -ge $N" 400 ||
	    { echo "still pending: $(pending), terminal $(terminal_count)"; }
	# the job tasks that fired join the list of ids
	{ cat "$TRASH/ids"; for d in done failed cancelled; do ls "$SPOOL/$d"; done |
	    sed -n "s/^\(j[fa]\.[^/]*\)\.json\$/\1/p"; } | sort -u >"$TRASH/all.ids" &&
	echo "$(wc -l <"$TRASH/all.ids") ids ($(grep -c "^j" "$TRASH/all.ids") job fires)" &&
	cut -d" " -f1,2 "$TRASH/kills" >"$TRASH/kill.pids" &&
	check_once "$TRASH/all.ids" "$TRASH/kills" &&
	for d in done:SUCCESS failed:FAILED cancelled:CANCELLED; do
		( cd "$SPOOL/${d%%:*}" && ls ) | sed "s/\.json\$//" | while read -r id; do
			# its own id and status; a hook result (kind 4) from the
			# attempt that concluded
			jq -r --arg id "$id" --arg st "${d#*:}" \
			    "if .requestId == \$id and .status == \$st and ((.result | type) != \"object\" or .result.attempt == null or .result.attempt == .attempt) then empty else \"bad result: \" + \$id end" \
			    "$SPOOL/results/$id.json" 2>&1 || echo "bad result: $id (does not parse)"
		done
	done >"$TRASH/bad.results" &&
	! grep . "$TRASH/bad.results"
'

test_expect_success 'nothing lands in corrupt/' '
	ls "$SPOOL/corrupt" | grep -v "\.reason\$" >"$TRASH/corrupt.ls"
	for f in $(cat "$TRASH/corrupt.ls"); do
		echo "$f: $(cat "$SPOOL/corrupt/$f.reason" 2>/dev/null | head -c 200)"
	done
	! grep . "$TRASH/corrupt.ls"
'

test_expect_success 'no two attempts of a task overlap' '
	check_no_overlap
'

test_expect_success 'no fenced attempt wrote a result' '
	test -f "$TRASH/stale.lines" || check_no_overlap >/dev/null
	echo "$(wc -l <"$TRASH/stale.lines") fenced attempts (logs/*/*.stale)" &&
	while read -r _ id att _; do
		jq -r --argjson a "$att" ".attempts[] | select(.attempt == \$a) |
		    select(.outcome != \"LOST\") | \"attempt \(\$a): \(.outcome) by \(.node)\"" \
		    "$SPOOL/results/$id.json" | sed "s/^/$id: /"
	done <"$TRASH/stale.lines" >"$TRASH/fenced.wrote" &&
	! grep . "$TRASH/fenced.wrote"
'

# intervals_of PREFIX: "start end id attempt" (ns) of every attempt of the
# ids starting with PREFIX, the end found as check_no_overlap finds it.
intervals_of() {
	cat "$TRASH/kill.lines" "$TRASH/node.lines" "$TRASH/stale.lines" "$PLOG" | awk -v p="$1" '
		$1 == "KILL"  { nk++; kn[nk] = $4; kill[nk] = $5 + 0; next }
		$1 == "NODE"  { nd[$2 " " $3] = $4
				if ($5 != "LOST" && $6 != "-") fin[$2 " " $3] = $6 * 1000000
				next }
		$1 == "STALE" { st[$2 " " $3] = $4 * 1000000; next }
		index($2, p) != 1 { next }
		$1 == "START" { s[$2 " " $3] = $4 + 0; next }
		$1 == "END"   { e[$2 " " $3] = $4 + 0; next }
		END {
			for (k in s) {
				if (k in e) end = e[k]
				else if (k in st) end = st[k]
				else if (k in fin) end = fin[k]
				else {
					end = 9e18
					for (i = 1; i <= nk; i++)
						if (kn[i] == nd[k] && kill[i] > s[k] && kill[i] < end)
							end = kill[i]
				}
				printf "%d %d %s\n", s[k], end, k
			}
		}' | sort -n
}

test_expect_success 'no two runs of the forbid job overlap' '
	intervals_of jf. >"$TRASH/jf.iv" &&
	echo "$(wc -l <"$TRASH/jf.iv") attempts of jf" && test -s "$TRASH/jf.iv" &&
	awk "NR > 1 && \$1 <= pe { print \"overlap: \" \$3 \" \" \$4 \" starts before \" pid \" ends\"; bad = 1 }
	    { if (\$2 > pe) { pe = \$2; pid = \$3 \" \" \$4 } } END { exit bad }" "$TRASH/jf.iv" &&
	intervals_of ja. >"$TRASH/ja.iv" &&
	echo "$(wc -l <"$TRASH/ja.iv") attempts of ja (overlap allowed)"
'

test_expect_success 'MariaDB rows equal the result files' '
	wait_for "test \$(outbox_count) = 0" 300 || echo "outbox still holds $(outbox_count)"
	rows_match
'

test_expect_success 'nothing left in tmp/ (but killed writers'"'"' temporaries) or active/' '
	find "$SPOOL/active" "$SPOOL/queue" -mindepth 2 -type f >"$TRASH/left.active" &&
	! grep . "$TRASH/left.active" &&
	check_tmp_strays "$TRASH/kills" &&
	test "$(find "$SPOOL/tmp" -mindepth 2 -type f | wc -l)" = 0
'

test_expect_success 'each kind ends as its hook decides (a node problem is never the task'"'"'s)' '
	while read -r id k; do
		st=$(jq -r .status "$SPOOL/results/$id.json" 2>/dev/null)
		case $k in 2|3) want=FAILED ;; *) want=SUCCESS ;; esac
		[ "$st" = "$want" ] || echo "$id kind $k: $st, want $want"
	done <"$TRASH/kinds" >"$TRASH/wrong.kind" &&
	! grep . "$TRASH/wrong.kind"
'

test_expect_success 'the outcome counts' '
	(cd "$SPOOL/results" && find . -name "*.json" -print | xargs -r jq -r .status) | sort | uniq -c |
	    awk "{ printf \"%s %s  \", \$2, \$1 }" >"$TRASH/st.count" &&
	(cd "$SPOOL/results" && find . -name "*.json" -print | xargs -r jq -r ".attempts[].outcome") | sort | uniq -c |
	    awk "{ printf \"%s %s  \", \$2, \$1 }" >"$TRASH/att.count" &&
	echo "# tasks: $(cat "$TRASH/st.count")" >&3 &&
	echo "# attempts: $(cat "$TRASH/att.count")" >&3 &&
	echo "# faults: $(awk "{ print \$1 }" "$TRASH/faults" | sort | uniq -c | awk "{ printf \"%s %s  \", \$2, \$1 }")" >&3
' 3>&1

test_expect_success 'daemons stop' '
	stop_daemon a && stop_daemon b && stop_daemon c
'

test_done
