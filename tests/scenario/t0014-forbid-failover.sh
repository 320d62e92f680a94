#!/bin/sh
# Issue 11 item 1 in embedded mode: `overlap: forbid` holds across leader
# failovers (kill -9 of the leader while a run is in progress, including
# right after the state save of a fire pass); see forbid-lib.sh.  About
# 70 s.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/forbid-lib.sh"
test_done
