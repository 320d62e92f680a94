# api-lib.sh — sourced after test-lib.sh by the API scenarios (t0050-t0053).
#
# api_server: use the lighttpd named by TS_TEST_LIGHTTPD /
# TS_TEST_LIGHTTPD_DIR (pointing its taskspool.cgi and taskspool.conf links
# at this test's build and $CONF), or start a private one with
# tests/servers/lighttpd.sh in $TRASH/lighttpd, stopped at exit by
# api_cleanup (a test with a trap of its own calls api_stop in it).  Sets
# HOSTPORT and exports TS_URL.  With TS_LIGHTTPD_FASTCGI=1 it always
# starts a private one serving taskspool.fcgi (lighttpd.sh).
API_HERE=$(cd "$(dirname "$0")/../.." && pwd)
API_SRV=""

api_stop() {
	[ -n "$API_SRV" ] && sh "$API_HERE/tests/servers/lighttpd.sh" stop "$API_SRV"
	API_SRV=""
}
api_cleanup() {
	api_stop
	cleanup
}

api_server() {
	if [ -n "${TS_TEST_LIGHTTPD:-}" ] && [ "${TS_LIGHTTPD_FASTCGI:-0}" != 1 ]; then
		ln -sf "$BUILD/taskspool.cgi" "$TS_TEST_LIGHTTPD_DIR/taskspool.cgi"
		ln -sf "$CONF" "$TS_TEST_LIGHTTPD_DIR/taskspool.conf"
		HOSTPORT=$TS_TEST_LIGHTTPD
	else
		_al_out=$(BUILD="$BUILD" TASKSPOOL_CONFIG="$CONF" sh "$API_HERE/tests/servers/lighttpd.sh" start "$TRASH/lighttpd") ||
		    { echo "Bail out! lighttpd did not start"; exit 1; }
		API_SRV="$TRASH/lighttpd"
		HOSTPORT=${_al_out#*=}
		HOSTPORT=${HOSTPORT%%
*}
	fi
	TS_URL="http://$HOSTPORT"
	export TS_URL
}

# api_tester: durable writes off (tests only), the hooks of api_hooks, and
# the app "tester" (task codes echo and count) as TS_APP_ID and TS_SECRET,
# exported for the clients.
api_tester() {
	echo "fsync = 0" >>"$CONF" && api_hooks &&
	TS_SECRET=$(ts apps add tester --codes echo,count) &&
	TS_APP_ID=tester && export TS_APP_ID TS_SECRET
}

# api_hooks: the hooks the API scenarios submit to: echo (its result is
# {"got": executeParams}) and count (appends the attempt number to
# $TRASH/count.<requestId>, one line per run).
api_hooks() {
	cat >"$HOOKS/echo" <<'H'
#!/bin/sh
printf '{"got":%s}\n' "$(cat)" >"$TASKSPOOL_RESULT_FILE"
H
	cat >"$HOOKS/count" <<H
#!/bin/sh
echo "\$TASKSPOOL_ATTEMPT" >>"$TRASH/count.\$TASKSPOOL_REQUEST_ID"
H
	chmod +x "$HOOKS/echo" "$HOOKS/count"
}

# After a request that wrote its answer to $TRASH/body and $TRASH/hdr and
# its status to $st: code prints the problem code; expect STATUS CODE
# checks the status, the code and the problem media type.  body TEXT
# writes TEXT to a file and prints its name.
code() { jq -r .code "$TRASH/body"; }
body() { printf '%s' "$1" >"$TRASH/req.json"; echo "$TRASH/req.json"; }
expect() {
	test "$st" = "$1" || { echo "status $st, want $1"; cat "$TRASH/body"; return 1; }
	test "$(code)" = "$2" || { echo "code $(code), want $2"; cat "$TRASH/body"; return 1; }
	grep -qi '^Content-Type: application/problem+json' "$TRASH/hdr"
}

# api_e2e ID: the shell client submits task ID (echo, executeParams
# {"x":[1,2]}, body in $TRASH/e2e.json) as app tester: 202 PENDING with
# its Location; it waits, and the task ends SUCCESS with the hook's
# result, no callback registered, the app recorded in the task file.
api_e2e() {
	printf '{"requestId":"%s","taskCode":"echo","executeParams":{"x":[1,2]}}' "$1" >"$TRASH/e2e.json" &&
	TS_VERBOSE=1 sh "$API_HERE/contrib/clients/tsapi.sh" submit "$TRASH/e2e.json" >"$TRASH/out" 2>"$TRASH/err" &&
	grep -q "^HTTP/1.1 202" "$TRASH/err" &&
	grep -qi "^Location: /api/tasks/$1" "$TRASH/err" &&
	test "$(jq -r .status "$TRASH/out")" = PENDING &&
	sh "$API_HERE/contrib/clients/tsapi.sh" wait "$1" 30 >"$TRASH/out" &&
	test "$(jq -r .status "$TRASH/out")" = SUCCESS &&
	test "$(jq -c .result "$TRASH/out")" = '{"got":{"x":[1,2]}}' &&
	test "$(jq -r .callback.status "$TRASH/out")" = NOT_REGISTERED &&
	test "$(jq -r .durationMs "$TRASH/out")" -ge 0 &&
	test "$(jq -r .appId "$SPOOL/done/$1.json")" = tester
}

# api_race ID: 50 concurrent submissions of requestId ID (task code count)
# with the shell client at $TS_URL all answer 2xx with ID, and exactly one
# task ran, once.
api_race() {
	printf '{"requestId":"%s","taskCode":"count"}' "$1" >"$TRASH/race.json" &&
	_ar_pids= && _ar_i=0 && while [ $_ar_i -lt 50 ]; do
		( sh "$API_HERE/contrib/clients/tsapi.sh" submit "$TRASH/race.json" >"$TRASH/race.$_ar_i" 2>&1
		  echo $? >"$TRASH/race.$_ar_i.rc" ) &
		_ar_pids="$_ar_pids $!"; _ar_i=$((_ar_i + 1))
	done && for _ar_p in $_ar_pids; do wait "$_ar_p"; done &&
	_ar_i=0 && while [ $_ar_i -lt 50 ]; do
		test "$(cat "$TRASH/race.$_ar_i.rc")" = 0 &&
		test "$(jq -r .requestId "$TRASH/race.$_ar_i")" = "$1" || { cat "$TRASH/race.$_ar_i"; return 1; }
		_ar_i=$((_ar_i + 1))
	done &&
	wait_terminal "$1" &&
	sleep 1 &&
	test "$(wc -l <"$TRASH/count.$1")" = 1 &&
	test "$(find "$SPOOL" -name "$1.json" -not -path "*/results/*" -not -path "*/state/*" | wc -l)" = 1 &&
	test "$(ls "$SPOOL/state/requests" | grep -c "^$1")" = 1
}
