#!/bin/sh
# Malformed and hostile input (FIELD-FAILURES B44, B47): every bad file
# dropped into incoming/ is moved to corrupt/<name> exactly once with a
# corrupt/<name>.reason that names the field and the rule; the daemon
# never restarts and never retries a rejected file; valid work goes on;
# no task id or name can reach outside the spool.
. "$(dirname "$0")/test-lib.sh"

# A settle time the shell's sleeps below stay well inside on a loaded
# machine: a file ending early is left alone this long after its mtime.
echo "settle_ms = 3000" >>"$CONF"

SRC="$TRASH/src"
mkdir -p "$SRC"
START_MARK="$TRASH/start-marker"
: >"$START_MARK"
sleep 0.01	# files made after the marker are strictly newer

# A hook that exists but is not executable (mode 644).
printf '#!/bin/sh\nexit 0\n' >"$HOOKS/noexec"
chmod 644 "$HOOKS/noexec"

# EXPECT: one line per bad file, "name<TAB>ERE<TAB>ERE": both extended
# regular expressions must match its .reason (the field, then the rule).
EXPECT="$TRASH/expect"
TAB=$(printf '\t')
# EXPECT.main and EXPECT.num split them for the reason checks: .num holds
# the numbers the JSON parser itself cannot represent.
expect() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$EXPECT"
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$EXPECT.main"
}
expect_num() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$EXPECT"
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$EXPECT.num"
}
: >"$EXPECT"; : >"$EXPECT.main"; : >"$EXPECT.num"

# put_cp NAME FILE: plain cp straight into incoming/ (open, write, close).
put_cp() { cp "$2" "$SPOOL/incoming/$1"; }
# put_mv NAME FILE: the writer protocol (tmp/ + rename).
put_mv() { cp "$2" "$SPOOL/tmp/.put.$$" && mv "$SPOOL/tmp/.put.$$" "$SPOOL/incoming/$1"; }

# 1 KB of pseudo-random bytes from a fixed seed (Park-Miller LCG), the
# same bytes on every run.
gen_random() {
	awk 'BEGIN { x = 42; for (i = 0; i < 1024; i++) {
		x = (x * 16807) % 2147483647; printf "\\0%03o", x % 256 } }' \
	    >"$SRC/random.esc" &&
	printf '%b' "$(cat "$SRC/random.esc")" >"$SRC/random.bin"
}

# reason_of NAME: the reason text of corrupt/NAME.
reason_of() { cat "$SPOOL/corrupt/$1.reason"; }

# quarantined_once NAME: in corrupt/ with a reason, under that name only
# (no NAME.1 from a second quarantine), and nowhere else in the spool.
quarantined_once() {
	test -e "$SPOOL/corrupt/$1" -o -L "$SPOOL/corrupt/$1" || {
		echo "corrupt/$1 missing"; return 1; }
	test -f "$SPOOL/corrupt/$1.reason" || {
		echo "corrupt/$1.reason missing"; return 1; }
	test ! -e "$SPOOL/corrupt/$1.1" -a ! -L "$SPOOL/corrupt/$1.1" || {
		echo "corrupt/$1.1 exists: quarantined twice"; return 1; }
	test ! -e "$SPOOL/incoming/$1" -a ! -L "$SPOOL/incoming/$1" || {
		echo "incoming/$1 still there"; return 1; }
	n=$(grep -c -F "rejected $1 → corrupt/" "$TRASH/log.n1")
	test "$n" = 1 || { echo "$1 rejected $n times in the log"; return 1; }
}

test_expect_success 'daemon starts' '
	start_daemon n1 &&
	pid0=$(daemon_pid n1) &&
	kill -0 "$pid0"
'

test_expect_success 'drop malformed task files (cp and tmp+mv)' '
	: >"$SRC/empty" && put_cp empty.json "$SRC/empty" &&
	expect empty.json "json" "empty" &&
	: >"$SRC/empty2" && put_mv empty-mv.json "$SRC/empty2" &&
	expect empty-mv.json "json" "empty" &&

	printf "{" >"$SRC/brace" && put_mv open-brace.json "$SRC/brace" &&
	expect open-brace.json "json" "invalid JSON" &&

	gen_random && test "$(wc -c <"$SRC/random.bin")" -eq 1024 &&
	put_cp random.json "$SRC/random.bin" &&
	# The first bytes of gen_random: 42 * 16807 = 705894, % 256 = 0x66
	# ("f", a byte of "false"); 705894 * 16807 % (2^31 - 1) = 1126542223,
	# % 256 = 0x8f: refused before parsing (RFC 8259 §2, issue 10).
	expect random.json "json" "non-ASCII byte 0x8f at offset 1 outside a string" &&

	printf "[]" >"$SRC/array" && put_mv array.json "$SRC/array" &&
	expect array.json "json" "object" &&

	printf "null" >"$SRC/null" && put_mv null.json "$SRC/null" &&
	expect null.json "json" "object|\\{" &&

	printf "{\"requestId\":\"x1\"}" >"$SRC/x1" && put_mv x1.json "$SRC/x1" &&
	expect x1.json "taskCode" "missing|required" &&

	printf "{\"taskCode\":\"probe\",\"timeoutSec\":\"abc\"}" >"$SRC/t1" &&
	put_mv timeout-abc.json "$SRC/t1" &&
	expect timeout-abc.json "timeoutSec" "integer" &&
	printf "{\"taskCode\":\"probe\",\"timeoutSec\":-5}" >"$SRC/t2" &&
	put_mv timeout-neg.json "$SRC/t2" &&
	expect timeout-neg.json "timeoutSec" "1\\.\\.604800" &&
	printf "{\"taskCode\":\"probe\",\"timeoutSec\":1e309}" >"$SRC/t3" &&
	put_mv timeout-1e309.json "$SRC/t3" &&
	expect_num timeout-1e309.json "timeoutSec" "integer|range|overflow|too big|too large" &&
	printf "{\"taskCode\":\"probe\",\"timeoutSec\":18446744073709551616}" >"$SRC/t4" &&
	put_mv timeout-2e64.json "$SRC/t4" &&
	expect_num timeout-2e64.json "timeoutSec" "integer|range|overflow|too big|too large" &&

	{ printf "{\"taskCode\":\"probe\",\"executeParams\":"
	  head -c 100000 /dev/zero | tr "\\000" "["
	  head -c 100000 /dev/zero | tr "\\000" "]"
	  printf "}"; } >"$SRC/deep" &&
	put_mv deep.json "$SRC/deep" &&
	expect deep.json "json|executeParams" "depth|nest" &&
	{ printf "{\"taskCode\":\"probe\",\"executeParams\":"
	  head -c 40 /dev/zero | tr "\\000" "["
	  head -c 40 /dev/zero | tr "\\000" "]"
	  printf "}"; } >"$SRC/deep40" &&
	put_mv deep40.json "$SRC/deep40" &&
	expect deep40.json "executeParams" "(depth|nest).*32|32.*(depth|nest|level)" &&

	printf "{\"taskCode\":\"probe\",\"taskName\":\"a\\\\u0000b\"}" >"$SRC/nul" &&
	grep -q "u0000" "$SRC/nul" &&
	put_mv nul.json "$SRC/nul" &&
	expect nul.json "json|taskName" "u0000|NUL" &&

	printf "\\357\\273\\277{\"taskCode\":\"probe\"}" >"$SRC/bom" &&
	put_cp bom.json "$SRC/bom" &&
	expect bom.json "json|UTF-8|BOM" "byte order mark" &&

	printf "{\"taskCode\":\"probe\",\"timeoutSec\":5,\"timeoutSec\":6}" >"$SRC/dup" &&
	put_cp dup.json "$SRC/dup" &&
	expect dup.json "json|timeoutSec" "duplicate" &&

	printf "{\"taskcode\":\"probe\"}" >"$SRC/typo" &&
	put_cp typo.json "$SRC/typo" &&
	expect typo.json "taskcode" "unknown member .did you mean .taskCode.\?" &&

	printf "{\"requestId\":\"other-id\",\"taskCode\":\"probe\"}" >"$SRC/mism" &&
	put_mv mismatch.json "$SRC/mism" &&
	expect mismatch.json "requestId" "file name" &&

	printf "{\"taskCode\":\"probe\"}" >"$SRC/txt" &&
	put_mv task.txt "$SRC/txt" &&
	expect task.txt "file name" "\\.json" &&

	printf "{\"taskCode\":\"probe\",\"requestId\":\"link\"}" >"$SRC/target.json" &&
	ln -s "$SRC/target.json" "$SPOOL/incoming/link.json" &&
	expect link.json "file" "symbolic link" &&

	mkfifo "$SPOOL/incoming/fifo.json" &&
	expect fifo.json "file" "FIFO" &&

	printf "{\"taskCode\":\"probe\"}" >"$SPOOL/tmp/hl" &&
	ln "$SPOOL/tmp/hl" "$SPOOL/tmp/hl2" &&
	mv "$SPOOL/tmp/hl" "$SPOOL/incoming/hardlink-a.json" &&
	mv "$SPOOL/tmp/hl2" "$SPOOL/incoming/hardlink-b.json" &&
	expect hardlink-a.json "file" "hard link" &&
	expect hardlink-b.json "file" "hard link" &&

	{ printf "{\"taskCode\":\"probe\",\"taskName\":\""
	  head -c 1048600 /dev/zero | tr "\\000" a
	  printf "\"}"; } >"$SRC/big" &&
	put_mv big.json "$SRC/big" &&
	expect big.json "file" "larger than 1048576" &&

	printf "{\"taskCode\":\"probe\"}" >"$SRC/m000" && chmod 000 "$SRC/m000" &&
	mv "$SRC/m000" "$SPOOL/incoming/mode000.json" &&
	expect mode000.json "file" "read permission|unreadable" &&

	mkdir "$SPOOL/incoming/dir.json" &&
	expect dir.json "file" "directory" &&

	printf "{\"requestId\":\"../../outside-marker\",\"taskCode\":\"probe\"}" >"$SRC/ok1" &&
	put_mv ok1.json "$SRC/ok1" &&
	expect ok1.json "requestId" "must match|not allowed|invalid"
'

# all_rejected: incoming/ is empty and every expected name has a reason.
all_rejected() {
	test -z "$(ls -A "$SPOOL/incoming")" || return 1
	while IFS="$TAB" read -r name fre rre; do
		test -f "$SPOOL/corrupt/$name.reason" || return 1
	done <"$EXPECT"
}

test_expect_success 'every bad file reaches corrupt/ with a reason' '
	wait_for all_rejected 20 ||
	{ ls -la "$SPOOL/incoming" "$SPOOL/corrupt"; false; }
'

test_expect_success 'after several rescans: each quarantined exactly once, nothing retried' '
	sleep 3.5 &&
	ok=0 &&
	while IFS="$TAB" read -r name fre rre; do
		quarantined_once "$name" || ok=1
	done <"$EXPECT" &&
	test $ok = 0 &&
	test "$(ls -A "$SPOOL/corrupt" | wc -l)" -eq $(( 2 * $(wc -l <"$EXPECT") )) &&
	test -z "$(ls -A "$SPOOL/incoming")"
'

# check_reasons FILE: every reason of FILE's names matches both EREs.
check_reasons() {
	ok=0
	while IFS="$TAB" read -r name fre rre; do
		r=$(reason_of "$name") || { ok=1; continue; }
		echo "$name: $r"
		printf '%s\n' "$r" | grep -Eq -- "$fre" ||
		    { echo "  ^ does not name the field /$fre/"; ok=1; }
		printf '%s\n' "$r" | grep -Eq -- "$rre" ||
		    { echo "  ^ does not state the rule /$rre/"; ok=1; }
	done <"$1"
	return $ok
}

test_expect_success 'each reason names the field and the rule' '
	check_reasons "$EXPECT.main"
'

test_expect_success 'out-of-range numbers (1e309, 2^64) name their field too' '
	check_reasons "$EXPECT.num"
'

test_expect_success 'B47: a file name with a newline is quarantined under a safe name, logged escaped' '
	printf "{" >"$SRC/nl" &&
	put_mv "$(printf "nl\nname.json")" "$SRC/nl" &&
	wait_for "test -f \"$SPOOL/corrupt/nl_name.json.reason\"" 10 &&
	test -f "$SPOOL/corrupt/nl_name.json" &&
	grep -Eq "^json: " "$SPOOL/corrupt/nl_name.json.reason" &&
	test -z "$(ls -A "$SPOOL/incoming")" &&
	# The log line follows the .reason file: wait for it under load.
	wait_for "grep -q -F \"rejected nl\\x0aname.json\" \"$TRASH/log.n1\"" 10 &&
	test "$(grep -c -F "rejected nl\x0aname.json → corrupt/" "$TRASH/log.n1")" = 1 &&
	! grep -q "^name\.json" "$TRASH/log.n1" &&
	expect nl_name.json "json" "invalid JSON"
'

test_expect_success 'quarantine moves the entry itself, never what it points at' '
	test -L "$SPOOL/corrupt/link.json" &&
	test "$(cat "$SRC/target.json")" = "{\"taskCode\":\"probe\",\"requestId\":\"link\"}" &&
	test -p "$SPOOL/corrupt/fifo.json" &&
	test -d "$SPOOL/corrupt/dir.json" &&
	test ! -e "$SPOOL/results/link.json" &&
	test ! -e "$SPOOL/results/other-id.json" &&
	test ! -e "$SPOOL/results/x1.json" &&
	test -z "$(ls -A "$SPOOL/done" "$SPOOL/failed" | grep "\.json$")"
'

test_expect_success 'the daemon PID never changed and it is still alive' '
	kill -0 "$pid0" &&
	test "$(daemon_pid n1)" = "$pid0" &&
	grep -q "^pid=$pid0\$" "$SPOOL/state/heartbeat.n1" &&
	test "$(grep -c "node n1 started" "$TRASH/log.n1")" = 1
'

# submit_valid: 5 tasks by the CLI, 5 dropped as files; ids in $ids.
submit_valid() {
	ids=""
	for i in 1 2 3 4 5; do
		ts submit --code probe --id "valid-cli-$i" >/dev/null || return 1
		drop "valid-drop-$i.json" \
		    "{\"requestId\":\"valid-drop-$i\",\"taskCode\":\"probe\"}" ||
		    return 1
		ids="$ids valid-cli-$i valid-drop-$i"
	done
}

# all_success ID...: each ends in done/ with status SUCCESS.
all_success() {
	for id in "$@"; do
		wait_terminal "$id" 20 &&
		test "$(jq -r .status "$SPOOL/results/$id.json")" = SUCCESS ||
		{ echo "$id: state $(state_of "$id")"; return 1; }
	done
}

# refused_ids ID...: `submit --id` exits 64 or 65 and prints no id.
refused_ids() {
	for id in "$@"; do
		ts submit --code probe --id "$id" >"$TRASH/sub.out" 2>"$TRASH/sub.err"
		rc=$?
		case $rc in 64|65) ;; *) echo "id [$id]: exit $rc"; return 1;; esac
		test ! -s "$TRASH/sub.out" || { echo "id [$id] printed an id"; return 1; }
	done
}

# refused_codes CODE...: `submit --code` exits 64 or 65.
refused_codes() {
	for code in "$@"; do
		ts submit --code "$code" >"$TRASH/sub.out" 2>"$TRASH/sub.err"
		rc=$?
		case $rc in 64|65) ;; *) echo "code [$code]: exit $rc"; return 1;; esac
		test ! -s "$TRASH/sub.out" || { echo "code [$code] printed an id"; return 1; }
	done
}

test_expect_success 'then 10 valid tasks all succeed' '
	submit_valid &&
	test "$(echo $ids | wc -w)" = 10 &&
	all_success $ids &&
	kill -0 "$pid0"
'

test_expect_success 'B47: the CLI refuses hostile ids and task codes (64 or 65), writes nothing' '
	before=$(find "$SPOOL" | wc -l) &&
	refused_ids "../../outside-marker" "..%2F..%2Foutside-marker" "a/b" \
	    ".." "." "$(printf "a\nb")" "/abs" "..\\..\\x" \
	    "$(head -c 300 /dev/zero | tr "\\000" a)" "" &&
	refused_codes "../bin/sh" "hook;id" "\$(id)" "../probe" "/bin/sh" &&
	test "$(find "$SPOOL" | wc -l)" = "$before"
'

test_expect_success 'B47: nothing was created outside the trash dir or outside the spool' '
	sleep 0.3 &&
	found=$( { find "$TRASH" "$(dirname "$TRASH")" "$PWD" / "$BUILD" "$BUILD/.." \
	    -maxdepth 3 -name "*outside-marker*" 2>/dev/null
	  find "$(dirname "$TRASH")" "$PWD" -maxdepth 2 -newer "$START_MARK" \
	    -name "*outside*" 2>/dev/null
	  find "$SPOOL" -mindepth 2 \( -name "*outside*" -o -name a -o -name b \
	    -o -name ".." -o -name "x" \); } | sort -u) &&
	{ test -z "$found" || { echo "found: $found"; false; }; } &&
	stray=$(find "$TRASH" -mindepth 1 -newer "$START_MARK" \
	    ! -path "$SPOOL" ! -path "$SPOOL/*" ! -path "$SRC" ! -path "$SRC/*" \
	    ! -path "$HOOKS" ! -path "$HOOKS/*" ! -name "log.*" ! -name "pid.*" \
	    ! -name "out.*" ! -name "sub.*" ! -name "expect*" ! -name "list.*") &&
	{ test -z "$stray" || { echo "stray: $stray"; false; }; } &&
	test -z "$(ls -A "$SPOOL/results" | grep -v "^valid-")"
'

test_expect_success 'list --state CORRUPT lists every quarantined file with its reason' '
	ts list --state CORRUPT >"$TRASH/list.txt" 2>"$TRASH/list.err" &&
	test ! -s "$TRASH/list.err" &&
	cat "$TRASH/list.txt" &&
	n=$(ls -A "$SPOOL/corrupt" | grep -vc "\\.reason\$") &&
	test "$(grep -c "^CORRUPT " "$TRASH/list.txt")" = "$n" &&
	test "$n" = "$(wc -l <"$EXPECT")" &&
	ok=0 &&
	while IFS="$TAB" read -r name fre rre; do
		r=$(head -n 1 "$SPOOL/corrupt/$name.reason")
		grep -F -- " $name " "$TRASH/list.txt" | grep -qF -- "$r" ||
		    { echo "not listed with its reason: $name"; ok=1; }
	done <"$EXPECT" &&
	test $ok = 0 &&
	ts --json list --state CORRUPT >"$TRASH/list.json" &&
	test "$(jq length "$TRASH/list.json")" = "$n" &&
	test "$(jq "map(select(.reason == null or .reason == \"\")) | length" "$TRASH/list.json")" = 0
'

test_expect_success 'a bad file named *.reason is kept and listed, never overwritten by a reason' '
	printf "first-bad-input" >"$SRC/v1" &&
	put_mv victim.json.reason "$SRC/v1" &&
	wait_for "test -z \"\$(ls -A \"$SPOOL/incoming\")\"" 10 &&
	printf "second-bad-input" >"$SRC/v2" &&
	put_mv victim.json "$SRC/v2" &&
	wait_for "test -z \"\$(ls -A \"$SPOOL/incoming\")\"" 10 &&
	sleep 0.3 &&
	ls -la "$SPOOL/corrupt" | grep victim &&
	{ grep -rlx "first-bad-input" "$SPOOL/corrupt" ||
	  { echo "the input of victim.json.reason was lost"; false; }; } &&
	{ grep -rlx "second-bad-input" "$SPOOL/corrupt" ||
	  { echo "the input of victim.json was lost"; false; }; } &&
	ts list --state CORRUPT >"$TRASH/list2.txt" &&
	{ test "$(grep -c "^CORRUPT .*victim" "$TRASH/list2.txt")" = 2 ||
	  { echo "list shows:"; grep victim "$TRASH/list2.txt"; false; }; }
'

# A writer that creates the file and then appends to it (two closes,
# each announced complete by inotify): the first part ends early
# (jansson: "premature end of input") and is young, so it is looked at
# again, not sent to corrupt/ as a fragment (issue 13 item 7).
test_expect_success 'a task file written in two parts (> then >>) into incoming/ runs once' '
	printf "{\"requestId\":\"append1\",\"taskCode\":\"probe\"," \
	    >"$SPOOL/incoming/append1.json" &&
	sleep 0.5 &&
	printf "\"maxRetries\":0}\n" >>"$SPOOL/incoming/append1.json" &&
	wait_terminal append1 20 &&
	test "$(state_of append1)" = done &&
	test "$(jq ".attempts | length" "$SPOOL/results/append1.json")" = 1 &&
	test ! -e "$SPOOL/corrupt/append1.json" &&
	! grep -F "rejected append1.json" "$TRASH/log.n1"
'

# One that stays cut: kept while young, then corrupt/ with the reason.
test_expect_success 'a task file that stays truncated goes to corrupt/ after the settle time, with the reason' '
	printf "{\"taskCode\":\"probe\",\"executeParams\":{\"a\":" \
	    >"$SPOOL/incoming/cut1.json" &&
	sleep 1 &&
	test -f "$SPOOL/incoming/cut1.json" &&
	test ! -e "$SPOOL/corrupt/cut1.json" &&
	wait_for "test -f \"$SPOOL/corrupt/cut1.json.reason\"" 15 &&
	cat "$SPOOL/corrupt/cut1.json.reason" &&
	grep -q "invalid JSON at line 1 column 41: .*end of file (the file ends early and was not completed within settle_ms)" \
	    "$SPOOL/corrupt/cut1.json.reason" &&
	test ! -e "$SPOOL/incoming/cut1.json"
'

# Issue 11 item 4: a missing hook (absent, or not executable) is the
# node's, not the task's: such a task is valid and waits, WAITING with
# the reason, never in corrupt/; it runs once the hook is there.
test_expect_success 'a task whose hook is missing or not executable waits (WAITING, reason), never corrupt/' '
	printf "{\"requestId\":\"nohook\",\"taskCode\":\"nosuchhook\"}" >"$SRC/nh" &&
	put_mv nohook.json "$SRC/nh" &&
	printf "{\"requestId\":\"noexec\",\"taskCode\":\"noexec\"}" >"$SRC/ne" &&
	put_mv noexec.json "$SRC/ne" &&
	wait_for "ts status nohook | grep -q WAITING && ts status noexec | grep -q WAITING" 10 &&
	ts status nohook >"$TRASH/nh.st" && cat "$TRASH/nh.st" &&
	test "$(cat "$TRASH/nh.st")" = "nohook WAITING (no live node has hook '"'"'nosuchhook'"'"')" &&
	ts status noexec | grep -F "no live node has hook '"'"'noexec'"'"'" &&
	sleep 2 &&
	test -f "$SPOOL/incoming/nohook.json" && test -f "$SPOOL/incoming/noexec.json" &&
	test ! -e "$SPOOL/corrupt/nohook.json" && test ! -e "$SPOOL/corrupt/noexec.json" &&
	chmod 755 "$HOOKS/noexec" &&
	wait_terminal noexec 10 && test "$(state_of noexec)" = done &&
	ts cancel nohook >/dev/null &&
	wait_terminal nohook 10 && test "$(state_of nohook)" = cancelled
'

test_expect_success 'still the same daemon at the end' '
	kill -0 "$pid0" && test "$(grep -c "node n1 started" "$TRASH/log.n1")" = 1
'

test_expect_success 'daemon stops cleanly' 'stop_daemon n1'

test_done
