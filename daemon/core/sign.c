/*
 * sign — TS1-HMAC-SHA256 canonical string and MAC; see sign.h.
 */
#include "core/sign.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

static const char hexdig[] = "0123456789abcdef";

/*
 * SHA-256 fetched once from the default provider.  EVP_sha256() would
 * send every digest through OpenSSL 3's legacy ENGINE lookup and an
 * implicit fetch, about a fifth of a CGI request's instructions
 * (callgrind); the fetched object lives until the process exits.
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void
sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static const EVP_MD *
sha256(void)
{
	(void)pthread_once(&sha256_once, sha256_fetch);
	return sha256_md != NULL ? sha256_md : EVP_sha256();
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
unreserved(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

int
sign_query_ok(const char *q)
{
	for (const char *p = q; *p != '\0'; p++) {
		int c = (unsigned char)*p;

		if (c == '%') {
			if (hexval(p[1]) < 0 || hexval(p[2]) < 0)
				return 0;
			p += 2;
			continue;
		}
		if (!unreserved(c) && strchr("!$'()*,;:@/?=&", c) == NULL)
			return 0;
	}
	return 1;
}

struct qpair {
	char *name, *value;	/* canonical (re-encoded) forms */
};

/* Percent-decode [s, e) and re-encode it canonically into a new string. */
static char *
recode(const char *s, const char *e)
{
	char *out = malloc((size_t)(e - s) * 3 + 1), *o = out;

	if (out == NULL)
		return NULL;
	while (s < e) {
		int c = (unsigned char)*s;

		if (c == '%') {
			c = hexval(s[1]) * 16 + hexval(s[2]);
			s += 3;
		} else
			s++;
		if (unreserved(c))
			*o++ = (char)c;
		else {
			*o++ = '%';
			*o++ = "0123456789ABCDEF"[c >> 4];
			*o++ = "0123456789ABCDEF"[c & 15];
		}
	}
	*o = '\0';
	return out;
}

static int
qpair_cmp(const void *a, const void *b)
{
	const struct qpair *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r != 0 ? r : strcmp(x->value, y->value);
}

int
sign_canonical_query(const char *q, struct buf *out)
{
	struct qpair *v;
	size_t n = 0, cap = 1;
	int rc = 0;

	if (!sign_query_ok(q)) {
		errno = EINVAL;
		return -1;
	}
	for (const char *p = q; *p != '\0'; p++)
		cap += *p == '&';
	if ((v = calloc(cap, sizeof(*v))) == NULL)
		return -1;
	for (const char *s = q; *s != '\0';) {
		const char *e = strchr(s, '&'), *eq;

		if (e == NULL)
			e = s + strlen(s);
		if (e > s) {
			eq = memchr(s, '=', (size_t)(e - s));
			v[n].name = recode(s, eq != NULL ? eq : e);
			v[n].value = eq != NULL ? recode(eq + 1, e) :
			    strdup("");
			if (v[n].name == NULL || v[n].value == NULL) {
				n++;
				rc = -1;
				goto out;
			}
			n++;
		}
		s = *e == '&' ? e + 1 : e;
	}
	qsort(v, n, sizeof(*v), qpair_cmp);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = buf_printf(out, "%s%s=%s", i > 0 ? "&" : "", v[i].name,
		    v[i].value);
out:
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
	return rc;
}

static void
to_hex(const unsigned char *b, size_t n, char *hex)
{
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = hexdig[b[i] >> 4];
		hex[2 * i + 1] = hexdig[b[i] & 15];
	}
	hex[2 * n] = '\0';
}

int
sign_sha256_hex(const void *data, size_t len, char *hex)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	unsigned int mdlen = 0;

	if (EVP_Digest(len > 0 ? data : "", len, md, &mdlen, sha256(),
	    NULL) != 1 || mdlen != sizeof(md))
		return -1;
	to_hex(md, sizeof(md), hex);
	return 0;
}

int
sign_canonical_string(const char *method, const char *path,
    const char *canon_query, const char *app_id, const char *timestamp,
    const char *nonce, const char *body_hex, struct buf *out)
{
	return buf_printf(out, "%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s",
	    SIGN_ALGORITHM, method, path, canon_query, app_id, timestamp,
	    nonce, body_hex);
}

int
sign_hmac(const char *secret, const void *msg, size_t len,
    unsigned char *mac)
{
	unsigned int maclen = 0;

	if (HMAC(sha256(), secret, (int)strlen(secret),
	    len > 0 ? msg : (const void *)"", len, mac, &maclen) == NULL ||
	    maclen != SIGN_MAC_LEN)
		return -1;
	return 0;
}

int
sign_hmac_hex(const char *secret, const void *msg, size_t len, char *hex)
{
	unsigned char mac[SIGN_MAC_LEN];

	if (sign_hmac(secret, msg, len, mac) != 0)
		return -1;
	to_hex(mac, sizeof(mac), hex);
	return 0;
}

int
sign_verify(const char *const *secrets, size_t nsecrets, const void *msg,
    size_t len, const char *sig_hex)
{
	unsigned char want[SIGN_MAC_LEN], mac[SIGN_MAC_LEN];
	int found = -1;

	if (strlen(sig_hex) != SIGN_HEX_LEN)
		return -1;
	for (size_t i = 0; i < SIGN_MAC_LEN; i++) {
		int hi = hexval(sig_hex[2 * i]), lo = hexval(sig_hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		want[i] = (unsigned char)(hi * 16 + lo);
	}
	/* Every secret is tried, so the time taken does not tell which. */
	for (size_t i = 0; i < nsecrets; i++)
		if (sign_hmac(secrets[i], msg, len, mac) == 0 &&
		    CRYPTO_memcmp(mac, want, SIGN_MAC_LEN) == 0 && found < 0)
			found = (int)i;
	OPENSSL_cleanse(mac, sizeof(mac));
	return found;
}

size_t
sign_base64url(const unsigned char *data, size_t len, char *out)
{
	int n = EVP_EncodeBlock((unsigned char *)out, data, (int)len);

	while (n > 0 && out[n - 1] == '=')
		n--;
	out[n] = '\0';
	for (int i = 0; i < n; i++) {
		if (out[i] == '+')
			out[i] = '-';
		else if (out[i] == '/')
			out[i] = '_';
	}
	return (size_t)n;
}
