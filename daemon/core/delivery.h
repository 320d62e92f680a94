/*
 * delivery — the callback delivery state machine (pure: no I/O, no
 * clock, no logging; times are epoch ms passed by the caller, randomness
 * a 32-bit value passed by the caller).
 *
 * It decides, for one delivery of one task's result envelope to one
 * receiver, whether an attempt that falls due is sent, fast-failed or
 * refused, and, from an attempt's outcome, what happens next: delivered,
 * retried after the schedule's delay, or CALLBACK_FAILED.  Next to the
 * deliveries it keeps the per-registration circuit breaker.  The rules
 * are API.md §6.4 (status handling), §6.6 (retry schedule: delay k counts
 * from the END of failed try k; Retry-After of a 429/503 honoured and
 * capped; jitter multiplies a delay by uniform [1, 1 + pct/100)) and §6.7
 * (breaker: opens after 3 consecutive failed network tries for a
 * cooldown of 30 s doubling to 600 s; a due try while open is fast-failed
 * with CIRCUIT_OPEN and consumes a try; the first try at or after the end
 * of the cooldown is a real request, the half-open probe).  Vectors R01..R08
 * of api-vectors.json test it with a fake clock.
 *
 * Thread safety: none needed; functions touch only their arguments.
 */
#ifndef TASKSPOOL_DELIVERY_H
#define TASKSPOOL_DELIVERY_H

#include <stddef.h>
#include <stdint.h>

#define DELIVERY_DELAYS_MAX 16		/* retries in one schedule */

/* Why one try failed (or did not happen); API.md §4.2 lastError. */
enum delivery_error {
	DELIVERY_ERR_NONE,		/* a 2xx arrived */
	DELIVERY_ERR_TIMEOUT,
	DELIVERY_ERR_CONNECT,		/* refused, reset, unreachable */
	DELIVERY_ERR_DNS,
	DELIVERY_ERR_TLS,
	DELIVERY_ERR_BLOCKED,		/* SSRF rule, §7: no connection made */
	DELIVERY_ERR_HTTP,		/* a non-2xx status line arrived */
	DELIVERY_ERR_CIRCUIT_OPEN,	/* fast-failed, no request made */
	DELIVERY_ERR_DISABLED		/* registration DISABLED, no request */
};

/* Where a delivery stands (API.md §4.2 callback.status). */
enum delivery_status {
	DELIVERY_PENDING, DELIVERY_DELIVERED, DELIVERY_FAILED
};

/* Why a delivery ended CALLBACK_FAILED. */
enum delivery_reason {
	DELIVERY_REASON_NONE,
	DELIVERY_REASON_EXHAUSTED,	/* every try used */
	DELIVERY_REASON_GONE,		/* the receiver answered 410 */
	DELIVERY_REASON_DISABLED,	/* the registration was DISABLED */
	DELIVERY_REASON_NO_SECRET	/* nothing to sign with: never sent */
};

struct delivery_policy {
	int64_t delays_ms[DELIVERY_DELAYS_MAX];	/* after failed try 1, 2.. */
	size_t ndelays;			/* tries = ndelays + 1 */
	int jitter_pct;			/* 0..100 */
	int64_t retry_after_cap_ms;	/* 600000 */
	int breaker_threshold;		/* 3 */
	int64_t cooldown_ms;		/* first cooldown: 30000 */
	int64_t cooldown_max_ms;	/* 600000 */
};

/* Per-registration circuit breaker. */
struct delivery_breaker {
	int failures;			/* consecutive failed network tries */
	int open;			/* OPEN (1) or CLOSED (0) */
	int64_t open_until_ms;		/* while open: end of the cooldown */
	int64_t next_cooldown_ms;	/* cooldown of the next opening; 0 =
					 * policy->cooldown_ms */
	int inflight;			/* tries in flight (at most 1) */
};

/* One delivery's progress (what the delivery file keeps). */
struct delivery_state {
	enum delivery_status status;
	enum delivery_reason reason;
	int attempts;			/* tries made, fast-failed included */
	int64_t next_ms;		/* when the next try is due; -1 = none */
	int64_t last_attempt_ms;	/* start of the last try; -1 = none */
	int last_http;			/* status of the last try; 0 = none */
	enum delivery_error last_error;
};

/* What to do with a try that is due now. */
enum delivery_action {
	DELIVERY_SEND,		/* make the request (*probe says if half-open) */
	DELIVERY_FAST_FAIL,	/* breaker open: record CIRCUIT_OPEN */
	DELIVERY_REFUSE,	/* registration DISABLED: CALLBACK_FAILED */
	DELIVERY_WAIT		/* a try to this registration is in flight */
};

/* The outcome of one request. */
struct delivery_outcome {
	enum delivery_error error;	/* NONE or HTTP when a status arrived */
	int http_status;		/* 0 when none arrived */
	int64_t retry_after_ms;		/* from a 429/503; -1 = absent */
};

/*
 * The default policy: delays 5 s, 30 s, 2 min, 10 min, 30 min (six tries,
 * DESIGN.md §3), jitter 20 %, Retry-After cap 600 s, breaker 3 / 30 s /
 * 600 s (API.md §6.6-6.7).
 */
void delivery_policy_default(struct delivery_policy *p);

/*
 * Parse a schedule "5000,30000,..." (ms, 1..DELIVERY_DELAYS_MAX positive
 * whole numbers, comma-separated, no spaces) into p.  Returns 0, or -1
 * with p unchanged.
 */
int delivery_policy_parse(struct delivery_policy *p, const char *delays);

/* A fresh delivery: PENDING, no try yet, the first due at now_ms. */
void delivery_init(struct delivery_state *d, int64_t now_ms);

/* A fresh breaker: CLOSED, no failures. */
void delivery_breaker_init(struct delivery_breaker *b);

/*
 * What to do with a try of a PENDING delivery that is due at now_ms, given
 * its registration's breaker b and whether the registration is DISABLED.
 * *probe (may be NULL) is set to 1 for a half-open probe.  Does not change
 * anything: the caller then calls delivery_sent() (SEND), or
 * delivery_fail_fast() (FAST_FAIL, REFUSE).
 */
enum delivery_action delivery_begin(const struct delivery_breaker *b,
    int disabled, int64_t now_ms, int *probe);

/* A request starts at now_ms: counts the try, marks b in flight. */
void delivery_sent(struct delivery_state *d, struct delivery_breaker *b,
    int64_t now_ms);

/*
 * Record a try refused at now_ms without a request: CIRCUIT_OPEN (counts
 * a try; next due after the schedule's delay, or CALLBACK_FAILED when it
 * was the last) or, with disabled, ENDPOINT_DISABLED (CALLBACK_FAILED at
 * once).  rnd is a random value for the jitter.
 */
void delivery_fail_fast(const struct delivery_policy *p,
    struct delivery_state *d, int disabled, int64_t now_ms, uint32_t rnd);

/*
 * Record the outcome o of the request started by delivery_sent(), which
 * ended at end_ms: a 2xx delivers and closes the breaker; anything else
 * counts a failure on b (opening or re-opening it) and schedules the next
 * try from end_ms, or ends CALLBACK_FAILED (every try used, or 410).
 * Returns 1 when the registration must become DISABLED (a 410), else 0.
 */
int delivery_done(const struct delivery_policy *p, struct delivery_state *d,
    struct delivery_breaker *b, const struct delivery_outcome *o,
    int64_t end_ms, uint32_t rnd);

/* Names used in files and logs: "TIMEOUT", "CIRCUIT_OPEN", ..; NULL for
 * DELIVERY_ERR_NONE.  delivery_error_parse returns -1 for unknown text. */
const char *delivery_error_name(enum delivery_error e);
int delivery_error_parse(const char *s, enum delivery_error *e);

/* "PENDING" | "DELIVERED" | "CALLBACK_FAILED"; parse returns -1 when
 * unknown. */
const char *delivery_status_name(enum delivery_status s);
int delivery_status_parse(const char *s, enum delivery_status *st);

/* NULL | "RETRIES_EXHAUSTED" | "GONE" | "ENDPOINT_DISABLED" |
 * "NO_SECRET". */
const char *delivery_reason_name(enum delivery_reason r);
int delivery_reason_parse(const char *s, enum delivery_reason *r);

#endif
