#!/bin/sh
# Start or stop a throw-away redis-server for the tests.
#
#   redis.sh start DIR   start redis-server on 127.0.0.1 and a free port
#                        (the port of an earlier start with the same DIR,
#                        so a test can stop and restart "the" server),
#                        data, pid file and log in DIR (no persistence);
#                        wait until it answers PING; print
#                        TS_TEST_REDIS=127.0.0.1:PORT
#   redis.sh stop DIR    stop the server started with DIR (by its pid file)
#
# Exit 0 on success; 69 (EX_UNAVAILABLE) when redis-server is missing or
# does not come up.
set -eu
. "$(dirname "$0")/common.sh"
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 64; }

free_port() {
	# A port nobody listens on now (redis-cli cannot connect), below
	# the ephemeral range; the start below is retried if someone takes
	# it meanwhile.
	while :; do
		p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 12000 ))
		if redis-cli -h 127.0.0.1 -p "$p" ping 2>&1 |
		    grep -q "Could not connect"; then
			echo "$p"
			return
		fi
	done
}

case $cmd in
start)
	command -v redis-server >/dev/null 2>&1 || { echo "redis.sh: redis-server not installed" >&2; exit 69; }
	mkdir -p "$dir"
	for try in 1 2 3 4 5; do
		if [ -f "$dir/redis.port" ] && [ $try = 1 ]; then
			port=$(cat "$dir/redis.port")
		else
			port=$(free_port)
		fi
		: >"$dir/redis.log"
		redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" \
		    --save "" --appendonly no --daemonize yes \
		    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
		    >/dev/null 2>&1 || continue
		i=0
		while [ $i -lt 100 ]; do
			grep -q "Address already in use" "$dir/redis.log" \
			    2>/dev/null && break
			if [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ]; then
				echo "$port" >"$dir/redis.port"
				echo "TS_TEST_REDIS=127.0.0.1:$port"
				exit 0
			fi
			sleep 0.1
			i=$((i + 1))
		done
		[ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
	done
	echo "redis.sh: redis-server did not start (see $dir/redis.log)" >&2
	exit 69
	;;
stop)
	stop_pidfile "$dir/redis.pid" 100
	;;
*)
	echo "usage: $0 start|stop DIR" >&2
	exit 64
	;;
esac
