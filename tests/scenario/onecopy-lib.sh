# onecopy-lib.sh — sourced after test-lib.sh (and, for cluster mode, after
# cluster-lib.sh and redis_setup) by t0015 (embedded) and t0063 (cluster):
# issue 11 item 7, one copy per requestId, always (the claim marker,
# daemon/coord/claimmark.h).
#
# Three daemons; copies of one requestId placed in several directories at
# once — incoming/ (route any), queue/b/ (route node:b), queue/c/ (route
# node:c), some in delayed/ (due 8 s later) —, and ids dropped into
# incoming/ twice at once: every id runs exactly once (one START line per
# id), its result in results/ and its task in done/, every other copy in
# corrupt/ with a reason naming the duplicate, nothing left in incoming/,
# delayed/, queue/, active/ or state/claims/.  Then the same with kill -9
# of a daemon during the claims (restarted): every id ends in done/ once,
# no two runs of one id overlap, and only an attempt the kill lost is run
# again (delivery stays at-least-once across crashes).  And the crash states of the marker:
# one left by a dead claimant is taken over, one held by a live process
# holds the copy back until it is released.  Last, a cancel while a second
# copy waits in delayed/: the running task is cancelled, the waiting copy
# is a duplicate (a cancel claims a pending task like any claim).
. "$(dirname "$0")/runs-lib.sh"

OC_N=${OC_N:-200}

# oc_body ID ROUTE [extra]: a task file body
oc_body() {
	printf '{"requestId":"%s","taskCode":"probe","route":"%s","executeParams":{"sleep_ms":%d}%s}' \
	    "$1" "$2" $(( ${#1} % 5 * 20 )) "${3:-}"
}

# oc_stage PREFIX N: write copies of PREFIX-0001..N into tmp/oc.<dir>/
# (incoming, qb, qc; every fourth id also dl, a delayed/ copy whose due
# time oc_place sets to 8 s after the placement starts, so that it is not
# promoted over a copy still being moved, however long the staging took)
# and list the ids in $TRASH/PREFIX.ids.
oc_stage() {
	for d in in qb qc dl dup; do mkdir -p "$SPOOL/tmp/oc.$d"; done
	: >"$TRASH/$1.ids"
	i=1
	while [ $i -le "$2" ]; do
		id=$(printf '%s-%04d' "$1" $i)
		echo "$id" >>"$TRASH/$1.ids"
		oc_body "$id" any >"$SPOOL/tmp/oc.in/$id.json"
		oc_body "$id" node:b >"$SPOOL/tmp/oc.qb/$id.json"
		oc_body "$id" node:c >"$SPOOL/tmp/oc.qc/$id.json"
		[ $((i % 4)) = 0 ] &&
		    oc_body "$id" any ",\"notBefore\":\"@DUE@\"" \
		    >"$SPOOL/tmp/oc.dl/$id.json"
		i=$((i + 1))
	done
}

# oc_place: move the staged copies into place at once, one mover per
# directory, all in parallel.
oc_place() {
	mkdir -p "$SPOOL/queue/b" "$SPOOL/queue/c"
	# the delayed/ copies: due 8 s from now (the mtime of a delayed/
	# file is its due time)
	_oc_due=$(( $(date +%s) + 8 ))
	if [ -n "$(ls "$SPOOL/tmp/oc.dl")" ]; then
		sed -i "s/@DUE@/$(date -u -d @$_oc_due +%Y-%m-%dT%H:%M:%SZ)/" "$SPOOL"/tmp/oc.dl/*.json &&
		    touch -d @$_oc_due "$SPOOL"/tmp/oc.dl/*.json || return 1
	fi
	_oc_pids=""
	for _oc_d in in:incoming qb:queue/b qc:queue/c dl:delayed; do
		# -n: renameat2(RENAME_NOREPLACE), so a copy a daemon moved
		# there first (a promotion, a route) is never replaced: the
		# copy not placed stays in tmp/ and oc_copies leaves it out
		( cd "$SPOOL/tmp/oc.${_oc_d%%:*}" &&
		    find . -name "*.json" | xargs -r mv -n -t "$SPOOL/${_oc_d#*:}" ) &
		_oc_pids="$_oc_pids $!"
	done
	# (a bare wait would wait for the daemons too).  mv may complain
	# about a file a daemon moved on at once; what was placed is counted
	# by oc_copies.
	wait $_oc_pids
	return 0
}

# oc_settled PREFIX [SECONDS]: nothing of PREFIX left pending or running
oc_settled() {
	wait_for "test -z \"\$(find $SPOOL/incoming $SPOOL/delayed $SPOOL/queue $SPOOL/active -name \"$1-*\" | head -1)\"" "${2:-90}"
}

# oc_once PREFIX: every id of PREFIX started exactly once and is in done/
# with its result; every copy is accounted for: in done/ or in corrupt/
# with a reason saying "duplicate"; no claim marker left.
oc_once() {
	grep "^START $1-" "$SPOOL/probe.log" | awk '{ print $2 }' | sort | uniq -c |
	    awk '$1 != 1 { print "started " $1 " times: " $2; bad = 1 } END { exit bad }' &&
	grep "^START $1-" "$SPOOL/probe.log" | awk '{ print $2 }' | sort -u | diff "$TRASH/$1.ids" - &&
	ls "$SPOOL/done" | grep "^$1-" | sed 's/\.json$//' | diff "$TRASH/$1.ids" - &&
	ls "$SPOOL/results" | grep "^$1-" | sed 's/\.json$//' | diff "$TRASH/$1.ids" - &&
	for f in $(ls "$SPOOL/corrupt" | grep "^$1-.*\.reason\$"); do
		grep -q "duplicate" "$SPOOL/corrupt/$f" || { echo "$f: $(cat "$SPOOL/corrupt/$f")"; return 1; }
	done &&
	test -z "$(ls "$SPOOL/state/claims")"
}

# oc_copies PREFIX: copies placed (staged, less those mv -n left in
# tmp/) = in done/ + in corrupt/
oc_copies() {
	left=$(find "$SPOOL"/tmp/oc.in "$SPOOL"/tmp/oc.qb "$SPOOL"/tmp/oc.qc \
	    "$SPOOL"/tmp/oc.dl -name "$1-*.json" | wc -l)
	[ "$left" = 0 ] || echo "# $left copies not placed (a daemon moved one there first)"
	placed=$(( $(wc -l <"$TRASH/$1.ids") * 3 + $(wc -l <"$TRASH/$1.ids") / 4 - left ))
	got=$(( $(ls "$SPOOL/done" | grep -c "^$1-") + $(ls "$SPOOL/corrupt" | grep "^$1-" | grep -vc "\.reason\$") ))
	echo "copies placed $placed, in done/ or corrupt/ $got"
	test "$placed" = "$got"
}

test_expect_success 'three daemons' '
	: >"$TRASH/fl.kills" &&
	start_daemon a -j 4 && start_daemon b -j 4 && start_daemon c -j 4
'

test_expect_success "$OC_N ids x 3 copies (incoming/, queue/b/, queue/c/) and every fourth in delayed/ (due 8 s after staging), placed at once" '
	oc_stage oc1 $OC_N &&
	oc_place &&
	oc_settled oc1 &&
	oc_once oc1 && oc_copies oc1
'

test_expect_success "the same with the daemons stopped, then all three started together on the backlog" '
	stop_daemon a && stop_daemon b && stop_daemon c &&
	oc_stage oc2 $OC_N &&
	oc_place &&
	start_daemon a -j 4 && start_daemon b -j 4 && start_daemon c -j 4 &&
	oc_settled oc2 &&
	oc_once oc2 && oc_copies oc2
'

test_expect_success "50 ids dropped into incoming/ twice at once (two writers racing)" '
	: >"$TRASH/oc3.ids" &&
	i=1 && while [ $i -le 50 ]; do
		id=$(printf "oc3-%04d" $i) && echo "$id" >>"$TRASH/oc3.ids" &&
		oc_body "$id" any >"$SPOOL/tmp/oc.in/$id.json" &&
		oc_body "$id" any >"$SPOOL/tmp/oc.dup/$id.json" &&
		i=$((i + 1))
	done &&
	{ ( cd "$SPOOL/tmp/oc.in" && for f in oc3-*; do mv "$f" "$SPOOL/incoming/"; done ) & p1=$!
	  ( cd "$SPOOL/tmp/oc.dup" && for f in oc3-*; do mv "$f" "$SPOOL/incoming/"; done ) & p2=$!
	  wait $p1 $p2; } &&
	oc_settled oc3 && oc_once oc3
'

test_expect_success "$OC_N ids x 3 copies with kill -9 of b twice during the claims: each id in done/ once, no two runs of an id at once" '
	oc_stage oc4 $OC_N &&
	oc_place &&
	sleep 0.3 && fl_kill b && start_daemon b -j 4 &&
	sleep 0.5 && fl_kill b && start_daemon b -j 4 &&
	oc_settled oc4 120 &&
	ls "$SPOOL/done" | grep "^oc4-" | sed "s/\.json\$//" | diff "$TRASH/oc4.ids" - &&
	ls "$SPOOL/results" | grep "^oc4-" | sed "s/\.json\$//" | diff "$TRASH/oc4.ids" - &&
	# an id runs again only because the kill lost an attempt (its hook
	# killed, or its result not yet durable: at-least-once); the copy
	# that runs it again may be its retry or another copy, so attempt
	# numbers may repeat, but never two at once, and only a few ids
	# (b has 4 slots and a group commit in flight at each kill)
	grep "^START oc4-" "$SPOOL/probe.log" | awk "{ print \$2 }" | sort | uniq -d >"$TRASH/oc4.again" &&
	echo "ids run again after a kill: $(wc -l <"$TRASH/oc4.again")" && cat "$TRASH/oc4.again" &&
	test "$(wc -l <"$TRASH/oc4.again")" -le 24 &&
	fl_runs oc4- >"$TRASH/oc4.runs" && fl_disjoint "$TRASH/oc4.runs" each &&
	echo "$(wc -l <"$TRASH/oc4.runs") attempts for $(wc -l <"$TRASH/oc4.ids") ids" &&
	# a marker of a claim the kill interrupted may be left (the leader
	# removes it when a minute old), but none is held
	for m in $(ls "$SPOOL/state/claims"); do
		echo "left by a killed claimant: $m: $(cat "$SPOOL/state/claims/$m")" &&
		flock -n -x "$SPOOL/state/claims/$m" true || return 1
	done
'

test_expect_success 'a marker left by a claimant that died mid-claim is taken over: the task runs once' '
	printf "node=gone pid=1 at_ms=1\n" >"$SPOOL/state/claims/oc5-dead" &&
	drop oc5-dead.json "$(oc_body oc5-dead any)" &&
	wait_terminal oc5-dead 20 &&
	test "$(state_of oc5-dead)" = done &&
	test "$(grep -c "^START oc5-dead " "$SPOOL/probe.log")" = 1 &&
	grep -q "oc5-dead: claim marker left by a claimant that died mid-claim (node=gone pid=1 at_ms=1) taken over" "$TRASH"/log.* &&
	test ! -e "$SPOOL/state/claims/oc5-dead"
'

test_expect_success 'a marker held by a live claimant holds the copy back until it is released' '
	: >"$SPOOL/state/claims/oc6-held" &&
	{ flock -x "$SPOOL/state/claims/oc6-held" sleep 3 & } && fpid=$! &&
	sleep 0.3 &&
	drop oc6-held.json "$(oc_body oc6-held any)" &&
	sleep 2 &&
	test "$(state_of oc6-held)" = incoming &&
	! grep -q "^START oc6-held " "$SPOOL/probe.log" &&
	wait $fpid &&
	wait_terminal oc6-held 20 &&
	test "$(state_of oc6-held)" = done &&
	test "$(grep -c "^START oc6-held " "$SPOOL/probe.log")" = 1
'

test_expect_success 'cancel with a second copy waiting in delayed/: one task cancelled, the copy a duplicate, one result' '
	drop oc7.json "{\"requestId\":\"oc7\",\"taskCode\":\"probe\",\"executeParams\":{\"sleep_ms\":5000}}" &&
	wait_for "grep -q \"^START oc7 \" $SPOOL/probe.log" 10 &&
	printf "{\"requestId\":\"oc7\",\"taskCode\":\"probe\",\"notBefore\":\"%s\"}" \
	    "$(date -u -d @$(( $(date +%s) + 30 )) +%Y-%m-%dT%H:%M:%SZ)" >"$SPOOL/tmp/oc7" &&
	touch -d @$(( $(date +%s) + 30 )) "$SPOOL/tmp/oc7" &&
	mv "$SPOOL/tmp/oc7" "$SPOOL/delayed/oc7.json" &&
	{ ts cancel oc7 >/dev/null 2>&1 || :; } &&
	wait_for "test ! -e $SPOOL/delayed/oc7.json && test -e $SPOOL/cancelled/oc7.json" 20 &&
	test "$(jq -r .status "$SPOOL/results/oc7.json")" = CANCELLED &&
	test "$(jq -r ".attempts | length" "$SPOOL/results/oc7.json")" = 1 &&
	test "$(ls "$SPOOL/done" "$SPOOL/failed" "$SPOOL/cancelled" | grep -c "^oc7\.json\$")" = 1 &&
	grep -q "duplicate" "$SPOOL/corrupt/oc7.json.reason" &&
	test "$(grep -c "^START oc7 " "$SPOOL/probe.log")" = 1
'
