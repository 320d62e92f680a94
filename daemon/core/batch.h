/*
 * batch — a batch of tasks (Sidekiq Pro's batches; README.md, "Batches"):
 * the codec of its file state/batches/<batchId>/batch.json and the
 * summary computed from its members' states.  Pure: no I/O, no clock.
 *
 *   {"batchId": "nightly", "createdAt": "2026-12-02T03:00:00.000Z",
 *    "onComplete": "report", "callbackUrl": "https://example.com/b",
 *    "closedAt": "2026-12-02T03:10:00.000Z",
 *    "completedAt": "2026-12-02T03:20:00.000Z",
 *    "onCompleteRequestId": "nightly.complete", "appId": "shop"}
 *
 * batchId: the requestId grammar, at most BATCH_ID_MAX bytes (so that
 * "<batchId>.complete" is a requestId), and the name of its directory;
 * createdAt: RFC 3339; onComplete: a taskCode (optional); callbackUrl:
 * at most TASK_URL_MAX bytes of http(s) URL (optional; the writers check
 * it with the callback policy); closedAt: when `batch close` closed it
 * (absent: open); completedAt: written by the leader once every member
 * was terminal (absent: not completed), with onCompleteRequestId when
 * it made an onComplete task; appId: the AppId that made it over the
 * HTTP API, its owner (absent: made by a user of the spool, `taskspool
 * batch`, which no app may see or use).
 * Nothing else.
 *
 * A member is terminal in SUCCESS, FAILED, CANCELLED, CORRUPT (refused
 * by a daemon) or MISSING (its task file is nowhere: a writer died
 * between the member entry and the task, or it was purged).
 */
#ifndef TASKSPOOL_BATCH_H
#define TASKSPOOL_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/jsonfield.h"
#include "core/task.h"

#define BATCH_ID_MAX	TASK_BATCH_ID_MAX	/* room for ".complete" */
#define BATCH_FILE_MAX	8192			/* bytes of batch.json */
#define BATCH_COMPLETE_SUFFIX	".complete"
#define BATCH_NSTATES	16	/* distinct member states counted */

struct batch {
	char id[BATCH_ID_MAX + 1];
	int64_t created_ms;		/* epoch ms */
	char on_complete[TASK_CODE_MAX + 1];	/* "" = none */
	char callback_url[TASK_URL_MAX + 1];	/* "" = none */
	int64_t closed_ms;		/* -1 = open */
	int64_t completed_ms;		/* -1 = not completed */
	char complete_id[TASK_ID_MAX + 1];	/* "" = none */
	char app_id[TASK_APP_ID_MAX + 1];	/* owner; "" = a spool user */
};

/* The members' states counted so far (batch_summary_add). */
struct batch_summary {
	size_t total;
	size_t nterminal;		/* members in a terminal state */
	struct batch_count {
		char state[16];		/* "PENDING", "SUCCESS"... */
		size_t n;
	} counts[BATCH_NSTATES];
	size_t nstates;
	char **failed;			/* new: ids that ended other than
					 * SUCCESS, in the order added */
	size_t nfailed;
};

/* Initialise b: no id, open, not completed, nothing optional. */
void batch_init(struct batch *b);

/*
 * Decode the len bytes at data (any bytes) into *b.  Returns 0, or -1
 * with *err naming the member and the rule (field "json" for a text the
 * RFC 8259 byte gate or the parser refuses).  Borrows data.
 */
int batch_decode(const char *data, size_t len, struct batch *b,
    struct task_error *err);

/*
 * Encode *b into out (one line, final LF), members in the order above.
 * Returns 0, or -1 (EINVAL: b->id is not a batchId; ENOMEM).
 */
int batch_encode(const struct batch *b, struct buf *out);

/* Whether id is a batchId: task_name_ok(id, BATCH_ID_MAX).  1 or 0. */
int batch_id_ok(const char *id);

/*
 * Whether a member in state (a spool state name, or MISSING) is
 * terminal.  Returns 1 or 0.
 */
int batch_state_terminal(const char *state);

/* Initialise s to no member. */
void batch_summary_init(struct batch_summary *s);

/* Free what s owns and initialise it again.  NULL is accepted. */
void batch_summary_fini(struct batch_summary *s);

/*
 * Count member id (borrowed; copied) in state (borrowed).  States past
 * BATCH_NSTATES distinct ones are counted as "OTHER".  Returns 0 or -1
 * (ENOMEM).
 */
int batch_summary_add(struct batch_summary *s, const char *id,
    const char *state);

/* Sort s's counts by state and its failed ids (strcmp order), so that
 * every reader shows the same order whatever readdir gave. */
void batch_summary_sort(struct batch_summary *s);

/* Whether every member counted is terminal (and there is at least one
 * member).  Returns 1 or 0. */
int batch_summary_done(const struct batch_summary *s);

/*
 * The summary as a JSON object appended to out (one line, no LF):
 * {"batchId", "total", "counts": {state: n, ...} (sorted by state),
 * "failed": [ids, sorted]}; with full, also "closed", "closedAt",
 * "completed", "completedAt", "onComplete", "onCompleteRequestId",
 * "callbackUrl" (null when absent) and "createdAt".  The onComplete
 * task gets the form without full on stdin.  Returns 0 or -1 (ENOMEM).
 */
int batch_summary_encode(const struct batch *b, const struct batch_summary *s,
    int full, struct buf *out);

#endif
