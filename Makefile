# taskspool — GNU make build.  See README.md for the two set-up commands.
#
#   make            build the programs into $(BUILD)/
#   make deps       install missing Debian packages (needs root or sudo):
#                   all of them (tests/install-deps.sh all)
#   make check      deps + build + unit tests (Check, and the replay of
#                   tests/fuzz/'s corpora) + scenario tests; about 20
#                   minutes on 2 cores, with its own redis-server,
#                   mariadbd and lighttpd on 127.0.0.1
#   make layers     check daemon/'s include graph against the folder
#                   rules of daemon/README.md, and the built objects'
#                   symbols against the headers (part of make check)
#   make asan       the same tests under AddressSanitizer + UBSan
#   make fuzz       build the libFuzzer targets of tests/fuzz/ with clang
#                   into build-fuzz/ and run each for FUZZ_SECONDS (60);
#                   `make unit` replays their corpora with $(CC)
#   make demo       run the example tasks on a fresh embedded spool in ./var/
#                   (installs only the build set: a compiler, -dev libraries)
#   make demo-api   the HTTP API on a free port of 127.0.0.1 under
#                   ./var/api/, without root (lighttpd + taskspool.cgi);
#                   prints a signed request to try; make demo-api-stop
#   make bench      throughput and latency numbers (asserts nothing)
#   make openapi-lint  lint contrib/openapi/openapi.yaml with @redocly/cli
#                   and compile the types openapi-typescript makes of it
#                   (npm ci into tests/openapi/; needs the npm registry)
#   make install    programs (taskspool.cgi and taskspool.fcgi too),
#                   manual pages, examples, systemd units, bash
#                   completion into $(DESTDIR)$(PREFIX) (PREFIX
#                   defaults to /usr/local)
#   make deb        the Debian packages taskspool, taskspool-api and
#                   python3-taskspool (dpkg-buildpackage on debian/),
#                   into $(BUILD)/deb/, checked with lintian
#   make deb-test   make deb, then install, use and purge the packages
#                   on this machine (root; tests/package/deb-test.sh)
#
# WERROR= builds without -Werror (debian/rules does: a package build must
# not fail on a new compiler's new warning); CFLAGS, CPPFLAGS and LDFLAGS
# from the environment come first and are kept (dpkg-buildflags' hardening
# flags, which dh exports).  TASKSPOOL_VERSION=X names the release
# (daemon/core/version.h; default: daemon/core/version.sh's answer, from
# git describe or debian/changelog).

BUILD    ?= build
CC       ?= cc
PKGS      = jansson libcrypto libcurl libmariadb hiredis
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

OPT      ?= -O2
SAN      ?=
WERROR   ?= -Werror
CFLAGS   ?=
CPPFLAGS ?=
CFLAGS   += -std=c11 -D_GNU_SOURCE -g $(OPT) $(SAN) \
	    -Wall -Wextra $(WERROR) -Wformat=2 -Wshadow -Wno-unused-parameter \
	    -fstack-protector-strong -Idaemon $(PKG_CFLAGS)
# Unless the caller's flags (dpkg-buildflags' CPPFLAGS) already choose one.
ifeq ($(SAN)$(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),)
CFLAGS   += -D_FORTIFY_SOURCE=2
endif
# The preprocessor's flags of the environment (dpkg-buildflags' CPPFLAGS:
# -D_FORTIFY_SOURCE) join the compiler's: every rule compiles with CFLAGS.
CFLAGS   += $(CPPFLAGS)
# clang's -Wformat=2 also flags a format passed on to vsnprintf (log.c).
ifneq ($(findstring clang,$(CC)),)
CFLAGS   += -Wno-format-nonliteral
endif
LDFLAGS  += $(SAN)
LDLIBS   += $(PKG_LIBS) -lpthread

# daemon/README.md maps the folders: one per layer or subsystem, the
# program mains in daemon/programs/.
MAINS    = $(wildcard daemon/programs/*.c)
LIB_SRCS = $(filter-out $(MAINS),$(wildcard daemon/*/*.c))
HDRS     = $(wildcard daemon/*/*.h)
LIB_OBJS = $(LIB_SRCS:daemon/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/migrations_gen.o \
	   $(BUILD)/obj/version_gen.o
MIGRATIONS = $(sort $(wildcard sql/migrations/*.sql))
PROGS    = $(BUILD)/taskspoold $(BUILD)/taskspool $(BUILD)/taskspool.cgi \
	   $(BUILD)/taskspool.fcgi
UNIT_SRCS = $(wildcard tests/unit/check_*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRCS = $(wildcard tests/tools/*.c)
TOOL_BINS = $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)
# The fuzz targets (tests/fuzz/README.md): each linked with replay.c for
# `make unit`, with libFuzzer for `make fuzz`.
FUZZ_SRCS = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES = $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_DEPS = tests/fuzz/harness.c tests/fuzz/harness.h
REPLAY_BINS = $(FUZZ_NAMES:%=$(BUILD)/fuzz/replay_%)

.PHONY: all progs deps deps-build deps-demo-api check layers unit scenario asan \
	demo demo-api demo-api-stop bench clean stress install uninstall fuzz \
	fuzz-targets deb deb-test openapi-lint FORCE
all: $(PROGS) $(TOOL_BINS)

# The four programs alone (what a package build needs).
progs: $(PROGS)

$(BUILD)/obj/%.o: daemon/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# The schema migrations, compiled in (records_mariadb.h: records_migrations[]).
$(BUILD)/gen/migrations_gen.c: sql/embed.sh $(MIGRATIONS)
	@mkdir -p $(@D)
	sh sql/embed.sh $(MIGRATIONS) >$@

$(BUILD)/obj/migrations_gen.o: $(BUILD)/gen/migrations_gen.c daemon/records/records_mariadb.h
	$(CC) $(CFLAGS) -c -o $@ $<

# The release (daemon/core/version.h), evaluated once per make run; the
# file is rewritten only when it changes, so only it is recompiled.
TASKSPOOL_VERSION ?= $(shell sh daemon/core/version.sh)
$(BUILD)/gen/version_gen.c: export TASKSPOOL_VERSION := $(TASKSPOOL_VERSION)
$(BUILD)/gen/version_gen.c: FORCE
	@mkdir -p $(@D)
	@sh daemon/core/version.sh c >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; \
	    echo "version: $(TASKSPOOL_VERSION)"; fi

$(BUILD)/obj/version_gen.o: $(BUILD)/gen/version_gen.c daemon/core/version.h
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libtaskspool.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/taskspoold: daemon/programs/taskspoold.c $(BUILD)/libtaskspool.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtaskspool.a $(LDLIBS)

# The CLI like the API programs (api_link below): --as-needed and
# libmariadb loaded with dlopen only by the commands that read records, so
# that a `taskspool submit` does not load and relocate libmariadb, libssl
# and libz (issue 16: start-up was most of a submit's CPU).
$(BUILD)/taskspool: daemon/programs/taskspool.c \
    $(BUILD)/obj/records_mariadb_dl.o $(BUILD)/libtaskspool.a
	$(call api_link,)

# The CGI links only what it needs from the library (no hook runner, no
# wheel: nothing it calls refers to them); libcurl, for curl_url(), is
# loaded with dlopen when a URL is checked (see daemon/callback/urlcheck.c).
# --as-needed: the CGI must not load libcurl (or libmariadb) on every
# request when it calls nothing of them.  It does load hiredis: in
# cluster mode a submission publishes a wake-up (daemon/coord/wakeup.c).
# libmariadb likewise (GET /api/tasks from MariaDB): the CGI links its own
# records_mariadb object built with -DTS_MYSQL_DL
# (daemon/records/mysql_dl.h), and
# the link fails if anything still makes libmariadb a dependency.
$(BUILD)/obj/records_mariadb_dl.o: daemon/records/records_mariadb.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DTS_MYSQL_DL -c -o $@ $<

# api_link(FLAGS): link an API program ($<) with FLAGS (extra -I and -l).
define api_link
	$(CC) $(CFLAGS) $(LDFLAGS) -Wl,--as-needed -o $@ $< \
	    $(BUILD)/obj/records_mariadb_dl.o $(BUILD)/libtaskspool.a \
	    $(1) $(LDLIBS) -ldl
	@if readelf -d $@ | grep -q 'NEEDED.*libmariadb'; then \
	    echo "$@ must not need libmariadb (see daemon/records/mysql_dl.h)"; \
	    rm -f $@; exit 1; fi
endef

$(BUILD)/taskspool.cgi: daemon/programs/taskspool-cgi.c \
    $(BUILD)/obj/records_mariadb_dl.o $(BUILD)/libtaskspool.a
	$(call api_link,)

# The FastCGI build of the same API (daemon/api/apiserve.h): the CGI's link
# rules, plus Debian's libfcgi (libfcgi-dev) for the protocol.
FCGI_FLAGS := $(shell pkg-config --cflags --libs fcgi 2>/dev/null || echo -lfcgi)
$(BUILD)/taskspool.fcgi: daemon/programs/taskspool-fcgi.c \
    $(BUILD)/obj/records_mariadb_dl.o $(BUILD)/libtaskspool.a
	$(call api_link,$(FCGI_FLAGS))

# Every unit test is linked with unit.c, the main() they share (unit.h).
UNIT_DEPS = tests/unit/unit.c tests/unit/unit.h tests/unit/apivectors.h
$(BUILD)/tests/%: tests/unit/%.c $(UNIT_DEPS) $(BUILD)/libtaskspool.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) -o $@ $< tests/unit/unit.c \
	    $(BUILD)/libtaskspool.a $(LDLIBS) $(CHECK_LIBS) -ldl

# A fuzz target with the replay main (any compiler; `make unit`).
$(BUILD)/fuzz/replay_%: tests/fuzz/%.c tests/fuzz/replay.c $(FUZZ_DEPS) \
    $(BUILD)/libtaskspool.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/fuzz $(LDFLAGS) -o $@ $< tests/fuzz/replay.c \
	    tests/fuzz/harness.c $(BUILD)/libtaskspool.a $(LDLIBS)

# The same target with libFuzzer's main (clang; `make fuzz`).
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DEPS) $(BUILD)/libtaskspool.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/fuzz $(LDFLAGS) -fsanitize=fuzzer -o $@ $< \
	    tests/fuzz/harness.c $(BUILD)/libtaskspool.a $(LDLIBS)

# Small helper programs used by scenario tests and the benchmark (static,
# so a hook built from them starts as fast as a process can).
$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Idaemon -o $@ $< \
	    $(if $(SAN),,-static)

deps:
	@sh tests/install-deps.sh all
deps-build:
	@sh tests/install-deps.sh build
deps-demo-api:
	@sh tests/install-deps.sh demo-api

openapi-lint:
	@sh tests/openapi/lint.sh

# Each replay of a fuzz target's corpus/ and regress/ counts as one test.
unit: $(UNIT_BINS) $(REPLAY_BINS)
	@fail=0; pass=0; \
	for t in $(UNIT_BINS); do \
	    if TESTDATA=tests/data $$t; then pass=$$((pass+1)); \
	    else fail=$$((fail+1)); echo "FAILED: $$t"; fi; \
	done; \
	for f in $(FUZZ_NAMES); do \
	    if $(BUILD)/fuzz/replay_$$f $$(for d in tests/fuzz/corpus/$$f \
	        tests/fuzz/regress/$$f; do test -d $$d && echo $$d; done); \
	    then pass=$$((pass+1)); \
	    else fail=$$((fail+1)); echo "FAILED: replay_$$f"; fi; \
	done; \
	echo "unit: $$pass passed, $$fail failed"; test $$fail -eq 0

scenario: $(PROGS) $(TOOL_BINS)
	@BUILD=$(abspath $(BUILD)) sh tests/scenario/run.sh

# Said first: how long it takes and what it starts (tests/README.md).
check:
	@echo "make check: about 20 minutes on 2 cores (build, unit tests, every"
	@echo "  scenario script); the scripts start their own redis-server, mariadbd,"
	@echo "  lighttpd and callback receivers (tests/tools/cbrecv.py) on 127.0.0.1"
	@echo "  and free ports, under \$$TMPDIR, and stop them when they end."
	@sh tests/install-deps.sh all
	$(MAKE) all
	$(MAKE) layers
	$(MAKE) unit
	$(MAKE) scenario

# The include graph of daemon/ against the rules of daemon/README.md;
# with the library's objects, also its headers against the symbols each
# object defines, and the call graph between concepts.
layers: $(BUILD)/libtaskspool.a
	@python3 tests/layers/layers.py --objs $(BUILD)/obj

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    all unit scenario

# libFuzzer needs clang: Debian 12's clang-14, with libFuzzer's runtime
# (libclang_rt.fuzzer) in libclang-rt-14-dev.  FUZZ_TARGETS picks some
# targets, e.g. FUZZ_TARGETS=fuzz_cron; run.sh says what it prints.
FUZZ_SECONDS ?= 60
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= $(shell command -v clang-14 || echo clang)
FUZZ_TARGETS ?= $(FUZZ_NAMES)
fuzz:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 \
	    SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    FUZZ_TARGETS="$(FUZZ_TARGETS)" fuzz-targets
	@BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) \
	    REPLAY_BUILD=$(BUILD) sh tests/fuzz/run.sh $(FUZZ_TARGETS)

fuzz-targets: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%)

stress: $(PROGS) $(TOOL_BINS)
	@BUILD=$(abspath $(BUILD)) STRESS=1 sh tests/scenario/run.sh

demo: deps-build
	$(MAKE) all
	@BUILD=$(abspath $(BUILD)) sh contrib/demo.sh

demo-api: deps-demo-api
	$(MAKE) all
	@BUILD=$(abspath $(BUILD)) sh contrib/demo-api.sh

demo-api-stop:
	@sh contrib/demo-api.sh stop

bench: deps
	$(MAKE) all
	@BUILD=$(abspath $(BUILD)) sh tests/bench/bench.sh
	@BUILD=$(abspath $(BUILD)) sh tests/bench/bench-api.sh
	@BUILD=$(abspath $(BUILD)) sh tests/bench/bench-console.sh

# Installation.  DESTDIR is prepended to every path (for packaging);
# the systemd units get $(PREFIX)/sbin and $(PREFIX)/bin in their
# ExecStart= lines.  taskspool.cgi goes to CGIDIR (Debian's web servers
# serve /usr/lib/cgi-bin), the bash completion where bash-completion
# looks for it.  Every directory variable can be set on the command line
# (debian/rules: PREFIX=/usr UNITDIR=/lib/systemd/system CGIDIR=...).
PREFIX  ?= /usr/local
BINDIR   = $(PREFIX)/bin
SBINDIR  = $(PREFIX)/sbin
MANDIR   = $(PREFIX)/share/man
DOCDIR   = $(PREFIX)/share/doc/taskspool
UNITDIR  = $(PREFIX)/lib/systemd/system
CGIDIR   = $(PREFIX)/lib/cgi-bin
COMPLETIONDIR = $(PREFIX)/share/bash-completion/completions
MANPAGES = daemon/man/taskspool.1 daemon/man/taskspool.conf.5 \
	   daemon/man/taskspool-hooks.7 daemon/man/taskspoold.8 daemon/man/taskspool.cgi.8
EXAMPLES = spool-layout/taskspool.conf.example contrib/grafana/taskspool.json \
	   contrib/prometheus/alerts.yml contrib/prometheus/alerts.test.yml \
	   contrib/logrotate/taskspool
UNITS    = contrib/systemd/taskspoold.service contrib/systemd/taskspoold@.service \
	   contrib/systemd/taskspool-fcgi.socket \
	   contrib/systemd/taskspool-fcgi.service \
	   contrib/systemd/taskspool-purge.service \
	   contrib/systemd/taskspool-purge.timer

install: $(PROGS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) \
	    $(DESTDIR)$(DOCDIR)/examples/hooks $(DESTDIR)$(UNITDIR) \
	    $(DESTDIR)$(CGIDIR) $(DESTDIR)$(COMPLETIONDIR)
	install -m 755 $(BUILD)/taskspool $(DESTDIR)$(BINDIR)/taskspool
	install -m 755 $(BUILD)/taskspoold $(DESTDIR)$(SBINDIR)/taskspoold
	install -m 755 $(BUILD)/taskspool.fcgi $(DESTDIR)$(SBINDIR)/taskspool.fcgi
	install -m 755 $(BUILD)/taskspool.cgi $(DESTDIR)$(CGIDIR)/taskspool.cgi
	install -m 644 contrib/bash-completion/taskspool \
	    $(DESTDIR)$(COMPLETIONDIR)/taskspool
	for m in $(MANPAGES); do \
	    s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s && \
	    install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; done
	install -m 644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	install -m 755 hooks/hello hooks/report hooks/flaky hooks/slow \
	    $(DESTDIR)$(DOCDIR)/examples/hooks/
	install -m 644 hooks/README.md $(DESTDIR)$(DOCDIR)/examples/hooks/
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/
	for u in $(UNITS); do \
	    sed -e 's|/usr/local/sbin/|$(SBINDIR)/|g' \
	        -e 's|/usr/local/bin/|$(BINDIR)/|g' $$u \
	        >$(DESTDIR)$(UNITDIR)/$${u##*/} && \
	    chmod 644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/taskspool $(DESTDIR)$(SBINDIR)/taskspoold \
	    $(DESTDIR)$(SBINDIR)/taskspool.fcgi $(DESTDIR)$(CGIDIR)/taskspool.cgi \
	    $(DESTDIR)$(COMPLETIONDIR)/taskspool
	for m in $(MANPAGES); do s=$${m##*.}; \
	    rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m##*/}; done
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$${u##*/}; done
	rm -rf $(DESTDIR)$(DOCDIR)

clean:
	rm -rf build build-asan build-fuzz var
	@# what dpkg-buildpackage (make deb) leaves in debian/ (dh_clean's list)
	rm -rf debian/.debhelper debian/build debian/tmp debian/taskspool \
	    debian/taskspool-api debian/python3-taskspool debian/files \
	    debian/*.substvars debian/*.debhelper debian/*.debhelper.log \
	    debian/debhelper-build-stamp .pybuild

# The Debian packages (debian/rules), built from this tree as it is into
# $(DEB_DIR): dpkg-buildpackage -us -uc -b with the .deb, .buildinfo and
# .changes files there instead of in the parent directory, then lintian
# on the .changes (its errors fail; warnings are printed).  DEB_OPTIONS
# adds dpkg-buildpackage options (e.g. -Ppkg.taskspool.nopython).  PATH
# is the system's: a package is built with Debian's tools and Python, not
# a pyenv's or /usr/local's that come first in a developer's PATH.
DEB_DIR ?= $(BUILD)/deb
DEB_OPTIONS ?=
deb:
	@command -v dpkg-buildpackage >/dev/null || { echo \
	    "make deb: needs dpkg-dev, debhelper, dh-python, pybuild-plugin-pyproject (make deps)"; exit 69; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	    TASKSPOOL_DEB_DIR=$(abspath $(DEB_DIR)) dpkg-buildpackage -us -uc -b \
	    --buildinfo-option=-u$(abspath $(DEB_DIR)) \
	    --buildinfo-file=$(abspath $(DEB_DIR))/taskspool.buildinfo \
	    --changes-option=-u$(abspath $(DEB_DIR)) \
	    --changes-file=$(abspath $(DEB_DIR))/taskspool.changes $(DEB_OPTIONS)
	lintian --fail-on error --info $(DEB_DIR)/taskspool.changes
	@echo "make deb: packages in $(DEB_DIR)/:"; ls -1 $(DEB_DIR)/*.deb

# Build, install, use and purge the packages here (root; changes this
# machine: see tests/package/deb-test.sh).
deb-test:
	@BUILD=$(abspath $(BUILD)) DEB_DIR=$(abspath $(DEB_DIR)) \
	    sh tests/package/deb-test.sh
