# Sourced by the tests/servers/*.sh scripts: what they share.

# stop_pidfile FILE TENTHS: stop the process whose pid FILE holds, as the
# scripts' `stop DIR` does: SIGTERM, wait up to TENTHS tenths of a second
# for it to exit, SIGKILL if it is still there, remove FILE.  A missing
# FILE or a process already gone is not an error.
stop_pidfile() {
	[ -f "$1" ] || return 0
	_sp_pid=$(cat "$1")
	if kill "$_sp_pid" 2>/dev/null; then
		_sp_i=0
		while kill -0 "$_sp_pid" 2>/dev/null && [ "$_sp_i" -lt "$2" ]; do
			sleep 0.1
			_sp_i=$((_sp_i + 1))
		done
		kill -9 "$_sp_pid" 2>/dev/null || true
	fi
	rm -f "$1"
}
