/*
 * fuzz_apps — the apps.conf parser (apps.h, API.md §3.1): apps_parse()
 * of any bytes.  What it accepts must hold what apps.h promises, since
 * the API trusts it: every AppId matches [A-Za-z0-9_-]{1,64} and appears
 * once (apps_find finds that entry), one or two secrets of 16 to 128
 * base64url characters, codes "*" or a non-empty list, rate
 * APPS_RATE_DEFAULT or 0..APPS_RATE_MAX.
 */
#include <stdint.h>
#include <string.h>

#include "api/apps.h"
#include "harness.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct apps a;
	char why[512];

	if (apps_parse((const char *)data, size, &a, why, sizeof(why)) != 0)
		return 0;
	for (size_t i = 0; i < a.nv; i++) {
		const struct app *p = &a.v[i];

		if (!apps_id_ok(p->id))
			fuzz_fail("accepted AppId \"%s\"", p->id);
		if (apps_find(&a, p->id) != p)
			fuzz_fail("AppId %s twice", p->id);
		if (p->nsecrets < 1 || p->nsecrets > APPS_SECRETS_MAX)
			fuzz_fail("%s: %d secrets", p->id, p->nsecrets);
		for (int s = 0; s < p->nsecrets; s++)
			if (!apps_token_ok(p->secrets[s], 16, APPS_SECRET_MAX,
			    "-_"))
				fuzz_fail("%s: accepted secret \"%s\"", p->id,
				    p->secrets[s]);
		if (p->codes[0] == '\0' || memchr(p->codes, '\0',
		    sizeof(p->codes)) == NULL)
			fuzz_fail("%s: codes empty or not terminated", p->id);
		if (p->rate != APPS_RATE_DEFAULT && (p->rate < 0 || p->rate >
		    APPS_RATE_MAX))
			fuzz_fail("%s: rate %ld", p->id, p->rate);
		(void)apps_code_allowed(p, "report.generate");
	}
	apps_free(&a);
	return 0;
}
