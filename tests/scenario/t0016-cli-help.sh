#!/bin/sh
# The first hour with the command line (issue 13 item 7): `--help` on
# every command prints that command's lines of the usage and exits 0,
# whatever else is on the line and whether a spool exists; `-h` as the
# first argument too; an unknown command's help is a usage error (64).
# Without a spool, every command names the path, where it came from
# (-s, $TASKSPOOL_SPOOL, the configuration file or the default) and the
# three ways out, in one line.  `submit --wait` says when no live daemon
# serves the spool, and --wait-timeout ends the wait (75).
. "$(dirname "$0")/test-lib.sh"

# The commands of `taskspool --help`, read from its own text: a line
# "  NAME ..." under "commands:".
cmds=$("$TS" --help | sed -n '/^commands:/,/^$/p' |
    sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | sort -u)

test_expect_success 'the usage lists the commands' '
	for c in init submit status top result logs list cancel retry config \
	    nodes cron jobs apps callbacks db history stats purge; do
		echo "$cmds" | grep -qx "$c" || { echo "missing $c"; return 1; }
	done
'

test_expect_success 'CMD --help: exit 0, its own lines on stdout, nothing on stderr' '
	for c in $cmds; do
		env -u TASKSPOOL_SPOOL "$TS" -s "$TRASH/none" $c --help \
		    >"$TRASH/h.out" 2>"$TRASH/h.err" ||
		    { echo "$c --help: exit $?"; return 1; }
		# its own usage text (jobs, apps, ...) or its lines of the
		# summary
		grep -q "^  $c \|taskspool $c\b" "$TRASH/h.out" ||
		    { echo "$c --help:"; cat "$TRASH/h.out"; return 1; }
		test ! -s "$TRASH/h.err" || { cat "$TRASH/h.err"; return 1; }
		# from the summary, only this command: no line of another
		if head -1 "$TRASH/h.out" | grep -q "one of the lines below" &&
		    sed "/^options:/q" "$TRASH/h.out" | grep "^  [a-z]" |
		    grep -v "^  $c " | grep -q .; then
			echo "$c --help prints other commands:"; cat "$TRASH/h.out"
			return 1
		fi
	done
'

test_expect_success '--help after operands and options, -h first' '
	"$TS" -s "$TRASH/none" submit --code x --help >/dev/null &&
	"$TS" -s "$TRASH/none" status some-id --help | grep -q "^  status " &&
	"$TS" -s "$TRASH/none" logs -h | grep -q "^usage: taskspool logs ID" &&
	"$TS" -s "$TRASH/none" jobs add f.json --help | grep -q "taskspool jobs run-now" &&
	"$TS" -s "$TRASH/none" apps add x --help | grep -q "^  apps " &&
	"$TS" -s "$TRASH/none" purge --help | grep -q "purge --older-than D \[--db\] \[--dry-run\]"
'

test_expect_success 'an unknown command with --help: exit 64' '
	"$TS" bogus --help >/dev/null 2>"$TRASH/e"; test $? = 64 &&
	grep -q "unknown command \"bogus\"" "$TRASH/e"
'

test_expect_success 'no spool: one line naming the path, its source and the ways out' '
	env -u TASKSPOOL_SPOOL "$TS" -s "$TRASH/none" status x 2>"$TRASH/e"
	test $? = 78 && test "$(wc -l <"$TRASH/e")" = 1 &&
	grep -q "no spool at $TRASH/none (from -s)" "$TRASH/e" &&
	grep -q "taskspool init $TRASH/none" "$TRASH/e" &&
	grep -q "\$TASKSPOOL_SPOOL" "$TRASH/e" &&
	TASKSPOOL_SPOOL="$TRASH/none2" "$TS" nodes 2>"$TRASH/e"
	test $? = 78 &&
	grep -q "no spool at $TRASH/none2 (from \$TASKSPOOL_SPOOL)" "$TRASH/e" &&
	printf "spool = %s\n" "$TRASH/none3" >"$TRASH/other.conf" &&
	env -u TASKSPOOL_SPOOL "$TS" -c "$TRASH/other.conf" list 2>"$TRASH/e"
	test $? = 78 &&
	grep -q "no spool at $TRASH/none3 ($TRASH/other.conf)" "$TRASH/e"
'

test_expect_success 'taskspool.cgi and .fcgi run by hand: --help, --version, 64 otherwise' '
	"$BUILD/taskspool.cgi" --help | grep -q "^usage: taskspool.cgi" &&
	test "$("$BUILD/taskspool.cgi" --version)" = \
	    "taskspool.cgi $("$TS" --version | cut -d" " -f2)" &&
	"$BUILD/taskspool.fcgi" -h | grep -q "^usage: taskspool.fcgi" &&
	{ "$BUILD/taskspool.cgi" --bogus 2>/dev/null; test $? = 64; }
'

test_expect_success 'under a web server (GATEWAY_INTERFACE) an argument is a search word, not an option' '
	GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET SCRIPT_NAME=/api \
	    PATH_INFO=/nope QUERY_STRING=--help TASKSPOOL_CONFIG="$CONF" \
	    "$BUILD/taskspool.cgi" --help </dev/null >"$TRASH/cgi.out" &&
	head -1 "$TRASH/cgi.out" | grep -q "^Status: " &&
	! grep -q "^usage:" "$TRASH/cgi.out"
'

test_expect_success 'submit --wait with no live daemon says so; --wait-timeout ends the wait with 75' '
	"$TS" -c "$CONF" submit --code probe --wait-timeout 2 \
	    >"$TRASH/id" 2>"$TRASH/e"; test $? = 75 &&
	id=$(cat "$TRASH/id") &&
	test "$(grep -c "no live daemon serves $SPOOL" "$TRASH/e")" = 1 &&
	grep -q "$id still PENDING after --wait-timeout 2 s" "$TRASH/e" &&
	test -f "$SPOOL/incoming/$id.json"
'

test_expect_success 'with a daemon: the waiting task runs, no such line' '
	start_daemon n1 &&
	v=$("$TS" --version | cut -d" " -f2) &&
	grep -q "node n1 started: taskspool $v, spool " "$TRASH/log.n1" &&
	wait_terminal "$(cat "$TRASH/id")" &&
	"$TS" -c "$CONF" submit --code probe --wait-timeout 60 >/dev/null \
	    2>"$TRASH/e" &&
	! grep -q "no live daemon" "$TRASH/e"
'

test_expect_success 'status of a task in corrupt/ names the reason (text and --json)' '
	printf "{\"taskCode\":\"probe\",\"timeoutsec\":5}" >"$TRASH/typo.json" &&
	cp "$TRASH/typo.json" "$SPOOL/incoming/typo1.json" &&
	wait_for "test -f \"$SPOOL/corrupt/typo1.json.reason\"" &&
	"$TS" -c "$CONF" status typo1 >"$TRASH/st" &&
	grep -q "^typo1 CORRUPT (timeoutsec: unknown member (did you mean \"timeoutSec\"?" "$TRASH/st" &&
	"$TS" -c "$CONF" --json status typo1 | jq -e ".status == \"CORRUPT\" and (.reason | startswith(\"timeoutsec: unknown member\"))" >/dev/null
'

test_expect_success 'taskspoold -o: a value not of the form is 64, one the check refuses is 78 (README)' '
	rc=0 && "$TSD" -n -c "$CONF" -o slots=abc >/dev/null 2>"$TRASH/e" || rc=$? &&
	test $rc = 64 && grep -q "slots: \"abc\" is not a whole number" "$TRASH/e" &&
	rc=0 && "$TSD" -n -c "$CONF" -o slots=-1 >/dev/null 2>"$TRASH/e" || rc=$? &&
	test $rc = 78 && grep -q "slots: -1 out of range" "$TRASH/e" &&
	rc=0 && "$TSD" -n -c "$CONF" -o priority_aging_sec=-1 >/dev/null 2>"$TRASH/e" || rc=$? &&
	test $rc = 78 &&
	rc=0 && "$TSD" -n -c "$CONF" -o bogus=1 >/dev/null 2>"$TRASH/e" || rc=$? &&
	test $rc = 64 && grep -q "unknown key \"bogus\"" "$TRASH/e"
'

test_expect_success 'a key on two lines: the later value, and a warning naming both lines' '
	cp "$CONF" "$TRASH/dup.conf" &&
	n1=$(( $(wc -l <"$TRASH/dup.conf") + 1 )) &&
	printf "max_concurrent = a=1\nmax_concurrent = a=2\n" >>"$TRASH/dup.conf" &&
	"$TSD" -n -c "$TRASH/dup.conf" >"$TRASH/o" 2>"$TRASH/e" &&
	grep -q "max_concurrent at line $((n1 + 1)) repeats line $n1; the later value is used" "$TRASH/e" &&
	grep -q "^max_concurrent = a=2" "$TRASH/o"
'

test_done
