/*
 * check_gcra.c — unit tests for daemon/core/gcra.c (the GCRA), for
 * daemon/core/ratespec.c (the rate_limit value) and for the file backend
 * of daemon/coord/execrate.c (state/rates/, with and without a key).
 * The Redis backend runs against a real redis-server in
 * tests/scenario/t0091-rate-limit.sh.
 *
 * The clock is injected: every instant is an argument.  Expected values
 * are worked out by hand from gcra.h: T = ceil(P / N), tau = T * (B - 1);
 * at now with state TAT, tat = max(TAT, now) clamped to now + tau + T;
 * allowed when now >= tat - tau (then TAT = tat + T), else wait
 * tat - tau - now.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "coord/coord.h"
#include "coord/coord_open.h"
#include "coord/execrate.h"
#include "core/gcra.h"
#include "core/ratespec.h"
#include "spool/config.h"
#include "spool/spool.h"
#include "unit.h"

/* One row of a sequence: a start asked for at now; allowed or the
 * wait, and the TAT kept after it. */
struct step {
	int64_t now;
	int allowed;
	int64_t wait, tat;
};

/* Run steps from the state tat under (n, period, burst). */
static void
run_steps(const char *what, int64_t n, int64_t period, int64_t burst,
    int64_t tat, const struct step *s, size_t ns)
{
	struct gcra_params p;

	ck_assert_int_eq(gcra_params(n, period, burst, &p), 0);
	for (size_t i = 0; i < ns; i++) {
		int64_t nt = -1, w = -1;
		int got = gcra_take(&p, tat, s[i].now, &nt, &w);

		ck_assert_msg(got == s[i].allowed && w == s[i].wait &&
		    nt == s[i].tat, "%s row %zu: at %lld: got %d wait %lld "
		    "tat %lld, want %d wait %lld tat %lld", what, i,
		    (long long)s[i].now, got, (long long)w, (long long)nt,
		    s[i].allowed, (long long)s[i].wait, (long long)s[i].tat);
		tat = nt;
	}
}

START_TEST(test_params)
{
	static const struct {
		int64_t n, period, burst;
		int rc;
		int64_t t, tau;
	} cases[] = {
		{ 10, 1000, 10, 0, 100, 900 },		/* 1000/10, 100*9 */
		{ 10, 1000, 1, 0, 100, 0 },
		{ 10, 60000, 10, 0, 6000, 54000 },	/* 10/1m */
		{ 7, 1000, 7, 0, 143, 858 },		/* ceil(142.86), 143*6 */
		{ 1, 1000, 1, 0, 1000, 0 },
		{ 1, 1, 1, 0, 1, 0 },			/* 1/1ms */
		{ 3, 1000, 20, 0, 334, 6346 },		/* ceil(333.3), 334*19 */
		{ 0, 1000, 1, -1, 0, 0 },		/* N < 1 */
		{ 1001, 1000, 1, -1, 0, 0 },		/* T < 1 ms */
		{ 10, 1000, 0, -1, 0, 0 },		/* burst < 1 */
		{ 1, INT64_C(1) << 40, INT64_C(1) << 30, -1, 0, 0 }, /* tau */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gcra_params p = { -7, -7 };
		int rc = gcra_params(cases[i].n, cases[i].period,
		    cases[i].burst, &p);

		ck_assert_msg(rc == cases[i].rc, "row %zu: rc %d", i, rc);
		if (rc == 0)
			ck_assert_msg(p.interval_ms == cases[i].t &&
			    p.tolerance_ms == cases[i].tau, "row %zu: T %lld "
			    "tau %lld", i, (long long)p.interval_ms,
			    (long long)p.tolerance_ms);
		else
			ck_assert(p.interval_ms == -7);
	}
}
END_TEST

START_TEST(test_burst_10)
{
	/* 10/1s burst 10: T = 100, tau = 900. */
	static const struct step s[] = {
		{ 0, 1, 0, 100 }, { 0, 1, 0, 200 }, { 0, 1, 0, 300 },
		{ 0, 1, 0, 400 }, { 0, 1, 0, 500 }, { 0, 1, 0, 600 },
		{ 0, 1, 0, 700 }, { 0, 1, 0, 800 }, { 0, 1, 0, 900 },
		{ 0, 1, 0, 1000 },		/* the 10th: tat 900 - 900 = 0 */
		{ 0, 0, 100, 1000 },		/* 11th: 1000 - 900 - 0 */
		{ 99, 0, 1, 1000 },
		{ 100, 1, 0, 1100 },		/* one more at t = 100 */
		{ 100, 0, 100, 1100 },		/* next at 1100 - 900 = 200 */
		{ 250, 1, 0, 1200 },		/* 250 >= 200 */
		{ 250, 0, 50, 1200 },		/* 1200 - 900 - 250 */
		{ 300, 1, 0, 1300 },
		/* idle 5 s: the bucket is full again, 10 at once */
		{ 5300, 1, 0, 5400 }, { 5300, 1, 0, 5500 },
		{ 5300, 1, 0, 5600 }, { 5300, 1, 0, 5700 },
		{ 5300, 1, 0, 5800 }, { 5300, 1, 0, 5900 },
		{ 5300, 1, 0, 6000 }, { 5300, 1, 0, 6100 },
		{ 5300, 1, 0, 6200 }, { 5300, 1, 0, 6300 },
		{ 5300, 0, 100, 6300 },
	};

	run_steps("10/1s:10", 10, 1000, 10, GCRA_NONE, s,
	    sizeof(s) / sizeof(s[0]));
}
END_TEST

START_TEST(test_sequences)
{
	/* 10/1s burst 1: T = 100, tau = 0: one every 100 ms, never two at
	 * once. */
	static const struct step b1[] = {
		{ 0, 1, 0, 100 },
		{ 0, 0, 100, 100 },
		{ 50, 0, 50, 100 },
		{ 100, 1, 0, 200 },
		{ 150, 0, 50, 200 },
		{ 350, 1, 0, 450 },		/* idle: max(200, 350) + 100 */
		{ 350, 0, 100, 450 },
		{ 449, 0, 1, 450 },
		{ 450, 1, 0, 550 },
	};
	/* 2/1s burst 3: T = 500, tau = 1000. */
	static const struct step b3[] = {
		{ 0, 1, 0, 500 }, { 0, 1, 0, 1000 }, { 0, 1, 0, 1500 },
		{ 0, 0, 500, 1500 },		/* 1500 - 1000 - 0 */
		{ 500, 1, 0, 2000 },
		{ 600, 0, 400, 2000 },		/* 2000 - 1000 - 600 */
	};

	run_steps("10/1s:1", 10, 1000, 1, GCRA_NONE, b1,
	    sizeof(b1) / sizeof(b1[0]));
	run_steps("2/1s:3", 2, 1000, 3, GCRA_NONE, b3,
	    sizeof(b3) / sizeof(b3[0]));
}
END_TEST

START_TEST(test_clock_back)
{
	/* 10/1s burst 10 after 10 starts at 0 (TAT 1000); the clock then
	 * steps back 5 s: full = -5000 + 900 + 100 = -4000, so the TAT is
	 * taken as -4000: one wait of T, then one per T — never a second
	 * burst. */
	static const struct step s[] = {
		{ -5000, 0, 100, -4000 },
		{ -4900, 1, 0, -3900 },
		{ -4900, 0, 100, -3900 },
		{ -4800, 1, 0, -3800 },
	};
	/* A small step back (50 ms) with the bucket empty: full = -50 +
	 * 1000 = 950, so one wait of T (950 - 900 + 50), and the start at
	 * clock 50 is 150 ms of real time after the last one. */
	static const struct step small[] = {
		{ -50, 0, 100, 950 },
		{ 50, 1, 0, 1050 },
		{ 50, 0, 100, 1050 },
	};

	run_steps("back 5 s", 10, 1000, 10, 1000, s, sizeof(s) /
	    sizeof(s[0]));
	run_steps("back 50 ms", 10, 1000, 10, 1000, small, sizeof(small) /
	    sizeof(small[0]));
}
END_TEST

START_TEST(test_extremes)
{
	struct gcra_params p;
	int64_t nt, w;

	ck_assert_int_eq(gcra_params(10, 1000, 10, &p), 0);
	/* A huge TAT (garbage) is clamped to now + tau + T: wait T. */
	ck_assert_int_eq(gcra_take(&p, INT64_MAX, 0, &nt, &w), 0);
	ck_assert(w == 100 && nt == 1000);
	/* A negative one is in the past: no information. */
	ck_assert_int_eq(gcra_take(&p, -123456, 0, &nt, &w), 1);
	ck_assert(w == 0 && nt == 100);
	/* Near the end of time: no overflow. */
	ck_assert_int_eq(gcra_take(&p, GCRA_NONE, INT64_MAX - 10, &nt, &w),
	    1);
	ck_assert(nt == INT64_MAX);
	ck_assert_int_eq(gcra_idle(GCRA_NONE, 0), 1);
	ck_assert_int_eq(gcra_idle(100, 100), 1);
	ck_assert_int_eq(gcra_idle(101, 100), 0);
}
END_TEST

/*
 * The bound the scenario asserts: under 10/1s burst 10, asked every
 * 1 ms for 10 s, every closed window of length W ms holds at most
 * 10 + floor(W / 100) starts, and a window starting at 0 reaches it.
 */
START_TEST(test_window_bound)
{
	struct gcra_params p;
	static int64_t at[20000];
	size_t n = 0;
	int64_t tat = GCRA_NONE, nt, w;

	ck_assert_int_eq(gcra_params(10, 1000, 10, &p), 0);
	for (int64_t t = 0; t < 10000; t++)
		while (gcra_take(&p, tat, t, &nt, &w)) {
			tat = nt;
			at[n++] = t;
		}
	ck_assert_int_eq(n, 10 + 99);	/* 10 at 0, then at 100 .. 9900 */
	for (int64_t win = 0; win <= 3000; win += 50)
		for (size_t i = 0; i < n; i++) {
			size_t k = i;

			while (k < n && at[k] - at[i] <= win)
				k++;
			ck_assert_msg((int64_t)(k - i) <= 10 + win / 100,
			    "window %lld from %lld: %zu starts", (long long)win,
			    (long long)at[i], k - i);
		}
}
END_TEST

START_TEST(test_spec_check)
{
	static const struct {
		const char *v;
		int ok;
	} cases[] = {
		{ "", 1 },
		{ "mail=10/1m,probe=10/1s", 1 },
		{ "probe=10/1s:20", 1 },
		{ "a=1/1ms", 1 },
		{ "x.y-z_1=5/2h:1", 1 },
		{ "d=1000000/7d", 1 },
		{ "d=1/7d:1000000", 1 },
		{ "probe", 0 },
		{ "probe=10", 0 },
		{ "probe=10/", 0 },
		{ "probe=10/1", 0 },		/* no unit */
		{ "probe=10/s", 0 },		/* no number */
		{ "probe=0/1s", 0 },
		{ "probe=-1/1s", 0 },
		{ "probe=+1/1s", 0 },
		{ "probe=10/1x", 0 },
		{ "probe=10/1 s", 0 },
		{ "probe=10/1s:", 0 },
		{ "probe=10/1s:0", 0 },
		{ "probe=10/1s:1000001", 0 },
		{ "probe=10/1s:2:3", 0 },
		{ "probe=2000/1s", 0 },		/* T < 1 ms */
		{ "probe=1/8d", 0 },
		{ "probe=1/0s", 0 },
		{ "probe=1000001/1d", 0 },
		{ "probe=99999999999999999999/1s", 0 },
		{ "a=1/1s,a=2/1s", 0 },
		{ "a=1/1s,", 0 },
		{ ",a=1/1s", 0 },
		{ "a=1/1s,,b=1/1s", 0 },
		{ "bad code=1/1s", 0 },
		{ "=1/1s", 0 },
		{ ".x=1/1s", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		int rc = ratespec_check("rate_limit", cases[i].v, why,
		    sizeof(why));

		ck_assert_msg((rc == 0) == cases[i].ok, "\"%s\": rc %d (%s)",
		    cases[i].v, rc, why);
		if (rc != 0)
			ck_assert_msg(strncmp(why, "rate_limit: ", 12) == 0,
			    "\"%s\": %s", cases[i].v, why);
	}
}
END_TEST

START_TEST(test_spec_find)
{
	const char *v = "mail=10/1m,probe=10/1s:20,probe.x=3/500ms";
	struct ratespec_item it;
	char why[256];

	ck_assert_int_eq(ratespec_check("rate_limit", v, why, sizeof(why)), 0);
	ck_assert_int_eq(ratespec_find(v, "probe", &it), 1);
	ck_assert(it.n == 10 && it.period_ms == 1000 && it.burst == 20);
	ck_assert_str_eq(it.text, "probe=10/1s:20");
	ck_assert_int_eq(ratespec_find(v, "mail", &it), 1);
	ck_assert(it.n == 10 && it.period_ms == 60000 && it.burst == 10);
	ck_assert_int_eq(ratespec_find(v, "probe.x", &it), 1);
	ck_assert(it.n == 3 && it.period_ms == 500 && it.burst == 3);
	ck_assert_int_eq(ratespec_find(v, "pro", &it), 0);
	ck_assert_int_eq(ratespec_find(v, "report", &it), 0);
	ck_assert_int_eq(ratespec_find("", "probe", &it), 0);
	/* The item named in the message. */
	ck_assert_int_eq(ratespec_check("rate_limit_per_key",
	    "mail=10/1m,probe=10/1q", why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "rate_limit_per_key: \"probe=10/1q\"") !=
	    NULL, "%s", why);
}
END_TEST

/* --- the file backend --- */

static char tmpdir[200];
static struct spool sp;
static struct coord *co;

static void
setup(void)
{
	char why[256], path[300];
	struct config cfg;

	unit_case_mkdtemp(tmpdir, sizeof(tmpdir), NULL, "check_gcra");
	snprintf(path, sizeof(path), "%s/spool", tmpdir);
	ck_assert_int_eq(spool_create(path, -1, why, sizeof(why)), 0);
	ck_assert_msg(spool_open(&sp, path, "a", 0, why, sizeof(why)) == 0,
	    "%s", why);
	config_defaults(&cfg);
	co = coord_open(&cfg, "a", &sp, why, sizeof(why));
	ck_assert_msg(co != NULL, "coord_open: %s", why);
}

static void
teardown(void)
{
	coord_close(co);
	spool_close(&sp);
	unit_rmtree(tmpdir);
}

/* Take one start of probe (key may be NULL) under 10/1s burst 2 at now;
 * returns the status, *wait set. */
static enum execrate_status
take(const char *key, int64_t now, int64_t *wait, int *bad)
{
	struct gcra_params p;
	char why[256];
	enum execrate_status st;

	ck_assert_int_eq(gcra_params(10, 1000, 2, &p), 0);
	st = execrate_take(co, "probe", key, &p, now, wait, bad, why,
	    sizeof(why));
	ck_assert_msg(st != EXECRATE_ERR, "%s", why);
	return st;
}

/* The content of state/rates/name, or "" when absent. */
static void
state_is(const char *name, const char *want)
{
	char path[600], b[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/spool/state/rates/%s", tmpdir, name);
	if ((f = fopen(path, "r")) != NULL) {
		size_t n = fread(b, 1, sizeof(b) - 1, f);

		b[n] = '\0';
		fclose(f);
	}
	ck_assert_msg(strcmp(b, want) == 0, "%s: \"%s\", want \"%s\"", name,
	    b, want);
}

static void
put(const char *name, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/spool/state/rates", tmpdir);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/spool/state/rates/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert(f != NULL);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	fclose(f);
}

START_TEST(test_file_code_and_key)
{
	int64_t w;
	int bad = 0;
	char name[EXECRATE_NAME_MAX];

	/* 10/1s burst 2: T = 100, tau = 100. */
	ck_assert_int_eq(take(NULL, 1000, &w, &bad), EXECRATE_OK);
	state_is("probe", "00000000000000001100\n");
	ck_assert_int_eq(take(NULL, 1000, &w, &bad), EXECRATE_OK);
	state_is("probe", "00000000000000001200\n");
	ck_assert_int_eq(take(NULL, 1000, &w, &bad), EXECRATE_WAIT);
	ck_assert_int_eq(w, 100);	/* 1200 - 100 - 1000 */
	state_is("probe", "00000000000000001200\n");	/* unchanged */
	/* A key has a bucket of its own, named by SHA-256 of the key
	 * (hashlib.sha256(b"customer:42").hexdigest()[:32]). */
	execrate_name("probe", "customer:42", name);
	ck_assert_str_eq(name, "probe@67f22bfd8b982e1bd0dbfecc6f68ae2b");
	execrate_name("probe", "", name);
	ck_assert_str_eq(name, "probe");
	ck_assert_int_eq(take("customer:42", 1000, &w, &bad), EXECRATE_OK);
	ck_assert_int_eq(take("customer:42", 1000, &w, &bad), EXECRATE_OK);
	ck_assert_int_eq(take("customer:42", 1000, &w, &bad), EXECRATE_WAIT);
	ck_assert_int_eq(w, 100);
	state_is("probe@67f22bfd8b982e1bd0dbfecc6f68ae2b",
	    "00000000000000001200\n");
	ck_assert_int_eq(take("customer:43", 1000, &w, &bad), EXECRATE_OK);
	ck_assert_int_eq(take(NULL, 1100, &w, &bad), EXECRATE_OK);
	ck_assert_int_eq(bad, 0);
	/* A TAT far ahead (the clock went back, or a limit of 1/1h before
	 * a reload): clamped to now + tau + T = 10000 + 200, and the clamp
	 * stored, so the next start comes T later, not an hour later. */
	put("probe", "00000000000003610000\n");
	ck_assert_int_eq(take(NULL, 10000, &w, &bad), EXECRATE_WAIT);
	ck_assert_int_eq(w, 100);		/* 10200 - 100 - 10000 */
	state_is("probe", "00000000000000010200\n");
	ck_assert_int_eq(take(NULL, 10100, &w, &bad), EXECRATE_OK);
	state_is("probe", "00000000000000010300\n");
}
END_TEST

START_TEST(test_file_garbage)
{
	static const char *const junk[] = {
		"abc", "-5\n", "1e9\n", " 12\n", "12 \n", "12\n\n",
		"999999999999999999999\n",		/* 21 digits */
		"9007199254740993\n",			/* > 2^53 */
		"000000000000000000000000000000000000001\n",	/* too long */
	};
	int64_t w;

	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		int bad = 0;

		put("probe", junk[i]);
		ck_assert_msg(take(NULL, 5000, &w, &bad) == EXECRATE_OK,
		    "row %zu", i);
		ck_assert_msg(bad == 1, "row %zu: not said", i);
		state_is("probe", "00000000000000005100\n");
	}
	{
		int bad = 0;

		put("probe", "");	/* empty: no state, not garbage */
		ck_assert_int_eq(take(NULL, 5000, &w, &bad), EXECRATE_OK);
		ck_assert_int_eq(bad, 0);
		/* A short valid state with a longer tail cut off. */
		put("probe", "7000\n");
		ck_assert_int_eq(take(NULL, 7000, &w, &bad), EXECRATE_OK);
		state_is("probe", "00000000000000007100\n");
		ck_assert_int_eq(bad, 0);
	}
}
END_TEST

START_TEST(test_file_sweep)
{
	char path[600];
	int fd;
	int64_t w;
	int bad = 0;
	struct stat st;

	put("old", "00000000000000001000\n");	/* idle at 2000 */
	put("edge", "2000\n");			/* TAT = now: idle */
	put("live", "00000000000000003000\n");	/* not idle */
	put("junk", "xyz");
	put("busy", "1000\n");			/* idle, but locked */
	snprintf(path, sizeof(path), "%s/spool/state/rates/busy", tmpdir);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(execrate_sweep(co, 2000), 3);
	state_is("old", "");
	state_is("edge", "");
	state_is("junk", "");
	state_is("live", "00000000000000003000\n");
	state_is("busy", "1000\n");
	close(fd);
	ck_assert_int_eq(execrate_sweep(co, 2000), 1);
	state_is("busy", "");
	/* After a sweep a take starts afresh; the file comes back. */
	ck_assert_int_eq(take(NULL, 2000, &w, &bad), EXECRATE_OK);
	snprintf(path, sizeof(path), "%s/spool/state/rates/probe", tmpdir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(execrate_sweep(co, 2099), 0);
	ck_assert_int_eq(execrate_sweep(co, 2100), 1);
}
END_TEST

static Suite *
gcra_suite(void)
{
	Suite *s = suite_create("gcra");
	TCase *tc = tcase_create("gcra");
	TCase *tf = tcase_create("file");

	tcase_add_test(tc, test_params);
	tcase_add_test(tc, test_burst_10);
	tcase_add_test(tc, test_sequences);
	tcase_add_test(tc, test_clock_back);
	tcase_add_test(tc, test_extremes);
	tcase_add_test(tc, test_window_bound);
	tcase_add_test(tc, test_spec_check);
	tcase_add_test(tc, test_spec_find);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_test(tf, test_file_code_and_key);
	tcase_add_test(tf, test_file_garbage);
	tcase_add_test(tf, test_file_sweep);
	suite_add_tcase(s, tf);
	return s;
}

CHECK_MAIN(gcra_suite)
