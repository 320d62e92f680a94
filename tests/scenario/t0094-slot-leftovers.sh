#!/bin/sh
# A limit slot outlives a daemon killed with -9 while what is left of its
# hook runs (README.md "Per-key concurrency", "maxConcurrent"; embedded
# mode): the hook's process tree inherits the descriptors that hold its
# slots (a flock of state/limits/<code>.<i>, an OFD lock of
# state/limits/keys/<code>), so a grandchild that outlives the hook's
# PR_SET_PDEATHSIG keeps the slot until the recovery kills it, and no
# other attempt of that code or key starts beside it.
#  - max_concurrent_per_key lf=1, two daemons: task A's hook leaves a
#    background process (its pid in left.<A>) and waits; the daemon
#    running A is killed with -9 and task B of the same key is dropped at
#    once: B's hook finds A's leftover gone (or a zombie) when it starts.
#    Before, the kernel freed the slot with the daemon and B started
#    beside the leftover (235-420 ms of overlap, measured).
#  - the same with max_concurrent lf2=1 (a code's slot, no key).
#  - a hook that ended normally but left a process behind that escaped
#    the daemon's end-of-attempt kill (another session, no environment)
#    does not keep its slot: the daemon unlocks it explicitly (the next
#    task of the key starts while that process still runs).
#  - two spools on one host, one node id and one requestId in both: the
#    recovery after a kill -9 in one kills no hook of the other;
#  - a waiting task's file replaced by a task of a code without a limit
#    runs at once (it was left waiting behind the old code's limit); a
#    waiting file deleted leaves no state/waiting/ marker behind;
#  - a spool copied (cp -a) after a kill -9 and before the restart: the
#    recovery still kills the leftovers (state/spool-id goes with it).
. "$(dirname "$0")/test-lib.sh"
echo "fsync = 0" >>"$CONF"
echo "max_concurrent_per_key = lf=1" >>"$CONF"
echo "max_concurrent = lf2=1,gt=1" >>"$CONF"

# The hook: ids *-a* (attempt 1) leave a process behind and wait to be
# killed; *-b* record whether that leftover ($TRASH/left.<name of a>)
# still runs; *-n* leave a process behind and end at once.
cat >"$HOOKS/lf" <<H
#!/bin/sh
id=\$TASKSPOOL_REQUEST_ID
echo "START \$id \$(date +%s%N)" >>"$TRASH/lf.log"
case \$id in
*-a*)	if [ "\$TASKSPOOL_ATTEMPT" = 1 ]; then
		sh -c 'echo \$\$ >"$TRASH/left.\$TASKSPOOL_REQUEST_ID.tmp" &&
		    mv "$TRASH/left.\$TASKSPOOL_REQUEST_ID.tmp" "$TRASH/left.\$TASKSPOOL_REQUEST_ID" &&
		    exec sleep 20' </dev/null >/dev/null 2>&1 &
		exec sleep 60
	fi;;
*-b*)	a=\$(echo "\$id" | sed 's/-b/-a/')
	p=\$(cat "$TRASH/left.\$a" 2>/dev/null)
	st=gone
	if [ -n "\$p" ] && [ -r /proc/\$p/status ]; then
		st=\$(awk '/^State:/ { print \$2 }' /proc/\$p/status)
		[ -z "\$st" ] && st=gone
	fi
	echo "LEFTOVER \$id \$st" >>"$TRASH/lf.log";;
*-n*)	# out of its group and without its tags: the daemon's end-of-
	# attempt kill cannot find it, and it keeps the slot descriptor
	env -i setsid sh -c 'echo \$\$ >"\$0"; exec sleep 5' \
	    "$TRASH/left.\$id" </dev/null >/dev/null 2>&1 &
	while [ ! -s "$TRASH/left.\$id" ]; do sleep 0.05; done;;
esac
exit 0
H
chmod +x "$HOOKS/lf"
cp "$HOOKS/lf" "$HOOKS/lf2"

# alive PID: PID runs (not gone, not a zombie).
alive() {
	[ -r "/proc/$1/status" ] && ! grep -q "^State:.*Z" "/proc/$1/status"
}

task() {	# task ID CODE: a task of key "k" (lf's limit) or code CODE
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"$2\",\"concurrencyKey\":\"k\"}"
}

test_expect_success 'two daemons' '
	start_daemon n1 -j 2 && start_daemon n2 -j 2
'

# case PREFIX CODE: A runs and leaves a process, its daemon is killed
# with -9, B of the same key (code) starts only when the leftover is gone.
leftover_case() {
	task $1-a $2 &&
	wait_for "test -e \"$TRASH/left.$1-a\"" 20 &&
	victim=$(basename "$(dirname "$(find "$SPOOL/active" -name "$1-a.json" | head -1)")") &&
	echo "# kill -9 of node $victim, which runs $1-a" &&
	kill -9 "$(daemon_pid "$victim")" &&
	task $1-b $2 &&
	wait_for "grep -q \"^LEFTOVER $1-b \" \"$TRASH/lf.log\"" 60 &&
	grep "^LEFTOVER $1-b " "$TRASH/lf.log" &&
	grep -Eq "^LEFTOVER $1-b (gone|Z)$" "$TRASH/lf.log" &&
	wait_for "test -e \"$SPOOL/done/$1-a.json\" && test -e \"$SPOOL/done/$1-b.json\"" 60 &&
	start_daemon "$victim" -j 2
}

test_expect_success 'per-key slot: after kill -9, B waits for A'"'"'s leftover' '
	leftover_case k lf
'

test_expect_success 'code slot (max_concurrent): after kill -9, B waits for A'"'"'s leftover' '
	leftover_case c lf2
'

test_expect_success 'a hook that ended leaves no slot held: the next of its key starts beside its leftover' '
	task n-n lf &&
	wait_for "test -e \"$SPOOL/done/n-n.json\"" 20 &&
	wait_for "test -e \"$TRASH/left.n-n\"" 5 &&
	p=$(cat "$TRASH/left.n-n") && alive $p &&
	task n-x lf &&
	wait_for "test -e \"$SPOOL/done/n-x.json\"" 10 &&
	echo "# n-x done; the leftover $p of n-n still runs:" &&
	alive $p && kill "$p"
'

test_expect_success 'daemons stop' '
	stop_daemon n1 && stop_daemon n2
'

# Two spools on one host, a daemon of one node id on each and a task of
# one requestId in both: the recovery in one kills no hook of the other
# (TASKSPOOL_SPOOL_ID; before, the requestId and node tags matched both).
# gt waits for $TRASH/go.<id>; nolim has no limit.
printf '#!/bin/sh\nwhile [ ! -e "%s/go.$TASKSPOOL_REQUEST_ID" ]; do sleep 0.05; done\n' "$TRASH" >"$HOOKS/gt" &&
    chmod +x "$HOOKS/gt"
printf '#!/bin/sh\nexit 0\n' >"$HOOKS/nolim" && chmod +x "$HOOKS/nolim"
printf '#!/bin/sh\nsleep 3\nexit 0\n' >"$HOOKS/long" && chmod +x "$HOOKS/long"
test_expect_success 'a recovery in one spool leaves the hooks of another spool alone' '
	"$TS" init "$TRASH/spool2" >/dev/null &&
	sed "s|^spool = .*|spool = $TRASH/spool2|" "$CONF" >"$TRASH/conf2" &&
	"$TSD" -d -c "$TRASH/conf2" -s "$TRASH/spool2" -i twin >>"$TRASH/log.x" 2>&1 &
	echo $! >"$TRASH/pid.x" && DAEMON_PIDS="$DAEMON_PIDS $(cat "$TRASH/pid.x")" &&
	start_daemon twin &&
	wait_for "test -f \"$TRASH/spool2/state/heartbeat.twin\"" 10 &&
	"$TS" -c "$TRASH/conf2" -s "$TRASH/spool2" submit --code long --id twin-1 >/dev/null &&
	ts submit --code long --id twin-1 >/dev/null &&
	wait_for "test -e \"$TRASH/spool2/active/twin/twin-1.json\" && test -e \"$SPOOL/active/twin/twin-1.json\"" 10 &&
	yp=$(daemon_pid twin) && kill -9 "$yp" &&
	# (its threads may outlive the main one for a moment: the node
	# lock is free once the last is gone)
	wait_for "flock -n \"$SPOOL/state/node.twin.lock\" true" 10 &&
	start_daemon twin &&
	wait_for "grep -q \"twin-1: attempt 1 on node twin lost\" \"$TRASH/log.twin\"" 20 &&
	wait_for "test -e \"$TRASH/spool2/done/twin-1.json\"" 20 &&
	grep "twin-1" "$TRASH/log.x" &&
	grep -q "twin-1: SUCCESS (attempt 1)" "$TRASH/log.x" &&
	wait_for "test -e \"$SPOOL/done/twin-1.json\"" 20 &&
	stop_daemon twin && kill -TERM "$(cat "$TRASH/pid.x")"
'

test_expect_success 'a waiting file replaced by a new task runs as that task; a deleted one leaves no WAITING marker' '
	start_daemon n1 -j 4 &&
	drop g0.json "{\"requestId\":\"g0\",\"taskCode\":\"gt\"}" &&
	wait_for "test -e \"$SPOOL/active/n1/g0.json\"" 10 &&
	drop w1.json "{\"requestId\":\"w1\",\"taskCode\":\"gt\"}" &&
	drop w2.json "{\"requestId\":\"w2\",\"taskCode\":\"gt\"}" &&
	wait_for "test -e \"$SPOOL/state/waiting/w1\" && test -e \"$SPOOL/state/waiting/w2\"" 10 &&
	sleep 0.1 &&
	drop w1.json "{\"requestId\":\"w1\",\"taskCode\":\"nolim\"}" &&
	wait_for "test -e \"$SPOOL/done/w1.json\"" 10 &&
	rm "$SPOOL/incoming/w2.json" &&
	touch "$TRASH/go.g0" &&
	wait_for "test -e \"$SPOOL/done/g0.json\"" 10 &&
	wait_for "test ! -e \"$SPOOL/state/waiting/w2\"" 10 &&
	stop_daemon n1
'

test_expect_success 'a spool copied or restored before the restart: the recovery still kills its leftovers' '
	start_daemon n1 -j 2 &&
	task r-a lf &&
	wait_for "test -e \"$TRASH/left.r-a\"" 20 &&
	p=$(cat "$TRASH/left.r-a") && alive $p &&
	yp=$(daemon_pid n1) && kill -9 "$yp" && wait_for "! alive $yp" 10 &&
	mv "$SPOOL" "$SPOOL.old" && cp -a "$SPOOL.old" "$SPOOL" &&
	start_daemon n1 -j 2 &&
	wait_for "grep -q \"r-a: killed 1 leftover\" \"$TRASH/log.n1\"" 20 &&
	wait_for "! alive $p" 10 &&
	wait_for "test -e \"$SPOOL/done/r-a.json\"" 20 &&
	stop_daemon n1 && rm -rf "$SPOOL.old"
'

test_done
