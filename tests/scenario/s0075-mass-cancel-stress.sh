#!/bin/sh
# Stress (make stress only): t0075 with 100,000 delayed tasks cancelled
# at `ulimit -n 200` (and 20,000 left in active/ for the restart): every
# one CANCELLED with a result, descriptors under the same bound.
MASS_N=${MASS_N:-100000} exec sh "$(dirname "$0")/t0075-mass-cancel.sh"
