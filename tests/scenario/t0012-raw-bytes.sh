#!/bin/sh
# Bytes RFC 8259 forbids, at every entry (issue 10): a raw NUL right after
# a number (which jansson alone swallows) or any control byte in a task
# file goes to corrupt/ with a reason naming the byte and its offset, and
# no hook runs; `taskspool submit` refuses the same bytes with 65 and
# writes nothing; the HTTP API answers 400 INVALID_JSON naming the byte
# and stores nothing; a task whose attempts[] entry has no node is refused
# at submit (it used to be written back unreadable after one retry).  And
# a hook's stdin is exactly the bytes of executeParams as written in the
# task file, compared with cmp against bytes cut from the file by offset.
#
# Starts its own lighttpd (tests/servers/lighttpd.sh) unless
# TS_TEST_LIGHTTPD names one, as t0050 does.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
trap api_cleanup EXIT
here=$(cd "$(dirname "$0")/../.." && pwd)

SRC="$TRASH/src"
mkdir -p "$SRC" "$TRASH/stdin"
# copy: its stdin, byte for byte, to $TRASH/stdin/<requestId>.
cat >"$HOOKS/copy" <<H
#!/bin/sh
cat >"$TRASH/stdin/\$TASKSPOOL_REQUEST_ID"
H
chmod +x "$HOOKS/copy"
echo "fsync = 0" >>"$CONF"

# put NAME: publish $SRC/NAME into incoming/ by the writer protocol.
put() { cp "$SRC/$1" "$SPOOL/tmp/.put" && mv "$SPOOL/tmp/.put" "$SPOOL/incoming/$1"; }

# refused NAME ERE: NAME reached corrupt/, its reason matches ERE, and
# no hook has run yet (the refusals come before every valid task).
refused() {
	wait_for "test -f \"$SPOOL/corrupt/$1.reason\"" 20 || {
		echo "corrupt/$1.reason missing"; return 1; }
	grep -Eq "$2" "$SPOOL/corrupt/$1.reason" || {
		echo "reason of $1: $(cat "$SPOOL/corrupt/$1.reason")"; return 1; }
	test -z "$(ls -A "$TRASH/stdin")" || { echo "a hook ran: $(ls "$TRASH/stdin")"; return 1; }
}

# nothing_written: no task, no staging file, no record in the spool
# (the daemon's hook work directories are in workdirs/, not tmp/).
nothing_written() {
	for d in incoming delayed tmp state/requests; do
		test -z "$(ls -A "$SPOOL/$d" 2>/dev/null | grep -v "^work\.")" || {
			echo "$d: $(ls -A "$SPOOL/$d")"; return 1; }
	done
}

test_expect_success 'daemon starts' 'start_daemon n1'

test_expect_success 'the issue'"'"'s NUL after a number goes to corrupt/, the reason names it' '
	# base64 of the issue: the same 37 bytes as the printf
	printf "eyJ0YXNrQ29kZSI6IngiLCJleGVjdXRlUGFyYW1zIjpbMQBdfQ==" |
	    base64 -d >"$SRC/issue.json" &&
	printf "{\"taskCode\":\"x\",\"executeParams\":[1\\000]}" >"$SRC/want" &&
	cmp "$SRC/issue.json" "$SRC/want" &&
	sed "s/\"x\"/\"copy\"/" "$SRC/issue.json" >"$SRC/nul-number.json" &&
	test "$(wc -c <"$SRC/nul-number.json")" = 40 &&
	put nul-number.json &&
	# {"taskCode":"copy","executeParams":[1 is 37 bytes: offset 37
	refused nul-number.json "^executeParams: raw NUL byte at offset 37 outside a string \(RFC 8259"
'

test_expect_success 'NUL after a literal, a string, inside a string, after }; control bytes' '
	printf "{\"taskCode\":\"copy\",\"executeParams\":[true\\000]}" >"$SRC/nul-true.json" &&
	printf "{\"taskCode\":\"copy\",\"executeParams\":{\"a\":\"b\"\\000}}" >"$SRC/nul-string.json" &&
	printf "{\"taskCode\":\"copy\",\"taskName\":\"a\\000b\"}" >"$SRC/nul-in-string.json" &&
	printf "{\"taskCode\":\"copy\"}\\000" >"$SRC/nul-after-brace.json" &&
	printf "{\"taskCode\":\"copy\",\"taskName\":\"a\\033[31m\"}" >"$SRC/esc-in-string.json" &&
	printf "{\"taskCode\":\"copy\",\\013\"executeParams\":1}" >"$SRC/vt-between.json" &&
	for f in nul-true nul-string nul-in-string nul-after-brace esc-in-string vt-between; do
		put $f.json || return 1
	done &&
	# offsets by hand: {"taskCode":"copy","executeParams":[true is 40
	# bytes; ...{"a":"b" 43; {"taskCode":"copy","taskName":"a 32;
	# {"taskCode":"copy"} 19; ... "taskName":"a then ESC 32;
	# {"taskCode":"copy", 19
	refused nul-true.json "^executeParams: raw NUL byte at offset 40 outside" &&
	refused nul-string.json "^executeParams: raw NUL byte at offset 43 outside" &&
	refused nul-in-string.json "^taskName: raw NUL byte at offset 32 inside a string \(RFC 8259 §7" &&
	refused nul-after-brace.json "^json: raw NUL byte at offset 19 outside" &&
	refused esc-in-string.json "^taskName: raw control byte 0x1b at offset 32 inside" &&
	refused vt-between.json "control byte 0x0b at offset 19 outside"
'

test_expect_success 'a control character decoded from an escape is written \xNN in the one-line reason' '
	printf "{\"taskCode\":\"copy\",\"k\\\\u001b[31m\\\\n2\":1}" >"$SRC/esc-key.json" &&
	grep -q "u001b" "$SRC/esc-key.json" &&
	put esc-key.json &&
	refused esc-key.json "^k\\\\x1b\\[31m\\\\x0a2: unknown member" &&
	test "$(wc -l <"$SPOOL/corrupt/esc-key.json.reason")" = 1 &&
	! grep -q "$(printf "\033")" "$SPOOL/corrupt/esc-key.json.reason"
'

test_expect_success 'taskspool submit refuses the same bytes with 65 and writes nothing' '
	for f in nul-number nul-true nul-in-string nul-after-brace; do
		cp "$SRC/$f.json" "$SRC/sub-$f.json" &&
		{ ts submit "$SRC/sub-$f.json" 2>"$TRASH/err"; rc=$?; } ;
		test "$rc" = 65 || { echo "$f: exit $rc"; return 1; }
		grep -q "raw NUL byte at offset" "$TRASH/err" || { cat "$TRASH/err"; return 1; }
	done &&
	{ ts submit --code copy --params "$(printf "[1,\\001]")" 2>"$TRASH/err"; rc=$?; } ;
	test "$rc" = 65 && grep -q "control byte 0x01 at offset" "$TRASH/err" &&
	nothing_written
'

test_expect_success 'submit: an option value that is not UTF-8 is refused (65), naming the option' '
	# 0xff is never UTF-8; 0xc0 0x80 is the overlong NUL (RFC 3629 §3);
	# json_string() refuses both, and the member was dropped silently
	for v in "$(printf "\\377")" "$(printf "a\\300\\200")"; do
		for o in --name --at --code; do
			if test $o = --code; then set -- --code "$v"; else set -- --code copy $o "$v"; fi
			{ ts submit "$@" 2>"$TRASH/err"; rc=$?; } ;
			test "$rc" = 65 || { echo "$o: exit $rc"; return 1; }
			grep -q "^taskspool submit: invalid task: $o: not UTF-8 (RFC 8259" "$TRASH/err" ||
			    { cat "$TRASH/err"; return 1; }
		done
	done &&
	nothing_written
'

test_expect_success 'an attempts[] entry without node is refused by submit (65), naming attempts[0].node' '
	printf "eyJ0YXNrQ29kZSI6IngiLCJhdHRlbXB0cyI6W3siYXR0ZW1wdCI6MX1dfQ==" |
	    base64 -d | sed "s/\"x\"/\"copy\"/" >"$SRC/no-node.json" &&
	{ ts submit "$SRC/no-node.json" 2>"$TRASH/err"; rc=$?; } ;
	test "$rc" = 65 && grep -q "attempts\[0\]\.node: required member missing" "$TRASH/err" &&
	nothing_written &&
	put no-node.json &&
	refused no-node.json "^attempts\[0\]\.node: required member missing"
'

# The executeParams bytes of the exactness checks: unicode escapes (a
# surrogate pair too), raw UTF-8, the int64 extremes, a double at the
# top of its range and one that underflows, exponents, escaped quotes
# and backslashes, and whitespace of every kind nested inside.
printf '[ "\\u00e9\\ud83d\\ude00\\u0041x" ,\t9223372036854775807 ,-9223372036854775808,\r\n  {"k\\"q" : 1.7976931348623157e308, "e":1E-400,"z":-0.0e+0 ,"u":"caf\303\251 \342\202\254"},\n\n[ [ ] , { } ,"\\\\\\/\\b\\f\\n\\r\\t"] ]' >"$SRC/params"

test_expect_success 'the hook'"'"'s stdin is exactly executeParams as written (executeParams last)' '
	# {"requestId":"exact-last","taskCode":"copy","executeParams": is
	# 60 bytes, then the value, then "}" LF
	{ printf "{\"requestId\":\"exact-last\",\"taskCode\":\"copy\",\"executeParams\":"; cat "$SRC/params"; printf "}\n"; } >"$SRC/exact-last.json" &&
	put exact-last.json &&
	wait_terminal exact-last 20 &&
	test "$(state_of exact-last)" = done &&
	size=$(wc -c <"$SRC/exact-last.json") &&
	dd if="$SRC/exact-last.json" of="$TRASH/cut-last" bs=1 skip=60 count=$((size - 60 - 2)) 2>/dev/null &&
	cmp "$TRASH/cut-last" "$TRASH/stdin/exact-last" &&
	cmp "$SRC/params" "$TRASH/stdin/exact-last"
'

test_expect_success 'the hook'"'"'s stdin is exactly executeParams as written (in the middle, spaced)' '
	# {"requestId":"exact-mid","taskCode":"copy","executeParams" :
	# and 2 spaces are 62 bytes, then the value, a tab, LF and the rest
	{ printf "{\"requestId\":\"exact-mid\",\"taskCode\":\"copy\",\"executeParams\" :  "; cat "$SRC/params"; printf "\t\n,\"taskName\":\"n\"}"; } >"$SRC/exact-mid.json" &&
	put exact-mid.json &&
	wait_terminal exact-mid 20 &&
	test "$(state_of exact-mid)" = done &&
	size=$(wc -c <"$SRC/params") &&
	dd if="$SRC/exact-mid.json" of="$TRASH/cut-mid" bs=1 skip=62 count="$size" 2>/dev/null &&
	cmp "$TRASH/cut-mid" "$TRASH/stdin/exact-mid" &&
	cmp "$SRC/params" "$TRASH/stdin/exact-mid"
'

test_expect_success 'taskspool submit keeps the same bytes for the hook' '
	{ printf "{\"requestId\":\"exact-cli\",\"taskCode\":\"copy\",\"executeParams\":"; cat "$SRC/params"; printf "}"; } >"$SRC/cli.json" &&
	ts submit "$SRC/cli.json" >/dev/null &&
	wait_terminal exact-cli 20 &&
	cmp "$SRC/params" "$TRASH/stdin/exact-cli"
'

test_expect_success 'API: a body with a raw NUL is 400 INVALID_JSON naming the byte; nothing stored' '
	api_server &&
	TS_SECRET=$(ts apps add bytes --codes copy) && TS_APP_ID=bytes &&
	export TS_SECRET TS_APP_ID &&
	printf "{\"requestId\":\"api-nul\",\"taskCode\":\"copy\",\"executeParams\":[1\\000]}" >"$SRC/api-nul.json" &&
	{ sh "$here/contrib/clients/tsapi.sh" submit "$SRC/api-nul.json" >"$TRASH/body" 2>"$TRASH/err"; rc=$?; } ;
	test "$rc" = 1 || { echo "client exit $rc"; cat "$TRASH/err" "$TRASH/body"; return 1; }
	test "$(jq -r .status "$TRASH/body")" = 400 &&
	test "$(jq -r .code "$TRASH/body")" = INVALID_JSON &&
	# {"requestId":"api-nul","taskCode":"copy","executeParams":[1 is 59 bytes
	test "$(jq -r .offset "$TRASH/body")" = 59 &&
	jq -r .detail "$TRASH/body" | grep -q "^raw NUL byte at offset 59 outside a string" &&
	test "$(state_of api-nul)" = "" &&
	nothing_written
'

test_expect_success 'API: the hook'"'"'s stdin is exactly the executeParams bytes of the body' '
	{ printf "{\"requestId\":\"api-exact\",\"taskCode\":\"copy\",\"executeParams\":"; cat "$SRC/params"; printf "}"; } >"$SRC/api-exact.json" &&
	sh "$here/contrib/clients/tsapi.sh" submit "$SRC/api-exact.json" >"$TRASH/body" &&
	wait_terminal api-exact 20 &&
	cmp "$SRC/params" "$TRASH/stdin/api-exact"
'

test_expect_success 'API: a node'"'"'s .prom file that is not UTF-8 or not the exposition grammar is left out of GET /metrics' '
	printf "# HELP ok_total T.\n# TYPE ok_total counter\nok_total{node=\"a\"} 7\n" >"$SPOOL/metrics/zz-a.prom" &&
	printf "# TYPE ok_total counter\nok_total{node=\"\377\"} 1\n" >"$SPOOL/metrics/zz-b.prom" &&
	printf "# TYPE ok_total counter\nok_total{node=\"c\\\\\"} 2\n" >"$SPOOL/metrics/zz-c.prom" &&
	grep -q "c\\\\\"}" "$SPOOL/metrics/zz-c.prom" &&
	printf "# TYPE ok_total counter\nok_total{node=\"d\"} 0x10\n" >"$SPOOL/metrics/zz-d.prom" &&
	curl -s "$TS_URL/metrics" >"$TRASH/m" &&
	grep -q "^ok_total{node=\"a\"} 7\$" "$TRASH/m" &&
	test "$(grep -c "^ok_total" "$TRASH/m")" = 1 &&
	promtool check metrics <"$TRASH/m" &&
	rm -f "$SPOOL"/metrics/zz-*.prom
'

test_expect_success 'the daemon is still the same process, and stops cleanly' '
	kill -0 "$(daemon_pid n1)" && stop_daemon n1
'

test_done
