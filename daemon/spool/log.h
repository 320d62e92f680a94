/*
 * log — the one place taskspool programs write diagnostics.
 *
 * Lines go to stderr (foreground, CLI) or syslog(3) (daemon), each prefixed
 * with the program name and level.  Library modules never log: they return
 * -1/NULL with errno and an optional reason; the policy layer logs once,
 * with the requestId.  log_warn() and fatal() append strerror(errno);
 * the *x variants (log_warnx, fatalx) do not.  fatal()/fatalx() log and exit with a sysexits(3)
 * code; they are for start-up errors only, never for the daemon's main loop.
 * Names that come from input are escaped (control bytes as \xNN) by
 * log_safe() before they reach a log line.
 *
 * Two line formats (log_set_format): "text", the historical
 *   2024-06-01T12:00:00.000Z taskspoold: info: <message>
 * and "logfmt", one event per line as space-separated key=value pairs
 * (values with spaces, quotes, '=' or control bytes are double-quoted
 * with \" \\ \n \t \xNN escapes, as the logfmt readers of Grafana
 * Loki and Heroku's log parsers expect):
 *   ts=2024-06-01T12:00:00.000Z level=info node=n1 event=task.running
 *   requestId=r1 taskCode=report attempt=1 msg="r1: attempt 1 started"
 * A plain log_info() is event=log with no requestId; log_task() names the
 * event and the task, so `grep requestId=r1` follows a task across nodes.
 *
 * Repeated warnings are rate-limited: the same warning (level, event,
 * requestId and text after formatting, strerror included) within 10 s of
 * its first line is counted, not written; when those 10 s are over, one
 * line "<the warning> (repeated N times in S s)" follows (written by the
 * next log call or by log_tick(), which a daemon calls from its loop).
 * Errors and info lines are never suppressed.  Thread-safe.
 */
#ifndef TASKSPOOL_LOG_H
#define TASKSPOOL_LOG_H

#include <stddef.h>
#include <stdint.h>

enum log_level { LOG_LEVEL_ERR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

/*
 * Set the program name (borrowed: must stay valid), whether to use syslog
 * instead of stderr, and the most verbose level printed.  When lines go
 * to stderr and stderr is the systemd journal (log_stderr_is_journal),
 * each line starts with its syslog priority as "<N>" (<3> error, <4>
 * warning, <6> info, <7> debug; sd-daemon(3)), which journald strips and
 * keeps as the entry's PRIORITY, so `journalctl -p warning` works.
 */
void log_init(const char *progname, int use_syslog, enum log_level level);

/*
 * Whether stderr is the journal's stream: $JOURNAL_STREAM ("DEV:INODE",
 * set by systemd for a service whose output goes to the journal) equals
 * the device and inode of fstat(2) on descriptor 2, the check
 * systemd.exec(5) prescribes ("JOURNAL_STREAM"), so output redirected
 * elsewhere by the service's own shell gets no prefix.  Returns 1 or 0.
 */
int log_stderr_is_journal(void);

/*
 * log_target = journal: send every line as a native journal entry to the
 * datagram socket path (JOURNAL_SOCKET of core/journal.h, or "@name";
 * NULL turns it off), with MESSAGE, PRIORITY, SYSLOG_IDENTIFIER and the
 * fields EVENT, REQUEST_ID, TASK_CODE, NODE and ATTEMPT, so
 * `journalctl REQUEST_ID=r1` follows a task.  A line journald does not
 * take (not running, its queue full: the send never waits, entry over
 * 8 KiB) goes to stderr as configured.
 * Returns 0, or -1 with errno (EINVAL/ENAMETOOLONG for the path,
 * socket(2)'s errors).  Call before the daemon's threads start.
 */
int log_set_journal(const char *path);

/* Parse "err", "warn", "info" or "debug"; -1 if unknown. */
int log_level_parse(const char *s);

void log_set_level(enum log_level level);

enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_LOGFMT };

/* Parse "text" or "logfmt"; -1 if unknown. */
int log_format_parse(const char *s);

/* Choose the line format (default LOG_FORMAT_TEXT). */
void log_set_format(enum log_format f);

/*
 * Set the node id written as node= in logfmt lines (copied, at most 64
 * bytes; NULL or "" omits the field).
 */
void log_set_node(const char *node);

/*
 * Log one event about a task: event is a short dotted name
 * ("task.running", "task.retry", "task.success", ...), request_id and
 * task_code (either may be NULL) and attempt (<= 0 omitted) become
 * fields in logfmt; the formatted message is msg= (logfmt) or the whole
 * line body (text), so text output is what log_info() would print.
 */
void log_task(enum log_level lv, const char *event, const char *request_id,
    const char *task_code, int attempt, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/*
 * Write the "(repeated N times in S s)" lines of the warnings whose
 * 10 s window is over.  Cheap; a daemon calls it once per loop pass.
 */
void log_tick(void);

/* Write the pending "(repeated ...)" lines now (at exit). */
void log_flush(void);

/*
 * Tests: the monotonic clock of the repeat windows, in ms (NULL restores
 * CLOCK_MONOTONIC).
 */
void log_set_clock(int64_t (*now_ms)(void));

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Log at error level and exit(code); code is a sysexits value. */
void fatal(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
void fatalx(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/*
 * Copy s into out (outlen bytes, always NUL-terminated when outlen > 0),
 * escaping bytes < 0x20, 0x7f and backslash as \xNN so a hostile name
 * cannot forge log lines.  Returns out.  Truncates silently.
 */
char *log_safe(char *out, size_t outlen, const char *s);

#endif
