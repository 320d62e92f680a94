/*
 * retry.c — a FAILED or CANCELLED task back to incoming/ (retry.h).
 *
 * Owns the manual retry's rewrite of the task file (its attempt history
 * from the result, no delay, one more attempt allowed) and the move that
 * makes it live again, one retry at a time (flock(2) on failed/).  The
 * rename is the fence (DESIGN: a task file is
 * in one directory at a time): the file is rewritten where it lies, then
 * moved with spool_move_excl(), so there is never a live copy beside a
 * terminal one.  The index and the wake-up are coordination, hence here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <jansson.h>

#include "coord/hold.h"
#include "coord/index.h"
#include "coord/jobrun.h"
#include "coord/jobstore.h"
#include "coord/retry.h"
#include "coord/wakeup.h"
#include "core/buf.h"
#include "core/job.h"
#include "core/jsontext.h"
#include "core/result.h"
#include "core/task.h"
#include "spool/clock.h"

/* Carry the attempts of results/<file> over into t; a warning in warn
 * when the result is damaged. */
static void
carry_attempts(const struct spool *sp, const char *file, struct task *t,
    char *warn, size_t warnlen)
{
	struct task_error te;
	struct task tmp;
	size_t len;
	char *data = spool_read_file(sp->dir[SPOOL_RESULTS], file, 64 << 20,
	    &len), *s = NULL;
	json_t *r, *arr;

	if (data == NULL)
		return;
	if (!result_valid(data, len, NULL, 0) && warn != NULL)
		(void)snprintf(warn, warnlen, "results/%s is damaged; the "
		    "final attempt is not carried over", file);
	r = jsontext_loadb(data, len, 0, NULL);
	arr = json_object_get(r, "attempts");
	if (json_is_array(arr)) {
		json_t *wrap = json_pack("{s:s,s:O}", "taskCode", t->task_code,
		    "attempts", arr);

		s = wrap != NULL ? json_dumps(wrap, JSON_COMPACT) : NULL;
		json_decref(wrap);
		task_init(&tmp);
		if (s != NULL && task_decode(s, strlen(s), &tmp, &te) == 0) {
			free(t->attempts);
			t->attempts = tmp.attempts;
			t->nattempts = tmp.nattempts;
			tmp.attempts = NULL;
			tmp.nattempts = 0;
		}
		task_fini(&tmp);
	}
	free(s);
	json_decref(r);
	free(data);
}

/*
 * The run marker of t's job (t->job_code, borrowed) for the retry of run
 * id: 0 when the job is gone, allows overlap, or the marker now names id
 * (or did: the latest run retried); EALREADY when another run of the job
 * is pending or running (its id in warn), or the errno of the marker.
 */
static int
retry_fence(const struct spool *sp, const struct task *t, const char *id,
    char *warn, size_t warnlen)
{
	char token[JOBRUN_TOKEN_MAX], prev[TASK_ID_MAX + 1];
	struct job j;
	int dfd, v, e = 0;

	job_init(&j);
	if (!spool_code_ok(t->job_code) || jobstore_load(sp, t->job_code, &j,
	    NULL, 0) != 0 || j.overlap == JOB_OVERLAP_ALLOW) {
		job_fini(&j);
		return 0;
	}
	if ((dfd = jobrun_open(sp)) < 0 || jobrun_token(token) != 0) {
		e = errno;
		goto out;
	}
	v = jobrun_begin(sp, dfd, j.code, id, token, "retry", 0, JOBRUN_WAIT,
	    tstime_now_ms(), prev, sizeof(prev));
	if (v < 0)
		e = errno;
	else if (v == JOBRUN_LIVE) {
		e = EALREADY;
		if (warn != NULL)
			(void)snprintf(warn, warnlen, "%s", prev);
	}
out:
	if (dfd >= 0)
		(void)close(dfd);
	job_fini(&j);
	return e;
}

/* task_retry() with the spool's retry lock held. */
static int
retry_locked(const struct config *cfg, const struct spool *sp,
    const char *id, size_t *attempt, enum spool_dir *where, char *warn,
    size_t warnlen)
{
	char file[SPOOL_NAME_MAX], node[CONFIG_NODE_MAX + 1];
	struct task_error te;
	enum spool_dir w;
	struct task t;
	struct buf out;
	size_t len;
	char *data;
	int e;

	if (warn != NULL && warnlen > 0)
		warn[0] = '\0';
	/* A node may be moving the task (incoming/ -> active/) while it is
	 * looked for: a miss is looked at again before it counts. */
	for (int i = 0; spool_locate(sp, id, &w, node) != 0; i++)
		if (i == 2) {
			errno = ENOENT;
			return -1;
		}
	if (where != NULL)
		*where = w;
	if (w != SPOOL_FAILED && w != SPOOL_CANCELLED) {
		errno = EBUSY;
		return -1;
	}
	(void)snprintf(file, sizeof(file), "%s.json", id);
	data = spool_read_file(sp->dir[w], file, TASK_FILE_MAX, &len);
	task_init(&t);
	if (data == NULL || task_decode(data, len, &t, &te) != 0) {
		e = data == NULL ? errno : EBADMSG;
		free(data);
		task_fini(&t);
		errno = e;
		return -1;
	}
	free(data);
	carry_attempts(sp, file, &t, warn, warnlen);
	(void)snprintf(t.request_id, sizeof(t.request_id), "%s", id);
	t.not_before_ms = -1;
	t.trigger = TASK_TRIGGER_NOW;
	t.delay_ms = t.run_at_ms = -1;
	/* A manual retry gets one more attempt beyond those used. */
	if ((t.max_retries >= 0 ? t.max_retries : (int)cfg->max_retries) <
	    (int)t.nattempts)
		t.max_retries = (int)t.nattempts;
	/* A run of a forbid or replace job goes through the job's run
	 * marker, as a fire does (coord/jobrun.h): while another run of
	 * the job is live the retry is refused (EALREADY), else the marker
	 * names this run, so no fire starts beside it. */
	if (t.job_code != NULL && (e = retry_fence(sp, &t, id, warn,
	    warnlen)) != 0) {
		task_fini(&t);
		errno = e;
		return -1;
	}
	/* A hold marker left by a hold that crashed as the task ended
	 * would hold the retry at its claim (coord/hold.h): not asked for. */
	(void)hold_mark_clear(sp, id);
	/* Rewrite in place (atomic replace), then move the same file into
	 * incoming/.  The old result goes before the move: after it, a
	 * node could run the task and write the new result first.  A crash
	 * between the two leaves a terminal task without its result, which
	 * the leader's repair pass (node/resrepair.c) rebuilds from the
	 * task file. */
	buf_init(&out, 0);
	if (task_encode(&t, &out) != 0 || spool_publish(sp, sp->dir[w], file,
	    out.data, out.len, -1, 0) != 0 ||
	    (unlinkat(sp->dir[SPOOL_RESULTS], file, 0) != 0 &&
	    errno != ENOENT) ||
	    spool_move_excl(sp->dir[w], file, sp->dir[SPOOL_INCOMING],
	    file) != 0) {
		e = errno;
		buf_fini(&out);
		task_fini(&t);
		errno = e;
		return -1;
	}
	(void)spool_sync_dir(sp, sp->dir[SPOOL_INCOMING]);
	(void)spool_sync_dir(sp, sp->dir[w]);
	(void)index_client(cfg, sp, id, 1, NULL);
	wakeup_notify(cfg, sp, SPOOL_INCOMING, file);
	if (attempt != NULL)
		*attempt = t.nattempts + 1;
	buf_fini(&out);
	task_fini(&t);
	return 0;
}

int
task_retry(const struct config *cfg, const struct spool *sp,
    const char *id, size_t *attempt, enum spool_dir *where, char *warn,
    size_t warnlen)
{
	/* Retries are serialised by flock(2) on failed/ (an open file
	 * description of its own): two at once would both find the task
	 * terminal, and the second's rewrite in place would bring back a
	 * terminal copy beside the live one.  Under the lock the second one
	 * finds the task live and is refused (EBUSY). */
	int lfd = openat(sp->dir[SPOOL_FAILED], ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC), rc, e;

	if (lfd < 0)
		return -1;
	while ((rc = flock(lfd, LOCK_EX)) != 0 && errno == EINTR)
		;
	if (rc != 0) {
		e = errno;
		(void)close(lfd);
		errno = e;
		return -1;
	}
	rc = retry_locked(cfg, sp, id, attempt, where, warn, warnlen);
	e = errno;
	(void)close(lfd);	/* releases the lock */
	errno = e;
	return rc;
}
