#!/bin/sh
# Failure alerts (issue 14 item 5), embedded mode: the system hook
# hooks/_on_task_failed runs once per task that ends FAILED, with the
# result envelope on stdin, never for a success; a task that fails
# after retries runs it once, not per attempt.  The Alertmanager example
# hook (hooks/examples/alert-alertmanager) posts a one-element JSON
# array with the documented labels to a tiny receiver.
# The onFailure alert task: one per FAILED task (never for a success,
# once after retries), its stdin the envelope plus "alert":"failed",
# alertFor and a child traceparent; the config's on_failure; the
# transition mode over tasks of one jobCode (fail, fail, ok, fail ->
# failed, recovered, failed; also for a recurring job's fires); an
# alert task that fails raises nothing; a kill -9 + restart does not
# duplicate an alert, and one between the result and the move still
# raises it; a code without a hook waits in incoming/; a result too
# deep for a task file; the basic case in cluster mode (Redis).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
AM_HOOK=$(cd "$(dirname "$0")/../.." && pwd)/hooks/examples/alert-alertmanager

cat >"$HOOKS/fail" <<'H'
#!/bin/sh
echo "failing on purpose" >&2
exit 1
H
cat >"$HOOKS/ok" <<'H'
#!/bin/sh
exit 0
H
cat >"$HOOKS/_on_task_failed" <<H
#!/bin/sh
cat >>"$TRASH/tf.\$TASKSPOOL_REQUEST_ID"
echo "\$TASKSPOOL_TASK_CODE" >>"$TRASH/tf.env.\$TASKSPOOL_REQUEST_ID"
echo "\$PWD \${TRACEPARENT:-none} \${TASKSPOOL_TRACE_ID:-none}" >"$TRASH/tf.ctx.\$TASKSPOOL_REQUEST_ID"
H
cat >"$HOOKS/notify" <<H
#!/bin/sh
cat >>"$TRASH/al.\$TASKSPOOL_REQUEST_ID"
H
cat >"$HOOKS/notifyfail" <<H
#!/bin/sh
cat >>"$TRASH/al.\$TASKSPOOL_REQUEST_ID"
exit 1
H
chmod +x "$HOOKS/fail" "$HOOKS/ok" "$HOOKS/_on_task_failed" \
    "$HOOKS/notify" "$HOOKS/notifyfail"
TP=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01

# task ID CODE [MEMBERS]: drop a task file with maxRetries 0
task() {
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"$2\",\"maxRetries\":0${3:+,$3}}"
}
# alerts: the number of alert hook runs recorded so far
alerts() { find "$TRASH" -maxdepth 1 -name "al.*" | wc -l; }

test_expect_success "_on_task_failed: once per FAILED task, envelope on stdin, none for successes; in /, a child span of the task trace" '
	start_daemon e1 -j 2 &&
	for i in 1 2 3; do
		ts submit --code fail --id f$i --retries 0 >/dev/null &&
		ts submit --code ok --id s$i >/dev/null || return 1
	done &&
	for i in 1 2 3; do wait_terminal f$i && wait_terminal s$i || return 1; done &&
	wait_for "test -s \"$TRASH/tf.f1\" && test -s \"$TRASH/tf.f2\" && test -s \"$TRASH/tf.f3\"" &&
	sleep 1 &&
	for i in 1 2 3; do
		test "$(jq -r .requestId "$TRASH/tf.f$i")" = f$i &&
		test "$(jq -r .status "$TRASH/tf.f$i")" = FAILED &&
		test "$(jq -r .failureReason.code "$TRASH/tf.f$i")" = WORKER_EXIT &&
		test "$(jq -s length "$TRASH/tf.f$i")" = 1 &&
		test "$(cat "$TRASH/tf.env.f$i")" = fail &&
		! test -e "$TRASH/tf.s$i" || return 1
	done &&
	tp=$(jq -r .traceparent "$SPOOL/failed/f1.json") &&
	set -- $(cat "$TRASH/tf.ctx.f1") &&
	test "$1" = / &&
	test "$(echo "$2" | cut -d- -f2)" = "$(echo "$tp" | cut -d- -f2)" &&
	test "$(echo "$2" | cut -d- -f3)" != "$(echo "$tp" | cut -d- -f3)" &&
	test "$3" = "$(echo "$tp" | cut -d- -f2)"
'

test_expect_success "_on_task_failed: a task failing after retries runs it once" '
	ts submit --code fail --id r1 --retries 2 >/dev/null &&
	wait_terminal r1 &&
	test "$(jq -r .attempt "$SPOOL/results/r1.json")" = 3 &&
	wait_for "test -s \"$TRASH/tf.r1\"" && sleep 1 &&
	test "$(jq -s length "$TRASH/tf.r1")" = 1 &&
	test "$(jq -r .attempt "$TRASH/tf.r1")" = 3
'

test_expect_success "alert-alertmanager posts the documented labels to /api/v2/alerts" '
	python3 - "$TRASH/am.port" "$TRASH/am.log" >/dev/null 2>&1 <<PY &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        b = self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[2], "ab") as f:
            f.write(self.path.encode() + b" " + b + b"\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.handle_request()
PY
	wait_for "test -s \"$TRASH/am.port\"" &&
	ALERTMANAGER_URL=http://127.0.0.1:$(cat "$TRASH/am.port") \
	    "$AM_HOOK" <"$SPOOL/results/f1.json" &&
	wait_for "test -s \"$TRASH/am.log\"" &&
	test "$(cut -d" " -f1 "$TRASH/am.log")" = /api/v2/alerts &&
	cut -d" " -f2- "$TRASH/am.log" >"$TRASH/am.json" &&
	test "$(jq length "$TRASH/am.json")" = 1 &&
	test "$(jq -r ".[0].labels.alertname" "$TRASH/am.json")" = TaskspoolTaskFailed &&
	test "$(jq -r ".[0].labels.task_code" "$TRASH/am.json")" = fail &&
	test "$(jq -r ".[0].labels.request_id" "$TRASH/am.json")" = f1 &&
	test "$(jq -r ".[0].labels.node" "$TRASH/am.json")" = e1 &&
	test "$(jq -r ".[0].startsAt" "$TRASH/am.json")" = "$(jq -r .finishedAt "$SPOOL/results/f1.json")" &&
	test "$(jq -r ".[0].endsAt" "$TRASH/am.json")" = null
'

test_expect_success "onFailure: 3 failing + 3 succeeding tasks -> exactly 3 alert runs" '
	for i in 1 2 3; do
		task af$i fail "\"onFailure\":\"notify\",\"traceparent\":\"$TP\"" &&
		task as$i ok "\"onFailure\":\"notify\"" || return 1
	done &&
	for i in 1 2 3; do
		wait_terminal af$i && wait_terminal as$i &&
		wait_for "test \"\$(state_of af$i.onfailure)\" = done" || return 1
	done &&
	sleep 1 &&
	test "$(alerts)" = 3 &&
	for i in 1 2 3; do
		f="$TRASH/al.af$i.onfailure" &&
		test "$(jq -r .alert "$f")" = failed &&
		test "$(jq -r .requestId "$f")" = af$i &&
		test "$(jq -r .status "$f")" = FAILED &&
		test "$(jq -r .failureReason.code "$f")" = WORKER_EXIT &&
		t="$SPOOL/done/af$i.onfailure.json" &&
		test "$(jq -r .alertFor "$t")" = af$i &&
		test "$(jq -r .taskCode "$t")" = notify &&
		tp=$(jq -r .traceparent "$t") &&
		test "$(echo "$tp" | cut -d- -f2)" = 0af7651916cd43dd8448eb211c80319c &&
		test "$(echo "$tp" | cut -d- -f3)" != b7ad6b7169203331 &&
		! test -e "$TRASH/al.as$i.onfailure" &&
		! test -e "$SPOOL/done/as$i.onfailure.json" || return 1
	done
'

test_expect_success "onFailure: a task failing after 2 retries raises one alert" '
	drop ar1.json "{\"requestId\":\"ar1\",\"taskCode\":\"fail\",\"maxRetries\":2,\"onFailure\":\"notify\"}" &&
	wait_terminal ar1 &&
	wait_for "test \"\$(state_of ar1.onfailure)\" = done" && sleep 1 &&
	test "$(jq -s length "$TRASH/al.ar1.onfailure")" = 1 &&
	test "$(jq -r .attempt "$TRASH/al.ar1.onfailure")" = 3
'

test_expect_success "onFailure: a result too deep for a task file: the alert carries no envelope" '
	cat >"$HOOKS/deepfail" <<H &&
#!/bin/sh
python3 -c "print(\"[\" * 32 + \"]\" * 32)" >"\$TASKSPOOL_RESULT_FILE"
exit 1
H
	chmod +x "$HOOKS/deepfail" &&
	task ad1 deepfail "\"onFailure\":\"notify\"" &&
	wait_terminal ad1 &&
	wait_for "test \"\$(state_of ad1.onfailure)\" = done" && sleep 1 &&
	test "$(jq -r .alert "$TRASH/al.ad1.onfailure")" = failed &&
	test "$(jq -r .status "$TRASH/al.ad1.onfailure")" = FAILED &&
	test "$(jq -r .requestId "$TRASH/al.ad1.onfailure")" = ad1 &&
	test "$(jq -r .envelopeOmitted "$TRASH/al.ad1.onfailure")" = true
'

test_expect_success "onFailure: an alert task that fails raises nothing" '
	task an1 fail "\"onFailure\":\"notifyfail\"" &&
	wait_terminal an1 &&
	wait_for "test \"\$(state_of an1.onfailure)\" = failed" && sleep 2 &&
	test "$(jq -r .alertFor "$SPOOL/failed/an1.onfailure.json")" = an1 &&
	! test -e "$SPOOL/incoming/an1.onfailure.onfailure.json" &&
	test "$(state_of an1.onfailure.onfailure)" = ""
'

test_expect_success "onFailure: a code without a hook waits in incoming/" '
	task aw1 fail "\"onFailure\":\"nohook\"" &&
	wait_terminal aw1 && sleep 2 &&
	test "$(state_of aw1.onfailure)" = incoming &&
	test "$(ts status aw1.onfailure | grep -c WAITING)" -ge 1
'

test_expect_success "onFailure: an invalid code name is refused at submit" '
	echo "{\"taskCode\":\"ok\",\"onFailure\":\"-bad\"}" >"$TRASH/bad.json" &&
	! ts submit "$TRASH/bad.json" 2>"$TRASH/bad.err" &&
	grep -q onFailure "$TRASH/bad.err" &&
	echo "{\"taskCode\":\"ok\",\"onFailureMode\":\"sometimes\"}" >"$TRASH/bad2.json" &&
	! ts submit "$TRASH/bad2.json" 2>"$TRASH/bad2.err" &&
	grep -q onFailureMode "$TRASH/bad2.err" &&
	! ts submit --code ok --on-failure -bad 2>"$TRASH/bad3.err" &&
	grep -q "^taskspool submit: invalid task: onFailure:" "$TRASH/bad3.err" &&
	! ts submit --code ok --on-failure notify --on-failure-mode sometimes 2>"$TRASH/bad4.err" &&
	grep -q "^taskspool submit: invalid task: onFailureMode:" "$TRASH/bad4.err"
'

test_expect_success "submit --on-failure: a failing task raises its alert, a succeeding one none" '
	ts submit --code fail --id ac1 --on-failure notify >/dev/null &&
	ts submit --code ok --id ac2 --on-failure notify --on-failure-mode every >/dev/null &&
	wait_terminal ac1 && wait_terminal ac2 &&
	test "$(jq -r .onFailure "$SPOOL/failed/ac1.json")" = notify &&
	test "$(jq -r .onFailureMode "$SPOOL/done/ac2.json")" = every &&
	wait_for "test \"\$(state_of ac1.onfailure)\" = done" && sleep 1 &&
	test "$(jq -r .requestId "$TRASH/al.ac1.onfailure")" = ac1 &&
	! test -e "$TRASH/al.ac2.onfailure"
'

test_expect_success "transition over one jobCode: fail, fail, ok, fail -> failed, recovered, failed" '
	m="\"onFailure\":\"notify\",\"onFailureMode\":\"transition\",\"jobCode\":\"nightly\"" &&
	task j1 fail "$m" && wait_terminal j1 &&
	wait_for "test \"\$(state_of j1.onfailure)\" = done" &&
	task j2 fail "$m" && wait_terminal j2 && sleep 1 &&
	task j3 ok "$m" && wait_terminal j3 &&
	wait_for "test \"\$(state_of j3.onrecovery)\" = done" &&
	task j4 fail "$m" && wait_terminal j4 &&
	wait_for "test \"\$(state_of j4.onfailure)\" = done" && sleep 1 &&
	test "$(jq -r .alert "$TRASH/al.j1.onfailure")" = failed &&
	! test -e "$TRASH/al.j2.onfailure" &&
	test "$(jq -r .alert "$TRASH/al.j3.onrecovery")" = recovered &&
	test "$(jq -r .status "$TRASH/al.j3.onrecovery")" = SUCCESS &&
	test "$(jq -r .alert "$TRASH/al.j4.onfailure")" = failed &&
	test "$(cat "$SPOOL/state/alerts/nightly")" = FAILED
'

test_expect_success "transition without jobCode behaves as every" '
	task tn1 fail "\"onFailure\":\"notify\",\"onFailureMode\":\"transition\"" &&
	task tn2 fail "\"onFailure\":\"notify\",\"onFailureMode\":\"transition\"" &&
	wait_terminal tn1 && wait_terminal tn2 &&
	wait_for "test -e \"$TRASH/al.tn1.onfailure\" && test -e \"$TRASH/al.tn2.onfailure\""
'

test_expect_success "transition over a recurring job: fail, fail, ok, fail -> failed, recovered, failed" '
	cat >"$HOOKS/flip" <<H &&
#!/bin/sh
n=\$(( \$(cat "$TRASH/flip.n" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$TRASH/flip.n"
echo "\$TASKSPOOL_REQUEST_ID" >>"$TRASH/flip.ids"
case \$n in 3) exit 0;; *) exit 1;; esac
H
	chmod +x "$HOOKS/flip" &&
	echo "{\"jobCode\":\"flipjob\",\"taskCode\":\"flip\",\"fixedDelayMs\":300,\"maxRetries\":0,\"onFailure\":\"notify\",\"onFailureMode\":\"transition\"}" >"$TRASH/flipjob.json" &&
	ts jobs add "$TRASH/flipjob.json" >/dev/null &&
	wait_for "test \"\$(cat \"$TRASH/flip.n\" 2>/dev/null)\" -ge 5" 60 &&
	ts jobs remove flipjob >/dev/null && sleep 2 &&
	id1=$(sed -n 1p "$TRASH/flip.ids") && id2=$(sed -n 2p "$TRASH/flip.ids") &&
	id3=$(sed -n 3p "$TRASH/flip.ids") && id4=$(sed -n 4p "$TRASH/flip.ids") &&
	test "$(jq -r .onFailure "$SPOOL/failed/$id1.json")" = notify &&
	test "$(jq -r .alert "$TRASH/al.$id1.onfailure")" = failed &&
	! test -e "$TRASH/al.$id2.onfailure" &&
	test "$(jq -r .alert "$TRASH/al.$id3.onrecovery")" = recovered &&
	test "$(jq -r .alert "$TRASH/al.$id4.onfailure")" = failed &&
	test "$(find "$TRASH" -maxdepth 1 -name "al.flipjob.*" | wc -l)" = 3
'

test_expect_success "config on_failure: the default code for tasks without one" '
	stop_daemon e1 &&
	echo "on_failure = notify" >>"$CONF" &&
	start_daemon e1 -j 2 &&
	task cf1 fail && task cs1 ok &&
	wait_terminal cf1 && wait_terminal cs1 &&
	wait_for "test \"\$(state_of cf1.onfailure)\" = done" && sleep 1 &&
	test "$(jq -r .alert "$TRASH/al.cf1.onfailure")" = failed &&
	! test -e "$TRASH/al.cs1.onfailure"
'

# The crash window between results/<id>.json and the move into failed/:
# the recovering daemon completes the move and publishes the alert.
test_expect_success "kill -9 between the result and the move: the restart raises the alert once" '
	stop_daemon e1 &&
	jq -c ".requestId = \"cr1\"" "$SPOOL/results/f1.json" >"$SPOOL/results/cr1.json" &&
	mkdir -p "$SPOOL/active/e1" &&
	printf "%s" "{\"requestId\":\"cr1\",\"taskCode\":\"fail\",\"maxRetries\":0,\"onFailure\":\"notify\"}" >"$SPOOL/active/e1/cr1.json" &&
	start_daemon e1 -j 2 &&
	wait_for "test \"\$(state_of cr1)\" = failed" &&
	wait_for "test \"\$(state_of cr1.onfailure)\" = done" && sleep 1 &&
	test "$(jq -s length "$TRASH/al.cr1.onfailure")" = 1 &&
	test "$(jq -r .alert "$TRASH/al.cr1.onfailure")" = failed &&
	test "$(jq -r .requestId "$TRASH/al.cr1.onfailure")" = cr1
'

# A hook run lost to the kill -9 is retried (at least once, as any task):
# the same alert task with the same stdin, never a second alert task.
test_expect_success "kill -9 + restart does not duplicate an alert" '
	for i in 1 2 3 4; do task k$i fail || return 1; done &&
	for i in 1 2 3 4; do wait_terminal k$i || return 1; done &&
	kill9_daemon e1 &&
	start_daemon e1 -j 2 &&
	for i in 1 2 3 4; do
		wait_for "test \"\$(state_of k$i.onfailure)\" = done" || return 1
	done && sleep 2 &&
	for i in 1 2 3 4; do
		test "$(find "$SPOOL" -name "k$i.onfailure*.json" -path "*/done/*" | wc -l)" = 1 &&
		test "$(find "$SPOOL" -name "k$i.onfailure*" ! -path "*/results/*" ! -path "*/logs/*" | wc -l)" = 1 &&
		test "$(jq -s "unique | length" "$TRASH/al.k$i.onfailure")" = 1 || return 1
	done
'

test_expect_success "cluster mode (Redis): one alert task per FAILED task, none for a success" '
	stop_daemon e1 &&
	redis_setup &&
	start_daemon c1 -j 2 &&
	for i in 1 2 3; do task cl$i fail "\"onFailure\":\"notify\"" || return 1; done &&
	task cls ok "\"onFailure\":\"notify\"" &&
	for i in 1 2 3; do
		wait_terminal cl$i &&
		wait_for "test \"\$(state_of cl$i.onfailure)\" = done" || return 1
	done &&
	wait_terminal cls && sleep 1 &&
	for i in 1 2 3; do
		test "$(jq -s length "$TRASH/al.cl$i.onfailure")" = 1 &&
		test "$(jq -r .alertFor "$SPOOL/done/cl$i.onfailure.json")" = cl$i || return 1
	done &&
	! test -e "$TRASH/al.cls.onfailure" &&
	stop_daemon c1
'

test_done
