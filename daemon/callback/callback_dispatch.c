/*
 * callback_dispatch — deciding a ready delivery's try: its URL (its own
 * callbackUrl, or its app's registration in state/callbacks/, read
 * here), the URL policy before any connection (scheme, no userinfo,
 * allowed port; API.md §7.1), the secrets to sign with, and its
 * endpoint's circuit breaker (core/delivery.c).  Then the try starts
 * (callback_http.c) or the delivery gets its new state without a request
 * (no secret, endpoint disabled, circuit open, URL not allowed).
 *
 * Invariants: at most one try in flight per endpoint and at most
 * callback_max_inflight in all; a callback is never sent unsigned; a new
 * registration (updatedAt) resets its endpoint's breaker (§4.3).
 * dispatch() is 100 lines: the decisions in their order, which share the
 * registration and the endpoint read at its top.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "callback/callback_impl.h"
#include "core/jsontext.h"
#include "core/ssrf.h"
#include "spool/clock.h"

/* --- registrations ------------------------------------------------------ */

struct reg {
	char url[TASK_URL_MAX + 1];
	int disabled;
	char secret[WHSIGN_SECRETS_MAX][WHSIGN_SECRET_MAX];
	size_t nsecrets;		/* unexpired, newest first */
	char updated[TSTIME_BUF + 8];
};

/* Read state/callbacks/<app>.json (written by the CGI, API.md §4.3).
 * Returns 0, or -1 with errno (ENOENT: none; EINVAL: unusable). */
static int
reg_read(int regfd, const char *app, int64_t now_ms, struct reg *r)
{
	char file[TASK_CODE_MAX + 8];
	json_t *o, *v, *s;
	size_t len, i;
	char *data;

	memset(r, 0, sizeof(*r));
	snprintf(file, sizeof(file), "%s.json", app);
	if ((data = spool_read_file(regfd, file, CB_REG_MAX, &len)) == NULL)
		return -1;
	o = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	free(data);
	if (o == NULL)
		goto bad;
	v = json_object_get(o, "url");
	if (!json_is_string(v) || json_string_length(v) > TASK_URL_MAX)
		goto bad;
	snprintf(r->url, sizeof(r->url), "%s", json_string_value(v));
	v = json_object_get(o, "status");
	if (!json_is_string(v))
		goto bad;
	r->disabled = strcmp(json_string_value(v), "ACTIVE") != 0;
	v = json_object_get(o, "updatedAt");
	if (json_is_string(v))
		snprintf(r->updated, sizeof(r->updated), "%s",
		    json_string_value(v));
	json_array_foreach(json_object_get(o, "secrets"), i, s) {
		json_t *sec = json_object_get(s, "secret");
		json_t *exp = json_object_get(s, "expiresAt");
		int64_t until;

		if (!json_is_string(sec) || json_string_length(sec) >=
		    WHSIGN_SECRET_MAX)
			continue;
		if (json_is_string(exp) && (tstime_parse_rfc3339(
		    json_string_value(exp), &until) != 0 || until <= now_ms))
			continue;
		if (r->nsecrets < WHSIGN_SECRETS_MAX)
			snprintf(r->secret[r->nsecrets++], WHSIGN_SECRET_MAX,
			    "%s", json_string_value(sec));
	}
	json_decref(o);
	return 0;
bad:
	json_decref(o);
	errno = EINVAL;
	return -1;
}

/* Set a registration's status to DISABLED (a 410, API.md §6.4) with the
 * writer protocol.  Returns 0 or -1 with errno. */
int
sender_reg_disable(const struct spool *s, int regfd, const char *app,
    char *updated, size_t ulen)
{
	char file[TASK_CODE_MAX + 8], t[TSTIME_BUF];
	json_t *o;
	char *data, *text;
	size_t len;
	int rc;

	snprintf(file, sizeof(file), "%s.json", app);
	if ((data = spool_read_file(regfd, file, CB_REG_MAX, &len)) == NULL)
		return -1;
	o = jsontext_loadb(data, len, 0, NULL);
	free(data);
	if (o == NULL || !json_is_object(o)) {
		json_decref(o);
		errno = EINVAL;
		return -1;
	}
	tstime_format_ms(t, sizeof(t), tstime_now_ms());
	json_object_set_new(o, "status", json_string("DISABLED"));
	json_object_set_new(o, "updatedAt", json_string(t));
	text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_INDENT(2));
	json_decref(o);
	if (text == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rc = spool_publish(s, regfd, file, text, strlen(text), -1, 0);
	free(text);
	snprintf(updated, ulen, "%s", t);
	return rc;
}

uint32_t
sender_rnd32(void)
{
	uint32_t r = 0;

	(void)RAND_bytes((unsigned char *)&r, sizeof(r));
	return r;
}

static struct cbendpoint *
endpoint_get(struct callback_sender *cs, const char *key)
{
	struct cbendpoint *e;

	for (e = cs->eps; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	snprintf(e->key, sizeof(e->key), "%s", key);
	delivery_breaker_init(&e->br);
	e->next = cs->eps;
	cs->eps = e;
	return e;
}

/* URL policy before any connection (API.md §7.1, §4.3): scheme, no
 * userinfo, allowed port.  Fills key with "url:<scheme>://<host>:<port>".
 * Returns 0 or -1. */
static int
url_check(const struct callback_sender *cs, const char *url, char *key,
    size_t klen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *user = NULL;
	int rc = -1;

	if (u == NULL || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) !=
	    CURLUE_OK)
		goto out;
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK)
		goto out;
	if (strcmp(scheme, "https") != 0 && !(strcmp(scheme, "http") == 0 &&
	    cs->cfg.callback_allow_http))
		goto out;
	if (cs->allow.nport > 0 && !ssrf_port_ok(&cs->allow, atoi(port)))
		goto out;
	snprintf(key, klen, "url:%s://%s:%s", scheme, host, port);
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(user);
	curl_url_cleanup(u);
	return rc;
}

/*
 * Decide about ready job j at now.  Returns 1 when j left the ready list
 * (sent, or finished without a request), 0 when it must wait.
 */
static int
dispatch(struct callback_sender *cs, struct cbjob *j, int64_t now)
{
	const char *sec[WHSIGN_SECRETS_MAX];
	size_t nsec = 0;
	struct reg r;
	int have_reg = 0, disabled = 0, bad_url = 0;
	char key[TASK_URL_MAX + 8];
	enum delivery_action act;

	if (j->c.st.status != DELIVERY_PENDING) {
		sender_persist(cs, j);	/* a finished file found in pending/ */
		return 1;
	}
	/* Its endpoint (fixed for a delivery: its URL's origin, or its
	 * app's registration) has a try in flight: wait, without reading
	 * the registration or parsing the URL again at every pass. */
	if (j->ep != NULL && j->ep->br.inflight > 0)
		return 0;
	if (j->c.app_id[0] != '\0' && reg_read(cs->d.fd[D_REG], j->c.app_id,
	    now, &r) == 0)
		have_reg = 1;
	j->using_reg = j->c.url == NULL;
	if (j->using_reg) {
		snprintf(key, sizeof(key), "app:%s", j->c.app_id);
		snprintf(j->url, sizeof(j->url), "%s", have_reg ? r.url : "");
		/* No registration any more: as good as disabled. */
		disabled = !have_reg || r.disabled;
	} else
		snprintf(j->url, sizeof(j->url), "%s", j->c.url);
	if (!disabled && url_check(cs, j->url, key, sizeof(key)) != 0) {
		bad_url = 1;
		if (!j->using_reg)
			snprintf(key, sizeof(key), "url:invalid");
	}
	if ((j->ep = endpoint_get(cs, key)) == NULL)
		return 0;
	/* Re-registering (a new updatedAt) resets the breaker (§4.3). */
	if (have_reg && j->using_reg && strcmp(j->ep->reg_updated,
	    r.updated) != 0) {
		if (j->ep->reg_updated[0] != '\0')
			delivery_breaker_init(&j->ep->br);
		snprintf(j->ep->reg_updated, sizeof(j->ep->reg_updated), "%s",
		    r.updated);
	}
	if (have_reg)
		for (size_t i = 0; i < r.nsecrets; i++)
			sec[nsec++] = r.secret[i];
	else if (cs->cfg.callback_secret[0] != '\0')
		sec[nsec++] = cs->cfg.callback_secret;
	act = delivery_begin(&j->ep->br, disabled, now, &j->probe);
	if (act == DELIVERY_WAIT)
		return 0;
	if (act == DELIVERY_SEND && !bad_url && nsec > 0 &&
	    cs->ninflight >= cs->cfg.callback_max_inflight)
		return 0;
	if (act == DELIVERY_SEND && nsec == 0) {
		/* Unsigned callbacks are never sent (callback_secret). */
		j->c.st.attempts++;
		j->c.st.last_attempt_ms = now;
		j->c.st.status = DELIVERY_FAILED;
		j->c.st.reason = DELIVERY_REASON_NO_SECRET;
		j->c.st.next_ms = -1;
		j->c.finished_ms = now;
		sender_log_try(j, now, "no secret to sign with (set "
		    "callback_secret in taskspool.conf, or register the app's "
		    "callback)", 0);
		sender_persist(cs, j);
		return 1;
	}
	if (act != DELIVERY_SEND) {
		delivery_fail_fast(&cs->pol, &j->c.st, act == DELIVERY_REFUSE,
		    now, sender_rnd32());
		if (j->c.st.status != DELIVERY_PENDING)
			j->c.finished_ms = now;
		sender_log_try(j, now, act == DELIVERY_REFUSE ?
		    "ENDPOINT_DISABLED" : "CIRCUIT_OPEN (no request)", 0);
		sender_persist(cs, j);
		return 1;
	}
	delivery_sent(&j->c.st, &j->ep->br, now);
	if (bad_url || sender_start_request(cs, j, now, sec, nsec) != 0) {
		struct delivery_outcome o = { DELIVERY_ERR_BLOCKED, 0, -1 };

		if (!bad_url)
			o.error = DELIVERY_ERR_CONNECT;
		if (j->easy != NULL) {
			curl_easy_cleanup(j->easy);
			j->easy = NULL;
		}
		delivery_done(&cs->pol, &j->c.st, &j->ep->br, &o, now,
		    sender_rnd32());
		if (j->c.st.status != DELIVERY_PENDING)
			j->c.finished_ms = now;
		sender_log_try(j, now, bad_url ? "BLOCKED_DESTINATION (URL not "
		    "allowed)" : "CONNECT_FAILED (could not start)", !bad_url);
		sender_persist(cs, j);
		return 1;
	}
	j->next = cs->flight;
	cs->flight = j;
	cs->ninflight++;
	return 1;
}

void
sender_dispatch_ready(struct callback_sender *cs, int64_t now)
{
	struct cbjob **pp = &cs->ready;

	while (*pp != NULL) {
		struct cbjob *j = *pp, *next = j->next;

		if (dispatch(cs, j, now)) {
			*pp = next;
			cs->nready--;
		} else
			pp = &j->next;
	}
}
