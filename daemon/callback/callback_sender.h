/*
 * callback_sender — the node's callback sender thread: it delivers the
 * signed callbacks of outbox/callbacks/ (callback.h) with libcurl, on
 * the schedule of core/delivery.h.
 */
#ifndef TASKSPOOL_CALLBACK_SENDER_H
#define TASKSPOOL_CALLBACK_SENDER_H

#include <stddef.h>

#include "spool/config.h"
#include "spool/spool.h"

struct callback_sender;

/*
 * Start the sender thread of the node whose spool is sp (borrowed: its
 * descriptors and node id must stay valid until callback_sender_stop; the
 * thread only reads them).  The thread has its own libcurl multi handle,
 * loop and outbox/callbacks/ handles (opened in the thread, retried every
 * second while descriptors run out).  cfg is copied.  Call from the main
 * thread before other threads use libcurl (curl_global_init).  Returns
 * new, or NULL with a message in why (bad callback_* configuration, no
 * memory, no thread).
 */
struct callback_sender *callback_sender_start(const struct config *cfg,
    const struct spool *sp, char *why, size_t whylen);

/*
 * Give the sender a reloaded configuration (SIGHUP): cfg is copied and
 * applied by the sender's thread before its next pass, so the callback_*
 * keys (URL policy, secret, schedule, timeouts, in-flight cap, CA file)
 * hold from the next try on; tries in flight finish under the old ones.
 * Thread-safe; NULL ok (returns 0).  Returns 0, or -1 with a message in
 * why when cfg's callback keys do not check (nothing changed).
 */
int callback_sender_reconfigure(struct callback_sender *cs,
    const struct config *cfg, char *why, size_t whylen);

/* Tell the sender a new delivery is waiting (thread-safe; NULL ok). */
void callback_sender_wake(struct callback_sender *cs);

/*
 * Stop the sender: requests in flight are abandoned (their files stay in
 * active/<node>/, unlocked, and are taken back to pending/ at the next
 * start), the thread is joined and everything freed.  NULL is allowed.
 */
void callback_sender_stop(struct callback_sender *cs);

#endif
