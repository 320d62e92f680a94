/*
 * node_stream — a hook's stdout and stderr: read from its non-blocking
 * pipes into a tail ring (for the result) and logs/<id>/<attempt>.out
 * and .err, capped at log_cap_bytes.
 *
 * Invariants: never blocks; after a failed log write nothing more is
 * written to that log (no log with a hole), and the loss is named in the
 * attempt's reason (the spool may be full: back-pressure).  Each stream
 * holds its pipe and log descriptors until node_stream_fini.
 */
#include "node/node_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
node_stream_init(struct stream *s, size_t tail)
{
	s->fd = s->logfd = -1;
	s->written = s->dropped = 0;
	s->lost_err = 0;
	s->tail = tail > 0 ? malloc(tail) : NULL;
	s->tail_cap = s->tail != NULL ? tail : 0;
	s->tail_len = s->tail_pos = 0;
}

void
node_stream_fini(struct stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->logfd >= 0)
		close(s->logfd);
	free(s->tail);
	s->fd = s->logfd = -1;
	s->tail = NULL;
}

char *
node_stream_tail(const struct stream *s, size_t cap, size_t *len)
{
	char *p;

	*len = 0;
	if (s->tail == NULL || s->tail_len == 0)
		return NULL;
	p = malloc(s->tail_len);
	if (p == NULL)
		return NULL;
	if (s->tail_len < cap)
		memcpy(p, s->tail, s->tail_len);
	else {
		size_t first = cap - s->tail_pos;

		memcpy(p, s->tail + s->tail_pos, first);
		memcpy(p + first, s->tail, s->tail_pos);
	}
	*len = s->tail_len;
	return p;
}

/* Output of s could not be written to logs/ (error e): the attempt's
 * reason names it (node_stream_lost_reason); the spool may be full. */
static void
stream_lost(struct node *n, struct stream *s, int e)
{
	if (s->lost_err == 0)
		s->lost_err = e != 0 ? e : EIO;
	(void)node_spool_full(n, s->lost_err, "logs/");
}

void
node_stream_lost_reason(const struct slot *sl, char *reason, size_t len)
{
	const struct stream *s[] = { &sl->out, &sl->err };
	static const char *const nm[] = { "stdout", "stderr" };

	for (size_t i = 0; i < 2; i++) {
		size_t l = strlen(reason);

		if (s[i]->lost_err != 0 && l < len)
			snprintf(reason + l, len - l, "; %s lost: logs/ write "
			    "failed: %s", nm[i], strerror(s[i]->lost_err));
	}
}

static void
stream_keep(struct node *n, struct slot *sl, struct stream *s,
    const char *ext, const char *p, size_t len)
{
	size_t cap = s->tail_cap;

	/* The tail ring: the last cap bytes seen. */
	if (s->tail != NULL) {
		const char *q = p;
		size_t m = len;

		if (m > cap) {
			q += m - cap;
			m = cap;
		}
		for (size_t i = 0; i < m; i++) {
			s->tail[s->tail_pos] = q[i];
			s->tail_pos = (s->tail_pos + 1) % cap;
		}
		s->tail_len = s->tail_len + m > cap ? cap : s->tail_len + m;
	}
	/* The log file, capped; created on first output.  After a failed
	 * write nothing more is written (no log with a hole in it). */
	if (s->written >= n->cfg->log_cap_bytes || s->lost_err != 0) {
		s->dropped += (long long)len;
		return;
	}
	if (s->logfd < 0) {
		char id[TASK_ID_MAX + 1], lname[64];
		int dfd;

		node_name_to_id(sl->name, id);
		if (mkdirat(n->sp.dir[SPOOL_LOGS], id, 0750) != 0 &&
		    errno != EEXIST) {
			stream_lost(n, s, errno);
			return;
		}
		dfd = openat(n->sp.dir[SPOOL_LOGS], id, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0) {
			stream_lost(n, s, errno);
			return;
		}
		snprintf(lname, sizeof(lname), "%d.%s", sl->attempt, ext);
		s->logfd = openat(dfd, lname, O_WRONLY | O_CREAT | O_TRUNC |
		    O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (s->logfd < 0)
			stream_lost(n, s, errno);
		close(dfd);
		if (s->logfd < 0)
			return;
	}
	if ((long long)len > n->cfg->log_cap_bytes - s->written) {
		s->dropped += (long long)len - (n->cfg->log_cap_bytes -
		    s->written);
		len = (size_t)(n->cfg->log_cap_bytes - s->written);
	}
	{
		ssize_t w = write(s->logfd, p, len);

		if (w > 0)
			s->written += (long long)w;
		if (w != (ssize_t)len) {
			/* ENOSPC on a short write is the usual cause. */
			stream_lost(n, s, w < 0 ? errno : ENOSPC);
			s->dropped += (long long)len - (w > 0 ? w : 0);
		}
	}
}

void
node_stream_drain(struct node *n, struct slot *sl, struct stream *s,
    const char *ext)
{
	char chunk[16384];

	while (s->fd >= 0) {
		ssize_t r = read(s->fd, chunk, sizeof(chunk));

		if (r > 0) {
			stream_keep(n, sl, s, ext, chunk, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		close(s->fd);	/* also leaves the epoll set */
		s->fd = -1;
	}
}
