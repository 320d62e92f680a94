/*
 * wakeup — Redis pub/sub wake-ups across hosts (see wakeup.h).  Redis
 * documentation: "Redis Pub/Sub" (PUBLISH, SUBSCRIBE, the message reply
 * ["message", channel, payload]); hiredis README for reading replies
 * from a socket that poll(2) reports readable (redisBufferRead,
 * redisGetReplyFromReader).
 */
#include "coord/wakeup.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord_impl.h"
#include "coord/coord_open.h"
#include "coord/coord_redis.h"
#include "core/tstime.h"

#define RECONNECT_MS	500

struct wakeup {
	struct coord *c;
	redisContext *sub;		/* subscribed connection, or NULL */
	int64_t retry_mono;
	char channel[96];
};

static void
channel_of(const struct coord *c, char *out, size_t len)
{
	snprintf(out, len, "%swake", c->prefix);
}

int
wakeup_publish(struct coord *c, const char *path, char *why, size_t whylen)
{
	redisReply *r;
	char ch[96];
	const char *argv[3] = { "PUBLISH", ch, path };

	channel_of(c, ch, sizeof(ch));
	if ((r = coord_redis_command(c, -1, 3, argv, why, whylen)) == NULL)
		return -1;
	freeReplyObject(r);
	return 0;
}

void
wakeup_notify(const struct config *cfg, const struct spool *sp,
    enum spool_dir d, const char *name)
{
	char why[256], path[SPOOL_NAME_MAX + 32];
	struct coord *c;

	if (cfg->redis[0] == '\0' && cfg->sentinel[0] == '\0')
		return;
	if ((c = coord_open(cfg, "", sp, why, sizeof(why))) == NULL)
		return;
	snprintf(path, sizeof(path), "%s%s%s", spool_dir_name(d), name !=
	    NULL ? "/" : "", name != NULL ? name : "");
	(void)wakeup_publish(c, path, why, sizeof(why));
	coord_close(c);
}

struct wakeup *
wakeup_new(struct coord *c)
{
	struct wakeup *w;

	if (!coord_leases_expire(c) || (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->c = c;
	channel_of(c, w->channel, sizeof(w->channel));
	return w;
}

static void
disconnect(struct wakeup *w)
{
	if (w->sub != NULL)
		redisFree(w->sub);
	w->sub = NULL;
}

int
wakeup_connect(struct wakeup *w, int64_t now_mono, char *why, size_t whylen)
{
	const char *argv[2];
	redisReply *r;

	if (w->sub != NULL)
		return w->sub->fd;
	if (now_mono < w->retry_mono) {
		snprintf(why, whylen, "redis: wake-up channel: reconnecting");
		return -1;
	}
	w->retry_mono = now_mono + RECONNECT_MS;
	if ((w->sub = coord_redis_connect_new(w->c, why, whylen)) == NULL)
		return -1;
	argv[0] = "SUBSCRIBE";
	argv[1] = w->channel;
	r = coord_redis_command_on(w->sub, 2, argv, why, whylen);
	if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
		snprintf(why, whylen, "redis: SUBSCRIBE %s refused",
		    w->channel);
		if (r != NULL)
			freeReplyObject(r);
		disconnect(w);
		return -1;
	}
	freeReplyObject(r);
	return w->sub->fd;
}

int
wakeup_fd(const struct wakeup *w)
{
	return w != NULL && w->sub != NULL ? w->sub->fd : -1;
}

int
wakeup_read(struct wakeup *w, void (*fn)(void *, const char *), void *arg)
{
	void *rep;
	int n = 0;

	if (w->sub == NULL)
		return -1;
	if (redisBufferRead(w->sub) != REDIS_OK) {
		disconnect(w);
		return -1;
	}
	for (;;) {
		redisReply *r;

		if (redisGetReplyFromReader(w->sub, &rep) != REDIS_OK) {
			disconnect(w);
			return -1;
		}
		if ((r = rep) == NULL)
			break;
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
		    r->element[0]->type == REDIS_REPLY_STRING &&
		    strcmp(r->element[0]->str, "message") == 0 &&
		    coord_reply_text(r->element[2]) != NULL) {
			fn(arg, r->element[2]->str);
			n++;
		}
		freeReplyObject(r);
	}
	return n;
}

void
wakeup_free(struct wakeup *w)
{
	if (w == NULL)
		return;
	disconnect(w);
	free(w);
}
