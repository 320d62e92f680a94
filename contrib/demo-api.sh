#!/bin/sh
# make demo-api: the HTTP API on a free port of 127.0.0.1, without root:
# a spool and its configuration under ./var/api/, one daemon in embedded
# mode, Debian's lighttpd running taskspool.cgi (tests/servers/lighttpd.sh,
# which the scenario tests use too), an app made with `taskspool apps
# add`.  It sends one signed request with contrib/clients/tsapi.sh, then
# prints the commands to try more and leaves both servers running.
#
#   sh contrib/demo-api.sh        start (again: the old ones are stopped)
#   sh contrib/demo-api.sh stop   stop the daemon and lighttpd
#
# BUILD (default build) names the programs, DEMO_VAR (default ./var/api)
# the directory everything is written to.
set -eu
: "${BUILD:=build}"
top=$(pwd)
BUILD=$(cd "$BUILD" && pwd)
var=${DEMO_VAR:-$top/var/api}
TS="$BUILD/taskspool"
TSD="$BUILD/taskspoold"
LIGHTTPD="$top/tests/servers/lighttpd.sh"
TSAPI="$top/contrib/clients/tsapi.sh"

# Headings in bold on a terminal only (a log file gets no escapes).
if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi

stop() {
	if [ -f "$var/taskspoold.pid" ]; then
		pid=$(cat "$var/taskspoold.pid")
		if kill -TERM "$pid" 2>/dev/null; then
			i=0
			while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
				sleep 0.1; i=$((i + 1))
			done
		fi
		rm -f "$var/taskspoold.pid"
	fi
	[ -d "$var/lighttpd" ] && sh "$LIGHTTPD" stop "$var/lighttpd"
	return 0
}

if [ "${1:-}" = stop ]; then
	[ -d "$var" ] || { echo "demo-api: nothing in $var"; exit 0; }
	stop
	echo "demo-api: stopped (the files stay in $var)"
	exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0 [stop]" >&2; exit 64; }
command -v lighttpd >/dev/null 2>&1 || {
	echo "demo-api: lighttpd is not installed (make demo-api installs" \
	    "it with tests/install-deps.sh demo-api)" >&2
	exit 69
}
stop
rm -rf "$var"
mkdir -p "$var"
spool="$var/spool"
conf="$var/taskspool.conf"

say "a spool and its configuration: $spool, $conf"
"$TS" init "$spool" >/dev/null
cat >"$conf" <<CONF
# demo-api configuration (see 'taskspool config' for every key)
spool = $spool
hooks_dir = $top/hooks
node_id = api1
slots = 2
retry_base_ms = 1000
CONF

say "the daemon: taskspoold -d -c $conf"
"$TSD" -d -c "$conf" </dev/null >"$var/taskspoold.log" 2>&1 &
echo $! >"$var/taskspoold.pid"
i=0
until [ -f "$spool/state/heartbeat.api1" ]; do
	i=$((i + 1))
	[ $i -gt 300 ] && { cat "$var/taskspoold.log"; stop; exit 1; }
	sleep 0.01
done

say "an app allowed the demo hooks: taskspool apps add demo --codes hello,report,flaky,slow"
secret=$("$TS" -c "$conf" apps add demo --codes hello,report,flaky,slow)

say "lighttpd on 127.0.0.1 running taskspool.cgi"
out=$(BUILD="$BUILD" TASKSPOOL_CONFIG="$conf" sh "$LIGHTTPD" start "$var/lighttpd") ||
    { stop; exit 69; }
hostport=$(printf '%s\n' "$out" | sed -n 's/^TS_TEST_LIGHTTPD=//p')
echo "  http://$hostport/api (log: $var/lighttpd/error.log)"

# The environment tsapi.sh needs, written once: printed and sourced.
# It holds the app's secret: readable by its owner only, like apps.conf.
(umask 077 && : >"$var/env")
cat >"$var/env" <<ENV
export TS_URL=http://$hostport TS_APP_ID=demo TS_SECRET='$secret'
ENV
. "$var/env"

say "a signed request: POST /api/tasks, then wait for the task"
echo '{"taskCode":"hello","executeParams":{"who":"api"}}' >"$var/task.json"
"$TSAPI" submit "$var/task.json" >"$var/submit.out" || {
	cat "$var/submit.out"; stop; exit 1; }
cat "$var/submit.out"; echo
id=$(sed -n 's/.*"requestId":"\([^"]*\)".*/\1/p' "$var/submit.out")
"$TSAPI" wait "$id" 30 || { stop; exit 1; }
echo

say "try it yourself"
cat <<TRY
  . $var/env          # $(cat "$var/env")
  echo '{"taskCode":"report","executeParams":{"pages":2}}' | $TSAPI submit -
  $TSAPI wait ID      # the requestId it printed
  curl -s http://$hostport/api/health
  $TS -c $conf list                 # the CLI on this spool
  $TS -c $conf apps add other --codes hello   # a second app (prints its secret)

  stop both servers:  make demo-api-stop   (or: sh contrib/demo-api.sh stop)
TRY
