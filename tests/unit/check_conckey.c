/*
 * check_conckey.c — unit tests for daemon/core/conckey.c, and the task
 * and job codecs' concurrencyKey and maxConcurrentPerKey.
 *
 * Expectations from conckey.h and README.md ("Per-key concurrency"): a
 * placeholder {member} takes the value of a top-level executeParams
 * member that is a string or an integer; braces are only placeholders;
 * the key is 1..256 bytes; its digest is the first 16 bytes of its
 * SHA-256.  Every expected key is worked out by hand in its row; the
 * digests are FIPS 180-2's example of "abc" (appendix B.1) and the
 * SHA-256 of the empty string.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/conckey.h"
#include "core/job.h"
#include "core/task.h"
#include "unit.h"

/* Expansions against one executeParams object. */
START_TEST(test_expand_table)
{
	static const struct {
		const char *tmpl, *want;	/* want NULL: refused */
	} cases[] = {
		{ "mail", "mail" },		/* a constant key */
		{ "customer:{customerId}", "customer:42" },
		{ "{region}/{customerId}", "eu-west/42" },
		{ "{name}", "Zoë" },		/* UTF-8 kept as is */
		{ "{neg}", "-7" },
		{ "x{customerId}y{customerId}", "x42y42" },
		{ "{missing}", NULL },		/* no such member */
		{ "{obj}", NULL },		/* not a string or integer */
		{ "{real}", NULL },		/* 1.5: not an integer */
		{ "{flag}", NULL },		/* true */
		{ "{ctl}", NULL },		/* "a\tb": a control */
		{ "{empty}", NULL },		/* expands to "" */
		{ "{empty}x", "x" },
		{ "a{", NULL },			/* unmatched { */
		{ "a}", NULL },			/* unmatched } */
		{ "{}", NULL },			/* empty name */
		{ "{a b}", NULL },		/* space in a name */
		{ "", NULL },
		{ "tab\there", NULL },		/* a control in a literal */
	};
	json_t *p = json_pack("{s:i,s:s,s:s,s:i,s:{},s:f,s:b,s:s,s:s}",
	    "customerId", 42, "region", "eu-west", "name", "Zo\xc3\xab",
	    "neg", -7, "obj", "real", 1.5, "flag", 1, "ctl", "a\tb", "empty",
	    "");
	struct task_error err;

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL;
		int rc;

		memset(&err, 0, sizeof(err));
		rc = conckey_expand(cases[i].tmpl, p, "concurrencyKey", &out,
		    &err);
		if (cases[i].want == NULL) {
			ck_assert_msg(rc == -1, "row %zu: %s accepted", i,
			    cases[i].tmpl);
			ck_assert_ptr_null(out);
			ck_assert_str_eq(err.field, "concurrencyKey");
		} else {
			ck_assert_msg(rc == 0, "row %zu: %s: %s", i,
			    cases[i].tmpl, err.rule);
			ck_assert_str_eq(out, cases[i].want);
		}
		free(out);
	}
	json_decref(p);
}
END_TEST

/* Lengths: a 256-byte key is the most; a template of 256 bytes too. */
START_TEST(test_lengths)
{
	char tmpl[CONCKEY_TEMPLATE_MAX + 2], *out = NULL, big[400];
	struct task_error err;
	json_t *p;

	memset(tmpl, 'k', sizeof(tmpl));
	tmpl[CONCKEY_TEMPLATE_MAX] = '\0';
	ck_assert_int_eq(conckey_template_check(tmpl, "f", &err), 0);
	tmpl[CONCKEY_TEMPLATE_MAX] = 'k';
	tmpl[CONCKEY_TEMPLATE_MAX + 1] = '\0';
	ck_assert_int_eq(conckey_template_check(tmpl, "f", &err), -1);
	/* {v} with 254 bytes and "ab": 256, accepted; 255 bytes: 257. */
	memset(big, 'v', 254);
	big[254] = '\0';
	p = json_pack("{s:s}", "v", big);
	ck_assert_int_eq(conckey_expand("ab{v}", p, "f", &out, &err), 0);
	ck_assert_uint_eq(strlen(out), 256);
	free(out);
	json_decref(p);
	big[254] = 'v';
	big[255] = '\0';
	p = json_pack("{s:s}", "v", big);
	ck_assert_int_eq(conckey_expand("ab{v}", p, "f", &out, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.rule, "256"));
	json_decref(p);
	/* no executeParams at all: a placeholder has no member */
	ck_assert_int_eq(conckey_expand("{v}", NULL, "f", &out, &err), -1);
	ck_assert_int_eq(conckey_expand("plain", NULL, "f", &out, &err), 0);
	ck_assert_str_eq(out, "plain");
	free(out);
}
END_TEST

/* Digests: FIPS 180-2 B.1 ("abc"), and the empty string's SHA-256. */
START_TEST(test_hash)
{
	char hex[CONCKEY_HASH_LEN + 1];

	ck_assert_int_eq(conckey_hash("abc", hex), 0);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223");
	ck_assert_int_eq(conckey_hash("", hex), 0);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb924");
}
END_TEST

static int
decode(const char *text, struct task *t, struct task_error *err)
{
	memset(err, 0, sizeof(*err));
	return task_decode(text, strlen(text), t, err);
}

/* The task codec: expanded at decode, written back as the template. */
START_TEST(test_task_member)
{
	static const struct {
		const char *text, *field;
	} refused[] = {
		/* a member executeParams does not have */
		{ "{\"taskCode\":\"mail\",\"concurrencyKey\":"
		    "\"c:{customerId}\"}", "concurrencyKey" },
		{ "{\"taskCode\":\"mail\",\"concurrencyKey\":7}",
		    "concurrencyKey" },		/* not a string */
		{ "{\"taskCode\":\"mail\",\"concurrencyKey\":\"k\","
		    "\"maxConcurrentPerKey\":0}", "maxConcurrentPerKey" },
		{ "{\"taskCode\":\"mail\",\"concurrencyKey\":\"k\","
		    "\"maxConcurrentPerKey\":4097}", "maxConcurrentPerKey" },
		/* a per-key limit without a key */
		{ "{\"taskCode\":\"mail\",\"maxConcurrentPerKey\":2}",
		    "maxConcurrentPerKey" },
	};
	struct task t, back;
	struct task_error err;
	struct buf b;

	task_init(&t);
	task_init(&back);
	ck_assert_int_eq(decode("{\"taskCode\":\"mail\",\"concurrencyKey\":"
	    "\"customer:{customerId}\",\"maxConcurrentPerKey\":3,"
	    "\"executeParams\":{\"customerId\":\"c-9\"}}", &t, &err), 0);
	ck_assert_str_eq(t.conc_key_tmpl, "customer:{customerId}");
	ck_assert_str_eq(t.conc_key, "customer:c-9");
	ck_assert_int_eq(t.max_per_key, 3);
	buf_init(&b, 0);
	ck_assert_int_eq(task_encode(&t, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "\"concurrencyKey\":"
	    "\"customer:{customerId}\""));
	ck_assert_ptr_nonnull(strstr(b.data, "\"maxConcurrentPerKey\":3"));
	ck_assert_int_eq(task_decode(b.data, b.len, &back, &err), 0);
	ck_assert_str_eq(back.conc_key, "customer:c-9");
	ck_assert_ptr_null(task_diff(&t, &back));
	buf_fini(&b);
	task_fini(&back);
	/* refusals name the member */
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_msg(decode(refused[i].text, &t, &err) == -1,
		    "accepted: %s", refused[i].text);
		ck_assert_str_eq(err.field, refused[i].field);
	}
	task_fini(&t);
}
END_TEST

/* The job codec: checked against the job's executeParams; copied. */
START_TEST(test_job_member)
{
	static const char ok[] = "{\"jobCode\":\"j\",\"taskCode\":\"mail\","
	    "\"fixedRateMs\":60000,\"concurrencyKey\":\"t:{tenant}\","
	    "\"maxConcurrentPerKey\":1,\"executeParams\":{\"tenant\":5}}";
	static const char bad[] = "{\"jobCode\":\"j\",\"taskCode\":\"mail\","
	    "\"fixedRateMs\":60000,\"concurrencyKey\":\"t:{tenant}\"}";
	struct job j;
	struct task t;
	struct task_error err;

	job_init(&j);
	task_init(&t);
	ck_assert_msg(job_decode(ok, sizeof(ok) - 1, &j, &err) == 0, "%s: %s",
	    err.field, err.rule);
	ck_assert_str_eq(j.conc_key_tmpl, "t:{tenant}");
	ck_assert_int_eq(job_make_task(&j, 0, &t), 0);
	ck_assert_str_eq(t.conc_key_tmpl, "t:{tenant}");
	ck_assert_int_eq(t.max_per_key, 1);
	task_fini(&t);
	job_fini(&j);
	ck_assert_int_eq(job_decode(bad, sizeof(bad) - 1, &j, &err), -1);
	ck_assert_str_eq(err.field, "concurrencyKey");
	job_fini(&j);
}
END_TEST

static Suite *
conckey_suite(void)
{
	Suite *s = suite_create("conckey");
	TCase *tc = tcase_create("conckey");

	tcase_add_test(tc, test_expand_table);
	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_hash);
	tcase_add_test(tc, test_task_member);
	tcase_add_test(tc, test_job_member);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(conckey_suite)
