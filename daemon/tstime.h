/*
 * tstime — clocks and RFC 3339 timestamps.
 *
 * Wall-clock instants are int64_t milliseconds since the Unix epoch (UTC);
 * intervals use CLOCK_MONOTONIC milliseconds.  Formatting and parsing are
 * pure (no clock read).  Follows RFC 3339 §5.6 ("date-time"), restricted
 * to the forms the API documents.
 */
#ifndef TASKSPOOL_TSTIME_H
#define TASKSPOOL_TSTIME_H

#include <stddef.h>
#include <stdint.h>

/* Size of a buffer that holds any timestamp tstime_format_ms writes. */
#define TSTIME_BUF 32

/* Current wall-clock time, epoch ms (CLOCK_REALTIME). */
int64_t tstime_now_ms(void);

/* Current monotonic time, ms (CLOCK_MONOTONIC); for intervals only. */
int64_t tstime_mono_ms(void);

/*
 * Write ms (epoch ms) as "2024-06-01T12:00:07.250Z" into buf (>= TSTIME_BUF
 * bytes).  Returns buf.
 */
char *tstime_format_ms(char *buf, size_t len, int64_t ms);

/*
 * Parse an RFC 3339 date-time with a mandatory offset ("Z", "+hh:mm" or
 * "-hh:mm"; "z" and a space instead of "T" are accepted as RFC 3339 §5.6's
 * note allows) and optional fraction of up to 9 digits (kept to ms).
 * Returns 0 and stores epoch ms in *out, or -1 (errno EINVAL) if s is not
 * such a timestamp or is out of range (years 1970-9999).
 */
int tstime_parse_rfc3339(const char *s, int64_t *out);

#endif
