#!/bin/sh
# Signed result callbacks (API.md §6-7) against local receivers
# (tests/tools/cbrecv.py, Python standard library, which verifies every
# Standard Webhooks signature itself): retries, a slow receiver that must
# not hold up a healthy one, a redirect, a 410, a registration with two
# secrets, Retry-After, redelivery, a dead node's delivery taken over, a
# denied address, https with a self-signed certificate, and receivers
# that close or reset the connection at once (B55).
. "$(dirname "$0")/test-lib.sh"

RECV="$(dirname "$0")/../tools/cbrecv.py"
# Secrets of api-vectors.json C01 (old) and C04 (new).
OLD=whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=
NEW=whsec_9SIcdt2b90CyMFb/v9AArWzXC0BiG1qlSLwslw92iM8=
cp "$CONF" "$TRASH/base.conf"
local_callbacks 300,300,300,300 "$OLD"

# start_receiver NAME SECRETS [--tls CERT KEY]: port in $TRASH/NAME.port.
start_receiver() {
	_n=$1; shift
	python3 "$RECV" "$TRASH/$_n.port" "$TRASH/$_n.log" "$@" \
	    2>>"$TRASH/$_n.err" &
	DAEMON_PIDS="$DAEMON_PIDS $!"
	: >"$TRASH/$_n.log"
	wait_for "test -f $TRASH/$_n.port" 20
}
port() { cat "$TRASH/$1.port"; }
# arrivals NAME: requests that reached the receiver (answered or not yet).
arrivals() { jq -c "select(.arrived != null)" "$TRASH/$1.log" | wc -l; }
# requests NAME [PATH]: requests the receiver got (on PATH).
requests() { jq -c "select(.path != null)${2:+ | select(.path == \"$2\")}" "$TRASH/$1.log" | wc -l; }
# cbfile ID: the delivery file of task ID, wherever it is.
cbfile() { ls "$SPOOL"/outbox/callbacks/*/"$1.json" "$SPOOL"/outbox/callbacks/active/*/"$1.json" 2>/dev/null | head -1; }
cbget() { _f=$(cbfile "$1"); [ -n "$_f" ] && jq -r "$2" "$_f" 2>/dev/null; }
# wait_cb ID STATUS [SECONDS]
wait_cb() { wait_for "test \"\$(cbget $1 .status)\" = $2" "${3:-30}"; }
# task ID URL [APPID]: a task of the "res" hook with a callbackUrl.
task() {
	if [ -n "$2" ]; then
		drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"res\",\"callbackUrl\":\"$2\"${3:+,\"appId\":\"$3\"}}"
	else
		drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"res\",\"appId\":\"$3\"}"
	fi
}
# register APP URL SECRET...: a registration as the CGI writes it.
register() {
	_app=$1 _url=$2; shift 2
	_s=""
	for _x in "$@"; do _s="$_s${_s:+,}{\"secret\":\"$_x\",\"expiresAt\":null}"; done
	mkdir -p "$SPOOL/state/callbacks"
	printf '{"appId":"%s","url":"%s","status":"ACTIVE","secrets":[%s],"createdAt":"2024-06-01T12:02:00.000Z","updatedAt":"2024-06-01T12:02:00.000Z"}' \
	    "$_app" "$_url" "$_s" >"$SPOOL/tmp/reg.$$" &&
	mv "$SPOOL/tmp/reg.$$" "$SPOOL/state/callbacks/$_app.json"
}

cat >"$HOOKS/res" <<'H'
#!/bin/sh
printf '{"fileUrl":"https://files.example.com/r/42.pdf","pages":3,"echo":"\344\273\273\345\212\241\345\256\214\346\210\220 \342\234\223"}' >"$TASKSPOOL_RESULT_FILE"
H
chmod +x "$HOOKS/res"
cat >"$HOOKS/_on_callback_failed" <<H
#!/bin/sh
cat >"$TRASH/failed-hook.\$TASKSPOOL_CALLBACK_REQUEST_ID"
H
chmod +x "$HOOKS/_on_callback_failed"

for r in flaky slow fast redir gone rot busy take; do
	start_receiver $r "$OLD,$NEW"
done

test_expect_success 'daemon starts' 'start_daemon n1 -j 4'

# FIELD-FAILURES B49: every retry carries the bytes that were signed.
test_expect_success '500 twice then 200: delivered on the third try, signed, same id and bytes' '
	task c-flaky "http://127.0.0.1:$(port flaky)/flaky" &&
	wait_cb c-flaky DELIVERED &&
	test "$(requests flaky)" = 3 &&
	test "$(jq -s "map(select(.path)) | map(.webhookId) | unique | length" "$TRASH/flaky.log")" = 1 &&
	test "$(jq -s -c "map(select(.path)) | map(.attempt)" "$TRASH/flaky.log")" = "[\"1\",\"2\",\"3\"]" &&
	test "$(jq -s "map(select(.path)) | map(.body) | unique | length" "$TRASH/flaky.log")" = 1 &&
	test "$(jq -s "map(select(.path)) | all(.sigOk and .allSigOk and .tsOk and .nsig == 1)" "$TRASH/flaky.log")" = true &&
	test "$(jq -s "map(select(.path)) | all(.contentType == \"application/json\" and .expect == null)" "$TRASH/flaky.log")" = true &&
	test "$(cbget c-flaky .attempts)" = 3 &&
	test "$(cbget c-flaky .lastHttpStatus)" = 200 &&
	test "$(cbget c-flaky .webhookId)" = "$(jq -r "select(.path) | .webhookId" "$TRASH/flaky.log" | head -1)" &&
	case $(cbfile c-flaky) in */delivered/c-flaky.json) ;; *) false;; esac
'

test_expect_success 'the envelope is the §6.2 shape, from the result, raw UTF-8' '
	jq -r "select(.path) | .body" "$TRASH/flaky.log" | head -1 >"$TRASH/env.json" &&
	r="$SPOOL/results/c-flaky.json" &&
	test "$(jq -r .type "$TRASH/env.json")" = task.finished &&
	test "$(jq -r .timestamp "$TRASH/env.json")" = "$(jq -r .finishedAt "$r")" &&
	for k in requestId taskCode status startedAt finishedAt durationMs failureReason result; do
		test "$(jq -c .data.$k "$TRASH/env.json")" = "$(jq -c .$k "$r")" || return 1
	done &&
	test "$(jq -r .data.result.echo "$TRASH/env.json")" = "任务完成 ✓" &&
	test "$(jq -s "map(select(.path)) | any(.bodyHasEscapes)" "$TRASH/flaky.log")" = false &&
	test "$(jq -c "keys_unsorted" "$TRASH/env.json")" = "[\"type\",\"timestamp\",\"data\"]"
'

# FIELD-FAILURES B52: one slow receiver must not hold up the others.
test_expect_success 'a receiver that sleeps 10 s does not hold up a healthy one' '
	task c-slow "http://127.0.0.1:$(port slow)/slow" &&
	wait_for "test \$(arrivals slow) -ge 1" 30 &&
	for i in 1 2 3 4 5; do task c-fast$i "http://127.0.0.1:$(port fast)/ok"; done &&
	for i in 1 2 3 4 5; do wait_cb c-fast$i DELIVERED 30 || return 1; done &&
	test "$(requests fast)" = 5 &&
	first=$(jq -s "map(select(.arrived)) | .[0].start" "$TRASH/slow.log") &&
	last_fast=$(jq -s "map(select(.path)) | max_by(.start) | .start" "$TRASH/fast.log") &&
	echo "slow try started $first, last healthy delivery $last_fast" &&
	jq -n "$last_fast < $first + 10" | grep -qx true &&
	wait_for "test \"\$(cbget c-slow .lastError)\" = TIMEOUT" 30 &&
	wait_for "test \$(cbget c-slow .attempts) -ge 2" 30 &&
	grep -q "c-slow: callback try 1 to .*: TIMEOUT" "$TRASH/log.n1"
'

test_expect_success 'a 302 is a failure and is not followed' '
	task c-redir "http://127.0.0.1:$(port redir)/redirect" &&
	wait_cb c-redir CALLBACK_FAILED 30 &&
	test "$(requests redir /ok)" = 0 &&
	test "$(requests redir /redirect)" -ge 1 &&
	grep -q "c-redir: callback try 1 to .*: HTTP 302 -> PENDING" "$TRASH/log.n1" &&
	test "$(cbget c-redir .attempts)" = 5 &&
	test "$(cbget c-redir .reason)" = RETRIES_EXHAUSTED &&
	test -f "$TRASH/failed-hook.c-redir" &&
	test "$(jq -r .requestId "$TRASH/failed-hook.c-redir")" = c-redir
'

test_expect_success 'a 410 disables the registration; later deliveries fail without a request' '
	register app-gone "http://127.0.0.1:$(port gone)/gone" "$NEW" &&
	task c-gone1 "" app-gone &&
	wait_cb c-gone1 CALLBACK_FAILED 30 &&
	test "$(cbget c-gone1 .reason)" = GONE &&
	test "$(cbget c-gone1 .attempts)" = 1 &&
	test "$(cbget c-gone1 .lastHttpStatus)" = 410 &&
	test "$(jq -r .status "$SPOOL/state/callbacks/app-gone.json")" = DISABLED &&
	task c-gone2 "" app-gone &&
	wait_cb c-gone2 CALLBACK_FAILED 30 &&
	test "$(cbget c-gone2 .lastError)" = ENDPOINT_DISABLED &&
	test "$(requests gone)" = 1 &&
	test "$(jq -s "map(select(.path)) | all(.sigOk)" "$TRASH/gone.log")" = true &&
	test "$(jq -r .requestId "$TRASH/failed-hook.c-gone2")" = c-gone2
'

test_expect_success 're-registering re-enables the endpoint' '
	register app-gone "http://127.0.0.1:$(port fast)/ok" "$NEW" &&
	task c-gone3 "" app-gone &&
	wait_cb c-gone3 DELIVERED 30
'

test_expect_success 'a registration in rotation signs with both secrets, new first' '
	register app-rot "http://127.0.0.1:$(port rot)/ok" "$NEW" "$OLD" &&
	task c-rot "" app-rot &&
	wait_cb c-rot DELIVERED 30 &&
	test "$(jq -s "map(select(.path)) | .[0] | .nsig == 2 and .allSigOk" "$TRASH/rot.log")" = true
'

test_expect_success 'Retry-After of a 503 lengthens the 300 ms step to 1 s' '
	task c-busy "http://127.0.0.1:$(port busy)/busy" &&
	wait_cb c-busy DELIVERED 30 &&
	test "$(requests busy)" = 2 &&
	jq -s "map(select(.path)) | .[1].start - .[0].end >= 0.95" "$TRASH/busy.log" | grep -qx true
'

test_expect_success 'callbacks list and redeliver: same webhook-id, fresh tries' '
	ts callbacks list >"$TRASH/list" &&
	grep -q "^c-flaky  *DELIVERED  *3  *200" "$TRASH/list" &&
	grep -q "^c-gone2  *CALLBACK_FAILED" "$TRASH/list" &&
	ts callbacks redeliver c-flaky &&
	wait_for "test \$(requests flaky) -ge 4" 30 &&
	wait_cb c-flaky DELIVERED 30 &&
	test "$(cbget c-flaky .attempts)" = 1 &&
	test "$(jq -s "map(select(.path)) | map(.webhookId) | unique | length" "$TRASH/flaky.log")" = 1 &&
	{ ts callbacks redeliver no-such; test $? = 66; } &&
	{ ts callbacks bogus; test $? = 64; }
'

test_expect_success 'a FAILED task run again with taskspool retry gets a new delivery' '
	drop c-retry.json "{\"requestId\":\"c-retry\",\"taskCode\":\"probe\",\"executeParams\":{\"exit\":3},\"maxRetries\":0,\"callbackUrl\":\"http://127.0.0.1:$(port fast)/ok\"}" &&
	wait_cb c-retry DELIVERED 30 &&
	id1=$(cbget c-retry .webhookId) &&
	ts retry c-retry &&
	wait_for "test \"\$(cbget c-retry .webhookId)\" != $id1" 30 &&
	wait_cb c-retry DELIVERED 30 &&
	jq -s -c "map(select(.path and (.body | fromjson | .data.requestId == \"c-retry\")))" "$TRASH/fast.log" >"$TRASH/retry.json" &&
	test "$(jq length "$TRASH/retry.json")" = 2 &&
	test "$(jq "map(.webhookId) | unique | length" "$TRASH/retry.json")" = 2 &&
	test "$(jq -c "map(.body | fromjson | .data.status)" "$TRASH/retry.json")" = "[\"FAILED\",\"FAILED\"]" &&
	test "$(jq -r ".[0].body | fromjson | .data.failureReason.code" "$TRASH/retry.json")" = WORKER_EXIT
'

test_expect_success 'a killed node'"'"'s delivery in flight is taken over by another' '
	task c-take "http://127.0.0.1:$(port take)/slowonce" &&
	wait_for "test \$(arrivals take) -ge 1" 30 &&
	test -f "$SPOOL/outbox/callbacks/active/n1/c-take.json" &&
	kill9_daemon n1 &&
	start_daemon n2 &&
	wait_cb c-take DELIVERED 30 &&
	test "$(jq -s "map(select(.path)) | map(.webhookId) | unique | length" "$TRASH/take.log")" = 1 &&
	grep -q "taken back from active/n1/" "$TRASH/log.n2"
'

# spool-layout/README.md, "Senders": the claimed copy of a finished try
# is kept in tmp/ as a spare for a later state; a sender that stops
# removes its own (n1, killed, leaves its for the leader's cleaning).
test_expect_success 'a finished try leaves a spare in tmp/; a stopped sender removes its own' '
	wait_for "ls $SPOOL/tmp/cb.n2.* >/dev/null 2>&1" 10 &&
	stop_daemon n2 &&
	test -z "$(ls "$SPOOL/tmp" | grep "^cb\.n2\.")"
'

# Default destination policy: no allowed CIDRs, https only.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$TRASH/key.pem" \
    -out "$TRASH/cert.pem" 2>/dev/null
start_receiver block "$OLD"
start_receiver tls "$OLD" --tls "$TRASH/cert.pem" "$TRASH/key.pem"
cp "$TRASH/base.conf" "$CONF"
cat >>"$CONF" <<C
callback_allowed_ports =
callback_delays_ms = 300,300,300,300
callback_jitter_pct = 0
callback_secret = $OLD
callback_ca_file = $TRASH/cert.pem
C

test_expect_success 'a receiver on a denied address is never connected to' '
	start_daemon n3 &&
	task c-block "https://127.0.0.1:$(port tls)/ok" &&
	wait_cb c-block CALLBACK_FAILED 30 &&
	grep -q "c-block: callback try 1 to .*: BLOCKED_DESTINATION" "$TRASH/log.n3" &&
	test ! -s "$TRASH/tls.log" &&
	task c-http "http://127.0.0.1:$(port block)/ok" &&
	wait_cb c-http CALLBACK_FAILED 30 &&
	test ! -s "$TRASH/block.log" &&
	stop_daemon n3
'

test_expect_success 'https to an allowed CIDR, verified against callback_ca_file' '
	echo "callback_allow_cidrs = 127.0.0.0/8" >>"$CONF" &&
	start_daemon n4 &&
	task c-tls "https://127.0.0.1:$(port tls)/ok" &&
	wait_cb c-tls DELIVERED 30 &&
	test "$(jq -s "map(select(.path)) | all(.sigOk)" "$TRASH/tls.log")" = true &&
	task c-http2 "http://127.0.0.1:$(port block)/ok" &&
	wait_cb c-http2 CALLBACK_FAILED 30 &&
	test ! -s "$TRASH/block.log" &&
	stop_daemon n4
'

# cb_metric NODE OUTCOME: taskspool_callbacks_total of NODE's final
# metrics file for OUTCOME.
cb_metric() {
	grep "^taskspool_callbacks_total{.*outcome=\"$2\"" "$SPOOL/metrics/$1.prom" |
	    awk "{ s += \$NF } END { print s + 0 }"
}

test_expect_success 'taskspool_callbacks_total counts what n3 and n4 did' '
	# n3: two deliveries failed for good without a request (blocked),
	# and c-slow when its retry was still pending while n3 ran (the
	# outbox is shared; n3 denies its address): then n3 ended it too;
	# n4: one delivered, one failed for good (blocked)
	slow3=$(grep -c "c-slow: callback try .*-> CALLBACK_FAILED" "$TRASH/log.n3" || true) &&
	echo "n3 ok=$(cb_metric n3 ok) failed=$(cb_metric n3 failed) (c-slow ended by n3: $slow3)" &&
	echo "n4 ok=$(cb_metric n4 ok) failed=$(cb_metric n4 failed)" &&
	test "$(cb_metric n3 ok)" = 0 &&
	test "$(cb_metric n3 failed)" = $((2 + slow3)) &&
	test "$(cb_metric n4 ok)" = 1 && test "$(cb_metric n4 failed)" = 1 &&
	grep -q "^taskspool_callback_circuit_open" "$SPOOL/metrics/n4.prom"
'

# B55: receivers that go away.  One accepts each connection and closes it
# at once (the request is written into a closed socket: EPIPE, or SIGPIPE
# for a daemon that did not ignore it), one resets it (SO_LINGER 0: RST).
# Every delivery counts each broken try and ends CALLBACK_FAILED after its
# 5 tries; the daemon never dies.
cat >"$TRASH/closer.py" <<'PY'
import os, socket, struct, sys
port_file, log, mode = sys.argv[1:4]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(128)
with open(port_file + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = s.accept()
    if mode == "rst":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    with open(log, "a") as f:
        f.write("accepted\n")
PY
for m in close rst; do
	python3 "$TRASH/closer.py" "$TRASH/$m.port" "$TRASH/$m.acc" $m 2>>"$TRASH/$m.err" &
	DAEMON_PIDS="$DAEMON_PIDS $!"
	wait_for "test -f $TRASH/$m.port" 20
done

test_expect_success 'B55: 20 deliveries to receivers that close or reset at once: each fails its 5 tries, the daemon lives' '
	echo "callback_allow_http = 1" >>"$CONF" &&
	start_daemon n5 -j 4 &&
	pid=$(daemon_pid n5) &&
	for i in $(seq 1 10); do
		task "bc-close-$i" "http://127.0.0.1:$(port close)/x" &&
		task "bc-rst-$i" "http://127.0.0.1:$(port rst)/x" || return 1
	done &&
	for i in $(seq 1 10); do
		wait_cb "bc-close-$i" CALLBACK_FAILED 60 &&
		wait_cb "bc-rst-$i" CALLBACK_FAILED 60 || return 1
	done &&
	for i in $(seq 1 10); do
		for m in close rst; do
			test "$(cbget "bc-$m-$i" .attempts)" = 5 || return 1
		done
	done &&
	echo "connections: close $(wc -l <"$TRASH/close.acc"), rst $(wc -l <"$TRASH/rst.acc")" &&
	test "$(wc -l <"$TRASH/close.acc")" -ge 1 && test "$(wc -l <"$TRASH/rst.acc")" -ge 1 &&
	kill -0 "$pid" && test "$(daemon_pid n5)" = "$pid" &&
	test "$(grep -c " node n5 started" "$TRASH/log.n5")" = 1 &&
	stop_daemon n5
'

test_done
