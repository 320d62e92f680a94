#!/bin/sh
# Issue 11 item 7 in embedded mode: one copy per requestId, always (the
# claim marker, daemon/coord/claimmark.h); see onecopy-lib.sh.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/onecopy-lib.sh"
test_done
