/*
 * api_cron.c — GET /cron/next: the `cron next` and `cron explain`
 * preview over HTTP.
 *
 * Owns the endpoint's query parameters and its answer.  The engine is
 * core/cron.h (cron_parse, cron_next_fire, cron_explain,
 * cron_explain_change), so the instants and the words are those of
 * `taskspool cron next` and `cron explain` for the same expression, zone
 * and start; the zone files are spool/tzload.h's.  Unlike the CLI, the
 * default zone is the one a systemd calendar event ends with, else UTC:
 * a client cannot see the server's host zone, and an answer must not
 * depend on it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "core/cron.h"
#include "core/tstime.h"
#include "core/tz.h"
#include "spool/clock.h"
#include "spool/tzload.h"

#define CRONAPI_N_DEFAULT	5
#define CRONAPI_N_MAX		100

/* The query of one request, decoded. */
struct cron_query {
	char	 expr[CRON_TEXT_MAX + 1];
	char	 dialect[16];
	char	 tz[TZ_NAME_MAX + 1];
	char	 from[64];
	char	 n[16];
	unsigned seen;		/* bit i: parameter i was given */
};

/* Decode QUERY_STRING into q: 0, or the status of the 422 sent. */
static int
read_query(struct api_ctx *c, struct buf *out, struct cron_query *q)
{
	const struct api_param p[] = {
		{ "expr", q->expr, sizeof q->expr },
		{ "dialect", q->dialect, sizeof q->dialect },
		{ "tz", q->tz, sizeof q->tz },
		{ "from", q->from, sizeof q->from },
		{ "n", q->n, sizeof q->n },
	};

	memset(q, 0, sizeof(*q));
	return api_query_read(c, out, p, sizeof p / sizeof p[0], &q->seen);
}

/* The "offsetChange" member: the zone's next change and its effect, or
 * null (none within CRON_CHANGE_LOOK_S, or out of memory). */
static json_t *
change_member(const struct cron_expr *e, const struct tz *z, int64_t from)
{
	struct cron_change ch;
	json_t *o;

	if (cron_explain_change(e, z, from, &ch) != 1 ||
	    (o = cron_change_json(&ch)) == NULL)
		return json_null();
	return o;
}

/* The 200 answer for e (parsed from q->expr in dialect d) in zone z. */
static json_t *
answer(const struct cron_query *q, enum cron_dialect d,
    const struct cron_expr *e, const struct tz *z, const struct tz *utc,
    int64_t from, long n)
{
	char desc[512], at[TZ_RFC3339_MAX], atu[TZ_RFC3339_MAX];
	json_t *o = json_object(), *next = json_array(), *nextu = json_array();
	int64_t t = from;

	if (o == NULL || next == NULL || nextu == NULL) {
		json_decref(o);
		json_decref(next);
		json_decref(nextu);
		return NULL;
	}
	if (cron_explain(e, desc, sizeof desc) < 0)
		(void)snprintf(desc + sizeof desc - 8, 8, " (cut)");
	for (long i = 0; i < n && cron_next_fire(e, z, t, &t) == 1; i++) {
		if (tz_format_rfc3339(z, t, at, sizeof at) != 0 ||
		    tz_format_rfc3339(utc, t, atu, sizeof atu) != 0)
			break;
		json_array_append_new(next, json_string(at));
		json_array_append_new(nextu, json_string(atu));
	}
	json_object_set_new(o, "expr", json_string(q->expr));
	json_object_set_new(o, "dialect", json_string(cron_dialect_name(d)));
	json_object_set_new(o, "schedule", json_string(cron_is_fixed_time(e) ?
	    "fixed-time" : "interval"));
	json_object_set_new(o, "timezone", json_string(tz_name(z)));
	json_object_set_new(o, "means", json_string(desc));
	json_object_set_new(o, "next", next);
	json_object_set_new(o, "nextUtc", nextu);
	json_object_set_new(o, "offsetChange", change_member(e, z, from));
	return o;
}

int
api_cron_next(struct api_ctx *c, struct buf *out)
{
	struct cron_query q;
	struct cron_expr *e = NULL;
	struct tz *z = NULL, *utc = NULL;
	enum cron_dialect d = CRON_DIALECT_VIXIE;
	char why[CRON_WHY_MAX + 96];
	const char *zname;
	int64_t from;
	long n = CRONAPI_N_DEFAULT;
	int rc;

	if ((rc = read_query(c, out, &q)) != 0)
		return rc;
	if (!(q.seen & 1u) || q.expr[0] == '\0')
		return api_query_invalid(c, out, "expr", "required: a cron "
		    "expression (\"30 2 * * *\") or a systemd calendar event "
		    "(\"Mon..Fri 09:00\"), percent-encoded");
	if (q.seen & 2u) {
		if (cron_dialect_from_name(q.dialect, &d) != 0)
			return api_query_invalid(c, out, "dialect", "must be "
			    "vixie, quartz or systemd");
	} else if (cron_dialect_guess(q.expr, &d) != 0)
		d = CRON_DIALECT_VIXIE;	/* whose error names the count */
	if (q.seen & 16u) {
		char *end;

		n = strtol(q.n, &end, 10);
		if (q.n[0] < '0' || q.n[0] > '9' || *end != '\0' || n < 1 ||
		    n > CRONAPI_N_MAX)
			return api_query_invalid(c, out, "n", "must be an "
			    "integer 1..100");
	}
	if (q.seen & 8u) {
		int64_t ms;

		if (tstime_parse_rfc3339(q.from, &ms) != 0)
			return api_query_invalid(c, out, "from", "must be an "
			    "RFC 3339 date-time with an offset, e.g. "
			    "2027-03-28T00:00:00Z");
		from = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
	} else
		from = tstime_now_ms() / 1000;
	if ((e = cron_parse(q.expr, d, why, CRON_WHY_MAX)) == NULL)
		return api_query_invalid(c, out, "expr", why);
	zname = q.seen & 4u ? q.tz : cron_zone(e) != NULL ? cron_zone(e) :
	    "UTC";
	if ((q.seen & 4u) && cron_zone(e) != NULL &&
	    !tz_names_same(cron_zone(e), q.tz)) {
		(void)snprintf(why, sizeof why, "the calendar event names "
		    "zone %s: give the zone in one place only",
		    cron_zone(e));
		rc = api_query_invalid(c, out, "tz", why);
		goto done;
	}
	/* zoneinfo's "localtime" (and "posixrules") are links to the
	 * server's own zone: an answer must not depend on it. */
	if (strcmp(zname, "localtime") == 0 || strcmp(zname, "posixrules") ==
	    0) {
		rc = api_query_invalid(c, out, q.seen & 4u ? "tz" : "expr",
		    "names the server's own zone file, not a zone: give an "
		    "IANA zone such as Europe/Berlin");
		goto done;
	}
	if ((z = tz_load(zname, why, sizeof why)) == NULL) {
		/* An unknown or malformed zone is the caller's; an unreadable
		 * zoneinfo file is the server's. */
		rc = errno == ENOENT || errno == EINVAL || errno == EFBIG ?
		    api_query_invalid(c, out, q.seen & 4u ? "tz" : "expr",
		    why) : api_unavailable(c, out, "zoneinfo");
		goto done;
	}
	if ((utc = tz_new_utc("UTC")) == NULL) {
		rc = api_unavailable(c, out, "UTC zone");
		goto done;
	}
	rc = api_respond_json(c, out, 200, answer(&q, d, e, z, utc, from, n));
done:
	tz_free(utc);
	tz_free(z);
	cron_free(e);
	return rc;
}
