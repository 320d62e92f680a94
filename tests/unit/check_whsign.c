/*
 * check_whsign.c — unit tests for daemon/core/whsign.c (Standard Webhooks v1).
 *
 * Every expected value comes from $TESTDATA/api-vectors.json
 * (callback_signing C01..C05: decoded key hex, signatures, the full
 * webhook-signature header), which API.md §10 says was cross-checked with
 * the OpenSSL CLI and the official standardwebhooks npm package.  The
 * strict-decoding cases follow API.md §6.3 (alphabet, padding, 24..64
 * bytes) and are hand-made base64 texts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "apivectors.h"

#include "core/whsign.h"
#include "unit.h"

static void
hex(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

START_TEST(test_c_vectors)
{
	json_t *all = api_vectors(), *cs = json_object_get(all, "callback_signing");
	size_t i, run = 0;
	json_t *c;

	ck_assert(json_array_size(cs) >= 5);
	json_array_foreach(cs, i, c) {
		const char *id = json_string_value(json_object_get(c, "id"));
		const char *wid = json_string_value(json_object_get(c,
		    "webhook_id"));
		json_int_t ts = json_integer_value(json_object_get(c,
		    "webhook_timestamp"));
		json_t *body = json_object_get(c, "body");
		json_t *secrets = json_object_get(c, "secrets");
		json_t *keys = json_object_get(c, "secret_key_hex");
		json_t *sigs = json_object_get(c, "signatures_base64");
		const char *hdr = json_string_value(json_object_get(
		    json_object_get(c, "headers"), "webhook-signature"));
		const char *sec[WHSIGN_SECRETS_MAX];
		char out[WHSIGN_HEADER_MAX], kh[2 * WHSIGN_KEY_MAX + 1];
		size_t ns = json_array_size(secrets);

		ck_assert(ns >= 1 && ns <= WHSIGN_SECRETS_MAX);
		ck_assert(whsign_id_ok(wid));
		for (size_t k = 0; k < ns; k++) {
			unsigned char key[WHSIGN_KEY_MAX];
			char sig[WHSIGN_SIG_LEN + 1];
			int kl;

			sec[k] = json_string_value(json_array_get(secrets, k));
			kl = whsign_secret_decode(sec[k], key);
			ck_assert_msg(kl > 0, "%s: secret %zu", id, k);
			hex(key, (size_t)kl, kh);
			ck_assert_str_eq(kh, json_string_value(
			    json_array_get(keys, k)));
			ck_assert_int_eq(whsign_sign(key, (size_t)kl, wid, ts,
			    json_string_value(body), json_string_length(body),
			    sig), 0);
			ck_assert_msg(strncmp(sig, "v1,", 3) == 0, "%s", id);
			ck_assert_str_eq(sig + 3, json_string_value(
			    json_array_get(sigs, k)));
		}
		ck_assert_int_eq(whsign_header(sec, ns, wid, ts,
		    json_string_value(body), json_string_length(body), out), 0);
		ck_assert_str_eq(out, hdr);
		run++;
	}
	ck_assert_uint_eq(run, json_array_size(cs));
	json_decref(all);
}
END_TEST

/* One byte of the body changed: the signature must differ (C01). */
START_TEST(test_tamper)
{
	json_t *all = api_vectors();
	json_t *c = json_array_get(json_object_get(all, "callback_signing"), 0);
	const char *sec = json_string_value(json_array_get(json_object_get(c,
	    "secrets"), 0));
	const char *hdr = json_string_value(json_object_get(json_object_get(c,
	    "headers"), "webhook-signature"));
	char *body = strdup(json_string_value(json_object_get(c, "body")));
	char out[WHSIGN_HEADER_MAX];

	body[10] ^= 1;
	ck_assert_int_eq(whsign_header(&sec, 1, json_string_value(
	    json_object_get(c, "webhook_id")), json_integer_value(
	    json_object_get(c, "webhook_timestamp")), body, strlen(body),
	    out), 0);
	ck_assert_str_ne(out, hdr);
	free(body);
	json_decref(all);
}
END_TEST

START_TEST(test_strict_decode)
{
	unsigned char key[WHSIGN_KEY_MAX];
	/* 32 bytes 0x40..0x5f, as in C01: valid. */
	ck_assert_int_eq(whsign_secret_decode(
	    "whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=", key), 32);
	ck_assert_int_eq(key[0], 0x40);
	ck_assert_int_eq(key[31], 0x5f);
	/* No prefix; padding missing; a URL-safe character; a space. */
	ck_assert_int_eq(whsign_secret_decode(
	    "QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=", key), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(whsign_secret_decode(
	    "whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8", key), -1);
	ck_assert_int_eq(whsign_secret_decode(
	    "whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl_=", key), -1);
	ck_assert_int_eq(whsign_secret_decode(
	    "whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xd Xl8=", key), -1);
	/* '=' inside the text. */
	ck_assert_int_eq(whsign_secret_decode(
	    "whsec_QEFCQ0RFRkdISUpLTE1OT1BRUl=TVVZXWFlaW1xdXl8=", key), -1);
	/* 18 bytes ("AAAA" x 6): below the 24-byte minimum. */
	ck_assert_int_eq(whsign_secret_decode(
	    "whsec_AAAAAAAAAAAAAAAAAAAAAAAA", key), -1);
	/* 24 bytes (32 'A's): the minimum, accepted. */
	ck_assert_int_eq(whsign_secret_decode(
	    "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", key), 24);
	/* An id with '.' would make the signed content ambiguous. */
	{
		char sig[WHSIGN_SIG_LEN + 1];

		ck_assert_int_eq(whsign_sign(key, 24, "whk_a.b", 1, "", 0,
		    sig), -1);
	}
}
END_TEST

START_TEST(test_id)
{
	char a[WHSIGN_ID_LEN + 1], b[WHSIGN_ID_LEN + 1];

	ck_assert_int_eq(whsign_id_new(a), 0);
	ck_assert_int_eq(whsign_id_new(b), 0);
	ck_assert(whsign_id_ok(a));
	ck_assert(whsign_id_ok(b));
	ck_assert_str_ne(a, b);
	ck_assert(!whsign_id_ok("whk_01J0AQ7M3V9C2X8B5N4K6R1T0Y"));
	ck_assert(!whsign_id_ok("whk_01j0aq7m3v9c2x8b5n4k6r1t0"));
}
END_TEST

static Suite *
whsign_suite(void)
{
	Suite *s = suite_create("whsign");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_c_vectors);
	tcase_add_test(tc, test_tamper);
	tcase_add_test(tc, test_strict_decode);
	tcase_add_test(tc, test_id);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(whsign_suite)
