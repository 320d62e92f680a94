/*
 * traceparent.c — the W3C Trace Context `traceparent` value: parse,
 * format, a child, a new trace (traceparent.h has the rules and the
 * spec's sections).  Pure; never allocates.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>


#include "core/traceparent.h"

/* A lowercase hex digit's value, or -1 (HEXDIGLC, §3.2.2). */
static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* n bytes from 2n lowercase hex digits at s into out; -1 on a bad one. */
static int
unhex(const char *s, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hexval((unsigned char)s[2 * i]);
		int lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int
all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

static int
refuse(const char **why, const char *text)
{
	if (why != NULL)
		*why = text;
	return -1;
}

int
traceparent_parse(const char *s, size_t len, struct traceparent *tp,
    const char **why)
{
	uint8_t version;

	if (len < 2 || unhex(s, 1, &version) != 0)
		return refuse(why, "version must be 2 lowercase hex digits");
	if (version == 0xff)
		return refuse(why, "version ff is invalid");
	if (len > TRACEPARENT_INPUT_MAX)
		return refuse(why, "longer than 512 characters");
	if (version == 0 && len != TRACEPARENT_LEN)
		return refuse(why, "version 00 must be exactly 55 "
		    "characters");
	if (len < TRACEPARENT_LEN)
		return refuse(why, "shorter than 55 characters");
	if (len > TRACEPARENT_LEN && s[TRACEPARENT_LEN] != '-')
		return refuse(why, "a field after trace-flags must follow "
		    "a '-'");
	if (s[2] != '-' || s[35] != '-' || s[52] != '-')
		return refuse(why, "must be version-traceid-parentid-flags "
		    "('-' at offsets 2, 35 and 52)");
	if (unhex(s + 3, 16, tp->trace_id) != 0)
		return refuse(why, "trace-id must be 32 lowercase hex "
		    "digits");
	if (all_zero(tp->trace_id, 16))
		return refuse(why, "trace-id must not be all zeros");
	if (unhex(s + 36, 8, tp->parent_id) != 0)
		return refuse(why, "parent-id must be 16 lowercase hex "
		    "digits");
	if (all_zero(tp->parent_id, 8))
		return refuse(why, "parent-id must not be all zeros");
	if (unhex(s + 53, 1, &tp->flags) != 0)
		return refuse(why, "trace-flags must be 2 lowercase hex "
		    "digits");
	return 0;
}

static void
puthex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
}

void
traceparent_format(const struct traceparent *tp,
    char out[TRACEPARENT_LEN + 1])
{
	memcpy(out, "00-", 3);
	puthex(tp->trace_id, 16, out + 3);
	out[35] = '-';
	puthex(tp->parent_id, 8, out + 36);
	out[52] = '-';
	puthex(&tp->flags, 1, out + 53);
	out[TRACEPARENT_LEN] = '\0';
}

int
traceparent_child(const struct traceparent *parent, const uint8_t rnd[8],
    struct traceparent *child)
{
	if (all_zero(rnd, 8))
		return -1;
	memmove(child->trace_id, parent->trace_id, 16);
	child->flags = parent->flags;
	memcpy(child->parent_id, rnd, 8);
	return 0;
}

int
traceparent_new(const uint8_t rnd[TRACEPARENT_RANDOM_MAX],
    struct traceparent *tp)
{
	if (all_zero(rnd, 16) || all_zero(rnd + 16, 8))
		return -1;
	memcpy(tp->trace_id, rnd, 16);
	memcpy(tp->parent_id, rnd + 16, 8);
	tp->flags = TRACEPARENT_SAMPLED;
	return 0;
}

/* n random bytes into b from getrandom(2), the kernel's CSPRNG (W3C
 * Trace Context wants ids unique, not secret: OpenSSL's generator and
 * its start-up, most of a CLI submit's instructions, are not needed).
 * Returns 0, or -1 with errno EIO. */
static int
draw(uint8_t *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = getrandom(b + got, n - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = EIO;
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

int
traceparent_fresh(char out[TRACEPARENT_LEN + 1])
{
	uint8_t rnd[TRACEPARENT_RANDOM_MAX];
	struct traceparent tp;

	/* All zeros from a working generator: 2^-64; draw again. */
	for (int i = 0; i < 4; i++) {
		if (draw(rnd, sizeof(rnd)) != 0)
			break;
		if (traceparent_new(rnd, &tp) == 0) {
			traceparent_format(&tp, out);
			return 0;
		}
	}
	errno = EIO;
	return -1;
}

int
traceparent_child_fresh(const char *parent, char out[TRACEPARENT_LEN + 1])
{
	struct traceparent p, c;
	uint8_t rnd[8];

	if (parent == NULL ||
	    traceparent_parse(parent, strlen(parent), &p, NULL) != 0) {
		errno = EINVAL;
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (draw(rnd, sizeof(rnd)) != 0)
			break;
		if (traceparent_child(&p, rnd, &c) == 0) {
			traceparent_format(&c, out);
			return 0;
		}
	}
	errno = EIO;
	return -1;
}

void
traceparent_trace_id(const char *tp, char out[33])
{
	struct traceparent p;

	out[0] = '\0';
	if (tp == NULL || traceparent_parse(tp, strlen(tp), &p, NULL) != 0)
		return;
	puthex(p.trace_id, 16, out);
	out[32] = '\0';
}
