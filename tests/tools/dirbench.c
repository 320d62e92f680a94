/*
 * dirbench — directory operations at large sizes, for the spool layout
 * question (issue 6: done/ and results/ at 1,000,000 files).
 *
 *   dirbench DIR N [FANOUT]
 *
 * Fills DIR/d (flat, FANOUT 0) or DIR/d/<xx>/ (FANOUT subdirectories named
 * by two hex digits of a hash of the name, FANOUT <= 256) with empty files
 * named like task files ("req_<n>.json"), and at 10,000, 100,000 and
 * 1,000,000 files (up to N) measures, each over K = 5,000 operations:
 *   create   openat(O_CREAT|O_EXCL) + close of K new names
 *   rename   renameat of K files from a staging directory into place
 *   lookup   fstatat of K random existing names (a cold-ish cache: the
 *            names are spread over the whole directory)
 *   miss     fstatat of K names that do not exist (the claim's check
 *            "results/<id> exists?")
 *   readdir  one full scan (all subdirectories for a fan-out), whole time
 * Prints one line per size: "size N create_us rename_us lookup_us miss_us
 * readdir_ms" (µs per operation, ms per scan).  The files stay (the caller
 * removes DIR).  Asserts nothing; exit 1 on a setup error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define K 5000

static int fanout, top, stage, sub[256];

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
dir_of(const char *name)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	if (fanout == 0)
		return top;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return sub[h % (uint32_t)fanout];
}

static void
name_of(char *buf, size_t len, long i)
{
	snprintf(buf, len, "req_%08ld.json", i);
}

static int
create_one(long i)
{
	char nm[64];
	int fd;

	name_of(nm, sizeof(nm), i);
	fd = openat(dir_of(nm), nm, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644);
	if (fd < 0) {
		perror(nm);
		return -1;
	}
	close(fd);
	return 0;
}

static long
scan(int dfd)
{
	DIR *d = fdopendir(dup(dfd));
	struct dirent *de;
	long n = 0;

	if (d == NULL)
		return 0;
	rewinddir(d);
	while ((de = readdir(d)) != NULL)
		n++;
	closedir(d);
	return n;
}

int
main(int argc, char **argv)
{
	static const long sizes[] = { 10000, 100000, 1000000 };
	long n, have = 0;
	char path[4096], nm[64];
	struct stat st;
	unsigned seed = 12345;

	if (argc < 3) {
		fprintf(stderr, "usage: dirbench DIR N [FANOUT]\n");
		return 1;
	}
	n = atol(argv[2]);
	fanout = argc > 3 ? atoi(argv[3]) : 0;
	if (fanout < 0 || fanout > 256)
		return 1;
	snprintf(path, sizeof(path), "%s/d", argv[1]);
	mkdir(path, 0755);
	top = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/stage", argv[1]);
	mkdir(path, 0755);
	stage = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0 || stage < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < fanout; i++) {
		char x[8];

		snprintf(x, sizeof(x), "%02x", i);
		mkdirat(top, x, 0755);
		sub[i] = openat(top, x, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub[i] < 0)
			return 1;
	}
	printf("# dirbench %s: fan-out %d; µs per operation over %d, "
	    "readdir ms per full scan\n", argv[1], fanout, K);
	printf("%-9s %9s %9s %9s %9s %10s\n", "files", "create", "rename",
	    "lookup", "miss", "readdir");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		long target = sizes[s] - 2 * K;
		double t0, tc, tr, tl, tm, td;
		long cnt = 0;

		if (sizes[s] > n)
			break;
		/* Fill (untimed) to size - 2K: the timed phases add 2K. */
		for (; have < target; have++)
			if (create_one(have) != 0)
				return 1;
		t0 = now_us();
		for (long i = 0; i < K; i++, have++)
			if (create_one(have) != 0)
				return 1;
		tc = (now_us() - t0) / K;
		for (long i = 0; i < K; i++) {
			int fd;

			name_of(nm, sizeof(nm), have + i);
			fd = openat(stage, nm, O_WRONLY | O_CREAT | O_EXCL |
			    O_CLOEXEC, 0644);
			if (fd < 0)
				return 1;
			close(fd);
		}
		sync();
		t0 = now_us();
		for (long i = 0; i < K; i++) {
			name_of(nm, sizeof(nm), have + i);
			if (renameat(stage, nm, dir_of(nm), nm) != 0) {
				perror("rename");
				return 1;
			}
		}
		tr = (now_us() - t0) / K;
		have += K;
		t0 = now_us();
		for (long i = 0; i < K; i++) {
			name_of(nm, sizeof(nm), (long)(rand_r(&seed) %
			    (unsigned)have));
			if (fstatat(dir_of(nm), nm, &st, 0) != 0)
				return 1;
		}
		tl = (now_us() - t0) / K;
		t0 = now_us();
		for (long i = 0; i < K; i++) {
			name_of(nm, sizeof(nm), have + 1000000 + i);
			if (fstatat(dir_of(nm), nm, &st, 0) == 0)
				return 1;
		}
		tm = (now_us() - t0) / K;
		t0 = now_us();
		if (fanout == 0)
			cnt = scan(top) - 2;
		else
			for (int i = 0; i < fanout; i++)
				cnt += scan(sub[i]) - 2;
		td = (now_us() - t0) / 1000;
		if (cnt != have) {
			fprintf(stderr, "readdir saw %ld of %ld\n", cnt, have);
			return 1;
		}
		printf("%-9ld %9.1f %9.1f %9.1f %9.1f %10.1f\n", have, tc, tr,
		    tl, tm, td);
		fflush(stdout);
	}
	return 0;
}
