/*
 * harness — what the fuzz targets of tests/fuzz/ share: the libFuzzer
 * entry points' declarations, a failed-property report, a throw-away
 * spool created once per process, and signed requests to api_handle().
 *
 * Each target (fuzz_<name>.c) defines LLVMFuzzerTestOneInput() and, when
 * it needs files, LLVMFuzzerInitialize().  The same object is linked with
 * libFuzzer (make fuzz, clang) or with replay.c (make unit, any compiler),
 * so nothing here depends on libFuzzer.
 *
 * A target reports a broken property (a round trip that changes a value,
 * a fire that does not move forward) with fuzz_fail(), which prints the
 * message and aborts: libFuzzer saves the input as a crash, replay.c
 * counts the file as failed.  Crashes and sanitizer reports abort by
 * themselves.
 */
#ifndef TASKSPOOL_FUZZ_HARNESS_H
#define TASKSPOOL_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "spool/config.h"

/* The libFuzzer interface (llvm.org/docs/LibFuzzer.html). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The harness's AppId and its secret (43 base64url characters, as
 * apps_new_secret issues them), written to the spool's apps.conf. */
#define FUZZ_APP_ID	"fuzz-app"
#define FUZZ_APP_SECRET	"q8Yv2Kp0fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz"
/* The task codes apps.conf allows FUZZ_APP_ID and that have a hook. */
#define FUZZ_CODES	"report.generate,x"
/* The server's clock in every request: 2024-01-01T00:00:00Z. */
#define FUZZ_NOW	INT64_C(1704067200)

/* Print "fuzz: " and the message to stderr, then abort(). */
void fuzz_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/*
 * The last step of a codec's round trip (issue 10 item 2: decode →
 * encode → decode gives the same value): a is the encoding of the
 * decoded input, b the encoding of a decoded again; fuzz_fail() naming
 * what ("task", ...) with both texts unless they are the same bytes.
 */
void fuzz_same_encoding(const char *what, const struct buf *a,
    const struct buf *b);

/*
 * Make a fresh spool (spool_create) under $TMPDIR (default /tmp) with
 * fsync = 0, an apps.conf holding FUZZ_APP_ID with FUZZ_APP_SECRET and
 * the codes FUZZ_CODES, and a hook for each code; load it into *cfg
 * (config_defaults, config_set, config_finish).  The directory is removed
 * at exit() (not after a crash: libFuzzer then _exit()s).  Exits with a
 * message on failure: a harness that cannot set up must not run.
 */
void fuzz_spool_init(struct config *cfg);

/* The whole LLVMFuzzerInitialize() of a target whose inputs need only
 * that spool: fuzz_spool_init(&cfg) once per process (cfg: the target's
 * static struct config). */
#define FUZZ_SPOOL_INITIALIZE(cfg)					\
	int LLVMFuzzerInitialize(int *argc, char ***argv)		\
	{								\
		(void)argc;						\
		(void)argv;						\
		fuzz_spool_init(&(cfg));				\
		return 0;						\
	}

/*
 * Remove every file under cfg's spool directories (recursively, keeping
 * the directories, hooks/ and the spool's top-level files), so every
 * input starts from the same spool: the nonce, idempotency record and
 * task a request left do not change how the next input is answered.
 */
void fuzz_spool_wipe(const struct config *cfg);

/*
 * Write len bytes at data as the file rel (a path relative to cfg's
 * spool, e.g. "state/requests/x.json"; its directory is created when
 * missing), mode 0640, without fsync: the harness plants the state files
 * a reader under test finds.  fuzz_fail() when it cannot.
 */
void fuzz_spool_put(const struct config *cfg, const char *rel,
    const void *data, size_t len);

/* One request, every member borrowed; NULL = the meta-variable unset. */
struct fuzz_request {
	const char *method;	/* REQUEST_METHOD */
	const char *path;	/* PATH_INFO, e.g. "/tasks" */
	const char *query;	/* QUERY_STRING */
	const char *ctype;	/* CONTENT_TYPE */
	const char *idem_key;	/* HTTP_IDEMPOTENCY_KEY */
	const void *body;	/* CONTENT_LENGTH = body_len */
	size_t body_len;
};

/*
 * Send rq to api_handle() at time FUZZ_NOW, signed as API.md §3.3 says
 * (X-App-Id FUZZ_APP_ID, X-Timestamp FUZZ_NOW, a nonce new in this
 * process, X-Signature the HMAC-SHA256 of the canonical string under
 * FUZZ_APP_SECRET), so the request gets past authentication whenever its
 * query can be canonicalised.  The response goes into out (reset first).
 * Checks what api.h promises of every answer: a "Status: NNN" line equal
 * to the returned code, a header block ending in CRLF CRLF and a
 * Content-Length equal to the body's length; fuzz_fail() otherwise.
 * Returns the HTTP status.
 */
int fuzz_api_call(const struct config *cfg, const struct fuzz_request *rq,
    struct buf *out);

#endif
