#!/bin/sh
# Run every scenario script (tests/scenario/tNNNN-*.sh) against the
# programs in $BUILD and print "scenario: N passed, M failed".
# STRESS=1 also runs the s*.sh stress scripts.
set -u
dir=$(dirname "$0")
pass=0; fail=0; failed=""
for t in "$dir"/t[0-9]*.sh ${STRESS:+"$dir"/s[0-9]*.sh}; do
	[ -f "$t" ] || continue
	echo "# $(basename "$t")"
	if sh "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $(basename "$t")"; fi
done
[ -n "$failed" ] && echo "# failed:$failed"
echo "scenario: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
