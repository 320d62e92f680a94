#!/bin/sh
# A new user's first hour (issue 13 item 7), the parts that need no web
# server: `taskspool init --group G` on a spool already in use regroups
# everything under it (what the daemon made too), setgid directories,
# symbolic links not followed; the CGI run as an unprivileged user on a
# spool it may not enter answers 500 PERMISSION_DENIED naming the path,
# the user and the commands that fix it (not 503 "retry shortly");
# `make demo` installs the build set of tests/install-deps.sh only.
. "$(dirname "$0")/test-lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CGI="$BUILD/taskspool.cgi"

# skip DESC WHY: a test that cannot run here, reported as TAP skip.
skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # skip $2"
}

test_expect_success 'a spool in use: the daemon made active/, results, logs' '
	start_daemon n1 &&
	id=$(ts submit --code probe --id first1) &&
	wait_terminal first1 20 &&
	stop_daemon n1 &&
	test -d "$SPOOL/active/n1" &&
	test -f "$SPOOL/results/first1.json" &&
	ln -s /etc/passwd "$SPOOL/results/planted" &&
	stat -c "%a" "$SPOOL/results/first1.json" >"$TRASH/mode.before" &&
	stat -c "%G" /etc/passwd >"$TRASH/passwd.group"
'

if [ "$(id -u)" = 0 ] && getent group nogroup >/dev/null; then
test_expect_success 'init --group on it regroups every entry, directories setgid' '
	ts init --group nogroup "$SPOOL" &&
	find "$SPOOL" ! -type l ! -group nogroup >"$TRASH/other-group" &&
	{ test ! -s "$TRASH/other-group" ||
	  { echo "not regrouped:"; cat "$TRASH/other-group"; false; }; } &&
	find "$SPOOL" -type d ! -perm -2000 >"$TRASH/no-setgid" &&
	{ test ! -s "$TRASH/no-setgid" ||
	  { echo "not setgid:"; cat "$TRASH/no-setgid"; false; }; } &&
	# the modes of spool-layout/README.md for init'"'"'s own directories
	test "$(stat -c %a "$SPOOL")" = 2750 &&
	test "$(stat -c %a "$SPOOL/incoming")" = 2770 &&
	test "$(stat -c %a "$SPOOL/results")" = 2750 &&
	test "$(stat -c %a "$SPOOL/state/cancel")" = 2770 &&
	# files keep their modes; a link is neither followed nor changed
	test "$(stat -c %a "$SPOOL/results/first1.json")" = "$(cat "$TRASH/mode.before")" &&
	test "$(stat -c %G /etc/passwd)" = "$(cat "$TRASH/passwd.group")" &&
	test "$(stat -c %G "$SPOOL/active/n1")" = nogroup &&
	test "$(stat -c %G "$SPOOL/results/first1.json")" = nogroup &&
	test "$(stat -c %G "$SPOOL/taskspool.conf")" = nogroup
'

# cgi_as_nobody PATH_INFO [VAR=VALUE...]: the CGI run as nobody:nogroup
# (no other groups) with $CONF; the answer in $TRASH/resp, its status
# line in $st, its body in $TRASH/body.
cgi_as_nobody() {
	_p=$1; shift
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	    env -i PATH="$PATH" TASKSPOOL_CONFIG="$CONF" REQUEST_METHOD=GET \
	    PATH_INFO="$_p" QUERY_STRING= "$@" "$CGI" </dev/null \
	    >"$TRASH/resp" 2>"$TRASH/cgi.err"
	st=$(head -1 "$TRASH/resp" | tr -d "\r")
	tr -d "\r" <"$TRASH/resp" | sed "1,/^\$/d" >"$TRASH/body"
}

test_expect_success 'the CGI as a user outside the spool group: 500 PERMISSION_DENIED with the fix' '
	chmod 755 "$TRASH" && chmod 644 "$CONF" &&
	ts init --group root "$SPOOL" &&
	cgi_as_nobody /health &&
	cat "$TRASH/body" && echo &&
	case $st in "Status: 500 "*) ;; *) echo "$st"; false;; esac &&
	test "$(jq -r .code "$TRASH/body")" = PERMISSION_DENIED &&
	test "$(jq -r .type "$TRASH/body")" = urn:ts:problem:permission-denied &&
	d=$(jq -r .detail "$TRASH/body") &&
	case $d in "$SPOOL: Permission denied (to user nobody, uid 65534, which taskspool.cgi runs as); this lasts until an operator fixes it (retrying does not help)."*) ;;
	*) echo "detail does not start as expected"; false;; esac &&
	case $d in *"usermod -aG root nobody"*) ;; *) false;; esac &&
	case $d in *"taskspool init --group GROUP $SPOOL"*) ;; *) false;; esac &&
	! grep -qi "^Retry-After" "$TRASH/resp" &&
	! grep -q "taskspool init $SPOOL" "$TRASH/body"
'

test_expect_success 'apps.conf the CGI may not read: the same problem, naming the file' '
	ts init --group nogroup "$SPOOL" &&
	ts apps add tester --codes probe >/dev/null &&
	chgrp root "$SPOOL/apps.conf" && chmod 640 "$SPOOL/apps.conf" &&
	cgi_as_nobody /tasks/x HTTP_X_APP_ID=tester \
	    HTTP_X_TIMESTAMP="$(date +%s)" HTTP_X_NONCE=0123456789abcdef \
	    HTTP_X_SIGNATURE=$(printf "%064d" 0) &&
	cat "$TRASH/body" && echo &&
	case $st in "Status: 500 "*) ;; *) echo "$st"; false;; esac &&
	test "$(jq -r .code "$TRASH/body")" = PERMISSION_DENIED &&
	d=$(jq -r .detail "$TRASH/body") &&
	case $d in "$SPOOL/apps.conf: "*"Permission denied (to user nobody, uid 65534, which taskspool.cgi runs as)"*"usermod -aG root nobody"*) ;;
	*) false;; esac
'
else
	skip "init --group regroups every entry" "needs root and group nogroup"
	skip "the CGI as a user outside the spool group" "needs root"
	skip "apps.conf the CGI may not read" "needs root"
fi

test_done
