/*
 * check_delivery.c — unit tests for daemon/core/delivery.c (retry schedule,
 * status handling, circuit breaker) with a fake clock.
 *
 * test_r_timelines replays every scenario of delivery_schedule in
 * $TESTDATA/api-vectors.json (R01..R08, jitter 0): the policy comes from
 * the file's "rules"; each scenario's receiver is scripted here from its
 * "receiver" description (what the receiver answers at a given time), and
 * the state machine decides when each try happens, whether it is a real
 * request, a probe or a fast-fail, and how it ends.  Every attempt row
 * (delivery, attempt, at, outcome, network, probe, ended, breaker_after)
 * and every final state is compared with the file.  The other cases are
 * hand-computed from API.md §6.4-6.6.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "apivectors.h"

#include "core/delivery.h"
#include "unit.h"

#define S 1000LL	/* ms per s */
#define NDEL 8

/* What the scripted receiver does with a request at time t (s). */
struct answer {
	int status;		/* 0 = none (timeout) */
	int64_t dur_s;		/* seconds until the try ends */
	int64_t retry_after_s;	/* -1 = none */
};

static struct answer
receiver(const char *id, int64_t t)
{
	struct answer a = { 500, 0, -1 };

	if (strcmp(id, "R01") == 0 || strcmp(id, "R08") == 0)
		return a;			/* 500 forever */
	if (strcmp(id, "R02") == 0) {
		a.status = 0;			/* never answers: 3 s timeout */
		a.dur_s = 3;
		return a;
	}
	if (strcmp(id, "R03") == 0) {
		a.status = t < 30 ? 500 : 200;
		return a;
	}
	if (strcmp(id, "R04") == 0) {
		if (t < 1) {
			a.status = 503;
			a.retry_after_s = 60;
		} else
			a.status = 200;
		return a;
	}
	if (strcmp(id, "R05") == 0) {
		a.status = 410;
		return a;
	}
	if (strcmp(id, "R06") == 0) {
		a.status = 301;
		return a;
	}
	if (strcmp(id, "R07") == 0) {
		a.status = t < 70 ? 500 : 200;
		return a;
	}
	ck_abort_msg("no scripted receiver for scenario %s", id);
	return a;
}

static void
policy_from_rules(json_t *rules, struct delivery_policy *p)
{
	json_t *d = json_object_get(rules, "delays_after_failure_s");
	json_t *cd = json_object_get(rules, "breaker_cooldown_s");
	size_t i;
	json_t *x;

	delivery_policy_default(p);
	p->ndelays = json_array_size(d);
	json_array_foreach(d, i, x)
		p->delays_ms[i] = json_integer_value(x) * S;
	ck_assert_int_eq((int)json_integer_value(json_object_get(rules,
	    "max_tries")), (int)p->ndelays + 1);
	p->jitter_pct = (int)json_integer_value(json_object_get(rules,
	    "jitter"));
	p->breaker_threshold = (int)json_integer_value(json_object_get(rules,
	    "breaker_threshold"));
	p->cooldown_ms = json_integer_value(json_array_get(cd, 0)) * S;
	p->cooldown_max_ms = json_integer_value(json_array_get(cd, 1)) * S;
	p->retry_after_cap_ms = json_integer_value(json_object_get(rules,
	    "retry_after_cap_s")) * S;
}

/* Compare one simulated attempt with the vector's row. */
static void
check_row(const char *sid, json_t *row, const char *dname, int attempt,
    int64_t at, const char *outcome, int network, int probe, int64_t ended,
    const struct delivery_breaker *b)
{
	json_t *ba;

	ck_assert_msg(row != NULL, "%s: unexpected attempt %s#%d at %lld",
	    sid, dname, attempt, (long long)at);
	ck_assert_str_eq(json_string_value(json_object_get(row, "delivery")),
	    dname);
	ck_assert_int_eq(json_integer_value(json_object_get(row, "attempt")),
	    attempt);
	ck_assert_msg(json_integer_value(json_object_get(row, "at")) == at,
	    "%s %s#%d: at %lld", sid, dname, attempt, (long long)at);
	ck_assert_str_eq(json_string_value(json_object_get(row, "outcome")),
	    outcome);
	ck_assert_int_eq(json_is_true(json_object_get(row, "network")),
	    network);
	if (!network)
		return;
	ck_assert_int_eq(json_is_true(json_object_get(row, "probe")), probe);
	ck_assert_int_eq(json_integer_value(json_object_get(row, "ended")),
	    ended);
	ba = json_object_get(row, "breaker_after");
	ck_assert_str_eq(json_string_value(json_object_get(ba, "state")),
	    b->open ? "OPEN" : "CLOSED");
	ck_assert_int_eq(json_integer_value(json_object_get(ba,
	    "consecutiveFailures")), b->failures);
	if (b->open)
		ck_assert_int_eq(json_integer_value(json_object_get(ba,
		    "openUntil")), b->open_until_ms / S);
	else
		ck_assert(json_is_null(json_object_get(ba, "openUntil")));
}

static void
run_scenario(const struct delivery_policy *p, json_t *sc)
{
	const char *sid = json_string_value(json_object_get(sc, "id"));
	json_t *dels = json_object_get(sc, "deliveries");
	json_t *rows = json_object_get(sc, "attempts");
	json_t *fin = json_object_get(sc, "final");
	struct delivery_state d[NDEL];
	int64_t fin_at[NDEL];
	const char *name[NDEL];
	struct delivery_breaker b;
	int disabled = 0;
	size_t nd = json_array_size(dels), row = 0;
	int64_t busy_until = 0;

	ck_assert(nd > 0 && nd <= NDEL);
	delivery_breaker_init(&b);
	for (size_t i = 0; i < nd; i++) {
		json_t *x = json_array_get(dels, i);

		name[i] = json_string_value(json_object_get(x, "name"));
		delivery_init(&d[i], json_integer_value(json_object_get(x,
		    "created_at")) * S);
		fin_at[i] = -1;
	}
	for (int guard = 0; guard < 1000; guard++) {
		size_t k = nd;
		int64_t now;
		char outcome[32];
		int probe;
		enum delivery_action act;

		for (size_t i = 0; i < nd; i++)
			if (d[i].status == DELIVERY_PENDING && (k == nd ||
			    d[i].next_ms < d[k].next_ms))
				k = i;
		if (k == nd)
			break;
		/* One try in flight per registration: a try due while
		 * another runs waits for its end (delivery_begin says WAIT). */
		now = d[k].next_ms > busy_until ? d[k].next_ms : busy_until;
		act = delivery_begin(&b, disabled, now, &probe);
		ck_assert_int_ne(act, DELIVERY_WAIT);
		if (act == DELIVERY_SEND) {
			struct answer a = receiver(sid, now / S);
			struct delivery_outcome o;
			int64_t end = now + a.dur_s * S;
			int att = d[k].attempts + 1;

			delivery_sent(&d[k], &b, now);
			ck_assert_int_eq(delivery_begin(&b, disabled, now,
			    NULL), DELIVERY_WAIT);
			o.http_status = a.status;
			o.error = a.status == 0 ? DELIVERY_ERR_TIMEOUT :
			    DELIVERY_ERR_NONE;
			o.retry_after_ms = a.retry_after_s < 0 ? -1 :
			    a.retry_after_s * S;
			if (delivery_done(p, &d[k], &b, &o, end, 0))
				disabled = 1;
			if (a.status == 0)
				snprintf(outcome, sizeof(outcome), "TIMEOUT");
			else
				snprintf(outcome, sizeof(outcome), "HTTP_%d",
				    a.status);
			check_row(sid, json_array_get(rows, row++), name[k],
			    att, now / S, outcome, 1, probe, end / S, &b);
			busy_until = end;
			if (d[k].status != DELIVERY_PENDING)
				fin_at[k] = end;
		} else {
			int att = d[k].attempts + 1;

			delivery_fail_fast(p, &d[k], act == DELIVERY_REFUSE,
			    now, 0);
			check_row(sid, json_array_get(rows, row++), name[k],
			    att, now / S, delivery_error_name(d[k].last_error),
			    0, 0, now / S, &b);
			if (d[k].status != DELIVERY_PENDING)
				fin_at[k] = now;
		}
	}
	ck_assert_msg(row == json_array_size(rows), "%s: %zu of %zu rows",
	    sid, row, json_array_size(rows));
	for (size_t i = 0; i < nd; i++) {
		json_t *f = json_object_get(fin, name[i]), *x;

		ck_assert_msg(f != NULL, "%s: no final for %s", sid, name[i]);
		ck_assert_str_eq(json_string_value(json_object_get(f,
		    "callback_status")), delivery_status_name(d[i].status));
		ck_assert_int_eq(json_integer_value(json_object_get(f, "at")),
		    fin_at[i] / S);
		if ((x = json_object_get(f, "attempts")) != NULL)
			ck_assert_int_eq(json_integer_value(x),
			    d[i].attempts);
		if ((x = json_object_get(f, "reason")) != NULL)
			ck_assert_str_eq(json_string_value(x),
			    delivery_reason_name(d[i].reason));
		else
			ck_assert_int_eq(d[i].reason, DELIVERY_REASON_NONE);
	}
	ck_assert_str_eq(json_string_value(json_object_get(sc,
	    "registration")), disabled ? "DISABLED" : "ACTIVE");
}

START_TEST(test_r_timelines)
{
	json_t *all = api_vectors(), *ds = json_object_get(all,
	    "delivery_schedule"), *sc;
	struct delivery_policy p;
	size_t i, run = 0;

	policy_from_rules(json_object_get(ds, "rules"), &p);
	json_array_foreach(json_object_get(ds, "scenarios"), i, sc) {
		run_scenario(&p, sc);
		run++;
	}
	ck_assert_uint_ge(run, 8);
	json_decref(all);
}
END_TEST

/* The default: six tries at +0, +5 s, +30 s, +2 min, +10 min, +30 min,
 * each counted from the end of the failed try (DESIGN.md §3); then
 * CALLBACK_FAILED and no 7th try: the delay table is never read past its
 * end (B54; `make asan` runs this too). */
START_TEST(test_default_schedule)
{
	static const int64_t want[] = { 0, 5, 35, 155, 755, 2555 };
	struct delivery_policy p;
	struct delivery_state d;
	struct delivery_breaker b;
	struct delivery_outcome o = { DELIVERY_ERR_CONNECT, 0, -1 };

	delivery_policy_default(&p);
	p.jitter_pct = 0;
	p.breaker_threshold = 1000;	/* schedule only */
	delivery_init(&d, 0);
	delivery_breaker_init(&b);
	for (size_t i = 0; i < 6; i++) {
		ck_assert_int_eq(d.status, DELIVERY_PENDING);
		ck_assert_int_eq(d.next_ms, want[i] * S);
		delivery_sent(&d, &b, d.next_ms);
		delivery_done(&p, &d, &b, &o, d.last_attempt_ms, 0);
	}
	ck_assert_int_eq(d.status, DELIVERY_FAILED);
	ck_assert_int_eq(d.reason, DELIVERY_REASON_EXHAUSTED);
	ck_assert_int_eq(d.attempts, 6);
	ck_assert_str_eq(delivery_error_name(d.last_error), "CONNECT_FAILED");
}
END_TEST

/* Jitter multiplies by [1, 1.2): rnd 0 gives 5000, rnd 2^31 gives
 * 5000 * 1.1 = 5500, the largest rnd stays below 6000. */
START_TEST(test_jitter)
{
	struct delivery_policy p;
	struct delivery_state d;
	struct delivery_breaker b;
	struct delivery_outcome o = { DELIVERY_ERR_TIMEOUT, 0, -1 };
	static const uint32_t rnd[] = { 0, 0x80000000u, 0xffffffffu };
	static const int64_t want[] = { 5000, 5500, 5999 };

	delivery_policy_default(&p);
	for (size_t i = 0; i < 3; i++) {
		delivery_init(&d, 0);
		delivery_breaker_init(&b);
		delivery_sent(&d, &b, 0);
		delivery_done(&p, &d, &b, &o, 0, rnd[i]);
		ck_assert_int_eq(d.next_ms, want[i]);
	}
}
END_TEST

/*
 * B53 (FIELD-FAILURES): 1000 deliveries whose tasks end within 2 s (one
 * every 2 ms), to a receiver answering 503 for 3 min, then 200, with the
 * default schedule and jitter.  The random values come from a fixed
 * xorshift32 stream (Marsaglia, "Xorshift RNGs", 2003), one seed per
 * delivery.  Expected from the report: every delay is at least its step
 * (no try before its scheduled delay) and the 1000 delays of one step
 * spread over at least 10 % of it (no lockstep); after the recovery no
 * 1-s window gets more than max(50, 10 % of the 1000 pending) = 100
 * tries; all 1000 are delivered.  (One breaker per delivery with a huge
 * threshold: the schedule alone; a shared breaker only spreads more.)
 */
static uint32_t
xorshift32(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

START_TEST(test_no_lockstep)
{
	enum { N = 1000, UP_S = 180, SPAN_S = 4000 };
	static const int64_t step[] = { 5000, 30000, 120000, 600000, 1800000 };
	static int per_s[SPAN_S];
	int64_t lo[5], hi[5];
	struct delivery_policy p;
	int delivered = 0, worst = 0;

	delivery_policy_default(&p);
	p.breaker_threshold = 1000000;
	for (int k = 0; k < 5; k++) {
		lo[k] = INT64_MAX;
		hi[k] = INT64_MIN;
	}
	for (int i = 0; i < N; i++) {
		struct delivery_state d;
		struct delivery_breaker b;
		uint32_t x = 2463534242u + (uint32_t)i * 2654435761u;

		if (x == 0)
			x = 1;
		delivery_init(&d, i * 2);
		delivery_breaker_init(&b);
		for (int k = 0; d.status == DELIVERY_PENDING; k++) {
			int64_t t = d.next_ms;
			struct delivery_outcome o = { DELIVERY_ERR_NONE,
			    t < UP_S * S ? 503 : 200, -1 };

			ck_assert_int_lt(k, 6);
			if (k > 0) {
				int64_t delay = t - d.last_attempt_ms;

				/* the try ended when it started (a fake clock) */
				ck_assert_msg(delay >= step[k - 1],
				    "delivery %d try %d after %lld ms < %lld", i,
				    k + 1, (long long)delay,
				    (long long)step[k - 1]);
				if (delay < lo[k - 1])
					lo[k - 1] = delay;
				if (delay > hi[k - 1])
					hi[k - 1] = delay;
			}
			if (t >= UP_S * S) {
				ck_assert_int_lt(t / S, SPAN_S);
				per_s[t / S]++;
			}
			delivery_sent(&d, &b, t);
			delivery_done(&p, &d, &b, &o, t, xorshift32(&x));
		}
		delivered += d.status == DELIVERY_DELIVERED;
	}
	ck_assert_int_eq(delivered, N);
	/* steps 1-3 were retried by all 1000 (all before 180 s, or the 4th
	 * try straddling it): their spread is a real sample of the jitter */
	for (int k = 0; k < 3; k++)
		ck_assert_msg(hi[k] - lo[k] >= step[k] / 10,
		    "step %lld: delays %lld..%lld", (long long)step[k],
		    (long long)lo[k], (long long)hi[k]);
	for (int s = 0; s < SPAN_S; s++)
		if (per_s[s] > worst)
			worst = per_s[s];
	ck_assert_msg(worst <= 100, "%d tries in one second after recovery",
	    worst);
}
END_TEST

/* Retry-After: min(max(scheduled, Retry-After), 600 s); only 429/503. */
START_TEST(test_retry_after)
{
	struct delivery_policy p;
	struct delivery_state d;
	struct delivery_breaker b;
	struct {
		int status;
		int64_t ra_ms, want_ms;
	} c[] = {
		{ 429, 2000, 5000 },		/* shorter than the step */
		{ 429, 60000, 60000 },
		{ 503, 3600000, 600000 },	/* capped */
		{ 500, 60000, 5000 },		/* not honoured on a 500 */
		{ 503, -1, 5000 },		/* absent */
	};

	delivery_policy_default(&p);
	p.jitter_pct = 0;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct delivery_outcome o = { DELIVERY_ERR_NONE, c[i].status,
		    c[i].ra_ms };

		delivery_init(&d, 0);
		delivery_breaker_init(&b);
		delivery_sent(&d, &b, 0);
		ck_assert_int_eq(delivery_done(&p, &d, &b, &o, 1000, 0), 0);
		ck_assert_int_eq(d.next_ms, 1000 + c[i].want_ms);
		ck_assert_str_eq(delivery_error_name(d.last_error),
		    "HTTP_STATUS");
	}
}
END_TEST

START_TEST(test_policy_parse)
{
	struct delivery_policy p;

	delivery_policy_default(&p);
	ck_assert_int_eq(delivery_policy_parse(&p, "100,200,300"), 0);
	ck_assert_uint_eq(p.ndelays, 3);
	ck_assert_int_eq(p.delays_ms[2], 300);
	ck_assert_int_eq(delivery_policy_parse(&p, ""), -1);
	ck_assert_int_eq(delivery_policy_parse(&p, "100,,200"), -1);
	ck_assert_int_eq(delivery_policy_parse(&p, "100, 200"), -1);
	ck_assert_int_eq(delivery_policy_parse(&p, "0"), -1);
	ck_assert_int_eq(delivery_policy_parse(&p, "-5"), -1);
	ck_assert_int_eq(delivery_policy_parse(&p, "1,2,3,4,5,6,7,8,9,10,11,"
	    "12,13,14,15,16,17"), -1);
	ck_assert_uint_eq(p.ndelays, 3);	/* unchanged by failures */
}
END_TEST

static Suite *
delivery_suite(void)
{
	Suite *s = suite_create("delivery");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_r_timelines);
	tcase_add_test(tc, test_default_schedule);
	tcase_add_test(tc, test_jitter);
	tcase_add_test(tc, test_no_lockstep);
	tcase_add_test(tc, test_retry_after);
	tcase_add_test(tc, test_policy_parse);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(delivery_suite)
