/*
 * coord_file — the embedded backend of coord (see coord.h): leases are
 * the flock(2) the caller holds on the task file, the leader lock is a
 * flock on state/leader.lock, heartbeats are the files
 * state/heartbeat.<node> ("key=value" lines).  Nothing expires: a lock
 * ends when its holder's descriptor is closed, so by the kernel when the
 * holder dies.
 */
#include "coord/coord_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/tstime.h"

#define HB_PREFIX	"heartbeat."
#define HB_MAX		(4096 + HOOKSET_MAX)	/* a few lines and the hook
						 * list */

static int
file_open(struct coord *c, char *why, size_t whylen)
{
	c->leaderfd = -1;
	return 0;
}

static void
file_close(struct coord *c)
{
	char name[128];

	if (c->leaderfd >= 0)
		close(c->leaderfd);
	c->leaderfd = -1;
	if (c->node[0] != '\0') {
		snprintf(name, sizeof(name), HB_PREFIX "%.64s", c->node);
		(void)unlinkat(c->sp->dir[SPOOL_STATE], name, 0);
	}
}

/* The flock taken by the caller is the lease. */
static enum coord_status
file_acquire(struct coord *c, struct coord_lease *l, char *why, size_t whylen)
{
	l->token[0] = '\0';
	return COORD_OK;
}

/* An orphan's flock is all its lease: taken as a new one. */
static enum coord_status
file_take(struct coord *c, struct coord_lease *l, int own, int64_t now_mono,
    char *why, size_t whylen)
{
	return file_acquire(c, l, why, whylen);
}

static enum coord_status
file_renew(struct coord *c, struct coord_lease *l)
{
	return COORD_OK;
}

static void
file_release(struct coord *c, struct coord_lease *l)
{
}

static int
file_leader(struct coord *c, int64_t now_mono, unsigned long long *epoch)
{
	*epoch = 0;
	if (c->leaderfd >= 0)
		return 1;		/* a held flock stays held */
	c->leaderfd = openat(c->sp->dir[SPOOL_STATE], "leader.lock", O_RDWR |
	    O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (c->leaderfd < 0)
		return -1;
	if (flock(c->leaderfd, LOCK_EX | LOCK_NB) != 0) {
		close(c->leaderfd);
		c->leaderfd = -1;
		return 0;
	}
	return 1;
}

static int
file_heartbeat(struct coord *c, const struct coord_node *info, char *why,
    size_t whylen)
{
	char name[128];
	struct buf b;
	int rc = 0;

	snprintf(name, sizeof(name), HB_PREFIX "%.64s", c->node);
	buf_init(&b, 0);
	if (buf_printf(&b, "pid=%ld\nslots=%ld\nrunning=%ld\nclaimed=%llu\n"
	    "finished=%llu\nleader=%d\nat_ms=%lld\nstarted_ms=%lld\n"
	    "load1=%.2f\ndraining=%d\nhooks=%.*s\ntags=%.*s\n", info->pid,
	    info->slots, info->running, info->claimed, info->finished,
	    info->leader, (long long)info->at_ms, (long long)info->started_ms,
	    info->load1, info->draining,
	    (int)strnlen(info->hooks, sizeof(info->hooks) - 1),
	    info->hooks, (int)strnlen(info->tags, sizeof(info->tags) - 1),
	    info->tags) == 0) {
		struct spool quiet = *c->sp;

		quiet.do_fsync = 0;	/* liveness, not data */
		if (spool_publish(&quiet, c->sp->dir[SPOOL_STATE], name,
		    b.data, b.len, -1, 0) != 0) {
			snprintf(why, whylen, "state/%s: %s", name,
			    strerror(errno));
			rc = -1;
		}
	} else {
		snprintf(why, whylen, "heartbeat: %s", strerror(errno));
		rc = -1;
	}
	buf_fini(&b);
	return rc;
}

static int
file_nodes(struct coord *c, struct coord_node **out, size_t *n, char *why,
    size_t whylen)
{
	DIR *dp;
	struct dirent *de;
	struct coord_node *v = NULL;
	size_t len = 0, cap = 0;

	if ((dp = spool_opendir(c->sp->dir[SPOOL_STATE])) == NULL) {
		snprintf(why, whylen, "state/: %s", strerror(errno));
		return -1;
	}
	while ((de = readdir(dp)) != NULL) {
		const char *id = de->d_name + strlen(HB_PREFIX);
		char *text;
		size_t tl;

		if (strncmp(de->d_name, HB_PREFIX, strlen(HB_PREFIX)) != 0 ||
		    !spool_code_ok(id))
			continue;
		/* removed meanwhile, or a forbidden byte: no heartbeat */
		text = spool_read_text(c->sp->dir[SPOOL_STATE], de->d_name,
		    HB_MAX, &tl, NULL, 0);
		if (text == NULL)
			continue;
		if (len == cap) {
			struct coord_node *nv;

			cap = cap ? cap * 2 : 8;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL) {
				free(text);
				free(v);
				closedir(dp);
				snprintf(why, whylen, "nodes: %s",
				    strerror(errno));
				return -1;
			}
			v = nv;
		}
		memset(&v[len], 0, sizeof(v[len]));
		snprintf(v[len].id, sizeof(v[len].id), "%s", id);
		coord_heartbeat_parse(text, &v[len]);
		free(text);
		len++;
	}
	closedir(dp);
	coord_nodes_sort(v, len);
	*out = v;
	*n = len;
	return 0;
}

const struct coord_ops coord_file_ops = {
	.kind = "file",
	.expires = 0,
	.open = file_open,
	.close = file_close,
	.acquire = file_acquire,
	.renew = file_renew,
	.take = file_take,
	.release = file_release,
	.leader = file_leader,
	.heartbeat = file_heartbeat,
	.nodes = file_nodes,
};
