#!/bin/sh
# Disk full (issue 11 item 6), on a real full file system: the spool lives
# on a 20 MiB ext4 image mounted through a loop device (root only; every
# test is a TAP SKIP where that cannot be done), filled with a
# filler directory (fill).
#
#  1. Two hooks run when the disk fills; six more tasks wait.  The two end
#     while it is full: their results cannot be written, the daemon goes
#     into back-pressure — no hook starts (START lines of the hooks, kept
#     outside the small file system), taskspool_backpressure{reason=
#     "enospc"} 1 in metrics/, a BACK-PRESSURE line in `taskspool status`,
#     one "spool cannot take writes" warning and no flood of ENOSPC lines.
#     The output the two printed while full is named in their attempts'
#     reason ("stdout lost: logs/ write failed: No space left on device").
#     The filler removed: all eight tasks finish with valid results, each
#     hook started once, the gauge back to 0.
#  2. MariaDB (its datadir outside the small file system): the same
#     disk-full period with two tasks, then outbox/records/ made immutable
#     (chattr +i) while their results are written — the RESULT records
#     are lost as when the disk fills between the result and its record,
#     and their rows were RUNNING: the reconcile pass (records_reconcile_sec
#     = 2; nothing else writes them) writes the rows from results/.  At
#     the end the rows equal the result files (records-lib.sh rows_match),
#     also those of part 1, run without MariaDB: the pass at the daemon's
#     start wrote them.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/records-lib.sh"

IMG="$TRASH/img"
MNT="$TRASH/mnt"
mounted=""

df_cleanup() {
	for _p in $DAEMON_PIDS; do kill -9 "$_p" 2>/dev/null; done
	sleep 0.2
	[ -n "$mounted" ] && umount "$MNT" 2>/dev/null
	[ -n "$mounted" ] && umount -l "$MNT" 2>/dev/null
	mdb_cleanup
}
trap df_cleanup EXIT

skip=""
if [ "$(id -u)" != 0 ]; then
	skip="not root: no loop mount"
elif ! command -v mkfs.ext4 >/dev/null || ! command -v losetup >/dev/null; then
	skip="mkfs.ext4 or losetup missing"
else
	mkdir -p "$MNT" && truncate -s 20M "$IMG" && mkfs.ext4 -q -F "$IMG" \
	    >/dev/null 2>&1 && mount -o loop "$IMG" "$MNT" 2>/dev/null &&
	    mounted=1 || skip="loop devices unavailable"
fi
if [ -n "$skip" ]; then
	echo "ok 1 - disk full # SKIP $skip"
	echo "1..1"
	exit 0
fi

# The spool on the small file system; hooks, logs of the hooks and the
# daemon's log outside it.
SPOOL="$MNT/spool"
"$TS" init "$SPOOL" >/dev/null || { echo "Bail out! init on $MNT"; exit 1; }
sed -i "s|^spool = .*|spool = $SPOOL|" "$CONF"
export TASKSPOOL_SPOOL="$SPOOL"
HLOG="$TRASH/hooks.log"
cat >"$HOOKS/slow" <<EOF
#!/bin/sh
echo "START \$TASKSPOOL_REQUEST_ID" >>"$HLOG"
sleep 3
echo "output of \$TASKSPOOL_REQUEST_ID, printed while the disk is full"
echo "END \$TASKSPOOL_REQUEST_ID" >>"$HLOG"
EOF
cat >"$HOOKS/quick" <<EOF
#!/bin/sh
echo "START \$TASKSPOOL_REQUEST_ID" >>"$HLOG"
echo "output of \$TASKSPOOL_REQUEST_ID"
echo "END \$TASKSPOOL_REQUEST_ID" >>"$HLOG"
EOF
chmod +x "$HOOKS/slow" "$HOOKS/quick"
: >"$HLOG"

starts() { grep -c "^START " "$HLOG"; }
gauge() {
	sed -n "s/^taskspool_backpressure{node=\"$1\",reason=\"enospc\"} //p" \
	    "$SPOOL/metrics/$1.prom" 2>/dev/null
}
# fill: $MNT/filler/ takes every free block: one file written (and
# fsynced) until ENOSPC, then 1 KiB files until not even one fits (ext4
# keeps blocks that a single dd of root's does not take).
fill() {
	python3 - "$MNT/filler" <<'PY'
import os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "big"), "wb") as f:
    try:
        while True:
            f.write(b"\0" * 65536); f.flush(); os.fsync(f.fileno())
    except OSError:
        pass
n = 0
while True:
    try:
        fd = os.open(os.path.join(d, "f%d" % n), os.O_WRONLY | os.O_CREAT)
    except OSError:
        break
    try:
        os.write(fd, b"\0" * 1024); os.fsync(fd)
    except OSError:
        os.close(fd); break
    os.close(fd); n += 1
PY
}
# valid_results IDS...: each result parses, says SUCCESS and names it.
valid_results() {
	for _i in "$@"; do
		jq -e --arg i "$_i" '.requestId == $i and .status == "SUCCESS"' \
		    "$SPOOL/results/$_i.json" >/dev/null || { echo "bad result $_i"; return 1; }
	done
}

test_expect_success 'two hooks running, six tasks waiting, then the disk fills' '
	start_daemon n1 -j 2 &&
	ts submit --code slow --id s1 >/dev/null &&
	ts submit --code slow --id s2 >/dev/null &&
	wait_for "test \$(starts) -eq 2" 10 &&
	for k in 1 2 3 4 5 6; do
		ts submit --code quick --id "q$k" >/dev/null || return 1
	done &&
	test "$(ls "$SPOOL/incoming" | wc -l)" -eq 6 &&
	fill &&
	! echo x >"$MNT/probe.$$" 2>/dev/null
'

test_expect_success 'the two end while full: back-pressure, no hook starts, in metrics and status' '
	wait_for "test \$(grep -c ^END $HLOG) -eq 2" 15 &&
	wait_for "test \"\$(gauge n1)\" = 1" 10 &&
	sleep 4 &&
	echo "hook starts: $(starts)" &&
	test "$(starts)" -eq 2 &&
	test "$(ls "$SPOOL/incoming" | wc -l)" -eq 6 &&
	test "$(ls "$SPOOL/active/n1" | wc -l)" -eq 2 &&
	test ! -e "$SPOOL/results/s1.json" &&
	ts status >"$TRASH/status.out" && cat "$TRASH/status.out" &&
	grep -q "^BACK-PRESSURE n1 (enospc)" "$TRASH/status.out" &&
	ts status --json | jq -e ".backpressure == [{\"node\":\"n1\",\"reason\":\"enospc\"}]"
'

test_expect_success 'the log: one back-pressure warning, no ENOSPC flood' '
	n=$(grep -c "spool cannot take writes" "$TRASH/log.n1") &&
	m=$(grep -c "No space left on device" "$TRASH/log.n1") &&
	echo "back-pressure warnings: $n; lines naming ENOSPC: $m" &&
	test "$n" -eq 1 &&
	test "$m" -le 12
'

test_expect_success 'the filler removed: all eight finish with valid results, each hook started once' '
	rm -rf "$MNT/filler" && sync &&
	for i in s1 s2 q1 q2 q3 q4 q5 q6; do wait_terminal "$i" 30 || return 1; done &&
	valid_results s1 s2 q1 q2 q3 q4 q5 q6 &&
	test "$(starts)" -eq 8 &&
	test "$(sort "$HLOG" | uniq -d | wc -l)" -eq 0 &&
	grep -q "spool takes writes again" "$TRASH/log.n1" &&
	wait_for "test \"\$(gauge n1)\" = 0" 10 &&
	! ts status | grep -q BACK-PRESSURE
'

test_expect_success 'the output lost while full is named in the attempts'"'"' reason' '
	for i in s1 s2; do
		jq -r ".attempts[-1].reason" "$SPOOL/results/$i.json" >"$TRASH/reason" &&
		cat "$TRASH/reason" &&
		grep -q "stdout lost: logs/ write failed: No space left on device" "$TRASH/reason" || return 1
	done &&
	jq -r ".attempts[-1].reason" "$SPOOL/results/q1.json" | grep -vq lost
'

# A daemon killed with -9 while full: restarted (without waiting for a
# heartbeat it cannot write), its recovery of the attempt it left cannot
# queue the retry (ENOSPC), the file stays in active/n1/; once the spool
# takes writes its own recovery runs again (found by a breaker: the task
# stayed RUNNING until a restart).
test_expect_success 'kill -9 while full, restarted: the task its recovery could not requeue runs once space is back' '
	ts submit --code slow --id k1 >/dev/null &&
	wait_for "test \$(grep -c \"^START k1\$\" $HLOG) -eq 1" 10 &&
	fill &&
	wait_for "grep -q \"^END k1\$\" $HLOG" 10 && sleep 0.5 &&
	kill9_daemon n1 &&
	{ "$TSD" -d -c "$CONF" -i n1 -j 2 >>"$TRASH/log.n1" 2>&1 &
	  echo $! >"$TRASH/pid.n1"; DAEMON_PIDS="$DAEMON_PIDS $!"; } &&
	wait_for "grep -q \"k1: cannot queue retry\" $TRASH/log.n1" 20 &&
	test -e "$SPOOL/active/n1/k1.json" &&
	rm -rf "$MNT/filler" && sync &&
	wait_terminal k1 30 &&
	valid_results k1 &&
	test ! -e "$SPOOL/active/n1/k1.json" ||
	{ rm -rf "$MNT/filler"; return 1; }
'

test_expect_success 'it stops cleanly' 'stop_daemon n1'

# --- 2. MariaDB: rows repaired by the reconcile pass ---------------------

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
	echo "ok $((test_count + 1)) - MariaDB rows after a disk-full period # SKIP no mariadbd"
	test_count=$((test_count + 1))
	test_done
	exit $?
fi
mdb_own_server		# datadir $TRASH/mariadb: not on the small disk
mdb_database
echo "records_reconcile_sec = 2" >>"$CONF"

test_expect_success 'MariaDB: two tasks finish while the disk is full, their records then lost' '
	ts db migrate >/dev/null &&
	start_daemon m1 -j 2 &&
	ts submit --code slow --id d1 >/dev/null &&
	ts submit --code slow --id d2 >/dev/null &&
	wait_for "test \$(grep -c \"^START d\" $HLOG) -eq 2" 10 &&
	wait_for "test \"\$(sql \"SELECT COUNT(*) FROM task_execution WHERE status = '"'"'RUNNING'"'"'\")\" = 2" 20 &&
	fill &&
	wait_for "test \$(grep -c \"^END d\" $HLOG) -eq 2" 15 &&
	wait_for "test \"\$(gauge m1)\" = 1" 10 &&
	if ! chattr +i "$SPOOL/outbox/records" 2>/dev/null; then
		echo "chattr +i not available: the records are not lost" && : >"$TRASH/nochattr"
	fi
	rm -rf "$MNT/filler" && sync &&
	wait_terminal d1 30 && wait_terminal d2 30 &&
	valid_results d1 d2 &&
	if [ ! -e "$TRASH/nochattr" ]; then
		wait_for "grep -q \"d2: cannot write its record to outbox/records/\" $TRASH/log.m1" 10 &&
		grep "d1: cannot write its record to outbox/records/" "$TRASH/log.m1"
	fi
'

test_expect_success 'MariaDB: the reconcile pass writes their rows from results/: rows equal the result files' '
	chattr -i "$SPOOL/outbox/records" 2>/dev/null
	wait_for "test \"\$(sql \"SELECT COUNT(*) FROM task_execution WHERE status = '"'"'SUCCESS'"'"' AND request_id IN ('"'"'d1'"'"','"'"'d2'"'"')\")\" = 2" 20 &&
	# rows were RUNNING, their RESULT records lost: the reconcile wrote them
	grep "records: reconcile: .* row(s) written from results/" "$TRASH/log.m1" &&
	wait_for "test \$(outbox_count) -eq 0" 20 &&
	rows_match
'

test_expect_success 'MariaDB: it stops cleanly' 'stop_daemon m1'

test_done
