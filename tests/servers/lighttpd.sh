#!/bin/sh
# Start or stop a throw-away lighttpd serving taskspool.cgi for the tests.
#
#   lighttpd.sh start DIR  start lighttpd on 127.0.0.1 and a free port with
#                          its configuration, pid file and logs in DIR; the
#                          API is mounted at /api and /metrics as in
#                          contrib/lighttpd/taskspool.conf; wait until it
#                          answers; print
#                            TS_TEST_LIGHTTPD=127.0.0.1:PORT
#                            TS_TEST_LIGHTTPD_DIR=DIR
#   lighttpd.sh stop DIR   stop the server started with DIR (its pid file)
#
# The server runs DIR/taskspool.cgi with TASKSPOOL_CONFIG=DIR/taskspool.conf.
# Both are symbolic links that each test points at its own build and spool
# (ln -sf), so one server can serve a whole test run.  start creates them
# from $BUILD (default ./build) and $TASKSPOOL_CONFIG when set.
#
# With TS_LIGHTTPD_FASTCGI=1, start serves taskspool.fcgi through
# mod_fastcgi instead, as contrib/lighttpd/taskspool-fastcgi.conf: lighttpd
# spawns $TS_LIGHTTPD_FCGI_PROCS (default 2) long-lived processes of
# DIR/taskspool.fcgi ("bin-path") on DIR/fcgi.sock-N at start, and start prints TS_TEST_LIGHTTPD_FCGI= and
# TS_TEST_LIGHTTPD_FCGI_DIR= instead.  The program link is read once, at
# start; the configuration link on every request.
#
# Exit 0 on success; 69 (EX_UNAVAILABLE) when lighttpd is missing or does
# not come up.
set -eu
. "$(dirname "$0")/common.sh"
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 64; }

# The /api mount: mod_cgi, or mod_fastcgi with TS_LIGHTTPD_FASTCGI=1.
api_conf() {
	if [ "${TS_LIGHTTPD_FASTCGI:-0}" = 1 ]; then
		cat <<CONF
server.modules += ( "mod_fastcgi" )
fastcgi.server = ( "/api" => ( (
	"socket" => "$dir/fcgi.sock",
	"bin-path" => "$dir/taskspool.fcgi",
	"bin-environment" => ( "TASKSPOOL_CONFIG" => "$dir/taskspool.conf" ),
	"check-local" => "disable",
	"max-procs" => ${TS_LIGHTTPD_FCGI_PROCS:-2}
) ) )
CONF
		return
	fi
	cat <<CONF
alias.url = ( "/api" => "$dir/taskspool.cgi" )
\$HTTP["url"] =~ "^/api(/|\$)" {
	cgi.assign = ( "" => "" )
	setenv.add-environment = ( "TASKSPOOL_CONFIG" => "$dir/taskspool.conf" )
}
CONF
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

case $cmd in
start)
	command -v lighttpd >/dev/null 2>&1 || { echo "lighttpd.sh: lighttpd not installed" >&2; exit 69; }
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	build=$(cd "${BUILD:-build}" 2>/dev/null && pwd) || build=${BUILD:-build}
	ln -sf "$build/taskspool.cgi" "$dir/taskspool.cgi"
	ln -sf "$build/taskspool.fcgi" "$dir/taskspool.fcgi"
	var=TS_TEST_LIGHTTPD
	[ "${TS_LIGHTTPD_FASTCGI:-0}" = 1 ] && var=TS_TEST_LIGHTTPD_FCGI
	[ -n "${TASKSPOOL_CONFIG:-}" ] && ln -sf "$TASKSPOOL_CONFIG" "$dir/taskspool.conf"
	mkdir -p "$dir/htdocs"
	for try in 1 2 3 4 5; do
		port=$(free_port)
		cat >"$dir/lighttpd.conf" <<CONF
server.modules = ( "mod_alias", "mod_rewrite", "mod_setenv", "mod_cgi" )
server.bind = "127.0.0.1"
server.port = $port
server.document-root = "$dir/htdocs"
server.errorlog = "$dir/error.log"
server.pid-file = "$dir/lighttpd.pid"
server.max-request-size = 1024
server.max-worker = 0
server.max-connections = 1024
url.rewrite-once = ( "^/metrics\$" => "/api/metrics",
	"^/console(/.*)?\$" => "/api/console\$1" )
$(api_conf)
CONF
		: >"$dir/error.log"
		lighttpd -D -f "$dir/lighttpd.conf" </dev/null >>"$dir/error.log" 2>&1 &
		echo $! >"$dir/lighttpd.pid.start"
		i=0
		while [ $i -lt 100 ]; do
			if curl -s -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null; then
				echo "$port" >"$dir/lighttpd.port"
				echo "$var=127.0.0.1:$port"
				echo "${var}_DIR=$dir"
				exit 0
			fi
			kill -0 "$(cat "$dir/lighttpd.pid.start")" 2>/dev/null || break
			sleep 0.1
			i=$((i + 1))
		done
		kill "$(cat "$dir/lighttpd.pid.start")" 2>/dev/null || true
	done
	echo "lighttpd.sh: lighttpd did not start (see $dir/error.log)" >&2
	exit 69
	;;
stop)
	stop_pidfile "$dir/lighttpd.pid.start" 100
	;;
*)
	echo "usage: $0 start|stop DIR" >&2
	exit 64
	;;
esac
