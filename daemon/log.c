/*
 * log — stderr or syslog diagnostics; see log.h.
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static const char *log_prog = "taskspool";
static int log_syslog;
static enum log_level log_max = LOG_LEVEL_INFO;

static const char *const level_names[] = { "error", "warning", "info",
	"debug" };

void
log_init(const char *progname, int use_syslog, enum log_level level)
{
	log_prog = progname;
	log_syslog = use_syslog;
	log_max = level;
	if (use_syslog)
		openlog(progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

int
log_level_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]);
	    i++)
		if (strcmp(s, level_names[i]) == 0)
			return (int)i;
	if (strcmp(s, "err") == 0)
		return LOG_LEVEL_ERR;
	if (strcmp(s, "warn") == 0)
		return LOG_LEVEL_WARN;
	return -1;
}

void
log_set_level(enum log_level level)
{
	log_max = level;
}

static void
log_vemit(enum log_level lv, int with_errno, int saved, const char *fmt,
    va_list ap)
{
	char msg[2048];
	int n;

	if (lv > log_max)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		return;
	if (with_errno && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s",
		    strerror(saved));
	if (log_syslog) {
		static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
			LOG_DEBUG };
		syslog(prio[lv], "%s", msg);
	} else {
		struct timespec ts;
		struct tm tm;
		char when[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ldZ %s: %s: %s\n", when,
		    ts.tv_nsec / 1000000, log_prog, level_names[lv], msg);
	}
}

#define LOG_BODY(lv, e)                                                     \
	do {                                                                \
		int saved = errno;                                          \
		va_list ap;                                                 \
		va_start(ap, fmt);                                          \
		log_vemit(lv, e, saved, fmt, ap);                           \
		va_end(ap);                                                 \
		errno = saved;                                              \
	} while (0)

void
log_debug(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_DEBUG, 0);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_INFO, 0);
}

void
log_warn(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARN, 1);
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARN, 0);
}

void
fatal(int code, const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERR, 1);
	exit(code);
}

void
fatalx(int code, const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERR, 0);
	exit(code);
}

char *
log_safe(char *out, size_t outlen, const char *s)
{
	size_t o = 0;

	if (outlen == 0)
		return out;
	for (; *s != '\0' && o + 1 < outlen; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\') {
			if (o + 5 >= outlen)
				break;
			snprintf(out + o, outlen - o, "\\x%02x", c);
			o += 4;
		} else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}
