/*
 * hold — holding and releasing tasks; see hold.h.
 */
#include "coord/hold.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/nameset.h"
#include "core/task.h"
#include "coord/coord.h"
#include "coord/maxconc.h"
#include "spool/readfd.h"

/* How often hold_task and hold_release look again at a task that moved
 * or whose claim lock was held while they looked, and how long they
 * sleep between looks (ms): a claim holds the lock for well under a
 * millisecond, a cancel for a few. */
#define HOLD_TRIES	50
#define HOLD_RETRY_MS	20

static void
hold_nap(void)
{
	struct timespec ts = { 0, HOLD_RETRY_MS * 1000000L };

	(void)nanosleep(&ts, NULL);
}

int
hold_marked(const struct spool *s, const char *id)
{
	struct stat st;

	return s->holdmark >= 0 && spool_id_ok(id) &&
	    fstatat(s->holdmark, id, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int
hold_mark_read(const struct spool *s, const char *id, struct holdmark *m,
    char *why, size_t whylen)
{
	struct task_error te;
	struct stat st;
	struct buf b;
	int fd, rc;

	if (s->holdmark < 0 || !spool_id_ok(id)) {
		errno = ENOENT;
		return -1;
	}
	fd = spool_open_safe(s->holdmark, id, HOLDMARK_FILE_MAX, &st, why,
	    whylen);
	if (fd < 0)
		return -1;
	buf_init(&b, HOLDMARK_FILE_MAX);
	rc = buf_read_fd(&b, fd);
	close(fd);
	if (rc == 0 && holdmark_decode(b.data != NULL ? b.data : "", b.len, m,
	    &te) != 0) {
		snprintf(why, whylen, "state/hold/%s: %s: %s", id, te.field,
		    te.rule);
		errno = EINVAL;
		rc = -1;
	} else if (rc == 0 && strcmp(m->request_id, id) != 0) {
		snprintf(why, whylen, "state/hold/%s: requestId: \"%s\" is "
		    "not the file's name", id, m->request_id);
		errno = EINVAL;
		rc = -1;
	}
	buf_fini(&b);
	return rc;
}

int
hold_mark_clear(const struct spool *s, const char *id)
{
	if (s->holdmark < 0 || !spool_id_ok(id))
		return 0;
	if (unlinkat(s->holdmark, id, 0) != 0)
		return errno == ENOENT ? 0 : -1;
	return spool_sync_dir(s, s->holdmark);
}

/* Write the marker of id: from is where the task was found. */
static int
mark_write(const struct spool *s, const char *id, const char *from,
    const char *by, int64_t now_ms, char *why, size_t whylen)
{
	struct holdmark m;
	struct buf b;
	int rc;

	if (s->holdmark < 0 || s->dir[SPOOL_HOLD] < 0) {
		snprintf(why, whylen, "%s is missing (a spool made before "
		    "holds existed: a daemon creates it when it starts, or "
		    "run taskspool init on the spool)", s->holdmark < 0 ?
		    "state/hold/" : "hold/");
		errno = ENOENT;
		return -1;
	}
	memset(&m, 0, sizeof(m));
	snprintf(m.request_id, sizeof(m.request_id), "%s", id);
	snprintf(m.from, sizeof(m.from), "%s", from);
	snprintf(m.by, sizeof(m.by), "%s", holdmark_by_ok(by) ? by : "");
	m.since_ms = now_ms;
	buf_init(&b, HOLDMARK_FILE_MAX);
	rc = holdmark_encode(&m, &b);
	if (rc == 0)
		rc = spool_publish(s, s->holdmark, id, b.data, b.len, -1, 0);
	if (rc != 0)
		snprintf(why, whylen, "state/hold/%s: %s", id,
		    strerror(errno));
	buf_fini(&b);
	return rc;
}

/*
 * Move fromfd/file to tofd/file under the claim lock (the inode at that
 * name locked and verified), mtime set to mtime_ms when >= 0, and fsync
 * both directories.  Returns 0 or -1 with errno: ENOENT or ESTALE (it
 * moved meanwhile), EWOULDBLOCK (a claim or cancel holds it now),
 * EEXIST (tofd/file exists), EACCES (the caller may not write fromfd).
 */
static int
move_locked(const struct spool *s, int fromfd, const char *file, int tofd,
    int64_t mtime_ms)
{
	char why[256];
	struct stat st;
	int fd, e;

	fd = spool_open_safe(fromfd, file, TASK_FILE_MAX, &st, why,
	    sizeof(why));
	if (fd < 0)
		return -1;
	if (coord_flock_verify(fd, fromfd, file) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (mtime_ms >= 0) {
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime_ms / 1000);
		ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime_ms % 1000) *
		    1000000L;
		(void)utimensat(fromfd, file, ts, AT_SYMLINK_NOFOLLOW);
	}
	if (spool_move_excl(fromfd, file, tofd, file) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	if (spool_sync_dir(s, tofd) != 0 || spool_sync_dir(s, fromfd) != 0)
		return -1;
	return 0;
}

enum hold_status
hold_task(const struct spool *s, const char *id, const char *by,
    int64_t now_ms, enum spool_dir *where, char *why, size_t whylen)
{
	char file[SPOOL_NAME_MAX], node[65];
	enum spool_dir d = SPOOL_NDIRS;
	int marked = 0;

	snprintf(why, whylen, "not found");
	snprintf(file, sizeof(file), "%s.json", id);
	for (int tries = 0; tries < HOLD_TRIES; tries++) {
		int dfd, rc, e;

		if (spool_locate(s, id, &d, node) != 0) {
			if (errno != ENOENT) {
				snprintf(why, whylen, "%s: %s", id,
				    strerror(errno));
				return HOLD_ERR;
			}
			if (marked)
				(void)hold_mark_clear(s, id);
			return HOLD_UNKNOWN;
		}
		if (where != NULL)
			*where = d;
		if (d == SPOOL_HOLD)
			return HOLD_ALREADY;
		if (d == SPOOL_DONE || d == SPOOL_FAILED ||
		    d == SPOOL_CANCELLED) {
			if (marked)
				(void)hold_mark_clear(s, id);
			return HOLD_FINISHED;
		}
		/* The marker first: a claimant that wins the race below
		 * sees it, and a crash leaves the request to the nodes. */
		if (!marked) {
			if (mark_write(s, id, spool_dir_name(d), by, now_ms,
			    why, whylen) != 0)
				return HOLD_ERR;
			marked = 1;
			continue;	/* where is it now? */
		}
		if (d == SPOOL_ACTIVE)
			return HOLD_MARKED;
		dfd = d == SPOOL_QUEUE ? spool_node_dir(s, d, node) :
		    s->dir[d];
		if (dfd < 0)
			return HOLD_MARKED;	/* its node's to move */
		rc = move_locked(s, dfd, file, s->dir[SPOOL_HOLD], -1);
		e = errno;
		if (d == SPOOL_QUEUE)
			close(dfd);
		if (rc == 0) {
			/* No longer WAITING for a maxConcurrent slot: its
			 * claim after the release looks again. */
			(void)limits_mark_waiting(s, id, 0);
			return HOLD_MOVED;
		}
		if (e == EACCES || e == EPERM)
			return HOLD_MARKED;	/* its node's to move */
		if (e == EWOULDBLOCK || e == EAGAIN)
			hold_nap();		/* a claim in progress */
		else if (e != ENOENT && e != ESTALE) {
			snprintf(why, whylen, "move %s/%s to hold/: %s",
			    spool_dir_name(d), file, strerror(e));
			errno = e;
			return HOLD_ERR;
		}
	}
	/* Still moving between looks: the marker stays, its claimant or
	 * its node carries it out. */
	return HOLD_MARKED;
}

/* The instant t is due, as node_claim's claim_delay decides it, or -1. */
static int64_t
task_due(const struct task *t)
{
	if (t->not_before_ms >= 0)
		return t->not_before_ms;
	if (t->trigger == TASK_TRIGGER_DELAY && t->created_ms >= 0)
		return t->created_ms + t->delay_ms;
	if (t->trigger == TASK_TRIGGER_AT)
		return t->run_at_ms;
	return -1;
}

enum hold_status
hold_release(const struct spool *s, const char *id, int64_t now_ms,
    enum spool_dir *to, char *why, size_t whylen)
{
	char file[SPOOL_NAME_MAX], *data;
	int had_mark = hold_marked(s, id);
	enum spool_dir d;
	size_t len;

	snprintf(why, whylen, "not held");
	snprintf(file, sizeof(file), "%s.json", id);
	/* The marker first: a node that claims the released task must not
	 * find it and hold the task again. */
	if (hold_mark_clear(s, id) != 0) {
		snprintf(why, whylen, "state/hold/%s: %s", id,
		    strerror(errno));
		return HOLD_ERR;
	}
	for (int tries = 0; tries < HOLD_TRIES; tries++) {
		struct task t;
		struct task_error te;
		int64_t due = -1;
		int e;

		data = spool_read_file(s->dir[SPOOL_HOLD], file,
		    TASK_FILE_MAX, &len);
		if (data == NULL) {
			if (errno != ENOENT) {
				snprintf(why, whylen, "hold/%s: %s", file,
				    strerror(errno));
				return HOLD_ERR;
			}
			if (spool_locate(s, id, &d, NULL) != 0)
				return HOLD_UNKNOWN;
			if (to != NULL)
				*to = d;
			if (d == SPOOL_DONE || d == SPOOL_FAILED ||
			    d == SPOOL_CANCELLED)
				return HOLD_FINISHED;
			return had_mark ? HOLD_MARKED : HOLD_NOT_HELD;
		}
		task_init(&t);
		if (task_decode(data, len, &t, &te) == 0)
			due = task_due(&t);
		task_fini(&t);
		free(data);
		/* Not due yet: delayed/, with the due time as its mtime (the
		 * leader's due index reads it); else incoming/, where the
		 * claimant refuses a damaged file with a reason. */
		d = due > now_ms + 1 ? SPOOL_DELAYED : SPOOL_INCOMING;
		if (move_locked(s, s->dir[SPOOL_HOLD], file, s->dir[d],
		    d == SPOOL_DELAYED ? due : -1) == 0) {
			if (to != NULL)
				*to = d;
			return HOLD_MOVED;
		}
		e = errno;
		if (e == EWOULDBLOCK || e == EAGAIN)
			hold_nap();	/* a node cancelling it now */
		else if (e != ENOENT && e != ESTALE) {
			snprintf(why, whylen, "move hold/%s to %s/: %s", file,
			    spool_dir_name(d), strerror(e));
			errno = e;
			return HOLD_ERR;
		}
	}
	snprintf(why, whylen, "hold/%s: locked by a node for too long",
	    file);
	errno = EWOULDBLOCK;
	return HOLD_ERR;
}

/*
 * Add to ids the requestIds of the tasks of dfd whose task code is code
 * (NULL: all).  Returns 0 or -1 with errno.
 */
static int
collect(int dfd, const char *code, struct nameset *ids)
{
	struct dirent *de;
	DIR *dp = spool_opendir(dfd);

	if (dp == NULL)
		return -1;
	while ((de = readdir(dp)) != NULL) {
		size_t n = strlen(de->d_name), len;
		char id[TASK_ID_MAX + 1], *data;
		struct task t;
		struct task_error te;
		int match = code == NULL;

		if (de->d_name[0] == '.' || n <= 5 || n - 5 > TASK_ID_MAX ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		memcpy(id, de->d_name, n - 5);
		id[n - 5] = '\0';
		if (!spool_id_ok(id))
			continue;
		if (!match && (data = spool_read_file(dfd, de->d_name,
		    TASK_FILE_MAX, &len)) != NULL) {
			task_init(&t);
			match = task_decode(data, len, &t, &te) == 0 &&
			    strcmp(t.task_code, code) == 0;
			task_fini(&t);
			free(data);
		}
		if (match)
			(void)nameset_add(ids, id, NULL);
	}
	closedir(dp);
	return 0;
}

/* fn for every name of ids, in order; frees them.  Returns how many. */
static long
each(struct nameset *ids, void (*fn)(const char *id, void *arg), void *arg)
{
	struct nameset_node *c;
	long count = 0;

	while ((c = nameset_pop(ids)) != NULL) {
		fn(c->name, arg);
		free(c);
		count++;
	}
	nameset_fini(ids);
	return count;
}

long
hold_each_pending(const struct spool *s, const char *code,
    void (*fn)(const char *id, void *arg), void *arg)
{
	struct nameset ids;
	struct dirent *de;
	DIR *dp;

	if (nameset_init(&ids) != 0)
		return -1;
	if (collect(s->dir[SPOOL_INCOMING], code, &ids) != 0) {
		nameset_fini(&ids);
		return -1;
	}
	(void)collect(s->dir[SPOOL_DELAYED], code, &ids);
	if ((dp = spool_opendir(s->dir[SPOOL_QUEUE])) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			int nfd;

			if (de->d_name[0] == '.' || !spool_code_ok(de->d_name))
				continue;
			nfd = openat(s->dir[SPOOL_QUEUE], de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0)
				continue;
			(void)collect(nfd, code, &ids);
			close(nfd);
		}
		closedir(dp);
	}
	return each(&ids, fn, arg);
}

long
hold_each_held(const struct spool *s, const char *code,
    void (*fn)(const char *id, void *arg), void *arg)
{
	struct nameset ids;

	if (nameset_init(&ids) != 0)
		return -1;
	if (collect(s->dir[SPOOL_HOLD], code, &ids) != 0) {
		nameset_fini(&ids);
		return -1;
	}
	return each(&ids, fn, arg);
}
