/*
 * api_batches — batches over the HTTP API (README.md, "Batches"):
 * `GET /batches/{batchId}` (the summary: counts by state, the members
 * that did not succeed, closed, completed, the onComplete requestId),
 * `POST /batches/{batchId}/close` (optionally setting onComplete and
 * callbackUrl), `POST /batches/{batchId}/hold` and `/release` (every
 * member, as `taskspool hold --batch` and `release --batch`: coord/hold.h),
 * and the member entry a `POST /tasks` with a batchId makes
 * before it stores anything (api_batch_join).  The files and their
 * protocol: spool/batchdir.h.
 *
 * A batch belongs to the AppId whose submission made it (batch.json's
 * appId): another app's batch, or one a user of the spool made, is
 * answered as no batch at all (404 BATCH_NOT_FOUND) by GET and close,
 * and a submission into it is 409 BATCH_ID_TAKEN, so that no app sees
 * or changes the members of another's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/api_impl.h"
#include "callback/callback.h"
#include "coord/hold.h"
#include "coord/index.h"
#include "coord/wakeup.h"
#include "core/batch.h"
#include "core/jsontext.h"
#include "core/tstime.h"
#include "spool/batchdir.h"
#include "spool/clock.h"

int
api_batch_join(struct api_ctx *c, struct buf *out, const char *bid,
    const char *id)
{
	char why[512];

	switch (batchdir_join(&c->sp, bid, id, c->app_id, tstime_now_ms(),
	    why, sizeof(why))) {
	case BATCHDIR_OK:
		return 0;
	case BATCHDIR_FOREIGN:
		return api_problem(c, out, 409, "BATCH_ID_TAKEN",
		    api_one_member("batchId", json_string(bid)), "batchId: "
		    "%s is another app's batch (or a spool user's); choose "
		    "another batchId", bid);
	case BATCHDIR_CLOSED:
		return api_problem(c, out, 409, "BATCH_CLOSED",
		    api_one_member("batchId", json_string(bid)), "batchId: "
		    "%s; a closed batch takes no new member", why);
	default:
		return api_unavailable(c, out, "state/batches member");
	}
}

/* 200 with the summary of batch b (full form). */
static int
answer(struct api_ctx *c, struct buf *out, const struct batch *b)
{
	struct batch_summary s;
	struct buf body;
	int rc;

	if (batchdir_summary(&c->sp, b->id, tstime_now_ms(), &s) != 0)
		return api_unavailable(c, out, "state/batches members");
	buf_init(&body, 0);
	if (batch_summary_encode(b, &s, 1, &body) != 0)
		rc = api_unavailable(c, out, "batch summary");
	else
		rc = api_respond(c, out, 200, "application/json", body.data,
		    body.len);
	buf_fini(&body);
	batch_summary_fini(&s);
	return rc;
}

/* A batch that cannot be read: 404 or 503. */
static int
read_failed(struct api_ctx *c, struct buf *out, const char *bid,
    const char *why)
{
	if (errno == ENOENT)
		return api_problem(c, out, 404, "BATCH_NOT_FOUND",
		    api_one_member("batchId", json_string(bid)), "no batch "
		    "%s", bid);
	return api_unavailable(c, out, why);
}

int
api_batch_get(struct api_ctx *c, struct buf *out, const char *id)
{
	struct batch b;
	char why[512];

	if (batchdir_read(&c->sp, id, &b, why, sizeof(why)) != 0)
		return read_failed(c, out, id, why);
	if (strcmp(b.app_id, c->app_id) != 0) {
		errno = ENOENT;		/* another's: as if there were none */
		return read_failed(c, out, id, why);
	}
	return answer(c, out, &b);
}

/* The close body (may be empty, or {}): onComplete, callbackUrl into b. */
static int
close_decode(struct api_ctx *c, struct buf *out, struct batch *b)
{
	static const char *const known[] = { "onComplete", "callbackUrl" };
	json_t *o, *v;
	const char *k;
	int rc = 0;

	if (c->body_len == 0)
		return 0;
	o = jsontext_loadb(c->body, c->body_len, JSON_REJECT_DUPLICATES,
	    NULL);
	if (o == NULL || !json_is_object(o)) {
		json_decref(o);
		return api_problem(c, out, 400, "INVALID_JSON", NULL, "the "
		    "body must be a JSON object (or empty)");
	}
	json_object_foreach(o, k, v) {
		const char *s = json_is_string(v) ? json_string_value(v) :
		    NULL;

		if (strcmp(k, "onComplete") == 0) {
			if (s == NULL || !task_name_ok(s, TASK_CODE_MAX)) {
				rc = api_validation(c, out, k, "must match "
				    "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
				break;
			}
			memcpy(b->on_complete, s, strlen(s) + 1);
		} else if (strcmp(k, "callbackUrl") == 0) {
			if (s == NULL || strlen(s) > TASK_URL_MAX) {
				rc = api_validation(c, out, k, "must be a "
				    "string of at most 2048 bytes");
				break;
			}
			memcpy(b->callback_url, s, strlen(s) + 1);
		} else {
			rc = api_unknown_member(c, out, k, known, 2);
			break;
		}
	}
	json_decref(o);
	return rc;
}

/*
 * The idempotency record of b's onComplete task <batchId>.complete
 * (api_marker.c), owned by the closing AppId, so that it finds the task
 * the leader makes (GET /api/tasks/<batchId>.complete) as its own.  Its
 * fingerprint is the close body's.  Written once: a record already there
 * (a close retried) is kept.  Returns 0, or -1 with errno.
 */
static int
own_completion(struct api_ctx *c, const struct batch *b)
{
	struct api_marker m;
	struct buf rec;
	char file[SPOOL_NAME_MAX];
	int dfd, rc;

	memset(&m, 0, sizeof(m));
	snprintf(m.app_id, sizeof(m.app_id), "%s", c->app_id);
	snprintf(m.request_id, sizeof(m.request_id), "%s%s", b->id,
	    BATCH_COMPLETE_SUFFIX);
	snprintf(m.task_code, sizeof(m.task_code), "%s", b->on_complete);
	memcpy(m.fingerprint, c->body_hex, sizeof(m.fingerprint));
	m.created_ms = b->closed_ms;
	snprintf(file, sizeof(file), "%s.json", m.request_id);
	buf_init(&rec, 0);
	if ((dfd = openat(c->sp.dir[SPOOL_STATE], "requests", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		buf_fini(&rec);
		return -1;
	}
	rc = api_marker_encode(&m, &rec) != 0 ? -1 : spool_publish(&c->sp,
	    dfd, file, rec.data, rec.len, -1, SPOOL_PUBLISH_EXCL);
	if (rc != 0 && errno == EEXIST)
		rc = 0;
	close(dfd);
	buf_fini(&rec);
	return rc;
}

int
api_batch_close(struct api_ctx *c, struct buf *out, const char *id)
{
	struct batch b;
	char why[768], hook[CONFIG_PATH_MAX + 80];
	int rc;

	batch_init(&b);
	memcpy(b.id, id, strlen(id) + 1);
	snprintf(b.app_id, sizeof(b.app_id), "%s", c->app_id);
	if ((rc = close_decode(c, out, &b)) != 0)
		return rc;
	if (b.on_complete[0] != '\0') {
		/* The rules of a submitted taskCode (§4.1 step 3). */
		snprintf(hook, sizeof(hook), "%s/%s", c->rq->cfg->hooks_dir,
		    b.on_complete);
		if (access(hook, X_OK) != 0)
			return api_problem(c, out, 422, "UNKNOWN_TASK_CODE",
			    api_one_member("taskCode",
			    json_string(b.on_complete)), "onComplete: no task "
			    "code %s", b.on_complete);
		if (!apps_code_allowed(&c->app, b.on_complete))
			return api_problem(c, out, 403, "TASK_CODE_FORBIDDEN",
			    NULL, "onComplete: task code %s is not granted "
			    "to AppId %s", b.on_complete, c->app_id);
	}
	if (b.callback_url[0] != '\0') {
		if ((rc = api_url_problem(c, out, b.callback_url,
		    "callbackUrl")) != 0)
			return rc;
		/* The batch's callback is signed with callback_secret. */
		if (!callback_can_sign(&c->sp, c->rq->cfg, NULL))
			return api_problem(c, out, 422,
			    "CALLBACK_SECRET_MISSING", api_one_member("field",
			    json_string("callbackUrl")), "callbackUrl: %s",
			    CALLBACK_NO_SECRET_WHY);
	}
	b.created_ms = b.closed_ms = tstime_now_ms();
	switch (batchdir_put(&c->sp, &b, 1, 1, why, sizeof(why))) {
	case BATCHDIR_OK:
		if (b.on_complete[0] != '\0' && own_completion(c, &b) != 0)
			return api_unavailable(c, out, "state/requests "
			    "publish");
		return answer(c, out, &b);
	case BATCHDIR_CLOSED:
		return api_problem(c, out, 409, "BATCH_CLOSED",
		    api_one_member("batchId", json_string(id)), "%s", why);
	case BATCHDIR_FOREIGN:
		errno = ENOENT;		/* another's: as if there were none */
		return read_failed(c, out, id, why);
	default:
		return read_failed(c, out, id, why);
	}
}

/* The counts of a hold or release over a batch's members. */
struct batch_hold {
	struct api_ctx *c;
	int release;
	long moved;		/* into hold/, or out of it */
	long marked;		/* hold requested (running, another node's
				 * queue), or such a request withdrawn */
	long unchanged;		/* already held, not held, finished, gone */
	long failed;		/* HOLD_ERR: logged */
	char by[HOLDMARK_BY_MAX + 1];
};

/* batchdir_each_member's callback: hold or release member id, as
 * api_hold does for one task. */
static void
hold_member(const char *id, void *arg)
{
	struct batch_hold *h = arg;
	enum spool_dir where = SPOOL_NDIRS;
	enum hold_status hs;
	char why[512];

	hs = h->release ? hold_release(&h->c->sp, id, tstime_now_ms(), &where,
	    why, sizeof(why)) : hold_task(&h->c->sp, id, h->by,
	    tstime_now_ms(), &where, why, sizeof(why));
	switch (hs) {
	case HOLD_MOVED:
		h->moved++;
		(void)index_client(h->c->rq->cfg, &h->c->sp, id, 1, NULL);
		if (h->release)
			wakeup_notify(h->c->rq->cfg, &h->c->sp, where, NULL);
		break;
	case HOLD_MARKED:
		h->marked++;
		break;
	case HOLD_ERR:
		h->failed++;
		fprintf(stderr, "taskspool.cgi: trace %s: %s %s: %s\n",
		    h->c->trace, h->release ? "release" : "hold", id, why);
		break;
	default:
		h->unchanged++;
		break;
	}
}

int
api_batch_hold(struct api_ctx *c, struct buf *out, const char *id,
    int release)
{
	struct batch_hold h;
	struct batch b;
	char why[512];
	json_t *o;
	int st;

	if (batchdir_read(&c->sp, id, &b, why, sizeof(why)) != 0)
		return read_failed(c, out, id, why);
	if (strcmp(b.app_id, c->app_id) != 0) {
		errno = ENOENT;		/* another's: as if there were none */
		return read_failed(c, out, id, why);
	}
	if (api_empty_body(c, out, &st) != 0)
		return st;
	memset(&h, 0, sizeof(h));
	h.c = c;
	h.release = release;
	snprintf(h.by, sizeof(h.by), "api app %s", c->app_id);
	if (batchdir_each_member(&c->sp, id, hold_member, &h) < 0)
		return read_failed(c, out, id, "state/batches members");
	if (h.failed > 0)
		return api_unavailable(c, out, release ? "release" : "hold");
	o = json_pack("{s:s,s:s,s:I,s:I,s:I}", "batchId", id, "action",
	    release ? "release" : "hold", release ? "released" : "held",
	    (json_int_t)h.moved, release ? "requestsWithdrawn" :
	    "holdRequested", (json_int_t)h.marked, "unchanged",
	    (json_int_t)h.unchanged);
	if (o == NULL)
		return api_unavailable(c, out, "answer");
	return api_respond_json(c, out, 200, o);
}
