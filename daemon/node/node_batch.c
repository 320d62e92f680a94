/*
 * node_batch — the leader's completion of batches (README.md, "Batches";
 * the files: spool/batchdir.h, the format: core/batch.h).
 *
 * A batch completes once: closed, every member terminal.  Its completion
 * is three writes, each made so that a new leader repeating it after a
 * kill -9 of the old one (between any two) makes nothing twice:
 *  1. the onComplete task <batchId>.complete (when onComplete is set),
 *     executeParams the summary {batchId, total, counts, failed}: not
 *     made when that requestId is anywhere in the spool already (pending,
 *     running, finished, corrupt: spool_locate), and published into
 *     incoming/ with O_EXCL semantics — the rule of a repeated job fire;
 *  2. the callback delivery <batchId>.batch (when callbackUrl is set):
 *     callback_publish's exclusive create, kept once delivered;
 *  3. completedAt (and onCompleteRequestId) in batch.json, under the
 *     batch's lock: later passes skip the batch.
 * Writes: incoming/, outbox/callbacks/pending/, state/batches/.
 */
#include "node/node_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callback/callback.h"
#include "callback/callback_sender.h"
#include "core/batch.h"
#include "core/buf.h"
#include "core/task.h"
#include "core/traceparent.h"
#include "spool/batchdir.h"
#include "spool/clock.h"
#include "spool/log.h"
#include "spool/spool.h"

#define BATCH_POLL_MS	500	/* batches looked at most this often */
#define BATCH_CALLBACK_SUFFIX	".batch"

/* Step 1: the onComplete task cid of b with the summary as params. */
static int
publish_complete(struct node *n, const struct batch *b, const char *cid,
    const struct buf *summary, int64_t now)
{
	struct task t;
	struct buf out;
	char file[SPOOL_NAME_MAX], tp[TRACEPARENT_LEN + 1];
	int rc = 0;

	if (spool_id_known(&n->sp, cid))
		return 0;
	task_init(&t);
	buf_init(&out, 0);
	memcpy(t.request_id, cid, strlen(cid) + 1);
	memcpy(t.task_code, b->on_complete, sizeof(t.task_code));
	t.created_ms = now;
	/* The opener's: a batch opened over the API has its completion
	 * read back by the same AppId (GET /api/tasks/<batchId>.complete)
	 * and counted in that app's records. */
	if (b->app_id[0] != '\0' && (t.app_id = strdup(b->app_id)) == NULL) {
		rc = -1;
		goto out;
	}
	/* A completion starts a trace of its own, as a job's fire does. */
	if (traceparent_fresh(tp) == 0 && (t.traceparent = strdup(tp)) ==
	    NULL) {
		rc = -1;
		goto out;
	}
	if ((t.params = malloc(summary->len + 1)) == NULL) {
		rc = -1;
		goto out;
	}
	memcpy(t.params, summary->data, summary->len);
	t.params[summary->len] = '\0';
	t.params_len = summary->len;
	snprintf(file, sizeof(file), "%s.json", cid);
	if (task_encode(&t, &out) != 0 || spool_publish(&n->sp,
	    n->sp.dir[SPOOL_INCOMING], file, out.data, out.len, -1,
	    SPOOL_PUBLISH_EXCL) != 0) {
		if (errno != EEXIST)
			rc = -1;
	} else
		log_info("batch %s: onComplete task %s (%s) published", b->id,
		    cid, b->on_complete);
out:
	task_fini(&t);
	buf_fini(&out);
	return rc;
}

/* The completion of one batch, when its time has come. */
static int
batch_one(const char *bid, void *arg)
{
	struct node *n = arg;
	struct batch b;
	struct batch_summary s;
	struct buf sum;
	char why[512], cid[TASK_ID_MAX + 1], did[TASK_ID_MAX + 1];
	int64_t now = tstime_now_ms();

	if (batchdir_read(&n->sp, bid, &b, why, sizeof(why)) != 0) {
		if (errno != ENOENT)	/* ENOENT: being made */
			log_warnx("batch %s: %s", bid, why);
		return 0;
	}
	if (b.completed_ms >= 0 || b.closed_ms < 0)
		return 0;
	if (batchdir_summary(&n->sp, bid, now, &s) != 0) {
		log_warn("batch %s: members", bid);
		return 0;
	}
	if (!batch_summary_done(&s)) {
		batch_summary_fini(&s);
		return 0;
	}
	buf_init(&sum, 0);
	snprintf(cid, sizeof(cid), "%s%s", bid, BATCH_COMPLETE_SUFFIX);
	snprintf(did, sizeof(did), "%s%s", bid, BATCH_CALLBACK_SUFFIX);
	if (batch_summary_encode(&b, &s, 0, &sum) != 0) {
		log_warn("batch %s: summary", bid);
		goto out;
	}
	if (b.on_complete[0] != '\0' &&
	    publish_complete(n, &b, cid, &sum, now) != 0) {
		log_warn("batch %s: onComplete task %s", bid, cid);
		goto out;
	}
	if (b.callback_url[0] != '\0' && callback_enqueue_batch(&n->sp, did,
	    b.callback_url, sum.data, sum.len, now) != 0) {
		log_warn("batch %s: callback delivery %s", bid, did);
		goto out;
	}
	if (b.callback_url[0] != '\0')
		callback_sender_wake(n->cbs);
	switch (batchdir_complete(&n->sp, bid, now, b.on_complete[0] != '\0' ?
	    cid : "")) {
	case 1:
		log_info("batch %s completed: %zu member(s), %zu not SUCCESS",
		    bid, s.total, s.nfailed);
		break;
	case 0:
		break;
	default:
		log_warn("batch %s: completed mark", bid);
	}
out:
	buf_fini(&sum);
	batch_summary_fini(&s);
	return 0;
}

void
node_batch_pass(struct node *n)
{
	int64_t now = tstime_mono_ms();

	if (now < n->batch_next)
		return;
	n->batch_next = now + BATCH_POLL_MS;
	if (batchdir_each(&n->sp, batch_one, n) != 0)
		log_warn("state/batches/");
}
