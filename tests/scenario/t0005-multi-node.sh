#!/bin/sh
# Several daemons on one spool (C2/C12: B57 scan/watch race, no duplicate,
# nothing lost): 1,000 tasks dropped by hand (tmp/ + mv) while nodes a, b
# and c (-j 2 each) run; a starts before the drop, b and c during it, so
# each of b and c installs its watch and scans incoming/ while files keep
# arriving.  Every task must run exactly once and end in done/ with one
# result: each claim rename lost to another node (ENOENT) is skipped
# quietly, the local form of B59's NFS rename races; an NFS silly-rename
# file (.nfsXXXX) in incoming/ is left alone (B59); a daemon blind to
# inotify (as on NFS for other hosts' writes) finds files by rescans (B58).
# The 1,000-file backlog is B61's short form (s0001 queues 10,000+ at once;
# the claim latency against the backlog is a `make bench` number).
. "$(dirname "$0")/test-lib.sh"

N=1000
ids() { i=1; while [ $i -le $N ]; do printf 'mn-%04d\n' $i; i=$((i + 1)); done; }

# dropper: publishes the N task files by the writer protocol; after the
# first third (and the second) it waits, still dropping nothing, until the
# next daemon is up, then goes on: so b and c start while files arrive.
dropper() {
	i=1
	while [ $i -le $N ]; do
		id=$(printf 'mn-%04d' $i)
		printf '{"requestId":"%s","taskCode":"probe","executeParams":{"sleep_ms":%d}}' \
		    "$id" $(( (i * 7) % 21 )) >"$SPOOL/tmp/drop.$id"
		mv "$SPOOL/tmp/drop.$id" "$SPOOL/incoming/$id.json" || return 1
		echo $i >"$TRASH/dropped"
		case $i in
		380) until [ -f "$SPOOL/state/heartbeat.b" ]; do sleep 0.01; done;;
		720) until [ -f "$SPOOL/state/heartbeat.c" ]; do sleep 0.01; done;;
		esac
		i=$((i + 1))
	done
}

# B59: an NFS client renames a file that is still open when it is removed
# to .nfsXXXX ("silly rename"); such names are never tasks.
NFS_SILLY=.nfs0000000000c0ffee00000001
printf '{"requestId":"nfs1","taskCode":"probe"}' >"$SPOOL/tmp/silly" &&
mv "$SPOOL/tmp/silly" "$SPOOL/incoming/$NFS_SILLY"

test_expect_success 'node a starts before the drop' 'start_daemon a -j 2'

test_expect_success 'drop 1000 tasks; b and c start during the drop' '
	echo 0 >"$TRASH/dropped" &&
	{ dropper & } &&
	dpid=$! &&
	wait_for "test \$(cat $TRASH/dropped) -ge 333" 60 &&
	start_daemon b -j 2 &&
	wait_for "test \$(cat $TRASH/dropped) -ge 666" 60 &&
	start_daemon c -j 2 &&
	wait $dpid &&
	test "$(cat "$TRASH/dropped")" = $N
'

test_expect_success 'all 1000 reach done/ (bounded wait)' '
	wait_for "test \$(count_files $SPOOL/done) -ge $N" 80 &&
	test "$(count_files "$SPOOL/done")" = $N &&
	test "$(count_files "$SPOOL/results")" = $N
'

test_expect_success 'each id: in done/ only, one SUCCESS result with one attempt' '
	ids >"$TRASH/ids" &&
	ls "$SPOOL/done" | sed "s/\.json\$//" | sort >"$TRASH/done.ids" &&
	ls "$SPOOL/results" | sed "s/\.json\$//" | sort >"$TRASH/res.ids" &&
	diff "$TRASH/ids" "$TRASH/done.ids" &&
	diff "$TRASH/ids" "$TRASH/res.ids" &&
	test "$(count_files "$SPOOL/failed")" = 0 &&
	test "$(count_files "$SPOOL/cancelled")" = 0 &&
	test "$(ls "$SPOOL/corrupt" | wc -l)" = 0 &&
	(cd "$SPOOL/results" && jq -r "[.requestId, .status, (.attempts|length), .attempts[0].outcome, .attempts[0].node] | @tsv" *.json) |
	    sort >"$TRASH/res.tsv" &&
	test "$(wc -l <"$TRASH/res.tsv")" = $N &&
	awk -F"\t" "\$2 != \"SUCCESS\" || \$3 != 1 || \$4 != \"SUCCESS\" { print \"bad result:\", \$0; bad = 1 } END { exit bad }" "$TRASH/res.tsv" &&
	cut -f1 "$TRASH/res.tsv" | diff "$TRASH/ids" -
'

test_expect_success 'B59: the .nfsXXXX file in incoming/ was neither run nor quarantined' '
	test -f "$SPOOL/incoming/$NFS_SILLY" &&
	test ! -e "$SPOOL/results/nfs1.json" &&
	! grep -q "^START nfs1 " "$SPOOL/probe.log" &&
	test "$(ls -A "$SPOOL/corrupt" | wc -l)" = 0 &&
	rm "$SPOOL/incoming/$NFS_SILLY"
'

test_expect_success 'nothing left in incoming/ delayed/ active/*/; no task file in tmp/' '
	test "$(count_files "$SPOOL/incoming")" = 0 &&
	test "$(count_files "$SPOOL/delayed")" = 0 &&
	test "$(find "$SPOOL/active" -mindepth 2 -type f | wc -l)" = 0 &&
	test "$(find "$SPOOL/tmp" -type f | wc -l)" = 0
'

test_expect_success 'probe.log: each id exactly one START and one END, paired, no overlap' '
	awk -v n=$N "
		\$1 == \"START\" { s[\$2]++; sa[\$2 \" \" \$3] = \$4; k[\$2] = 1 }
		\$1 == \"END\"   { e[\$2]++; ea[\$2 \" \" \$3] = \$4; k[\$2] = 1
				 if (\$5 != 0) { print \"exit\", \$0; bad = 1 } }
		\$1 != \"START\" && \$1 != \"END\" { print \"junk:\", \$0; bad = 1 }
		END {
			for (id in k) {
				ids++
				if (s[id] != 1 || e[id] != 1) {
					print id, s[id] + 0, \"START\", e[id] + 0, \"END\"; bad = 1
				} else if (!((id \" 1\") in sa) || !((id \" 1\") in ea) ||
				    sa[id \" 1\"] + 0 > ea[id \" 1\"] + 0) {
					print id, \"START/END not a pair of attempt 1\"; bad = 1
				}
			}
			if (ids != n) { print ids, \"ids in probe.log, want\", n; bad = 1 }
			exit bad
		}" "$SPOOL/probe.log"
'

test_expect_success 'each node ran some tasks (split reported)' '
	cut -f5 "$TRASH/res.tsv" | sort | uniq -c >"$TRASH/split" &&
	echo "# split: $(tr -s " \n" " " <"$TRASH/split")" >&3 &&
	test "$(cut -f5 "$TRASH/res.tsv" | grep -cx a)" -gt 0 &&
	test "$(cut -f5 "$TRASH/res.tsv" | grep -cx b)" -gt 0 &&
	test "$(cut -f5 "$TRASH/res.tsv" | grep -cx c)" -gt 0
' 3>&1

test_expect_success 'taskspool list --state SUCCESS lists 1000' '
	test "$(ts list --state SUCCESS | wc -l)" = $N &&
	test "$(ts list --state PENDING | wc -l)" = 0 &&
	test "$(ts list --state RUNNING | wc -l)" = 0
'

test_expect_success 'daemons drain and stop' '
	stop_daemon a && stop_daemon b && stop_daemon c
'

# B58: inotify sees no file written by another NFS client; a daemon then
# finds work by its periodic rescans (and, in cluster mode, by the Redis
# wake-ups of t0044).  inotify = 0 makes this host blind in the same way.
test_expect_success 'B58: with inotify = 0, 20 files dropped without a wake-up are found by the rescans' '
	start_daemon blind -j 2 -o inotify=0 &&
	grep -q "inotify = 0: new files are found by rescans" "$TRASH/log.blind" &&
	for k in $(seq 1 20); do
		drop "bl$k.json" "{\"requestId\":\"bl$k\",\"taskCode\":\"probe\"}" || return 1
	done &&
	for k in $(seq 1 20); do wait_terminal "bl$k" 30 || return 1; done &&
	test "$(ls "$SPOOL/done" | grep -c "^bl[0-9]*\.json\$")" = 20 &&
	test "$(grep -c "^START bl[0-9]* 1 " "$SPOOL/probe.log")" = 20 &&
	stop_daemon blind
'

test_done
