# taskspool — GNU make build.  See README.md for the two set-up commands.
#
#   make            build the programs into $(BUILD)/
#   make deps       install missing Debian packages (needs root or sudo)
#   make check      deps + build + unit tests (Check) + scenario tests
#   make asan       the same tests under AddressSanitizer + UBSan
#   make demo       run the example tasks on a fresh embedded spool in ./var/
#   make bench      throughput and latency numbers (asserts nothing)

BUILD    ?= build
CC       ?= cc
PKGS      = jansson libcrypto hiredis
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

OPT      ?= -O2
SAN      ?=
CFLAGS   ?=
CFLAGS   += -std=c11 -D_GNU_SOURCE -g $(OPT) $(SAN) \
	    -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wno-unused-parameter \
	    -fstack-protector-strong -Idaemon $(PKG_CFLAGS)
ifeq ($(SAN),)
CFLAGS   += -D_FORTIFY_SOURCE=2
endif
LDFLAGS  += $(SAN)
LDLIBS   += $(PKG_LIBS) -lpthread

MAINS    = daemon/taskspoold.c daemon/taskspool.c
LIB_SRCS = $(filter-out $(MAINS),$(wildcard daemon/*.c))
LIB_OBJS = $(LIB_SRCS:daemon/%.c=$(BUILD)/obj/%.o)
PROGS    = $(BUILD)/taskspoold $(BUILD)/taskspool
UNIT_SRCS = $(wildcard tests/unit/check_*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRCS = $(wildcard tests/tools/*.c)
TOOL_BINS = $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)

.PHONY: all deps check unit scenario asan demo bench clean stress
all: $(PROGS) $(TOOL_BINS)

$(BUILD)/obj/%.o: daemon/%.c $(wildcard daemon/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libtaskspool.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/taskspoold: daemon/taskspoold.c $(BUILD)/libtaskspool.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtaskspool.a $(LDLIBS)

$(BUILD)/taskspool: daemon/taskspool.c $(BUILD)/libtaskspool.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtaskspool.a $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libtaskspool.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) -o $@ $< \
	    $(BUILD)/libtaskspool.a $(LDLIBS) $(CHECK_LIBS)

# Small helper programs used by scenario tests and the benchmark (static,
# so a hook built from them starts as fast as a process can).
$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $< \
	    $(if $(SAN),,-static)

deps:
	@sh tests/install-deps.sh

unit: $(UNIT_BINS)
	@fail=0; pass=0; \
	for t in $(UNIT_BINS); do \
	    if TESTDATA=tests/data $$t; then pass=$$((pass+1)); \
	    else fail=$$((fail+1)); echo "FAILED: $$t"; fi; \
	done; \
	echo "unit: $$pass passed, $$fail failed"; test $$fail -eq 0

scenario: $(PROGS) $(TOOL_BINS)
	@BUILD=$(abspath $(BUILD)) sh tests/scenario/run.sh

check: deps
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) scenario

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    all unit scenario

stress: $(PROGS) $(TOOL_BINS)
	@BUILD=$(abspath $(BUILD)) STRESS=1 sh tests/scenario/run.sh

demo: deps
	$(MAKE) all
	@BUILD=$(abspath $(BUILD)) sh contrib/demo.sh

bench: deps
	$(MAKE) all
	@BUILD=$(abspath $(BUILD)) sh tests/bench/bench.sh

clean:
	rm -rf build build-asan var
