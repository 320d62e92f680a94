#!/bin/sh
# Draining a node without stopping it (issue 14 item 4; Slurm's
# `scontrol update nodename=N state=drain reason=...`), in embedded mode
# (file heartbeats) and then in cluster mode (Redis heartbeats):
#  - `taskspool nodes drain N --reason R` returns once N confirms; N's
#    running hook finishes there (SUCCESS), N claims nothing new: every
#    task submitted meanwhile runs on the other node; `nodes` shows N
#    "draining" then "drained" with the reason, `--json` .drain.reason,
#    status's NODES line names it, taskspool_node_drained{node=N} is 1;
#  - a round_robin task while N is drained is never routed to N; a task
#    put into queue/N/ goes back to incoming/ and runs on the other node;
#  - `resume` → N claims again; the only node drained → a task waits in
#    incoming/ (pending, not corrupt) and runs once after `resume`;
#  - a damaged marker drains, with a reason saying it is damaged;
#  - an unknown node is refused (68) unless --force, and a node drained
#    while it is not running starts drained; a reason with a control
#    byte is refused (64).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

cat >"$HOOKS/hold" <<H
#!/bin/sh
# Runs until \$TRASH/go.<id> appears (at most 30 s).
touch "$TRASH/started.\$TASKSPOOL_REQUEST_ID"
i=0
while [ ! -e "$TRASH/go.\$TASKSPOOL_REQUEST_ID" ] && [ \$i -lt 300 ]; do
	sleep 0.1; i=\$((i + 1))
done
H
chmod +x "$HOOKS/hold"

# ran_on ID: the node of the task's last attempt.
ran_on() { jq -r '.attempts[-1].node' "$SPOOL/results/$1.json"; }
# running_on ID: the node whose active/ holds the task ("" when none).
running_on() {
	for _d in "$SPOOL"/active/*/; do
		if [ -e "$_d$1.json" ]; then basename "$_d"; fi
	done
}

phase() {	# phase M: the scenario with prefix M (e embedded, c cluster)
M=$1

test_expect_success "$M: drain the node running a hook; it finishes there, nothing new is claimed" '
	start_daemon ${M}1 -j 2 && start_daemon ${M}2 -j 2 &&
	ts submit --code hold --id $M-h1 >/dev/null &&
	wait_for "test -e \"$TRASH/started.$M-h1\"" &&
	D=$(running_on $M-h1) && O=${M}1 && { [ "$D" != ${M}1 ] || O=${M}2; } &&
	echo "$D $O" >"$TRASH/$M.pair" &&
	ts nodes drain "$D" --reason "kernel update" >"$TRASH/$M.drain.out" &&
	grep -q "node $D drained: it claims nothing new" "$TRASH/$M.drain.out" &&
	ts nodes >"$TRASH/$M.nodes" && cat "$TRASH/$M.nodes" &&
	grep -q "^$D draining .* 1/2.*(drain: kernel update)$" "$TRASH/$M.nodes" &&
	grep -q "^$O alive " "$TRASH/$M.nodes" &&
	test "$(ts nodes --json | jq -r ".[] | select(.node == \"$D\") | .drain.reason")" = "kernel update" &&
	ts nodes drain "$D" | grep -q "node $D is already drained (since .*: kernel update)" &&
	test "$(ts nodes --json | jq -r ".[] | select(.node == \"$D\") | .drain.reason")" = "kernel update" &&
	for i in 1 2 3 4 5 6 7 8; do ts submit --code probe --id $M-p$i >/dev/null || return 1; done &&
	for i in 1 2 3 4 5 6 7 8; do wait_terminal $M-p$i || return 1; done &&
	for i in 1 2 3 4 5 6 7 8; do test "$(ran_on $M-p$i)" = "$O" || { echo "$M-p$i on $(ran_on $M-p$i)"; return 1; }; done &&
	touch "$TRASH/go.$M-h1" && wait_terminal $M-h1 &&
	test "$(jq -r .status "$SPOOL/results/$M-h1.json")" = SUCCESS &&
	test "$(ran_on $M-h1)" = "$D" &&
	wait_for "ts nodes | grep -q \"^$D drained \"" &&
	grep -q "drained by an operator (reason: kernel update)" "$TRASH/log.$D" &&
	wait_for "grep -q \"^taskspool_node_drained{node=\\\"$D\\\"} 1\$\" \"$SPOOL/metrics/$D.prom\"" &&
	grep -q "^taskspool_node_drained{node=\"$O\"} 0$" "$SPOOL/metrics/$O.prom" &&
	ts status | grep -q "^NODES .*drained: $D"
'

test_expect_success "$M: routed tasks avoid the drained node; its queue goes elsewhere" '
	read D O <"$TRASH/$M.pair" &&
	for i in 1 2 3 4; do
		drop "$M-rr$i.json" "{\"requestId\":\"$M-rr$i\",\"taskCode\":\"probe\",\"route\":\"round_robin\"}" || return 1
	done &&
	mkdir -p "$SPOOL/queue/$D" &&
	printf "{\"requestId\":\"$M-q1\",\"taskCode\":\"probe\"}" >"$SPOOL/tmp/q1" &&
	mv "$SPOOL/tmp/q1" "$SPOOL/queue/$D/$M-q1.json" &&
	for id in $M-rr1 $M-rr2 $M-rr3 $M-rr4 $M-q1; do
		wait_terminal $id 20 && test "$(ran_on $id)" = "$O" || { echo "$id: $(state_of $id) $(ran_on $id 2>/dev/null)"; return 1; }
	done &&
	test -z "$(ls -A "$SPOOL/queue/$D")" &&
	test -z "$(ls -A "$SPOOL/corrupt")"
'

test_expect_success "$M: resume; the only node drained keeps its tasks pending" '
	read D O <"$TRASH/$M.pair" &&
	ts nodes resume "$D" | grep -q "node $D resumed: it claims again" &&
	grep -q "resumed: claiming again" "$TRASH/log.$D" &&
	stop_daemon "$O" &&
	ts submit --code probe --id $M-r1 >/dev/null && wait_terminal $M-r1 &&
	test "$(ran_on $M-r1)" = "$D" &&
	ts nodes drain "$D" >/dev/null &&
	ts submit --code probe --id $M-w1 >/dev/null && sleep 2 &&
	test -e "$SPOOL/incoming/$M-w1.json" && test -z "$(ls -A "$SPOOL/corrupt")" &&
	ts nodes resume "$D" >/dev/null && wait_terminal $M-w1 &&
	test "$(jq -r ".status, (.attempts | length)" "$SPOOL/results/$M-w1.json" | tr "\n" " ")" = "SUCCESS 1 "
'

test_expect_success "$M: a damaged marker drains, saying so; a symbolic link too" '
	read D O <"$TRASH/$M.pair" &&
	printf "{\"node\": \"$D\", \"since\": 5" >"$SPOOL/state/drain/$D.json" &&
	wait_for "ts nodes | grep -q \"^$D drained \"" &&
	grep -q "drained by an operator (reason: the drain marker state/drain/$D.json is damaged (json: invalid JSON" "$TRASH/log.$D" &&
	ts nodes resume "$D" >/dev/null &&
	ts nodes | grep -q "^$D alive " &&
	ln -s /etc/passwd "$SPOOL/state/drain/$D.json" &&
	wait_for "ts nodes | grep -q \"^$D drained .*is damaged (a symbolic link)\"" &&
	ts nodes resume "$D" >/dev/null && test ! -L "$SPOOL/state/drain/$D.json" &&
	ts nodes | grep -q "^$D alive "
'

test_expect_success "$M: unknown node refused unless --force (resume too: 68); it then starts drained; bad reason 64" '
	rc=0 && ts nodes drain ${M}9 2>"$TRASH/$M.err" || rc=$? &&
	test $rc = 68 && grep -q "no node ${M}9 in the registry" "$TRASH/$M.err" &&
	ts nodes drain ${M}9 --force --reason later | grep -q "node ${M}9 drained: it is not running; it starts so" &&
	start_daemon ${M}9 &&
	grep -q "drained by an operator (reason: later)" "$TRASH/log.${M}9" &&
	wait_for "ts nodes | grep -q \"^${M}9 drained \"" &&
	ts nodes resume ${M}9 >/dev/null &&
	rc=0 && ts nodes resume ${M}nosuch 2>"$TRASH/$M.err" || rc=$? &&
	test $rc = 68 && grep -q "no node ${M}nosuch in the registry and no drain marker" "$TRASH/$M.err" &&
	rc=0 && ts nodes drain ${M}9 --reason "$(printf "a\\033b")" 2>"$TRASH/$M.err" || rc=$? &&
	test $rc = 64 && grep -q "without control characters" "$TRASH/$M.err" &&
	read D O <"$TRASH/$M.pair" && stop_daemon ${M}9 && stop_daemon "$D"
'
}

phase e
redis_setup
phase c

test_done
