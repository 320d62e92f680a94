#!/bin/sh
# callback_record rows in MariaDB (issue 6): every state change of a
# callback delivery (created, each try, DELIVERED, CALLBACK_FAILED) is a
# record file in outbox/records/ that the record writer upserts; after
# deliveries to local receivers (tests/tools/cbrecv.py: 200, 500 twice
# then 200, 302 until the tries run out, 410) the rows equal
# `taskspool callbacks list` and the delivery files, and `taskspool stats`
# counts the CALLBACK_FAILED ones.  A record applied again changes nothing.
# Needs mariadbd (TS_TEST_MARIADB, or a private server).
. "$(dirname "$0")/test-lib.sh"
RECV="$(cd "$(dirname "$0")/../tools" && pwd)/cbrecv.py"
. "$(dirname "$0")/records-lib.sh"	# (it moves into $TRASH)
mdb_use_server
mdb_database
# The secret of api-vectors.json C01.
echo "fsync = 0" >>"$CONF"
local_callbacks 200,200 whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=
cat >"$HOOKS/res" <<'H'
#!/bin/sh
echo '{"ok":true}' >"$TASKSPOOL_RESULT_FILE"
H
chmod +x "$HOOKS/res"
# One receiver per behaviour: each is its own endpoint, so one's failures
# never open the circuit breaker of another's (API.md §6.7).
for r in ok flaky redir gone; do
	python3 "$RECV" "$TRASH/$r.port" "$TRASH/$r.log" \
	    whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8= 2>>"$TRASH/recv.err" &
	DAEMON_PIDS="$DAEMON_PIDS $!"
	wait_for "test -f $TRASH/$r.port" 20 || { echo "Bail out! no receiver"; exit 1; }
done
url() { echo "http://127.0.0.1:$(cat "$TRASH/$1.port")/$2"; }

# finished: deliveries in delivered/ and failed/.
finished() { echo $(( $(count_files "$SPOOL/outbox/callbacks/delivered") + $(count_files "$SPOOL/outbox/callbacks/failed") )); }
# listed: `callbacks list` as requestId status tries http lastError.
listed() { ts callbacks list | tail -n +2 | awk '{print $1, $2, $3, $4, $5}' | sort; }
# rows: callback_record in the same form.
rows() {
	sql "SELECT request_id, state, attempts, COALESCE(last_status, '-'),
	    COALESCE(last_error, '-') FROM callback_record" | tr '\t' ' ' | sort
}
# files: delivery id and URL of each delivery file; dbfiles: the rows'.
files() {
	for f in "$SPOOL"/outbox/callbacks/delivered/*.json "$SPOOL"/outbox/callbacks/failed/*.json; do
		jq -r '[.requestId, .webhookId] | @tsv' "$f"
	done | sort
}
dbfiles() { sql "SELECT request_id, delivery_id FROM callback_record" | sort; }

test_expect_success 'db migrate; a daemon; 8 tasks with callbacks to 200, 500-500-200, 302, 410' '
	ts db migrate >/dev/null &&
	start_daemon n1 -j 4 &&
	for i in 1 2 3 4 5; do
		drop "cr-ok$i.json" "{\"requestId\":\"cr-ok$i\",\"taskCode\":\"res\",\"callbackUrl\":\"$(url ok ok)\"}" || return 1
	done &&
	drop cr-flaky.json "{\"requestId\":\"cr-flaky\",\"taskCode\":\"res\",\"callbackUrl\":\"$(url flaky flaky)\"}" &&
	drop cr-redir.json "{\"requestId\":\"cr-redir\",\"taskCode\":\"res\",\"callbackUrl\":\"$(url redir redirect)\"}" &&
	drop cr-gone.json "{\"requestId\":\"cr-gone\",\"taskCode\":\"res\",\"callbackUrl\":\"$(url gone gone)\"}" &&
	wait_for "test \$(finished) -eq 8" 60 &&
	wait_for "test \$(outbox_count) -eq 0" 30
'

test_expect_success 'callback_record rows equal taskspool callbacks list' '
	listed >"$TRASH/list" && rows >"$TRASH/rows" &&
	cat "$TRASH/list" &&
	test "$(wc -l <"$TRASH/list")" = 8 &&
	grep -qx "cr-flaky DELIVERED 3 200 -" "$TRASH/list" &&
	grep -qx "cr-redir CALLBACK_FAILED 3 302 HTTP_STATUS" "$TRASH/list" &&
	grep -qx "cr-gone CALLBACK_FAILED 1 410 HTTP_STATUS" "$TRASH/list" &&
	diff "$TRASH/list" "$TRASH/rows"
'

test_expect_success 'delivery ids and URLs as in the delivery files; no next try once finished' '
	files >"$TRASH/files" && dbfiles >"$TRASH/dbfiles" && diff "$TRASH/files" "$TRASH/dbfiles" &&
	test "$(sql "SELECT url FROM callback_record WHERE request_id = \"cr-flaky\"")" = "$(url flaky flaky)" &&
	test "$(sql "SELECT COUNT(*) FROM callback_record WHERE next_try_at IS NOT NULL")" = 0
'

test_expect_success 'taskspool stats counts the two CALLBACK_FAILED deliveries' '
	ts --json stats >"$TRASH/st.json" &&
	test "$(jq -r ".[] | select(.taskCode == \"res\") | .callbackFailures" "$TRASH/st.json")" = 2
'

test_expect_success 'an older record of a delivery, applied after the newer ones, changes nothing' '
	before=$(rows) &&
	printf "{\"v\":1,\"state\":\"CALLBACK\",\"requestId\":\"cr-flaky\",\"deliveryId\":\"%s\",\"url\":\"%s\",\"status\":\"PENDING\",\"attempts\":1,\"lastHttpStatus\":500,\"lastError\":\"HTTP_STATUS\",\"nextTryAt\":null,\"updatedAt\":\"2001-01-01T00:00:00.000Z\"}" \
	    "$(sql "SELECT delivery_id FROM callback_record WHERE request_id = \"cr-flaky\"")" "$(url flaky flaky)" >"$SPOOL/tmp/old" &&
	mv "$SPOOL/tmp/old" "$SPOOL/outbox/records/000000000000002.000000000.x.json" &&
	wait_for "test \$(outbox_count) -eq 0" 30 &&
	test ! -e "$SPOOL/corrupt/000000000000002.000000000.x.json" &&
	test "$(rows)" = "$before"
'

test_done
