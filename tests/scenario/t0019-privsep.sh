#!/bin/sh
# Privilege separation (issue 13 item 1): the daemon runs as its own
# account with only CAP_SETUID, CAP_SETGID and CAP_KILL (as
# contrib/systemd/taskspoold.service gives them, here through setpriv),
# hooks as hook_user.  The configuration and apps.conf are root:<daemon
# group> 0640 and the hooks directory root's, as under /etc/taskspool/.
# A hook that tries to read taskspool.conf, apps.conf, a file of state/,
# another task's result and done/ copy, to list outbox/ and workdirs/, and to
# create a file in the hooks directory gets EACCES for each (the errno
# names come from tools/tryaccess, i.e. from the kernel); its own work
# directory and result file work and the daemon reads that result; its
# uid and gid are the hook user's, its CapEff, CapPrm and CapAmb 0; a
# normal hook in the same run succeeds.  A setresuid the kernel refuses
# in the hook's child (tools/denysetuid) sends the task back to incoming/
# with no attempt used.  A timeout kills the hook's group
# and recovery after kill -9 finds what the hook left (both across
# uids).  With hook_user empty the hook is the daemon's user, and has no
# capability either.  Also: hook_user naming no
# account, and a daemon without the capabilities, exit 78 at start.
# Needs root (to create the accounts; CI runs as root): else skipped.
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP not root: creating the test's users needs root"
	exit 0
fi
for tool in setpriv useradd userdel groupdel jq; do
	command -v $tool >/dev/null 2>&1 || {
		echo "1..0 # SKIP $tool not installed"
		exit 0
	}
done
. "$(dirname "$0")/test-lib.sh"

# Throw-away accounts, unique to this run, removed on exit.
DU="tsd$$"		# the daemon's account (and group)
HU="tsh$$"		# the hooks' account (and group), not in $DU's group
# After cleanup (which kills this run's daemons): their processes may
# take a moment to go, and userdel refuses a user with processes.
drop_users() {
	_i=0
	while pgrep -u "$DU,$HU" >/dev/null 2>&1 && [ $_i -lt 50 ]; do
		_i=$((_i + 1)); sleep 0.1
	done
	userdel -f "$DU" 2>/dev/null; userdel -f "$HU" 2>/dev/null
	groupdel "$DU" 2>/dev/null; groupdel "$HU" 2>/dev/null
	:
}
trap 'cleanup; drop_users' EXIT
useradd --system --no-create-home --shell /usr/sbin/nologin --user-group \
    "$DU" || { echo "Bail out! useradd $DU"; exit 1; }
useradd --system --no-create-home --shell /usr/sbin/nologin --user-group \
    "$HU" || { echo "Bail out! useradd $HU"; exit 1; }
HUID=$(id -u "$HU")
HGID=$(id -g "$HU")

# The layout of a package install: /etc/taskspool/ as $ETC, the spool the
# daemon's (modes from taskspool init), the tools where both may run them.
ETC="$TRASH/etc"
BIN="$TRASH/bin"
chmod 0711 "$TRASH"
mkdir -p "$ETC/hooks" "$BIN"
cp "$BUILD/tools/tryaccess" "$BUILD/tools/denysetuid" "$PROBE" "$BIN/"
chmod 0755 "$ETC" "$ETC/hooks" "$BIN" "$BIN"/*
cp "$PROBE" "$ETC/hooks/probe"
cat >"$ETC/hooks/spy" <<EOF
#!/bin/sh
# What this hook may see: tryaccess's verdicts, its ids and capabilities.
other=other	# the task whose files it tries
access=\$("$BIN/tryaccess" \\
    conf=r:"$ETC/taskspool.conf" apps=r:"$ETC/apps.conf" \\
    state=r:"$SPOOL/state/heartbeat.n1" outbox=l:"$SPOOL/outbox" \\
    result=r:"$SPOOL/results/\$other.json" done=r:"$SPOOL/done/\$other.json" \\
    work=l:"$SPOOL/workdirs" hooks=w:"$ETC/hooks/planted" \\
    own=w:"\$TASKSPOOL_WORK_DIR/scratch" cwd=l:.)
cap() { sed -n "s/^\$1:[[:space:]]*//p" /proc/self/status; }
mkdir -p sub/deeper && echo private >sub/deeper/f && chmod 0700 sub
# Directories left without their owner's permissions (the daemon still
# empties them) and the descriptor the daemon inherited (fd 7, open on
# taskspool.conf: closed at the hook's execve).
mkdir -p nox/inner && chmod 000 nox && mkdir rx && touch rx/f && chmod 0500 rx
if [ -e /proc/self/fd/7 ]; then fd7=open; else fd7=closed; fi
printf '{"uid":%s,"gid":%s,"eff":"%s","prm":"%s","amb":"%s","home":"%s","fd7":"%s","access":%s}\n' \\
    "\$(id -u)" "\$(id -g)" "\$(cap CapEff)" "\$(cap CapPrm)" "\$(cap CapAmb)" \\
    "\$HOME" "\$fd7" "\$access" >"\$TASKSPOOL_RESULT_FILE"
EOF
chmod 0755 "$ETC/hooks/spy"

cat "$CONF" >"$ETC/taskspool.conf"
cat >>"$ETC/taskspool.conf" <<EOF
hooks_dir = $ETC/hooks
apps_file = $ETC/apps.conf
hook_user = $HU
callback_secret = whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
EOF
sed -i "s|^hooks_dir = $HOOKS\$||" "$ETC/taskspool.conf"
echo "app1 secret=s3cr3t-of-app1" >"$ETC/apps.conf"
chown root:"$DU" "$ETC/taskspool.conf" "$ETC/apps.conf"
chmod 0640 "$ETC/taskspool.conf" "$ETC/apps.conf"
CONF="$ETC/taskspool.conf"
chown -R "$DU:$DU" "$SPOOL"

# The daemon and the CLI as $DU; the daemon with the three capabilities.
cat >"$BIN/taskspoold" <<EOF
#!/bin/sh
exec setpriv --reuid=$DU --regid=$DU --init-groups \\
    --inh-caps=+setuid,+setgid,+kill --ambient-caps=+setuid,+setgid,+kill \\
    -- "$BUILD/taskspoold" "\$@"
EOF
cat >"$BIN/nocaps" <<EOF
#!/bin/sh
exec setpriv --reuid=$DU --regid=$DU --init-groups -- "$BUILD/taskspoold" "\$@"
EOF
cat >"$BIN/denied" <<EOF
#!/bin/sh
# As taskspoold, but setresuid(2) fails with EPERM (seccomp): hook_user
# passes the start-up check, the switch in each hook's child fails.
exec setpriv --reuid=$DU --regid=$DU --init-groups \\
    --inh-caps=+setuid,+setgid,+kill --ambient-caps=+setuid,+setgid,+kill \\
    -- "$BIN/denysetuid" "$BUILD/taskspoold" "\$@"
EOF
chmod 0755 "$BIN/taskspoold" "$BIN/nocaps" "$BIN/denied"
TSD="$BIN/taskspoold"
ts() { setpriv --reuid="$DU" --regid="$DU" --init-groups -- "$TS" -c "$CONF" "$@"; }

test_expect_success 'the spool as taskspool init lays it out: root 2751, workdirs/ 2711, the rest o-rwx, its taskspool.conf 0640' '
	test "$(stat -c %a "$SPOOL")" = 2751 &&
	test "$(stat -c %a "$SPOOL/workdirs")" = 2711 &&
	test "$(stat -c %a "$SPOOL/taskspool.conf")" = 640 &&
	for d in tmp incoming delayed queue active done failed cancelled corrupt results logs jobs outbox state; do
		m=$(stat -c %a "$SPOOL/$d") && test "${m#"${m%?}"}" = 0 || echo "$d $m"
	done >"$TRASH/modes" && ! grep . "$TRASH/modes"
'

test_expect_success 'hook_user naming no account: exit 78 at start, the key named' '
	sed "s/^hook_user = .*/hook_user = nosuch$$/" "$CONF" >"$TRASH/bad.conf" &&
	chown root:"$DU" "$TRASH/bad.conf" && chmod 0640 "$TRASH/bad.conf" &&
	{ "$TSD" -d -c "$TRASH/bad.conf" -i n0 2>"$TRASH/bad.err"; rc=$?; } ;
	cat "$TRASH/bad.err" && test $rc = 78 &&
	grep -q "hook_user: no such user .nosuch$$." "$TRASH/bad.err"
'

test_expect_success 'hook_user with a configuration every user may read: exit 78 naming the chmod' '
	cp "$CONF" "$TRASH/open.conf" && chmod 0644 "$TRASH/open.conf" &&
	{ "$TSD" -d -c "$TRASH/open.conf" -i n0 2>"$TRASH/open.err"; rc=$?; } ;
	cat "$TRASH/open.err" && test $rc = 78 &&
	grep -q "open.conf is readable by every user, hook_user $HU included: chmod o-r" "$TRASH/open.err"
'

test_expect_success 'a daemon without CAP_SETUID/CAP_SETGID/CAP_KILL: exit 78 naming the capability' '
	{ "$BIN/nocaps" -d -c "$CONF" -i n0 2>"$TRASH/nocaps.err"; rc=$?; } ;
	cat "$TRASH/nocaps.err" && test $rc = 78 &&
	grep -q "lacks CAP_SETUID" "$TRASH/nocaps.err"
'

test_expect_success 'a spool root of an older release (2750) gets o+x from the daemon for hook_user' '
	chmod 2750 "$SPOOL" &&
	start_daemon n1 && stop_daemon n1 &&
	test "$(stat -c %a "$SPOOL")" = 2751 &&
	grep -q "$SPOOL: others may now pass through (o+x), for hook_user $HU" "$TRASH/log.n1"
'

test_expect_success 'setresuid refused in the child: the node'"'"'s trouble, back to incoming/ with no attempt used, then run by a working node' '
	ts submit --id deny1 --code probe --retries 0 --params "{\"result\":true}" >/dev/null &&
	TSD="$BIN/denied" && start_daemon nd && TSD="$BIN/taskspoold" &&
	wait_for "grep -q \"deny1: cannot become hook_user for the hook .*: Operation not permitted\" \"$TRASH/log.nd\"" 20 &&
	grep -q "deny1: cannot start hook now (Operation not permitted); back to incoming/" "$TRASH/log.nd" &&
	stop_daemon nd &&
	test "$(state_of deny1)" = incoming && test ! -e "$SPOOL/results/deny1.json" &&
	start_daemon n1 && wait_terminal deny1 &&
	test "$(state_of deny1)" = done &&
	test "$(jq ".attempts | length" "$SPOOL/results/deny1.json")" = 1 &&
	test "$(jq -c .result "$SPOOL/results/deny1.json")" = "{\"ok\":true,\"attempt\":1}" &&
	stop_daemon n1
'

test_expect_success 'the daemon runs as its account with only the three capabilities' '
	start_daemon n1 7<"$ETC/taskspool.conf" &&
	test -e "/proc/$(daemon_pid n1)/fd/7" &&
	pid=$(daemon_pid n1) &&
	test "$(stat -c %U "/proc/$pid")" = "$DU" &&
	grep "^Cap" "/proc/$pid/status" &&
	test "$(sed -n "s/^CapEff:[[:space:]]*//p" "/proc/$pid/status")" = 00000000000000e0
'

test_expect_success 'a normal hook succeeds; its result is read by the daemon' '
	ts submit --id other --code probe --params "{\"result\":true}" >/dev/null &&
	wait_terminal other &&
	test "$(state_of other)" = done &&
	test "$(jq -c .result "$SPOOL/results/other.json")" = "{\"ok\":true,\"attempt\":1}"
'

test_expect_success 'the spy hook runs as hook_user and its result is read' '
	ts submit --id spy1 --code spy >/dev/null &&
	wait_terminal spy1 &&
	jq -c .result "$SPOOL/results/spy1.json" | tee "$TRASH/spy.json" &&
	test "$(state_of spy1)" = done &&
	test "$(jq .uid "$TRASH/spy.json")" = "$HUID" &&
	test "$(jq .gid "$TRASH/spy.json")" = "$HGID" &&
	test "$(jq -r .home "$TRASH/spy.json")" = "$SPOOL/workdirs/n1.0" &&
	: "the uid change of the vfork child and the setfsuid of the daemon left it dumpable: /proc/PID/fd is owned by the daemon user, not by root" &&
	test "$(stat -c %U "/proc/$(daemon_pid n1)/fd")" = "$DU"
'

test_expect_success 'the hook holds no capability: CapEff, CapPrm, CapAmb all 0; no descriptor of the daemon but 0-2' '
	test "$(jq -r .fd7 "$TRASH/spy.json")" = closed &&
	test "$(jq -r .eff "$TRASH/spy.json")" = 0000000000000000 &&
	test "$(jq -r .prm "$TRASH/spy.json")" = 0000000000000000 &&
	test "$(jq -r .amb "$TRASH/spy.json")" = 0000000000000000
'

test_expect_success 'EACCES for taskspool.conf, apps.conf, state/, outbox/, results/, done/, workdirs/, the hooks directory' '
	for k in conf apps state outbox result done work hooks; do
		v=$(jq -r ".access.$k" "$TRASH/spy.json") &&
		test "$v" = EACCES || echo "$k: $v"
	done >"$TRASH/leaks" && ! grep . "$TRASH/leaks" &&
	test ! -e "$ETC/hooks/planted"
'

test_expect_success 'its own work directory works (a file made there, the directory listed)' '
	test "$(jq -r .access.own "$TRASH/spy.json")" = OK &&
	test "$(jq -r .access.cwd "$TRASH/spy.json")" = OK
'

test_expect_success 'the daemon emptied the work directory, even the 0700, 000 and 0500 ones the hook made' '
	test -z "$(ls -A "$SPOOL/workdirs/n1.0")" &&
	! grep -q "not emptied" "$TRASH/log.n1" &&
	test "$(stat -c "%U %G %a" "$SPOOL/workdirs/n1.0")" = "$DU $HU 2770"
'

test_expect_success 'a hook only the daemon user may execute is not this node'"'"'s: the task waits, not FAILED' '
	cp "$PROBE" "$ETC/hooks/private" && chown "$DU" "$ETC/hooks/private" &&
	chmod 0700 "$ETC/hooks/private" &&
	kill -HUP "$(daemon_pid n1)" &&
	ts submit --id private1 --code private >/dev/null &&
	wait_for "grep -q \"private1: WAITING: no live node has hook .private.\" \"$TRASH/log.n1\"" 20 &&
	sleep 1 && test "$(state_of private1)" = incoming &&
	ts cancel private1 >/dev/null && wait_terminal private1 &&
	test "$(state_of private1)" = cancelled && rm -f "$ETC/hooks/private"
'

test_expect_success 'a timeout kills the hook_user process group (CAP_KILL)' '
	ts submit --id slow1 --code probe --timeout 1 --retries 0 --params "{\"sleep_ms\":60000}" >/dev/null &&
	wait_terminal slow1 30 &&
	jq -r ".attempts[0].reason" "$SPOOL/results/slow1.json" | grep -q "timed out after 1 s" &&
	! pgrep -u "$HU" >/dev/null
'

test_expect_success 'after kill -9 of the daemon, recovery finds and kills what the hook left (its /proc environ read as hook_user)' '
	cat >"$ETC/hooks/leaver" <<-EOF &&
	#!/bin/sh
	sleep 600 &
	echo \$! >"$TRASH/pub/leaver.pid"
	sleep 600
	EOF
	chmod 0755 "$ETC/hooks/leaver" && mkdir "$TRASH/pub" &&
	chmod 1777 "$TRASH/pub" &&
	ts submit --id leave1 --code leaver --retries 1 >/dev/null &&
	wait_for "test -s \"$TRASH/pub/leaver.pid\"" &&
	kill9_daemon n1 &&
	left=$(cat "$TRASH/pub/leaver.pid") && kill -0 "$left" &&
	test "$(stat -c %U "/proc/$left")" = "$HU" &&
	start_daemon n1 &&
	wait_for "! kill -0 $left 2>/dev/null" 20 &&
	grep -q "leave1: killed [12] leftover process(es) of the lost attempt" "$TRASH/log.n1"
'

test_expect_success 'cancel kills the running hook_user hook; SIGTERM stops the daemon' '
	wait_for "test \"\$(state_of leave1)\" = active && pgrep -u $HU sleep >/dev/null" &&
	ts cancel leave1 >/dev/null && wait_terminal leave1 &&
	test "$(state_of leave1)" = cancelled &&
	stop_daemon n1 && ! pgrep -u "$HU" >/dev/null
'

test_expect_success 'hook_user empty under the same capabilities: the hook runs as the daemon and still holds none' '
	start_daemon n2 -o hook_user= &&
	ts submit --id spy2 --code spy >/dev/null &&
	wait_terminal spy2 &&
	jq -c .result "$SPOOL/results/spy2.json" | tee "$TRASH/spy2.json" &&
	test "$(jq .uid "$TRASH/spy2.json")" = "$(id -u "$DU")" &&
	test "$(jq -r .eff "$TRASH/spy2.json")" = 0000000000000000 &&
	test "$(jq -r .prm "$TRASH/spy2.json")" = 0000000000000000 &&
	test "$(jq -r .amb "$TRASH/spy2.json")" = 0000000000000000 &&
	stop_daemon n2
'

test_done
