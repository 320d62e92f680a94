#!/bin/sh
# deb-test.sh — the Debian packages on this machine, from build to purge
# (issue 13 item 2), as root, with or without systemd as PID 1:
#
#  1. `make deb` (unless DEB_TEST_NOBUILD=1 and $DEB_DIR has the packages):
#     dpkg-buildpackage and lintian, which fails on any error;
#  2. apt-get install of ./taskspool_*.deb, ./taskspool-api_*.deb and
#     ./python3-taskspool_*.deb from $DEB_DIR;
#  3. what the packages made: the users taskspool (group taskspool, home
#     the spool, no login) and taskspool-hook (its own group, not in
#     taskspool, no login); the conffile root:taskspool 0640 with Debian's
#     hooks_dir and apps_file; /etc/taskspool/hooks root 0755; the spool
#     /var/spool/taskspool, owned by taskspool, with no taskspool.conf of
#     its own; taskspoold.service enabled, the purge timer and the FastCGI
#     socket not; `--version` of the four programs = the package version;
#     the Python module importable by the system's python3;
#  4. the installed programs at work, as the user taskspool: `taskspool
#     init` of a temporary spool, `taskspoold -d` in the foreground
#     running three tasks of the example hooks `report` and `hello`
#     (installed into /etc/taskspool/hooks), their results and output read
#     with `taskspool result` / `logs`, `taskspoold -n` on the packaged
#     configuration and spool; the installed taskspool.cgi run with CGI
#     variables answers GET /api/health 200 with the package version; a
#     reinstall keeps a task pending in the packaged spool and the edited
#     conffile with its owner and mode;
#  5. apt-get purge of the three packages, then: no file of any of them
#     left (the `dpkg -L` lists taken before), no /etc/taskspool, no
#     /var/spool/taskspool, no unit file, enablement link or
#     deb-systemd-helper state; the two users are kept (Debian leaves
#     system users in place: see debian/taskspool.postrm).
#
# It refuses to start when taskspool is installed or /etc/taskspool or
# /var/spool/taskspool exists (a purge would remove them).  On failure
# the packages are purged too (DEB_TEST_KEEP=1 keeps them to look at).
# Prints each step; ends with "deb-test: N passed, 0 failed" or exits 1.
set -eu
cd "$(dirname "$0")/../.."
DEB_DIR=${DEB_DIR:-$PWD/build/deb}
PKGS="taskspool taskspool-api python3-taskspool"
pass=0
work=""
daemon=""
installed=no

say() { echo "deb-test: $*"; }
ok() { pass=$((pass + 1)); echo "ok $pass - $*"; }
fail() {
	echo "not ok - $*" >&2
	exit 1
}

cleanup() {
	rc=$?
	if [ -n "$daemon" ]; then
		kill "$daemon" 2>/dev/null || true
		wait "$daemon" 2>/dev/null || true
	fi
	[ -z "$work" ] || rm -rf "$work"
	if [ $rc -ne 0 ] && [ "$installed" = yes ] &&
	    [ "${DEB_TEST_KEEP:-0}" != 1 ]; then
		say "failed: purging the packages"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $PKGS \
		    >/dev/null 2>&1 || true
	fi
	[ $rc -eq 0 ] || echo "deb-test: $pass passed, 1 failed"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { say "needs root (apt-get install)"; exit 77; }
for p in $PKGS; do
	if dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null |
	    grep -qv '^not-installed$'; then
		say "$p is installed here; refusing (a purge would remove it)"
		exit 1
	fi
done
for d in /etc/taskspool /var/spool/taskspool; do
	[ ! -e "$d" ] || { say "$d exists; refusing (a purge removes it)"; exit 1; }
done
say "PID 1 is $(cat /proc/1/comm 2>/dev/null || echo unknown)"

# --- 1. build
if [ "${DEB_TEST_NOBUILD:-0}" = 1 ] && ls "$DEB_DIR"/taskspool_*.deb >/dev/null 2>&1; then
	say "using the packages in $DEB_DIR (DEB_TEST_NOBUILD=1)"
else
	say "make deb"
	start=$(date +%s)
	make deb DEB_DIR="$DEB_DIR"
	say "make deb took $(($(date +%s) - start)) s"
fi
ok "make deb: packages built, lintian found no error"
version=$(dpkg-deb -f "$DEB_DIR"/taskspool_*.deb Version)
say "version $version"

# --- 2. install
say "apt-get install ./taskspool_*.deb ./taskspool-api_*.deb ./python3-taskspool_*.deb"
installed=yes
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "$DEB_DIR"/taskspool_*.deb "$DEB_DIR"/taskspool-api_*.deb \
    "$DEB_DIR"/python3-taskspool_*.deb
for p in $PKGS; do
	test "$(dpkg-query -W -f '${db:Status-Status} ${Version}' "$p")" = \
	    "installed $version" || fail "$p is not installed at $version"
done
ok "the three packages are installed"
lists=$(mktemp -d "${TMPDIR:-/tmp}/deb-test-lists.XXXXXX")
work=$lists
for p in $PKGS; do
	dpkg -L "$p" >"$lists/$p.list"
done

# --- 3. what the packages made
getent passwd taskspool | awk -F: '{ print $6, $7 }' >"$work/pw"
test "$(cat "$work/pw")" = "/var/spool/taskspool /usr/sbin/nologin" ||
    fail "user taskspool: home and shell are $(cat "$work/pw")"
test "$(id -gn taskspool)" = taskspool || fail "taskspool's group"
getent passwd taskspool-hook | awk -F: '{ print $7 }' | grep -qx /usr/sbin/nologin ||
    fail "user taskspool-hook: no login shell expected"
test "$(id -gn taskspool-hook)" = taskspool-hook || fail "taskspool-hook's group"
id -nG taskspool-hook | tr ' ' '\n' | grep -qx taskspool &&
    fail "taskspool-hook is in group taskspool"
test "$(id -u taskspool)" -lt 1000 && test "$(id -u taskspool-hook)" -lt 1000 ||
    fail "the users are not system users"
ok "users taskspool and taskspool-hook (own group, not in taskspool), system, no login"

test "$(stat -c '%U:%G %a' /etc/taskspool/taskspool.conf)" = "root:taskspool 640" ||
    fail "conffile is $(stat -c '%U:%G %a' /etc/taskspool/taskspool.conf)"
grep -qx 'hooks_dir = /etc/taskspool/hooks' /etc/taskspool/taskspool.conf &&
    grep -qx 'apps_file = /etc/taskspool/apps.conf' /etc/taskspool/taskspool.conf ||
    fail "conffile: hooks_dir/apps_file"
grep -qx /etc/taskspool/taskspool.conf /var/lib/dpkg/info/taskspool.conffiles ||
    fail "taskspool.conf is not a conffile"
test "$(stat -c '%U:%G %a' /etc/taskspool/hooks)" = "root:root 755" ||
    fail "hooks dir is $(stat -c '%U:%G %a' /etc/taskspool/hooks)"
test "$(stat -c '%U:%G %a' /var/spool/taskspool)" = "taskspool:taskspool 2751" ||
    fail "spool is $(stat -c '%U:%G %a' /var/spool/taskspool)"
for d in tmp incoming delayed active done failed results logs state; do
	test -d "/var/spool/taskspool/$d" || fail "spool lacks $d/"
done
test ! -e /var/spool/taskspool/taskspool.conf ||
    fail "the spool has a taskspool.conf of its own (it would hide /etc's)"
ok "conffile root:taskspool 0640 (Debian paths), hooks/ root 0755, spool taskspool:taskspool 2751 initialised"

# README.Debian: apps are added by root; the file must stay the daemon's
# group's (the setgid /etc/taskspool), and keep it when rewritten.
taskspool apps add debtest-app --codes hello >/dev/null || fail "taskspool apps add"
test "$(stat -c '%U:%G %a' /etc/taskspool/apps.conf)" = "root:taskspool 640" ||
    fail "apps.conf: $(stat -c '%U:%G %a' /etc/taskspool/apps.conf)"
taskspool apps disable debtest-app >/dev/null || fail "taskspool apps disable"
test "$(stat -c '%G' /etc/taskspool/apps.conf)" = taskspool ||
    fail "apps.conf rewritten: $(stat -c '%G' /etc/taskspool/apps.conf)"
ok "apps.conf made and rewritten by root stays root:taskspool 0640"

# deb-systemd-helper answers only "from dpkg" (DPKG_MAINTSCRIPT_PACKAGE).
dsh() { DPKG_MAINTSCRIPT_PACKAGE=taskspool deb-systemd-helper "$@"; }
dsh is-enabled taskspoold.service || fail "taskspoold.service not enabled"
test -L /etc/systemd/system/multi-user.target.wants/taskspoold.service ||
    fail "no multi-user.target.wants link"
for u in taskspool-purge.timer taskspool-fcgi.socket; do
	! dsh is-enabled "$u" || fail "$u is enabled"
done
if [ -d /run/systemd/system ]; then
	say "systemd is running: taskspoold.service is $(systemctl is-active taskspoold.service || true)"
else
	! pgrep -u taskspool -x taskspoold >/dev/null ||
	    fail "taskspoold started without systemd"
fi
ok "taskspoold.service enabled (not started without systemd), timer and socket not enabled"

for p in /usr/sbin/taskspoold /usr/bin/taskspool /usr/lib/cgi-bin/taskspool.cgi \
    /usr/sbin/taskspool.fcgi; do
	test "$("$p" --version)" = "${p##*/} $version" ||
	    fail "$p --version: $("$p" --version)"
done
test "$(taskspool -V)" = "taskspool $version" || fail "taskspool -V"
ok "--version of taskspoold, taskspool, taskspool.cgi, taskspool.fcgi: $version"

where=$(cd / && /usr/bin/python3 -c 'import taskspool; print(taskspool.__file__)')
test "$where" = /usr/lib/python3/dist-packages/taskspool/__init__.py ||
    fail "python3 imports taskspool from $where"
for m in man1/taskspool.1 man5/taskspool.conf.5 man7/taskspool-hooks.7 \
    man8/taskspoold.8 man8/taskspool.cgi.8 man8/taskspool.fcgi.8; do
	test -f "/usr/share/man/$m.gz" || fail "no manual page $m"
done
test -f /usr/share/bash-completion/completions/taskspool || fail "bash completion"
ok "python3 imports taskspool from the package; manual pages; bash completion"

# --- 4. the installed programs at work, as the daemon's user
work=$(mktemp -d "${TMPDIR:-/tmp}/deb-test.XXXXXX")
mv "$lists" "$work/lists"
lists=$work/lists
chmod 755 "$work"
chown taskspool:taskspool "$work"
# as_ts CMD...: CMD as the user taskspool.
as_ts() { (cd / && exec setpriv --reuid=taskspool --regid=taskspool --clear-groups "$@"); }
sp=$work/spool
as_ts taskspool init "$sp" >/dev/null || fail "taskspool init $sp"
install -m 755 /usr/share/doc/taskspool/examples/hooks/report \
    /usr/share/doc/taskspool/examples/hooks/hello /etc/taskspool/hooks/
# A hook that tries the secrets: it runs as taskspool-hook (hook_user, as
# in the packaged configuration), which may read none of them.
cat >/etc/taskspool/hooks/peek <<'H'
#!/bin/sh
echo "user $(id -un)"
if cat /etc/taskspool/taskspool.conf >/dev/null 2>&1; then r=READ; else r=denied; fi
echo "$r /etc/taskspool/taskspool.conf"
if ls "$TASKSPOOL_WORK_DIR/../../state" >/dev/null 2>&1; then r=READ; else r=denied; fi
echo "$r $TASKSPOOL_WORK_DIR/../../state"
H
chmod 755 /etc/taskspool/hooks/peek
sed -i -e 's|^hooks_dir =.*|hooks_dir = /etc/taskspool/hooks|' \
    -e 's|^node_id =.*|node_id = debtest|' \
    -e 's|^hook_user =.*|hook_user = taskspool-hook|' \
    -e 's|^hook_group =.*|hook_group = taskspool-hook|' "$sp/taskspool.conf"
grep -qx 'node_id = debtest' "$sp/taskspool.conf" &&
    grep -qx 'hook_user = taskspool-hook' "$sp/taskspool.conf" ||
    fail "no node_id or hook_user line to set"
# As taskspoold.service starts it: the user taskspool with the three
# capabilities of its AmbientCapabilities=.
(cd / && exec setpriv --reuid=taskspool --regid=taskspool --clear-groups \
    --inh-caps=+setuid,+setgid,+kill --ambient-caps=+setuid,+setgid,+kill \
    taskspoold -d -s "$sp") >"$work/daemon.log" 2>&1 &
daemon=$!
ids=""
for n in 1 2 3; do
	if [ $n = 3 ]; then
		id=$(as_ts taskspool -s "$sp" submit --code hello --params '{"n":3}')
	else
		id=$(as_ts taskspool -s "$sp" submit --code report --params "{\"pages\":$n}")
	fi
	ids="$ids $id"
done
i=0
for id in $ids; do
	until as_ts taskspool -s "$sp" status "$id" | grep -q " SUCCESS"; do
		i=$((i + 1))
		[ $i -lt 600 ] || { cat "$work/daemon.log"; fail "$id not SUCCESS in 60 s"; }
		sleep 0.1
	done
done
set -- $ids
n=1
for id in "$1" "$2"; do
	as_ts taskspool -s "$sp" result "$id" >"$work/r.json"
	test "$(jq -c .result "$work/r.json")" = \
	    "{\"reportId\":\"$id\",\"pages\":$n,\"node\":\"debtest\"}" ||
	    fail "result of $id: $(cat "$work/r.json")"
	n=$((n + 1))
done
as_ts taskspool -s "$sp" logs "$3" >"$work/out"
grep -q "^hello from debtest: task $3 attempt 1 of " "$work/out" &&
    grep -qx 'params: {"n":3}' "$work/out" || fail "output of $3: $(cat "$work/out")"
pk=$(as_ts taskspool -s "$sp" submit --code peek)
i=0
until as_ts taskspool -s "$sp" status "$pk" | grep -q " SUCCESS"; do
	i=$((i + 1))
	[ $i -lt 300 ] || { cat "$work/daemon.log"; fail "peek not SUCCESS in 30 s"; }
	sleep 0.1
done
as_ts taskspool -s "$sp" logs "$pk" >"$work/peek"
grep -qx "user taskspool-hook" "$work/peek" &&
    grep -qx "denied /etc/taskspool/taskspool.conf" "$work/peek" &&
    grep -q "^denied .*/state$" "$work/peek" && ! grep -q "^READ" "$work/peek" ||
    fail "the hook's view: $(cat "$work/peek")"
ok "a hook runs as taskspool-hook and may read neither taskspool.conf nor state/"
grep -q "node debtest started: taskspool $version, spool " "$work/daemon.log" ||
    fail "start-up line: $(head -3 "$work/daemon.log")"
ok "installed taskspoold ran report, report, hello on a fresh spool; results and output read back"

env -i PATH=/usr/bin:/bin GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET \
    SCRIPT_NAME=/api PATH_INFO=/health TASKSPOOL_CONFIG="$sp/taskspool.conf" \
    setpriv --reuid=taskspool --regid=taskspool --clear-groups \
    /usr/lib/cgi-bin/taskspool.cgi >"$work/cgi.out" 2>"$work/cgi.err"
head -n 1 "$work/cgi.out" | grep -q '^Status: 200 ' ||
    fail "GET /api/health: $(cat "$work/cgi.out" "$work/cgi.err")"
sed '1,/^\r$/d' "$work/cgi.out" >"$work/health.json"
test "$(jq -r .version "$work/health.json")" = "$version" ||
    fail "health: $(cat "$work/health.json")"
ok "installed taskspool.cgi (CGI variables, the daemon running): GET /api/health 200, version $version"

kill "$daemon"
wait "$daemon" || fail "taskspoold exited $? after SIGTERM"
daemon=""
ok "taskspoold stopped cleanly (exit 0) on SIGTERM"

(cd / && exec setpriv --reuid=taskspool --regid=taskspool --clear-groups \
    --inh-caps=+setuid,+setgid,+kill --ambient-caps=+setuid,+setgid,+kill \
    taskspoold -n) >"$work/n.out" 2>&1 || { cat "$work/n.out"; fail "taskspoold -n"; }
as_ts taskspool config >"$work/config"
grep -qx 'hooks_dir = /etc/taskspool/hooks' "$work/config" &&
    grep -qx 'spool = /var/spool/taskspool' "$work/config" ||
    fail "the packaged configuration is not what taskspool reads"
ok "taskspoold -n accepts the packaged configuration and spool"


# An upgrade (the same version again: postinst configure runs once more)
# keeps the packaged spool's tasks, the configuration's owner and mode.
pid=$(as_ts taskspool submit --code hello) || fail "submit into the packaged spool"
echo "# administrator's line" >>/etc/taskspool/taskspool.conf
DEBIAN_FRONTEND=noninteractive dpkg -i --force-confold "$DEB_DIR"/taskspool_*.deb >/dev/null
as_ts taskspool status "$pid" | grep -q "^$pid PENDING" ||
    fail "after the reinstall: $(as_ts taskspool status "$pid")"
test "$(stat -c '%U:%G %a' /etc/taskspool/taskspool.conf)" = "root:taskspool 640" &&
    grep -qx "# administrator's line" /etc/taskspool/taskspool.conf ||
    fail "the reinstall changed the conffile"
test ! -e /var/spool/taskspool/taskspool.conf || fail "the reinstall left a spool taskspool.conf"
ok "reinstall: the packaged spool's pending task, the edited conffile and its mode kept"

# --- 5. purge
say "apt-get purge -y $PKGS"
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $PKGS
installed=no
for p in $PKGS; do
	if dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null |
	    grep -qv '^not-installed$'; then
		fail "$p is still known to dpkg: $(dpkg -s "$p" | grep Status)"
	fi
done
left=""
for p in $PKGS; do
	while IFS= read -r f; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		# shared directories (/usr, /etc, /lib -> usr/lib, ...) stay;
		# ours must go
		if [ -d "$f" ]; then
			case ${f##*/} in *taskspool*) ;; *) continue ;; esac
		fi
		left="$left $f"
	done <"$lists/$p.list"
done
test -z "$left" || fail "left after purge:$left"
for d in /etc/taskspool /var/spool/taskspool; do
	test ! -e "$d" || fail "$d left after purge"
done
units=$(find /etc/systemd /lib/systemd/system /usr/lib/systemd/system \
    /var/lib/systemd/deb-systemd-helper-enabled \
    /var/lib/systemd/deb-systemd-helper-masked -name '*taskspool*' 2>/dev/null || true)
test -z "$units" || fail "units left: $units"
ok "purge: no file of the packages, no /etc/taskspool, no spool, no unit or enablement left"

getent passwd taskspool >/dev/null && getent passwd taskspool-hook >/dev/null ||
    fail "a system user was removed"
ok "users taskspool and taskspool-hook kept (Debian leaves system users)"
echo "deb-test: $pass passed, 0 failed"
