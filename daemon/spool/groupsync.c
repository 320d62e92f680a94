/*
 * groupsync — batches of fsync + rename on a worker thread; see
 * groupsync.h.  State under mu: IDLE → (start) BUSY → (worker) DONE →
 * (poll) IDLE.  The eventfd is written once per finished batch and
 * drained by groupsync_poll; it is only a wake-up, the state is the truth.
 */
#include "spool/groupsync.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

enum gs_state { GS_IDLE, GS_BUSY, GS_DONE };

struct groupsync {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	const struct spool *sp;
	int have_thread, stop, efd;
	enum gs_state state;
	int run;			/* a batch waits for the worker */
	int do_fsync;
	int no_tmpfile;			/* O_TMPFILE or /proc missing */
	struct groupsync_item **items;	/* the batch (borrowed items) */
	size_t nitems, cap;
	int dirs[GROUPSYNC_DIRS_MAX], dir_err[GROUPSYNC_DIRS_MAX];
	size_t ndirs;
};

/* Write all of it to fd.  Returns 0 or -1 with errno. */
static int
write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Publish it through an unnamed O_TMPFILE inode in tmp/: write, fsync,
 * then link it in as todir/to.  A file that never had a name in tmp/
 * does not make its fsync write tmp/ too (ext4 syncs the directory of a
 * new entry with the file), and a crash leaves nothing behind.  Returns
 * 0, -1 with errno (it->err to report), or 1 when this way is not
 * available here (no O_TMPFILE on the file system, no /proc): nothing
 * was published and the caller takes the named way.
 */
static int
publish_unnamed(struct groupsync *g, struct groupsync_item *it)
{
	char proc[64], tmp[SPOOL_TMPNAME_MAX];
	int fd, e;

	fd = openat(g->sp->dir[SPOOL_TMP], ".", O_TMPFILE | O_WRONLY |
	    O_CLOEXEC, 0640);
	if (fd < 0)
		return errno == EOPNOTSUPP || errno == EISDIR ||
		    errno == EINVAL ? 1 : -1;
	if (write_all(fd, it->data, it->len) != 0 || (g->do_fsync &&
	    fsync(fd) != 0))
		goto fail;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, it->todir, it->to, AT_SYMLINK_FOLLOW) ==
	    0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT && access("/proc/self/fd", F_OK) != 0) {
		close(fd);
		return 1;
	}
	if (errno != EEXIST)
		goto fail;
	/* An older file of that name is replaced, as rename(2) does:
	 * name it in tmp/ first, then move it over. */
	snprintf(tmp, sizeof(tmp), "groupsync.%d.%s", (int)getpid(), it->to);
	(void)unlinkat(g->sp->dir[SPOOL_TMP], tmp, 0);
	if (linkat(AT_FDCWD, proc, g->sp->dir[SPOOL_TMP], tmp,
	    AT_SYMLINK_FOLLOW) != 0)
		goto fail;
	if (renameat(g->sp->dir[SPOOL_TMP], tmp, it->todir, it->to) != 0) {
		e = errno;
		(void)unlinkat(g->sp->dir[SPOOL_TMP], tmp, 0);
		errno = e;
		goto fail;
	}
	close(fd);
	return 0;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* The named way: a tmp/ file (spool_stage), fsync, rename. */
static int
publish_named(struct groupsync *g, struct groupsync_item *it)
{
	char tmp[SPOOL_TMPNAME_MAX];
	int fd = spool_stage(g->sp, it->data, it->len, -1, tmp, sizeof(tmp));
	int e = 0;

	if (fd < 0)
		return -1;
	if (g->do_fsync && fsync(fd) != 0)
		e = errno;
	close(fd);
	if (e == 0 && renameat(g->sp->dir[SPOOL_TMP], tmp, it->todir,
	    it->to) != 0)
		e = errno;
	if (e != 0) {
		(void)unlinkat(g->sp->dir[SPOOL_TMP], tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

/* Run the batch in g (no lock needed: the caller owns it meanwhile). */
static void
run_batch(struct groupsync *g)
{
	for (size_t i = 0; i < g->nitems; i++) {
		struct groupsync_item *it = g->items[i];
		int rc = g->no_tmpfile ? 1 : publish_unnamed(g, it);

		if (rc == 1) {
			g->no_tmpfile = 1;	/* not again */
			rc = publish_named(g, it);
		}
		it->err = rc == 0 ? 0 : errno;
	}
	for (size_t i = 0; i < g->ndirs; i++)
		g->dir_err[i] = g->do_fsync && fsync(g->dirs[i]) != 0 ?
		    errno : 0;
}

static void
signal_done(struct groupsync *g)
{
	uint64_t one = 1;

	(void)!write(g->efd, &one, sizeof(one));
}

static void *
worker(void *arg)
{
	struct groupsync *g = arg;

	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->run && !g->stop)
			pthread_cond_wait(&g->cv, &g->mu);
		if (!g->run)
			break;		/* stop, nothing in flight */
		g->run = 0;
		pthread_mutex_unlock(&g->mu);
		run_batch(g);
		pthread_mutex_lock(&g->mu);
		g->state = GS_DONE;
		signal_done(g);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

struct groupsync *
groupsync_new(const struct spool *sp)
{
	struct groupsync *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->sp = sp;
	g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->efd < 0) {
		int e = errno;

		free(g);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->state = GS_IDLE;
	return g;
}

int
groupsync_fd(const struct groupsync *g)
{
	return g->efd;
}

int
groupsync_busy(const struct groupsync *g)
{
	struct groupsync *m = (struct groupsync *)g;
	int busy;

	pthread_mutex_lock(&m->mu);
	busy = m->state != GS_IDLE;
	pthread_mutex_unlock(&m->mu);
	return busy;
}

int
groupsync_start(struct groupsync *g, struct groupsync_item *const *items,
    size_t nitems, const int *dirs, size_t ndirs, int do_fsync)
{
	if (groupsync_busy(g)) {
		errno = EBUSY;
		return -1;
	}
	if (ndirs > GROUPSYNC_DIRS_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (nitems > g->cap) {
		size_t cap = nitems < 64 ? 64 : nitems * 2;
		struct groupsync_item **ni = reallocarray(g->items, cap,
		    sizeof(*ni));

		if (ni == NULL)
			return -1;
		g->items = ni;
		g->cap = cap;
	}
	if (nitems > 0)
		memcpy(g->items, items, nitems * sizeof(*items));
	g->nitems = nitems;
	if (ndirs > 0)
		memcpy(g->dirs, dirs, ndirs * sizeof(*dirs));
	g->ndirs = ndirs;
	g->do_fsync = do_fsync;
	if (do_fsync && !g->have_thread && pthread_create(&g->thread, NULL,
	    worker, g) == 0)
		g->have_thread = 1;
	if (!do_fsync || !g->have_thread) {
		/* Nothing slow to wait for, or no thread: run it here. */
		run_batch(g);
		pthread_mutex_lock(&g->mu);
		g->state = GS_DONE;
		pthread_mutex_unlock(&g->mu);
		signal_done(g);
		return 0;
	}
	pthread_mutex_lock(&g->mu);
	g->state = GS_BUSY;
	g->run = 1;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

int
groupsync_poll(struct groupsync *g, int *dir_err)
{
	uint64_t v;
	int done;

	(void)!read(g->efd, &v, sizeof(v));
	pthread_mutex_lock(&g->mu);
	done = g->state == GS_DONE;
	if (done)
		g->state = GS_IDLE;
	pthread_mutex_unlock(&g->mu);
	if (done && dir_err != NULL && g->ndirs > 0)
		memcpy(dir_err, g->dir_err, g->ndirs * sizeof(*dir_err));
	return done;
}

void
groupsync_free(struct groupsync *g)
{
	if (g == NULL)
		return;
	if (g->have_thread) {
		pthread_mutex_lock(&g->mu);
		g->stop = 1;
		pthread_cond_signal(&g->cv);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->thread, NULL);
	}
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	close(g->efd);
	free(g->items);
	free(g);
}
