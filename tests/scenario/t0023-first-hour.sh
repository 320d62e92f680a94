#!/bin/sh
# A new user's first hour (issue 13 item 7): `taskspool init --group G`
# on a spool already in use regroups everything under it (what the daemon
# made too), setgid directories, symbolic links not followed; the CGI run
# as an unprivileged user on a spool it may not enter answers 500
# PERMISSION_DENIED naming the path, the user and the commands that fix
# it (not 503 "retry shortly"); `make demo` installs the build set of
# tests/install-deps.sh only, `make check` says how long it takes and
# what it starts; `make demo-api` (contrib/demo-api.sh) runs the API
# without root and prints a signed request that works.
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
	test "$(stat -c %a "$SPOOL")" = 2751 &&
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
	: "group root: never the advice to join it (a new user found it)" &&
	case $d in *"belongs to group root, which the user must not join"*) ;; *) false;; esac &&
	case $d in *"usermod -aG root"*) false;; esac &&
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
	case $d in "$SPOOL/apps.conf: "*"Permission denied (to user nobody, uid 65534, which taskspool.cgi runs as)"*"belongs to group root, which the user must not join"*"usermod -aG GROUP nobody"*) ;;
	*) false;; esac
'

test_expect_success 'init --group by a user who may not regroup: exit 73 and the exact command for root' '
	chgrp nogroup "$SPOOL" &&
	{ setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$TS" init --group nogroup "$SPOOL" >"$TRASH/out" 2>"$TRASH/err"
	  test $? = 73; } &&
	cat "$TRASH/err" &&
	grep -qx "taskspool init: $SPOOL: chown/chmod: Operation not permitted" "$TRASH/err" &&
	grep -qxF "taskspool init: as root: chgrp -R nogroup $SPOOL && find $SPOOL -type d -exec chmod g+s {} +" "$TRASH/err"
'

test_expect_success 'a taskspool.conf the CGI may not read: PERMISSION_DENIED naming it' '
	chmod 600 "$CONF" &&
	cgi_as_nobody /health &&
	chmod 644 "$CONF" &&
	cat "$TRASH/body" && echo &&
	case $st in "Status: 500 "*) ;; *) echo "$st"; false;; esac &&
	test "$(jq -r .code "$TRASH/body")" = PERMISSION_DENIED &&
	d=$(jq -r .detail "$TRASH/body") &&
	case $d in "$CONF: Permission denied (to user nobody, uid 65534, which taskspool.cgi runs as)"*"belongs to group root, which the user must not join"*"usermod -aG GROUP nobody"*) ;;
	*) false;; esac &&
	grep -q "$CONF: Permission denied (user nobody, uid 65534)" "$TRASH/cgi.err"
'
else
	skip "init --group regroups every entry" "needs root and group nogroup"
	skip "init --group by a user who may not regroup" "needs root"
	skip "a taskspool.conf the CGI may not read" "needs root"
	skip "the CGI as a user outside the spool group" "needs root"
	skip "apps.conf the CGI may not read" "needs root"
fi

# The install sets (tests/install-deps.sh --list): what owns the headers
# the programs include (dpkg -S, the package database, not this code) is
# in the build set; no server is.
test_expect_success 'install-deps.sh: the build set has the -dev packages of the headers, no server' '
	sh "$TOP/tests/install-deps.sh" --list build >"$TRASH/build.set" &&
	sh "$TOP/tests/install-deps.sh" --list all >"$TRASH/all.set" &&
	sh "$TOP/tests/install-deps.sh" --list demo-api >"$TRASH/api.set" &&
	cat "$TRASH/build.set" &&
	for h in /usr/include/jansson.h /usr/include/openssl/evp.h \
	    /usr/include/x86_64-linux-gnu/curl/curl.h /usr/include/hiredis/hiredis.h \
	    /usr/include/mariadb/mysql.h /usr/include/fcgiapp.h; do
		test -f "$h" || { echo "no $h here"; continue; }
		p=$(dpkg -S "$h" | head -1 | cut -d: -f1) &&
		grep -qx "$p" "$TRASH/build.set" || { echo "$h: $p not in build"; return 1; }
	done &&
	for s in mariadb-server redis-server prometheus lighttpd wrk faketime clang-14 check; do
		! grep -qx "$s" "$TRASH/build.set" || { echo "$s in build"; return 1; }
	done &&
	grep -qx lighttpd "$TRASH/api.set" && grep -qx curl "$TRASH/api.set" &&
	! grep -qx mariadb-server "$TRASH/api.set" &&
	for p in $(cat "$TRASH/api.set") redis-server mariadb-server check; do
		grep -qx "$p" "$TRASH/all.set" || { echo "$p not in all"; return 1; }
	done &&
	{ sh "$TOP/tests/install-deps.sh" --list bogus 2>"$TRASH/err"; test $? = 64; }
'

test_expect_success 'make demo installs the build set only, demo-api its own, check all; check says how long and what it starts' '
	make -s -C "$TOP" BUILD="$BUILD" -n demo >"$TRASH/demo.n" 2>&1 &&
	grep -q "install-deps.sh build" "$TRASH/demo.n" &&
	! grep -q "install-deps.sh all" "$TRASH/demo.n" &&
	make -s -C "$TOP" BUILD="$BUILD" -n demo-api >"$TRASH/demoapi.n" 2>&1 &&
	grep -q "install-deps.sh demo-api" "$TRASH/demoapi.n" &&
	make -s -C "$TOP" BUILD="$BUILD" -n check >"$TRASH/check.n" 2>&1 &&
	grep -v "^make" "$TRASH/check.n" | head -1 | grep -q "about 20 minutes" &&
	grep -q "redis-server, mariadbd" "$TRASH/check.n" &&
	grep -q "install-deps.sh all" "$TRASH/check.n"
'

# demo-api as nobody when root (it must need no root), else as this user.
if [ "$(id -u)" = 0 ]; then
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	mkdir -p "$TRASH/demo" && chown 65534:65534 "$TRASH/demo" && chmod 755 "$TRASH"
else
	AS=""
	mkdir -p "$TRASH/demo"
fi
# as_demo CMD...: CMD as the demo's user, at the top of the tree.
as_demo() {
	(cd "$TOP" && $AS env -i PATH="$PATH" HOME="$TRASH/demo" TMPDIR="$TRASH/demo" \
	    BUILD="$BUILD" DEMO_VAR="$TRASH/demo/var" "$@")
}

if command -v lighttpd >/dev/null 2>&1; then
test_expect_success 'demo-api (no root): a daemon and lighttpd under DEMO_VAR, a signed request that works' '
	as_demo sh contrib/demo-api.sh >"$TRASH/demo.out" 2>&1 ||
	    { cat "$TRASH/demo.out"; false; } &&
	cat "$TRASH/demo.out" &&
	grep -q "\"status\":\"SUCCESS\"" "$TRASH/demo.out" &&
	pid_d=$(cat "$TRASH/demo/var/taskspoold.pid") && kill -0 "$pid_d" &&
	pid_l=$(cat "$TRASH/demo/var/lighttpd/lighttpd.pid.start") && kill -0 "$pid_l" &&
	test "$(stat -c %u /proc/$pid_l)" = "$(stat -c %u "$TRASH/demo")" &&
	# the printed lines, run as they are
	envline=$(sed -n "s/^  \\(\\. [^ ]*\\/env\\) .*/\\1/p" "$TRASH/demo.out") &&
	sub=$(grep "tsapi.sh submit -\$" "$TRASH/demo.out" | sed "s/^  //") &&
	test -n "$envline" && test -n "$sub" &&
	as_demo sh -c "$envline && $sub" >"$TRASH/try.out" &&
	cat "$TRASH/try.out" && echo &&
	id=$(jq -r .requestId "$TRASH/try.out") &&
	as_demo sh -c "$envline && contrib/clients/tsapi.sh wait $id 30" >"$TRASH/wait.out" &&
	test "$(jq -r .status "$TRASH/wait.out")" = SUCCESS &&
	grep -q "make demo-api-stop" "$TRASH/demo.out"
'

test_expect_success 'demo-api stop: both servers gone' '
	as_demo sh contrib/demo-api.sh stop &&
	wait_for "! kill -0 $pid_d 2>/dev/null && ! kill -0 $pid_l 2>/dev/null" 10 &&
	test ! -f "$TRASH/demo/var/taskspoold.pid"
'
else
	skip "demo-api" "lighttpd not installed"
	skip "demo-api stop" "lighttpd not installed"
fi

test_done
