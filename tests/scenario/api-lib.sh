# api-lib.sh — sourced after test-lib.sh by the API scenarios that need
# their own lighttpd (t0051, t0052).
#
# api_server: use the lighttpd named by TS_TEST_LIGHTTPD /
# TS_TEST_LIGHTTPD_DIR (pointing its taskspool.cgi and taskspool.conf links
# at this test's build and $CONF), or start a private one with
# tests/servers/lighttpd.sh in $TRASH/lighttpd, stopped at exit by
# api_cleanup (a test with a trap of its own calls api_stop in it).  Sets
# HOSTPORT and exports TS_URL.
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
	if [ -n "${TS_TEST_LIGHTTPD:-}" ]; then
		ln -sf "$BUILD/taskspool.cgi" "$TS_TEST_LIGHTTPD_DIR/taskspool.cgi"
		ln -sf "$CONF" "$TS_TEST_LIGHTTPD_DIR/taskspool.conf"
		HOSTPORT=$TS_TEST_LIGHTTPD
	else
		_al_out=$(BUILD="$BUILD" TASKSPOOL_CONFIG="$CONF" sh "$API_HERE/tests/servers/lighttpd.sh" start "$TRASH/lighttpd") ||
		    { echo "Bail out! lighttpd did not start"; exit 1; }
		API_SRV="$TRASH/lighttpd"
		HOSTPORT=${_al_out#TS_TEST_LIGHTTPD=}
		HOSTPORT=${HOSTPORT%%
*}
	fi
	TS_URL="http://$HOSTPORT"
	export TS_URL
}
