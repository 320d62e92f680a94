/*
 * dirstamp — the dependency benchmark's watch on one directory
 * (tests/bench/bench-deps.sh): every name renamed or linked into DIR
 * is appended to OUT as "<name> <epoch ns>\n", read from CLOCK_REALTIME
 * (the clock tests/tools/stamp.c reads) as soon as inotify(7) reports
 * it, until SIGTERM or SIGINT.  A name reported twice is written twice
 * (the reader keeps the first).  Prints numbers; asserts nothing.
 *   dirstamp DIR OUT
 * Exit 0, or 1 on a setup error.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	char ev[64 * 1024] __attribute__((aligned(8)));
	struct pollfd pfd;
	struct timespec ts;
	FILE *out;
	int ino;

	if (argc != 3) {
		fprintf(stderr, "usage: dirstamp DIR OUT\n");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if ((ino = inotify_init1(IN_CLOEXEC)) < 0 ||
	    inotify_add_watch(ino, argv[1], IN_MOVED_TO | IN_CREATE) < 0 ||
	    (out = fopen(argv[2], "w")) == NULL) {
		perror(argv[1]);
		return 1;
	}
	pfd.fd = ino;
	pfd.events = POLLIN;
	while (!stop) {
		ssize_t n;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if ((n = read(ino, ev, sizeof(ev))) <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		for (char *p = ev; p < ev + n;) {
			struct inotify_event *e = (struct inotify_event *)p;

			if (e->len > 0 && e->name[0] != '.')
				fprintf(out, "%s %lld\n", e->name,
				    (long long)ts.tv_sec * 1000000000LL +
				    ts.tv_nsec);
			p += sizeof(*e) + e->len;
		}
	}
	fclose(out);
	return 0;
}
