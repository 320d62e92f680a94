/*
 * tz.h — IANA time zones read from the system tz database.
 *
 * A struct tz is an immutable, loaded copy of one TZif file (RFC 8536,
 * tzfile(5)): its transition table plus the POSIX TZ rule of the file's
 * footer, which governs every instant after the last transition.  Loading
 * from files (tz_load, tz_load_file, tz_load_host) is the only I/O, and it
 * lives in spool/tzload.c (spool/tzload.h), outside core/; every function
 * of core/tz.c is pure, reads no clock, takes the loaded struct and is
 * safe to call from any number of threads at once (nothing here touches TZ, tzset() or localtime()).
 *
 * Vocabulary used below:
 *   epoch seconds  an instant: seconds since 1970-01-01T00:00:00Z, leap
 *                  seconds not counted (POSIX time_t semantics, as int64_t);
 *   local seconds  a wall-clock reading in the zone, encoded as if it were
 *                  UTC: the value timegm() would return for the broken-down
 *                  local date and time.  local = epoch + offset.
 *   offset         UTC offset in seconds, east positive (New York in winter
 *                  is -18000).
 *
 * Errors: loaders return NULL with errno set and, when the caller passes a
 * buffer, a one-line reason.  The pure functions cannot fail except for
 * arguments outside TZ_EPOCH_MIN..TZ_EPOCH_MAX, which they report with -1
 * and errno = ERANGE where they have a return code.
 */
#ifndef TZ_H
#define TZ_H

#include <stddef.h>
#include <stdint.h>

/* Longest zone name accepted ("America/Argentina/ComodRivadavia" is 32). */
#define TZ_NAME_MAX		255

/* Instants outside years 0001..9999 are refused by the range-checked calls. */
/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define TZ_EPOCH_MIN		(-62135596800LL)
#define TZ_EPOCH_MAX		253402300799LL

/* Room for "9999-12-31T23:59:59+25:59:59" and its NUL, with slack. */
#define TZ_RFC3339_MAX		40

struct tz;

/*
 * tz_load_buf() parses `len` bytes of TZif data at `buf` (borrowed, not
 * kept) and labels the zone `name` (borrowed, copied).  No I/O.  Returns
 * new, or NULL with errno = EINVAL/ENOMEM and a reason in why.
 */
struct tz	*tz_load_buf(const void *buf, size_t len, const char *name,
		    char *why, size_t whylen);

/*
 * tz_load_posix() builds a zone from a POSIX TZ string alone (POSIX.1 XBD
 * 8.3, as in a TZ environment variable: "EST5EDT,M3.2.0,M11.1.0",
 * "<+03>-3"), labelled with the string itself.  No I/O.  Returns new, or
 * NULL with errno = EINVAL/ENOMEM and a reason in why.
 */
struct tz	*tz_load_posix(const char *spec, char *why, size_t whylen);

/* tz_free() releases a zone from any loader; NULL is a no-op. */
void		 tz_free(struct tz *z);

/* tz_name() returns the zone's name, borrowed: valid until tz_free(z). */
const char	*tz_name(const struct tz *z);

/*
 * tz_is_utc() returns 1 when the zone was loaded under a UTC name ("UTC",
 * "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu",
 * "Etc/Zulu"), whose instants are written with a "Z" suffix; else 0.
 */
int		 tz_is_utc(const struct tz *z);

/*
 * tz_name_ok() returns 1 if `name` passes the zone-name check described at
 * tz_load(), else 0.  Pure.
 */
int		 tz_name_ok(const char *name);

/*
 * tz_names_same() returns 1 if zone names a and b (NUL-terminated,
 * borrowed) name the same zone: equal, or both among tzdata's names of
 * UTC (UTC, Etc/UTC, UCT, Universal, Zulu and their Etc/ forms, which
 * tzdata's "backward" file links together); else 0.  Pure.
 */
int		 tz_names_same(const char *a, const char *b);

/*
 * tz_name_for_msg() copies at most 64 bytes of s (may be NULL) into out
 * (outlen bytes), printable ASCII only ('?' for others), for messages.
 * Pure.
 */
/*
 * tz_new_utc() returns a new zone of offset 0 named name (copied, cut to
 * the name limit), to free with tz_free(), or NULL (ENOMEM).  Pure.
 */
struct tz	*tz_new_utc(const char *name);

/*
 * tz_why_set() writes the printf-style reason into why (whylen bytes; why
 * may be NULL, then nothing is written); a reason cut at whylen-1 bytes
 * is still a reason.  For the loaders and the cron parser.  Pure.
 */
void		 tz_why_set(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void		 tz_name_for_msg(const char *s, char *out, size_t outlen);

/*
 * tz_offset_at() returns the UTC offset in seconds (east positive) in
 * force at instant epoch_s.  Instants before the first transition use the
 * file's first time type, instants after the last one the footer's POSIX
 * rule (or the last type when the footer is empty), as RFC 8536 3.2 and
 * tzfile(5) say.
 */
int32_t		 tz_offset_at(const struct tz *z, int64_t epoch_s);

/*
 * tz_next_transition() finds the first instant T > after_s at which the
 * UTC offset changes (transitions that only rename the zone or flip isdst
 * are skipped): returns 1 and stores T (epoch seconds) in *when_s, or 0
 * when the offset never changes again.  Table then footer rule, as for
 * tz_offset_at().
 */
int		 tz_next_transition(const struct tz *z, int64_t after_s,
		    int64_t *when_s);

/*
 * tz_prev_transition() finds the last instant T <= at_s at which the UTC
 * offset changed: returns 1 and stores T (epoch seconds) in *when_s, or 0
 * if there is none.  The offset before T is tz_offset_at(z, T - 1).
 */
int		 tz_prev_transition(const struct tz *z, int64_t at_s,
		    int64_t *when_s);

/* How a wall-clock reading maps onto instants. */
enum tz_local_kind {
	TZ_LOCAL_UNIQUE,	/* exactly one instant */
	TZ_LOCAL_GAP,		/* skipped by a forward jump: no instant */
	TZ_LOCAL_OVERLAP	/* repeated by a backward jump: two instants */
};

struct tz_local {
	enum tz_local_kind kind;
	/*
	 * UNIQUE: the instant (first_s == second_s).
	 * OVERLAP: first_s is the first pass (earlier offset), second_s the
	 *   second pass.
	 * GAP: first_s == second_s == the transition instant, i.e. the first
	 *   instant after the gap.
	 */
	int64_t		 first_s;
	int64_t		 second_s;
	/* Seconds: GAP: length of the gap; OVERLAP: of the repeat; else 0. */
	int32_t		 shift_s;
};

/*
 * tz_local_to_utc() resolves local seconds `local_s` in zone z into *out
 * (see struct tz_local).  Gap and overlap sizes come from the zone's actual
 * offset change, whatever its size (CRON-RULES.md 4.6: never assume one
 * hour).  Returns 0, or -1 with errno = ERANGE when local_s is outside
 * TZ_EPOCH_MIN..TZ_EPOCH_MAX.
 */
int		 tz_local_to_utc(const struct tz *z, int64_t local_s,
		    struct tz_local *out);

/*
 * tz_format_rfc3339() writes instant epoch_s as RFC 3339 with the zone's
 * offset at that instant, "2024-03-10T03:00:00-04:00", or with "Z" when
 * tz_is_utc(z).  An offset with a seconds part (old LMT) is written
 * "+HH:MM:SS", as ISO 8601 libraries such as Python's do.  buf receives at
 * most buflen bytes including the NUL (TZ_RFC3339_MAX is always enough).
 * Returns 0, or -1 with errno = ERANGE (instant out of range) or ENOSPC
 * (buffer too small; buf then holds a truncated string).
 */
int		 tz_format_rfc3339(const struct tz *z, int64_t epoch_s,
		    char *buf, size_t buflen);

/* Room for tz_format_rfc3339_ms(): TZ_RFC3339_MAX and ".mmm". */
#define TZ_RFC3339_MS_MAX	(TZ_RFC3339_MAX + 4)

/*
 * tz_format_rfc3339_ms() is tz_format_rfc3339() for an instant in epoch
 * milliseconds (floored to the second for the civil time, so negative
 * instants are right too), with ".mmm" after the seconds only when ms is
 * not a whole second: "2024-03-10T03:00:00.250-04:00".  Returns 0, or -1
 * with errno ERANGE or ENOSPC as tz_format_rfc3339().
 */
int		 tz_format_rfc3339_ms(const struct tz *z, int64_t ms,
		    char *buf, size_t buflen);

/*
 * Proleptic Gregorian calendar helpers, pure (exported for cron.c and the
 * CLI).  tz_days_from_civil() returns the days since 1970-01-01 of year y,
 * month m (1..12), day d (1..31); tz_civil_from_days() is its inverse;
 * tz_weekday() gives 0 = Sunday .. 6 = Saturday for a day number;
 * tz_month_days() the length of month m of year y.
 */
int64_t		 tz_days_from_civil(int64_t y, int m, int d);
void		 tz_civil_from_days(int64_t days, int64_t *y, int *m,
		    int *d);
int		 tz_weekday(int64_t days);
int		 tz_month_days(int64_t y, int m);

#endif /* TZ_H */
