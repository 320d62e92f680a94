/*
 * cli_cronexplain.c — "taskspool cron explain": words for people.
 *
 * Owns the layout of `cron explain`'s lines: the description
 * (core/cron.h, cron_explain), the next fires, and the zone's next offset
 * change with the DST rule that applies (cron_explain_change; cron.h,
 * tests/data/CRON-RULES.md 4.6).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli_cronexplain.h"
#include "core/cron.h"
#include "core/tz.h"

/* The offset change after from_s, and what it does to e (cron.h). */
static void
explain_change(const struct cron_expr *e, const struct tz *z,
    int64_t from_s)
{
	struct cron_change c;
	int rc = cron_explain_change(e, z, from_s, &c);

	if (rc == 0)
		printf("offset change: none in %s within 400 days\n",
		    tz_name(z));
	else if (rc < 0)
		printf("offset change: not told (out of memory)\n");
	else
		printf("%s\n  %s\n", c.head, c.effect);
}

int
cli_cron_explain(const char *text, enum cron_dialect d,
    const struct cron_expr *e, const struct tz *z, int64_t from_s, long n)
{
	char desc[512], out[TZ_RFC3339_MAX];
	int64_t t = from_s;
	long i;
	int rc = 0;

	printf("%s\n", text);
	printf("dialect: %s, %s\n", cron_dialect_name(d),
	    cron_is_fixed_time(e) ? "fixed-time (no second, minute or hour "
	    "part starts with '*')" : "interval (a second, minute or hour "
	    "part starts with '*')");
	if (cron_explain(e, desc, sizeof desc) < 0)
		printf("means: %s ... (cut), in %s\n", desc, tz_name(z));
	else
		printf("means: %s, in %s\n", desc, tz_name(z));
	for (i = 0; i < n; i++) {
		if (cron_next_fire(e, z, t, &t) != 1) {
			if (i == 0) {
				printf("next: never\n");
				rc = 1;
			}
			break;
		}
		(void)tz_format_rfc3339(z, t, out, sizeof out);
		printf("%s %s\n", i == 0 ? "next:" : "     ", out);
	}
	explain_change(e, z, from_s);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "taskspool cron: writing output failed\n");
		return EX_IOERR;
	}
	return rc;
}
