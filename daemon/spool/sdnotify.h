/*
 * sdnotify — the service manager's notification protocol, sd_notify(3):
 * a daemon started by systemd with Type=notify says when it is ready
 * (READY=1), reloading (RELOADING=1 ... READY=1), stopping (STOPPING=1),
 * what it is doing (STATUS=...) and that its main loop still turns
 * (WATCHDOG=1, at least every WatchdogSec=).  The protocol is one
 * datagram of newline-separated VAR=value lines to the AF_UNIX socket
 * named by $NOTIFY_SOCKET (a path, or "@name" for the abstract
 * namespace); it is implemented here rather than by linking libsystemd,
 * which the daemon needs for nothing else.  Without $NOTIFY_SOCKET every
 * call does nothing, so the daemon runs the same outside systemd.
 */
#ifndef TASKSPOOL_SDNOTIFY_H
#define TASKSPOOL_SDNOTIFY_H

#include <stdint.h>

/*
 * Send the printf-formatted state (e.g. "READY=1\nSTATUS=idle") to
 * $NOTIFY_SOCKET.  Returns 1 when sent, 0 when no socket is set (not run
 * by systemd), -1 with errno when the address is malformed (EINVAL), the
 * message longer than 4 KiB (EMSGSIZE), or socket(2)/sendto(2) failed.
 * Never blocks (a full socket buffer is EAGAIN).
 */
int sdnotify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The watchdog period systemd asks for, in ms: $WATCHDOG_USEC / 1000
 * when set to a whole number > 0 and $WATCHDOG_PID is unset or this
 * process's pid (sd_watchdog_enabled(3)); else 0 (no watchdog).  The
 * daemon sends WATCHDOG=1 every half of it, as that page advises.
 */
int64_t sdnotify_watchdog_ms(void);

#endif
