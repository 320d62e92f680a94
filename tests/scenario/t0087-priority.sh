#!/bin/sh
# Priorities with aging (issue 15 item 1; README.md "Priorities"), in
# embedded mode and then in cluster mode (Redis leases), one daemon with
# one slot so the order of hook starts is the claim order:
#  - with the slot busy, 1,000 priority-5 tasks queued, then one
#    priority-9 task: the 9 is the next task started when the slot frees
#    (priority_aging_sec = 600: nobody climbs during the test);
#  - a priority-0 task behind a constant stream of priority-9 ones
#    (one every 0.1 s, each hook 0.2 s: the 9s never run out) with
#    priority_aging_sec = 1: it climbs to 9 after 9 s, when it is older
#    than every 9 still waiting, so it starts within the aging bound
#    9 * 1 s plus the hook ahead of it (asserted: under 12 s), and after
#    at least one 9 submitted later than it (priority did order them);
#  - tasks that waited for a maxConcurrent slot keep their priority: with
#    max_concurrent lim=1 taken by a gate, priorities 1, 5 and 9 queued
#    in that (name and mtime) order all wait WAITING, and start 9, 5, 1
#    as the slot frees (once they went back as priority 5 by name: 1
#    first);
#  - after the slot frees, priority-9 tasks waiting for it start before
#    priority-0 ones that kept arriving meanwhile (once the 0s that came
#    between a free and the next 100 ms poll took the slot).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

# rec: records "<id> <ns>" in $TRASH/order; a gate (id *-gate) waits for
# $TRASH/go.<id>; an id *-s* sleeps 0.2 s.
cat >"$HOOKS/rec" <<H
#!/bin/sh
echo "\$TASKSPOOL_REQUEST_ID \$(date +%s%N)" >>"$TRASH/order"
case \$TASKSPOOL_REQUEST_ID in
*-gate)	i=0
	while [ ! -e "$TRASH/go.\$TASKSPOOL_REQUEST_ID" ] && [ \$i -lt 600 ]; do
		sleep 0.1; i=\$((i + 1))
	done;;
*-s*)	sleep 0.2;;
esac
exit 0
H
chmod +x "$HOOKS/rec"
cp "$HOOKS/rec" "$HOOKS/lim"
echo "max_concurrent = lim=1" >>"$CONF"

# task ID PRIO: drop task ID of code rec with priority PRIO ("" none).
task() {
	drop "$1.json" "{\"requestId\":\"$1\",\"taskCode\":\"${3:-rec}\"${2:+,\"priority\":$2}}"
}

aging() { sed -i '/^priority_aging_sec/d' "$CONF" && echo "priority_aging_sec = $1" >>"$CONF"; }

phase() {	# phase M: the scenario with prefix M (e embedded, c cluster)
M=$1

test_expect_success "$M: 1 slot busy, 1,000 priority-5 queued, then a 9: the 9 starts next" '
	aging 600 && : >"$TRASH/order" &&
	start_daemon ${M}1 -j 1 &&
	task $M-gate "" &&
	wait_for "grep -q ^$M-gate \"\$TRASH/order\"" 10 &&
	i=0 && while [ $i -lt 1000 ]; do
		task $M-p5-$(printf %04d $i) 5 || return 1
		i=$((i + 1))
	done &&
	task $M-hi 9 &&
	sleep 1 && touch "$TRASH/go.$M-gate" &&
	wait_for "[ \$(wc -l <\"\$TRASH/order\") -ge 3 ]" 20 &&
	sed -n 2p "$TRASH/order" | grep -q "^$M-hi " &&
	sed -n 3p "$TRASH/order" | grep -q "^$M-p5-0000 " &&
	wait_for "[ \$(ls \"\$SPOOL/done\" | grep -c \"^$M-p5-\") -ge 1000 ]" 120 &&
	# the 5s kept their submit order (equal priority: mtime order,
	# names breaking ties of the coarse file times)
	sed -n "3,\$p" "$TRASH/order" | cut -d" " -f1 >"$TRASH/$M.got" &&
	i=0 && while [ $i -lt 1000 ]; do printf "%s-p5-%04d\n" $M $i; i=$((i + 1)); done >"$TRASH/$M.want" &&
	cmp "$TRASH/$M.want" "$TRASH/$M.got" &&
	stop_daemon ${M}1
'

test_expect_success "$M: a 0 behind a constant stream of 9s starts within the aging bound (aging 1 s)" '
	aging 1 && : >"$TRASH/order" && rm -f "$TRASH/stop" &&
	start_daemon ${M}1 -j 1 &&
	( i=0; while [ ! -e "$TRASH/stop" ] && [ $i -lt 400 ]; do
		task $M-s9-$(printf %04d $i) 9
		i=$((i + 1)); sleep 0.1
	done ) &
	feeder=$! &&
	sleep 1 &&
	t0=$(date +%s%N) &&
	task $M-s0-low 0 &&
	wait_for "grep -q ^$M-s0-low \"\$TRASH/order\"" 20 &&
	touch "$TRASH/stop" && wait $feeder &&
	t1=$(grep "^$M-s0-low " "$TRASH/order" | cut -d" " -f2) &&
	ms=$(( (t1 - t0) / 1000000 )) && echo "# low started after $ms ms" &&
	test $ms -lt 12000 &&
	# 9s ran before it, more than the ~10 submitted before it
	low_line=$(grep -n "^$M-s0-low " "$TRASH/order" | cut -d: -f1) &&
	before=$(head -n $((low_line - 1)) "$TRASH/order" | grep -c "^$M-s9-") &&
	echo "# $before priority-9 tasks started before it" &&
	test "$before" -gt 12 &&
	stop_daemon ${M}1 &&
	# the 9s not run yet must not run ahead of the next phase
	rm -f "$SPOOL"/incoming/$M-s9-*.json
'

test_expect_success "$M: tasks waiting for a maxConcurrent slot start by priority, 9 5 1" '
	aging 600 && : >"$TRASH/order" &&
	start_daemon ${M}1 -j 2 &&
	task $M-lim-gate "" lim &&
	wait_for "grep -q ^$M-lim-gate \"\$TRASH/order\"" 10 &&
	task $M-lim-s1 1 lim && sleep 0.05 &&
	task $M-lim-s5 5 lim && sleep 0.05 &&
	task $M-lim-s9 9 lim &&
	wait_for "[ -e \"\$SPOOL/state/waiting/$M-lim-s1\" ] && [ -e \"\$SPOOL/state/waiting/$M-lim-s5\" ] && [ -e \"\$SPOOL/state/waiting/$M-lim-s9\" ]" 10 &&
	"$BUILD/taskspool" -c "$CONF" status $M-lim-s1 | grep -q WAITING &&
	sleep 0.5 && touch "$TRASH/go.$M-lim-gate" &&
	wait_for "[ \$(grep -c ^$M-lim- \"\$TRASH/order\") -ge 4 ]" 20 &&
	grep ^$M-lim- "$TRASH/order" | cut -d" " -f1 >"$TRASH/$M.lim" &&
	printf "%s\n" $M-lim-gate $M-lim-s9 $M-lim-s5 $M-lim-s1 >"$TRASH/$M.limwant" &&
	cmp "$TRASH/$M.limwant" "$TRASH/$M.lim" &&
	stop_daemon ${M}1
'

test_expect_success "$M: after a slot frees, waiting 9s go before 0s that keep arriving" '
	aging 600 && : >"$TRASH/order" &&
	start_daemon ${M}1 -j 4 &&
	task $M-z-first 5 lim &&
	wait_for "grep -q ^$M-z-first \"\$TRASH/order\"" 10 &&
	for i in 1 2 3 4 5; do task $M-z-hi$i-s 9 lim || return 1; done &&
	i=0 && while [ $i -lt 60 ]; do
		task $M-z-lo$(printf %03d $i)-s 0 lim || return 1
		i=$((i + 1)); sleep 0.02
	done &&
	touch "$TRASH/go.$M-z-first" &&
	wait_for "[ \$(grep -c ^$M-z- \"\$TRASH/order\") -ge 8 ]" 30 &&
	grep ^$M-z- "$TRASH/order" | sed -n 2,6p | cut -d" " -f1 | sed "s/^$M-z-//" | tr "\n" " " >"$TRASH/$M.z" &&
	echo "# starts 2-6: $(cat "$TRASH/$M.z")" &&
	test "$(cat "$TRASH/$M.z")" = "hi1-s hi2-s hi3-s hi4-s hi5-s " &&
	stop_daemon ${M}1 &&
	rm -f "$SPOOL"/incoming/$M-z-*.json
'
}

phase e
redis_setup
phase c

test_done
