# runs-lib.sh — sourced by forbid-lib.sh and onecopy-lib.sh: kill -9 of a
# daemon with its time logged, and the run intervals of tasks from
# probe.log (START/END; an attempt killed with its daemon ends at that
# kill) with the check that none overlap.

# fl_now_ns: wall clock, ns (the probe's clock).
fl_now_ns() { date +%s%N; }

# fl_kill NODE: kill -9 the daemon of NODE, wait until it is dead (its
# hooks then got SIGKILL through PR_SET_PDEATHSIG) and append
# "<ns after> <node>" to $TRASH/fl.kills.
fl_kill() {
	_fl_pid=$(daemon_pid "$1")
	kill -9 "$_fl_pid" 2>/dev/null
	while [ -r "/proc/$_fl_pid/stat" ] &&
	    [ "$(cut -d" " -f3 "/proc/$_fl_pid/stat" 2>/dev/null)" != Z ]; do
		sleep 0.01
	done
	sleep 0.05
	echo "$(fl_now_ns) $1" >>"$TRASH/fl.kills"
}

# fl_runs P: "start end id attempt" (epoch ns) of every attempt of every
# task whose requestId starts with P, sorted by start.  An attempt without
# END ends at the first kill of its node (results/ names each attempt's
# node) after its START; one with neither prints end "open".
fl_runs() {
	(cd "$SPOOL/results" && ls | grep -F "$1" | xargs -r jq -r \
	    '.requestId as $i | .attempts[] | "NODE \($i) \(.attempt) \(.node)"') >"$TRASH/fl.nodes"
	cat "$TRASH/fl.nodes" "$SPOOL/probe.log" | sed 's/^/X /' |
	    cat "$TRASH/fl.kills" - | awk -v j="$1" '
		$1 != "X" { nk++; kt[nk] = $1 + 0; kn[nk] = $2; next }
		$2 == "NODE" { nd[$3 " " $4] = $5; next }
		index($3, j) != 1 { next }
		$2 == "START" { s[$3 " " $4] = $5 + 0; next }
		$2 == "END" { e[$3 " " $4] = $5 + 0; next }
		END {
			for (k in s) {
				if (k in e) end = e[k]
				else {
					end = "open"
					for (i = 1; i <= nk; i++)
						if (kn[i] == nd[k] && kt[i] > s[k] &&
						    (end == "open" || kt[i] < end))
							end = kt[i]
				}
				print s[k], end, k
			}
		}' | sort -n
}

# fl_disjoint FILE [each]: the runs of FILE (fl_runs) never overlap, none
# open; with "each", runs of one requestId never overlap (runs of
# different ids may).
fl_disjoint() {
	awk -v each="${2:-}" '$2 == "open" { print "no end known: " $0; bad = 1; next }
	    { g = each != "" ? $3 : "" }
	    (g in pe) && $1 <= pe[g] { print "overlap: " $3 " attempt " $4 " starts before " pid[g] " ended"; bad = 1 }
	    { if (!(g in pe) || $2 > pe[g]) { pe[g] = $2; pid[g] = $3 " attempt " $4 } } END { exit bad }' "$1"
}

