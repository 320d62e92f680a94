/*
 * spool — directory handles, writer protocol, moves; see spool.h.
 */
#include "spool/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


#include "core/buf.h"
#include "spool/readfd.h"
#include "core/task.h"
#include "core/textfile.h"

static const struct {
	const char *name;
	mode_t mode;
} dirs[SPOOL_NDIRS] = {
	[SPOOL_TMP] = { "tmp", 02770 },
	[SPOOL_INCOMING] = { "incoming", 02770 },
	[SPOOL_DELAYED] = { "delayed", 02770 },
	[SPOOL_QUEUE] = { "queue", 02750 },
	[SPOOL_ACTIVE] = { "active", 02750 },
	[SPOOL_DONE] = { "done", 02750 },
	[SPOOL_FAILED] = { "failed", 02750 },
	[SPOOL_CANCELLED] = { "cancelled", 02750 },
	[SPOOL_CORRUPT] = { "corrupt", 02750 },
	[SPOOL_RESULTS] = { "results", 02750 },
	[SPOOL_LOGS] = { "logs", 02750 },
	[SPOOL_JOBS] = { "jobs", 02770 },
	[SPOOL_OUTBOX] = { "outbox", 02750 },
	[SPOOL_STATE] = { "state", 02770 },
	[SPOOL_METRICS] = { "metrics", 02755 },
	[SPOOL_HOOKS] = { "hooks", 02755 },
	[SPOOL_HOLD] = { "hold", 02770 },	/* spool/hold.h */
	[SPOOL_BLOCKED] = { "blocked", 02770 },
};

static int open_dir_at(int at, const char *name);

/*
 * Make the group-writable directory root/name (hold/, blocked/ or
 * state/hold, 02770) when it is missing, and give it group (when >= 0) and its mode;
 * an existing one is left alone when group is -1.  Returns 0 or -1 with
 * errno.
 */
static int
hold_dir_create(int root, const char *name, long group)
{
	if (mkdirat(root, name, 02770) != 0 && (errno != EEXIST || group < 0))
		return errno == EEXIST ? 0 : -1;
	if (group >= 0 && fchownat(root, name, (uid_t)-1, (gid_t)group,
	    0) != 0)
		return -1;
	return fchmodat(root, name, 02770, 0);
}

const char *
spool_dir_name(enum spool_dir d)
{
	return (size_t)d < SPOOL_NDIRS ? dirs[d].name : "?";
}

int
spool_id_ok(const char *id)
{
	return task_name_ok(id, TASK_ID_MAX);
}

int
spool_code_ok(const char *code)
{
	return task_name_ok(code, TASK_CODE_MAX);
}

static int
mkdir_p(const char *path, mode_t mode)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* How deep spool_create's regroup walks (the spool's deepest files,
 * outbox/callbacks/pending/<id>.json or logs/<id>/<n>.out, are at 4). */
#define REGROUP_DEPTH	16

/*
 * Give every entry under the directory dfd (path p, for messages) group
 * gid, as `chgrp -R` would, and every directory the setgid bit, so that
 * files made later inherit the group; symbolic links are neither
 * followed nor changed.  Returns 0, or -1 with errno and why.
 */
static int
regroup_tree(int dfd, const char *p, gid_t gid, int depth, char *why,
    size_t whylen)
{
	DIR *dp;
	struct dirent *de;
	int dup_fd, rc = 0;

	if (depth > REGROUP_DEPTH)
		return 0;
	if ((dup_fd = dup(dfd)) < 0 || (dp = fdopendir(dup_fd)) == NULL) {
		int e = errno;

		snprintf(why, whylen, "%s: %s", p, strerror(e));
		if (dup_fd >= 0)
			close(dup_fd);
		errno = e;
		return -1;
	}
	while (rc == 0 && (de = readdir(dp)) != NULL) {
		struct stat st;
		char sub[4096];
		int fd;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", p, de->d_name);
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				continue;	/* claimed meanwhile */
			snprintf(why, whylen, "%s: %s", sub, strerror(errno));
			rc = -1;
			break;
		}
		if (S_ISLNK(st.st_mode))
			continue;
		if (st.st_gid != gid && fchownat(dfd, de->d_name, (uid_t)-1,
		    gid, AT_SYMLINK_NOFOLLOW) != 0 && errno != ENOENT) {
			snprintf(why, whylen, "%s: chgrp: %s", sub,
			    strerror(errno));
			rc = -1;
			break;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		if (!(st.st_mode & S_ISGID) && fchmodat(dfd, de->d_name,
		    (st.st_mode & 07777) | S_ISGID, 0) != 0) {
			snprintf(why, whylen, "%s: chmod g+s: %s", sub,
			    strerror(errno));
			rc = -1;
			break;
		}
		if ((fd = open_dir_at(dfd, de->d_name)) < 0)
			continue;	/* gone, or replaced by a link */
		rc = regroup_tree(fd, sub, gid, depth + 1, why, whylen);
		close(fd);
	}
	if (rc != 0) {
		int e = errno;	/* of the failed call, for the caller */

		closedir(dp);
		errno = e;
		return rc;
	}
	closedir(dp);
	return 0;
}

int
spool_create(const char *path, long group, char *why, size_t whylen)
{
	int root;

	if (mkdir_p(path, SPOOL_ROOT_MODE) != 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* The group must be able to enter the spool to reach tmp/ etc.,
	 * and the hook user to reach workdirs/ (o+x; mkdir honours the umask). */
	if ((group >= 0 && fchown(root, (uid_t)-1, (gid_t)group) != 0) ||
	    fchmod(root, SPOOL_ROOT_MODE) != 0) {
		snprintf(why, whylen, "%s: chown/chmod: %s", path,
		    strerror(errno));
		close(root);
		return -1;
	}
	for (int d = 0; d < SPOOL_NDIRS; d++) {
		if (mkdirat(root, dirs[d].name, dirs[d].mode) != 0) {
			/* An existing one is kept as it is, unless a group
			 * is given: then it gets that group and its mode. */
			if (errno == EEXIST && group < 0)
				continue;
			if (errno != EEXIST) {
				snprintf(why, whylen, "%s/%s: %s", path,
				    dirs[d].name, strerror(errno));
				close(root);
				return -1;
			}
		}
		/* mkdir honours the umask; set the documented mode. */
		if ((group >= 0 && fchownat(root, dirs[d].name, (uid_t)-1,
		    (gid_t)group, 0) != 0) ||
		    fchmodat(root, dirs[d].name, dirs[d].mode, 0) != 0) {
			snprintf(why, whylen, "%s/%s: chown/chmod: %s", path,
			    dirs[d].name, strerror(errno));
			close(root);
			return -1;
		}
	}
	if (mkdirat(root, "workdirs", SPOOL_WORK_MODE) == 0 &&
	    ((group >= 0 && fchownat(root, "workdirs", (uid_t)-1, (gid_t)group,
	    0) != 0) || fchmodat(root, "workdirs", SPOOL_WORK_MODE, 0) != 0)) {
		snprintf(why, whylen, "%s/work: chown/chmod: %s", path,
		    strerror(errno));
		close(root);
		return -1;
	}
	if (hold_dir_create(root, "state/hold", group) != 0) {
		snprintf(why, whylen, "%s/state/hold: chown/chmod: %s", path,
		    strerror(errno));
		close(root);
		return -1;
	}
	if ((mkdirat(root, "state/cancel", 02770) == 0 || (errno == EEXIST &&
	    group >= 0)) && ((group >= 0 && fchownat(root, "state/cancel",
	    (uid_t)-1, (gid_t)group, 0) != 0) ||
	    fchmodat(root, "state/cancel", 02770, 0) != 0)) {
		snprintf(why, whylen, "%s/state/cancel: chown/chmod: %s", path,
		    strerror(errno));
		close(root);
		return -1;
	}
	/* What the daemons and writers made since (active/<node>/,
	 * state/claims/, results, logs, taskspool.conf ...): the group's
	 * too, or its members could not read or move them. */
	if (group >= 0 && regroup_tree(root, path, (gid_t)group, 0, why,
	    whylen) != 0) {
		int e = errno;

		close(root);
		errno = e;
		return -1;
	}
	if (fsync(root) != 0) {
		snprintf(why, whylen, "%s: fsync: %s", path, strerror(errno));
		close(root);
		return -1;
	}
	close(root);
	return 0;
}

static int
open_dir_at(int at, const char *name)
{
	return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

int
spool_node_dir(const struct spool *s, enum spool_dir d, const char *node)
{
	int fd;

	if (!spool_code_ok(node)) {
		errno = EINVAL;
		return -1;
	}
	fd = open_dir_at(s->dir[d], node);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	if (mkdirat(s->dir[d], node, 0750) != 0 && errno != EEXIST)
		return -1;
	(void)spool_sync_dir(s, s->dir[d]);
	return open_dir_at(s->dir[d], node);
}

void
spool_close(struct spool *s)
{
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (s->dir[d] > 0)
			close(s->dir[d]);
	if (s->root > 0)
		close(s->root);
	if (s->self > 0)
		close(s->self);
	if (s->cancel > 0)
		close(s->cancel);
	if (s->holdmark > 0)
		close(s->holdmark);
	if (s->claims > 0)
		close(s->claims);
	if (s->work > 0)
		close(s->work);
	memset(s, 0, sizeof(*s));
	s->self = s->cancel = s->holdmark = s->claims = s->work = -1;
}

/*
 * spool_open's failure after s is half open: why = "<path>/<what>:
 * <strerror(errno)>", s closed, errno kept.  Returns -1.
 */
static int
open_failed(struct spool *s, const char *path, const char *what, char *why,
    size_t whylen)
{
	int e = errno;

	snprintf(why, whylen, "%s/%s: %s", path, what, strerror(e));
	spool_close(s);
	errno = e;
	return -1;
}

int
spool_open(struct spool *s, const char *path, const char *node,
    int do_fsync, char *why, size_t whylen)
{
	memset(s, 0, sizeof(*s));
	s->self = s->cancel = s->holdmark = s->claims = s->work = -1;
	s->do_fsync = do_fsync;
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->root < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (int d = 0; d < SPOOL_NDIRS; d++) {
		s->dir[d] = open_dir_at(s->root, dirs[d].name);
		/* hold/ and blocked/ came later: a daemon (node != NULL)
		 * makes them in a spool created before they existed; a
		 * client goes on without them (-1: no task is held or
		 * blocked there yet). */
		if (s->dir[d] < 0 && errno == ENOENT && (d == SPOOL_HOLD ||
		    d == SPOOL_BLOCKED)) {
			if (node != NULL && hold_dir_create(s->root,
			    dirs[d].name, -1) == 0)
				s->dir[d] = open_dir_at(s->root, dirs[d].name);
			if (node == NULL)
				continue;
		}
		if (s->dir[d] < 0) {
			int e = errno;

			/* EACCES: `taskspool init` would not help. */
			if (e == EACCES || e == EPERM)
				snprintf(why, whylen, "%s/%s/: %s", path,
				    dirs[d].name, strerror(e));
			else
				snprintf(why, whylen, "%s is not a taskspool "
				    "spool (%s/: %s); create one with: "
				    "taskspool init %s", path, dirs[d].name,
				    strerror(e), path);
			spool_close(s);
			errno = e;
			return -1;
		}
	}
	s->cancel = open_dir_at(s->dir[SPOOL_STATE], "cancel");
	if (node != NULL)
		(void)hold_dir_create(s->root, "state/hold", -1);
	s->holdmark = open_dir_at(s->dir[SPOOL_STATE], "hold");
	if (node != NULL) {
		snprintf(s->node, sizeof(s->node), "%s", node);
		s->self = spool_node_dir(s, SPOOL_ACTIVE, node);
		if (s->self < 0) {
			char what[80];

			snprintf(what, sizeof(what), "active/%s", node);
			return open_failed(s, path, what, why, whylen);
		}
		/* Claim markers (claimmark.h); made here for spools created
		 * before they existed. */
		if ((mkdirat(s->dir[SPOOL_STATE], "claims", 02750) == 0 ||
		    errno == EEXIST))
			s->claims = open_dir_at(s->dir[SPOOL_STATE], "claims");
		if (s->claims < 0)
			return open_failed(s, path, "state/claims", why,
			    whylen);
		/* The hooks' work directories (node_slots.c); made here for
		 * spools created before workdirs/ existed. */
		if (mkdirat(s->root, "workdirs", SPOOL_WORK_MODE) == 0)
			(void)!fchmodat(s->root, "workdirs", SPOOL_WORK_MODE, 0);
		s->work = open_dir_at(s->root, "workdirs");
		if (s->work < 0)
			return open_failed(s, path, "workdirs", why, whylen);
	}
	return 0;
}

int
spool_sync_dir(const struct spool *s, int dirfd)
{
	if (!s->do_fsync)
		return 0;
	return fsync(dirfd);
}

int
spool_stage(const struct spool *s, const void *data, size_t len,
    int64_t mtime_ms, char *tmpname, size_t tmplen)
{
	static _Atomic unsigned counter;	/* the group commit's thread
						 * stages files too */
	const char *p = data;
	size_t off = 0;
	int fd, e;

	for (int tries = 0;; tries++) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		snprintf(tmpname, tmplen, "%ld.%ld.P%d.%u", (long)
		    now.tv_sec, now.tv_nsec, (int)getpid(), counter++);
		fd = openat(s->dir[SPOOL_TMP], tmpname, O_WRONLY | O_CREAT |
		    O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (fd >= 0)
			break;
		if (errno != EEXIST || tries > 100)
			return -1;
	}
	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		off += (size_t)n;
	}
	if (mtime_ms >= 0) {
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime_ms / 1000);
		ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime_ms % 1000) *
		    1000000L;
		if (futimens(fd, ts) != 0)
			goto fail;
	}
	return fd;
fail:
	e = errno;
	close(fd);
	(void)unlinkat(s->dir[SPOOL_TMP], tmpname, 0);
	errno = e;
	return -1;
}

int
spool_publish(const struct spool *s, int destfd, const char *name,
    const void *data, size_t len, int64_t mtime_ms, int flags)
{
	char tmpname[SPOOL_TMPNAME_MAX];
	int fd, e;

	fd = spool_stage(s, data, len, mtime_ms, tmpname, sizeof(tmpname));
	if (fd < 0)
		return -1;
	if (s->do_fsync && fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (flags & SPOOL_PUBLISH_EXCL) {
		if (spool_move_excl(s->dir[SPOOL_TMP], tmpname, destfd,
		    name) != 0)
			goto fail;
	} else if (renameat(s->dir[SPOOL_TMP], tmpname, destfd, name) != 0)
		goto fail;
	if (!(flags & SPOOL_PUBLISH_NOSYNCDIR) && spool_sync_dir(s, destfd))
		return -1;
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	(void)unlinkat(s->dir[SPOOL_TMP], tmpname, 0);
	errno = e;
	return -1;
}

int
spool_move_excl(int fromfd, const char *from, int tofd, const char *to)
{
	struct stat st;

	if (renameat2(fromfd, from, tofd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	if (linkat(fromfd, from, tofd, to, 0) == 0) {
		(void)unlinkat(fromfd, from, 0);
		return 0;
	}
	if (errno == EEXIST || errno == ENOENT)
		return -1;
	if (fstatat(tofd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(fromfd, from, tofd, to);
}

int
spool_open_safe(int dirfd, const char *name, size_t max, struct stat *st,
    char *why, size_t whylen)
{
	int fd, e;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			snprintf(why, whylen, "file: is a symbolic link (not "
			    "allowed)");
		else if (e == EACCES || e == EPERM)
			snprintf(why, whylen, "file: unreadable (%s)",
			    strerror(e));
		else if (e != ENOENT && fstatat(dirfd, name, st,
		    AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st->st_mode)) {
			/* e.g. a socket: open(2) says ENXIO */
			snprintf(why, whylen, "file: not a regular file (%s)",
			    S_ISSOCK(st->st_mode) ? "socket" :
			    S_ISCHR(st->st_mode) ? "character device" :
			    S_ISBLK(st->st_mode) ? "block device" : "other");
			e = EINVAL;
		} else
			snprintf(why, whylen, "file: cannot open: %s",
			    strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, st) != 0) {
		e = errno;
		snprintf(why, whylen, "file: fstat: %s", strerror(e));
		goto fail;
	}
	if (!S_ISREG(st->st_mode)) {
		e = EINVAL;
		snprintf(why, whylen, "file: not a regular file (%s)",
		    S_ISDIR(st->st_mode) ? "directory" :
		    S_ISFIFO(st->st_mode) ? "FIFO" :
		    S_ISSOCK(st->st_mode) ? "socket" :
		    S_ISCHR(st->st_mode) ? "character device" :
		    S_ISBLK(st->st_mode) ? "block device" : "other");
		goto fail;
	}
	if (st->st_nlink != 1) {
		e = EINVAL;
		snprintf(why, whylen, "file: has %lu hard links (must have "
		    "exactly 1)", (unsigned long)st->st_nlink);
		goto fail;
	}
	if ((st->st_mode & 0444) == 0) {
		/* Root reads anything; a mode without read bits still
		 * means the writer did not mean it to be read. */
		e = EACCES;
		snprintf(why, whylen, "file: unreadable (mode %04o has no "
		    "read permission)", (unsigned)(st->st_mode & 07777));
		goto fail;
	}
	if ((size_t)st->st_size > max) {
		e = EFBIG;
		snprintf(why, whylen, "file: larger than %zu bytes (%lld)",
		    max, (long long)st->st_size);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	errno = e;
	return -1;
}

int
spool_quarantine(const struct spool *s, int srcfd, const char *name,
    const char *reason)
{
	char dest[SPOOL_NAME_MAX + 512], rname[SPOOL_NAME_MAX + 520];
	char safe[SPOOL_NAME_MAX + 1];
	size_t i;
	int moved = 0;

	/* Hostile names (newlines, very long) are shortened and mapped. */
	for (i = 0; name[i] != '\0' && i < SPOOL_NAME_MAX; i++)
		safe[i] = (name[i] > 0x20 && name[i] < 0x7f &&
		    name[i] != '/') ? name[i] : '_';
	safe[i] = '\0';
	if (safe[0] == '.' || safe[0] == '\0')
		safe[0] = '_';
	/* corrupt/X.reason belongs to corrupt/X: a file itself named
	 * *.reason gets a "_" so it can never be taken for (or overwrite)
	 * another file's reason. */
	if (i >= 7 && strcmp(safe + i - 7, ".reason") == 0 &&
	    i < SPOOL_NAME_MAX) {
		safe[i] = '_';
		safe[i + 1] = '\0';
	}
	for (int n = 0; n < 1000 && !moved; n++) {
		struct stat st;

		if (n == 0)
			snprintf(dest, sizeof(dest), "%s", safe);
		else if (i == SPOOL_NAME_MAX)
			/* cut: keep it recognisable and distinct */
			snprintf(dest, sizeof(dest), "%.140s.%d", safe, n);
		else
			snprintf(dest, sizeof(dest), "%s.%d", safe, n);
		snprintf(rname, sizeof(rname), "%s.reason", dest);
		if (fstatat(s->dir[SPOOL_CORRUPT], rname, &st,
		    AT_SYMLINK_NOFOLLOW) == 0)
			continue;	/* a reason without its file: keep it */
		if (spool_move_excl(srcfd, name, s->dir[SPOOL_CORRUPT],
		    dest) == 0)
			moved = 1;
		else if (errno != EEXIST)
			return -1;
	}
	if (!moved) {
		/* 1000 collisions (long names cut to the same prefix): a name
		 * unique by time and process. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(dest, sizeof(dest), "%.100s.%lld.%ld.%d", safe,
		    (long long)ts.tv_sec, ts.tv_nsec, (int)getpid());
		if (spool_move_excl(srcfd, name, s->dir[SPOOL_CORRUPT],
		    dest) != 0)
			return -1;
		snprintf(rname, sizeof(rname), "%s.reason", dest);
	}
	{
		struct buf b;
		int rc;

		buf_init(&b, 0);
		/* One line of text: a control byte of the reason (it may quote
		 * a member name from the file, \u001b or \n decoded) is
		 * written \xNN, as the log writes it, so neither a terminal
		 * showing `taskspool list` nor a reader of lines sees it raw. */
		rc = 0;
		for (const char *p = reason; rc == 0 && *p != '\0'; p++) {
			unsigned char c = (unsigned char)*p;

			rc = c < 0x20 || c == 0x7f ? buf_printf(&b, "\\x%02x",
			    c) : buf_append(&b, p, 1);
		}
		if (rc == 0)
			rc = buf_puts(&b, "\n");
		if (rc == 0)
			rc = spool_publish(s, s->dir[SPOOL_CORRUPT], rname,
			    b.data, b.len, -1, 0);
		buf_fini(&b);
		if (rc != 0)
			return -1;
	}
	return spool_sync_dir(s, srcfd);
}

DIR *
spool_opendir(int dirfd)
{
	int fd = dup(dirfd), e;
	DIR *dp;

	if (fd < 0)
		return NULL;
	dp = fdopendir(fd);
	if (dp == NULL) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	rewinddir(dp);
	return dp;
}

static int find_in_nodes_except(const struct spool *, enum spool_dir,
    const char *, const char *, char *);

static int
find_in_nodes(const struct spool *s, enum spool_dir d, const char *file,
    char *node)
{
	return find_in_nodes_except(s, d, file, NULL, node);
}

int
spool_in_nodes(const struct spool *s, enum spool_dir d, const char *file,
    char *node)
{
	return find_in_nodes_except(s, d, file, NULL, node);
}

int
spool_id_known(const struct spool *s, const char *id)
{
	char file[SPOOL_NAME_MAX];
	enum spool_dir where;
	struct stat st;

	snprintf(file, sizeof(file), "%s.json", id);
	return spool_locate(s, id, &where, NULL) == 0 ||
	    fstatat(s->dir[SPOOL_RESULTS], file, &st, 0) == 0 ||
	    fstatat(s->dir[SPOOL_CORRUPT], file, &st,
	    AT_SYMLINK_NOFOLLOW) == 0;
}

int
spool_in_active(const struct spool *s, const char *file, const char *except,
    char *node)
{
	return find_in_nodes_except(s, SPOOL_ACTIVE, file, except, node);
}

static int
find_in_nodes_except(const struct spool *s, enum spool_dir d,
    const char *file, const char *except, char *node)
{
	DIR *dp;
	struct dirent *de;
	int found = 0;

	if ((dp = spool_opendir(s->dir[d])) == NULL)
		return 0;
	while (!found && (de = readdir(dp)) != NULL) {
		int nfd;
		struct stat st;

		char rel[66 + SPOOL_NAME_MAX];
		int hit;

		if (de->d_name[0] == '.' || !spool_code_ok(de->d_name) ||
		    (except != NULL && strcmp(de->d_name, except) == 0))
			continue;
		if (de->d_type == DT_DIR) {
			/* A directory by readdir's word: one lookup through
			 * it (a symbolic link is DT_LNK, never followed). */
			snprintf(rel, sizeof(rel), "%.64s/%s", de->d_name, file);
			hit = fstatat(s->dir[d], rel, &st,
			    AT_SYMLINK_NOFOLLOW) == 0;
		} else if (de->d_type == DT_UNKNOWN) {
			nfd = open_dir_at(s->dir[d], de->d_name);
			if (nfd < 0)
				continue;
			hit = fstatat(nfd, file, &st, AT_SYMLINK_NOFOLLOW) ==
			    0;
			close(nfd);
		} else
			continue;
		if (hit) {
			found = 1;
			if (node != NULL)
				snprintf(node, 65, "%.64s", de->d_name);
		}
	}
	closedir(dp);
	return found;
}

int
spool_locate(const struct spool *s, const char *id, enum spool_dir *where,
    char *node)
{
	static const enum spool_dir flat[] = { SPOOL_BLOCKED, SPOOL_INCOMING,
		SPOOL_DELAYED, SPOOL_HOLD, SPOOL_DONE, SPOOL_FAILED,
		SPOOL_CANCELLED };
	char file[SPOOL_NAME_MAX];
	struct stat st;

	if (!spool_id_ok(id)) {
		errno = EINVAL;
		return -1;
	}
	snprintf(file, sizeof(file), "%s.json", id);
	/* Active first: a task moving active → done is seen in one of them
	 * when the terminal directories are looked at last. */
	if (find_in_nodes(s, SPOOL_ACTIVE, file, node)) {
		*where = SPOOL_ACTIVE;
		return 0;
	}
	if (find_in_nodes(s, SPOOL_QUEUE, file, node)) {
		*where = SPOOL_QUEUE;
		return 0;
	}
	for (size_t i = 0; i < sizeof(flat) / sizeof(flat[0]); i++)
		if (fstatat(s->dir[flat[i]], file, &st,
		    AT_SYMLINK_NOFOLLOW) == 0) {
			*where = flat[i];
			return 0;
		}
	/* It may have moved while we looked: one more pass over active. */
	if (find_in_nodes(s, SPOOL_ACTIVE, file, node)) {
		*where = SPOOL_ACTIVE;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

char *
spool_read_file(int dirfd, const char *name, size_t max, size_t *lenp)
{
	struct buf b;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf_init(&b, max);
	if (buf_read_fd(&b, fd) != 0 || buf_append(&b, "", 0) != 0) {
		int e = errno;

		close(fd);
		buf_fini(&b);
		errno = e;
		return NULL;
	}
	close(fd);
	if (lenp != NULL)
		*lenp = b.len;
	return b.data;
}

char *
spool_read_text(int dirfd, const char *name, size_t max, size_t *lenp,
    char *why, size_t whylen)
{
	size_t len;
	char *data = spool_read_file(dirfd, name, max, &len);

	if (data != NULL && textfile_check(name, data, len, why,
	    why != NULL ? whylen : 0) != 0) {
		free(data);
		errno = EILSEQ;
		return NULL;
	}
	if (data != NULL && lenp != NULL)
		*lenp = len;
	return data;
}

const char *
spool_state_name(enum spool_dir d)
{
	switch (d) {
	case SPOOL_INCOMING:
	case SPOOL_DELAYED:
		return "PENDING";
	case SPOOL_BLOCKED:
		return "BLOCKED";
	case SPOOL_QUEUE:
		return "DISPATCHED";
	case SPOOL_ACTIVE:
		return "RUNNING";
	case SPOOL_DONE:
		return "SUCCESS";
	case SPOOL_FAILED:
		return "FAILED";
	case SPOOL_CANCELLED:
		return "CANCELLED";
	case SPOOL_CORRUPT:
		return "CORRUPT";
	case SPOOL_HOLD:
		return "HELD";
	default:
		return NULL;
	}
}

void
spool_new_request_id(char *out, size_t len, int64_t ms)
{
	unsigned char r[6];
	time_t s = (time_t)(ms / 1000);
	struct tm tm;

	/* Not a secret: getrandom(2) (urandom's pool), which spares a
	 * CLI submit OpenSSL's generator start-up (issue 16 measured it
	 * at a quarter of the client's CPU time). */
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		memset(r, 0, sizeof(r));
	gmtime_r(&s, &tm);
	snprintf(out, len, "req_%04d%02d%02dT%02d%02d%02d%03dZ_"
	    "%02x%02x%02x%02x%02x%02x", tm.tm_year + 1900, tm.tm_mon + 1,
	    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000),
	    r[0], r[1], r[2], r[3], r[4], r[5]);
}
