/*
 * api — the HTTP API behind taskspool.cgi (API.md; CGI/1.1, RFC 3875):
 * routing on PATH_INFO, the body rules of §2.3, the TS1-HMAC-SHA256 checks
 * in the order of §3.4, and the endpoints of §4 over an embedded spool.
 *
 * Policy layer: it reads apps.conf, keeps the nonce store, idempotency
 * markers and callback registrations under the spool's state/, writes
 * tasks with the spool's writer protocol and answers from the spool.  It
 * never runs hooks and never links the scheduler.  Every answer, errors
 * included, is one complete CGI response (RFC 3875 §6) built in memory:
 * "Status:" first, CRLF line ends, an exact Content-Length.  Errors are
 * application/problem+json (RFC 9457) with a stable "code" (§5).
 *
 * State under <spool>/state/ (all directories group-writable, files 0640):
 *   nonces/<appId>.<nonce>        O_EXCL marker, mtime = expiry (ts + 360)
 *   requests/<requestId>.json     idempotency record {appId, requestId,
 *                                 taskCode, fingerprint, createdAt}
 *   callbacks/<appId>.json        the callback registration (§4.3)
 *   ratelimit/<appId>             the AppId's request count in its
 *                                 current window (ratelimit.h), when a
 *                                 limit is set and no Redis is
 */
#ifndef TASKSPOOL_API_H
#define TASKSPOOL_API_H

#include <stdint.h>
#include <sys/types.h>

#include "core/buf.h"
#include "spool/config.h"

#define API_BODY_MAX		1048576	/* bytes, API.md §2.3 */
#define API_TS_WINDOW		300	/* seconds, API.md §3.4 step 7 */
#define API_NONCE_KEEP		360	/* seconds after X-Timestamp, §3.4 */
#define API_ROTATE_OVERLAP	86400	/* seconds a rotated callback secret
					 * stays valid, §4.3 */

/*
 * One request.  getenv returns the CGI meta-variable name (borrowed, or
 * NULL when unset); the body is read with body_read when it is set (up to
 * n bytes into b; returns the bytes read, 0 at the end of the body, -1 on
 * error; FastCGI's input stream), else with read(2) from in_fd (stdin);
 * both callbacks get ctx.  now is the server's time in Unix seconds
 * (time(NULL) in the CGI; fixed in tests); now_ms the same instant in
 * Unix ms for the rate limit's window (0 = now * 1000); cfg is borrowed
 * (unused when config_error is set).
 */
struct api_request {
	const char *(*getenv)(void *ctx, const char *name);
	ssize_t (*body_read)(void *ctx, void *b, size_t n);
	void *ctx;
	int in_fd;
	int64_t now;
	int64_t now_ms;
	const struct config *cfg;
	const char *config_error; /* not NULL: the configuration did not
				   * load (this message, logged): every
				   * request is answered 500 INTERNAL_ERROR */
	const char *config_denied; /* with config_error, when the file
				    * could not be opened for want of
				    * permission (EACCES, EPERM): its path,
				    * and the answer is 500 PERMISSION_DENIED
				    * (api_denied); else NULL */
};

/*
 * Serve one request: append the whole CGI response to out.  Never fails:
 * an internal error becomes a 500/503 problem response (and a line on
 * stderr without secrets).  Returns the HTTP status code sent.
 */
int api_handle(const struct api_request *rq, struct buf *out);

/*
 * The round-trip property of the idempotency record codec (issue 10,
 * item 2) on len bytes at data (borrowed): 1 when the record decoder
 * refuses them, 0 when decode(encode(decode(data))) equals decode(data),
 * -1 when it does not or on ENOMEM.  For the unit tests and the fuzz
 * target; no I/O.
 */
int api_marker_roundtrip(const char *data, size_t len);

#endif
