/*
 * apiserve — process set-up and one request of taskspool.cgi and
 * taskspool.fcgi; see apiserve.h.
 */
#include "api/apiserve.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "core/buf.h"
#include "core/version.h"
#include "spool/config.h"
#include "spool/clock.h"

void
apiserve_init(int long_lived)
{
	uint64_t opts = OPENSSL_INIT_NO_LOAD_CONFIG;

	signal(SIGPIPE, SIG_IGN);
	/*
	 * The API uses only the default provider's SHA-256, HMAC and DRBG:
	 * no openssl.cnf.  A process that serves one request need not load
	 * the error strings or free everything at exit either -- together
	 * about a third of a CGI request's instructions.
	 */
	if (!long_lived)
		opts |= OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS |
		    OPENSSL_INIT_NO_ATEXIT;
	(void)OPENSSL_init_crypto(opts, NULL);
}

/* A server-set variable: the request's, else the process's. */
static const char *
server_var(const struct api_request *rq, const char *name)
{
	const char *v = rq->getenv(rq->ctx, name);

	if (v == NULL)
		v = getenv(name);
	return v != NULL && v[0] != '\0' ? v : NULL;	/* empty: unset */
}

int
apiserve_request(struct api_request *rq,
    void (*write_out)(void *ctx, const char *p, size_t n))
{
	struct config cfg;
	struct buf out;
	char why[1024];
	const char *path;
	int status;

	config_defaults(&cfg);
	buf_init(&out, 0);
	rq->now_ms = tstime_now_ms();
	rq->now = rq->now_ms / 1000;
	rq->cfg = &cfg;
	rq->config_error = NULL;
	rq->config_denied = NULL;
	path = server_var(rq, "TASKSPOOL_CONFIG");
	if (config_locate(&cfg, path, server_var(rq, "TASKSPOOL_SPOOL"), why,
	    sizeof(why)) != 0) {
		rq->config_error = why;	/* answered 500 with a traceId */
		if (errno == EACCES || errno == EPERM)
			rq->config_denied = path != NULL ? path : cfg.spool;
	} else if (config_finish(&cfg, why, sizeof(why)) != 0)
		rq->config_error = why;
	status = api_handle(rq, &out);
	write_out(rq->ctx, out.data != NULL ? out.data : "", out.len);
	buf_fini(&out);
	rq->cfg = NULL;
	rq->config_error = NULL;
	rq->config_denied = NULL;
	return status;
}

int
apiserve_options(const char *prog, const char *usage, int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "--version") == 0 ||
	    strcmp(argv[1], "-V") == 0)) {
		printf("%s %s\n", prog, TASKSPOOL_VERSION);
		return 0;
	}
	fputs(usage, stderr);
	return 64;
}
