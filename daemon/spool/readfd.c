/*
 * readfd — read a descriptor into a buffer; see readfd.h (read(2)).
 */
#include "spool/readfd.h"

#include <errno.h>
#include <unistd.h>

int
buf_read_fd(struct buf *b, int fd)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return 0;
		if (buf_append(b, chunk, (size_t)n) != 0)
			return -1;
	}
}
