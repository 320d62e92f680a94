#!/bin/sh
# Run libFuzzer targets one after the other (make fuzz; tests/fuzz/README.md).
#
#   BUILD=build-fuzz FUZZ_SECONDS=60 sh tests/fuzz/run.sh fuzz_task ...
#
# Each target $BUILD/fuzz/<target> runs for FUZZ_SECONDS seconds
# (-max_total_time) on a working corpus $BUILD/fuzz-corpus/<target>/,
# seeded from tests/fuzz/corpus/<target>/ and tests/fuzz/regress/<target>/
# (the inputs it finds stay there for the next run), with the dictionary
# tests/fuzz/<target>.dict when there is one.  A crash, a leak, a timeout
# (FUZZ_TIMEOUT seconds, default 10) or running out of memory stops the
# target; the input is left in $BUILD/fuzz-crashes/<target>/.  At the end
# one line per target gives the seconds it ran (less than FUZZ_SECONDS
# when it crashed), the executions, execs/s (from libFuzzer's final
# stats, -print_final_stats=1) and the crashes of this run, then where
# each new crash input is and how to keep it.  The log of each target is
# $BUILD/fuzz-logs/<target>.log.  The harness's spools go under $TMPDIR,
# or /dev/shm when TMPDIR is unset.  Exit status 1 when a target crashed
# or did not run, else 0.
set -u
BUILD=${BUILD:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
REPLAY_BUILD=${REPLAY_BUILD:-build}
[ $# -gt 0 ] || { echo "usage: run.sh TARGET..." >&2; exit 64; }
# The targets that need a spool make it under $TMPDIR and write a few
# files per input: on tmpfs that is about twice as fast as on a disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm
	export TMPDIR
fi

mkdir -p "$BUILD/fuzz-logs" "$BUILD/fuzz-crashes" "$BUILD/fuzz-corpus"
summary=""
failed=0
new=""
for t in "$@"; do
	bin=$BUILD/fuzz/$t
	corpus=$BUILD/fuzz-corpus/$t
	crashes=$BUILD/fuzz-crashes/$t
	log=$BUILD/fuzz-logs/$t.log
	mkdir -p "$corpus" "$crashes"
	for d in "tests/fuzz/corpus/$t" "tests/fuzz/regress/$t"; do
		[ -d "$d" ] && cp -p "$d"/* "$corpus"/ 2>/dev/null
	done
	dict=""
	[ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
	stamp=$crashes/.stamp
	: >"$stamp"
	echo "fuzz: $t for ${FUZZ_SECONDS}s (log $log)"
	start=$(date +%s)
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
	    -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2048 \
	    -artifact_prefix="$crashes/" $dict "$corpus" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" |
	    tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" |
	    tail -n 1)
	found=$(find "$crashes" -type f -newer "$stamp" \
	    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
	    -o -name 'oom-*' \) | sort)
	n=0
	for f in $found; do
		n=$((n + 1))
		new="$new $t:$f"
	done
	if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
		# Died without an artifact (set-up failed, killed): say so.
		n="rc=$rc"
		tail -n 5 "$log" | sed 's/^/fuzz:   /'
	fi
	[ "$n" = 0 ] || failed=1
	summary="$summary$(printf '%-16s %5ss %12s %9s/s  crashes %s' "$t" \
	    "$took" "${execs:-?}" "${rate:-?}" "$n")
"
done
echo "fuzz: target          time   executions   execs/s"
printf '%s' "$summary" | sed 's/^/fuzz: /'
for e in $new; do
	t=${e%%:*}
	f=${e#*:}
	echo "fuzz: NEW CRASH $t: $f"
	echo "fuzz:   replay: $REPLAY_BUILD/fuzz/replay_$t $f (or $BUILD/fuzz/$t $f)"
	echo "fuzz:   keep it: mv $f tests/fuzz/regress/$t/ (then make unit replays it)"
done
exit $failed
