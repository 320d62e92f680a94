/*
 * delivery — callback retry schedule and circuit breaker; see delivery.h.
 */
#include "core/delivery.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
delivery_policy_default(struct delivery_policy *p)
{
	static const int64_t def[] = { 5000, 30000, 120000, 600000,
	    1800000 };

	memset(p, 0, sizeof(*p));
	memcpy(p->delays_ms, def, sizeof(def));
	p->ndelays = sizeof(def) / sizeof(def[0]);
	p->jitter_pct = 20;
	p->retry_after_cap_ms = 600000;
	p->breaker_threshold = 3;
	p->cooldown_ms = 30000;
	p->cooldown_max_ms = 600000;
}

int
delivery_policy_parse(struct delivery_policy *p, const char *s)
{
	int64_t d[DELIVERY_DELAYS_MAX];
	size_t n = 0;

	for (;;) {
		char *end;
		long long v;

		if (*s < '0' || *s > '9' || n == DELIVERY_DELAYS_MAX)
			return -1;
		errno = 0;
		v = strtoll(s, &end, 10);
		/* At most one day per step keeps every sum far from overflow. */
		if (errno != 0 || v <= 0 || v > 86400000LL)
			return -1;
		d[n++] = v;
		if (*end == '\0')
			break;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
	memcpy(p->delays_ms, d, n * sizeof(d[0]));
	p->ndelays = n;
	return 0;
}

void
delivery_init(struct delivery_state *d, int64_t now_ms)
{
	memset(d, 0, sizeof(*d));
	d->status = DELIVERY_PENDING;
	d->next_ms = now_ms;
	d->last_attempt_ms = -1;
}

void
delivery_breaker_init(struct delivery_breaker *b)
{
	memset(b, 0, sizeof(*b));
}

enum delivery_action
delivery_begin(const struct delivery_breaker *b, int disabled,
    int64_t now_ms, int *probe)
{
	if (probe != NULL)
		*probe = 0;
	if (disabled)
		return DELIVERY_REFUSE;
	if (b->inflight > 0)
		return DELIVERY_WAIT;
	if (b->open) {
		if (now_ms < b->open_until_ms)
			return DELIVERY_FAST_FAIL;
		if (probe != NULL)
			*probe = 1;
	}
	return DELIVERY_SEND;
}

void
delivery_sent(struct delivery_state *d, struct delivery_breaker *b,
    int64_t now_ms)
{
	d->attempts++;
	d->last_attempt_ms = now_ms;
	b->inflight++;
}

/* Schedule the try after a failed one that ended at end_ms, honouring a
 * Retry-After of floor_ms (> 0), or end the delivery. */
static void
schedule_next(const struct delivery_policy *p, struct delivery_state *d,
    int64_t end_ms, int64_t floor_ms, uint32_t rnd)
{
	int64_t delay;

	if ((size_t)d->attempts > p->ndelays) {
		d->status = DELIVERY_FAILED;
		d->reason = DELIVERY_REASON_EXHAUSTED;
		d->next_ms = -1;
		return;
	}
	delay = p->delays_ms[d->attempts - 1];
	/* Jitter: delay * uniform [1, 1 + pct/100), after [SW]. */
	if (p->jitter_pct > 0)
		delay += (int64_t)((double)delay * p->jitter_pct / 100.0 *
		    ((double)rnd / 4294967296.0));
	/* Retry-After: min(max(scheduled, Retry-After), cap), §6.4. */
	if (floor_ms > 0) {
		if (floor_ms > delay)
			delay = floor_ms;
		if (delay > p->retry_after_cap_ms)
			delay = p->retry_after_cap_ms;
	}
	d->next_ms = end_ms + delay;
}

void
delivery_fail_fast(const struct delivery_policy *p, struct delivery_state *d,
    int disabled, int64_t now_ms, uint32_t rnd)
{
	d->attempts++;
	d->last_attempt_ms = now_ms;
	d->last_http = 0;
	if (disabled) {
		d->last_error = DELIVERY_ERR_DISABLED;
		d->status = DELIVERY_FAILED;
		d->reason = DELIVERY_REASON_DISABLED;
		d->next_ms = -1;
		return;
	}
	d->last_error = DELIVERY_ERR_CIRCUIT_OPEN;
	schedule_next(p, d, now_ms, 0, rnd);
}

int
delivery_done(const struct delivery_policy *p, struct delivery_state *d,
    struct delivery_breaker *b, const struct delivery_outcome *o,
    int64_t end_ms, uint32_t rnd)
{
	int64_t floor_ms = 0;

	if (b->inflight > 0)
		b->inflight--;
	d->last_http = o->http_status;
	if (o->error == DELIVERY_ERR_NONE && o->http_status >= 200 &&
	    o->http_status <= 299) {
		d->status = DELIVERY_DELIVERED;
		d->last_error = DELIVERY_ERR_NONE;
		d->next_ms = -1;
		b->failures = 0;
		b->open = 0;
		b->open_until_ms = 0;
		b->next_cooldown_ms = 0;
		return 0;
	}
	d->last_error = o->error == DELIVERY_ERR_NONE ? DELIVERY_ERR_HTTP :
	    o->error;
	/* A failed network try: count it; open at the threshold, and every
	 * failure while open (a failed probe) re-opens with the cooldown
	 * doubled up to the cap. */
	b->failures++;
	if (b->open || b->failures >= p->breaker_threshold) {
		int64_t cd = b->next_cooldown_ms > 0 ? b->next_cooldown_ms :
		    p->cooldown_ms;

		b->open = 1;
		b->open_until_ms = end_ms + cd;
		b->next_cooldown_ms = cd * 2 > p->cooldown_max_ms ?
		    p->cooldown_max_ms : cd * 2;
	}
	if (o->http_status == 410) {
		d->status = DELIVERY_FAILED;
		d->reason = DELIVERY_REASON_GONE;
		d->next_ms = -1;
		return 1;
	}
	if ((o->http_status == 429 || o->http_status == 503) &&
	    o->retry_after_ms > 0)
		floor_ms = o->retry_after_ms;
	schedule_next(p, d, end_ms, floor_ms, rnd);
	return 0;
}

static const char *const err_names[] = {
	[DELIVERY_ERR_NONE] = NULL,
	[DELIVERY_ERR_TIMEOUT] = "TIMEOUT",
	[DELIVERY_ERR_CONNECT] = "CONNECT_FAILED",
	[DELIVERY_ERR_DNS] = "DNS_FAILED",
	[DELIVERY_ERR_TLS] = "TLS_FAILED",
	[DELIVERY_ERR_BLOCKED] = "BLOCKED_DESTINATION",
	[DELIVERY_ERR_HTTP] = "HTTP_STATUS",
	[DELIVERY_ERR_CIRCUIT_OPEN] = "CIRCUIT_OPEN",
	[DELIVERY_ERR_DISABLED] = "ENDPOINT_DISABLED",
};

const char *
delivery_error_name(enum delivery_error e)
{
	return (size_t)e < sizeof(err_names) / sizeof(err_names[0]) ?
	    err_names[e] : NULL;
}

int
delivery_error_parse(const char *s, enum delivery_error *e)
{
	for (size_t i = 1; i < sizeof(err_names) / sizeof(err_names[0]); i++)
		if (strcmp(s, err_names[i]) == 0) {
			*e = (enum delivery_error)i;
			return 0;
		}
	return -1;
}

static const char *const status_names[] = {
	"PENDING", "DELIVERED", "CALLBACK_FAILED"
};

const char *
delivery_status_name(enum delivery_status s)
{
	return status_names[s];
}

int
delivery_status_parse(const char *s, enum delivery_status *st)
{
	for (size_t i = 0; i < 3; i++)
		if (strcmp(s, status_names[i]) == 0) {
			*st = (enum delivery_status)i;
			return 0;
		}
	return -1;
}

static const char *const reason_names[] = {
	NULL, "RETRIES_EXHAUSTED", "GONE", "ENDPOINT_DISABLED", "NO_SECRET"
};

const char *
delivery_reason_name(enum delivery_reason r)
{
	return reason_names[r];
}

int
delivery_reason_parse(const char *s, enum delivery_reason *r)
{
	for (size_t i = 1; i < 5; i++)
		if (strcmp(s, reason_names[i]) == 0) {
			*r = (enum delivery_reason)i;
			return 0;
		}
	return -1;
}
