/*
 * fuzz_cron — the cron engine (cron.h): cron_parse() of any text in the
 * dialect the first byte picks (0 vixie, 1 quartz, 3 systemd, else the
 * CLI's guess, cron_dialect_guess), then, when it parses,
 * cron_next_fire() walked up to FIRES times in each of the zones below
 * from a start instant the second byte picks (near the 2024 DST changes
 * of New York, London and Lord Howe).  Checked: every fire is strictly
 * after the instant asked about and inside TZ_EPOCH_MIN..TZ_EPOCH_MAX;
 * -1 only for an instant out of range; the parsed dialect is the one
 * asked for; only a systemd event names a zone (cron_zone), and the name
 * passes tz_name_ok; cron_explain's length is its text's, and a buffer
 * too small gives -1.
 *
 * The zones come from the host's tzdata (Debian package tzdata): UTC, a
 * one-hour DST (America/New_York, Europe/London), a half-hour DST
 * (Australia/Lord_Howe) and a +05:45 offset (Asia/Kathmandu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cron.h"
#include "harness.h"
#include "core/tz.h"
#include "spool/tzload.h"

#define FIRES	8

static const char *const zone_names[] = { "UTC", "America/New_York",
    "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu" };
#define NZONES	(sizeof(zone_names) / sizeof(zone_names[0]))
static struct tz *zones[NZONES];

static const int64_t starts[] = {
	1709985600,	/* 2024-03-09T12:00:00Z, the day before New York's
			 * spring-forward */
	1729987200,	/* 2024-10-27T00:00:00Z, an hour before London's
			 * fall-back */
	1712412000,	/* 2024-04-06T14:00:00Z, Lord Howe's fall-back at
			 * 02:00 local (+11 → +10:30) is an hour after */
	1704067200,	/* 2024-01-01T00:00:00Z */
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char why[256];

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < NZONES; i++)
		if ((zones[i] = tz_load(zone_names[i], why, sizeof(why))) ==
		    NULL) {
			fprintf(stderr, "fuzz_cron: %s (package tzdata)\n",
			    why);
			exit(1);
		}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[CRON_TEXT_MAX + 2], why[CRON_WHY_MAX];
	enum cron_dialect d = CRON_DIALECT_VIXIE;
	struct cron_expr *e;
	int64_t start;

	if (size < 2 || size - 2 > CRON_TEXT_MAX + 1)
		return 0;
	memcpy(text, data + 2, size - 2);
	text[size - 2] = '\0';
	if (data[0] == 1)
		d = CRON_DIALECT_QUARTZ;
	else if (data[0] == 3)
		d = CRON_DIALECT_SYSTEMD;
	else if (data[0] > 1 && cron_dialect_guess(text, &d) != 0)
		return 0;
	start = starts[data[1] % (sizeof(starts) / sizeof(starts[0]))];
	if ((e = cron_parse(text, d, why, sizeof(why))) == NULL)
		return 0;
	if (cron_dialect(e) != d)
		fuzz_fail("parsed as dialect %d, asked for %d", cron_dialect(e),
		    d);
	(void)cron_is_fixed_time(e);
	{
		char words[512], small[7];
		int n = cron_explain(e, words, sizeof(words));

		if (n >= 0 && (size_t)n != strlen(words))
			fuzz_fail("\"%s\": cron_explain %d, text %zu", text, n,
			    strlen(words));
		if (cron_explain(e, small, sizeof(small)) >= 0 &&
		    n >= (int)sizeof(small))
			fuzz_fail("\"%s\": cron_explain fit 7 bytes", text);
	}
	if (cron_zone(e) != NULL && (d != CRON_DIALECT_SYSTEMD ||
	    !tz_name_ok(cron_zone(e))))
		fuzz_fail("\"%s\": zone \"%s\" in dialect %d", text,
		    cron_zone(e), d);
	for (size_t z = 0; z < NZONES; z++) {
		int64_t after = start, next;

		for (int i = 0; i < FIRES; i++) {
			int rc = cron_next_fire(e, zones[z], after, &next);

			if (rc == 0)
				break;
			if (rc < 0) {
				if (after >= TZ_EPOCH_MIN && after <
				    TZ_EPOCH_MAX)
					fuzz_fail("\"%s\" in %s: -1 after %lld",
					    text, zone_names[z],
					    (long long)after);
				break;
			}
			if (next <= after || next > TZ_EPOCH_MAX)
				fuzz_fail("\"%s\" in %s: fire %lld after %lld",
				    text, zone_names[z], (long long)next,
				    (long long)after);
			after = next;
		}
	}
	cron_free(e);
	return 0;
}
