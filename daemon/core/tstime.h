/*
 * tstime — RFC 3339 timestamps (pure: no clock read; the clocks are in
 * spool/clock.h).
 *
 * Wall-clock instants are int64_t milliseconds since the Unix epoch (UTC).
 * Follows RFC 3339 §5.6 ("date-time"), restricted to the forms the API
 * documents.
 */
#ifndef TASKSPOOL_TSTIME_H
#define TASKSPOOL_TSTIME_H

#include <stddef.h>
#include <stdint.h>

/* Range of instants parsed and formatted: 0001-01-01T00:00:00.000Z to
 * 9999-12-31T23:59:59.999Z, epoch ms. */
#define TSTIME_MIN_MS	(-62135596800000LL)
#define TSTIME_MAX_MS	(253402300799999LL)

/* Size of a buffer that holds any timestamp tstime_format_ms writes. */
#define TSTIME_BUF 32

/*
 * Write ms (epoch ms) as "2024-06-01T12:00:07.250Z" into buf (>= TSTIME_BUF
 * bytes).  Returns buf.
 */
char *tstime_format_ms(char *buf, size_t len, int64_t ms);

/*
 * Parse an RFC 3339 date-time with a mandatory offset ("Z", "+hh:mm" or
 * "-hh:mm"; "z" and a space instead of "T" are accepted as RFC 3339 §5.6's
 * note allows) and optional fraction of up to 9 digits (kept to ms).
 * Returns 0 and stores epoch ms in *out (negative before 1970), or -1
 * (errno EINVAL) if s is not such a timestamp or the instant is outside
 * TSTIME_MIN_MS .. TSTIME_MAX_MS (years 0001-9999 in UTC).  A leap second
 * (:60) is read as :59 (POSIX time has no leap seconds).
 */
int tstime_parse_rfc3339(const char *s, int64_t *out);

#endif
