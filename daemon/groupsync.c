/*
 * groupsync — batches of fsync + rename on a worker thread; see
 * groupsync.h.  State under mu: IDLE → (start) BUSY → (worker) DONE →
 * (poll) IDLE.  The eventfd is written once per finished batch and
 * drained by groupsync_poll; it is only a wake-up, the state is the truth.
 */
#include "groupsync.h"

#include <errno.h>
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
	struct groupsync_item **items;	/* the batch (borrowed items) */
	size_t nitems, cap;
	int dirs[GROUPSYNC_DIRS_MAX], dir_err[GROUPSYNC_DIRS_MAX];
	size_t ndirs;
};

/* Run the batch in g (no lock needed: the caller owns it meanwhile). */
static void
run_batch(struct groupsync *g)
{
	for (size_t i = 0; i < g->nitems; i++) {
		struct groupsync_item *it = g->items[i];
		char tmp[SPOOL_TMPNAME_MAX];
		int fd = spool_stage(g->sp, it->data, it->len, -1, tmp,
		    sizeof(tmp));

		it->err = 0;
		if (fd < 0) {
			it->err = errno;
			continue;
		}
		if (g->do_fsync && fsync(fd) != 0)
			it->err = errno;
		close(fd);
		if (it->err == 0 && renameat(g->sp->dir[SPOOL_TMP], tmp,
		    it->todir, it->to) != 0)
			it->err = errno;
		if (it->err != 0)
			(void)unlinkat(g->sp->dir[SPOOL_TMP], tmp, 0);
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
