/*
 * whsign — Standard Webhooks v1 signatures; see whsign.h.
 */
#include "core/whsign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#define PREFIX "whsec_"

static int
b64_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int
whsign_secret_decode(const char *secret, unsigned char *key)
{
	unsigned char tmp[WHSIGN_KEY_MAX + 3];
	const char *b;
	size_t n, pad = 0;
	int got;

	if (secret == NULL || strncmp(secret, PREFIX, strlen(PREFIX)) != 0)
		goto bad;
	b = secret + strlen(PREFIX);
	n = strlen(b);
	/* 24..64 bytes encode to 32..88 characters (padded). */
	if (n % 4 != 0 || n < 32 || n > 88)
		goto bad;
	if (b[n - 1] == '=')
		pad = b[n - 2] == '=' ? 2 : 1;
	for (size_t i = 0; i < n - pad; i++)
		if (!b64_char((unsigned char)b[i]))
			goto bad;
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	got = EVP_DecodeBlock(tmp, (const unsigned char *)b, (int)n);
	if (got < 0 || (size_t)got < pad)
		goto bad;
	got -= (int)pad;
	if (got < WHSIGN_KEY_MIN || got > WHSIGN_KEY_MAX)
		goto bad;
	memcpy(key, tmp, (size_t)got);
	OPENSSL_cleanse(tmp, sizeof(tmp));
	return got;
bad:
	OPENSSL_cleanse(tmp, sizeof(tmp));
	errno = EINVAL;
	return -1;
}

int
whsign_sign(const unsigned char *key, size_t keylen, const char *id,
    int64_t ts, const void *body, size_t len, char *out)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	char pre[WHSIGN_ID_LEN + 32];
	EVP_MAC *m = NULL;
	EVP_MAC_CTX *ctx = NULL;
	OSSL_PARAM params[2];
	size_t outl = 0;
	int plen, rc = -1;

	if (strchr(id, '.') != NULL || strlen(id) > WHSIGN_ID_LEN + 8) {
		errno = EINVAL;
		return -1;
	}
	/* id "." ts "." — the body follows unchanged. */
	plen = snprintf(pre, sizeof(pre), "%s.%" PRId64 ".", id, ts);
	if (plen < 0 || (size_t)plen >= sizeof(pre)) {
		errno = EINVAL;
		return -1;
	}
	params[0] = OSSL_PARAM_construct_utf8_string("digest",
	    (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if ((m = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL ||
	    (ctx = EVP_MAC_CTX_new(m)) == NULL ||
	    !EVP_MAC_init(ctx, key, keylen, params) ||
	    !EVP_MAC_update(ctx, (const unsigned char *)pre, (size_t)plen) ||
	    !EVP_MAC_update(ctx, body, len) ||
	    !EVP_MAC_final(ctx, mac, &outl, sizeof(mac)) || outl != 32) {
		errno = EIO;
		goto out;
	}
	memcpy(out, "v1,", 3);
	if (EVP_EncodeBlock((unsigned char *)out + 3, mac, 32) != 44) {
		errno = EIO;
		goto out;
	}
	rc = 0;
out:
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(m);
	OPENSSL_cleanse(mac, sizeof(mac));
	return rc;
}

int
whsign_header(const char *const *secrets, size_t nsecrets, const char *id,
    int64_t ts, const void *body, size_t len, char *out)
{
	unsigned char key[WHSIGN_KEY_MAX];
	char *p = out;

	if (nsecrets < 1 || nsecrets > WHSIGN_SECRETS_MAX) {
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 0; i < nsecrets; i++) {
		int kl = whsign_secret_decode(secrets[i], key);

		if (kl < 0 || whsign_sign(key, (size_t)kl, id, ts, body, len,
		    p) != 0) {
			OPENSSL_cleanse(key, sizeof(key));
			return -1;
		}
		p += WHSIGN_SIG_LEN;
		*p++ = i + 1 < nsecrets ? ' ' : '\0';
	}
	OPENSSL_cleanse(key, sizeof(key));
	return 0;
}

int
whsign_id_new(char *out)
{
	static const char alpha[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	unsigned char r[64];
	size_t k = 0;

	memcpy(out, "whk_", 4);
	while (k < 26) {
		if (RAND_bytes(r, sizeof(r)) != 1) {
			errno = EIO;
			return -1;
		}
		/* Rejection sampling: 252 = 7 * 36 keeps the draw uniform. */
		for (size_t i = 0; i < sizeof(r) && k < 26; i++)
			if (r[i] < 252)
				out[4 + k++] = alpha[r[i] % 36];
	}
	out[WHSIGN_ID_LEN] = '\0';
	return 0;
}

int
whsign_id_ok(const char *s)
{
	if (strncmp(s, "whk_", 4) != 0 || strlen(s) != WHSIGN_ID_LEN)
		return 0;
	for (size_t i = 4; i < WHSIGN_ID_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'z')))
			return 0;
	return 1;
}
