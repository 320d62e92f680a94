#!/bin/sh
# Install the Debian packages taskspool needs, if missing, for one purpose:
#
#   install-deps.sh build     a compiler and the -dev libraries: make all,
#                             make demo (no servers)
#   install-deps.sh demo-api  build, and lighttpd and curl: make demo-api
#   install-deps.sh [all]     everything make check, asan, fuzz and bench
#                             use: the above, Check, the servers the tests
#                             start (redis-server, mariadbd, lighttpd),
#                             promtool, faketime, clang, wrk, Node.js
#                             (the OpenAPI lint), the packaging tools ...
#   install-deps.sh --list SET  print SET's packages, one a line
#
# Runs as root, or through sudo when available.  Idempotent and quiet when
# everything is already present.  One variable per purpose below: a new
# package goes into the set of the purpose that needs it.
set -eu
build="build-essential pkg-config libjansson-dev libssl-dev
       libcurl4-openssl-dev libhiredis-dev libmariadb-dev libfcgi-dev tzdata"
demo_api="lighttpd curl openssl python3"
test="check libsubunit-dev jq procps prometheus mandoc tmux systemd logrotate
      python3 wrk mariadb-server mariadb-client redis-server faketime
      clang-14 libclang-rt-14-dev
      python3-yaml python3-jsonschema python3-venv python3-pip python3-mypy
      nodejs npm chromium"
# The Debian packages (make deb, tests/package/deb-test.sh): debian/control's
# Build-Depends and the tools that build and check them.
package="dpkg-dev debhelper fakeroot dh-python pybuild-plugin-pyproject
         python3-all python3-setuptools python3-wheel lintian bash-completion"

set_of() {
	case $1 in
	build) echo "$build" ;;
	demo-api) echo "$build $demo_api" ;;
	all) echo "$build $demo_api $test $package" ;;
	*) echo "install-deps: unknown set \"$1\" (build, demo-api, all)" >&2
	   exit 64 ;;
	esac
}

if [ "${1:-}" = --list ]; then
	set_of "${2:-all}" >/dev/null	# an unknown set exits here
	# shellcheck disable=SC2046
	printf '%s\n' $(set_of "${2:-all}")
	exit 0
fi
set_of "${1:-all}" >/dev/null
pkgs=$(set_of "${1:-all}")
missing=""
for p in $pkgs; do
	# A nodejs from elsewhere (NodeSource's) carries its own npm and
	# conflicts with Debian's: npm is needed only as a command.
	[ "$p" = npm ] && command -v npm >/dev/null 2>&1 && continue
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "install-deps: need root or sudo to install:$missing" >&2
		exit 69
	}
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
