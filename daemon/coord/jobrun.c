/*
 * jobrun — the per-job run marker; see jobrun.h.
 */
#include "coord/jobrun.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "coord/coord.h"
#include "core/task.h"

#define JOBRUN_WAIT_TRIES 1000	/* with JOBRUN_WAIT: 2 s */
#define JOBRUN_LOCK_TRIES 50	/* critical section: tries, 2 ms apart
				 * (held for a marker write at most) */
#define JOBRUN_LINE_MAX	(TASK_ID_MAX + JOBRUN_TOKEN_MAX + 160)

/* What a marker says. */
struct marker {
	char id[TASK_ID_MAX + 1];	/* "" when none, or torn */
	char token[JOBRUN_TOKEN_MAX];
	int64_t at_ms;			/* -1 when not stated */
};

int
jobrun_open(const struct spool *sp)
{
	/* Group-writable: `jobs run-now` and POST /api/jobs/{code}/run
	 * (the CGI, in the spool's group) take the marker too; set
	 * explicitly, past the umask. */
	int made = mkdirat(sp->dir[SPOOL_STATE], "jobruns", 02770) == 0;
	int fd;

	if (!made && errno != EEXIST)
		return -1;
	fd = openat(sp->dir[SPOOL_STATE], "jobruns", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && made)
		(void)fchmod(fd, 02770);
	return fd;
}

int
jobrun_token(char *out)
{
	unsigned char r[(JOBRUN_TOKEN_MAX - 1) / 2];

	out[0] = '\0';
	if (RAND_bytes(r, sizeof(r)) != 1) {
		errno = EIO;
		return -1;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int
jobrun_task_live(const struct spool *sp, const char *id)
{
	static const enum spool_dir order[] = { SPOOL_DELAYED,
		SPOOL_INCOMING, SPOOL_QUEUE, SPOOL_ACTIVE };
	char file[SPOOL_NAME_MAX];
	struct stat st;

	if (!spool_id_ok(id))
		return 0;
	snprintf(file, sizeof(file), "%s.json", id);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			enum spool_dir d = order[i];

			if (d == SPOOL_QUEUE || d == SPOOL_ACTIVE) {
				if (spool_in_nodes(sp, d, file, NULL))
					return 1;
			} else if (fstatat(sp->dir[d], file, &st,
			    AT_SYMLINK_NOFOLLOW) == 0)
				return 1;
		}
	return 0;
}

/* "<job><suffix>" into out; 0, or -1 with EINVAL. */
static int
name_of(char *out, size_t len, const char *job, const char *suffix)
{
	int l;

	if (!spool_code_ok(job)) {
		errno = EINVAL;
		return -1;
	}
	l = snprintf(out, len, "%s%s", job, suffix);
	if (l < 0 || (size_t)l >= len) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Read job's marker into m.  Returns 1 (a marker; m->id "" when torn),
 * 0 (none) or -1 with errno. */
static int
marker_read(int dirfd, const char *job, struct marker *m)
{
	char name[SPOOL_NAME_MAX], *data, *sp, *p;
	size_t len;

	memset(m, 0, sizeof(*m));
	m->at_ms = -1;
	if (name_of(name, sizeof(name), job, ".run") != 0)
		return -1;
	data = spool_read_file(dirfd, name, JOBRUN_LINE_MAX, &len);
	if (data == NULL) {
		if (errno == ENOENT)
			return 0;
		/* Longer than any marker written, or a symbolic link (never
		 * followed): torn, so stale; the rename of a new marker
		 * replaces it. */
		return errno == EFBIG || errno == ELOOP ? 1 : -1;
	}
	data[strcspn(data, "\n")] = '\0';
	sp = strchr(data, ' ');
	if (sp != NULL)
		*sp = '\0';
	if (spool_id_ok(data))
		snprintf(m->id, sizeof(m->id), "%s", data);
	if (sp != NULL) {
		if ((p = strstr(sp + 1, "token=")) != NULL)
			snprintf(m->token, sizeof(m->token), "%.*s",
			    (int)strspn(p + 6, "0123456789abcdef"), p + 6);
		if ((p = strstr(sp + 1, "at_ms=")) != NULL) {
			char *end;
			long long v = strtoll(p + 6, &end, 10);

			if (end != p + 6 && v >= 0)
				m->at_ms = v;
		}
	}
	free(data);
	return 1;
}

/* Make job's marker name id (crash-safe: tmp + fsync + rename + fsync of
 * the directory; with JOBRUN_NOSYNC tmp + rename only, the caller syncs
 * before it publishes the run).  0, or -1 with errno. */
static int
marker_write(const struct spool *sp, int dirfd, const char *job,
    const char *id, const char *token, const char *node, int64_t now_ms,
    int flags)
{
	char tmp[SPOOL_TMPNAME_MAX];
	int fd;

	char name[SPOOL_NAME_MAX], line[JOBRUN_LINE_MAX];
	int l;

	if (name_of(name, sizeof(name), job, ".run") != 0)
		return -1;
	l = snprintf(line, sizeof(line), "%s token=%s node=%.64s at_ms=%lld\n",
	    id, token, node, (long long)now_ms);
	if (l < 0 || (size_t)l >= sizeof(line)) {
		errno = EINVAL;
		return -1;
	}
	if (!(flags & JOBRUN_NOSYNC))
		return spool_publish(sp, dirfd, name, line, (size_t)l, -1, 0);
	if ((fd = spool_stage(sp, line, (size_t)l, -1, tmp, sizeof(tmp))) < 0)
		return -1;
	close(fd);
	if (renameat(sp->dir[SPOOL_TMP], tmp, dirfd, name) != 0) {
		int e = errno;

		(void)unlinkat(sp->dir[SPOOL_TMP], tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

int
jobrun_sync(const struct spool *sp, int dirfd, const char *job)
{
	char name[SPOOL_NAME_MAX];
	int fd, rc;

	if (!sp->do_fsync)
		return 0;
	if (name_of(name, sizeof(name), job, ".run") != 0)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Enter job's critical section: flock(2) on state/jobruns/<job>.lock,
 * a file that stays (only the lock comes and goes, so nothing needs
 * taking over: the kernel drops the lock of a holder that dies).
 * tries: how many times, 2 ms apart.  Returns the lock's descriptor
 * (close it to leave) or -1 with errno (EWOULDBLOCK: held all along). */
static int
lock_take(int dirfd, const char *job, int tries)
{
	char lname[SPOOL_NAME_MAX];

	if (name_of(lname, sizeof(lname), job, ".lock") != 0)
		return -1;
	for (int i = 0;; i++) {
		struct timespec ts = { 0, 2000000L };
		int fd = openat(dirfd, lname, O_RDWR | O_CREAT | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC, 0640);

		if (fd < 0)
			return -1;
		if (coord_flock_verify(fd, dirfd, lname) == 0)
			return fd;
		close(fd);
		if ((errno != EWOULDBLOCK && errno != ESTALE &&
		    errno != ENOENT) || i + 1 >= tries)
			return -1;
		(void)nanosleep(&ts, NULL);
	}
}

/* Whether a marker written at at_ms (its writer's clock) is still within
 * JOBRUN_PUBLISH_MS of now_ms (either way: the clocks of two nodes). */
static int
young(int64_t at_ms, int64_t now_ms)
{
	return at_ms >= 0 && now_ms - at_ms < JOBRUN_PUBLISH_MS &&
	    at_ms - now_ms < JOBRUN_PUBLISH_MS;
}

int
jobrun_begin(const struct spool *sp, int dirfd, const char *job,
    const char *id, const char *token, const char *node, int replace,
    int flags, int64_t now_ms, char *prev, size_t prevlen)
{
	struct marker m;
	int lfd, r, v = JOBRUN_FIRE;

	if (prev != NULL && prevlen > 0)
		prev[0] = '\0';
	if (!spool_id_ok(id)) {
		errno = EINVAL;
		return -1;
	}
	if ((lfd = lock_take(dirfd, job, (flags & JOBRUN_WAIT) ?
	    JOBRUN_WAIT_TRIES : JOBRUN_LOCK_TRIES)) < 0)
		return -1;
	if ((r = marker_read(dirfd, job, &m)) < 0) {
		int e = errno;

		close(lfd);
		errno = e;
		return -1;
	}
	if (prev != NULL && prevlen > 0)
		snprintf(prev, prevlen, "%s", m.id);
	if (r == 1 && m.id[0] != '\0') {
		int live = jobrun_task_live(sp, m.id);
		int unpub = !live && !spool_id_known(sp, m.id);

		if (strcmp(m.id, id) == 0) {
			/* This very fire: made, or being made — unless it
			 * is our own that failed to publish, or stale. */
			if (!unpub || (strcmp(m.token, token) != 0 &&
			    young(m.at_ms, now_ms)))
				v = JOBRUN_MADE;
		} else if (!replace && (live || (unpub &&
		    young(m.at_ms, now_ms))))
			v = JOBRUN_LIVE;
	}
	if (v == JOBRUN_FIRE && marker_write(sp, dirfd, job, id, token, node,
	    now_ms, flags) != 0) {
		int e = errno;

		close(lfd);
		errno = e;
		return -1;
	}
	close(lfd);
	return v;
}

int
jobrun_publish(int dirfd, const char *job, const char *id, int fromfd,
    const char *from, int tofd, const char *to)
{
	struct marker m;
	int lfd, r, e = 0;

	if ((lfd = lock_take(dirfd, job, JOBRUN_LOCK_TRIES)) < 0)
		return -1;
	r = marker_read(dirfd, job, &m);
	if (r < 0)
		e = errno;
	else if (r == 0 || strcmp(m.id, id) != 0)
		e = ESTALE;
	else if (spool_move_excl(fromfd, from, tofd, to) != 0)
		e = errno;
	close(lfd);
	if (e != 0) {
		errno = e;
		return -1;
	}
	return 0;
}

int
jobrun_read(int dirfd, const char *job, char *id, size_t idlen)
{
	struct marker m;
	int r = marker_read(dirfd, job, &m);

	if (idlen > 0)
		snprintf(id, idlen, "%s", r == 1 ? m.id : "");
	return r < 0 ? -1 : (r == 1 && m.id[0] != '\0');
}
