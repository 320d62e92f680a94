/*
 * callback_submit — the checks a writer makes before it accepts a task
 * with a callbackUrl (the HTTP API's POST /tasks and callback
 * registration, `taskspool submit`): the URL under the configuration's
 * callback_* keys (urlcheck.h), and a secret to sign its callbacks with.
 * The sender refuses unsigned callbacks (CALLBACK_FAILED, reason
 * NO_SECRET), so a task that has none is refused when it is submitted,
 * where its writer sees the reason, not only in a daemon's log.
 *
 * Reads the spool's state/callbacks/ and nothing else; does not log.
 */
#include "callback/callback.h"

#include <string.h>

#include "core/ssrf.h"

enum urlcheck_rc
callback_url_check(const struct config *cfg, const char *url, char *why,
    size_t whylen)
{
	struct ssrf_allow allow;
	struct urlcheck_policy pol = { (int)cfg->callback_allow_http,
	    &allow };

	/* config_finish() checked both keys; a failure here is a bug of
	 * the caller's configuration handling, reported, never hidden. */
	memset(&allow, 0, sizeof(allow));
	if (ssrf_parse_ports(&allow, cfg->callback_allowed_ports, why,
	    whylen) != 0 || ssrf_parse_cidrs(&allow, cfg->callback_allow_cidrs,
	    why, whylen) != 0)
		return URLCHECK_UNAVAILABLE;
	return urlcheck_url(url, &pol, why, whylen);
}

int
callback_can_sign(const struct spool *s, const struct config *cfg,
    const char *app)
{
	if (cfg->callback_secret[0] != '\0')
		return 1;
	return app != NULL && app[0] != '\0' && callback_registered(s, app);
}
