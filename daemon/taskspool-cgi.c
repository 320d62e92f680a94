/*
 * taskspool.cgi — the HTTP API as a CGI/1.1 program (RFC 3875).  Thin
 * main: read the configuration named by the environment, serve one
 * request with api_handle(), write the response in one go, exit 0.
 *
 * Configuration: $TASKSPOOL_CONFIG (a file), else $TASKSPOOL_SPOOL's
 * taskspool.conf, else /etc/taskspool/taskspool.conf.  The web server
 * sets these (see contrib/); clients cannot, since request headers only
 * ever become HTTP_* variables.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api.h"
#include "buf.h"
#include "config.h"
#include "tstime.h"

static const char *
cgi_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static void
write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* client gone: nothing more to do */
		p += w;
		n -= (size_t)w;
	}
}

int
main(void)
{
	struct config cfg;
	struct api_request rq;
	struct buf out;
	char why[1024];

	signal(SIGPIPE, SIG_IGN);
	/*
	 * One short process per request: OpenSSL need not read
	 * openssl.cnf (the CGI uses only the default provider's SHA-256,
	 * HMAC and DRBG), load its error strings, or free everything at
	 * exit -- together about a third of a request's instructions.
	 * Failure here is not fatal: the first use initialises as usual.
	 */
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
	    OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS | OPENSSL_INIT_NO_ATEXIT, NULL);
	config_defaults(&cfg);
	buf_init(&out, 0);
	memset(&rq, 0, sizeof(rq));
	rq.getenv = cgi_getenv;
	rq.in_fd = 0;
	rq.now_ms = tstime_now_ms();
	rq.now = rq.now_ms / 1000;
	rq.cfg = &cfg;
	if (config_locate(&cfg, getenv("TASKSPOOL_CONFIG"),
	    getenv("TASKSPOOL_SPOOL"), why, sizeof(why)) != 0 ||
	    config_finish(&cfg, why, sizeof(why)) != 0)
		rq.config_error = why;	/* answered 500 with a traceId */
	api_handle(&rq, &out);
	write_all(out.data, out.len);
	buf_fini(&out);
	return 0;
}
