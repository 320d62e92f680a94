/*
 * clock — the two clocks every program reads.
 *
 * Wall-clock instants are int64_t milliseconds since the Unix epoch (UTC,
 * CLOCK_REALTIME); intervals and deadlines use CLOCK_MONOTONIC
 * milliseconds, which no clock step moves (clock_gettime(2)).  Kept out of
 * core/, whose code reads no clock: it takes "now" as an argument.
 */
#ifndef TASKSPOOL_CLOCK_H
#define TASKSPOOL_CLOCK_H

#include <stdint.h>

/* Current wall-clock time, epoch ms (CLOCK_REALTIME). */
int64_t tstime_now_ms(void);

/* Current monotonic time, ms (CLOCK_MONOTONIC); for intervals only. */
int64_t tstime_mono_ms(void);

#endif
