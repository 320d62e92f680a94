/*
 * drain — the drain marker files; see drain.h.
 */
#include "spool/drain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"

#define DRAIN_DIR	"drain"

/* state/drain/ (made when make), or -1 with errno. */
static int
drain_dir(const struct spool *sp, int make)
{
	if (make && mkdirat(sp->dir[SPOOL_STATE], DRAIN_DIR, 02750) != 0 &&
	    errno != EEXIST)
		return -1;
	return openat(sp->dir[SPOOL_STATE], DRAIN_DIR, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int
drain_read(const struct spool *sp, const char *node, struct drainmark *m,
    char *why, size_t whylen)
{
	struct task_error err;
	char name[DRAINMARK_NODE_MAX + 8], *data;
	size_t len = 0;
	int dfd, e;

	memset(m, 0, sizeof(*m));
	memset(&err, 0, sizeof(err));
	if ((dfd = drain_dir(sp, 0)) < 0) {
		if (errno == ENOENT)
			return 0;
		e = errno;
		snprintf(why, whylen, "state/%s/: %s", DRAIN_DIR,
		    strerror(e));
		errno = e;
		return -1;
	}
	snprintf(name, sizeof(name), "%.64s.json", node);
	data = spool_read_file(dfd, name, DRAINMARK_FILE_MAX + 1, &len);
	e = errno;
	close(dfd);
	if (data == NULL) {
		if (e == ENOENT)
			return 0;
		if (e != EFBIG && e != ELOOP) {
			snprintf(why, whylen, "state/%s/%s: %s", DRAIN_DIR,
			    name, strerror(e));
			errno = e;
			return -1;
		}
		/* Too large to be a marker, or a symbolic link (never
		 * followed): damaged, but there. */
		err.field[0] = '\0';
		if (e == ELOOP)
			snprintf(err.rule, sizeof(err.rule), "a symbolic link");
		else
			snprintf(err.rule, sizeof(err.rule), "larger than %d "
			    "bytes", DRAINMARK_FILE_MAX);
	} else if (drainmark_decode(data, len, m, &err) == 0 &&
	    strcmp(m->node, node) != 0)
		snprintf(err.rule, sizeof(err.rule), "names node %s",
		    m->node);
	else if (m->node[0] != '\0') {
		free(data);
		return 1;
	}
	free(data);
	memset(m, 0, sizeof(*m));
	snprintf(m->node, sizeof(m->node), "%s", node);
	{
		char full[512];

		snprintf(full, sizeof(full), "the drain marker state/%s/%s is "
		    "damaged (%s%s%s)", DRAIN_DIR, name, err.field,
		    err.field[0] != '\0' ? ": " : "", err.rule);
		size_t l = strnlen(full, DRAINMARK_REASON_MAX);

		memcpy(m->reason, full, l);
		m->reason[l] = '\0';
	}
	/* The reason quotes the file's bytes: keep it printable. */
	for (char *p = m->reason; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return 1;
}

int
drain_write(const struct spool *sp, const struct drainmark *m)
{
	char name[DRAINMARK_NODE_MAX + 8];
	struct buf b;
	int dfd, rc, e;

	buf_init(&b, 0);
	if (drainmark_encode(m, &b) != 0) {
		e = errno;
		buf_fini(&b);
		errno = e;
		return -1;
	}
	if ((dfd = drain_dir(sp, 1)) < 0) {
		e = errno;
		buf_fini(&b);
		errno = e;
		return -1;
	}
	snprintf(name, sizeof(name), "%s.json", m->node);
	rc = spool_publish(sp, dfd, name, b.data, b.len, -1, 0);
	e = errno;
	close(dfd);
	buf_fini(&b);
	errno = e;
	return rc;
}

int
drain_remove(const struct spool *sp, const char *node)
{
	char name[DRAINMARK_NODE_MAX + 8];
	int dfd, rc, e;

	if ((dfd = drain_dir(sp, 0)) < 0)
		return -1;
	snprintf(name, sizeof(name), "%.64s.json", node);
	rc = unlinkat(dfd, name, 0);
	if (rc == 0)
		rc = spool_sync_dir(sp, dfd);
	e = errno;
	close(dfd);
	errno = e;
	return rc;
}
