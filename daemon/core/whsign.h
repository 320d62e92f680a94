/*
 * whsign — Standard Webhooks v1 signing of callback deliveries (pure: no
 * I/O, no clock, no logging; the caller passes the time).
 *
 * Follows the Standard Webhooks specification 1.0.0 ("Signature scheme",
 * "Secret format", "Rotation") and API.md §6.3:
 *   signed content = webhook-id "." webhook-timestamp "." body bytes
 *   signature      = "v1," base64(HMAC-SHA256(key, signed content))
 *   key            = base64-decode of the text after "whsec_" (strict:
 *                    standard alphabet, '=' padding required, 24..64 bytes)
 * During a secret rotation the header carries one signature per secret,
 * space-separated, newest first.  HMAC, base64 and the random id come
 * from OpenSSL libcrypto; nothing here is hand-written crypto.
 *
 * Thread safety: every function is reentrant (no shared state).
 */
#ifndef TASKSPOOL_WHSIGN_H
#define TASKSPOOL_WHSIGN_H

#include <stddef.h>
#include <stdint.h>

#define WHSIGN_KEY_MIN	24	/* decoded secret bytes, Standard Webhooks */
#define WHSIGN_KEY_MAX	64
#define WHSIGN_SECRET_MAX 96	/* "whsec_" + base64 of 64 bytes + NUL */
#define WHSIGN_SIG_LEN	47	/* "v1," + 44 base64 chars, no NUL */
#define WHSIGN_ID_LEN	30	/* "whk_" + 26 chars, no NUL */
#define WHSIGN_SECRETS_MAX 2	/* active secrets during a rotation */
/* Header value for WHSIGN_SECRETS_MAX signatures: "v1,.. v1,..", NUL. */
#define WHSIGN_HEADER_MAX (WHSIGN_SECRETS_MAX * (WHSIGN_SIG_LEN + 1))

/*
 * Decode a "whsec_<base64>" secret into key (WHSIGN_KEY_MAX bytes).
 * Strict: the prefix, only the standard base64 alphabet, a length that
 * is a multiple of 4, '=' only as the last one or two characters, and a
 * decoded length in WHSIGN_KEY_MIN..WHSIGN_KEY_MAX (API.md §6.3, pain
 * point P3).  Returns the key length in bytes, or -1 (errno EINVAL) with
 * nothing promised about key's contents.
 */
int whsign_secret_decode(const char *secret, unsigned char *key);

/*
 * Sign one attempt: out receives "v1,<base64 of the HMAC-SHA256>"
 * (WHSIGN_SIG_LEN characters plus a NUL; out must hold
 * WHSIGN_SIG_LEN + 1 bytes).  key/keylen is a decoded secret; id is the
 * webhook-id; ts the webhook-timestamp in Unix seconds; body/len the
 * exact bytes sent.  Returns 0, or -1 (errno EINVAL for an id holding
 * '.', EIO if libcrypto fails).
 */
int whsign_sign(const unsigned char *key, size_t keylen, const char *id,
    int64_t ts, const void *body, size_t len, char *out);

/*
 * The whole webhook-signature header value for nsecrets (1..2) secrets in
 * the order given (newest first): signatures separated by one space.
 * out must hold WHSIGN_HEADER_MAX bytes.  Returns 0, or -1 with errno
 * EINVAL (a secret that does not decode, bad count) or EIO.
 */
int whsign_header(const char *const *secrets, size_t nsecrets,
    const char *id, int64_t ts, const void *body, size_t len, char *out);

/*
 * A new webhook-id: "whk_" + 26 characters drawn uniformly from [0-9a-z]
 * with RAND_bytes (out must hold WHSIGN_ID_LEN + 1 bytes).  Returns 0, or
 * -1 (errno EIO) when the CSPRNG fails.
 */
int whsign_id_new(char *out);

/*
 * Whether s is a webhook-id this module could have made ("whk_" + 26
 * characters of [0-9a-z]).  Returns 1 or 0.
 */
int whsign_id_ok(const char *s);

#endif
