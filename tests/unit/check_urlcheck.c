/*
 * check_urlcheck.c — unit tests for the submit-time checks of a callback
 * URL (daemon/callback/urlcheck.c through callback_url_check(),
 * daemon/callback/callback_submit.c) and callback_can_sign().
 *
 * Expected verdicts follow README.md "Callbacks" and taskspool.conf(5):
 * https only unless callback_allow_http, the ports of
 * callback_allowed_ports (default 443,8443; a URL without a port names
 * its scheme's, RFC 3986 §3.2.3: 80 for http, 443 for https), and the
 * special-purpose ranges of API.md §7.3 (127.0.0.0/8 loopback, RFC 6890;
 * 10.0.0.0/8 private, RFC 1918; ::1 loopback, RFC 4291) unless in
 * callback_allow_cidrs.  Each refusal must name the key that would allow
 * the URL (issue 13 item 7).  Only address literals: no DNS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "callback/callback.h"
#include "spool/config.h"
#include "spool/spool.h"
#include "unit.h"

static char tmpdir[4096];

/* The defaults with the callback keys given ("" where a key is empty). */
static void
policy(struct config *c, int http, const char *ports, const char *cidrs)
{
	config_defaults(c);
	c->callback_allow_http = http;
	snprintf(c->callback_allowed_ports, sizeof(c->callback_allowed_ports),
	    "%s", ports);
	snprintf(c->callback_allow_cidrs, sizeof(c->callback_allow_cidrs),
	    "%s", cidrs);
}

static const struct {
	int http;
	const char *ports, *cidrs, *url;
	enum urlcheck_rc want;
	const char *why[3];	/* substrings the reason must hold */
} cases[] = {
	/* The first-hour case: a local receiver, no key set.  The one
	 * refusal names all three keys. */
	{ 0, "443,8443", "", "http://127.0.0.1:8080/cb", URLCHECK_INVALID,
	  { "callback_allow_http = 1", "callback_allow_cidrs",
	    "callback_allowed_ports" } },
	/* http allowed, any port: the loopback address and its /32. */
	{ 1, "", "", "http://127.0.0.1:8080/cb", URLCHECK_FORBIDDEN,
	  { "the address 127.0.0.1 is a denied destination",
	    "callback_allow_cidrs = 127.0.0.1/32", NULL } },
	{ 1, "", "", "http://[::1]:8080/cb", URLCHECK_FORBIDDEN,
	  { "the address ::1 is", "callback_allow_cidrs = ::1/128", NULL } },
	{ 0, "443,8443", "", "https://10.1.2.3/cb", URLCHECK_FORBIDDEN,
	  { "callback_allow_cidrs = 10.1.2.3/32", NULL, NULL } },
	/* No port written: http's is 80, not in the list. */
	{ 1, "443", "127.0.0.0/8", "http://127.0.0.1/cb", URLCHECK_INVALID,
	  { "port 80 is not an allowed port", "callback_allowed_ports",
	    NULL } },
	{ 0, "443,8443", "", "https://192.0.2.1:9443/cb", URLCHECK_INVALID,
	  { "port 9443", "callback_allowed_ports", NULL } },
	/* Every key set as t0051's local_callbacks does: allowed. */
	{ 1, "", "127.0.0.0/8", "http://127.0.0.1:8080/cb", URLCHECK_OK,
	  { NULL, NULL, NULL } },
	{ 1, "8080", "127.0.0.1/32", "http://127.0.0.1:8080/cb", URLCHECK_OK,
	  { NULL, NULL, NULL } },
	/* https to port 443 implied: allowed by the default list. */
	{ 0, "443,8443", "10.0.0.0/8", "https://10.1.2.3/cb", URLCHECK_OK,
	  { NULL, NULL, NULL } },
};

START_TEST(test_reasons)
{
	struct config c;
	char why[512];
	int i = _i;

	policy(&c, cases[i].http, cases[i].ports, cases[i].cidrs);
	why[0] = '\0';
	ck_assert_msg(callback_url_check(&c, cases[i].url, why, sizeof(why)) ==
	    cases[i].want, "%s: got another verdict (%s)", cases[i].url, why);
	for (int k = 0; k < 3 && cases[i].why[k] != NULL; k++)
		ck_assert_msg(strstr(why, cases[i].why[k]) != NULL,
		    "%s: reason \"%s\" lacks \"%s\"", cases[i].url, why,
		    cases[i].why[k]);
}
END_TEST

/* A key that does not parse is the server's problem, not the URL's. */
START_TEST(test_bad_key)
{
	struct config c;
	char why[512];

	policy(&c, 1, "http", "");
	ck_assert_int_eq(callback_url_check(&c, "http://127.0.0.1:8080/",
	    why, sizeof(why)), URLCHECK_UNAVAILABLE);
}
END_TEST

/* A secret to sign with: callback_secret, or the app's registration
 * (state/callbacks/<app>.json exists, callback.h). */
START_TEST(test_can_sign)
{
	struct config c;
	struct spool sp;
	char path[4200], why[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/spool", tmpdir);
	ck_assert_msg(spool_create(path, -1, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_msg(spool_open(&sp, path, NULL, 0, why, sizeof(why)) == 0,
	    "%s", why);
	config_defaults(&c);
	c.callback_secret[0] = '\0';
	ck_assert_int_eq(callback_can_sign(&sp, &c, NULL), 0);
	ck_assert_int_eq(callback_can_sign(&sp, &c, ""), 0);
	ck_assert_int_eq(callback_can_sign(&sp, &c, "app1"), 0);
	snprintf(path, sizeof(path), "%s/spool/state/callbacks", tmpdir);
	(void)mkdir(path, 0750);
	snprintf(path, sizeof(path), "%s/spool/state/callbacks/app1.json",
	    tmpdir);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fputs("{}\n", fp);
	fclose(fp);
	ck_assert_int_eq(callback_can_sign(&sp, &c, "app1"), 1);
	ck_assert_int_eq(callback_can_sign(&sp, &c, "app2"), 0);
	snprintf(c.callback_secret, sizeof(c.callback_secret),
	    "whsec_QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=");
	ck_assert_int_eq(callback_can_sign(&sp, &c, NULL), 1);
	ck_assert_int_eq(callback_can_sign(&sp, &c, "app2"), 1);
	spool_close(&sp);
}
END_TEST

static Suite *
urlcheck_suite(void)
{
	Suite *s = suite_create("urlcheck");
	TCase *tc = tcase_create("submit");

	tcase_add_loop_test(tc, test_reasons, 0,
	    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_bad_key);
	tcase_add_test(tc, test_can_sign);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_TMPDIR(urlcheck_suite, tmpdir, "check_urlcheck")
