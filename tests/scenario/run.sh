#!/bin/sh
# Run every scenario script (tests/scenario/tNNNN-*.sh) against the
# programs in $BUILD and print "scenario: N passed, M failed".
# STRESS=1 also runs the s*.sh stress scripts.
#
# Each script's output is shown as it runs and kept in a temporary file;
# at the end the failing checks ("not ok" lines and what the script
# printed after them) are repeated, so the last screen of a long log --
# often all a CI report keeps -- says what failed and why.
set -u
dir=$(dirname "$0")
logs=$(mktemp -d "${TMPDIR:-/tmp}/taskspool-scenario.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT
pass=0; fail=0; failed=""
for t in "$dir"/t[0-9]*.sh ${STRESS:+"$dir"/s[0-9]*.sh}; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	echo "# $name.sh"
	{ sh "$t" 2>&1; echo $? >"$logs/$name.rc"; } | tee "$logs/$name.log"
	if [ "$(cat "$logs/$name.rc")" = 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); failed="$failed $name.sh"
	fi
done
for f in $failed; do
	name=${f%.sh}
	echo "# ---- $f failed (exit $(cat "$logs/$name.rc")); its failing checks:"
	if grep -q '^not ok' "$logs/$name.log"; then
		# each "not ok" line and up to 25 lines after it
		awk '/^not ok/ { n = 26 } n > 0 { print; n-- }' "$logs/$name.log" | head -n 150
	else
		tail -n 30 "$logs/$name.log"
	fi
done
[ -n "$failed" ] && echo "# failed:$failed"
echo "scenario: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
