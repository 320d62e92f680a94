/*
 * apiserve — what the two programs of the HTTP API share: taskspool.cgi
 * (CGI/1.1, RFC 3875: one process per request) and taskspool.fcgi
 * (FastCGI 1.0: one process serves many requests).  Their mains only say
 * where a request's meta-variables and body come from and where its
 * response goes; everything else is here and in api.c.
 *
 * Per request it loads the configuration afresh (so `taskspool` changes,
 * like apps.conf, which api.c reads per request, are seen on the next
 * request of a long-lived process) and keeps nothing afterwards: no
 * memory, no descriptor, no per-request state.
 */
#ifndef TASKSPOOL_APISERVE_H
#define TASKSPOOL_APISERVE_H

#include <stddef.h>

#include "api/api.h"

/*
 * Set up the process once, before the first request: ignore SIGPIPE (a
 * client gone is a short write, not a death) and initialise libcrypto
 * without openssl.cnf.  long_lived 0 (the CGI) also skips the error
 * strings and the clean-up at exit, which a process that serves one
 * request never needs; 1 (FastCGI) keeps the clean-up, so a leak checker
 * sees a clean exit.  Failure is not fatal: libcrypto then initialises
 * itself on first use.
 */
void apiserve_init(int long_lived);

/*
 * Serve one request.  rq (borrowed) has getenv, ctx and the body source
 * (body_read or in_fd) set by the caller; this call fills in now, cfg and
 * config_error.  The configuration is $TASKSPOOL_CONFIG (a file), else
 * $TASKSPOOL_SPOOL's taskspool.conf, else /etc/taskspool/taskspool.conf;
 * each is looked up with rq->getenv first (the web server's per-request
 * variables), then in the process environment (FastCGI: set when the
 * process was started).  A configuration that does not load is answered
 * 500 with a traceId (api.h).  The whole response is handed to
 * write_out(ctx, bytes, length) in one call; write_out reports no error
 * (a client gone is nothing more to do).  Returns the HTTP status code
 * sent.
 */
int apiserve_request(struct api_request *rq,
    void (*write_out)(void *ctx, const char *p, size_t n));

/*
 * The command line of an API program run by hand (not by a web server):
 * argv[1] "--help" or "-h" prints usage (borrowed text, the program's
 * own) on stdout and returns 0; "--version" or "-V" prints
 * "<prog> <release>" and returns 0; anything else prints usage on stderr
 * and returns 64 (EX_USAGE).  The caller exits with the value.  Callers
 * look only when argc > 1 and, for the CGI, GATEWAY_INTERFACE is unset:
 * a web server may pass a query without '=' as arguments (RFC 3875
 * §4.4, the "search-string"), which are a request, not options.
 */
int apiserve_options(const char *prog, const char *usage, int argc,
    char **argv);

#endif
