#!/bin/sh
# make demo: one daemon in embedded mode on a fresh spool in ./var/, the
# three example tasks, their results and the spool tree.  No servers.
set -eu
: "${BUILD:=build}"
TS="$BUILD/taskspool"
TSD="$BUILD/taskspoold"
top=$(pwd)
var="$top/var"
spool="$var/spool"

# Headings in bold on a terminal only (a log file gets no escapes).
if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi

if [ -f "$var/taskspoold.pid" ] && kill -0 "$(cat "$var/taskspoold.pid")" 2>/dev/null; then
	kill -TERM "$(cat "$var/taskspoold.pid")" 2>/dev/null || true
	sleep 1
fi
# A `make demo-api` still running under ./var/api/ is stopped first.
if [ -d "$var/api" ]; then
	DEMO_VAR="$var/api" sh "$top/contrib/demo-api.sh" stop >/dev/null 2>&1 ||
	    true
fi
rm -rf "$var"
mkdir -p "$var"
say "create a spool: taskspool init $spool"
"$TS" init "$spool"
cat >"$spool/taskspool.conf" <<CONF
# demo configuration (see 'taskspool config' for every key)
spool = $spool
hooks_dir = $top/hooks
node_id = demo1
slots = 2
retry_base_ms = 1000
kill_grace_ms = 1000
CONF
export TASKSPOOL_SPOOL="$spool"

say "start the node daemon: taskspoold -d -s $spool"
"$TSD" -d -s "$spool" >"$var/taskspoold.log" 2>&1 &
echo $! >"$var/taskspoold.pid"
trap 'kill -TERM "$(cat "$var/taskspoold.pid")" 2>/dev/null || true' EXIT
i=0
until [ -f "$spool/state/heartbeat.demo1" ]; do
	i=$((i + 1)); [ $i -gt 300 ] && { cat "$var/taskspoold.log"; exit 1; }
	sleep 0.01
done

show() {
	id=$1
	echo "--- $spool/results/$id.json"
	if command -v jq >/dev/null 2>&1; then
		jq '{requestId, taskCode, status, durationMs, result,
		     failureReason, attempts: [.attempts[] |
		     {attempt, outcome, exitCode, signal, reason}]}' \
		    "$spool/results/$id.json"
	else
		cat "$spool/results/$id.json"
	fi
}

say "1. a hook that writes a JSON result (hooks/report)"
id1=$("$TS" submit --code report --id demo-report --params '{"pages": 3}')
say "2. a hook that fails transiently (exit 75) and succeeds on retry (hooks/flaky)"
id2=$("$TS" submit --code flaky --id demo-flaky)
say "3. a hook that runs past its 2 s timeout and leaves a child (hooks/slow)"
id3=$("$TS" submit --code slow --id demo-slow --timeout 2 --retries 0 --params '{"seconds": 30}')

for id in "$id1" "$id2" "$id3"; do
	# --wait on a submitted id: status polling with a progress line.
	while :; do
		st=$("$TS" status "$id" | awk '{print $2}')
		case $st in SUCCESS|FAILED|CANCELLED) break;; esac
		printf '\r  waiting for %s: %s   ' "$id" "$st"
		sleep 0.2
	done
	printf '\r  %s: %s                      \n' "$id" "$st"
done

say "results"
for id in "$id1" "$id2" "$id3"; do show "$id"; done

say "hook output (taskspool logs)"
for id in "$id1" "$id2" "$id3"; do
	echo "--- $id"; "$TS" logs "$id" 2>&1 | sed 's/^/  /'
done

say "the spool tree"
(cd "$spool" && find . -path ./hooks -prune -o -type f -print | sort | sed 's/^\.\//  /')

say "stop the daemon (SIGTERM drains)"
kill -TERM "$(cat "$var/taskspoold.pid")"
wait "$(cat "$var/taskspoold.pid")" 2>/dev/null || true
trap - EXIT
echo "daemon log: $var/taskspoold.log"
tail -n 12 "$var/taskspoold.log" | sed 's/^/  /'
