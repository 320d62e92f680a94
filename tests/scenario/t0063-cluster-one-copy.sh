#!/bin/sh
# Issue 11 item 7 in cluster mode (a real redis-server): one copy per
# requestId, always (the claim marker, daemon/coord/claimmark.h, next to the
# Redis lease); see onecopy-lib.sh.  Uses $TS_TEST_REDIS when set (own
# key prefix), else its own server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup
. "$(dirname "$0")/onecopy-lib.sh"
test_done
