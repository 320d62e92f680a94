/*
 * unixdgram — one datagram to a local AF_UNIX socket named by a path or,
 * with a leading '@', by a name in the abstract namespace (unix(7)), the
 * addressing sd_notify(3) defines for $NOTIFY_SOCKET and journald's
 * native protocol uses (/run/systemd/journal/socket).  Shared by
 * sdnotify.c and log.c's journal target.
 */
#ifndef TASKSPOOL_UNIXDGRAM_H
#define TASKSPOOL_UNIXDGRAM_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/*
 * Fill *sa for path ("/..." or "@name", at least 2 bytes, shorter than
 * sun_path).  Returns the address length to give sendto(2), or 0 with
 * errno EINVAL (no '/' or '@' first, too short) or ENAMETOOLONG.
 */
socklen_t unixdgram_addr(struct sockaddr_un *sa, const char *path);

/*
 * sendto(2) of buf[0..len) on the datagram socket fd to sa (salen from
 * unixdgram_addr), retried on EINTR.  Returns 0 when the whole datagram
 * went, or -1 with sendto's errno (ENOENT, ECONNREFUSED: nobody
 * listens; EAGAIN on a non-blocking socket whose peer is full;
 * EMSGSIZE).  SIGPIPE is never raised.
 */
int unixdgram_send(int fd, const struct sockaddr_un *sa, socklen_t salen,
    const void *buf, size_t len);

#endif
