/*
 * callback_http — one HTTP try with libcurl: the request (Standard
 * Webhooks headers and signature, every option of API.md §7.4), the
 * socket check against the SSRF policy at connect time, the bounded read
 * of the response (CB_RESP_MAX) and its Retry-After, and the outcome of a
 * finished transfer classified for the delivery schedule.
 *
 * Invariants: no redirect is followed, no proxy, netrc or environment is
 * used, TLS is verified; a socket to a denied address is never opened; a
 * 2xx status line that arrived is a success even when the body was cut;
 * a 410 from a registration's URL disables that registration.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "callback/callback_impl.h"
#include "core/jsontext.h"
#include "core/ssrf.h"
#include "core/traceparent.h"
#include "spool/clock.h"
#include "spool/log.h"

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct cbjob *j = arg;

	(void)p;
	j->resp_bytes += size * n;
	if (j->resp_bytes > CB_RESP_MAX) {
		j->aborted = 1;
		return 0;		/* abort: bounded memory and time */
	}
	return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct cbjob *j = arg;
	size_t len = size * n;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0)
		j->retry_after_ms = -1;		/* a new response */
	else if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		size_t i = 12;
		int64_t v = 0;
		int digits = 0;

		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < len && p[i] >= '0' && p[i] <= '9' && digits < 10) {
			v = v * 10 + (p[i++] - '0');
			digits++;
		}
		/* delta-seconds only; an HTTP-date is ignored. */
		if (digits > 0 && (i == len || p[i] == '\r' || p[i] == '\n' ||
		    p[i] == ' '))
			j->retry_after_ms = v * 1000;
	}
	return len;
}

static curl_socket_t
on_opensocket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct cbjob *j = arg;
	struct callback_sender *cs;
	curl_socket_t fd;

	curl_easy_getinfo(j->easy, CURLINFO_PRIVATE, (char **)&cs);
	(void)purpose;
	if (ssrf_denied(&a->addr, a->addrlen, &cs->allow)) {
		j->blocked = 1;
		return CURL_SOCKET_BAD;
	}
	fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	return fd < 0 ? CURL_SOCKET_BAD : fd;
}

/*
 * The traceparent header of a try (README.md, "Trace context"): a child
 * of the task's traceparent, data.traceparent of the signed §6.2 body
 * (len bytes at body), with a new parent-id for this try, into out
 * (TRACEPARENT_LEN + 1 bytes).  Returns 0, or -1 when the body has none
 * (a task without one, a delivery made before it was kept) or it is not
 * valid.
 */
static int
body_traceparent(const char *body, size_t len, char *out)
{
	json_t *r = jsontext_loadb(body, len, 0, NULL);
	const char *tp = json_string_value(json_object_get(
	    json_object_get(r, "data"), "traceparent"));
	int rc = tp != NULL ? traceparent_child_fresh(tp, out) : -1;

	json_decref(r);
	return rc;
}

/* Start the request of j at now.  Returns 0, or -1 when it could not be
 * started (j is then finished as a failed try). */
int
sender_start_request(struct callback_sender *cs, struct cbjob *j, int64_t now,
    const char *const *secrets, size_t nsecrets)
{
	char h[WHSIGN_HEADER_MAX + 40], sig[WHSIGN_HEADER_MAX];
	int64_t ts = now / 1000;
	CURL *e;

	j->retry_after_ms = -1;
	if (whsign_header(secrets, nsecrets, j->c.webhook_id, ts, j->c.body,
	    j->c.body_len, sig) != 0)
		return -1;
	if ((e = curl_easy_init()) == NULL)
		return -1;
	j->easy = e;
	j->hdrs = curl_slist_append(j->hdrs, "Content-Type: application/json");
	j->hdrs = curl_slist_append(j->hdrs, "User-Agent: ts-callback/1");
	snprintf(h, sizeof(h), "webhook-id: %s", j->c.webhook_id);
	j->hdrs = curl_slist_append(j->hdrs, h);
	snprintf(h, sizeof(h), "webhook-timestamp: %" PRId64, ts);
	j->hdrs = curl_slist_append(j->hdrs, h);
	snprintf(h, sizeof(h), "webhook-signature: %s", sig);
	j->hdrs = curl_slist_append(j->hdrs, h);
	snprintf(h, sizeof(h), "X-Webhook-Attempt: %d", j->c.st.attempts);
	j->hdrs = curl_slist_append(j->hdrs, h);
	j->hdrs = curl_slist_append(j->hdrs, "Expect:");
	if (body_traceparent(j->c.body, j->c.body_len, h + 13) == 0) {
		memcpy(h, "traceparent: ", 13);
		j->hdrs = curl_slist_append(j->hdrs, h);
	}
	if (j->hdrs == NULL)
		return -1;
	/* API.md §7.4, every option. */
	curl_easy_setopt(e, CURLOPT_URL, j->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR,
	    cs->cfg.callback_allow_http ? "http,https" : "https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "https");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS, CURLPROTO_HTTPS |
	    (cs->cfg.callback_allow_http ? CURLPROTO_HTTP : 0));
#endif
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 0L);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_opensocket);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, j);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (cs->cfg.callback_ca_file[0] != '\0')
		curl_easy_setopt(e, CURLOPT_CAINFO, cs->cfg.callback_ca_file);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	    cs->cfg.callback_timeout_ms);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, cs->cfg.callback_timeout_ms);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	curl_easy_setopt(e, CURLOPT_UNRESTRICTED_AUTH, 0L);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, j->c.body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)j->c.body_len);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, j->hdrs);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, j);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, j);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)cs);
	if (curl_multi_add_handle(cs->multi, e) != CURLM_OK)
		return -1;
	return 0;
}

/* Finish j's request: classify, update state and breaker, persist. */
static void
finish_request(struct callback_sender *cs, struct cbjob *j, CURLcode rc)
{
	struct delivery_outcome o;
	long code = 0;
	int64_t end = tstime_now_ms();
	char what[64];

	curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &code);
	o.http_status = (int)code;
	o.retry_after_ms = j->retry_after_ms;
	o.error = DELIVERY_ERR_NONE;
	/* A 2xx status line that arrived stays a success even when we
	 * stopped reading the body (§6.4). */
	if (rc != CURLE_OK && !(code >= 200 && code <= 299)) {
		o.http_status = 0;
		if (j->blocked)
			o.error = DELIVERY_ERR_BLOCKED;
		else if (rc == CURLE_OPERATION_TIMEDOUT)
			o.error = DELIVERY_ERR_TIMEOUT;
		else if (rc == CURLE_COULDNT_RESOLVE_HOST)
			o.error = DELIVERY_ERR_DNS;
		else if (rc == CURLE_SSL_CONNECT_ERROR ||
		    rc == CURLE_PEER_FAILED_VERIFICATION ||
		    rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CIPHER ||
		    rc == CURLE_SSL_CACERT_BADFILE)
			o.error = DELIVERY_ERR_TLS;
		else if (rc == CURLE_UNSUPPORTED_PROTOCOL)
			o.error = DELIVERY_ERR_BLOCKED;
		else if (code > 0) {
			o.http_status = (int)code;
			o.error = DELIVERY_ERR_HTTP;
		} else
			o.error = DELIVERY_ERR_CONNECT;
	}
	if (delivery_done(&cs->pol, &j->c.st, &j->ep->br, &o, end,
	    sender_rnd32()) && j->using_reg) {
		if (sender_reg_disable(&cs->sp, cs->d.fd[D_REG], j->c.app_id,
		    j->ep->reg_updated, sizeof(j->ep->reg_updated)) != 0)
			log_warn("%s: cannot disable the registration of %s",
			    j->c.request_id, j->c.app_id);
		else
			log_warnx("callback registration of app %s disabled: "
			    "the receiver answered 410 Gone", j->c.app_id);
	}
	if (j->c.st.status != DELIVERY_PENDING)
		j->c.finished_ms = end;
	if (o.http_status > 0)
		snprintf(what, sizeof(what), "HTTP %d", o.http_status);
	else
		snprintf(what, sizeof(what), "%s (%s)",
		    delivery_error_name(o.error), curl_easy_strerror(rc));
	sender_log_try(j, end, what, 1);
	curl_multi_remove_handle(cs->multi, j->easy);
	curl_easy_cleanup(j->easy);
	j->easy = NULL;
	sender_persist(cs, j);
}

void
sender_reap_done(struct callback_sender *cs)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(cs->multi, &left)) != NULL) {
		struct cbjob **pp;

		if (m->msg != CURLMSG_DONE)
			continue;
		for (pp = &cs->flight; *pp != NULL; pp = &(*pp)->next)
			if ((*pp)->easy == m->easy_handle) {
				struct cbjob *j = *pp;
				CURLcode rc = m->data.result;

				*pp = j->next;
				cs->ninflight--;
				finish_request(cs, j, rc);
				break;
			}
	}
}
