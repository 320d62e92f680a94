# test-lib.sh — sourced by every tests/scenario/tNNNN-*.sh script.
#
# Gives each script a trash directory with a fresh spool ($SPOOL), its own
# hooks directory ($HOOKS, with the probe hook installed as "probe"), a
# configuration file ($CONF), helpers to start and stop daemons, and
# TAP-style test_expect_success / test_done in the style of git's test
# suite.  Daemons started here are killed when the script exits.
set -u
: "${BUILD:?BUILD must name the build directory}"
TS="$BUILD/taskspool"
TSD="$BUILD/taskspoold"
PROBE="$BUILD/tools/probe"
test_name=$(basename "$0" .sh)
TRASH=$(mktemp -d "${TMPDIR:-/tmp}/taskspool-$test_name.XXXXXX")
SPOOL="$TRASH/spool"
HOOKS="$TRASH/hooks"
CONF="$TRASH/taskspool.conf"
test_count=0
test_failed=0
DAEMONS=""
DAEMON_PIDS=""	# kept here too: cleanup works even if $TRASH vanished
_tl_in_test=""	# set while a test body runs

cleanup() {
	if [ -n "$_tl_in_test" ]; then
		# An `exit` in a body ends the script: report it as a failure
		# of that test rather than let the rest vanish silently.
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $desc (the script exited inside this test)"
		sed 's/^/#   /' "$TRASH/out.$test_count" 2>/dev/null
		_tl_in_test=""
	fi
	for _tl_p in $DAEMON_PIDS; do
		# Only a process of this run (its command line names $TRASH):
		# a PID of one that ended long ago may belong to another
		# program by now, e.g. a hook of another test run.
		tr "\0" " " 2>/dev/null <"/proc/$_tl_p/cmdline" |
		    grep -qF "$TRASH" && kill -9 "$_tl_p" 2>/dev/null
	done
	if [ "$test_failed" -eq 0 ] && [ -z "${KEEP_TRASH:-}" ]; then
		rm -rf "$TRASH"
	else
		echo "# trash kept: $TRASH"
	fi
}
trap cleanup EXIT

mkdir -p "$HOOKS"
"$TS" init "$SPOOL" >/dev/null || { echo "Bail out! taskspool init failed"; exit 1; }
cp "$PROBE" "$HOOKS/probe"
cat >"$CONF" <<CONF
spool = $SPOOL
hooks_dir = $HOOKS
retry_base_ms = 200
retry_max_ms = 2000
kill_grace_ms = 500
scan_interval_ms = 1000
reap_interval_ms = 300
heartbeat_ms = 500
settle_ms = 1000
log_format = text
CONF
export TASKSPOOL_SPOOL="$SPOOL"

ts() { "$TS" -c "$CONF" "$@"; }

# start_daemon NODE [taskspoold options...]: start a daemon in the
# foreground (in the background of this shell); wait for its heartbeat.
start_daemon() {
	_tl_node=$1; shift
	# A heartbeat left by a killed daemon must not count as this start.
	rm -f "$SPOOL/state/heartbeat.$_tl_node"
	"$TSD" -d -c "$CONF" -i "$_tl_node" "$@" >>"$TRASH/log.$_tl_node" 2>&1 &
	echo $! >"$TRASH/pid.$_tl_node"
	DAEMON_PIDS="$DAEMON_PIDS $!"
	DAEMONS="$DAEMONS $_tl_node"
	_tl_i=0
	while [ ! -f "$SPOOL/state/heartbeat.$_tl_node" ]; do
		_tl_i=$((_tl_i + 1))
		if [ $_tl_i -gt 500 ]; then
			echo "# daemon $_tl_node did not start:"
			sed 's/^/# /' "$TRASH/log.$_tl_node"
			return 1
		fi
		sleep 0.01
	done
}

daemon_pid() { cat "$TRASH/pid.$1"; }

# stop_daemon NODE: SIGTERM (graceful drain) and wait for the exit.
stop_daemon() {
	_tl_pid=$(daemon_pid "$1")
	kill -TERM "$_tl_pid" 2>/dev/null
	_tl_i=0
	while kill -0 "$_tl_pid" 2>/dev/null; do
		_tl_i=$((_tl_i + 1)); [ $_tl_i -gt 3000 ] && return 1; sleep 0.01
	done
}

# kill9_daemon NODE
kill9_daemon() { kill -9 "$(daemon_pid "$1")" 2>/dev/null; sleep 0.05; }

# state_of ID: the directory the task is in (done, failed, ...), or "".
state_of() {
	for _tl_d in incoming delayed done failed cancelled; do
		[ -e "$SPOOL/$_tl_d/$1.json" ] && { echo "$_tl_d"; return; }
	done
	for _tl_d in "$SPOOL"/active/*/; do
		[ -e "$_tl_d$1.json" ] && { echo active; return; }
	done
	echo ""
}

# wait_terminal ID [SECONDS]: until the task is in done|failed|cancelled.
wait_terminal() {
	_tl_lim=$(( ${2:-20} * 100 )); _tl_i=0
	while :; do
		case $(state_of "$1") in done|failed|cancelled) return 0;; esac
		_tl_i=$((_tl_i + 1)); [ $_tl_i -gt "$_tl_lim" ] && return 1
		sleep 0.01
	done
}

# wait_for 'shell condition' [SECONDS]
wait_for() {
	_tl_lim=$(( ${2:-20} * 100 )); _tl_i=0
	until eval "$1"; do
		_tl_i=$((_tl_i + 1)); [ $_tl_i -gt "$_tl_lim" ] && return 1
		sleep 0.01
	done
}

# drop NAME JSON: publish a task file by the writer protocol (tmp + mv).
drop() {
	printf '%s' "$2" >"$SPOOL/tmp/drop.$$" && mv "$SPOOL/tmp/drop.$$" "$SPOOL/incoming/$1"
}

# local_callbacks DELAYS [SECRET]: append to $CONF what callbacks to a
# receiver on 127.0.0.1 (tools/cbrecv.py) need: plain http, the loopback
# range, any port, callback_delays_ms = DELAYS without jitter, and
# callback_secret = SECRET when given.
local_callbacks() {
	cat >>"$CONF" <<C
callback_allow_http = 1
callback_allow_cidrs = 127.0.0.0/8
callback_allowed_ports =
callback_delays_ms = $1
callback_jitter_pct = 0
C
	[ $# -lt 2 ] || echo "callback_secret = $2" >>"$CONF"
}

# count_files DIR: regular files directly in DIR.
count_files() { find "$1" -maxdepth 1 -type f | wc -l; }

_tl_run_body() {
	eval "$body"
}

test_expect_success() {
	test_count=$((test_count + 1))
	desc=$1; body=$2
	# In this shell (not a subshell), so daemons started by a test are
	# children of the script: `wait` works and cleanup knows them.  The
	# body runs in a function of its own, so a `return 1` in it fails the
	# test (it would otherwise return from test_expect_success itself and
	# the test would vanish from the output).
	_tl_in_test=1
	if _tl_run_body >"$TRASH/out.$test_count" 2>&1; then
		_tl_in_test=""
		echo "ok $test_count - $desc"
	else
		_tl_in_test=""
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $desc"
		sed 's/^/#   /' "$TRASH/out.$test_count"
		for n in $DAEMONS; do
			echo "# --- log of $n (last 30 lines)"
			tail -30 "$TRASH/log.$n" 2>/dev/null | sed 's/^/#   /'
		done
	fi
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
}
