/*
 * batchdir — the batch directories of the spool; see batchdir.h.
 */
#include "spool/batchdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"

#define BATCHES_DIR	"batches"
#define BATCH_FILE	"batch.json"
#define MEMBERS_DIR	"members"
#define BATCHDIR_MODE	02770	/* submitters of the group write here */

/* openat(dfd, name) as a directory, made first when make.  -1 errno. */
static int
sub_dir(int dfd, const char *name, int make)
{
	int made = 0, fd;

	if (make) {
		if (mkdirat(dfd, name, BATCHDIR_MODE) == 0)
			made = 1;
		else if (errno != EEXIST)
			return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	/* mkdir(2) honours the umask: the group must still write. */
	if (fd >= 0 && made)
		(void)fchmod(fd, BATCHDIR_MODE);
	return fd;
}

/* The directory of batch bid (state/batches/<bid>/), made when make. */
static int
batch_dir(const struct spool *sp, const char *bid, int make)
{
	int top, fd, e;

	if (!batch_id_ok(bid)) {
		errno = EINVAL;
		return -1;
	}
	if ((top = sub_dir(sp->dir[SPOOL_STATE], BATCHES_DIR, make)) < 0)
		return -1;
	fd = sub_dir(top, bid, make);
	e = errno;
	close(top);
	errno = e;
	return fd;
}

/* Read dfd's batch.json into *b.  0, or -1 errno (EINVAL with why). */
static int
read_at(int dfd, const char *bid, struct batch *b, char *why, size_t whylen)
{
	struct task_error err;
	size_t len = 0;
	char *data;
	int e;

	batch_init(b);
	data = spool_read_file(dfd, BATCH_FILE, BATCH_FILE_MAX + 1, &len);
	if (data == NULL) {
		e = errno;
		snprintf(why, whylen, "state/%s/%s/%s: %s", BATCHES_DIR, bid,
		    BATCH_FILE, e == EFBIG ? "larger than a batch file" :
		    strerror(e));
		errno = e == EFBIG || e == ELOOP ? EINVAL : e;
		return -1;
	}
	memset(&err, 0, sizeof(err));
	if (batch_decode(data, len, b, &err) != 0 ||
	    strcmp(b->id, bid) != 0) {
		if (b->id[0] != '\0') {
			snprintf(err.field, sizeof(err.field), "batchId");
			snprintf(err.rule, sizeof(err.rule), "is not the "
			    "directory's name");
		}
		snprintf(why, whylen, "state/%s/%s/%s is damaged: %s: %s",
		    BATCHES_DIR, bid, BATCH_FILE, err.field, err.rule);
		free(data);
		batch_init(b);
		errno = EINVAL;
		return -1;
	}
	free(data);
	return 0;
}

/* Write *b as dfd's batch.json (writer protocol; excl: O_EXCL). */
static int
write_at(const struct spool *sp, int dfd, const struct batch *b, int excl)
{
	struct buf out;
	int rc, e;

	buf_init(&out, 0);
	rc = batch_encode(b, &out);
	if (rc == 0)
		rc = spool_publish(sp, dfd, BATCH_FILE, out.data, out.len, -1,
		    excl ? SPOOL_PUBLISH_EXCL : 0);
	e = errno;
	buf_fini(&out);
	errno = e;
	return rc;
}

int
batchdir_read(const struct spool *sp, const char *bid, struct batch *b,
    char *why, size_t whylen)
{
	int dfd, rc, e;

	batch_init(b);
	if ((dfd = batch_dir(sp, bid, 0)) < 0) {
		e = errno;
		snprintf(why, whylen, "no batch %s", bid);
		errno = e;
		return -1;
	}
	rc = read_at(dfd, bid, b, why, whylen);
	e = errno;
	close(dfd);
	errno = e;
	return rc;
}

enum batchdir_rc
batchdir_join(const struct spool *sp, const char *bid, const char *id,
    const char *app, int64_t now_ms, char *why, size_t whylen)
{
	struct batch b;
	int dfd, mfd, fd, e;
	enum batchdir_rc rc = BATCHDIR_ERR;

	if ((dfd = batch_dir(sp, bid, 1)) < 0) {
		e = errno;
		snprintf(why, whylen, "state/%s/%s/: %s", BATCHES_DIR, bid,
		    strerror(e));
		errno = e;
		return BATCHDIR_ERR;
	}
	if ((mfd = sub_dir(dfd, MEMBERS_DIR, 1)) < 0) {
		e = errno;
		snprintf(why, whylen, "state/%s/%s/%s/: %s", BATCHES_DIR, bid,
		    MEMBERS_DIR, strerror(e));
		close(dfd);
		errno = e;
		return BATCHDIR_ERR;
	}
	/* The entry first: a batch closed after this point lists it. */
	fd = openat(mfd, id, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0660);
	if (fd < 0 || (close(fd), spool_sync_dir(sp, mfd)) != 0) {
		e = errno;
		snprintf(why, whylen, "state/%s/%s/%s/%s: %s", BATCHES_DIR,
		    bid, MEMBERS_DIR, id, strerror(e));
		goto out;
	}
	if (read_at(dfd, bid, &b, why, whylen) != 0) {
		if (errno != ENOENT)
			goto undo;
		/* The first member makes the batch (open). */
		batch_init(&b);
		snprintf(b.id, sizeof(b.id), "%s", bid);
		b.created_ms = now_ms;
		if (app != NULL)
			snprintf(b.app_id, sizeof(b.app_id), "%s", app);
		if (write_at(sp, dfd, &b, 1) != 0 && errno != EEXIST) {
			e = errno;
			snprintf(why, whylen, "state/%s/%s/%s: %s",
			    BATCHES_DIR, bid, BATCH_FILE, strerror(e));
			errno = e;
			goto undo;
		}
		if (read_at(dfd, bid, &b, why, whylen) != 0)
			goto undo;
	}
	if (app != NULL && strcmp(b.app_id, app) != 0) {
		snprintf(why, whylen, "batch %s is not AppId %s's", bid, app);
		rc = BATCHDIR_FOREIGN;
		goto undo;
	}
	if (b.closed_ms >= 0) {
		snprintf(why, whylen, "batch %s is closed", bid);
		rc = BATCHDIR_CLOSED;
		goto undo;
	}
	rc = BATCHDIR_OK;
	goto out;
undo:
	e = errno;
	(void)unlinkat(mfd, id, 0);
	errno = e;
out:
	e = errno;
	close(mfd);
	close(dfd);
	errno = e;
	return rc;
}

void
batchdir_leave(const struct spool *sp, const char *bid, const char *id)
{
	int dfd, mfd, e = errno;

	if ((dfd = batch_dir(sp, bid, 0)) < 0) {
		errno = e;
		return;
	}
	if ((mfd = sub_dir(dfd, MEMBERS_DIR, 0)) >= 0) {
		if (unlinkat(mfd, id, 0) == 0)
			(void)spool_sync_dir(sp, mfd);
		close(mfd);
	}
	close(dfd);
	errno = e;	/* the caller reports its own failure */
}

enum batchdir_rc
batchdir_put(const struct spool *sp, struct batch *b, int close_it,
    int must_exist, char *why, size_t whylen)
{
	struct batch cur;
	int dfd, e, have;
	enum batchdir_rc rc = BATCHDIR_ERR;

	if ((dfd = batch_dir(sp, b->id, !must_exist)) < 0) {
		e = errno;
		if (e == ENOENT)
			snprintf(why, whylen, "no batch %s", b->id);
		else
			snprintf(why, whylen, "state/%s/%s/: %s", BATCHES_DIR,
			    b->id, strerror(e));
		errno = e;
		return BATCHDIR_ERR;
	}
	if (flock(dfd, LOCK_EX) != 0) {
		e = errno;
		snprintf(why, whylen, "state/%s/%s/: flock: %s", BATCHES_DIR,
		    b->id, strerror(e));
		goto out;
	}
	have = read_at(dfd, b->id, &cur, why, whylen) == 0;
	if (!have && errno != ENOENT)
		goto out;
	if (!have && must_exist) {
		snprintf(why, whylen, "no batch %s", b->id);
		errno = ENOENT;
		goto out;
	}
	if (!have) {
		batch_init(&cur);
		memcpy(cur.id, b->id, sizeof(cur.id));
		cur.created_ms = b->created_ms;
		memcpy(cur.app_id, b->app_id, sizeof(cur.app_id));
	}
	if (b->app_id[0] != '\0' && strcmp(b->app_id, cur.app_id) != 0) {
		snprintf(why, whylen, "batch %s is not AppId %s's", b->id,
		    b->app_id);
		rc = BATCHDIR_FOREIGN;
		goto out;
	}
	if (cur.closed_ms >= 0 && ((b->on_complete[0] != '\0' &&
	    strcmp(b->on_complete, cur.on_complete) != 0) ||
	    (b->callback_url[0] != '\0' &&
	    strcmp(b->callback_url, cur.callback_url) != 0))) {
		snprintf(why, whylen, "batch %s is closed: its onComplete and "
		    "callbackUrl can no longer change", b->id);
		*b = cur;
		rc = BATCHDIR_CLOSED;
		goto out;
	}
	if (b->on_complete[0] != '\0')
		memcpy(cur.on_complete, b->on_complete,
		    sizeof(cur.on_complete));
	if (b->callback_url[0] != '\0')
		memcpy(cur.callback_url, b->callback_url,
		    sizeof(cur.callback_url));
	if (close_it && cur.closed_ms < 0)
		cur.closed_ms = b->closed_ms;
	if (write_at(sp, dfd, &cur, 0) != 0) {
		e = errno;
		snprintf(why, whylen, "state/%s/%s/%s: %s", BATCHES_DIR,
		    b->id, BATCH_FILE, strerror(e));
		errno = e;
		goto out;
	}
	*b = cur;
	rc = BATCHDIR_OK;
out:
	e = errno;
	close(dfd);	/* and the lock with it */
	errno = e;
	return rc;
}

int
batchdir_complete(const struct spool *sp, const char *bid, int64_t done_ms,
    const char *cid)
{
	struct batch b;
	char why[256];
	int dfd, rc = -1, e;

	if ((dfd = batch_dir(sp, bid, 0)) < 0)
		return -1;
	if (flock(dfd, LOCK_EX) == 0 &&
	    read_at(dfd, bid, &b, why, sizeof(why)) == 0) {
		if (b.completed_ms >= 0)
			rc = 0;
		else {
			b.completed_ms = done_ms;
			snprintf(b.complete_id, sizeof(b.complete_id), "%s",
			    cid);
			rc = write_at(sp, dfd, &b, 0) == 0 ? 1 : -1;
		}
	}
	e = errno;
	close(dfd);
	errno = e;
	return rc;
}

/* The state of member id: a spool state, CORRUPT, or "" when nowhere. */
static const char *
member_state(const struct spool *sp, const char *id)
{
	char file[SPOOL_NAME_MAX + 128];	/* id: at most TASK_ID_MAX */
	enum spool_dir where;
	struct stat st;

	/* Twice: a task moved between two of the directories that
	 * spool_locate looks in, one after the other, can be missed once. */
	for (int i = 0; i < 2; i++) {
		if (spool_locate(sp, id, &where, NULL) == 0)
			return spool_state_name(where);
		snprintf(file, sizeof(file), "%s.json", id);
		if (fstatat(sp->dir[SPOOL_CORRUPT], file, &st,
		    AT_SYMLINK_NOFOLLOW) == 0)
			return "CORRUPT";
	}
	return "";
}

/*
 * Open members/ of batch bid for reading: *dp its directory stream, and
 * returns its descriptor (> 0; the caller closes both), 0 when the batch
 * has no member yet, or -1 with errno (ENOENT: no such batch).
 */
static int
open_members(const struct spool *sp, const char *bid, DIR **dp)
{
	int dfd, mfd, e;

	if ((dfd = batch_dir(sp, bid, 0)) < 0)
		return -1;
	mfd = sub_dir(dfd, MEMBERS_DIR, 0);
	e = errno;
	close(dfd);
	if (mfd < 0) {
		errno = e;
		return e == ENOENT ? 0 : -1;	/* opened, no member yet */
	}
	if ((*dp = spool_opendir(mfd)) == NULL) {
		e = errno;
		close(mfd);
		errno = e;
		return -1;
	}
	return mfd;
}

int
batchdir_summary(const struct spool *sp, const char *bid, int64_t now_ms,
    struct batch_summary *s)
{
	struct dirent *de;
	DIR *dp;
	int mfd, e, rc = 0;

	batch_summary_init(s);
	if ((mfd = open_members(sp, bid, &dp)) <= 0)
		return mfd;
	while (rc == 0 && (de = readdir(dp)) != NULL) {
		const char *state;
		struct stat st;

		if (!spool_id_ok(de->d_name))
			continue;	/* ".", "..", strays */
		state = member_state(sp, de->d_name);
		if (state[0] == '\0') {
			int64_t age = 0;

			if (fstatat(mfd, de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) == 0)
				age = now_ms - ((int64_t)st.st_mtim.tv_sec *
				    1000 + st.st_mtim.tv_nsec / 1000000);
			else if (errno == ENOENT)
				continue;	/* taken back meanwhile */
			state = age >= BATCHDIR_GRACE_MS ? "MISSING" :
			    "SUBMITTING";
		}
		rc = batch_summary_add(s, de->d_name, state);
	}
	e = errno;
	batch_summary_sort(s);
	closedir(dp);
	close(mfd);
	errno = e;
	return rc;
}

long
batchdir_each_member(const struct spool *sp, const char *bid,
    void (*fn)(const char *id, void *arg), void *arg)
{
	struct dirent *de;
	DIR *dp;
	int mfd;
	long n = 0;

	if ((mfd = open_members(sp, bid, &dp)) <= 0)
		return mfd;
	close(mfd);
	while ((de = readdir(dp)) != NULL)
		if (spool_id_ok(de->d_name)) {
			fn(de->d_name, arg);
			n++;
		}
	closedir(dp);
	return n;
}

int
batchdir_each(const struct spool *sp, int (*fn)(const char *, void *),
    void *arg)
{
	struct dirent *de;
	DIR *dp;
	int top, e;

	if ((top = sub_dir(sp->dir[SPOOL_STATE], BATCHES_DIR, 0)) < 0)
		return errno == ENOENT ? 0 : -1;
	dp = spool_opendir(top);
	e = errno;
	close(top);
	if (dp == NULL) {
		errno = e;
		return -1;
	}
	while ((de = readdir(dp)) != NULL)
		if (batch_id_ok(de->d_name) && fn(de->d_name, arg) != 0)
			break;
	closedir(dp);
	return 0;
}
