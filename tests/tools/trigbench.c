/*
 * trigbench — helpers for tests/bench/bench-triggers.sh (numbers only).
 *
 *   trigbench jobs SPOOL N [OVERLAP]
 *	write N recurring jobs jobs/b<NNNNNNN>.json, each Quartz
 *	"* * * * * ?" in UTC with hook "stamp" (overlap default "allow", so
 *	every job fires every second whatever the hooks do).
 *   trigbench watch SPOOL FROM_S TO_S UNTIL_S [EXPECT]
 *	watch SPOOL/incoming with inotify until epoch second UNTIL_S; for each
 *	task file that appears (IN_CREATE, IN_MOVED_TO) named
 *	<code>.<yyyymmddThhmmss[mmm]Z>.json with a due instant in
 *	[FROM_S, TO_S), lateness = the time the event was read - the due
 *	instant.  Prints "n <count> p50 <ms> p99 <ms> max <ms> overflow <k>".
 *	The read time is an upper bound of the creation time (events read in
 *	one batch share the later time).  With EXPECT (the number of fires due
 *	in the window), fires never seen count as later than every one seen,
 *	and a percentile among them prints "unseen".
 *   trigbench stamps FILE FROM_S TO_S [EXPECT]
 *	the same statistics over the stamp hook's "<requestId> <epoch ns>"
 *	lines (hook start - due instant), plus "dup <k>": ids started twice.
 *   trigbench delayed SPOOL N AHEAD_S
 *	create N task files directly in SPOOL/delayed/, named like generated
 *	requestIds (req_<utc>_<12 hex>.json, 41 bytes), due AHEAD_S from now
 *	(the due time is the mtime, as the writer protocol sets it).
 *   trigbench hold FILE
 *	take flock(LOCK_EX) on FILE, print "locked", then sleep until killed
 *	(keeps a daemon from becoming the leader).
 *
 * Standalone: libc only.  Exit 0, or 1 with a message on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

/* Write data to dir/name through dir/../tmp (tmp + rename). */
static void
publish(const char *spool, const char *dir, const char *name,
    const char *data, size_t len)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/tmp/trigbench.%d", spool, (int)getpid());
	snprintf(dst, sizeof(dst), "%s/%s/%s", spool, dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) != 0)
		die(tmp);
	if (rename(tmp, dst) != 0)
		die(dst);
}

static int
cmd_jobs(const char *spool, long n, const char *overlap)
{
	char name[64], body[512];

	for (long i = 0; i < n; i++) {
		int l;

		snprintf(name, sizeof(name), "b%07ld.json", i);
		l = snprintf(body, sizeof(body), "{\"jobCode\":\"b%07ld\","
		    "\"taskCode\":\"stamp\",\"cron\":\"* * * * * ?\","
		    "\"dialect\":\"quartz\",\"timezone\":\"UTC\","
		    "\"overlap\":\"%s\"}\n", i, overlap);
		publish(spool, "jobs", name, body, (size_t)l);
	}
	return 0;
}

/*
 * The due instant (epoch ms) of a fire from its requestId or file name
 * "<code>.<yyyymmddThhmmss[mmm]Z>[.json]"; -1 if it is not one.
 */
static int64_t
due_of(const char *name)
{
	char buf[256], *dot, *st;
	size_t l = strlen(name);
	struct tm tm;
	int ms = 0;

	if (l >= sizeof(buf))
		return -1;
	memcpy(buf, name, l + 1);
	if (l > 5 && strcmp(buf + l - 5, ".json") == 0)
		buf[l - 5] = '\0';
	if ((dot = strrchr(buf, '.')) == NULL)
		return -1;
	st = dot + 1;
	l = strlen(st);
	if ((l != 16 && l != 19) || st[8] != 'T' || st[l - 1] != 'Z')
		return -1;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(st, "%4d%2d%2dT%2d%2d%2d", &tm.tm_year, &tm.tm_mon,
	    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	if (l == 19 && sscanf(st + 15, "%3d", &ms) != 1)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}

struct vec {
	int64_t *v;
	size_t n, cap;
};

static void
push(struct vec *a, int64_t x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 4096;
		if ((a->v = realloc(a->v, a->cap * sizeof(*a->v))) == NULL)
			die("realloc");
	}
	a->v[a->n++] = x;
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Print "n N p50 X p99 X max X" of ns values in ms.  With expect > n the
 * missing values count as later than any seen: a percentile that falls
 * among them prints as "unseen".
 */
static void
pct(const struct vec *a, size_t total, size_t idx)
{
	if (idx >= a->n || total == 0)
		printf(" unseen");
	else
		printf(" %.3f", a->v[idx] / 1e6);
}

static void
stats(struct vec *a, size_t expect)
{
	size_t total = expect > a->n ? expect : a->n, i99;

	qsort(a->v, a->n, sizeof(*a->v), cmp64);
	i99 = (total * 99 + 99) / 100;	/* ceil(0.99 total) - 1 */
	if (i99 > 0)
		i99--;
	printf("n %zu p50", a->n);
	pct(a, total, total > 0 ? (total - 1) / 2 : 0);
	printf(" p99");
	pct(a, total, i99);
	printf(" max");
	pct(a, total, total - 1);
}

static int
cmd_watch(const char *spool, int64_t from_s, int64_t to_s, int64_t until_s,
    size_t expect)
{
	char path[PATH_MAX];
	char evbuf[256 * 1024] __attribute__((aligned(8)));
	struct vec lat = { 0 };
	long overflow = 0;
	int ino;

	snprintf(path, sizeof(path), "%s/incoming", spool);
	ino = inotify_init1(IN_CLOEXEC);
	if (ino < 0 || inotify_add_watch(ino, path, IN_CREATE | IN_MOVED_TO |
	    IN_ONLYDIR) < 0)
		die(path);
	/* Tell the caller the watch is in place. */
	printf("watching\n");
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { ino, POLLIN, 0 };
		int64_t t = now_ns(), left = until_s * 1000 - t / 1000000;
		ssize_t len;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left) <= 0)
			continue;
		len = read(ino, evbuf, sizeof(evbuf));
		t = now_ns();
		if (len <= 0)
			continue;
		for (char *p = evbuf; p < evbuf + len;) {
			struct inotify_event *ev = (struct inotify_event *)
			    (void *)p;
			int64_t due;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				overflow++;
				continue;
			}
			if (ev->len == 0 || (due = due_of(ev->name)) < 0 ||
			    due < from_s * 1000 || due >= to_s * 1000)
				continue;
			push(&lat, t - due * 1000000);
		}
	}
	stats(&lat, expect);
	printf(" overflow %ld\n", overflow);
	return 0;
}

/* FNV-1a of s: an id's fingerprint for finding duplicates. */
static int64_t
fnv(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return (int64_t)(h >> 1);
}

static int
cmd_stamps(const char *file, int64_t from_s, int64_t to_s, size_t expect)
{
	char line[512], id[256];
	struct vec lat = { 0 }, dues = { 0 };
	long long ns;
	long dup = 0;
	FILE *fp = fopen(file, "r");

	if (fp == NULL) {
		stats(&lat, expect);	/* no hook ran at all */
		printf(" dup 0\n");
		return 0;
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		int64_t due;

		if (sscanf(line, "%255s %lld", id, &ns) != 2 ||
		    (due = due_of(id)) < 0 || due < from_s * 1000 ||
		    due >= to_s * 1000)
			continue;
		push(&lat, ns - due * 1000000);
		push(&dues, fnv(id));
	}
	fclose(fp);
	/* Duplicates: the same requestId (job, instant) started twice. */
	qsort(dues.v, dues.n, sizeof(*dues.v), cmp64);
	for (size_t i = 1; i < dues.n; i++)
		if (dues.v[i] == dues.v[i - 1])
			dup++;
	stats(&lat, expect);
	printf(" dup %ld\n", dup);
	return 0;
}

static int
cmd_delayed(const char *spool, long n, long ahead_s)
{
	char path[PATH_MAX], body[256], id[64], stamp[32];
	int64_t t0 = now_ns();
	time_t due = (time_t)(t0 / 1000000000LL) + ahead_s;
	struct timespec ts[2] = { { due, 0 }, { due, 0 } };
	struct tm tm;
	int dfd;

	snprintf(path, sizeof(path), "%s/delayed", spool);
	dfd = open(path, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die(path);
	gmtime_r(&due, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	for (long i = 0; i < n; i++) {
		int fd, l;

		/* req_<utc with ms>_<12 hex>, as generated ids look */
		snprintf(id, sizeof(id), "req_%s%03ldZ_%012lx", stamp, i % 1000,
		    (unsigned long)i * 2654435761UL % 0xffffffffffffUL);
		l = snprintf(body, sizeof(body), "{\"requestId\":\"%s\","
		    "\"taskCode\":\"stamp\"}\n", id);
		snprintf(path, sizeof(path), "%s.json", id);
		fd = openat(dfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0644);
		if (fd < 0 || write(fd, body, (size_t)l) != l ||
		    futimens(fd, ts) != 0 || close(fd) != 0)
			die(path);
	}
	close(dfd);
	fprintf(stderr, "trigbench: %ld files in delayed/ in %.1f s\n", n,
	    (now_ns() - t0) / 1e9);
	return 0;
}

static _Noreturn void
cmd_hold(const char *file)
{
	int fd = open(file, O_RDWR | O_CREAT, 0640);

	if (fd < 0 || flock(fd, LOCK_EX) != 0)
		die(file);
	printf("locked\n");
	fflush(stdout);
	for (;;)
		pause();
}

int
main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (strcmp(m, "jobs") == 0 && (argc == 4 || argc == 5))
		return cmd_jobs(argv[2], atol(argv[3]), argc == 5 ? argv[4] :
		    "allow");
	if (strcmp(m, "watch") == 0 && (argc == 6 || argc == 7))
		return cmd_watch(argv[2], atoll(argv[3]), atoll(argv[4]),
		    atoll(argv[5]), argc == 7 ? (size_t)atol(argv[6]) : 0);
	if (strcmp(m, "stamps") == 0 && (argc == 5 || argc == 6))
		return cmd_stamps(argv[2], atoll(argv[3]), atoll(argv[4]),
		    argc == 6 ? (size_t)atol(argv[5]) : 0);
	if (strcmp(m, "delayed") == 0 && argc == 5)
		return cmd_delayed(argv[2], atol(argv[3]), atol(argv[4]));
	if (strcmp(m, "hold") == 0 && argc == 3)
		cmd_hold(argv[2]);
	fprintf(stderr, "usage: trigbench jobs SPOOL N [OVERLAP] | watch SPOOL "
	    "FROM_S TO_S UNTIL_S [EXPECT] |\n       stamps FILE FROM_S TO_S "
	    "[EXPECT] | delayed "
	    "SPOOL N AHEAD_S | hold FILE\n");
	return 64;
}
