/*
 * sdnotify — sd_notify(3)'s datagram to $NOTIFY_SOCKET; see sdnotify.h.
 */
#include "spool/sdnotify.h"

#include "spool/unixdgram.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SDNOTIFY_MAX	4096	/* bytes of one message */

int
sdnotify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	char msg[SDNOTIFY_MAX];
	socklen_t salen;
	va_list ap;
	int fd, n, rc, saved;

	if (path == NULL || path[0] == '\0')
		return 0;
	if ((salen = unixdgram_addr(&sa, path)) == 0) {
		errno = EINVAL;
		return -1;
	}
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(msg)) {
		errno = EMSGSIZE;
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) < 0)
		return -1;
	rc = unixdgram_send(fd, &sa, salen, msg, (size_t)n);
	saved = errno;
	close(fd);
	errno = saved;
	return rc == 0 ? 1 : -1;
}

int64_t
sdnotify_watchdog_ms(void)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	long long v;

	if (us == NULL || us[0] < '0' || us[0] > '9')
		return 0;
	if (pid != NULL) {
		long long p = strtoll(pid, &end, 10);

		if (*end != '\0' || p != (long long)getpid())
			return 0;
	}
	errno = 0;
	v = strtoll(us, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0)
		return 0;
	return v / 1000 > 0 ? v / 1000 : 1;
}
