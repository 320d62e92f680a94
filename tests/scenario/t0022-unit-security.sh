#!/bin/sh
# The shipped systemd units (contrib/systemd/) are hardened (issue 13
# item 3): `systemd-analyze security --offline=true` scores every service
# unit at most 2.0 (its --threshold=20: the exposure scale is 0-100 and
# shown divided by 10), and the printed overall exposure is at most 2.0
# too.  A .socket or .timer runs no process of its own: systemd-analyze
# scores one as an unsandboxed service (9.8), so what is checked for
# it is the service it starts.  `systemd-analyze verify --man=no` (which
# needs no systemd as PID 1) reports nothing for any unit, with the
# ExecStart= paths pointed at the programs of $BUILD.  Needs
# systemd-analyze (package systemd): else skipped.
command -v systemd-analyze >/dev/null 2>&1 || {
	echo "1..0 # SKIP systemd-analyze not installed"
	exit 0
}
. "$(dirname "$0")/test-lib.sh"

UNITS="$(dirname "$0")/../../contrib/systemd"
U="$TRASH/units"
mkdir -p "$U"
for f in "$UNITS"/*; do
	sed -e "s|/usr/local/sbin/taskspoold|$BUILD/taskspoold|g" \
	    -e "s|/usr/local/sbin/taskspool.fcgi|$BUILD/taskspool.fcgi|g" \
	    -e "s|/usr/local/bin/taskspool|$BUILD/taskspool|g" \
	    "$f" >"$U/$(basename "$f")"
done

# score FILE: the overall exposure systemd-analyze prints, e.g. "1.9".
score() {
	systemd-analyze security --offline=true "$1" 2>/dev/null |
	    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p'
}

# service_of UNIT: the service a .socket or .timer starts (Service=, else
# the same name), or the unit itself.
service_of() {
	case $1 in
	*.socket|*.timer)
		s=$(sed -n 's/^Service=//p' "$U/$1")
		echo "${s:-${1%.*}.service}" ;;
	*)	echo "$1" ;;
	esac
}

test_expect_success 'every unit of contrib/systemd/ is in the test (a service, socket or timer)' '
	ls "$UNITS" >"$TRASH/units.list" && cat "$TRASH/units.list" &&
	test "$(grep -c "" "$TRASH/units.list")" -ge 6 &&
	! grep -v "\.service$\|\.socket$\|\.timer$" "$TRASH/units.list"
'

for f in $(ls "$UNITS"); do
	svc=$(service_of "$f")
	test_expect_success "$f: systemd-analyze security of $svc at most 2.0" "
		test -f \"\$U/$svc\" &&
		s=\$(score \"\$U/$svc\") && echo \"$svc: \$s\" &&
		test -n \"\$s\" &&
		awk -v s=\"\$s\" 'BEGIN { exit !(s <= 2.0) }' &&
		systemd-analyze security --offline=true --threshold=20 \"\$U/$svc\" >/dev/null
	"
	test_expect_success "$f: systemd-analyze verify reports nothing" "
		(cd \"\$U\" && systemd-analyze verify --man=no \"./$f\") >\"\$TRASH/verify.out\" 2>&1;
		rc=\$?; cat \"\$TRASH/verify.out\" &&
		test \$rc = 0 && ! grep -q . \"\$TRASH/verify.out\"
	"
done

test_expect_success 'the daemon units keep exactly CAP_SETUID CAP_SETGID CAP_KILL; the others none' '
	for f in taskspoold.service taskspoold@.service; do
		grep -qx "CapabilityBoundingSet=CAP_SETUID CAP_SETGID CAP_KILL" "$U/$f" &&
		grep -qx "AmbientCapabilities=CAP_SETUID CAP_SETGID CAP_KILL" "$U/$f" || echo "$f"
	done >"$TRASH/caps" &&
	for f in taskspool-fcgi.service taskspool-purge.service; do
		grep -qx "CapabilityBoundingSet=" "$U/$f" || echo "$f"
	done >>"$TRASH/caps" && ! grep . "$TRASH/caps"
'

test_done
