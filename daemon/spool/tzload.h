/*
 * tzload — time zones loaded from the system's zoneinfo files ($TZDIR or
 * /usr/share/zoneinfo, /etc/localtime, $TZ, /etc/timezone): the I/O half
 * of the zone interface, whose pure half (the TZif parser, the zone
 * arithmetic, tz_free) is core/tz.h.
 */
#ifndef TASKSPOOL_TZLOAD_H
#define TASKSPOOL_TZLOAD_H

#include <stddef.h>

#include "core/tz.h"

/*
 * tz_load() loads zone `name` (e.g. "Europe/Riga") from $TZDIR, or from
 * /usr/share/zoneinfo when TZDIR is unset (secure_getenv: ignored in
 * set-id programs).  The name is checked first: 1..TZ_NAME_MAX characters
 * of [A-Za-z0-9._+-] in '/'-separated components, none empty and none
 * starting with '.', no leading '/'; so "../etc/passwd" and "/etc/passwd"
 * are refused before any file is opened.  "UTC" always succeeds, file or
 * not (a built-in zone with offset 0).
 *
 * Returns a new struct tz (caller frees with tz_free()), or NULL with errno
 * set (EINVAL bad name or malformed file, ENOENT unknown zone, EFBIG file
 * over the size cap, ENOMEM, or the open/read error) and, if why is not
 * NULL, a reason of at most whylen-1 bytes ("Nope/Zone: unknown time zone").
 * Follows tzfile(5) / RFC 8536: versions 1 to 4; files with leap-second
 * records ("right/" zones) are refused with EINVAL, and so are files
 * whose footer TZ string disagrees with the last transition (RFC 8536
 * 3.3: it "MUST be consistent with the last version 2+ transition").
 */
struct tz	*tz_load(const char *name, char *why, size_t whylen);

/*
 * tz_load_file() loads the TZif file at `path` (for /etc/localtime) and
 * labels it `name` (borrowed, copied; NULL means use path).  Same returns
 * and errors as tz_load(); the path is used as given, not checked.
 */
struct tz	*tz_load_file(const char *path, const char *name, char *why,
		    size_t whylen);

/*
 * The host's zone: TZ (a zone name, an absolute path or a POSIX TZ
 * string, with or without a leading ":"), else the name in /etc/timezone,
 * else the /etc/localtime link target (or that file), else UTC.  Returns
 * new (tz_free), or NULL with a reason in why when TZ is set but unusable.
 */
struct tz	*tz_load_host(char *why, size_t whylen);

#endif
