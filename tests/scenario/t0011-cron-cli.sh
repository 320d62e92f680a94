#!/bin/sh
# Replay every line of tests/data/cron-vectors.jsonl through the CLI:
#   taskspool cron next EXPR --dialect D --tz Z --from FROM -n K
# (K = the length of "next") must print exactly the "next" list, one
# instant per line, offsets included (CRON-RULES.md §1, §6).
#  - "error": true   -> exit 65 (EX_DATAERR: EXPR does not parse), no output;
#  - "next": []      -> the documented "no fire time": exit 1 and no output
#                       (cli_cron.c), or exit 65 (CRON-RULES.md §4.7/§6.5
#                       allow rejecting a statically impossible date).
# One TAP line per vector; the last line sums them up.  Needs jq.
. "$(dirname "$0")/test-lib.sh"

VEC=${CRON_VECTORS:-$(dirname "$0")/../data/cron-vectors.jsonl}

# kind (error|none|next), id, dialect, tz, from, K, expr, next (space-joined)
# as tab-separated fields; expr keeps its blanks (only tabs split), and the
# possibly empty "next" is last.
jq -r '[ (if .error == true then "error" elif (.next | length) == 0 then "none" else "next" end),
	 .id, .dialect, .tz, .from, ((.next // []) | length | tostring), .expr,
	 ((.next // []) | join(" ")) ] | @tsv' "$VEC" >"$TRASH/vectors" ||
    { echo "Bail out! cannot read $VEC with jq"; exit 1; }
total=$(wc -l <"$TRASH/vectors")
[ "$total" -eq "$(grep -c . "$VEC")" ] ||
    { echo "Bail out! $VEC: $total of $(grep -c . "$VEC") lines decoded"; exit 1; }

# check KIND DIALECT TZ FROM K EXPR WANT
check() {
	kind=$1 dia=$2 zone=$3 from=$4 k=$5 expr=$6 want=$7
	if [ "$kind" = next ]; then
		"$TS" cron next "$expr" --dialect "$dia" --tz "$zone" --from "$from" -n "$k" </dev/null \
		    >"$TRASH/got" 2>"$TRASH/err"
	else
		# K = 0 is not a valid -n: ask for one instant.
		"$TS" cron next "$expr" --dialect "$dia" --tz "$zone" --from "$from" -n 1 </dev/null \
		    >"$TRASH/got" 2>"$TRASH/err"
	fi
	rc=$?
	echo "exit $rc"; sed 's/^/stderr: /' "$TRASH/err"
	case $kind in
	error)
		test "$rc" = 65 && test ! -s "$TRASH/got" ;;
	none)
		{ test "$rc" = 1 || test "$rc" = 65; } && test ! -s "$TRASH/got" ;;
	next)
		for t in $want; do echo "$t"; done >"$TRASH/want"
		test "$rc" = 0 && diff "$TRASH/want" "$TRASH/got" ;;
	esac
}

pass=0
while IFS='	' read -r kind id dia zone from k expr want; do
	before=$test_failed
	test_expect_success "$id ($kind): \"$expr\" $dia $zone" \
	    'check "$kind" "$dia" "$zone" "$from" "$k" "$expr" "$want"'
	[ "$test_failed" = "$before" ] && pass=$((pass + 1))
done <"$TRASH/vectors"

echo "# cron-vectors: $pass of $total passed"
test_done
