/*
 * unixdgram — a datagram to an AF_UNIX path or abstract name; see
 * unixdgram.h.
 */
#include "spool/unixdgram.h"

#include <errno.h>
#include <string.h>

socklen_t
unixdgram_addr(struct sockaddr_un *sa, const char *path)
{
	size_t plen = strlen(path);

	if ((path[0] != '/' && path[0] != '@') || plen < 2) {
		errno = EINVAL;
		return 0;
	}
	if (plen >= sizeof(sa->sun_path)) {
		errno = ENAMETOOLONG;
		return 0;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, plen);
	if (path[0] == '@') {
		/* The abstract namespace: a leading NUL, no terminator
		 * counted (unix(7)). */
		sa->sun_path[0] = '\0';
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    plen);
	}
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + 1);
}

int
unixdgram_send(int fd, const struct sockaddr_un *sa, socklen_t salen,
    const void *buf, size_t len)
{
	ssize_t w;

	do
		w = sendto(fd, buf, len, MSG_NOSIGNAL,
		    (const struct sockaddr *)sa, salen);
	while (w < 0 && errno == EINTR);
	if (w >= 0 && (size_t)w != len) {
		errno = EMSGSIZE;
		return -1;
	}
	return w < 0 ? -1 : 0;
}
