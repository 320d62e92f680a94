/*
 * taskspool.cgi — the HTTP API as a CGI/1.1 program (RFC 3875).  Thin
 * main: the request's meta-variables are the environment, its body is
 * stdin, the response goes to stdout in one go; apiserve_request() does
 * the rest (apiserve.h).  Exit 0.  Run by hand with --help or --version
 * it prints them (exit 0); other arguments without GATEWAY_INTERFACE are
 * a usage error (64).
 *
 * Configuration: $TASKSPOOL_CONFIG (a file), else $TASKSPOOL_SPOOL's
 * taskspool.conf, else /etc/taskspool/taskspool.conf.  The web server
 * sets these (see contrib/); clients cannot, since request headers only
 * ever become HTTP_* variables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/apiserve.h"

static const char usage[] =
"usage: taskspool.cgi [--help | --version]\n"
"The HTTP API of taskspool as a CGI/1.1 program (RFC 3875): a web server\n"
"runs it once per request, with the request in its environment and on\n"
"standard input (see taskspool.cgi(8) and contrib/ for lighttpd, nginx\n"
"and Apache).  Configuration: $TASKSPOOL_CONFIG, else\n"
"$TASKSPOOL_SPOOL/taskspool.conf, else /etc/taskspool/taskspool.conf.\n";

static const char *
cgi_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static void
write_all(void *ctx, const char *p, size_t n)
{
	(void)ctx;
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
main(int argc, char **argv)
{
	struct api_request rq;

	/* Run by hand: options.  By a web server (GATEWAY_INTERFACE set),
	 * arguments are a query's search words (RFC 3875 §4.4). */
	if (argc > 1 && getenv("GATEWAY_INTERFACE") == NULL)
		return apiserve_options("taskspool.cgi", usage, argc, argv);
	apiserve_init(0);
	memset(&rq, 0, sizeof(rq));
	rq.getenv = cgi_getenv;
	rq.in_fd = 0;
	(void)apiserve_request(&rq, write_all);
	return 0;
}
