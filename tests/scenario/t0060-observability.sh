#!/bin/sh
# Observability and operations (issue 7): the metrics file against what
# the scenario did (promtool check metrics, counter values), logfmt lines
# with every state change, the alert rules (promtool check rules), the
# Grafana dashboard's metric names against a live metrics file, the
# systemd units (systemd-analyze verify), the manual pages (mandoc lint),
# `make install`, logrotate expiry of hook logs, `taskspool top` in an
# 80x24 tmux pane and `taskspool status` without arguments.
. "$(dirname "$0")/test-lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# skip_test DESCRIPTION REASON: a visible TAP skip.
skip_test() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}
have() { command -v "$1" >/dev/null 2>&1; }

# metric NAME{LABELS} FILE: the value of one sample ("" when absent).
metric() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

# A hook that holds its slot until the file $SPOOL/gate exists.
cat >"$HOOKS/gate" <<H
#!/bin/sh
cat >/dev/null
while [ ! -e "$SPOOL/gate" ]; do sleep 0.05; done
H
chmod +x "$HOOKS/gate"
cp "$SRC/hooks/flaky" "$HOOKS/flaky"
M="$SPOOL/metrics/n1.prom"
# The views count a node live while its heartbeat is younger than 3
# heartbeat_ms: give them the default 5 s (15 s), not the 0.5 s the
# daemon here writes with, so a loaded machine cannot fail the test.
sed "s/^heartbeat_ms = .*/heartbeat_ms = 5000/" "$CONF" >"$TRASH/view.conf"

# Conditions waited for (the file is replaced atomically, so each read
# sees one whole version).
busy_seen() {
	test "$(metric 'taskspool_queue_depth{node="n1",state="pending"}' "$M")" = 1 &&
	test "$(metric 'taskspool_queue_depth{node="n1",state="delayed"}' "$M")" = 1
}
all_seen() {
	test "$(metric 'taskspool_corrupt_total{node="n1"}' "$M")" = 1 &&
	test "$(metric 'taskspool_tasks_total{node="n1",task_code="flaky",status="SUCCESS"}' "$M")" = 2 &&
	test "$(metric 'taskspool_tasks_total{node="n1",task_code="probe",status="FAILED"}' "$M")" = 3 &&
	test "$(metric 'taskspool_queue_depth{node="n1",state="running"}' "$M")" = 0
}

test_expect_success 'daemon starts with logfmt logs and fast metrics' '
	start_daemon n1 -j 2 -o log_format=logfmt -o metrics_interval_ms=200
'

# Phase 1: both slots held by gate hooks, one due task waiting in
# incoming/ with an mtime 100 s in the past, one task delayed 10 min.
test_expect_success 'busy slots, a pending task and its age, a delayed task' '
	ts submit --id g1 --code gate >/dev/null &&
	ts submit --id g2 --code gate >/dev/null &&
	wait_for "test \"\$(state_of g1)\" = active && test \"\$(state_of g2)\" = active" &&
	printf "{\"requestId\":\"old1\",\"taskCode\":\"probe\"}" >"$SPOOL/tmp/old1" &&
	touch -d "@$(( $(date +%s) - 100 ))" "$SPOOL/tmp/old1" &&
	mv "$SPOOL/tmp/old1" "$SPOOL/incoming/old1.json" &&
	ts submit --id late1 --code probe --delay 600000 >/dev/null &&
	wait_for busy_seen &&
	cp "$M" "$TRASH/busy.prom" && cat "$TRASH/busy.prom" &&
	test "$(metric "taskspool_slots{node=\"n1\",kind=\"total\"}" "$TRASH/busy.prom")" = 2 &&
	test "$(metric "taskspool_slots{node=\"n1\",kind=\"busy\"}" "$TRASH/busy.prom")" = 2 &&
	test "$(metric "taskspool_queue_depth{node=\"n1\",state=\"running\"}" "$TRASH/busy.prom")" = 2 &&
	test "$(metric "taskspool_queue_depth{node=\"n1\",state=\"delayed\"}" "$TRASH/busy.prom")" = 1 &&
	test "$(metric "taskspool_leader{node=\"n1\"}" "$TRASH/busy.prom")" = 1 &&
	age=$(metric "taskspool_oldest_pending_age_seconds{node=\"n1\"}" "$TRASH/busy.prom") &&
	awk -v a="$age" "BEGIN { exit !(a >= 100 && a < 200) }"
'

# Phase 2: 8 successes, 3 permanent failures (exit 65), 2 tasks that
# fail once with 75 and succeed on the retry, 1 corrupt file.
test_expect_success 'run N tasks, some failing; all reach a terminal state' '
	touch "$SPOOL/gate" &&
	for i in 1 2 3 4 5 6 7 8; do ts submit --id ok$i --code probe >/dev/null || return 1; done &&
	for i in 1 2 3; do ts submit --id bad$i --code probe --params "{\"exit\": 65}" >/dev/null || return 1; done &&
	for i in 1 2; do ts submit --id fl$i --code flaky --retries 3 >/dev/null || return 1; done &&
	drop broken.json "{\"taskCode\": " &&
	for id in g1 g2 old1 ok1 ok2 ok3 ok4 ok5 ok6 ok7 ok8 bad1 bad2 bad3 fl1 fl2; do
		wait_terminal $id 60 || { echo "$id: $(state_of $id)"; return 1; }
	done &&
	wait_for "test -e $SPOOL/corrupt/broken.json" &&
	test "$(count_files "$SPOOL/done")" = 13 &&
	test "$(count_files "$SPOOL/failed")" = 3
'

test_expect_success 'the metrics file passes promtool check metrics' '
	if ! have promtool; then echo "promtool missing (Debian package prometheus)"; return 1; fi &&
	wait_for all_seen &&
	cp "$M" "$TRASH/m.prom" &&
	promtool check metrics <"$TRASH/m.prom" &&
	promtool check metrics <"$TRASH/busy.prom"
'

# Hand count: 2 gate + old1 + 8 ok = 11 SUCCESS of codes gate/probe, 2
# flaky SUCCESS, 3 probe FAILED; attempts 2+1+8+3+2*2 = 18, of which 2
# TEMPFAIL (flaky's first attempts), 3 FAILED, 13 SUCCESS; 2 retries.
test_expect_success 'counters equal what happened' '
	m="$TRASH/m.prom" &&
	test "$(metric "taskspool_tasks_total{node=\"n1\",task_code=\"probe\",status=\"SUCCESS\"}" $m)" = 9 &&
	test "$(metric "taskspool_tasks_total{node=\"n1\",task_code=\"gate\",status=\"SUCCESS\"}" $m)" = 2 &&
	test "$(metric "taskspool_tasks_total{node=\"n1\",task_code=\"flaky\",status=\"SUCCESS\"}" $m)" = 2 &&
	test "$(metric "taskspool_tasks_total{node=\"n1\",task_code=\"probe\",status=\"FAILED\"}" $m)" = 3 &&
	test "$(metric "taskspool_tasks_total{node=\"n1\",task_code=\"probe\",status=\"CANCELLED\"}" $m)" = 0 &&
	test "$(awk "/^taskspool_tasks_total.*status=\"SUCCESS\"/ { s += \$2 } END { print s }" $m)" = 13 &&
	test "$(metric "taskspool_attempts_total{node=\"n1\",task_code=\"flaky\",outcome=\"TEMPFAIL\"}" $m)" = 2 &&
	test "$(metric "taskspool_retries_total{node=\"n1\"}" $m)" = 2 &&
	test "$(metric "taskspool_corrupt_total{node=\"n1\"}" $m)" = 1 &&
	test "$(metric "taskspool_lease_lost_total{node=\"n1\"}" $m)" = 0 &&
	test "$(metric "taskspool_metrics_interval_seconds{node=\"n1\"}" $m)" = 0.200 &&
	test "$(metric "taskspool_metrics_stopped{node=\"n1\"}" $m)" = 0 &&
	v=$("$TS" --version | cut -d" " -f2) &&
	test "$(metric "taskspool_build_info{node=\"n1\",version=\"$v\"}" $m)" = 1 &&
	w=$(metric "taskspool_metrics_written_timestamp_seconds{node=\"n1\"}" $m) &&
	awk -v w="$w" -v t="$(stat -c %Y "$M")" "BEGIN { exit !(w > t - 60 && w < t + 60) }" &&
	test "$(metric "taskspool_trigger_delay_seconds_count{node=\"n1\"}" $m)" = 18 &&
	test "$(awk "/^taskspool_execution_duration_seconds_count/ { s += \$2 } END { print s }" $m)" = 18 &&
	test "$(metric "taskspool_execution_duration_seconds_bucket{node=\"n1\",task_code=\"probe\",le=\"+Inf\"}" $m)" = 12 &&
	test "$(metric "taskspool_queue_depth{node=\"n1\",state=\"pending\"}" $m)" = 0 &&
	test "$(metric "taskspool_queue_depth{node=\"n1\",state=\"delayed\"}" $m)" = 1 &&
	test "$(metric "taskspool_slots{node=\"n1\",kind=\"busy\"}" $m)" = 0 &&
	test "$(metric "taskspool_callbacks_total{node=\"n1\",outcome=\"ok\"}" $m)" = 0 &&
	test "$(metric "taskspool_callback_circuit_open{node=\"n1\"}" $m)" = 0 &&
	test "$(metric "taskspool_outbox_depth{node=\"n1\",kind=\"callback\"}" $m)" = 0 &&
	age=$(metric "taskspool_node_heartbeat_age_seconds{node=\"n1\",peer=\"n1\"}" $m) &&
	awk -v a="$age" "BEGIN { exit !(a >= 0 && a < 30) }"
'

test_expect_success 'every metric the issue names is exported' '
	awk "/^# TYPE / { print \$3 }" "$TRASH/m.prom" | sort >"$TRASH/names" &&
	cat "$TRASH/names" &&
	for n in taskspool_tasks_total taskspool_retries_total \
	    taskspool_execution_duration_seconds taskspool_trigger_delay_seconds \
	    taskspool_queue_depth taskspool_slots taskspool_node_heartbeat_age_seconds \
	    taskspool_leader taskspool_lease_lost_total taskspool_corrupt_total \
	    taskspool_callbacks_total taskspool_callback_circuit_open \
	    taskspool_outbox_depth taskspool_oldest_pending_age_seconds \
	    taskspool_metrics_written_timestamp_seconds \
	    taskspool_metrics_interval_seconds taskspool_metrics_stopped; do
		grep -qx "$n" "$TRASH/names" || { echo "missing $n"; return 1; }
	done &&
	for s in pending waiting delayed dispatched running; do
		grep -q "^taskspool_queue_depth{node=\"n1\",state=\"$s\"} " "$TRASH/m.prom" || return 1
	done
'

# logfmt: ts level node event [requestId taskCode attempt] msg, values
# quoted with backslash escapes where needed.
LOGFMT='^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z level=(error|warning|info|debug) node=n1 event=[a-z.]+( requestId=[A-Za-z0-9_.-]+)?( taskCode=[A-Za-z0-9_.-]+)?( attempt=[0-9]+)? msg=("([^"\\]|\\.)*"|[^ "]+)$'
test_expect_success 'every log line is logfmt; each state change names its requestId' '
	! grep -Ev "$LOGFMT" "$TRASH/log.n1" &&
	test "$(grep -c " event=task.running " "$TRASH/log.n1")" = 18 &&
	for id in g1 g2 old1 ok1 ok8 fl1 fl2; do
		grep -q "event=task.running requestId=$id taskCode=[a-z]* attempt=1 " "$TRASH/log.n1" &&
		grep -q "event=task.success requestId=$id " "$TRASH/log.n1" || { echo "$id"; return 1; }
	done &&
	for id in bad1 bad2 bad3; do
		grep -q "event=task.failed requestId=$id taskCode=probe attempt=1 msg=\"$id: FAILED after 1 attempt(s): exit 65 " "$TRASH/log.n1" || return 1
	done &&
	test "$(grep -c "event=task.retry requestId=fl[12] taskCode=flaky attempt=1 " "$TRASH/log.n1")" = 2 &&
	grep -q "event=task.running requestId=fl1 taskCode=flaky attempt=2 " "$TRASH/log.n1" &&
	grep -q "event=log msg=\"rejected broken.json → corrupt/: " "$TRASH/log.n1"
'

test_expect_success 'taskspool status without arguments: one screen' '
	"$TS" -c "$TRASH/view.conf" status >"$TRASH/status.out" && cat "$TRASH/status.out" &&
	test "$(wc -l <"$TRASH/status.out")" -le 24 &&
	awk "length(\$0) > 80 { bad = 1 } END { exit bad }" "$TRASH/status.out" &&
	grep -q "^NODES 1 live of 1, leader n1" "$TRASH/status.out" &&
	grep -q "^  n1\* " "$TRASH/status.out" &&
	grep -q "^QUEUE pending 0  waiting 0  blocked 0  delayed 1  running 0" "$TRASH/status.out" &&
	grep -q "^  dispatched 0  held 0  oldest pending -" "$TRASH/status.out" &&
	grep -q "^TASKS success 13  failed 3  cancelled 0  retries 2  lost 0  corrupt 1" "$TRASH/status.out" &&
	grep -q "^FIRE LAG .*(18 starts)" "$TRASH/status.out" &&
	grep -q "bad[123] probe: attempt 1 of 4: exit 65" "$TRASH/status.out"
'

test_expect_success 'taskspool --json status without arguments: the same facts as JSON' '
	"$TS" -c "$TRASH/view.conf" --json status >"$TRASH/status.json" && cat "$TRASH/status.json" &&
	test "$(wc -l <"$TRASH/status.json")" = 1 &&
	test "$(jq -r "[.nodesLive, .leader, (.nodes | length), .nodes[0].node, .nodes[0].leader] | @tsv" "$TRASH/status.json")" = "$(printf "1\tn1\t1\tn1\ttrue")" &&
	test "$(jq -c ".queue | [.pending, .waiting, .delayed, .dispatched, .running]" "$TRASH/status.json")" = "[0,0,1,0,0]" &&
	test "$(jq -c ".tasks | [.success, .failed, .cancelled, .retries, .lost, .corrupt]" "$TRASH/status.json")" = "[13,3,0,2,0,1]" &&
	test "$(jq -r .fireLagSeconds.starts "$TRASH/status.json")" = 18 &&
	jq -r ".recentFailures[] | select(.taskCode == \"probe\") | .message" "$TRASH/status.json" | grep -q "attempt 1 of 4: exit 65"
'

if have tmux; then
test_expect_success 'taskspool top renders in an 80x24 tmux pane and quits on q' '
	sock="$TRASH/tmux.sock" &&
	tmux -S "$sock" -f /dev/null new-session -d -s top -x 80 -y 24 \
	    "$TS -c $TRASH/view.conf top -i 200" &&
	wait_for "tmux -S $sock capture-pane -p -t top 2>/dev/null | grep -q \"^QUEUE pending\"" 10 &&
	tmux -S "$sock" capture-pane -p -t top >"$TRASH/pane" &&
	cat "$TRASH/pane" &&
	grep -q "^NODES 1 live of 1, leader n1" "$TRASH/pane" &&
	grep -q "^  n1\* " "$TRASH/pane" &&
	grep -q "^QUEUE pending 0  waiting 0  blocked 0  delayed 1" "$TRASH/pane" &&
	tmux -S "$sock" send-keys -t top q &&
	wait_for "! tmux -S $sock has-session -t top 2>/dev/null" 10
'
tmux -S "$TRASH/tmux.sock" kill-server 2>/dev/null
else
skip_test 'taskspool top renders in an 80x24 tmux pane' 'tmux missing (Debian package tmux)'
fi

test_expect_success 'the alert rules pass promtool check rules' '
	promtool check rules "$SRC/contrib/prometheus/alerts.yml"
'

# alerts.test.yml: each rule fires and stays silent when it should, on
# series written by hand (a killed node's frozen file, a single-node
# crash, a clean stop, no metrics at all, ...).
test_expect_success 'every alert rule passes its promtool test rules cases' '
	(cd "$SRC/contrib/prometheus" && promtool test rules alerts.test.yml) &&
	for a in $(sed -n "s/^ *- alert: //p" "$SRC/contrib/prometheus/alerts.yml"); do
		grep -q "alertname: $a\$" "$SRC/contrib/prometheus/alerts.test.yml" || { echo "untested: $a"; return 1; }
	done
'

# Names a PromQL expression uses, histogram suffixes folded into the family.
names_in() { grep -o "taskspool_[a-z_]*" | sed -E "s/_(bucket|sum|count)\$//" | sort -u; }
test_expect_success 'the dashboard is JSON whose queries name only exported metrics' '
	jq -e ".panels | length > 0" "$SRC/contrib/grafana/taskspool.json" >/dev/null &&
	jq -r ".panels[].targets[].expr" "$SRC/contrib/grafana/taskspool.json" | names_in >"$TRASH/dash.names" &&
	test "$(wc -l <"$TRASH/dash.names")" -ge 12 &&
	! comm -23 "$TRASH/dash.names" "$TRASH/names" | grep . &&
	grep "expr:" -A3 "$SRC/contrib/prometheus/alerts.yml" | names_in >"$TRASH/alert.names" &&
	! comm -23 "$TRASH/alert.names" "$TRASH/names" | grep .
'

INST="$TRASH/inst"
test_expect_success 'make install honours PREFIX and DESTDIR' '
	make -s -C "$SRC" install BUILD="$BUILD" DESTDIR="$INST" PREFIX=/opt/ts >"$TRASH/install.out" 2>&1 ||
	    { cat "$TRASH/install.out"; return 1; } &&
	test -x "$INST/opt/ts/bin/taskspool" && test -x "$INST/opt/ts/sbin/taskspoold" &&
	for p in man1/taskspool.1 man5/taskspool.conf.5 man7/taskspool-hooks.7 man8/taskspoold.8; do
		test -f "$INST/opt/ts/share/man/$p" || return 1
	done &&
	test -f "$INST/opt/ts/share/doc/taskspool/examples/taskspool.conf.example" &&
	test -x "$INST/opt/ts/share/doc/taskspool/examples/hooks/hello" &&
	test -f "$INST/opt/ts/share/doc/taskspool/examples/alerts.yml" &&
	test -f "$INST/opt/ts/share/doc/taskspool/examples/alerts.test.yml" &&
	grep -q "^ExecStart=/opt/ts/sbin/taskspoold -d " "$INST/opt/ts/lib/systemd/system/taskspoold.service" &&
	grep -q "^ExecStart=/opt/ts/sbin/taskspoold -d .* -i %i " "$INST/opt/ts/lib/systemd/system/taskspoold@.service"
'

if have systemd-analyze && systemd-analyze --version >/dev/null 2>&1; then
test_expect_success 'systemd-analyze verify accepts the units (manual pages found)' '
	u="$TRASH/units" && mkdir -p "$u" &&
	for f in taskspoold.service taskspoold@.service \
	    taskspool-purge.service taskspool-purge.timer; do
		sed -e "s|/opt/ts/sbin/|$INST/opt/ts/sbin/|g" \
		    -e "s|/opt/ts/bin/|$INST/opt/ts/bin/|g" \
		    "$INST/opt/ts/lib/systemd/system/$f" >"$u/$f" || return 1
	done &&
	ln -s taskspoold@.service "$u/taskspoold@a.service" &&
	MANPATH="$INST/opt/ts/share/man" systemd-analyze verify "$u/taskspoold.service" "$u/taskspoold@a.service" &&
	MANPATH="$INST/opt/ts/share/man" systemd-analyze verify "$u/taskspool-purge.service" "$u/taskspool-purge.timer" &&
	grep -q "^ExecStart=$INST/opt/ts/bin/taskspool -s .* purge --older-than " "$u/taskspool-purge.service" &&
	grep -q "^Persistent=true" "$u/taskspool-purge.timer" &&
	grep -q "^NoNewPrivileges=yes" "$u/taskspoold.service" &&
	grep -q "^ProtectSystem=strict" "$u/taskspoold.service" &&
	grep -q "^ReadWritePaths=/var/spool/taskspool" "$u/taskspoold.service" &&
	grep -q "^PrivateTmp=yes" "$u/taskspoold.service" &&
	grep -q "^User=taskspool" "$u/taskspoold@a.service" &&
	printf "[Service]\nExecStart=/nonexistent/taskspoold\n" >"$u/bad.service" &&
	! systemd-analyze verify --man=no "$u/bad.service"
'
else
skip_test 'systemd-analyze verify accepts the units' 'systemd-analyze cannot run here'
fi

test_expect_success 'the manual pages pass mandoc -T lint' '
	mandoc -T lint -W warning "$SRC"/daemon/man/taskspool.1 "$SRC"/daemon/man/taskspool.conf.5 \
	    "$SRC"/daemon/man/taskspool-hooks.7 "$SRC"/daemon/man/taskspoold.8
'

test_expect_success 'taskspool.conf(5) documents every configuration key' '
	ts config | sed -n "s/^\([a-z_]*\) =.*/\1/p" >"$TRASH/keys" &&
	test "$(wc -l <"$TRASH/keys")" -ge 20 &&
	while read -r k; do
		grep -q "^\.It Cm $k No (" "$SRC/daemon/man/taskspool.conf.5" || { echo "undocumented: $k"; return 1; }
	done <"$TRASH/keys"
'

test_expect_success 'taskspoold -n rejects a bad log_format or log_target (exit 78)' '
	"$TSD" -n -c "$CONF" -o log_format=json >/dev/null 2>"$TRASH/n.err";
	test $? = 78 && grep -q "log_format: \"json\" is not one of logfmt, text" "$TRASH/n.err" &&
	"$TSD" -n -c "$CONF" -o log_target=file >/dev/null 2>"$TRASH/n.err";
	test $? = 78 && grep -q "log_target" "$TRASH/n.err" &&
	"$TSD" -n -c "$CONF" -o log_target=syslog -o log_format=text >/dev/null
'

test_expect_success 'a clean stop writes the metrics a last time, without spool gauges' '
	stop_daemon n1 &&
	grep -q "^taskspool_leader{node=\"n1\"} 0$" "$M" &&
	grep -q "^taskspool_metrics_stopped{node=\"n1\"} 1$" "$M" &&
	grep -q "^taskspool_tasks_total{node=\"n1\",task_code=\"probe\",status=\"SUCCESS\"} 9$" "$M" &&
	! grep -q "^taskspool_queue_depth{" "$M" &&
	promtool check metrics <"$M"
'

if have logrotate; then
test_expect_success 'logrotate expires hook logs older than 14 days, keeps newer ones' '
	mkdir -p "$TRASH/lr/logs/old" "$TRASH/lr/logs/new" &&
	echo old >"$TRASH/lr/logs/old/1.out" && echo new >"$TRASH/lr/logs/new/1.err" &&
	touch -d "@$(( $(date +%s) - 20 * 86400 ))" "$TRASH/lr/logs/old/1.out" &&
	sed -e "s|/var/spool/taskspool|$TRASH/lr|g" -e "s|/var/log/taskspool|$TRASH/lr/var|" \
	    -e "/^[[:space:]]*su /d" "$SRC/contrib/logrotate/taskspool" >"$TRASH/lr.conf" &&
	# State as after a run a year ago, so "daily" is due for both files.
	printf "logrotate state -- version 2\n\"%s\" 2025-1-1-0:0:0\n\"%s\" 2025-1-1-0:0:0\n" \
	    "$TRASH/lr/logs/old/1.out" "$TRASH/lr/logs/new/1.err" >"$TRASH/lr.state" &&
	chmod 600 "$TRASH/lr.state" &&
	logrotate -s "$TRASH/lr.state" "$TRASH/lr.conf" &&
	test ! -e "$TRASH/lr/logs/old/1.out" &&
	test "$(cat "$TRASH/lr/logs/new/1.err")" = new
'
else
skip_test 'logrotate expires old hook logs' 'logrotate missing (Debian package logrotate)'
fi

test_done
