/*
 * tstime — RFC 3339 timestamps; see tstime.h.
 */
#include "core/tstime.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

char *
tstime_format_ms(char *buf, size_t len, int64_t ms)
{
	time_t s = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	int frac = (int)(ms - (int64_t)s * 1000);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, frac);
	return buf;
}

static int
digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

static int
expect(const char **p, char c)
{
	if (**p != c)
		return -1;
	(*p)++;
	return 0;
}

int
tstime_parse_rfc3339(const char *s, int64_t *out)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
		30, 31 };
	const char *p = s;
	int y, mo, d, h, mi, sec, ms = 0, oh = 0, om = 0, sign = 0;
	struct tm tm;
	time_t t;

	if (digits(&p, 4, &y) || expect(&p, '-') || digits(&p, 2, &mo) ||
	    expect(&p, '-') || digits(&p, 2, &d))
		goto bad;
	if (*p != 'T' && *p != 't' && *p != ' ')
		goto bad;
	p++;
	if (digits(&p, 2, &h) || expect(&p, ':') || digits(&p, 2, &mi) ||
	    expect(&p, ':') || digits(&p, 2, &sec))
		goto bad;
	if (*p == '.') {
		int n = 0;

		p++;
		while (*p >= '0' && *p <= '9') {
			if (n < 3)
				ms = ms * 10 + (*p - '0');
			n++;
			p++;
		}
		if (n == 0 || n > 9)
			goto bad;
		for (; n < 3; n++)
			ms *= 10;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		p++;
		if (digits(&p, 2, &oh) || expect(&p, ':') ||
		    digits(&p, 2, &om) || oh > 23 || om > 59)
			goto bad;
	} else
		goto bad;
	if (*p != '\0')
		goto bad;
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    h > 23 || mi > 59 || sec > 60)
		goto bad;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) ||
	    y % 400 == 0))
		goto bad;
	if (sec == 60)
		sec = 59;	/* leap second: POSIX time has none */
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	*out = ((int64_t)t - sign * (oh * 3600 + om * 60)) * 1000 + ms;
	/* The instant, not only the written year, must be one we can
	 * write back: 0001-01-01 .. 9999-12-31T23:59:59.999Z. */
	if (*out < TSTIME_MIN_MS || *out > TSTIME_MAX_MS)
		goto bad;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}
