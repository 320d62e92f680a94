/*
 * cbsink — a minimal HTTP/1.1 callback receiver for `make bench`: it
 * answers every request with "200 OK" (keep-alive), counts requests, and
 * checks nothing (the scenario tests verify signatures with cbrecv.py).
 *
 *     cbsink PORTFILE NPORTS
 *
 * Listens on NPORTS free ports of 127.0.0.1 (written to PORTFILE, one per
 * line, once listening); one epoll loop; exits on SIGTERM, printing the
 * number of requests answered to stdout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXPORTS 64
#define BUFSZ 65536

struct conn {
	int fd;
	size_t len;
	char buf[BUFSZ];
};

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* Answer every complete request in c->buf; returns requests answered or
 * -1 when the connection must be closed. */
static long
serve(struct conn *c)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	long n = 0;

	for (;;) {
		char *end, *cl;
		size_t hlen, blen = 0;

		c->buf[c->len] = '\0';
		end = strstr(c->buf, "\r\n\r\n");
		if (end == NULL)
			return c->len >= BUFSZ - 1 ? -1 : n;
		hlen = (size_t)(end - c->buf) + 4;
		cl = strcasestr(c->buf, "\r\ncontent-length:");
		if (cl != NULL && cl < end)
			blen = strtoul(cl + 17, NULL, 10);
		if (hlen + blen >= BUFSZ)
			return -1;
		if (c->len < hlen + blen)
			return n;
		if (write(c->fd, ok, sizeof(ok) - 1) != (ssize_t)sizeof(ok) - 1)
			return -1;
		n++;
		memmove(c->buf, c->buf + hlen + blen, c->len - hlen - blen);
		c->len -= hlen + blen;
	}
}

int
main(int argc, char **argv)
{
	int lfd[MAXPORTS], nports, ep;
	long total = 0;
	FILE *fp;
	char tmp[4096];
	struct epoll_event ev;

	if (argc != 3 || (nports = atoi(argv[2])) < 1 || nports > MAXPORTS) {
		fprintf(stderr, "usage: cbsink PORTFILE NPORTS\n");
		return 64;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	ep = epoll_create1(EPOLL_CLOEXEC);
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	if (ep < 0 || (fp = fopen(tmp, "w")) == NULL)
		return 71;
	for (int i = 0; i < nports; i++) {
		struct sockaddr_in a;
		socklen_t al = sizeof(a);

		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		lfd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (lfd[i] < 0 || bind(lfd[i], (struct sockaddr *)&a,
		    sizeof(a)) != 0 || listen(lfd[i], 512) != 0 ||
		    getsockname(lfd[i], (struct sockaddr *)&a, &al) != 0)
			return 71;
		fprintf(fp, "%d\n", ntohs(a.sin_port));
		ev.events = EPOLLIN;
		ev.data.ptr = NULL;
		ev.data.u64 = (uint64_t)i;	/* < MAXPORTS: a listener */
		epoll_ctl(ep, EPOLL_CTL_ADD, lfd[i], &ev);
	}
	if (fclose(fp) != 0 || rename(tmp, argv[1]) != 0)
		return 71;
	while (!stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 200);

		for (int k = 0; k < n; k++) {
			if (evs[k].data.u64 < MAXPORTS) {
				int fd = accept4(lfd[evs[k].data.u64], NULL, NULL,
				    SOCK_NONBLOCK);
				struct conn *c;

				if (fd < 0 || (c = calloc(1, sizeof(*c))) == NULL) {
					if (fd >= 0)
						close(fd);
					continue;
				}
				c->fd = fd;
				ev.events = EPOLLIN;
				ev.data.ptr = c;
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
			} else {
				struct conn *c = evs[k].data.ptr;
				ssize_t r = read(c->fd, c->buf + c->len,
				    BUFSZ - 1 - c->len);
				long got;

				if (r > 0) {
					c->len += (size_t)r;
					got = serve(c);
				} else
					got = r < 0 && errno == EAGAIN ? 0 : -1;
				if (got < 0) {
					close(c->fd);
					free(c);
				} else
					total += got;
			}
		}
	}
	printf("%ld\n", total);
	return 0;
}
