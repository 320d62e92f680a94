/*
 * jobstore.c — the job definitions of jobs/ as `taskspool jobs` and
 * /api/jobs change them (jobstore.h).
 *
 * Invariants: every change holds the jobs/ lock from the read of the
 * definition it replaces to its publish; a definition is published only
 * after job_encode() (so it decodes again); nothing here logs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "coord/jobrun.h"
#include "coord/jobstore.h"
#include "core/buf.h"
#include "core/jsontext.h"
#include "core/tz.h"
#include "spool/clock.h"
#include "spool/readfd.h"
#include "spool/tzload.h"

#define DETAIL_MAX	400	/* a detail of spool.c or tz.c */
/* Bytes a fire adds to the task job_make_task() makes: a traceparent
 * member (70), an appId and appWeight (90), room to spare. */
#define JOBSTORE_TASK_ROOM	1024

/* tz_why_set (core/tz.h) writes every reason: NULL why is no reason. */

/*
 * The jobs/ lock: flock(2) on a new open of the directory, so that it is
 * this call's own open file description (two callers in one process
 * exclude each other too).  Returns the descriptor, or -1 with errno.
 */
static int
lock_jobs(const struct spool *sp)
{
	int fd = openat(sp->dir[SPOOL_JOBS], ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			int e = errno;

			(void)close(fd);
			errno = e;
			return -1;
		}
	}
	return fd;
}

static void
unlock_jobs(int fd)
{
	int e = errno;

	(void)close(fd);	/* drops the lock */
	errno = e;
}

int
jobstore_load(const struct spool *sp, const char *code, struct job *j,
    char *why, size_t whylen)
{
	char name[SPOOL_NAME_MAX], tmp[DETAIL_MAX];
	struct task_error err;
	struct stat st;
	struct buf b;
	int fd, e = 0;

	if (!spool_code_ok(code)) {
		tz_why_set(why, whylen, "%s: not a valid jobCode", code);
		errno = EINVAL;
		return -1;
	}
	(void)snprintf(name, sizeof(name), "%s.json", code);
	fd = spool_open_safe(sp->dir[SPOOL_JOBS], name, JOB_FILE_MAX, &st,
	    tmp, sizeof(tmp));
	if (fd < 0) {
		e = errno;
		if (e == ENOENT)
			tz_why_set(why, whylen, "no job %s", code);
		else
			tz_why_set(why, whylen, "jobs/%s: %s", name, tmp);
		errno = e == ELOOP || e == EINVAL || e == EFBIG ? EBADMSG : e;
		return -1;
	}
	buf_init(&b, JOB_FILE_MAX);
	if (buf_read_fd(&b, fd) != 0) {
		e = errno == EFBIG ? EBADMSG : errno;
		tz_why_set(why, whylen, "jobs/%s: %s", name, strerror(errno));
	} else if (job_decode(b.data != NULL ? b.data : "", b.len, j,
	    &err) != 0) {
		tz_why_set(why, whylen, "jobs/%s: invalid definition: %s: "
		    "%s", name, err.field, err.rule);
		e = EBADMSG;
	} else if (strcmp(j->code, code) != 0) {
		tz_why_set(why, whylen, "jobs/%s: invalid definition: "
		    "jobCode: must be \"%s\", as the file's name", name, code);
		e = EBADMSG;
	}
	(void)close(fd);
	buf_fini(&b);
	if (e != 0) {
		job_fini(j);
		errno = e;
		return -1;
	}
	return 0;
}

int
jobstore_check(const struct job *j, const char *hooks_dir,
    const char **field, char *why, size_t whylen)
{
	char path[PATH_MAX], tmp[DETAIL_MAX];
	struct stat st;
	struct tz *z;
	int n;

	if (j->timezone[0] != '\0') {
		if ((z = tz_load(j->timezone, tmp, sizeof(tmp))) == NULL) {
			*field = job_zone_member(j);
			tz_why_set(why, whylen, "%s", tmp);
			errno = EINVAL;
			return -1;
		}
		tz_free(z);
	}
	/* A fire's task must be one the daemons read: its file within
	 * TASK_FILE_MAX with the members a fire adds (traceparent, an
	 * appId for a run over HTTP: JOBSTORE_TASK_ROOM). */
	{
		struct task t;
		struct buf b;
		int big;

		task_init(&t);
		buf_init(&b, 0);
		big = job_make_task(j, JOB_TIME_MAX_MS, &t) == 0 &&
		    task_encode(&t, &b) == 0 && b.len + JOBSTORE_TASK_ROOM >
		    TASK_FILE_MAX;
		buf_fini(&b);
		task_fini(&t);
		if (big) {
			*field = "executeParams";
			tz_why_set(why, whylen, "the tasks it fires would be "
			    "larger than %d bytes", TASK_FILE_MAX -
			    JOBSTORE_TASK_ROOM);
			errno = EINVAL;
			return -1;
		}
	}
	if (hooks_dir == NULL)
		return 0;
	n = snprintf(path, sizeof(path), "%s/%s", hooks_dir, j->task_code);
	if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) != 0 ||
	    !S_ISREG(st.st_mode) || access(path, X_OK) != 0) {
		*field = "taskCode";
		tz_why_set(why, whylen, "no executable hook %s", n > 0 &&
		    (size_t)n < sizeof(path) ? path : j->task_code);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The code of a directory entry "<code>.json" into out, or 0. */
static int
entry_code(const char *d_name, char *out, size_t outlen)
{
	size_t len = strlen(d_name);

	if (d_name[0] == '.' || len <= 5 || len - 5 >= outlen ||
	    strcmp(d_name + len - 5, ".json") != 0)
		return 0;
	memcpy(out, d_name, len - 5);
	out[len - 5] = '\0';
	return spool_code_ok(out);
}

void
jobstore_names_free(char **names, size_t n)
{
	while (n > 0)
		free(names[--n]);
	free(names);
}

ssize_t
jobstore_names(const struct spool *sp, char ***names, int *more)
{
	char **v = NULL, **nv, code[TASK_CODE_MAX + 1];
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dp;
	int fd;

	*names = NULL;
	if (more != NULL)
		*more = 0;
	if ((fd = openat(sp->dir[SPOOL_JOBS], ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		return -1;
	if ((dp = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return -1;
	}
	while ((de = readdir(dp)) != NULL) {
		if (!entry_code(de->d_name, code, sizeof(code)))
			continue;
		if (n == JOBSTORE_LIST_MAX) {
			if (more != NULL)
				*more = 1;
			break;
		}
		if (n == cap) {
			cap = cap != 0 ? cap * 2 : 16;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL)
				goto fail;
			v = nv;
		}
		if ((v[n] = strdup(code)) == NULL)
			goto fail;
		n++;
	}
	(void)closedir(dp);
	if (n > 0)
		qsort(v, n, sizeof(*v), name_cmp);
	*names = v;
	return (ssize_t)n;
fail:
	(void)closedir(dp);
	jobstore_names_free(v, n);
	errno = ENOMEM;
	return -1;
}

/*
 * Under the lock: load the definition in place of code into old
 * (initialised) and ask guard.  Returns 1 (a valid one is in old), 0
 * (none), 2 (one that does not decode), or -1 with errno (the guard's
 * refusal, or a read error).
 */
static int
guarded_old(const struct spool *sp, const char *code, struct job *old,
    jobstore_guard guard, void *arg)
{
	int have, g;

	if (jobstore_load(sp, code, old, NULL, 0) == 0)
		have = 1;
	else if (errno == ENOENT)
		have = 0;
	else if (errno == EBADMSG)
		have = 2;
	else
		return -1;
	if (guard != NULL && (g = guard(have == 1 ? old : NULL, have == 2,
	    arg)) != 0) {
		errno = g;
		return -1;
	}
	return have;
}

/*
 * Publish the encoded b (freed here; rc the encoder's result) as name in
 * dirfd, flags as spool_publish().  Returns 0 or -1 with errno.
 */
static int
publish_buf(const struct spool *sp, int dirfd, const char *name,
    struct buf *b, int rc, int flags)
{
	int e;

	if (rc == 0)
		rc = spool_publish(sp, dirfd, name, b->data, b->len, -1,
		    flags);
	e = errno;
	buf_fini(b);
	errno = e;
	return rc;
}

/* Encode and publish j under the lock; flags as spool_publish(). */
static int
publish(const struct spool *sp, const struct job *j, int flags)
{
	char name[SPOOL_NAME_MAX];
	struct buf b;

	(void)snprintf(name, sizeof(name), "%s.json", j->code);
	buf_init(&b, JOB_FILE_MAX);
	return publish_buf(sp, sp->dir[SPOOL_JOBS], name, &b,
	    job_encode(j, &b), flags);
}

int
jobstore_put(const struct spool *sp, struct job *j, int flags,
    int64_t now_ms, jobstore_guard guard, void *arg, int *replaced)
{
	struct job old;
	int lk, have, rc = -1;

	if (replaced != NULL)
		*replaced = 0;
	if ((lk = lock_jobs(sp)) < 0)
		return -1;
	job_init(&old);
	/* Exclusive: there is nothing to replace, so no guard to ask; a
	 * file in place is EEXIST whoever's it is. */
	if ((have = guarded_old(sp, j->code, &old, (flags & JOBSTORE_EXCL) ?
	    NULL : guard, arg)) < 0)
		goto out;
	if (have != 0 && (flags & JOBSTORE_EXCL)) {
		errno = EEXIST;
		goto out;
	}
	/* The anchor of a fixed-rate job without startAt (job.h): an edit
	 * is the same job, and keeps it. */
	if (j->created_ms < 0)
		j->created_ms = have == 1 && old.created_ms >= 0 ?
		    old.created_ms : now_ms;
	if ((rc = publish(sp, j, (flags & JOBSTORE_EXCL) ?
	    SPOOL_PUBLISH_EXCL : 0)) == 0 && replaced != NULL)
		*replaced = have != 0;
out:
	job_fini(&old);
	unlock_jobs(lk);
	return rc;
}

int
jobstore_set_enabled(const struct spool *sp, const char *code, int on,
    jobstore_guard guard, void *arg, struct job *j, char *why,
    size_t whylen)
{
	int lk, g, rc = -1;

	if ((lk = lock_jobs(sp)) < 0)
		return -1;
	if (jobstore_load(sp, code, j, why, whylen) != 0)
		goto out;
	if (guard != NULL && (g = guard(j, 0, arg)) != 0) {
		job_fini(j);
		errno = g;
		goto out;
	}
	rc = 0;
	if (j->enabled != on) {
		j->enabled = on;
		if ((rc = publish(sp, j, 0)) != 0)
			tz_why_set(why, whylen, "jobs/%s.json: %s", code,
			    strerror(errno));
	}
out:
	unlock_jobs(lk);
	return rc;
}

int
jobstore_remove(const struct spool *sp, const char *code,
    jobstore_guard guard, void *arg)
{
	char name[SPOOL_NAME_MAX];
	struct job old;
	int lk, have, rc = -1;

	if (!spool_code_ok(code)) {
		errno = EINVAL;
		return -1;
	}
	if ((lk = lock_jobs(sp)) < 0)
		return -1;
	job_init(&old);
	if ((have = guarded_old(sp, code, &old, guard, arg)) < 0)
		goto out;
	(void)snprintf(name, sizeof(name), "%s.json", code);
	if (unlinkat(sp->dir[SPOOL_JOBS], name, 0) == 0)
		rc = spool_sync_dir(sp, sp->dir[SPOOL_JOBS]);
out:
	job_fini(&old);
	unlock_jobs(lk);
	return rc;
}

int
jobstore_run_task(const struct job *j, int64_t now_ms, struct task *t)
{
	if (job_make_task(j, now_ms, t) != 0)
		return -1;
	t->created_ms = t->trigger_ms;
	return 0;
}

/*
 * The fenced publish of a forbid or replace run (jobrun.h), b being the
 * encoded task and file its name.  Returns 0 or -1 with errno as
 * jobstore_run().
 */
static int
run_fenced(const struct spool *sp, const struct job *j, const char *id,
    const char *file, const struct buf *b, const char *node, char *prev,
    size_t prevlen, char *warn, size_t warnlen)
{
	char token[JOBRUN_TOKEN_MAX], tmp[SPOOL_TMPNAME_MAX];
	int dfd, fd, v, e = 0;

	if ((dfd = jobrun_open(sp)) < 0)
		return -1;
	if (jobrun_token(token) != 0) {
		e = errno;
		goto out;
	}
	/* The leader holds a job's critical section for a few ms per
	 * fire: wait up to 2 s for it rather than fail. */
	v = jobrun_begin(sp, dfd, j->code, id, token, node,
	    j->overlap == JOB_OVERLAP_REPLACE, JOBRUN_WAIT, tstime_now_ms(),
	    prev, prevlen);
	if (v < 0)
		e = errno == EWOULDBLOCK ? EAGAIN : errno;
	else if (v == JOBRUN_LIVE)
		e = EBUSY;
	else if (v == JOBRUN_MADE)
		e = EEXIST;
	if (e != 0)
		goto out;
	if (prev[0] != '\0' && strcmp(prev, id) != 0 &&
	    jobrun_task_live(sp, prev) && (sp->cancel < 0 ||
	    spool_publish(sp, sp->cancel, prev, "", 0, -1, 0) != 0) &&
	    warn != NULL)
		(void)snprintf(warn, warnlen, "cannot cancel %s (overlap "
		    "replace): %s", prev, strerror(errno));
	fd = spool_stage(sp, b->data, b->len, -1, tmp, sizeof(tmp));
	if (fd < 0 || (sp->do_fsync && fsync(fd) != 0)) {
		e = errno;
		if (fd >= 0) {
			(void)close(fd);
			(void)unlinkat(sp->dir[SPOOL_TMP], tmp, 0);
		}
		goto out;
	}
	(void)close(fd);
	if (jobrun_publish(dfd, j->code, id, sp->dir[SPOOL_TMP], tmp,
	    sp->dir[SPOOL_INCOMING], file) != 0) {
		e = errno == ESTALE || errno == EWOULDBLOCK ? EAGAIN : errno;
		(void)unlinkat(sp->dir[SPOOL_TMP], tmp, 0);
		goto out;
	}
	(void)spool_sync_dir(sp, sp->dir[SPOOL_INCOMING]);
out:
	(void)close(dfd);
	errno = e;
	return e != 0 ? -1 : 0;
}

int
jobstore_run(const struct spool *sp, const struct job *j,
    const struct task *t, const char *node, char *prev, size_t prevlen,
    char *warn, size_t warnlen)
{
	char file[SPOOL_NAME_MAX], pbuf[TASK_ID_MAX + 1];
	enum spool_dir where;
	struct buf b;
	int rc, e;

	if (warn != NULL && warnlen > 0)
		warn[0] = '\0';
	if (prev == NULL || prevlen == 0) {
		prev = pbuf;
		prevlen = sizeof(pbuf);
	}
	prev[0] = '\0';
	(void)snprintf(file, sizeof(file), "%s.json", t->request_id);
	/* O_EXCL only guards incoming/: look everywhere first. */
	if (spool_locate(sp, t->request_id, &where, NULL) == 0) {
		errno = EEXIST;
		return -1;
	}
	buf_init(&b, TASK_FILE_MAX);
	rc = task_encode(t, &b);
	if (rc == 0 && j->overlap != JOB_OVERLAP_ALLOW) {
		rc = run_fenced(sp, j, t->request_id, file, &b, node, prev,
		    prevlen, warn, warnlen);
		e = errno;
		buf_fini(&b);
		errno = e;
		return rc;
	}
	return publish_buf(sp, sp->dir[SPOOL_INCOMING], file, &b, rc,
	    SPOOL_PUBLISH_EXCL);
}

int
jobstore_last_task(const struct spool *sp, const char *code, char *id,
    size_t idlen)
{
	char name[SPOOL_NAME_MAX], *data;
	const char *s;
	size_t len;
	json_t *o;
	int fd;

	id[0] = '\0';
	if (!spool_code_ok(code)) {
		errno = EINVAL;
		return -1;
	}
	if ((fd = openat(sp->dir[SPOOL_STATE], "jobs", O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -1;
	(void)snprintf(name, sizeof(name), "%s.json", code);
	data = spool_read_file(fd, name, 65536, &len);
	(void)close(fd);
	if (data == NULL)
		return errno == ENOENT || errno == EFBIG ? 0 : -1;
	o = jsontext_loadb(data, len, 0, NULL);
	free(data);
	/* The leader's file, read back: only a valid id is believed. */
	if (json_is_object(o) && (s = json_string_value(json_object_get(o,
	    "lastTaskId"))) != NULL && strlen(s) < idlen && spool_id_ok(s))
		(void)snprintf(id, idlen, "%s", s);
	json_decref(o);
	return 0;
}
