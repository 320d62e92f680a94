# bench-lib.sh — the preamble the tests/bench/*.sh scripts share.  Sourced
# after the script's `set` line:  . "$(dirname "$0")/bench-lib.sh"
# Gives BUILD (default build), here (the source tree's top), servers
# (tests/servers), the work directory, a spool with the no-op hook, a
# daemon started and waited for, and the Redis or MariaDB a benchmark uses
# (the one CI names, else a private one).  Each script keeps its own EXIT
# trap (what it stops and how differs); bench_servers_stop stops what
# bench_server started.
: "${BUILD:=build}"
here=$(cd "$(dirname "$0")/../.." && pwd)
servers="$here/tests/servers"
bench_started=""

# bench_workdir NAME: work = a new directory "${TMPDIR:-/tmp}/NAME.XXXXXX"
# (the caller's trap removes it).
bench_workdir() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
}

# bench_spool SPOOL HOOKS SLOTS FSYNC [LOG_LEVEL]: `taskspool init` SPOOL,
# HOOKS/stamp = the static no-op hook (tests/tools/stamp.c), and a
# taskspool.conf with spool, hooks_dir, slots, fsync and log_level
# (default warning); the caller appends its own keys with >>.
bench_spool() {
	"$BUILD/taskspool" init "$1" >/dev/null
	mkdir -p "$2"
	cp "$BUILD/tools/stamp" "$2/stamp"
	cat >"$1/taskspool.conf" <<CONF
spool = $1
hooks_dir = $2
slots = $3
fsync = $4
log_level = ${5:-warning}
CONF
}

# bench_api_spool SPOOL FSYNC APP: `taskspool init` SPOOL with fsync =
# FSYNC, the shell hook `noop` (exit 0), and the API application APP
# allowed the code noop; prints APP's secret (`taskspool apps add`).
bench_api_spool() {
	"$BUILD/taskspool" init "$1" >/dev/null
	echo "fsync = $2" >>"$1/taskspool.conf"
	printf '#!/bin/sh\nexit 0\n' >"$1/hooks/noop" && chmod +x "$1/hooks/noop"
	"$BUILD/taskspool" -s "$1" apps add "$3" --codes noop
}

# bench_daemon SPOOL NODE LOG [ARG...]: taskspoold -d -s SPOOL ARG... in
# the background, stdout and stderr appended to LOG; returns once NODE's
# heartbeat file is there.  bench_pid = its pid.
bench_daemon() {
	bd_spool=$1 bd_node=$2 bd_log=$3
	shift 3
	rm -f "$bd_spool/state/heartbeat.$bd_node"
	"$BUILD/taskspoold" -d -s "$bd_spool" "$@" >>"$bd_log" 2>&1 &
	bench_pid=$!
	while [ ! -f "$bd_spool/state/heartbeat.$bd_node" ]; do sleep 0.01; done
}

# bench_server NAME VAR: bench_addr = the address $VAR names (CI's
# TS_TEST_REDIS or TS_TEST_MARIADB) when it is set, else that of a private
# server started in $work/NAME by servers/NAME.sh (which prints VAR=ADDR).
bench_server() {
	eval "bench_addr=\${$2:-}"
	if [ -z "$bench_addr" ]; then
		bench_started="$bench_started $1"	# stopped even if half started
		out=$(sh "$servers/$1.sh" start "$work/$1")
		bench_addr=${out#"$2="}
	fi
}

# bench_servers_stop: stop the private servers bench_server started (none:
# nothing).  For the EXIT trap.
bench_servers_stop() {
	for s in $bench_started; do
		sh "$servers/$s.sh" stop "$work/$s" >/dev/null 2>&1 || true
	done
}
