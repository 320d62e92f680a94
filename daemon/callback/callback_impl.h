/*
 * callback_impl.h — what callback.c (delivery files, registrations, the
 * CLI and API readers) and callback_sender.c (the libcurl sender thread)
 * share.  Internal: nothing outside those two files includes it.  The
 * split keeps libcurl out of the programs that only read deliveries (the
 * CGI links callback.c but never callback_sender.c).
 */
#ifndef TASKSPOOL_CALLBACK_IMPL_H
#define TASKSPOOL_CALLBACK_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/delivery.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/whsign.h"

#define CB_FILE_MAX	(2 * 1024 * 1024)  /* a delivery file: body + state */
#define CB_REG_MAX	(64 * 1024)	/* a registration file */
#define CB_RESP_MAX	(64 * 1024)	/* response bytes read, §6.4 */
#define CB_STALE_MS	30000		/* unlocked in active/ this long: lost */
#define CB_SCAN_MS	1000		/* pending/ rescan without a wake-up */
#define CB_FAILED_HOOK	"_on_callback_failed"

enum { D_CB, D_PENDING, D_ACTIVE, D_DELIVERED, D_FAILED, D_REG, D_N };

struct cbdirs {
	int fd[D_N];
	int self;			/* active/<node>, -1 without a node */
};

/* One delivery file, decoded. */
struct cbdel {
	char webhook_id[WHSIGN_ID_LEN + 1];
	char request_id[TASK_ID_MAX + 1];
	char app_id[TASK_CODE_MAX + 1];	/* "" = none */
	char *url;			/* new; per-task URL, NULL = registration */
	int64_t created_ms;
	int64_t finished_ms;		/* -1 while PENDING */
	struct delivery_state st;
	char *body;			/* new; the envelope bytes */
	size_t body_len;
};

/* Open (creating) outbox/callbacks/ and its subdirectories, active/<node>
 * when node is not NULL, and state/callbacks/, into d.  Returns 0 or -1
 * with errno; d is then closed. */
int cbdirs_open(const struct spool *s, const char *node, struct cbdirs *d);

/* Close every descriptor of d (open or not) and mark them -1. */
void cbdirs_close(struct cbdirs *d);

/* Free what c owns (url, body); c is then empty. */
void cbdel_fini(struct cbdel *c);

/* Encode c as a delivery file (JSON) appended to out.  Returns 0 or -1
 * with errno ENOMEM/EFBIG. */
int cbdel_encode(const struct cbdel *c, struct buf *out);

/* The first member in which two decoded delivery files differ, or NULL
 * when they hold the same value.  Returns a borrowed static string. */
const char *cbdel_diff(const struct cbdel *a, const struct cbdel *b);

/* The codec's round-trip property (issue 10, item 2): 1 when
 * cbdel_decode() refuses data (why says why), 0 when
 * decode(encode(decode(data))) equals decode(data), -1 when not (why
 * names the member) or on ENOMEM.  For the unit tests and the fuzz
 * target. */
int cbdel_roundtrip(const char *data, size_t len, char *why, size_t whylen);

/* Decode the delivery file data (len bytes, borrowed) into c (new
 * members owned by c, free with cbdel_fini).  Returns 0, or -1 with a
 * reason naming the member in why. */
int cbdel_decode(const char *data, size_t len, struct cbdel *c, char *why,
    size_t whylen);

#endif
