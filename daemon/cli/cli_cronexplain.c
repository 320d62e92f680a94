/*
 * cli_cronexplain.c — "taskspool cron explain": words for people.
 *
 * Owns the text of `cron explain`: the description (core/cron.h,
 * cron_explain), the next fires, and the zone's next offset change told
 * with the DST rule that applies (cron.h; tests/data/CRON-RULES.md 4.6,
 * cronie's behaviour): where a forward jump skips a fixed time, the event
 * fires at the first instant after the jump; a repeated fixed time fires
 * on the first pass only; interval events follow elapsed time.  Which
 * wall time of the event falls in the skipped or repeated range is found
 * by running the same search on the wall-clock line (a UTC zone), so the
 * words and the engine cannot disagree.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli_cronexplain.h"
#include "core/cron.h"
#include "core/tz.h"

#define CE_LOOK_S	(400LL * 86400)	/* how far to look for a change */

static const char *const dialect_names[] = { "vixie", "quartz", "systemd" };

/* "YYYY-MM-DD" and "HH:MM:SS" of wall-clock seconds w (local). */
static void
wall_parts(const struct tz *u, int64_t w, char *date, char *hms)
{
	char buf[TZ_RFC3339_MAX];

	if (tz_format_rfc3339(u, w, buf, sizeof buf) != 0) {
		strcpy(date, "?");
		strcpy(hms, "?");
		return;
	}
	memcpy(date, buf, 10);
	date[10] = '\0';
	memcpy(hms, buf + 11, 8);
	hms[8] = '\0';
}

static void
offset_text(int32_t o, char *out, size_t len)
{
	int a = o < 0 ? -o : o;

	(void)snprintf(out, len, "%c%02d:%02d", o < 0 ? '-' : '+', a / 3600,
	    a / 60 % 60);
}

/*
 * The times of e on the wall-clock line u in [lo, hi) (local seconds),
 * as "02:00:00, 02:20:00 and 02:40:00" (at most 6, then "..."), into out.
 */
static void
times_in(const struct cron_expr *e, const struct tz *u, int64_t lo,
    int64_t hi, char *out, size_t len)
{
	char d[16], t[16];
	int64_t w, ws[7];
	size_t used = 0;
	int n = 0, i;

	out[0] = '\0';
	for (w = lo - 1; n < 7 && cron_next_fire(e, u, w, &w) == 1 && w < hi;)
		ws[n++] = w;
	for (i = 0; i < n && i < 6; i++) {
		wall_parts(u, ws[i], d, t);
		used += (size_t)snprintf(out + used, len - used, "%s%s",
		    i == 0 ? "" : n <= 6 && i == n - 1 ? " and " : ", ", t);
		if (used >= len)
			return;
	}
	if (n > 6)
		(void)snprintf(out + used, len - used, ", ...");
}

/* The offset change after from_s, and what it does to e. */
static void
explain_change(const struct cron_expr *e, const struct tz *z,
    int64_t from_s)
{
	struct tz *u;
	char o1t[16], o2t[16], when[TZ_RFC3339_MAX], d1[16], t1[16], d2[16];
	char t2[16], dw[16], tw[16], list[160];
	int64_t T, w, lo, hi;
	int32_t o1, o2, jump;
	int fixed = cron_is_fixed_time(e), many;

	if (!tz_next_transition(z, from_s, &T) || T - from_s > CE_LOOK_S) {
		printf("offset change: none in %s within 400 days\n",
		    tz_name(z));
		return;
	}
	o1 = tz_offset_at(z, T - 1);
	o2 = tz_offset_at(z, T);
	jump = o2 - o1;
	offset_text(o1, o1t, sizeof o1t);
	offset_text(o2, o2t, sizeof o2t);
	(void)tz_format_rfc3339(z, T, when, sizeof when);
	if ((u = tz_new_utc("wall")) == NULL) {
		printf("offset change at %s (%s to %s)\n", when, o1t, o2t);
		return;
	}
	/* The wall times skipped ([T+o1, T+o2)) or repeated ([T+o2, T+o1)). */
	lo = T + (jump > 0 ? o1 : o2);
	hi = T + (jump > 0 ? o2 : o1);
	wall_parts(u, lo, d1, t1);
	wall_parts(u, hi - 1, d2, t2);
	printf("offset change at %s (%s to %s): wall times %s to %s on %s "
	    "%s\n", when, o1t, o2t, t1, t2, d1, jump > 0 ? "do not exist" :
	    "occur twice");
	if (cron_next_fire(e, u, lo - 1, &w) != 1 || w >= hi) {
		printf("  none of its times falls in them: the schedule is "
		    "unaffected\n");
		tz_free(u);
		return;
	}
	wall_parts(u, w, dw, tw);
	times_in(e, u, lo, hi, list, sizeof list);
	many = strpbrk(list, ",") != NULL || strstr(list, " and ") != NULL;
	if ((jump > 0 ? jump : -jump) > CRON_DST_MAX_S) {
		printf("  a jump of more than 3 hours is a clock correction, "
		    "not DST: %s on %s %s\n", list, dw, jump > 0 ?
		    (many ? "are skipped, not caught up" :
		    "is skipped, not caught up") : (many ? "fire again" :
		    "fires again"));
	} else if (jump > 0 && fixed) {
		wall_parts(u, T + o2, d2, t2);	/* the jump's end, new offset */
		printf("  on %s it fires once at %s, the first instant after "
		    "the jump, because %s %s (fixed-time: a skipped run "
		    "happens at once)\n", dw, t2, list, many ?
		    "do not exist" : "does not exist");
	} else if (jump > 0) {
		printf("  %s on %s do not occur (interval: it follows elapsed "
		    "time; no catch-up)\n", list, dw);
	} else if (fixed) {
		printf("  %s on %s occurs twice; it fires on the first pass "
		    "only (%s; fixed-time: never twice)\n", tw, dw, o1t);
	} else {
		printf("  %s on %s fire twice (%s, then %s; interval: "
		    "elapsed time goes on)\n", list, dw, o1t, o2t);
	}
	tz_free(u);
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
	printf("dialect: %s, %s\n", dialect_names[d],
	    cron_is_fixed_time(e) ? "fixed-time" : "interval (a second, "
	    "minute or hour part starts with '*')");
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
