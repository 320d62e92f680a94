#!/bin/sh
# Packaging and releases (issue 13 items 2 and 4), without root and
# without building a package (tests/package/deb-test.sh does that):
# daemon/core/version.sh's answer in a scratch tree — debian/changelog's
# version (its epoch dropped), `git describe --tags --dirty` when the tree
# is its own git checkout (a tag, commits after it, local changes), the
# changelog's version and the commit when no tag is reachable, never the
# tags of an enclosing repository, 0.0.0+unknown with neither, and a
# release that cannot be a C string or a label refused; the built
# programs say what version.sh says; the Makefile keeps the caller's
# CFLAGS/CPPFLAGS/LDFLAGS (dpkg-buildflags) and WERROR= drops -Werror;
# `make install` puts taskspool.cgi in CGIDIR and the bash completion in
# place; the completion of contrib/bash-completion/taskspool offers the
# commands of `taskspool --help`, the states of `list --help`, the
# subcommands of `jobs --help`, and from the spool the hooks, job codes
# and pending tasks.
. "$(dirname "$0")/test-lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# A scratch tree with version.sh and a changelog of version $1.
V="$TRASH/vt"
scratch() {
	rm -rf "$V" && mkdir -p "$V/daemon/core" "$V/debian" &&
	cp "$SRC/daemon/core/version.sh" "$V/daemon/core/" &&
	printf 'taskspool (%s) unstable; urgency=medium\n\n  * x\n\n -- A <a@b.example>  Mon, 30 Nov 2026 12:00:00 +0000\n' \
	    "$1" >"$V/debian/changelog"
}
ver() { env -u TASKSPOOL_VERSION sh "$V/daemon/core/version.sh" "$@"; }
g() { git -C "$V" -c user.name=t -c user.email=t@t.example -c init.defaultBranch=main "$@"; }

test_expect_success 'version.sh outside git: the changelog version, epoch dropped; else 0.0.0+unknown' '
	scratch 2.5.1 && test "$(ver)" = 2.5.1 &&
	scratch 1:2.5.1-3 && test "$(ver)" = 2.5.1-3 &&
	rm "$V/debian/changelog" && test "$(ver)" = 0.0.0+unknown
'

test_expect_success 'version.sh in a git checkout: describe --tags --dirty, v dropped' '
	command -v git >/dev/null || { echo "no git"; return 1; }
	scratch 2.5.1 && g init -q && g add . && g commit -qm one &&
	h=$(g rev-parse --short HEAD) &&
	test "$(ver)" = "2.5.1+g$h" &&
	echo "# local change" >>"$V/daemon/core/version.sh" &&
	test "$(ver)" = "2.5.1+g$h.dirty" &&
	g commit -qam two && g tag v2.6.0 &&
	test "$(ver)" = 2.6.0 &&
	echo x >"$V/f" && g add f && g commit -qm three &&
	h=$(g rev-parse --short HEAD) &&
	test "$(ver)" = "2.6.0-1-g$h" &&
	echo y >"$V/f" && test "$(ver)" = "2.6.0-1-g$h-dirty"
'

test_expect_success 'version.sh in a tree inside another checkout: not that one'"'"'s tags' '
	outer="$TRASH/outer" && rm -rf "$outer" && mkdir -p "$outer" &&
	git -C "$outer" -c init.defaultBranch=main init -q &&
	git -C "$outer" -c user.name=t -c user.email=t@t.example commit -q --allow-empty -m o &&
	git -C "$outer" tag v9.9.9 &&
	scratch 2.5.1 && mv "$V" "$outer/vt" &&
	test "$(env -u TASKSPOOL_VERSION sh "$outer/vt/daemon/core/version.sh")" = 2.5.1
'

test_expect_success 'version.sh: TASKSPOOL_VERSION names it; a bad one exits 65; the C file' '
	scratch 2.5.1 &&
	test "$(TASKSPOOL_VERSION=0.13.0~rc1 sh "$V/daemon/core/version.sh")" = 0.13.0~rc1 &&
	{ TASKSPOOL_VERSION="1.0\"x" sh "$V/daemon/core/version.sh"; test $? = 65; } &&
	{ TASKSPOOL_VERSION="1 0" sh "$V/daemon/core/version.sh"; test $? = 65; } &&
	long=$(printf "%065d" 0) &&
	{ TASKSPOOL_VERSION=$long sh "$V/daemon/core/version.sh"; test $? = 65; } &&
	ver c | grep -qx "const char taskspool_version\[\] = \"2.5.1\";"
'

test_expect_success 'the built programs print what version.sh says for this tree' '
	v=$(env -u TASKSPOOL_VERSION sh "$SRC/daemon/core/version.sh") &&
	test "$("$TS" --version)" = "taskspool $v" &&
	test "$("$TS" -V)" = "taskspool $v" &&
	test "$("$TSD" -V)" = "taskspoold $v" &&
	test "$("$BUILD/taskspool.fcgi" --version)" = "taskspool.fcgi $v"
'

test_expect_success 'the Makefile keeps the environment'"'"'s CFLAGS, CPPFLAGS, LDFLAGS; WERROR= drops -Werror' '
	# The plain build, whatever make runs this script (make asan
	# passes SAN= to its children through MAKEFLAGS).
	unset MAKEFLAGS MFLAGS MAKELEVEL &&
	CFLAGS="-O1 -fmarker-c" CPPFLAGS="-D_FORTIFY_SOURCE=3" \
	    LDFLAGS="-Wl,-z,now" make -s -n -B -C "$SRC" BUILD="$TRASH/mb" \
	    SAN= WERROR= progs >"$TRASH/mk" 2>&1 &&
	grep " -c -o $TRASH/mb/obj/core/task.o" "$TRASH/mk" >"$TRASH/cc" &&
	grep -q -- "-O1 -fmarker-c" "$TRASH/cc" &&
	grep -q -- "-D_FORTIFY_SOURCE=3" "$TRASH/cc" &&
	! grep -q -- "-D_FORTIFY_SOURCE=2" "$TRASH/cc" &&
	! grep -q -- "-Werror\( \|$\)" "$TRASH/cc" &&
	grep -- "-o $TRASH/mb/taskspoold " "$TRASH/mk" | grep -q -- "-Wl,-z,now" &&
	make -s -n -B -C "$SRC" BUILD="$TRASH/mb" SAN= progs >"$TRASH/mk2" 2>&1 &&
	grep " -c -o $TRASH/mb/obj/core/task.o" "$TRASH/mk2" | grep -q -- "-Werror " &&
	grep " -c -o $TRASH/mb/obj/core/task.o" "$TRASH/mk2" | grep -q -- "-D_FORTIFY_SOURCE=2"
'

INST="$TRASH/inst"
test_expect_success 'make install: taskspool.cgi in CGIDIR, the bash completion; uninstall removes them' '
	make -s -C "$SRC" install BUILD="$BUILD" DESTDIR="$INST" PREFIX=/usr \
	    CGIDIR=/usr/lib/cgi-bin >"$TRASH/install.out" 2>&1 ||
	    { cat "$TRASH/install.out"; return 1; } &&
	test -x "$INST/usr/lib/cgi-bin/taskspool.cgi" &&
	cmp "$SRC/contrib/bash-completion/taskspool" \
	    "$INST/usr/share/bash-completion/completions/taskspool" &&
	make -s -C "$SRC" uninstall BUILD="$BUILD" DESTDIR="$INST" PREFIX=/usr \
	    CGIDIR=/usr/lib/cgi-bin >/dev/null 2>&1 &&
	test ! -e "$INST/usr/lib/cgi-bin/taskspool.cgi" &&
	test ! -e "$INST/usr/share/bash-completion/completions/taskspool"
'

# bash-completion is in tests/install-deps.sh (make deps).
BC=/usr/share/bash-completion/bash_completion
# comp LINE: what completing LINE (ending where the cursor is) offers,
# one per line, sorted.
comp() {
	PATH="$BUILD:$PATH" bash -c '
		. "$1" && . "$2" || exit 1
		COMP_LINE=$3 COMP_POINT=${#3}
		read -ra COMP_WORDS <<<"$3"
		[[ $3 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_taskspool taskspool "${COMP_WORDS[COMP_CWORD]}" \
		    "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' \
	    comp "$BC" "$SRC/contrib/bash-completion/taskspool" "$1"
}

test_expect_success 'completion: the commands of taskspool --help, a prefix, global options' '
	test -f "$BC" || { echo "no $BC: install bash-completion (make deps)"; return 1; }
	"$TS" --help | sed -n "/^commands:/,/^\$/p" |
	    sed -n "s/^  \([a-z][a-z-]*\) .*/\1/p" | sort -u >"$TRASH/cmds" &&
	test "$(wc -l <"$TRASH/cmds")" -ge 19 &&
	comp "taskspool " >"$TRASH/got" && cmp "$TRASH/cmds" "$TRASH/got" &&
	test "$(comp "taskspool li")" = list &&
	comp "taskspool --v" | grep -qx -- --version
'

test_expect_success 'completion: list --state offers the states of list --help; jobs the subcommands of jobs --help' '
	"$TS" list --help | tr "[]| " "\n\n\n\n" | grep -x "[A-Z][A-Z][A-Z]*" | sort >"$TRASH/states" &&
	test "$(wc -l <"$TRASH/states")" = 10 &&
	comp "taskspool list --state " >"$TRASH/got" && cmp "$TRASH/states" "$TRASH/got" &&
	"$TS" jobs --help | sed -n "s/^\(usage:\)\{0,1\} *taskspool jobs \([a-z-]*\).*/\2/p" |
	    sort -u >"$TRASH/subs" &&
	test "$(wc -l <"$TRASH/subs")" = 7 &&
	comp "taskspool jobs " >"$TRASH/got" && cmp "$TRASH/subs" "$TRASH/got" &&
	comp "taskspool submit --wa" >"$TRASH/got" &&
	test "$(cat "$TRASH/got")" = "$(printf -- "--wait\n--wait-timeout")"
'

test_expect_success 'completion from the spool: hooks after --code, job codes, pending tasks for cancel and hold, held ones for release' '
	cp "$PROBE" "$HOOKS/zz-second" &&
	test "$(comp "taskspool -c $CONF submit --code ")" = "$(printf "probe\nzz-second")" &&
	printf "{\"jobCode\":\"nightly\",\"taskCode\":\"probe\",\"cron\":\"0 3 * * *\"}" >"$TRASH/j.json" &&
	ts jobs add "$TRASH/j.json" >/dev/null &&
	test "$(comp "taskspool -c $CONF jobs enable ")" = nightly &&
	test "$(comp "taskspool -c $CONF jobs list ")" = "" &&
	id=$(ts submit --code probe) &&
	test "$(comp "taskspool -c $CONF cancel ")" = "$id" &&
	test "$(comp "taskspool -c $CONF retry ")" = "" &&
	test "$(comp "taskspool -c $CONF hold ")" = "$id" &&
	test "$(comp "taskspool -c $CONF release ")" = "" &&
	ts hold "$id" >/dev/null &&
	test "$(comp "taskspool -c $CONF release ")" = "$id" &&
	test "$(comp "taskspool -c $CONF hold ")" = "" &&
	test "$(comp "taskspool -c $CONF release --a")" = "--all"
'
test_done
