/*
 * ratespec — the rate_limit value "<taskCode>=<N>/<period>[:<burst>]
 * [,...]"; see ratespec.h.
 */
#include "core/ratespec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Units of a period, in ms. */
static const struct {
	const char *name;
	int64_t ms;
} units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	{ "d", 86400000 },
};

/* A whole number of 1..max decimal digits only at s (len bytes) into
 * *v; 0, or -1. */
static int
number(const char *s, size_t len, long long max, long long *v)
{
	long long x = 0;

	if (len == 0 || len > 12)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (s[i] - '0');
	}
	if (x < 1 || x > max)
		return -1;
	*v = x;
	return 0;
}

/*
 * Parse one item of len bytes at p into *it.  Returns 0, or -1 with
 * what is wrong in why (whylen bytes; no key, no item).
 */
static int
parse_item(const char *p, size_t len, struct ratespec_item *it, char *why,
    size_t whylen)
{
	const char *eq = memchr(p, '=', len), *sl, *colon, *end = p + len;
	const char *u;
	long long n, per, burst;
	size_t cl, ul;

	memset(it, 0, sizeof(*it));
	if (len >= sizeof(it->text)) {
		snprintf(why, whylen, "too long");
		return -1;
	}
	memcpy(it->text, p, len);
	it->text[len] = '\0';
	if (eq == NULL || (sl = memchr(eq, '/', (size_t)(end - eq))) ==
	    NULL) {
		snprintf(why, whylen, "is not <taskCode>=<N>/<period>"
		    "[:<burst>]");
		return -1;
	}
	cl = (size_t)(eq - p);
	if (cl == 0 || cl > TASK_CODE_MAX) {
		snprintf(why, whylen, "has no valid task code");
		return -1;
	}
	memcpy(it->code, p, cl);
	it->code[cl] = '\0';
	if (!task_name_ok(it->code, TASK_CODE_MAX)) {
		snprintf(why, whylen, "has no valid task code");
		return -1;
	}
	if (number(eq + 1, (size_t)(sl - eq - 1), RATESPEC_N_MAX, &n) != 0) {
		snprintf(why, whylen, "N is not a whole number 1..%d",
		    RATESPEC_N_MAX);
		return -1;
	}
	colon = memchr(sl, ':', (size_t)(end - sl));
	u = sl + 1;
	while (u < (colon != NULL ? colon : end) && *u >= '0' && *u <= '9')
		u++;
	ul = (size_t)((colon != NULL ? colon : end) - u);
	per = -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == ul &&
		    memcmp(units[i].name, u, ul) == 0) {
			long long k;

			if (number(sl + 1, (size_t)(u - sl - 1),
			    RATESPEC_PERIOD_MAX / units[i].ms, &k) == 0)
				per = k * units[i].ms;
		}
	if (per < 0) {
		snprintf(why, whylen, "period is not a whole number and a "
		    "unit (ms, s, m, h, d) of 1ms..7d");
		return -1;
	}
	if (n > per) {
		snprintf(why, whylen, "more than one start per ms "
		    "(N > the period in ms)");
		return -1;
	}
	burst = n;
	if (colon != NULL && number(colon + 1, (size_t)(end - colon - 1),
	    RATESPEC_BURST_MAX, &burst) != 0) {
		snprintf(why, whylen, "burst is not a whole number 1..%d",
		    RATESPEC_BURST_MAX);
		return -1;
	}
	it->n = (long)n;
	it->period_ms = per;
	it->burst = (long)burst;
	return 0;
}

int
ratespec_check(const char *key, const char *spec, char *why, size_t whylen)
{
	const char *p = spec;

	while (*p != '\0') {
		const char *end = strchr(p, ',');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		struct ratespec_item it, again;
		char msg[128];

		if (len == 0) {
			snprintf(why, whylen, "%s: empty item in \"%.200s\"",
			    key, spec);
			return -1;
		}
		if (parse_item(p, len, &it, msg, sizeof(msg)) != 0) {
			snprintf(why, whylen, "%s: \"%.*s\": %s", key,
			    (int)(len > 120 ? 120 : len), p, msg);
			return -1;
		}
		if (ratespec_find(p + len, it.code, &again) != 0) {
			snprintf(why, whylen, "%s: task code \"%s\" given "
			    "twice", key, it.code);
			return -1;
		}
		p += len;
		if (*p == ',' && *++p == '\0') {
			snprintf(why, whylen, "%s: empty item at the end of "
			    "\"%.200s\"", key, spec);
			return -1;
		}
	}
	return 0;
}

int
ratespec_find(const char *spec, const char *code, struct ratespec_item *out)
{
	size_t cl = strlen(code);
	char why[128];

	for (const char *p = spec; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ',');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (len > cl && strncmp(p, code, cl) == 0 && p[cl] == '=')
			return parse_item(p, len, out, why, sizeof(why)) == 0 ?
			    1 : -1;
		p = end != NULL ? end + 1 : NULL;
	}
	return 0;
}
