/*
 * wheelbench — memory and speed of the timing wheel (daemon/core/wheel.c).
 * Prints numbers; asserts nothing about speed.  It only fails (exit 70)
 * if the wheel loses or duplicates a fire, which would make the numbers
 * meaningless.
 *
 * One translation unit: the wheel is #included, so it builds alone with
 *	cc -O2 -o wheelbench tests/tools/wheelbench.c
 *
 * Workload: n records (default 1,000,000), each a struct bench_job (an
 * entry plus a 64-bit id, what a realistic caller keeps), each malloc'ed on
 * its own, due uniformly in (now, now + range] (default one day).
 *
 * Memory is reported two ways: counted (n * sizeof(struct bench_job) +
 * sizeof(struct wheel): what the data structure needs) and measured (the
 * growth of glibc's mallinfo2().uordblks while the wheel and the n records
 * are allocated: what the heap really spends, chunk headers and rounding
 * included).  The bench's own arrays are allocated before the baseline.
 *
 * Times are CLOCK_MONOTONIC wall time over the whole batch, divided by the
 * number of operations:
 *	insert	n wheel_insert() calls, in record order;
 *	cancel	n/2 wheel_cancel() calls on random records (the cancelled
 *		ones are then inserted again, untimed);
 *	advance	(a) the epoll loop: wheel_next_due(), wheel_advance() to it,
 *		until empty, divided by the n entries fired (calls counted);
 *		(b) all n inserted again, then one wheel_advance() over the
 *		whole range, divided by n.
 */
#include "../../daemon/core/wheel.c"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define EX_USAGE	64
#define EX_SOFTWARE	70
#define EX_OSERR	71

struct bench_job {
	struct wheel_entry we;
	uint64_t id;
};

struct bench_count {
	size_t fired;
	uint64_t early;		/* fires before their due time: must be 0 */
	struct wheel *w;
};

static uint64_t
bench_rnd(uint64_t *state)
{
	uint64_t z;

	z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
bench_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void
bench_fire(struct wheel_entry *e, void *arg)
{
	struct bench_count *c = arg;

	c->fired++;
	if (e->due_ms > wheel_now(c->w))
		c->early++;
}

static void
usage(void)
{
	fprintf(stderr, "usage: wheelbench [-n entries] [-r range_ms] "
	    "[-s seed]\n");
	exit(EX_USAGE);
}

static uint64_t
bench_number(const char *s, uint64_t min)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || s[0] == '-')
		usage();
	return v;
}

int
main(int argc, char *argv[])
{
	const uint64_t t0 = 1000000;	/* any start time will do */
	uint64_t n = 1000000, range = 24 * 3600 * 1000ULL, seed = 1, seed0;
	uint64_t *due, nd, i, j, calls, tmp;
	uint64_t *order;
	struct bench_job **job;
	struct bench_count c;
	struct mallinfo2 before, after;
	struct wheel *w;
	double t, heap;
	int ch;

	while ((ch = getopt(argc, argv, "n:r:s:")) != -1) {
		switch (ch) {
		case 'n':
			n = bench_number(optarg, 2);
			break;
		case 'r':
			range = bench_number(optarg, 1);
			break;
		case 's':
			seed = bench_number(optarg, 0);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	seed0 = seed;

	/* The bench's own arrays: outside the measured heap growth. */
	job = calloc(n, sizeof(*job));
	due = calloc(n, sizeof(*due));
	order = calloc(n, sizeof(*order));
	if (job == NULL || due == NULL || order == NULL) {
		perror("wheelbench: calloc");
		return EX_OSERR;
	}
	for (i = 0; i < n; i++) {
		due[i] = t0 + 1 + bench_rnd(&seed) % range;
		order[i] = i;
	}
	for (i = n - 1; i > 0; i--) {		/* Fisher-Yates */
		j = bench_rnd(&seed) % (i + 1);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}

	before = mallinfo2();
	if ((w = wheel_new(t0)) == NULL) {
		perror("wheelbench: wheel_new");
		return EX_OSERR;
	}
	for (i = 0; i < n; i++) {
		if ((job[i] = malloc(sizeof(*job[i]))) == NULL) {
			perror("wheelbench: malloc");
			return EX_OSERR;
		}
		wheel_entry_init(&job[i]->we);
		job[i]->id = i;
	}
	after = mallinfo2();
	heap = (double)(after.uordblks - before.uordblks);

	printf("wheelbench: n=%" PRIu64 " range=%" PRIu64 " ms seed=%" PRIu64
	    "\n", n, range, seed0);
	printf("sizeof: struct wheel_entry %zu, struct bench_job %zu "
	    "(entry + 64-bit id), struct wheel %zu\n",
	    sizeof(struct wheel_entry), sizeof(struct bench_job),
	    sizeof(struct wheel));
	printf("memory: counted %.1f bytes/entry (n records + one wheel)\n",
	    ((double)n * sizeof(struct bench_job) + sizeof(struct wheel)) /
	    (double)n);
	printf("memory: heap    %.1f bytes/entry (mallinfo2 uordblks growth, "
	    "one malloc per record, wheel included)\n", heap / (double)n);

	t = bench_clock();
	for (i = 0; i < n; i++)
		wheel_insert(w, &job[i]->we, due[i]);
	t = bench_clock() - t;
	printf("insert:  %6.1f ns/op\n", t / (double)n);

	t = bench_clock();
	for (i = 0; i < n / 2; i++)
		wheel_cancel(w, &job[order[i]]->we);
	t = bench_clock() - t;
	printf("cancel:  %6.1f ns/op (%" PRIu64 " random entries)\n",
	    t / (double)(n / 2), n / 2);
	for (i = 0; i < n / 2; i++)
		wheel_insert(w, &job[order[i]]->we, due[order[i]]);

	c.fired = 0;
	c.early = 0;
	c.w = w;
	calls = 0;
	t = bench_clock();
	while (wheel_next_due(w, &nd)) {
		wheel_advance(w, nd, bench_fire, &c);
		calls++;
	}
	t = bench_clock() - t;
	printf("advance: %6.1f ns/entry (epoll loop: %" PRIu64 " next_due + "
	    "advance calls for %zu fires)\n", t / (double)c.fired, calls,
	    c.fired);
	if (c.fired != n || c.early != 0) {
		fprintf(stderr, "wheelbench: %zu fired, %" PRIu64 " early, "
		    "want %" PRIu64 " and 0\n", c.fired, c.early, n);
		return EX_SOFTWARE;
	}

	for (i = 0; i < n; i++)
		wheel_insert(w, &job[i]->we, wheel_now(w) + (due[i] - t0));
	c.fired = 0;
	t = bench_clock();
	wheel_advance(w, wheel_now(w) + range, bench_fire, &c);
	t = bench_clock() - t;
	printf("advance: %6.1f ns/entry (one jump of %" PRIu64 " ms)\n",
	    t / (double)c.fired, range);
	if (c.fired != n || c.early != 0) {
		fprintf(stderr, "wheelbench: %zu fired, %" PRIu64 " early, "
		    "want %" PRIu64 " and 0\n", c.fired, c.early, n);
		return EX_SOFTWARE;
	}

	wheel_free(w);
	for (i = 0; i < n; i++)
		free(job[i]);
	free(job);
	free(due);
	free(order);
	return 0;
}
