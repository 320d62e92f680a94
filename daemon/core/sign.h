/*
 * sign — TS1-HMAC-SHA256 request signing (API.md §3.3), pure: no I/O, no
 * clock, no logging.  Hashing and MACs are OpenSSL libcrypto's (SHA-256,
 * HMAC, CRYPTO_memcmp); nothing cryptographic is written here.
 *
 * The canonical string is eight lines joined by LF with no LF after the
 * last one: "TS1-HMAC-SHA256", METHOD, CANONICAL_PATH, CANONICAL_QUERY,
 * APP_ID, TIMESTAMP, NONCE, lowercase hex SHA-256 of the raw body.  The
 * HMAC key is the ASCII text of the AppSecret as issued (no decoding).
 * Query canonicalisation follows API.md §3.3 (after AWS SigV4 UriEncode):
 * split on '&', drop empty segments, split at the first '=', percent-
 * decode, re-encode every byte outside A-Z a-z 0-9 - . _ ~ as %XX with
 * uppercase hex, sort by (name, value) bytewise, join name=value with '&'.
 */
#ifndef TASKSPOOL_SIGN_H
#define TASKSPOOL_SIGN_H

#include <stddef.h>

#include "core/buf.h"

#define SIGN_MAC_LEN	32	/* bytes of an HMAC-SHA256 */
#define SIGN_HEX_LEN	64	/* hex digits of a MAC or a SHA-256 */
#define SIGN_ALGORITHM	"TS1-HMAC-SHA256"

/*
 * Whether the raw QUERY_STRING q passes API.md §3.3 step 2: no '+', only
 * the bytes A-Z a-z 0-9 - . _ ~ % ! $ ' ( ) * , ; : @ / ? = &, and every
 * '%' followed by two hex digits.  Returns 1 if valid, 0 if not.
 */
int sign_query_ok(const char *q);

/*
 * Append the canonical form of the raw query q (API.md §3.3 steps 3-6) to
 * out.  Returns 0; -1 with errno EINVAL when q fails sign_query_ok, or
 * ENOMEM/EFBIG from buf.
 */
int sign_canonical_query(const char *q, struct buf *out);

/*
 * Write the lowercase hex SHA-256 of len bytes at data (may be NULL when
 * len is 0) into hex (SIGN_HEX_LEN + 1 bytes, NUL-terminated).  Returns 0,
 * or -1 if libcrypto fails.
 */
int sign_sha256_hex(const void *data, size_t len, char *hex);

/*
 * Append the canonical string (API.md §3.3) to out from its parts, all
 * NUL-terminated and borrowed: method ("GET"), path (the logical path
 * beginning "/api/"), canon_query (already canonical, may be ""), app_id,
 * timestamp and nonce (the trimmed header texts) and body_hex (lowercase
 * hex SHA-256 of the body).  Returns 0 or -1 (errno ENOMEM/EFBIG).
 */
int sign_canonical_string(const char *method, const char *path,
    const char *canon_query, const char *app_id, const char *timestamp,
    const char *nonce, const char *body_hex, struct buf *out);

/*
 * HMAC-SHA256 of len bytes at msg with the key secret (its ASCII bytes,
 * strlen(secret) of them) into mac (SIGN_MAC_LEN bytes).  Returns 0, or -1
 * if libcrypto fails.
 */
int sign_hmac(const char *secret, const void *msg, size_t len,
    unsigned char *mac);

/* Same as sign_hmac, as lowercase hex into hex (SIGN_HEX_LEN + 1 bytes). */
int sign_hmac_hex(const char *secret, const void *msg, size_t len,
    char *hex);

/*
 * Verify sig_hex (64 hex digits, either case; API.md §3.2 X-Signature)
 * against the HMAC of msg under each of the nsecrets secrets (borrowed).
 * The hex is decoded to 32 bytes and compared with CRYPTO_memcmp (constant
 * time).  Returns the index of the first secret that matches, or -1 when
 * none does or sig_hex is not 64 hex digits.
 */
int sign_verify(const char *const *secrets, size_t nsecrets,
    const void *msg, size_t len, const char *sig_hex);

/*
 * Encode len bytes at data as base64url without padding (RFC 4648 §5)
 * into out (at least 4 * ceil(len / 3) + 1 bytes, NUL-terminated).
 * Returns the number of characters written.  AppSecrets are 32 random
 * bytes in this form (43 characters, API.md §3.1).
 */
size_t sign_base64url(const unsigned char *data, size_t len, char *out);

#endif
