#!/bin/sh
# HTTP API rate limiting (429 RATE_LIMITED), one CGI process per request
# as under a web server: build/taskspool.cgi run directly with the CGI/1.1
# meta-variables (RFC 3875) of requests signed by hand with openssl dgst.
# With api_rate_limit = 5 per api_rate_window_sec = 3600 (a window no
# test run can straddle) 8 requests in a row give exactly 5 answers 200
# then 3 answers 429, application/problem+json, code RATE_LIMITED, with
# Retry-After the seconds left in the window; the limit is per AppId and
# apps.conf's rate=N overrides it (0 = none); the check comes after
# authentication (a bad signature or a replayed nonce is a 401 and uses
# no budget); the window ends (state file moved back / Redis key gone)
# and requests pass again.  Both stores: state/ratelimit/<appId> in
# embedded mode, the Redis key <prefix>rate:<appId> in cluster mode
# ($TS_TEST_REDIS when set, else a private redis-server); a Redis that
# cannot be reached lets requests through (logged).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

CGI="$BUILD/taskspool.cgi"
EMPTY=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
cat >>"$CONF" <<C
fsync = 0
api_rate_limit = 5
api_rate_window_sec = 3600
C
SECRET=$(ts apps add tester --codes '*') || exit 1
OTHER=$(ts apps add other --codes '*') || exit 1
FREE=$(ts apps add free --codes '*' --rate 0) || exit 1
TWO=$(ts apps add two --codes '*' --rate 2) || exit 1
APP=tester
KEY=$SECRET

# cgi METHOD PATH [QUERY]: one signed request without body straight to
# the CGI as $APP/$KEY (set in a test body, they stay set for the next
# tests; $NONCE, $SIG override); prints the status; the
# whole response is in $TRASH/resp, its body in $TRASH/body.
cgi() {
	_m=$1; _p=$2; _q=${3:-}
	_ts=$(date +%s); _n=${NONCE:-$(openssl rand -hex 16)}
	_s=$(printf 'TS1-HMAC-SHA256\n%s\n%s\n%s\n%s\n%s\n%s\n%s' "$_m" "$_p" \
	    "$_q" "$APP" "$_ts" "$_n" "$EMPTY" |
	    openssl dgst -sha256 -hmac "$KEY" | sed 's/.*= //')
	env -i PATH="$PATH" TASKSPOOL_CONFIG="$CONF" REQUEST_METHOD="$_m" \
	    PATH_INFO="${_p#/api}" QUERY_STRING="$_q" HTTP_X_APP_ID="$APP" \
	    HTTP_X_TIMESTAMP="$_ts" HTTP_X_NONCE="$_n" \
	    HTTP_X_SIGNATURE="${SIG:-$_s}" "$CGI" </dev/null >"$TRASH/resp" \
	    2>>"$TRASH/cgi.err"
	tr -d '\r' <"$TRASH/resp" | sed '1,/^$/d' >"$TRASH/body"
	sed -n '1s/^Status: \([0-9]*\).*/\1/p' "$TRASH/resp"
}
# hdr NAME: the value of response header NAME.
hdr() { tr -d '\r' <"$TRASH/resp" | sed -n "/^\$/q; s/^$1: //p"; }
# burst N: N requests in a row; prints their statuses on one line.
burst() {
	_i=0; _out=""
	while [ $_i -lt "$1" ]; do
		_out="$_out${_out:+ }$(cgi GET /api/tasks)"; _i=$((_i + 1))
	done
	echo "$_out"
}
# limited: the last answer was a complete 429 RATE_LIMITED of limit $1.
limited() {
	test "$(sed -n '1p' "$TRASH/resp" | tr -d '\r')" = "Status: 429 Too Many Requests" &&
	test "$(hdr Content-Type)" = application/problem+json &&
	test "$(jq -r .code "$TRASH/body")" = RATE_LIMITED &&
	test "$(jq -r .status "$TRASH/body")" = 429 &&
	test "$(jq -r .type "$TRASH/body")" = urn:ts:problem:rate-limited &&
	test "$(jq -r .limit "$TRASH/body")" = "$1" &&
	test "$(jq -r .windowSec "$TRASH/body")" = 3600 &&
	test "$(jq -r .traceId "$TRASH/body")" = "$(hdr X-Trace-Id)" &&
	ra=$(hdr Retry-After) && test "$ra" -ge 3500 && test "$ra" -le 3600
}

test_expect_success 'embedded: 5 + 3 requests in one window: 5 x 200, then 3 x 429 with Retry-After' '
	test "$(burst 8)" = "200 200 200 200 200 429 429 429" &&
	limited 5 &&
	test -f "$SPOOL/state/ratelimit/tester"
'

test_expect_success 'embedded: the count is per AppId; rate=2 and rate=0 in apps.conf override the default' '
	APP=other KEY=$OTHER && test "$(burst 6)" = "200 200 200 200 200 429" &&
	APP=two KEY=$TWO && test "$(burst 3)" = "200 200 429" && limited 2 &&
	APP=free KEY=$FREE && test "$(burst 7)" = "200 200 200 200 200 200 200" &&
	test ! -e "$SPOOL/state/ratelimit/free"
'

test_expect_success 'embedded: authentication comes first; a 401 uses no budget' '
	APP=two KEY=$TWO &&
	st=$(SIG=0000000000000000000000000000000000000000000000000000000000000000 cgi GET /api/tasks) &&
	test "$st" = 401 && test "$(jq -r .code "$TRASH/body")" = SIGNATURE_MISMATCH &&
	st=$(APP=nobody cgi GET /api/tasks) && test "$st" = 401 &&
	test "$(jq -r .code "$TRASH/body")" = APP_NOT_FOUND &&
	ts apps rate two 3 && n=0123456789abcdef0123456789abcdef &&
	st=$(NONCE=$n cgi GET /api/tasks) && test "$st" = 200 &&
	st=$(NONCE=$n cgi GET /api/tasks) && test "$st" = 401 &&
	test "$(jq -r .code "$TRASH/body")" = NONCE_REPLAYED &&
	test "$(burst 1)" = 429 && limited 3
'

test_expect_success 'embedded: a window that ended starts a new one; a limit of 0 stops counting' '
	APP=tester KEY=$SECRET &&
	set -- $(awk "{print \$1 + 0, \$2 + 0}" "$SPOOL/state/ratelimit/tester") &&
	start=$1 && test "$2" = 5 &&
	printf "%s 5\n" $((start - 3600000)) >"$SPOOL/state/ratelimit/tester" &&
	test "$(burst 6)" = "200 200 200 200 200 429" &&
	sed -i "s/^api_rate_limit = 5/api_rate_limit = 0/" "$CONF" &&
	test "$(burst 3)" = "200 200 200"
'

test_expect_success 'apps.conf keeps rate=N through rewrites; apps list shows it' '
	ts apps rotate other >/dev/null && ts apps disable free && ts apps enable free &&
	grep -q "^two enabled \* [A-Za-z0-9_-]* rate=3\$" "$SPOOL/apps.conf" &&
	grep -q "^free enabled \* [A-Za-z0-9_-]* rate=0\$" "$SPOOL/apps.conf" &&
	! grep -q "^other .*rate=" "$SPOOL/apps.conf" &&
	ts apps list | grep -q "^two .* rate=3\$" &&
	ts apps list | grep -q "^other .* rate=default\$" &&
	test "$(ts --json apps list | jq -r "select(.appId == \"other\") | .rate")" = null &&
	ts apps rate two default && ! grep -q "^two .*rate=" "$SPOOL/apps.conf" &&
	test_must_fail_rc() { "$@"; test $? = 64; } &&
	test_must_fail_rc ts apps rate two -1 &&
	test_must_fail_rc ts apps rate two 1000001 &&
	test_must_fail_rc ts apps add bad --codes "*" --rate x
'

test_expect_success 'a malformed rate= in apps.conf is refused with its line (500 from the CGI: an operator must act)' '
	cp "$SPOOL/apps.conf" "$TRASH/apps.good" &&
	echo "bad enabled * abcdefghijklmnopqrstuvwxyz rate=1 rate=2" >>"$SPOOL/apps.conf" &&
	{ ts apps list >/dev/null 2>"$TRASH/err"; rc=$?; } ; test "$rc" = 78 &&
	grep -q "line [0-9]*: rate= must be given once" "$TRASH/err" &&
	st=$(cgi GET /api/tasks); cp "$TRASH/apps.good" "$SPOOL/apps.conf" &&
	test "$st" = 500
'

test_expect_success 'cluster: the same counts in Redis (INCR, expiry = the window)' '
	sed -i "s/^api_rate_limit = 0/api_rate_limit = 5/" "$CONF" &&
	redis_setup &&
	APP=tester KEY=$SECRET &&
	test "$(burst 8)" = "200 200 200 200 200 429 429 429" && limited 5 &&
	test "$(rcli GET "${PREFIX}rate:tester")" = 8 &&
	ttl=$(rcli PTTL "${PREFIX}rate:tester") &&
	test "$ttl" -gt 3500000 && test "$ttl" -le 3600000 &&
	APP=two KEY=$TWO && test "$(burst 6)" = "200 200 200 200 200 429"
'

test_expect_success 'cluster: the window ends with the key; requests pass again' '
	APP=tester KEY=$SECRET &&
	rcli DEL "${PREFIX}rate:tester" >/dev/null &&
	test "$(burst 6)" = "200 200 200 200 200 429"
'

test_expect_success 'cluster: Redis unreachable lets requests through, logged' '
	APP=tester KEY=$SECRET &&
	port=$( (sh "$SERVERS/redis.sh" start "$TRASH/dead" && sh "$SERVERS/redis.sh" stop "$TRASH/dead") | sed -n "s/.*:\([0-9]*\)$/\1/p") &&
	test -n "$port" &&
	sed -i "s/^redis = .*/redis = 127.0.0.1:$port/" "$CONF" &&
	test "$(burst 7)" = "200 200 200 200 200 200 200" &&
	grep -q "rate limit of tester not applied: redis 127.0.0.1:$port" "$TRASH/cgi.err"
'

test_done
