/*
 * tzload — load a time zone from the system's zoneinfo files: $TZDIR (or
 * /usr/share/zoneinfo), /etc/localtime, $TZ, /etc/timezone.  The TZif
 * parser and the zone arithmetic are pure and in core/tz.c; this file
 * holds the reads, as core/ code does no I/O.  Declared in
 * spool/tzload.h (tz_load, tz_load_file, tz_load_host).
 */
#include "spool/tzload.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TZ_DIR_DEFAULT	"/usr/share/zoneinfo"

/* Biggest TZif file we read; real ones are under 4 KiB (fat ones ~ 8 KiB). */
#define TZ_FILE_MAX	(1024 * 1024)


struct tz *
tz_load_file(const char *path, const char *name, char *why, size_t whylen)
{
	struct stat st;
	struct tz *z;
	unsigned char *buf;
	char ebuf[128];		/* strerror() is not MT-safe */
	size_t got = 0;
	ssize_t n;
	int fd, saved;

	if (name == NULL)
		name = path;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		saved = errno;
		if (saved == ENOENT || saved == ENOTDIR)
			tz_why_set(why, whylen, "%s: unknown time zone", name);
		else
			tz_why_set(why, whylen, "%s: %s", name,
			    strerror_r(saved, ebuf, sizeof ebuf));
		errno = saved == ENOTDIR ? ENOENT : saved;
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		saved = errno;
		tz_why_set(why, whylen, "%s: %s", name,
		    strerror_r(saved, ebuf, sizeof ebuf));
		(void)close(fd);
		errno = saved;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		/* "America" is a directory of zones, not a zone. */
		tz_why_set(why, whylen, "%s: unknown time zone (not a file)",
		    name);
		(void)close(fd);
		errno = S_ISDIR(st.st_mode) ? ENOENT : EINVAL;
		return NULL;
	}
	if (st.st_size > TZ_FILE_MAX) {
		tz_why_set(why, whylen, "%s: file too large for a time zone",
		    name);
		(void)close(fd);
		errno = EFBIG;
		return NULL;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		tz_why_set(why, whylen, "%s: out of memory", name);
		(void)close(fd);
		errno = ENOMEM;
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	saved = errno;
	(void)close(fd);
	if (got != (size_t)st.st_size) {
		tz_why_set(why, whylen, "%s: short read", name);
		free(buf);
		errno = saved != 0 ? saved : EIO;
		return NULL;
	}
	z = tz_load_buf(buf, got, name, why, whylen);
	saved = errno;
	free(buf);
	errno = saved;
	return z;
}

struct tz *
tz_load(const char *name, char *why, size_t whylen)
{
	char path[PATH_MAX], shown[80];
	const char *dir;
	struct tz *z;
	int n;

	if (!tz_name_ok(name)) {
		tz_name_for_msg(name, shown, sizeof shown);
		tz_why_set(why, whylen, "\"%s\": invalid time zone name", shown);
		errno = EINVAL;
		return NULL;
	}
	if (strcmp(name, "UTC") == 0) {
		if ((z = tz_new_utc(name)) == NULL) {
			tz_why_set(why, whylen, "UTC: out of memory");
			errno = ENOMEM;
		}
		return z;
	}
	dir = secure_getenv("TZDIR");
	if (dir == NULL || dir[0] == '\0')
		dir = TZ_DIR_DEFAULT;
	n = snprintf(path, sizeof path, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof path) {
		tz_why_set(why, whylen, "%s: path too long", name);
		errno = ENAMETOOLONG;
		return NULL;
	}
	return tz_load_file(path, name, why, whylen);
}

/* Zone name from a path below a "zoneinfo/" directory, or NULL. */
static const char *
zone_from_path(const char *path)
{
	const char *p = strstr(path, "zoneinfo/");

	return p != NULL ? p + strlen("zoneinfo/") : NULL;
}

/*
 * The host's zone: TZ (a zone name, an absolute path or a POSIX TZ
 * string, with or without a leading ":"), else
 * /etc/timezone, else the /etc/localtime link target (or the file), else
 * UTC.  Returns new, or NULL with a reason when TZ is set but unusable.
 */
struct tz *
tz_load_host(char *why, size_t whylen)
{
	char buf[PATH_MAX], *p;
	const char *tzenv, *name;
	struct tz *z;
	FILE *fp;
	ssize_t n;

	tzenv = getenv("TZ");
	if (tzenv != NULL) {
		if (*tzenv == ':')
			tzenv++;
		if (*tzenv == '\0')
			return tz_load("UTC", why, whylen);
		if (*tzenv != '/') {
			/* A zone name, else a POSIX TZ string ("<+03>-3"). */
			if (tz_name_ok(tzenv) &&
			    (z = tz_load(tzenv, why, whylen)) != NULL)
				return z;
			if ((z = tz_load_posix(tzenv, NULL, 0)) != NULL)
				return z;
			if (!tz_name_ok(tzenv))
				(void)tz_load(tzenv, why, whylen);
			return NULL;
		}
		name = zone_from_path(tzenv);
		if (name != NULL && (z = tz_load(name, NULL, 0)) != NULL)
			return z;
		return tz_load_file(tzenv, tzenv, why, whylen);
	}
	if ((fp = fopen("/etc/timezone", "re")) != NULL) {
		p = fgets(buf, sizeof buf, fp);
		(void)fclose(fp);
		if (p != NULL) {
			buf[strcspn(buf, " \t\r\n")] = '\0';
			if (buf[0] != '\0' &&
			    (z = tz_load(buf, NULL, 0)) != NULL)
				return z;
		}
	}
	n = readlink("/etc/localtime", buf, sizeof buf - 1);
	if (n > 0) {
		buf[n] = '\0';
		name = zone_from_path(buf);
		if (name != NULL && (z = tz_load(name, NULL, 0)) != NULL)
			return z;
	}
	if ((z = tz_load_file("/etc/localtime", "localtime", NULL, 0)) != NULL)
		return z;
	return tz_load("UTC", why, whylen);
}
