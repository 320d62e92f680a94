/*
 * callback_impl.h — what the files of callback/ share: callback.c
 * (delivery files, registrations, the CLI and API readers) and the
 * sender thread's files (callback_sender.c, callback_claim.c,
 * callback_dispatch.c, callback_http.c, callback_state.c,
 * callback_spare.c).  Internal: nothing outside callback/ includes it,
 * but for the unit tests and fuzz targets of the delivery codec.  Only
 * the sender's files call libcurl, so the programs that only read
 * deliveries (the CGI links callback.c) never link it; this header
 * names libcurl's types for the sender's structures.
 */
#ifndef TASKSPOOL_CALLBACK_IMPL_H
#define TASKSPOOL_CALLBACK_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include <curl/curl.h>

#include "core/buf.h"
#include "core/delivery.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/whsign.h"
#include "core/ssrf.h"
#include "core/tstime.h"
#include "spool/config.h"

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

/* --- the sender thread (callback_sender*.c, callback_claim.c,
 * callback_dispatch.c, callback_http.c, callback_state.c,
 * callback_spare.c) -------------------------------------------------------
 *
 * Everything below belongs to the sender thread: one struct
 * callback_sender per daemon, used only by its thread after
 * callback_sender_start() (the mutex guards stop, woken and multi, which
 * callback_sender_wake() and _stop() touch from the daemon's thread).
 * A delivery's life in the sender: claimed from pending/ into
 * active/<node>/ under an flock (callback_claim.c) onto the ready list;
 * dispatched (callback_dispatch.c: its URL, registration, secrets and
 * endpoint breaker decide) to the flight list or straight to a new state;
 * one HTTP try with libcurl (callback_http.c); its new state staged in
 * tmp/ and flushed in groups (callback_state.c), the claimed copy kept as
 * a spare file (callback_spare.c).  A job is on exactly one of ready,
 * flight and staged, or freed, and holds its flock until its new state
 * is durable.
 */

#define CB_SPARES_MAX	256	/* spare files in tmp/ (callback_spare.c) */

/* Per endpoint (registration, or origin of a per-task URL): the breaker. */
struct cbendpoint {
	struct cbendpoint *next;
	char key[TASK_URL_MAX + 8];
	struct delivery_breaker br;
	char reg_updated[TSTIME_BUF + 8];
};

struct cbjob {
	struct cbjob *next;
	struct cbdel c;
	char file[SPOOL_NAME_MAX];
	int fd;				/* locked, in active/<node>/ */
	struct cbendpoint *ep;
	int using_reg;			/* URL from the registration */
	CURL *easy;
	struct curl_slist *hdrs;
	int blocked;			/* refused by the SSRF check */
	size_t resp_bytes;
	int aborted;			/* stopped reading at CB_RESP_MAX */
	int64_t retry_after_ms;
	int probe;
	uid_t uid;			/* the claimed file's owner, */
	mode_t mode;			/* and permissions */
	char url[TASK_URL_MAX + 1];
	char tmp[SPOOL_NAME_MAX];	/* staged new state in tmp/ */
	struct buf state;		/* its bytes */
};

struct callback_sender {
	struct config cfg;
	struct spool sp;		/* handles borrowed from the node */
	struct cbdirs d;
	pthread_t th;
	int started;
	CURLM *multi;			/* NULL while dormant; set under mu */
	pthread_mutex_t mu;
	pthread_cond_t cond;		/* wakes a dormant sender */
	int stop, woken;		/* under mu */
	struct config next_cfg;		/* under mu: a reloaded one, */
	int reconf;			/* to apply when set (SIGHUP) */
	struct delivery_policy pol;
	struct ssrf_allow allow;
	struct cbjob *ready;		/* claimed, not yet sent */
	struct cbjob *flight;		/* requests in flight */
	struct cbjob *staged;		/* new states to publish */
	int nstaged;
	int64_t staged_ms;		/* when the first of them was */
	unsigned long tmp_seq;
	long pid;			/* in tmp/ names */
	/* Spare files in tmp/ (sender_recycle()), oldest first. */
	char spare[CB_SPARES_MAX][SPOOL_NAME_MAX];
	int64_t spare_ms[CB_SPARES_MAX];	/* when each became spare */
	int nspare;
	uid_t new_uid;			/* a new file's owner and permissions */
	mode_t new_mode;		/* (0: none made yet) */
	char fresh[CB_SPARES_MAX][SPOOL_NAME_MAX]; /* sender_flush's */
	int ninflight, nready;
	struct cbendpoint *eps;
	int64_t next_scan, next_sweep;
};
/*
 * New states are flushed together: at the end of the loop pass in which
 * the first of them is CB_FLUSH_MS old, or there are CB_FLUSH_MAX, or
 * no request is in flight (then at once).  A busy sender shares one
 * syncfs and one fsync per directory among more tries; the endpoints do
 * not wait for it (the next try of an endpoint starts when the previous
 * one's response is in).
 */
#define CB_FLUSH_MS	10
#define CB_FLUSH_MAX	CB_SPARES_MAX

/* --- callback_dispatch.c -------------------------------------------- */

/* Decide about every job of cs->ready at now (Unix ms): each either
 * starts its try (onto cs->flight), is finished without a request
 * (staged with sender_persist()), or waits on the list. */
void sender_dispatch_ready(struct callback_sender *cs, int64_t now);

/* Set the registration state/callbacks/<app>.json (regfd is
 * state/callbacks/) to DISABLED (a 410, API.md §6.4) with the writer
 * protocol of s; its new updatedAt into updated (ulen bytes).  Returns 0
 * or -1 with errno (EINVAL: not a JSON object, ENOMEM). */
int sender_reg_disable(const struct spool *s, int regfd, const char *app,
    char *updated, size_t ulen);

/* 32 random bits for the delivery schedule's jitter (RAND_bytes; 0 when
 * it fails, which only removes the jitter). */
uint32_t sender_rnd32(void);

/* --- callback_http.c ------------------------------------------------ */

/* Start the HTTP try of j (its URL in j->url) at now (Unix ms), signed
 * with the nsecrets secrets (borrowed, newest first) as Standard
 * Webhooks: an easy handle on cs->multi with every option of API.md §7.4.
 * Returns 0, or -1 when it could not be started (j->easy may then be set:
 * the caller cleans it up and finishes j as a failed try). */
int sender_start_request(struct callback_sender *cs, struct cbjob *j,
    int64_t now, const char *const *secrets, size_t nsecrets);

/* Finish every completed transfer of cs->multi: classify the outcome,
 * update the delivery state and its endpoint's breaker, log the try and
 * stage the job's new state (sender_persist()). */
void sender_reap_done(struct callback_sender *cs);

/* --- callback_claim.c ----------------------------------------------- */

/* Claim every due file of pending/ (mtime <= now, Unix ms) onto
 * cs->ready, at most 4 * callback_max_inflight jobs in hand; set
 * cs->next_scan from the earliest one not yet due. */
void sender_scan(struct callback_sender *cs, int64_t now);

/* Hand back to pending/ the unlocked deliveries of active/<node>/ of
 * the other nodes (a dead sender's), and of this node too when self_too
 * (ours from before a restart). */
void sender_sweep(struct callback_sender *cs, int self_too);

/* --- callback_state.c ----------------------------------------------- */

/* Record j's new state (takes j over): written to tmp/ now, published by
 * sender_flush().  On a write error j is freed unlocked in active/<node>/
 * and the next sweep hands it back (the try is repeated). */
void sender_persist(struct callback_sender *cs, struct cbjob *j);

/* Publish every staged state: make them durable, rename each into
 * pending/, delivered/ or failed/, sync those directories, then drop the
 * claimed copies and their locks; run _on_callback_failed for each
 * CALLBACK_FAILED. */
void sender_flush(struct callback_sender *cs);

/* MariaDB mode (the `mariadb` key): append j's state as of at (Unix ms)
 * to the callback_record history through the records outbox; logs when
 * it cannot. */
void sender_note_record(struct callback_sender *cs, const struct cbjob *j,
    int64_t at);

/* Log a try of j at at (Unix ms; what: its outcome in words, borrowed)
 * and count it in taskspool_callbacks_total; sent: a request was made. */
void sender_log_try(const struct cbjob *j, int64_t at, const char *what,
    int sent);

/* Free j (NULL is fine): close its descriptor (dropping its lock) and
 * free what it owns. */
void sender_job_free(struct cbjob *j);

/* --- callback_spare.c ----------------------------------------------- */

/* Remove the spare files unused since before now - CB_SPARE_MS (Unix ms;
 * every one when now is INT64_MAX). */
void sender_spares_expire(struct callback_sender *cs, int64_t now);

/* Open a file of tmp/ for a new state, its name into name (SPOOL_NAME_MAX
 * bytes): the newest spare, or a new file.  Returns a descriptor open for
 * writing at offset 0 (caller closes), with the size of the bytes it
 * holds already in *old (0 for a new file), or -1 with errno. */
int sender_tmp_open(struct callback_sender *cs, char *name, off_t *old);

/* Move j's claimed copy (its new state is durable) into tmp/ as a spare,
 * named into name (SPOOL_NAME_MAX bytes); nfresh were moved before it in
 * this pass.  Returns 1 when moved, 0 when another user owns it or there
 * are spares enough: the caller removes it. */
int sender_recycle(struct callback_sender *cs, const struct cbjob *j,
    char *name, int nfresh);

/* Make the n files (names borrowed) just moved into tmp/ by
 * sender_recycle() spares, once their names' removal from active/<node>/
 * is durable (or remove them). */
void sender_spares_add(struct callback_sender *cs,
    char (*name)[SPOOL_NAME_MAX], int n);

#endif
