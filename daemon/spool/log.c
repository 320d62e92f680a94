/*
 * log — stderr or syslog diagnostics; see log.h.
 *
 * Repeated warnings: a table of the LOG_REPEAT_SLOTS warnings seen last,
 * each keyed by a 64-bit FNV-1a hash of its level, event, request id and
 * text.  A warning whose key is in the table and whose window (started by
 * its first line) is younger than LOG_REPEAT_MS is only counted; when the
 * window is over (seen by the next log call or log_tick), one line "<the
 * warning> (repeated N times in S s)" reports the count.  Under a mutex:
 * the daemon's threads log too.
 */
#include "spool/log.h"

#include <sys/stat.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "core/journal.h"
#include "spool/clock.h"
#include "spool/unixdgram.h"

static const char *log_prog = "taskspool";
static int log_syslog;
static int log_journal;		/* stderr is the journal: "<N>" prefixes */
static int log_jfd = -1;		/* log_target = journal: the socket */
static struct sockaddr_un log_jaddr;
static socklen_t log_jlen;
static enum log_level log_max = LOG_LEVEL_INFO;
static enum log_format log_fmt = LOG_FORMAT_TEXT;
static char log_node[65];

static const char *const level_names[] = { "error", "warning", "info",
	"debug" };

#define LOG_REPEAT_MS		10000	/* window of one warning */
#define LOG_REPEAT_SLOTS	32	/* distinct warnings tracked */
#define LOG_REPEAT_TEXT		1024	/* bytes of text kept per warning */

struct log_repeat {
	uint64_t key;			/* 0 = free */
	int64_t first_ms, last_ms;	/* the window's first, last line */
	unsigned long count;		/* lines suppressed in the window */
	int attempt;
	char event[32], rid[129], code[65];
	char msg[LOG_REPEAT_TEXT];
};

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static struct log_repeat log_rep[LOG_REPEAT_SLOTS];

static int64_t (*log_clock)(void) = tstime_mono_ms;

void
log_set_clock(int64_t (*now_ms)(void))
{
	log_clock = now_ms != NULL ? now_ms : tstime_mono_ms;
}

int
log_stderr_is_journal(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (v == NULL || sscanf(v, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    v[end] != '\0' || fstat(STDERR_FILENO, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino;
}

void
log_init(const char *progname, int use_syslog, enum log_level level)
{
	log_prog = progname;
	log_syslog = use_syslog;
	log_max = level;
	log_journal = !use_syslog && log_stderr_is_journal();
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

int
log_format_parse(const char *s)
{
	if (strcmp(s, "text") == 0)
		return LOG_FORMAT_TEXT;
	if (strcmp(s, "logfmt") == 0)
		return LOG_FORMAT_LOGFMT;
	return -1;
}

void
log_set_format(enum log_format f)
{
	log_fmt = f;
}

void
log_set_node(const char *node)
{
	snprintf(log_node, sizeof(log_node), "%s", node != NULL ? node : "");
}

/*
 * Append " key=value" to out (at o of len), quoting the value when it is
 * empty or holds a space, '=', '"', '\\' or a byte < 0x20 or 0x7f.
 * Returns the new offset (never past len - 1; truncates).
 */
static size_t
kv_put(char *out, size_t len, size_t o, const char *key, const char *v)
{
	int quote = v[0] == '\0', w;

	for (const char *p = v; *p != '\0' && !quote; p++)
		quote = (unsigned char)*p <= ' ' || *p == '=' || *p == '"' ||
		    *p == '\\' || *p == 0x7f;
	if (o + 1 >= len)
		return o;
	w = snprintf(out + o, len - o, "%s%s=%s", o > 0 ? " " : "", key,
	    quote ? "\"" : "");
	if (w < 0 || (size_t)w >= len - o) {
		out[o] = '\0';
		return o;
	}
	o += (size_t)w;
	for (const char *p = v; *p != '\0' && o + 6 < len; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if (c == '\t') {
			out[o++] = '\\';
			out[o++] = 't';
		} else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (quote && o + 1 < len)
		out[o++] = '"';
	out[o < len ? o : len - 1] = '\0';
	return o < len ? o : len - 1;
}

int
log_set_journal(const char *path)
{
	socklen_t len;
	int fd;

	if (log_jfd >= 0) {
		close(log_jfd);
		log_jfd = -1;
	}
	if (path == NULL)
		return 0;
	if ((len = unixdgram_addr(&log_jaddr, path)) == 0)
		return -1;
	/* Non-blocking: a journal that does not read (its queue full)
	 * must not stop the daemon; the line goes to stderr instead. */
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) < 0)
		return -1;
	log_jlen = len;
	log_jfd = fd;
	return 0;
}

/*
 * One journal entry (systemd.journal-fields(7): MESSAGE, PRIORITY,
 * SYSLOG_IDENTIFIER; ours: EVENT, REQUEST_ID, TASK_CODE, NODE,
 * ATTEMPT).  Returns 0 when journald took it, -1 when the line must go
 * to stderr instead (no journal listening, its queue full, or too
 * large).
 */
static int
journal_write(int prio, const char *event, const char *rid,
    const char *code, int attempt, const char *msg)
{
	char entry[8192], p[4], num[16] = "";
	struct journal_field f[] = {
		{ "MESSAGE", msg }, { "PRIORITY", p },
		{ "SYSLOG_IDENTIFIER", log_prog }, { "EVENT", event },
		{ "REQUEST_ID", rid }, { "TASK_CODE", code },
		{ "NODE", log_node }, { "ATTEMPT", num },
	};
	size_t len;

	snprintf(p, sizeof(p), "%d", prio);
	if (attempt > 0)
		snprintf(num, sizeof(num), "%d", attempt);
	len = journal_encode(entry, sizeof(entry), f,
	    (int)(sizeof(f) / sizeof(f[0])));
	if (len == 0)
		return -1;
	return unixdgram_send(log_jfd, &log_jaddr, log_jlen, entry, len);
}

static void
log_write(enum log_level lv, const char *event, const char *rid,
    const char *code, int attempt, const char *msg)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
		LOG_DEBUG };
	struct timespec ts;
	struct tm tm;
	char when[40], sec[24], line[4096], num[16], pfx[8] = "";
	size_t o = 0;

	/* log_target = journal: a native entry; without a journal
	 * listening the line goes to stderr as before, never lost. */
	if (log_jfd >= 0 && journal_write(prio[lv], event, rid, code, attempt,
	    msg) == 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when, sizeof(when), "%s.%03dZ", sec,
	    (int)(ts.tv_nsec / 1000000));
	/* On the journal's stream, "<N>" first: the line's priority
	 * (sd-daemon(3), the SD_ERR... prefixes; N is syslog's). */
	if (log_journal)
		snprintf(pfx, sizeof(pfx), "<%d>", prio[lv]);
	if (log_fmt == LOG_FORMAT_TEXT) {
		if (log_syslog)
			syslog(prio[lv], "%s", msg);
		else
			fprintf(stderr, "%s%s %s: %s: %s\n", pfx, when,
			    log_prog, level_names[lv], msg);
		return;
	}
	o = kv_put(line, sizeof(line), o, "ts", when);
	o = kv_put(line, sizeof(line), o, "level", level_names[lv]);
	if (log_node[0] != '\0')
		o = kv_put(line, sizeof(line), o, "node", log_node);
	o = kv_put(line, sizeof(line), o, "event", event);
	if (rid != NULL && rid[0] != '\0')
		o = kv_put(line, sizeof(line), o, "requestId", rid);
	if (code != NULL && code[0] != '\0')
		o = kv_put(line, sizeof(line), o, "taskCode", code);
	if (attempt > 0) {
		snprintf(num, sizeof(num), "%d", attempt);
		o = kv_put(line, sizeof(line), o, "attempt", num);
	}
	(void)kv_put(line, sizeof(line), o, "msg", msg);
	if (log_syslog)
		syslog(prio[lv], "%s", line);
	else
		fprintf(stderr, "%s%s\n", pfx, line);
}

/* FNV-1a (64-bit; Fowler, Noll, Vo) over s and a 0 byte, into h. */
static uint64_t
fnv1a(uint64_t h, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h * 0x100000001b3ULL;
}

/* Under log_mu: the summary line of r, then free it. */
static void
repeat_close(struct log_repeat *r)
{
	char line[LOG_REPEAT_TEXT + 64];
	int64_t ms = r->last_ms - r->first_ms;

	if (r->count > 0) {
		snprintf(line, sizeof(line), "%s (repeated %lu times in %lld s)",
		    r->msg, r->count, (long long)(ms <= 0 ? 1 : (ms + 999) /
		    1000));
		log_write(LOG_LEVEL_WARN, r->event, r->rid, r->code,
		    r->attempt, line);
	}
	r->key = 0;
}

/* Under log_mu: close every window that is over at now. */
static void
repeat_expire(int64_t now)
{
	for (size_t i = 0; i < LOG_REPEAT_SLOTS; i++)
		if (log_rep[i].key != 0 && now - log_rep[i].first_ms >=
		    LOG_REPEAT_MS)
			repeat_close(&log_rep[i]);
}

/*
 * Write one line, or count it when it repeats a warning of the open
 * window (only warnings are limited: errors end a program, and info
 * lines are the record of each state change).
 */
static void
log_emit(enum log_level lv, const char *event, const char *rid,
    const char *code, int attempt, const char *msg)
{
	struct log_repeat *r = NULL, *old = NULL;
	uint64_t key;
	int64_t now;

	if (lv != LOG_LEVEL_WARN) {
		log_write(lv, event, rid, code, attempt, msg);
		return;
	}
	key = fnv1a(fnv1a(fnv1a(fnv1a(0xcbf29ce484222325ULL, event), rid),
	    code), msg);
	key = key == 0 ? 1 : key;
	pthread_mutex_lock(&log_mu);
	now = log_clock();
	repeat_expire(now);
	for (size_t i = 0; i < LOG_REPEAT_SLOTS; i++) {
		if (log_rep[i].key == key) {
			log_rep[i].count++;
			log_rep[i].last_ms = now;
			pthread_mutex_unlock(&log_mu);
			return;
		}
		if (log_rep[i].key == 0 && r == NULL)
			r = &log_rep[i];
		if (old == NULL || log_rep[i].first_ms < old->first_ms)
			old = &log_rep[i];
	}
	if (r == NULL) {
		repeat_close(old);	/* the oldest window ends early */
		r = old;
	}
	r->key = key;
	r->first_ms = r->last_ms = now;
	r->count = 0;
	r->attempt = attempt;
	snprintf(r->event, sizeof(r->event), "%s", event);
	snprintf(r->rid, sizeof(r->rid), "%s", rid != NULL ? rid : "");
	snprintf(r->code, sizeof(r->code), "%s", code != NULL ? code : "");
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
	log_write(lv, event, rid, code, attempt, msg);
	pthread_mutex_unlock(&log_mu);
}

void
log_tick(void)
{
	pthread_mutex_lock(&log_mu);
	repeat_expire(log_clock());
	pthread_mutex_unlock(&log_mu);
}

void
log_flush(void)
{
	pthread_mutex_lock(&log_mu);
	for (size_t i = 0; i < LOG_REPEAT_SLOTS; i++)
		if (log_rep[i].key != 0)
			repeat_close(&log_rep[i]);
	pthread_mutex_unlock(&log_mu);
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
	log_emit(lv, "log", NULL, NULL, 0, msg);
}

void
log_task(enum log_level lv, const char *event, const char *request_id,
    const char *task_code, int attempt, const char *fmt, ...)
{
	int saved = errno;
	char msg[2048];
	va_list ap;

	if (lv <= log_max) {
		va_start(ap, fmt);
		if (vsnprintf(msg, sizeof(msg), fmt, ap) >= 0)
			log_emit(lv, event, request_id, task_code, attempt,
			    msg);
		va_end(ap);
	}
	errno = saved;
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
