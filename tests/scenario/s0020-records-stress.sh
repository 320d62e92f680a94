#!/bin/sh
# Stress form of the records scenarios (make stress): t0020 with 2,000
# tasks with retries and failures, and t0021 with 500 tasks through the
# MariaDB outage (150 running when it stops, 350 during it).
d=$(dirname "$0")
RECORDS_TASKS=2000 sh "$d/t0020-records.sh" &&
OUTAGE_TASKS1=150 OUTAGE_TASKS2=350 sh "$d/t0021-records-outage.sh"
