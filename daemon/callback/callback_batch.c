/*
 * callback_batch — the one delivery of a completed batch (README.md,
 * "Batches"): the §6.2 envelope with type "batch.completed" and the
 * batch's summary as data, a delivery file of outbox/callbacks/ like a
 * task's (callback_publish: exclusive create, so a leader repeating the
 * completion after a crash makes no second one), sent, signed and retried
 * by the sender as any other.
 */
#include "callback/callback.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/delivery.h"
#include "core/jsontext.h"
#include "core/tstime.h"
#include "core/whsign.h"

#include "callback/callback_impl.h"

/* The envelope {"type","timestamp","data": summary} as new text. */
static char *
batch_envelope(const char *summary, size_t slen, int64_t now_ms)
{
	char t[TSTIME_BUF];
	json_t *data, *env;
	char *text;

	if ((data = jsontext_loadb(summary, slen, 0, NULL)) == NULL) {
		errno = EINVAL;
		return NULL;
	}
	env = json_pack("{s:s, s:s, s:o}", "type", "batch.completed",
	    "timestamp", tstime_format_ms(t, sizeof(t), now_ms), "data", data);
	text = env != NULL ? json_dumps(env, JSON_COMPACT |
	    JSON_PRESERVE_ORDER) : NULL;
	json_decref(env);
	if (text == NULL)
		errno = ENOMEM;
	return text;
}

int
callback_enqueue_batch(const struct spool *s, const char *did,
    const char *url, const char *summary, size_t slen, int64_t now_ms)
{
	struct cbdel c;
	struct buf b;
	int rc;

	memset(&c, 0, sizeof(c));
	if (strlen(did) > TASK_ID_MAX || whsign_id_new(c.webhook_id) != 0) {
		errno = strlen(did) > TASK_ID_MAX ? EINVAL : EIO;
		return -1;
	}
	memcpy(c.request_id, did, strlen(did) + 1);
	c.url = (char *)url;	/* borrowed for the encoding */
	c.created_ms = now_ms;
	c.finished_ms = -1;
	delivery_init(&c.st, now_ms);
	if ((c.body = batch_envelope(summary, slen, now_ms)) == NULL)
		return -1;
	c.body_len = strlen(c.body);
	buf_init(&b, 0);
	rc = cbdel_encode(&c, &b);
	free(c.body);
	if (rc == 0)
		rc = callback_publish(s, did, &b);
	buf_fini(&b);
	return rc;
}
