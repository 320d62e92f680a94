/*
 * spoolbench — drives a running taskspoold for `make bench`.
 *
 *   spoolbench throughput SPOOL N   stage N task files (taskCode "stamp")
 *       in tmp/ (written and fsynced beforehand), then rename them all
 *       into incoming/ and wait, by inotify on done/, until N tasks are
 *       done.  Prints "throughput N WALL_S TASKS_PER_S".
 *   spoolbench latency SPOOL M      M times: stage one file, note the time
 *       just before rename(2) into incoming/, wait until it is in done/.
 *       Then reads SPOOL/stamps.log (the stamp hook's start times) and
 *       prints "latency M P50_MS P99_MS MAX_MS" of hook start − rename.
 * Prints numbers; asserts nothing about speed.  Exit 1 on a setup error
 * or when tasks do not finish within 300 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
stage(const char *spool, const char *id)
{
	char path[4096], body[256];
	int fd, n;

	snprintf(path, sizeof(path), "%s/tmp/bench.%s", spool, id);
	n = snprintf(body, sizeof(body), "{\"requestId\":\"%s\","
	    "\"taskCode\":\"stamp\"}", id);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, body, (size_t)n) != n || fsync(fd) != 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static void
publish(const char *spool, const char *id)
{
	char from[4096], to[4096];

	snprintf(from, sizeof(from), "%s/tmp/bench.%s", spool, id);
	snprintf(to, sizeof(to), "%s/incoming/%s.json", spool, id);
	if (rename(from, to) != 0) {
		perror(to);
		exit(1);
	}
}

/* Wait until `want` files have been moved into done/. */
static int
wait_done(int ino, int want)
{
	char buf[65536] __attribute__((aligned(8)));
	int got = 0;
	long long deadline = now_ns() + 300000000000LL;

	while (got < want) {
		struct pollfd p = { ino, POLLIN, 0 };
		ssize_t len;

		if (now_ns() > deadline)
			return -1;
		if (poll(&p, 1, 1000) <= 0)
			continue;
		len = read(ino, buf, sizeof(buf));
		for (char *q = buf; len > 0 && q < buf + len;) {
			struct inotify_event *ev = (void *)q;

			q += sizeof(*ev) + ev->len;
			if (ev->mask & IN_MOVED_TO)
				got++;
		}
	}
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	char path[4096], id[64];
	int n, ino;
	long long t0;

	if (argc != 4 || (n = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: spoolbench throughput|latency SPOOL N\n");
		return 64;
	}
	ino = inotify_init1(IN_CLOEXEC);
	snprintf(path, sizeof(path), "%s/done", argv[2]);
	if (ino < 0 || inotify_add_watch(ino, path, IN_MOVED_TO) < 0) {
		perror(path);
		return 1;
	}
	if (strcmp(argv[1], "throughput") == 0) {
		for (int i = 0; i < n; i++) {
			snprintf(id, sizeof(id), "tp%06d", i);
			stage(argv[2], id);
		}
		t0 = now_ns();
		for (int i = 0; i < n; i++) {
			snprintf(id, sizeof(id), "tp%06d", i);
			publish(argv[2], id);
		}
		if (wait_done(ino, n) != 0) {
			fprintf(stderr, "spoolbench: timed out\n");
			return 1;
		}
		{
			double wall = (double)(now_ns() - t0) / 1e9;

			printf("throughput %d %.3f %.1f\n", n, wall, n / wall);
		}
		return 0;
	}
	if (strcmp(argv[1], "latency") == 0) {
		long long *sent = calloc((size_t)n, sizeof(*sent));
		double *lat = calloc((size_t)n, sizeof(*lat));
		FILE *fp;
		char line[256];
		int m = 0;

		for (int i = 0; i < n; i++) {
			snprintf(id, sizeof(id), "lat%06d", i);
			stage(argv[2], id);
			usleep(2000);	/* an idle daemon between drops */
			sent[i] = now_ns();
			publish(argv[2], id);
			if (wait_done(ino, 1) != 0)
				return 1;
		}
		snprintf(path, sizeof(path), "%s/stamps.log", argv[2]);
		fp = fopen(path, "r");
		while (fp != NULL && fgets(line, sizeof(line), fp) != NULL) {
			int k;
			long long ns;

			if (sscanf(line, "lat%d %lld", &k, &ns) == 2 && k >= 0 &&
			    k < n)
				lat[m++] = (double)(ns - sent[k]) / 1e6;
		}
		if (fp != NULL)
			fclose(fp);
		if (m == 0) {
			fprintf(stderr, "spoolbench: no stamps in %s\n", path);
			return 1;
		}
		qsort(lat, (size_t)m, sizeof(*lat), cmp);
		printf("latency %d %.3f %.3f %.3f\n", m, lat[m / 2],
		    lat[(m * 99) / 100 < m ? (m * 99) / 100 : m - 1],
		    lat[m - 1]);
		return 0;
	}
	fprintf(stderr, "usage: spoolbench throughput|latency SPOOL N\n");
	return 64;
}
