#!/bin/sh
# mariadb.sh — a throw-away MariaDB server for the tests.
#
#   mariadb.sh start DIR   initialise a data directory in DIR
#                          (mariadb-install-db), start mariadbd on a free
#                          port of 127.0.0.1 with its socket, pid file and
#                          log in DIR, wait until it answers, create the
#                          database "taskspool" and the user "taskspool"
#                          (password "taskspool") and print
#                          TS_TEST_MARIADB=127.0.0.1:PORT
#                          (again on the same DIR: the same data and,
#                          when free, the same port)
#   mariadb.sh stop DIR    stop that server (SIGTERM to the pid in
#                          DIR/mariadbd.pid, then wait) and leave DIR
#
# Works as root (Debian 12's mariadbd refuses to run as root unless told
# --user=root, which this script passes) and as any other user.  The
# server answers only on 127.0.0.1 and the socket in DIR.
set -eu
. "$(dirname "$0")/common.sh"
cmd=${1:?usage: mariadb.sh start|stop DIR}
dir=${2:?usage: mariadb.sh start|stop DIR}

sbin() {
	for d in /usr/sbin /usr/bin /usr/local/sbin /usr/local/bin; do
		[ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	command -v "$1"
}

case $cmd in
start)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	user=$(id -un)
	MARIADBD=$(sbin mariadbd) || { echo "mariadb.sh: no mariadbd" >&2; exit 69; }
	# A second start on the same DIR (an outage test restarting the
	# server) keeps the data and, when it can, the port.
	[ -d "$dir/data/mysql" ] ||
	"$(sbin mariadb-install-db)" --no-defaults --datadir="$dir/data" \
	    --user="$user" --auth-root-authentication-method=normal \
	    --skip-test-db --skip-name-resolve >"$dir/install.log" 2>&1 || {
		echo "mariadb.sh: mariadb-install-db failed:" >&2
		tail -20 "$dir/install.log" >&2
		exit 70
	}
	tries=0
	while :; do
		# A port in the dynamic range; a collision fails the bind and
		# the loop tries another.
		if [ $tries -eq 0 ] && [ -f "$dir/port" ]; then
			port=$(cat "$dir/port")
		else
			port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000 ))
		fi
		"$MARIADBD" --no-defaults --user="$user" --datadir="$dir/data" \
		    --bind-address=127.0.0.1 --port="$port" \
		    --socket="$dir/mariadbd.sock" --pid-file="$dir/mariadbd.pid" \
		    --log-error="$dir/mariadbd.err" --skip-name-resolve \
		    --innodb-buffer-pool-size=32M --innodb-log-file-size=16M \
		    --max-connections=200 >/dev/null 2>&1 &
		pid=$!
		i=0
		while [ $i -lt 600 ]; do
			kill -0 "$pid" 2>/dev/null || break
			if mariadb --no-defaults -uroot -h127.0.0.1 -P"$port" \
			    -e 'SELECT 1' >/dev/null 2>&1; then
				break
			fi
			i=$((i + 1))
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null && [ $i -lt 600 ]; then
			break
		fi
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		tries=$((tries + 1))
		if [ $tries -ge 5 ]; then
			echo "mariadb.sh: mariadbd did not start:" >&2
			tail -20 "$dir/mariadbd.err" >&2
			exit 70
		fi
	done
	echo "$port" >"$dir/port"
	mariadb --no-defaults -uroot -h127.0.0.1 -P"$port" -e "
	    CREATE DATABASE IF NOT EXISTS taskspool CHARACTER SET utf8mb4;
	    CREATE USER IF NOT EXISTS 'taskspool'@'127.0.0.1' IDENTIFIED BY 'taskspool';
	    CREATE USER IF NOT EXISTS 'taskspool'@'localhost' IDENTIFIED BY 'taskspool';
	    GRANT ALL ON *.* TO 'taskspool'@'127.0.0.1';
	    GRANT ALL ON *.* TO 'taskspool'@'localhost';"
	echo "TS_TEST_MARIADB=127.0.0.1:$port"
	;;
stop)
	stop_pidfile "$dir/mariadbd.pid" 600
	;;
*)
	echo "usage: mariadb.sh start|stop DIR" >&2
	exit 64
	;;
esac
