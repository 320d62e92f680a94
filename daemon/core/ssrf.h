/*
 * ssrf — the callback sender's destination policy (pure: no I/O, no
 * logging).
 *
 * An address is denied when it lies in one of the IANA special-purpose
 * ranges listed in API.md §7.3 (IANA IPv4 / IPv6 Special-Purpose Address
 * Registries, plus the transition ranges that can embed a private IPv4
 * address: v4-mapped, NAT64, Teredo, 6to4) unless it lies in one of the
 * operator's allowed CIDRs (config key callback_allow_cidrs).  The check
 * is made on the address libcurl is about to connect to (its
 * CURLOPT_OPENSOCKETFUNCTION), so DNS rebinding cannot get around it
 * (API.md §7.2, libcurl-security(3) "Local Resources").
 *
 * Thread safety: a filled struct ssrf_allow is read-only and may be
 * shared.
 */
#ifndef TASKSPOOL_SSRF_H
#define TASKSPOOL_SSRF_H

#include <stddef.h>
#include <sys/socket.h>

#define SSRF_ALLOW_MAX 32	/* allowed CIDRs */
#define SSRF_PORTS_MAX 16	/* allowed ports */

struct ssrf_cidr {
	int family;			/* AF_INET or AF_INET6 */
	unsigned char addr[16];		/* network, 4 or 16 bytes */
	int bits;			/* prefix length */
};

struct ssrf_allow {
	struct ssrf_cidr cidr[SSRF_ALLOW_MAX];
	size_t ncidr;
	int port[SSRF_PORTS_MAX];
	size_t nport;
};

/*
 * Parse a comma-separated CIDR list ("127.0.0.0/8,fd00::/8"; "" = none;
 * an address without "/n" is a single host) into a.  Returns 0, or -1
 * with a message naming the bad entry in why.
 */
int ssrf_parse_cidrs(struct ssrf_allow *a, const char *list, char *why,
    size_t whylen);

/*
 * Parse a comma-separated list of ports 1..65535 ("443,8443") into a.
 * Returns 0, or -1 with a message in why.
 */
int ssrf_parse_ports(struct ssrf_allow *a, const char *list, char *why,
    size_t whylen);

/* Whether port is in a's allowed ports.  Returns 1 or 0. */
int ssrf_port_ok(const struct ssrf_allow *a, int port);

/*
 * Whether a connection to sa (AF_INET or AF_INET6; len bytes) is denied:
 * 1 if it is in a special-purpose range and in no allowed CIDR of a (a
 * may be NULL: none), or not an IP address at all; 0 if allowed.
 */
int ssrf_denied(const struct sockaddr *sa, size_t len,
    const struct ssrf_allow *a);

#endif
