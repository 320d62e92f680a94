/*
 * urlcheck — registration-time checks of a callback URL (API.md §4.3,
 * §7.1, §7.3).  The URL is parsed only with libcurl's curl_url(), so
 * registration and delivery agree on what it means [CURL-SEC].  These
 * checks are a courtesy that gives the caller an early 422; the check
 * that counts is the sender's, at connect time (§7.2).
 *
 * Reads no configuration of its own: the caller passes the policy.
 * Resolution uses getaddrinfo(3), so urlcheck_url blocks on DNS.
 * libcurl is loaded with dlopen(3) on first use (see urlcheck.c).
 */
#ifndef TASKSPOOL_URLCHECK_H
#define TASKSPOOL_URLCHECK_H

#include <stddef.h>
#include <sys/socket.h>

#define URLCHECK_URL_MAX	2048	/* bytes, API.md §4.3 */

enum urlcheck_rc {
	URLCHECK_OK,
	URLCHECK_INVALID,	/* syntax, scheme, port, userinfo, length */
	URLCHECK_FORBIDDEN,	/* host name rule, or every address denied */
	URLCHECK_UNRESOLVABLE,	/* no A/AAAA record (the name does not
				 * exist, or has no address) */
	URLCHECK_UNAVAILABLE	/* libcurl cannot be loaded, no memory, or
				 * the resolver cannot answer now
				 * (EAI_AGAIN, EAI_FAIL...): try again */
};

struct ssrf_allow;

struct urlcheck_policy {
	int allow_http;		/* accept http:// (development only) */
	/* allowed ports (none listed = any) and CIDRs exempt from the deny
	 * list, as parsed by ssrf.h from callback_allowed_ports and
	 * callback_allow_cidrs; NULL = ports 443 and 8443, no CIDRs */
	const struct ssrf_allow *allow;
};

/*
 * Whether the address sa (AF_INET or AF_INET6) is a denied destination:
 * in one of the IANA special-purpose ranges of API.md §7.3 and not in
 * policy->allow_cidrs.  Returns 1 when denied, 0 when allowed; any other
 * family is denied.
 */
int urlcheck_addr_denied(const struct sockaddr *sa,
    const struct urlcheck_policy *policy);

/*
 * Check url (NUL-terminated, borrowed) for registration: length, a URL
 * curl_url() accepts, scheme https (or http with allow_http), no userinfo,
 * no fragment, port absent or allowed (policy; default 443/8443), host name rules of §7.1, and at
 * least one resolved address that is not denied.  Returns the verdict and
 * a human reason in why (never the resolved addresses).
 */
enum urlcheck_rc urlcheck_url(const char *url,
    const struct urlcheck_policy *policy, char *why, size_t whylen);

#endif
