/*
 * resrepair — repair of result files (issue 11 item 5).  A result file
 * results/<id>.json that does not parse (cut short by a crash on a file
 * system that does not order writes, or edited by hand) is a missing
 * result, never the answer:
 *
 *  - the damaged bytes are kept for forensics as corrupt/<id>.result.torn
 *    (".<n>" added when taken) with corrupt/<that>.reason;
 *  - a finished task (its file in done/, failed/ or cancelled/: the
 *    directory is its state) whose result is damaged, or missing, gets a
 *    new one by the writer protocol, rebuilt from its task file's
 *    attempts[] and what of the damaged file still parses
 *    (result_rebuild);
 *  - a task not finished whose result is damaged (a crash before its
 *    conclusion) only has the damaged file moved away: it is then run
 *    again or concluded by the ordinary recovery (node.c).
 *
 * The leader checks the terminal directories in passes of bounded steps
 * (resrepair_step), at once when it becomes the leader and then
 * periodically.  Mechanism: nothing here logs; the caller (node.c) logs
 * the repairs it is told about, and enqueues the callback and record.
 */
#ifndef TASKSPOOL_RESREPAIR_H
#define TASKSPOOL_RESREPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "spool/spool.h"
#include "core/task.h"

#define RESREPAIR_SETTLE_MS	60000	/* a finished task without result
					 * is repaired only when its file
					 * is older than this: `taskspool
					 * retry` removes the result just
					 * before it moves the task */

/*
 * Keep len bytes of data (the damaged results/<id>.json) as
 * corrupt/<id>.result.torn[.<n>] with a .reason holding reason, both by
 * the writer protocol.  The name used goes to kept (keptlen bytes, may
 * be NULL).  Returns 0 or -1 with errno.
 */
int resrepair_keep(const struct spool *sp, const char *id, const char *data,
    size_t len, const char *reason, char *kept, size_t keptlen);

/*
 * Remove the damaged result of the unfinished task id (after keeping it
 * with resrepair_keep), so that the task can be claimed and concluded
 * again.  data/len: the bytes read, checked again against the file
 * before it is removed (a result written meanwhile is left alone).
 * Returns 0 (removed or already gone) or -1 with errno.
 */
int resrepair_drop(const struct spool *sp, const char *id, const char *data,
    size_t len, const char *why, char *kept, size_t keptlen);

/* What resrepair_step tells its caller about each result it rebuilt. */
struct resrepair_fix {
	const struct task *task;	/* the terminal task file, borrowed */
	enum spool_dir dir;		/* done, failed or cancelled */
	const char *result;		/* the new envelope, borrowed */
	size_t len;
	const char *damage;		/* "missing" or result_valid's why */
	const char *kept;		/* corrupt/ name of the damaged copy,
					 * "" when there was none */
};

struct resrepair;

/* A pass state over sp (borrowed, outliving it).  NULL on ENOMEM. */
struct resrepair *resrepair_new(const struct spool *sp);
void resrepair_free(struct resrepair *r);	/* NULL allowed */

/*
 * Go on with the pass: look at up to max task files of done/, failed/
 * and cancelled/ (in that order, from where the last step stopped) and
 * repair each whose result is missing (file older than
 * RESREPAIR_SETTLE_MS) or damaged; default_retries is the configured
 * max_retries for a task without its own.  fixed(arg, fix) is called
 * for each result rebuilt; errors on one task are reported through
 * fail(arg, id, errno) (may be NULL) and the pass goes on.  now_ms: wall
 * clock, Unix ms.  Returns 1 while the pass has more to see, 0 when it
 * ended with this step (the next call starts a new pass).
 */
int resrepair_step(struct resrepair *r, size_t max, int default_retries,
    int64_t now_ms, void (*fixed)(void *, const struct resrepair_fix *),
    void (*fail)(void *, const char *, int), void *arg);

#endif
