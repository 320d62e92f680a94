/*
 * callback_state — recording a try: a job's new delivery state is
 * written to tmp/ (sender_persist) and published in groups at the end of
 * a loop pass (sender_flush: one syncfs or an fsync each, renames into
 * pending/, delivered/ or failed/, one fsync per directory), then the
 * claimed copy is dropped (kept as a spare, callback_spare.c) and its
 * lock released; the MariaDB history, the log line and the metric of
 * each try, and hooks/_on_callback_failed for a CALLBACK_FAILED.
 *
 * Invariant: the claimed copy in active/<node>/ and its lock stay until
 * the new state is durable under its new name, so a crash at any point
 * repeats at most the last try (spool-layout/README.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "callback/callback_impl.h"
#include "records/records.h"
#include "spool/clock.h"
#include "spool/hook.h"
#include "spool/hooklimit.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "spool/syshook.h"

void
sender_job_free(struct cbjob *j)
{
	if (j == NULL)
		return;
	if (j->fd >= 0)
		close(j->fd);
	cbdel_fini(&j->c);
	curl_slist_free_all(j->hdrs);
	buf_fini(&j->state);
	free(j);
}

/* Run hooks/_on_callback_failed with the delivery file on stdin; the
 * daemon's main loop reaps it (waitpid(-1)). */
static void
run_failed_hook(struct callback_sender *cs, const struct cbjob *j,
    const struct buf *file)
{
	char e1[TASK_ID_MAX + 40], e2[WHSIGN_ID_LEN + 40],
	    e3[CONFIG_PATH_MAX + 8];
	char *envp[] = { e1, e2, e3, NULL };
	pid_t pid;
	const char *p = getenv("PATH");

	snprintf(e1, sizeof(e1), "TASKSPOOL_CALLBACK_REQUEST_ID=%s",
	    j->c.request_id);
	snprintf(e2, sizeof(e2), "TASKSPOOL_WEBHOOK_ID=%s", j->c.webhook_id);
	snprintf(e3, sizeof(e3), "PATH=%s", p != NULL ? p :
	    "/usr/local/bin:/usr/bin:/bin");
	pid = syshook_start(&cs->cfg, CB_FAILED_HOOK, envp, file->data,
	    file->len);
	if (pid < 0)
		log_warn("%s: cannot run %s", j->c.request_id, CB_FAILED_HOOK);
	else if (pid > 0)
		log_info("%s: started %s (pid %d)", j->c.request_id,
		    CB_FAILED_HOOK, (int)pid);
}

/*
 * Record j's new state (takes j over): its file is written to tmp/ now
 * and published by sender_flush() at the end of a loop pass (at most
 * CB_FLUSH_MS later), which makes every staged file durable with one
 * syncfs(2) (or one fsync each when they are few), renames each into
 * pending/ (a retry, mtime = the due time), delivered/ or failed/,
 * fsyncs those directories once, and only then removes the claimed
 * copies (sender_recycle()) and drops their locks.
 */
void
sender_persist(struct callback_sender *cs, struct cbjob *j)
{
	char tmp[SPOOL_NAME_MAX];
	struct buf b;
	off_t old = 0;
	int fd = -1;

	buf_init(&b, 0);
	if (cbdel_encode(&j->c, &b) != 0 || (fd = sender_tmp_open(cs, tmp,
	    &old)) < 0 || write(fd, b.data, b.len) != (ssize_t)b.len ||
	    (old > (off_t)b.len && ftruncate(fd, (off_t)b.len) != 0)) {
		/* Left unlocked in active/: the next sweep hands it back. */
		log_warn("%s: cannot record the callback state; the try will "
		    "be repeated", j->c.request_id);
		if (fd >= 0) {
			close(fd);
			(void)unlinkat(cs->sp.dir[SPOOL_TMP], tmp, 0);
		}
		buf_fini(&b);
		sender_job_free(j);
		return;
	}
	if (j->c.st.status == DELIVERY_PENDING && j->c.st.next_ms >= 0) {
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = (time_t)(j->c.st.next_ms / 1000);
		ts[0].tv_nsec = ts[1].tv_nsec = (long)(j->c.st.next_ms %
		    1000) * 1000000;
		(void)futimens(fd, ts);
		if (j->c.st.next_ms < cs->next_scan)
			cs->next_scan = j->c.st.next_ms; /* look again then */
	}
	close(fd);
	snprintf(j->tmp, sizeof(j->tmp), "%s", tmp);
	j->state = b;			/* kept for _on_callback_failed */
	if (cs->staged == NULL)
		cs->staged_ms = tstime_now_ms();
	j->next = cs->staged;
	cs->staged = j;
	cs->nstaged++;
}

/* MariaDB mode: the callback_record history gets j's state as of at
 * (epoch ms): created, each try, DELIVERED, CALLBACK_FAILED. */
void
sender_note_record(struct callback_sender *cs, const struct cbjob *j,
    int64_t at)
{
	struct records_callback r;

	if (cs->cfg.mariadb[0] == '\0')
		return;
	r.delivery_id = j->c.webhook_id;
	r.request_id = j->c.request_id;
	r.url = j->url[0] != '\0' ? j->url : j->c.url != NULL ? j->c.url : "";
	r.state = delivery_status_name(j->c.st.status);
	r.last_error = j->c.st.last_error != DELIVERY_ERR_NONE ?
	    delivery_error_name(j->c.st.last_error) : NULL;
	r.attempts = j->c.st.attempts;
	r.last_http = j->c.st.last_http;
	r.next_try_ms = j->c.st.status == DELIVERY_PENDING ? j->c.st.next_ms :
	    -1;
	r.updated_ms = at;
	if (records_append_callback(&cs->sp, &r) != 0)
		log_warn("%s: cannot write the callback record",
		    j->c.request_id);
}

#define CB_SYNCFS_MIN 16	/* from this many files one syncfs is cheaper */


void
sender_flush(struct callback_sender *cs)
{
	static const int dest[] = { [DELIVERY_PENDING] = D_PENDING,
	    [DELIVERY_DELIVERED] = D_DELIVERED, [DELIVERY_FAILED] = D_FAILED };
	int dirty[D_N] = { 0 };
	struct cbjob *j, *next;
	char (*fresh)[SPOOL_NAME_MAX] = cs->fresh;
	int nfresh = 0;

	if (cs->staged == NULL)
		return;
	if (cs->sp.do_fsync && cs->nstaged >= CB_SYNCFS_MIN) {
		if (syncfs(cs->sp.dir[SPOOL_TMP]) != 0)
			log_warn("syncfs for %d callback state(s)",
			    cs->nstaged);
	} else if (cs->sp.do_fsync)
		for (j = cs->staged; j != NULL; j = j->next) {
			int fd = openat(cs->sp.dir[SPOOL_TMP], j->tmp,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0 || fsync(fd) != 0)
				log_warn("fsync tmp/%s", j->tmp);
			if (fd >= 0)
				close(fd);
		}
	for (j = cs->staged; j != NULL; j = j->next) {
		int d = dest[j->c.st.status];

		if (renameat(cs->sp.dir[SPOOL_TMP], j->tmp, cs->d.fd[d],
		    j->file) != 0) {
			log_warn("%s: cannot record the callback state; the "
			    "try will be repeated", j->c.request_id);
			(void)unlinkat(cs->sp.dir[SPOOL_TMP], j->tmp, 0);
			j->tmp[0] = '\0';
		} else
			dirty[d] = 1;
	}
	for (int d = 0; d < D_N; d++)
		if (dirty[d])
			(void)spool_sync_dir(&cs->sp, cs->d.fd[d]);
	for (j = cs->staged; j != NULL; j = next) {
		next = j->next;
		if (j->tmp[0] != '\0') {
			if (sender_recycle(cs, j, fresh[nfresh], nfresh))
				nfresh++;
			else if (unlinkat(cs->d.self, j->file, 0) != 0 &&
			    errno != ENOENT)
				log_warn("%s: unlink claimed delivery",
				    j->c.request_id);
			sender_note_record(cs, j, tstime_now_ms());
			if (j->c.st.status == DELIVERY_FAILED)
				run_failed_hook(cs, j, &j->state);
		}
		sender_job_free(j);	/* closes the fd: drops the lock */
	}
	cs->staged = NULL;
	cs->nstaged = 0;
	sender_spares_add(cs, fresh, nfresh);
}

/*
 * Log a try of j (sent: a request was made) and count it in
 * taskspool_callbacks_total: ok (delivered), failed (CALLBACK_FAILED),
 * retry (failed, another try scheduled) or rejected (not sent: blocked
 * destination, circuit open, no secret, and another try scheduled).
 */
void
sender_log_try(const struct cbjob *j, int64_t at, const char *what, int sent)
{
	char u[256];

	metrics_callback_outcome(j->c.st.status == DELIVERY_DELIVERED ? "ok" :
	    j->c.st.status == DELIVERY_FAILED ? "failed" : sent ? "retry" :
	    "rejected");

	log_info("%s: callback try %d to %s: %s -> %s%s%s", j->c.request_id,
	    j->c.st.attempts, log_safe(u, sizeof(u), j->url[0] != '\0' ?
	    j->url : "(no URL)"), what, delivery_status_name(j->c.st.status),
	    j->c.st.status == DELIVERY_FAILED ? " " : "",
	    j->c.st.status == DELIVERY_FAILED ?
	    delivery_reason_name(j->c.st.reason) : "");
	(void)at;
}
