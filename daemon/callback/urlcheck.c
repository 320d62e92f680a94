/*
 * urlcheck — callback URL checks at registration; see urlcheck.h.
 */
#include "callback/urlcheck.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <dlfcn.h>

#include "core/ssrf.h"

/*
 * libcurl is loaded with dlopen(3) the first time a URL is checked, not
 * linked: taskspool.cgi runs once per request, and loading libcurl and
 * the thirty libraries it depends on costs more than the whole of a
 * typical request (about 7 ms per exec measured with `make bench`),
 * while only callback registrations and submissions with a callbackUrl
 * need curl_url().  The parser used is still libcurl's own.
 */
static struct {
	CURLU *(*url)(void);
	CURLUcode (*set)(CURLU *, CURLUPart, const char *, unsigned int);
	CURLUcode (*get)(const CURLU *, CURLUPart, char **, unsigned int);
	void (*cleanup)(CURLU *);
	void (*free)(void *);
} cu;

/* Load libcurl's URL API once.  Returns 0, or -1 if it is not there. */
static int
curl_load(void)
{
	static int loaded;	/* 1 ok, -1 failed */
	void *h;

	if (loaded != 0)
		return loaded > 0 ? 0 : -1;
	loaded = -1;
	h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		return -1;
	*(void **)&cu.url = dlsym(h, "curl_url");
	*(void **)&cu.set = dlsym(h, "curl_url_set");
	*(void **)&cu.get = dlsym(h, "curl_url_get");
	*(void **)&cu.cleanup = dlsym(h, "curl_url_cleanup");
	*(void **)&cu.free = dlsym(h, "curl_free");
	if (cu.url == NULL || cu.set == NULL || cu.get == NULL ||
	    cu.cleanup == NULL || cu.free == NULL)
		return -1;
	loaded = 1;
	return 0;
}

int
urlcheck_addr_denied(const struct sockaddr *sa,
    const struct urlcheck_policy *policy)
{
	size_t len = sa->sa_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	return ssrf_denied(sa, len, policy != NULL ? policy->allow : NULL);
}

/* The port rule: policy's allowed ports (none listed = any), else the
 * default 443 and 8443. */
static int
port_ok(const struct urlcheck_policy *policy, int port)
{
	if (policy != NULL && policy->allow != NULL)
		return policy->allow->nport == 0 ||
		    ssrf_port_ok(policy->allow, port);
	return port == 443 || port == 8443;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* The reason for a denied address literal addr: the key that allows
 * it, with addr and its one-address prefix (len "/32" or "/128"). */
static void
denied_why(char *why, size_t whylen, const char *addr, const char *len)
{
	snprintf(why, whylen, "the address %s is a denied destination "
	    "(loopback, private or another special-purpose range); "
	    "callback_allow_cidrs = %s%s in taskspool.conf allows it", addr,
	    addr, len);
}

/* Resolve host and decide: OK when one address is allowed. */
static enum urlcheck_rc
resolve(const char *host, const struct urlcheck_policy *policy, char *why,
    size_t whylen)
{
	struct addrinfo hints, *res = NULL;
	int allowed = 0, any = 0, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0 || res == NULL) {
		/* Only the answer "no such name" (or no address of it) is
		 * the URL's fault; a resolver that cannot answer now is
		 * this host's, and the caller says to try again. */
		if (rc != 0 && rc != EAI_NONAME && rc != EAI_NODATA &&
		    rc != EAI_ADDRFAMILY) {
			snprintf(why, whylen, "cannot resolve the host name "
			    "now (%s); try again", gai_strerror(rc));
			return URLCHECK_UNAVAILABLE;
		}
		snprintf(why, whylen, "the host name has no A or AAAA record");
		return URLCHECK_UNRESOLVABLE;
	}
	for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		any = 1;
		if (!urlcheck_addr_denied(ai->ai_addr, policy))
			allowed = 1;
	}
	freeaddrinfo(res);
	if (!any) {
		snprintf(why, whylen, "the host name has no A or AAAA record");
		return URLCHECK_UNRESOLVABLE;
	}
	if (!allowed) {
		snprintf(why, whylen, "every address of the host is a denied "
		    "destination (private, loopback, link-local or another "
		    "special-purpose range); callback_allow_cidrs in "
		    "taskspool.conf allows a range");
		return URLCHECK_FORBIDDEN;
	}
	return URLCHECK_OK;
}

enum urlcheck_rc
urlcheck_url(const char *url, const struct urlcheck_policy *policy,
    char *why, size_t whylen)
{
	CURLU *u;
	char *scheme = NULL, *user = NULL, *pass = NULL, *frag = NULL;
	char *host = NULL, *port = NULL, *opts = NULL;
	enum urlcheck_rc rc = URLCHECK_INVALID;
	unsigned char a[16];
	size_t n = strlen(url);

	if (n == 0 || n > URLCHECK_URL_MAX) {
		snprintf(why, whylen, "the URL must be 1 to %d bytes",
		    URLCHECK_URL_MAX);
		return URLCHECK_INVALID;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f) {
			snprintf(why, whylen, "the URL holds a space or a "
			    "control character");
			return URLCHECK_INVALID;
		}
	if (curl_load() != 0) {
		snprintf(why, whylen, "libcurl (libcurl.so.4) cannot be "
		    "loaded to parse the URL");
		return URLCHECK_UNAVAILABLE;
	}
	if ((u = cu.url()) == NULL) {
		snprintf(why, whylen, "out of memory");
		return URLCHECK_UNAVAILABLE;
	}
	if (cu.set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		snprintf(why, whylen, "not a URL libcurl accepts");
		goto out;
	}
	if (cu.get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    !(strcmp(scheme, "https") == 0 || (strcmp(scheme, "http") == 0 &&
	    policy != NULL && policy->allow_http))) {
		snprintf(why, whylen, "the scheme must be https; http:// "
		    "needs callback_allow_http = 1 in taskspool.conf "
		    "(development only), and a receiver on a loopback or "
		    "private address also callback_allow_cidrs (e.g. "
		    "127.0.0.1/32) and, on a port other than 443 or 8443, "
		    "callback_allowed_ports");
		goto out;
	}
	if (cu.get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
	    cu.get(u, CURLUPART_PASSWORD, &pass, 0) == CURLUE_OK ||
	    cu.get(u, CURLUPART_OPTIONS, &opts, 0) == CURLUE_OK) {
		snprintf(why, whylen, "the URL must not carry user "
		    "information");
		goto out;
	}
	if (cu.get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK) {
		snprintf(why, whylen, "the URL must not have a fragment");
		goto out;
	}
	/* The scheme's port when none is written (http: 80), as the
	 * sender connects to it (callback_dispatch.c). */
	if (cu.get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK && !port_ok(policy, atoi(port))) {
		snprintf(why, whylen, "port %s is not an allowed port: "
		    "callback_allowed_ports in taskspool.conf lists them "
		    "(default 443,8443)", port);
		goto out;
	}
	if (cu.get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    host[0] == '\0') {
		snprintf(why, whylen, "the URL has no host");
		goto out;
	}
	rc = URLCHECK_FORBIDDEN;
	if (host[0] == '[') {
		/* IPv6 literal: "[addr]" (a zone id is refused). */
		size_t hl = strlen(host);
		char lit[64];
		struct sockaddr_in6 s6;

		if (hl < 3 || hl - 2 >= sizeof(lit) || host[hl - 1] != ']') {
			snprintf(why, whylen, "bad IPv6 literal");
			rc = URLCHECK_INVALID;
			goto out;
		}
		memcpy(lit, host + 1, hl - 2);
		lit[hl - 2] = '\0';
		memset(&s6, 0, sizeof(s6));
		s6.sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, lit, &s6.sin6_addr) != 1) {
			snprintf(why, whylen, "bad IPv6 literal");
			rc = URLCHECK_INVALID;
			goto out;
		}
		if (urlcheck_addr_denied((struct sockaddr *)&s6, policy)) {
			denied_why(why, whylen, lit, "/128");
			goto out;
		}
		rc = URLCHECK_OK;
		goto out;
	}
	if (inet_pton(AF_INET, host, a) == 1) {
		/* libcurl has normalised decimal/octal/hex forms already. */
		struct sockaddr_in s4;

		memset(&s4, 0, sizeof(s4));
		s4.sin_family = AF_INET;
		memcpy(&s4.sin_addr, a, 4);
		if (urlcheck_addr_denied((struct sockaddr *)&s4, policy)) {
			denied_why(why, whylen, host, "/32");
			goto out;
		}
		rc = URLCHECK_OK;
		goto out;
	}
	if (strcasecmp(host, "localhost") == 0 || ends_with(host,
	    ".localhost") || ends_with(host, ".local") || ends_with(host,
	    ".internal") || ends_with(host, ".home.arpa") ||
	    strchr(host, '.') == NULL || host[strlen(host) - 1] == '.') {
		snprintf(why, whylen, "host names localhost, *.local, "
		    "*.internal, *.home.arpa, single labels and names ending "
		    "in a dot are not allowed");
		goto out;
	}
	rc = resolve(host, policy, why, whylen);
out:
	cu.free(scheme);
	cu.free(user);
	cu.free(pass);
	cu.free(opts);
	cu.free(frag);
	cu.free(host);
	cu.free(port);
	cu.cleanup(u);
	return rc;
}
