/*
 * taskspool.fcgi — the HTTP API as a FastCGI 1.0 application: one
 * long-lived process serves request after request over the listening
 * socket it finds on standard input (FCGI_LISTENSOCK_FILENO), as the web
 * server's process manager (lighttpd mod_fastcgi "bin-path"), spawn-fcgi
 * or a systemd socket unit with StandardInput=socket leaves it.  The
 * protocol is Debian's libfcgi (fcgiapp.h); this main only adapts its
 * request (parameters, input and output streams) to apiserve_request(),
 * which taskspool.cgi shares (apiserve.h): the configuration is loaded
 * afresh for every request and nothing is kept between requests.
 *
 * Configuration: the request's TASKSPOOL_CONFIG / TASKSPOOL_SPOOL
 * parameters (fastcgi_param, setenv.add-environment), else the process
 * environment's (bin-environment, Environment=), as taskspool.cgi.
 *
 * SIGTERM (the web server's stop) or SIGUSR1 (libfcgi's): between
 * requests exit at once, during one finish it first.  Exit 0 after them; 64 (EX_USAGE) with an
 * argument other than --help or --version (which print and exit 0) or
 * when standard input is not a listening socket; 71
 * (EX_OSERR) when libfcgi cannot start or stops accepting requests.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "api/api.h"
#include "api/apiserve.h"

static volatile sig_atomic_t busy, stop;

static void
on_term(int sig)
{
	(void)sig;
	if (!busy)
		_exit(0);
	stop = 1;
}

static const char *
fcgi_getenv(void *ctx, const char *name)
{
	return FCGX_GetParam(name, ((FCGX_Request *)ctx)->envp);
}

static ssize_t
fcgi_read(void *ctx, void *b, size_t n)
{
	FCGX_Stream *in = ((FCGX_Request *)ctx)->in;
	int got = FCGX_GetStr(b, n > INT_MAX ? INT_MAX : (int)n, in);

	if (got == 0 && FCGX_GetError(in) != 0) {
		errno = EIO;	/* never a stale EINTR: the caller retries those */
		return -1;
	}
	return got;
}

static void
fcgi_write(void *ctx, const char *p, size_t n)
{
	FCGX_Stream *out = ((FCGX_Request *)ctx)->out;

	while (n > 0) {
		int k = n > INT_MAX ? INT_MAX : (int)n;

		if (FCGX_PutStr(p, k, out) != k)
			return;	/* web server gone: nothing more to do */
		p += k;
		n -= (size_t)k;
	}
}

static const char usage[] =
"usage: taskspool.fcgi [--help | --version]\n"
"The HTTP API of taskspool as a FastCGI application: started by the web\n"
"server's process manager, spawn-fcgi or a systemd socket unit with the\n"
"listening socket as standard input; see taskspool.cgi(8).\n";

int
main(int argc, char **argv)
{
	FCGX_Request req;
	struct api_request rq;
	struct sigaction sa;
	int rc = 0;

	if (argc > 1)
		return apiserve_options("taskspool.fcgi", usage, argc, argv);
	if (FCGX_IsCGI()) {
		fputs("taskspool.fcgi: standard input is not a listening "
		    "socket: start it from the web server's FastCGI process "
		    "manager, spawn-fcgi or a socket unit (or use "
		    "taskspool.cgi)\n", stderr);
		return 64;
	}
	apiserve_init(1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);	/* libfcgi's own stop signal */
	if (FCGX_Init() != 0 || FCGX_InitRequest(&req, 0, 0) != 0) {
		fputs("taskspool.fcgi: libfcgi cannot start\n", stderr);
		return 71;
	}
	while (!stop && (rc = FCGX_Accept_r(&req)) >= 0) {
		busy = 1;
		memset(&rq, 0, sizeof(rq));
		rq.getenv = fcgi_getenv;
		rq.body_read = fcgi_read;
		rq.ctx = &req;
		rq.in_fd = -1;
		(void)apiserve_request(&rq, fcgi_write);
		FCGX_Finish_r(&req);
		busy = 0;
	}
	FCGX_Free(&req, 1);
	if (stop)
		return 0;
	/* The listening socket failed: the process manager starts
	 * another process. */
	fprintf(stderr, "taskspool.fcgi: no more requests accepted "
	    "(libfcgi error %d)\n", rc);
	return 71;
}
