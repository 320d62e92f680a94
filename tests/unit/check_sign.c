/*
 * check_sign.c — unit tests for daemon/core/sign.c (TS1-HMAC-SHA256).
 *
 * Every expected value comes from tests/data/api-vectors.json (a copy of
 * the shared vectors, API.md §10): the anchor A01 (GitHub's published
 * HMAC-SHA256 example) first, to prove the HMAC itself; then, for each
 * request_signing vector S01-S14, the body hash, the canonical query, the
 * canonical string byte for byte and then the signature; and the
 * query_canonicalization table including its INVALID_QUERY inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "core/buf.h"
#include "core/sign.h"

#include "apivectors.h"

static json_t *vectors;

static const char *
str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	ck_assert_msg(json_is_string(v), "vector member %s", k);
	return json_string_value(v);
}

/* body_hex decoded into a new buffer (the authoritative body bytes). */
static unsigned char *
unhex(const char *h, size_t *len)
{
	size_t n = strlen(h) / 2;
	unsigned char *b = malloc(n + 1);

	ck_assert(b != NULL);
	for (size_t i = 0; i < n; i++)
		ck_assert(sscanf(h + 2 * i, "%2hhx", &b[i]) == 1);
	*len = n;
	return b;
}

START_TEST(test_anchor_a01)
{
	json_t *a = json_array_get(json_object_get(vectors,
	    "anchor_calibration"), 0);
	const char *p = str(a, "payload");
	char hex[SIGN_HEX_LEN + 1];

	ck_assert_str_eq(str(a, "id"), "A01");
	ck_assert_int_eq(sign_hmac_hex(str(a, "secret"), p, strlen(p), hex), 0);
	ck_assert_str_eq(hex, str(a, "expected_hex"));
}
END_TEST

START_TEST(test_empty_body_hash)
{
	char hex[SIGN_HEX_LEN + 1];

	ck_assert_int_eq(sign_sha256_hex(NULL, 0, hex), 0);
	ck_assert_str_eq(hex, str(json_object_get(vectors, "conventions"),
	    "empty_body_sha256_hex"));
}
END_TEST

/* One S-vector: canonical string first, byte for byte, then signature. */
START_TEST(test_request_signing)
{
	json_t *v = json_array_get(json_object_get(vectors,
	    "request_signing"), (size_t)_i);
	size_t blen;
	unsigned char *body = unhex(str(v, "body_hex"), &blen);
	char bhex[SIGN_HEX_LEN + 1], sig[SIGN_HEX_LEN + 1], ts[32];
	struct buf q, cs;
	const char *secret = str(v, "secret");
	char upper[SIGN_HEX_LEN + 1];

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq((long)blen, (long)json_integer_value(
	    json_object_get(v, "body_length")));
	ck_assert_int_eq(sign_sha256_hex(body, blen, bhex), 0);
	ck_assert_str_eq(bhex, str(v, "body_sha256_hex"));
	buf_init(&q, 0);
	buf_init(&cs, 0);
	ck_assert_int_eq(sign_canonical_query(str(v, "raw_query"), &q), 0);
	ck_assert_str_eq(q.data != NULL ? q.data : "",
	    str(v, "canonical_query"));
	snprintf(ts, sizeof(ts), "%lld", (long long)json_integer_value(
	    json_object_get(v, "timestamp")));
	ck_assert_int_eq(sign_canonical_string(str(v, "method"),
	    str(v, "path"), q.data != NULL ? q.data : "", str(v, "app_id"), ts,
	    str(v, "nonce"), bhex, &cs), 0);
	ck_assert_int_eq((long)cs.len, (long)strlen(str(v,
	    "canonical_string")));
	ck_assert_msg(memcmp(cs.data, str(v, "canonical_string"), cs.len) == 0,
	    "%s: canonical string differs:\n%s", str(v, "id"), cs.data);
	ck_assert_int_eq(sign_hmac_hex(secret, cs.data, cs.len, sig), 0);
	ck_assert_str_eq(sig, str(v, "signature_hex"));
	/* The header value verifies, in either case (API.md §3.2, V05). */
	{
		const char *secrets[2] = { "not-the-secret", secret };

		ck_assert_int_eq(sign_verify(secrets, 2, cs.data, cs.len,
		    str(json_object_get(v, "headers"), "X-Signature")), 1);
		for (int i = 0; i <= SIGN_HEX_LEN; i++)
			upper[i] = (char)(sig[i] >= 'a' && sig[i] <= 'f' ?
			    sig[i] - 32 : sig[i]);
		ck_assert_int_eq(sign_verify(secrets, 2, cs.data, cs.len,
		    upper), 1);
		ck_assert_int_eq(sign_verify(secrets, 1, cs.data, cs.len,
		    sig), -1);
		/* One byte of the message changed: no match. */
		cs.data[cs.len - 1] ^= 1;
		ck_assert_int_eq(sign_verify(secrets, 2, cs.data, cs.len,
		    sig), -1);
	}
	buf_fini(&q);
	buf_fini(&cs);
	free(body);
}
END_TEST

START_TEST(test_verify_rejects_bad_hex)
{
	const char *secrets[1] = { "k" };
	char sig[SIGN_HEX_LEN + 2];

	ck_assert_int_eq(sign_hmac_hex("k", "m", 1, sig), 0);
	ck_assert_int_eq(sign_verify(secrets, 1, "m", 1, sig), 0);
	sig[10] = 'g';
	ck_assert_int_eq(sign_verify(secrets, 1, "m", 1, sig), -1);
	sig[SIGN_HEX_LEN - 1] = '\0';
	ck_assert_int_eq(sign_verify(secrets, 1, "m", 1, sig), -1);
	ck_assert_int_eq(sign_verify(secrets, 1, "m", 1, ""), -1);
}
END_TEST

START_TEST(test_query_table)
{
	json_t *tab = json_object_get(vectors, "query_canonicalization"), *v;
	size_t i;

	ck_assert(json_array_size(tab) >= 10);
	json_array_foreach(tab, i, v) {
		const char *raw = str(v, "raw_query");
		struct buf q;

		buf_init(&q, 0);
		if (json_object_get(v, "error") != NULL) {
			ck_assert_str_eq(str(v, "error"), "INVALID_QUERY");
			ck_assert_msg(!sign_query_ok(raw), "accepted %s", raw);
			ck_assert_int_eq(sign_canonical_query(raw, &q), -1);
		} else {
			ck_assert_msg(sign_query_ok(raw), "rejected %s", raw);
			ck_assert_int_eq(sign_canonical_query(raw, &q), 0);
			ck_assert_str_eq(q.data != NULL ? q.data : "",
			    str(v, "canonical_query"));
		}
		buf_fini(&q);
	}
}
END_TEST

/* RFC 4648 §10 test vectors, in the URL alphabet without padding; and
 * bytes 0xfb 0xff, whose standard encoding "+/8=" shows the alphabet. */
START_TEST(test_base64url)
{
	char out[64];

	ck_assert_int_eq((long)sign_base64url((const unsigned char *)"", 0,
	    out), 0);
	ck_assert_str_eq(out, "");
	sign_base64url((const unsigned char *)"f", 1, out);
	ck_assert_str_eq(out, "Zg");
	sign_base64url((const unsigned char *)"fo", 2, out);
	ck_assert_str_eq(out, "Zm8");
	sign_base64url((const unsigned char *)"foobar", 6, out);
	ck_assert_str_eq(out, "Zm9vYmFy");
	sign_base64url((const unsigned char *)"\xfb\xff", 2, out);
	ck_assert_str_eq(out, "-_8");
	{
		unsigned char k[32] = { 0 };

		ck_assert_int_eq((long)sign_base64url(k, 32, out), 43);
	}
}
END_TEST

static Suite *
sign_suite(void)
{
	Suite *s = suite_create("sign");
	TCase *tc = tcase_create("vectors");
	int n = (int)json_array_size(json_object_get(vectors,
	    "request_signing"));

	if (n != 14) {
		fprintf(stderr, "expected 14 S-vectors, got %d\n", n);
		exit(EXIT_FAILURE);
	}
	tcase_add_test(tc, test_anchor_a01);
	tcase_add_test(tc, test_empty_body_hash);
	tcase_add_loop_test(tc, test_request_signing, 0, n);
	tcase_add_test(tc, test_verify_rejects_bad_hex);
	tcase_add_test(tc, test_query_table);
	tcase_add_test(tc, test_base64url);
	suite_add_tcase(s, tc);
	return s;
}

API_VECTORS_MAIN(sign_suite, vectors)
