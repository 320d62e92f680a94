#!/bin/sh
# Resource limits of hooks (hook_limit_* keys, setrlimit(2) in the child
# between vfork and execve): a hook reads its own limits from
# /proc/self/limits and `ulimit` and they are the configured values (soft
# and hard; RLIMIT_CPU's hard one second above); a key at 0 leaves the
# daemon's limit; a CPU-bound hook with hook_limit_cpu_sec = 1 ends FAILED
# with SIGXCPU named in its failure reason, and one that ignores SIGXCPU
# is killed by SIGKILL at the hard limit, said so too; a write past
# hook_limit_fsize_bytes kills with SIGXFSZ, or fails with EFBIG (the file
# stops at the limit) when the hook ignores that signal; SIGHUP applies
# new values; values the daemon cannot give are refused at start-up.
. "$(dirname "$0")/test-lib.sh"

cat >"$HOOKS/limits" <<'H'
#!/bin/sh
# /proc/self/limits of cat, which inherits the hook's limits.
cat /proc/self/limits >limits.txt
n=$(ulimit -n)
v=$(ulimit -v)
printf '{"nofile":"%s","vkb":"%s"}\n' "$n" "$v" >"$TASKSPOOL_RESULT_FILE"
cp limits.txt "$TASKSPOOL_REQUEST_ID.limits" 2>/dev/null
cat limits.txt
H
cat >"$HOOKS/spin" <<'H'
#!/bin/sh
while :; do :; done
H
cat >"$HOOKS/spin_ignore" <<'H'
#!/bin/sh
trap '' XCPU
while :; do :; done
H
cat >"$HOOKS/bigfile" <<'H'
#!/bin/sh
exec head -c 2000000 /dev/zero >big
H
cat >"$HOOKS/bigfile_ignore" <<'H'
#!/bin/sh
trap '' XFSZ
head -c 2000000 /dev/zero >big
rc=$?
printf '{"rc":%d,"size":%d}\n' "$rc" "$(stat -c %s big)" >"$TASKSPOOL_RESULT_FILE"
H
chmod +x "$HOOKS/limits" "$HOOKS/spin" "$HOOKS/spin_ignore" \
    "$HOOKS/bigfile" "$HOOKS/bigfile_ignore"
echo "fsync = 0" >>"$CONF"
cp "$CONF" "$TRASH/base.conf"

res() { jq -r "$2" "$SPOOL/results/$1.json"; }
# limit_line ID NAME: "soft hard" of the line of /proc/self/limits that
# starts with NAME, as the hook saw it (its stdout log).
limit_line() {
	grep "^$2 " "$SPOOL/logs/$1/1.out" | sed "s/^$2  *//" | awk '{print $1, $2}'
}
# killed_by ID SIGNUM TEXT: the task FAILED, its only attempt killed by
# signal SIGNUM, and its failure reason holds TEXT (a grep pattern).
killed_by() {
	test "$(res "$1" .status)" = FAILED &&
	test "$(res "$1" .failureReason.code)" = WORKER_SIGNAL &&
	test "$(res "$1" ".attempts[0].signal")" = "$2" &&
	res "$1" .failureReason.message | grep -q "$3"
}
submit() { ts submit --id "$1" --code "$2" --retries 0 --timeout 120 >/dev/null; }

test_expect_success 'daemon starts with nofile 64, as 512 MiB, fsize 1000000' '
	cat >>"$CONF" <<-C &&
	hook_limit_nofile = 64
	hook_limit_as_bytes = 536870912
	hook_limit_fsize_bytes = 1000000
	C
	start_daemon n1 -j 2
'

test_expect_success 'a hook sees exactly the configured limits (soft = hard)' '
	submit lim1 limits && wait_terminal lim1 30 &&
	test "$(res lim1 .status)" = SUCCESS &&
	test "$(limit_line lim1 "Max open files")" = "64 64" &&
	test "$(limit_line lim1 "Max address space")" = "536870912 536870912" &&
	test "$(limit_line lim1 "Max file size")" = "1000000 1000000" &&
	test "$(res lim1 .result.nofile)" = 64 &&
	test "$(res lim1 .result.vkb)" = $((536870912 / 1024))
'

test_expect_success 'a key at 0 leaves the daemon'"'"'s own limit' '
	want=$(grep "^Max cpu time " "/proc/$(daemon_pid n1)/limits" |
	    sed "s/^Max cpu time  *//" | awk "{print \$1, \$2}") &&
	test -n "$want" &&
	test "$(limit_line lim1 "Max cpu time")" = "$want" &&
	want=$(grep "^Max processes " "/proc/$(daemon_pid n1)/limits" |
	    sed "s/^Max processes  *//" | awk "{print \$1, \$2}") &&
	test "$(limit_line lim1 "Max processes")" = "$want"
'

test_expect_success 'a write past hook_limit_fsize_bytes: SIGXFSZ, named in the reason' '
	submit big1 bigfile && wait_terminal big1 30 &&
	killed_by big1 25 "SIGXFSZ: file size limit reached (hook_limit_fsize_bytes = 1000000)"
'

test_expect_success 'a hook that ignores SIGXFSZ gets EFBIG; the file stops at the limit' '
	submit big2 bigfile_ignore && wait_terminal big2 30 &&
	test "$(res big2 .status)" = SUCCESS &&
	test "$(res big2 .result.size)" = 1000000 &&
	test "$(res big2 .result.rc)" != 0 &&
	res big2 .stderrTail | grep -q "File too large"
'

test_expect_success 'SIGHUP applies new values: cpu 1 (soft 1, hard 2), the others back to the daemon'"'"'s' '
	cp "$TRASH/base.conf" "$CONF" &&
	echo "hook_limit_cpu_sec = 1" >>"$CONF" &&
	kill -HUP "$(daemon_pid n1)" &&
	wait_for "grep -q \"configuration reloaded\" \"$TRASH/log.n1\"" 20 &&
	submit lim2 limits && wait_terminal lim2 30 &&
	test "$(limit_line lim2 "Max cpu time")" = "1 2" &&
	want=$(grep "^Max open files " "/proc/$(daemon_pid n1)/limits" |
	    sed "s/^Max open files  *//" | awk "{print \$1, \$2}") &&
	test "$(limit_line lim2 "Max open files")" = "$want"
'

test_expect_success 'a CPU-bound hook is killed by SIGXCPU: FAILED, reason names it' '
	submit cpu1 spin && wait_terminal cpu1 60 &&
	killed_by cpu1 24 "SIGXCPU: CPU time limit reached (hook_limit_cpu_sec = 1)"
'

test_expect_success 'a hook ignoring SIGXCPU is killed by SIGKILL at the hard limit, said so' '
	submit cpu2 spin_ignore && wait_terminal cpu2 60 &&
	killed_by cpu2 9 "SIGKILL after [0-9]* ms of CPU time, past hook_limit_cpu_sec = 1: the hard CPU time limit (1 s higher) kills a hook that survives SIGXCPU"
'

test_expect_success 'a limit above the daemon'"'"'s hard limit is refused at start-up (78)' '
	hard=$(ulimit -Hn) &&
	{ "$TSD" -n -c "$CONF" -o hook_limit_nofile=$((hard + 1)) >/dev/null 2>"$TRASH/err"; rc=$?; } ;
	test "$rc" = 78 &&
	grep -q "hook_limit_nofile: $((hard + 1)) descriptors is above the daemon.s hard limit $hard" "$TRASH/err"
'

test_expect_success 'hook_limit_as_bytes under 16 MiB is a configuration error (78)' '
	{ "$TSD" -n -c "$CONF" -o hook_limit_as_bytes=1000 >/dev/null 2>"$TRASH/err"; rc=$?; } ;
	test "$rc" = 78 && grep -q "hook_limit_as_bytes: 1000 is below" "$TRASH/err"
'

test_done
