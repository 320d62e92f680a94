/*
 * fuzz_tz — the time zone loaders (tz.h): the first byte picks
 * tz_load_buf() (even: the rest is a TZif file, RFC 8536) or
 * tz_load_posix() (odd: the rest is a POSIX TZ string, POSIX.1 XBD 8.3);
 * a zone that loads is then read at fixed instants: tz_offset_at(),
 * tz_next_transition() and tz_prev_transition() walked a few steps,
 * tz_local_to_utc(), tz_format_rfc3339().  Checked: offsets within
 * ±26 h (tzfile(5) allows -89999..93599 s), transitions moving the
 * right way, a resolved local time mapping back to itself (UNIQUE and
 * OVERLAP: instant + offset = local), the formatted instant fitting
 * TZ_RFC3339_MAX.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/tz.h"

#define STEPS		6
#define POSIX_MAX	512	/* bytes of a TZ string tried */

static const int64_t instants[] = {
	TZ_EPOCH_MIN, -2208988800, 0, 1709985600, 1729987200, 2147483647,
	4102444800, TZ_EPOCH_MAX - 1,
};
#define NINST	(sizeof(instants) / sizeof(instants[0]))

static void
check_offset(int32_t off, const char *what, int64_t at)
{
	if (off < -26 * 3600 || off > 26 * 3600)
		fuzz_fail("%s at %lld: offset %ld s", what, (long long)at,
		    (long)off);
}

static void
probe(const struct tz *z)
{
	char b[TZ_RFC3339_MAX];

	for (size_t i = 0; i < NINST; i++) {
		int64_t t = instants[i], w;
		struct tz_local loc;

		check_offset(tz_offset_at(z, t), "offset", t);
		/* Near the ends an offset takes the local date out of
		 * 0001..9999: ERANGE is the documented answer there. */
		if (t > TZ_EPOCH_MIN + 2 * 86400 && t < TZ_EPOCH_MAX -
		    2 * 86400 && tz_format_rfc3339(z, t, b, sizeof(b)) != 0)
			fuzz_fail("tz_format_rfc3339 at %lld: errno %d",
			    (long long)t, errno);
		for (int s = 0; s < STEPS && tz_next_transition(z, t, &w) ==
		    1; s++) {
			if (w <= t)
				fuzz_fail("next transition %lld after %lld",
				    (long long)w, (long long)t);
			t = w;
		}
		t = instants[i];
		for (int s = 0; s < STEPS && tz_prev_transition(z, t, &w) ==
		    1; s++) {
			if (w > t)
				fuzz_fail("prev transition %lld at %lld",
				    (long long)w, (long long)t);
			if (w <= TZ_EPOCH_MIN)
				break;
			t = w - 1;
		}
		t = instants[i];
		if (t <= TZ_EPOCH_MIN + 2 * 86400 ||
		    t >= TZ_EPOCH_MAX - 2 * 86400)
			continue;
		if (tz_local_to_utc(z, t, &loc) != 0)
			fuzz_fail("tz_local_to_utc(%lld): errno %d",
			    (long long)t, errno);
		if (loc.kind != TZ_LOCAL_GAP && (loc.first_s +
		    tz_offset_at(z, loc.first_s) != t || loc.second_s +
		    tz_offset_at(z, loc.second_s) != t))
			fuzz_fail("local %lld resolves to %lld/%lld, which is "
			    "not that local time", (long long)t,
			    (long long)loc.first_s, (long long)loc.second_s);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256], spec[POSIX_MAX + 1];
	struct tz *z;

	if (size < 1)
		return 0;
	if (data[0] % 2 == 0)
		z = tz_load_buf(data + 1, size - 1, "Fuzz/Zone", why,
		    sizeof(why));
	else {
		if (size - 1 > POSIX_MAX)
			return 0;
		memcpy(spec, data + 1, size - 1);
		spec[size - 1] = '\0';
		z = tz_load_posix(spec, why, sizeof(why));
	}
	if (z == NULL)
		return 0;
	probe(z);
	tz_free(z);
	return 0;
}
