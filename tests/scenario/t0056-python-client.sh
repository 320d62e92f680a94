#!/bin/sh
# The Python client package contrib/python (issue 13 item 8), installed as
# a user installs it (its version the release taskspool.cgi names, before
# any git describe suffix): a venv of Debian's /usr/bin/python3 with its system
# packages, `pip install --no-index --no-build-isolation` of a copy of
# contrib/python (offline: setuptools from python3-setuptools), then
# tests/python/test_client.py (unittest) with the venv's python against
# lighttpd + taskspool.cgi + a daemon: submit and its replay, a generated
# Idempotency-Key, results, problem+json as exceptions, cancel,
# pagination, keep-alive and one reconnect, 429 with Retry-After (app
# rate=2 per 3 s), the callback registration; and against a local fake
# server: 503/429 retries with their bounds, a dropped connection, an HTML
# error page.  The package also builds a wheel offline, with py.typed, and
# passes mypy --strict (Debian's python3-mypy), which a user's code sees.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/api-lib.sh"
here=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
VENV="$TRASH/venv"

api_server
trap api_cleanup EXIT
cat >>"$CONF" <<C
api_rate_window_sec = 3
callback_allow_cidrs = 203.0.113.0/24
C
api_tester || exit 1
cat >"$HOOKS/secret.code" <<'H'
#!/bin/sh
exit 0
H
chmod +x "$HOOKS/secret.code"
TS_PAGER_SECRET=$(ts apps add pager --codes count) &&
TS_LIMITED_SECRET=$(ts apps add limited --codes count --rate 2) &&
TS_CB_SECRET=$(ts apps add cb --codes count) || exit 1
export TS_PAGER_SECRET TS_LIMITED_SECRET TS_CB_SECRET

test_expect_success 'pip installs the package offline into a venv (Debian python3-venv, python3-setuptools)' '
	cp -R "$here/contrib/python" "$TRASH/src" &&
	"$PY" -m venv --system-site-packages "$VENV" &&
	"$VENV/bin/pip" install -q --no-index --no-build-isolation "$TRASH/src" &&
	"$VENV/bin/python" -c "import taskspool, sys; print(taskspool.__version__, taskspool.__file__)" >"$TRASH/ver" &&
	grep -q "^[0-9][0-9.]* $VENV/lib/python3[.0-9]*/site-packages/taskspool/__init__.py$" "$TRASH/ver" &&
	test -f "$VENV"/lib/python3*/site-packages/taskspool/py.typed &&
	release=$("$BUILD/taskspool.cgi" --version | cut -d" " -f2) &&
	case $release in "$(cut -d" " -f1 "$TRASH/ver")"|"$(cut -d" " -f1 "$TRASH/ver")"[-+]*) ;; *) false ;; esac
'

test_expect_success 'the package builds a wheel offline with py.typed' '
	cp -R "$here/contrib/python" "$TRASH/src2" &&
	"$VENV/bin/pip" wheel -q --no-index --no-build-isolation --no-deps -w "$TRASH/wheel" "$TRASH/src2" &&
	unzip -l "$TRASH"/wheel/taskspool-[0-9]*-*.whl >"$TRASH/whl" 2>/dev/null ||
	    "$PY" -m zipfile -l "$TRASH"/wheel/taskspool-[0-9]*-*.whl >"$TRASH/whl" &&
	grep -q "taskspool/py.typed" "$TRASH/whl" &&
	grep -q "taskspool/client.py" "$TRASH/whl"
'

test_expect_success 'typed (PEP 561): mypy --strict passes the package and sees its types from the venv' '
	(cd "$TRASH/src/src" && "$PY" -m mypy --strict --no-incremental taskspool) &&
	cat >"$TRASH/user.py" <<-PY &&
	import taskspool
	c = taskspool.Client("https://h", "app", "s")
	n: int = c.get("x")["status"]
	PY
	! (cd "$TRASH" && "$VENV/bin/python" -m mypy --no-incremental user.py) >"$TRASH/mypy" &&
	grep -q "user.py:3: error: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")" "$TRASH/mypy"
'

test_expect_success 'daemon starts' '
	start_daemon n1 -j 4
'

test_expect_success 'tests/python/test_client.py (unittest) passes against the CGI, nothing skipped' '
	(cd "$TRASH" && "$VENV/bin/python" "$here/tests/python/test_client.py" -v 2>&1) >"$TRASH/unit" ||
	    { cat "$TRASH/unit"; false; } &&
	tail -3 "$TRASH/unit" &&
	grep -q "^OK$" "$TRASH/unit" && ! grep -q "skipped" "$TRASH/unit" &&
	test "$(grep -c " \.\.\. ok$" "$TRASH/unit")" -ge 20
'

test_expect_success 'tsapi.py prints its usage, not a traceback, without its environment' '
	! env -i "$PY" "$here/contrib/clients/tsapi.py" get x >"$TRASH/o" 2>"$TRASH/e" &&
	grep -q "^tsapi.py: TS_URL, TS_APP_ID, TS_SECRET not set" "$TRASH/e" &&
	grep -q "usage\|tsapi.py submit" "$TRASH/e" &&
	! grep -q Traceback "$TRASH/e" &&
	! env -i TS_URL=http://127.0.0.1:1 TS_APP_ID=a TS_SECRET=b "$PY" "$here/contrib/clients/tsapi.py" get x 2>"$TRASH/e" &&
	grep -q "^tsapi.py: GET /api/tasks/x: .*refused" "$TRASH/e" && ! grep -q Traceback "$TRASH/e"
'

test_done
