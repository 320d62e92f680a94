#!/bin/sh
# Issue 11 item 1 in cluster mode (a real redis-server): `overlap: forbid`
# holds across leader failovers, kill -9 of the leader while a run is in
# progress, including right after the state save of a fire pass; see
# forbid-lib.sh.  Uses $TS_TEST_REDIS when set (own key prefix), else its
# own server.  Two more rounds freeze the leader with SIGSTOP past its
# lock's TTL and resume it (FL_STOP_ROUNDS).  About 100 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
redis_setup
FL_STOP_ROUNDS=2
. "$(dirname "$0")/forbid-lib.sh"
test_done
