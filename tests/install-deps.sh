#!/bin/sh
# Install the Debian packages taskspool needs to build and test, if missing.
# Runs as root, or through sudo when available.  Idempotent and quiet when
# everything is already present.
set -eu
pkgs="build-essential pkg-config libjansson-dev libssl-dev check libsubunit-dev
      libcurl4-openssl-dev libhiredis-dev libmariadb-dev jq procps tzdata
      prometheus mandoc tmux systemd logrotate
      lighttpd curl openssl python3 wrk libfcgi-dev
      mariadb-server mariadb-client redis-server faketime
      clang-14 libclang-rt-14-dev
      python3-yaml python3-jsonschema python3-venv python3-pip python3-mypy
      nodejs npm"
# The Debian packages (make deb, tests/package/deb-test.sh): debian/control's
# Build-Depends and the tools that build and check them.
pkgs="$pkgs dpkg-dev debhelper fakeroot dh-python pybuild-plugin-pyproject
      python3-all python3-setuptools python3-wheel lintian bash-completion"
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
