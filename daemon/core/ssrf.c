/*
 * ssrf — callback destination policy; see ssrf.h.
 */
#include "core/ssrf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * API.md §7.3: the blocks that are not "Globally Reachable" in the IANA
 * IPv4 Special-Purpose Address Registry (as last updated 2020-09-04) and
 * the IANA IPv6 Special-Purpose Address Registry (as last updated
 * 2024-10-22: 3fff::/20 documentation, RFC 9637; 5f00::/16 SRv6 SIDs,
 * RFC 9602), plus multicast, 240.0.0.0/4, fec0::/10 (site-local, RFC
 * 3879) and the ranges that can embed an IPv4 address: v4-mapped,
 * IPv4-compatible ::/96 (deprecated, RFC 4291 §2.5.5.1), NAT64, Teredo,
 * 6to4.  Check the registries again when you touch this table and write
 * the date here.
 */
static const char *const denied_text[] = {
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
	"169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24",
	"192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
	"::/96", "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96",
	"64:ff9b:1::/48", "100::/64", "2001::/23", "2001::/32",
	"2001:db8::/32", "2002::/16", "3fff::/20", "5f00::/16", "fc00::/7",
	"fe80::/10", "fec0::/10", "ff00::/8",
};

static int
cidr_parse(const char *text, struct ssrf_cidr *c)
{
	char a[64], *slash, *end;
	long bits;
	int max;

	if (strlen(text) >= sizeof(a))
		return -1;
	snprintf(a, sizeof(a), "%s", text);
	slash = strchr(a, '/');
	if (slash != NULL)
		*slash = '\0';
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, a, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, a, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else
		return -1;
	bits = max;
	if (slash != NULL) {
		bits = strtol(slash + 1, &end, 10);
		if (slash[1] < '0' || slash[1] > '9' || *end != '\0' ||
		    bits < 0 || bits > max)
			return -1;
	}
	c->bits = (int)bits;
	return 0;
}

static int
cidr_match(const struct ssrf_cidr *c, int family, const unsigned char *ip)
{
	int full = c->bits / 8, rest = c->bits % 8;

	if (c->family != family || memcmp(c->addr, ip, (size_t)full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((c->addr[full] ^ ip[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

int
ssrf_parse_cidrs(struct ssrf_allow *a, const char *list, char *why,
    size_t whylen)
{
	const char *p = list;

	a->ncidr = 0;
	while (*p != '\0') {
		char item[64];
		size_t n = strcspn(p, ",");

		if (n == 0 || n >= sizeof(item) || a->ncidr == SSRF_ALLOW_MAX) {
			snprintf(why, whylen, "bad CIDR list near \"%.40s\" "
			    "(at most %d entries, comma-separated, no spaces)",
			    p, SSRF_ALLOW_MAX);
			return -1;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		if (cidr_parse(item, &a->cidr[a->ncidr]) != 0) {
			snprintf(why, whylen, "\"%s\" is not an IPv4 or IPv6 "
			    "CIDR", item);
			return -1;
		}
		a->ncidr++;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

int
ssrf_parse_ports(struct ssrf_allow *a, const char *list, char *why,
    size_t whylen)
{
	const char *p = list;

	a->nport = 0;
	while (*p != '\0') {
		char *end;
		long v = strtol(p, &end, 10);

		if (*p < '0' || *p > '9' || v < 1 || v > 65535 ||
		    (*end != ',' && *end != '\0') ||
		    a->nport == SSRF_PORTS_MAX) {
			snprintf(why, whylen, "bad port list near \"%.40s\" "
			    "(1..65535, at most %d, comma-separated)", p,
			    SSRF_PORTS_MAX);
			return -1;
		}
		a->port[a->nport++] = (int)v;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int
ssrf_port_ok(const struct ssrf_allow *a, int port)
{
	for (size_t i = 0; i < a->nport; i++)
		if (a->port[i] == port)
			return 1;
	return 0;
}

int
ssrf_denied(const struct sockaddr *sa, size_t len,
    const struct ssrf_allow *a)
{
	const unsigned char *ip;
	int family, denied = 0;

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		family = AF_INET;
		ip = (const unsigned char *)
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	} else if (sa->sa_family == AF_INET6 &&
	    len >= sizeof(struct sockaddr_in6)) {
		family = AF_INET6;
		ip = ((const struct sockaddr_in6 *)(const void *)sa)->
		    sin6_addr.s6_addr;
	} else
		return 1;
	if (a != NULL)
		for (size_t i = 0; i < a->ncidr; i++)
			if (cidr_match(&a->cidr[i], family, ip))
				return 0;
	for (size_t i = 0; i < sizeof(denied_text) / sizeof(denied_text[0]) &&
	    !denied; i++) {
		struct ssrf_cidr c;

		if (cidr_parse(denied_text[i], &c) != 0)
			abort();	/* the table itself is wrong */
		denied = cidr_match(&c, family, ip);
	}
	return denied;
}
