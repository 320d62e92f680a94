/*
 * api_callbacks — POST /callbacks/register (API.md §4.3): the app's
 * callback registration in state/callbacks/<appId>.json, a new
 * whsec_ secret on creation and on rotateSecret (the previous one stays
 * valid API_ROTATE_OVERLAP seconds), and the callback URL policy
 * (callback/urlcheck.c) that submissions share.
 *
 * Invariants: the registration is rewritten under an flock of the
 * directory with the spool's writer protocol; a new secret is shown once,
 * in the answer, and wiped from memory after; the daemons' sender reads
 * the same file.  api_register() reads, changes and writes the
 * registration under its lock; register_rotate() makes the new secret,
 * register_answer() the answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "api/api_impl.h"
#include "callback/callback.h"
#include "core/jsontext.h"
#include "core/tstime.h"

#define API_REG_MAX	65536	/* bytes of a callbacks/ record */


int
api_url_problem(struct api_ctx *c, struct buf *out, const char *url,
    const char *field)
{
	char why[512];

	switch (callback_url_check(c->rq->cfg, url, why, sizeof(why))) {
	case URLCHECK_OK:
		return 0;
	case URLCHECK_INVALID:
		return api_problem(c, out, 422, "INVALID_CALLBACK_URL", NULL,
		    "%s: %s", field, why);
	case URLCHECK_FORBIDDEN:
		return api_problem(c, out, 422, "CALLBACK_URL_FORBIDDEN", NULL,
		    "%s: %s", field, why);
	case URLCHECK_UNAVAILABLE:
		errno = ENOSYS;
		return api_unavailable(c, out, why);
	default:
		return api_problem(c, out, 422, "CALLBACK_URL_UNRESOLVABLE",
		    NULL, "%s: %s", field, why);
	}
}

/* --- POST /callbacks/register (§4.3) -------------------------------- */

static int
new_whsec(char *out, size_t len)
{
	unsigned char r[32];
	char b64[64];

	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	EVP_EncodeBlock((unsigned char *)b64, r, sizeof(r));
	OPENSSL_cleanse(r, sizeof(r));
	snprintf(out, len, "whsec_%s", b64);
	OPENSSL_cleanse(b64, sizeof(b64));
	return 0;
}

/*
 * A new secret (into secret, len bytes) first among reg's secrets
 * (borrowed: the array in reg) at now_ms (Unix ms): the previous current
 * one stays valid API_ROTATE_OVERLAP seconds more, older ones are
 * dropped.  Returns the new array (borrowed from reg), or NULL with reg
 * unchanged when no random bytes could be had.
 */
static json_t *
register_rotate(json_t *reg, json_t *secrets, char *secret, size_t len,
    int64_t now_ms)
{
	char b[TSTIME_BUF];
	json_t *e = json_object(), *kept = json_array();
	size_t i;
	json_t *x;

	if (new_whsec(secret, len) != 0) {
		json_decref(e);
		json_decref(kept);
		return NULL;
	}
	json_object_set_new(e, "secret", json_string(secret));
	json_object_set_new(e, "expiresAt", json_null());
	json_array_append_new(kept, e);
	/* The previous current secret stays valid for 24 h; older
	 * ones are dropped. */
	json_array_foreach(secrets, i, x) {
		if (!json_is_null(json_object_get(x, "expiresAt")))
			continue;
		json_object_set_new(x, "expiresAt",
		    json_string(api_fmt_time(b, now_ms +
		    API_ROTATE_OVERLAP * 1000LL)));
		json_array_append(kept, x);
		break;
	}
	json_object_set_new(reg, "secrets", kept);
	return kept;
}

/*
 * The §4.3 answer for the registration reg (borrowed) of url (borrowed),
 * a new object: secret (borrowed) is the new secret or "" when none was
 * made, secrets the registration's secrets (borrowed, newest first),
 * rotate and created what the request did.
 */
static json_t *
register_answer(struct api_ctx *c, json_t *reg, const char *url,
    const char *secret, json_t *secrets, int rotate, int created)
{
	json_t *resp = json_object();

	json_object_set_new(resp, "appId", json_string(c->app_id));
	json_object_set_new(resp, "url", json_string(url));
	json_object_set_new(resp, "status", json_string("ACTIVE"));
	if (secret[0] != '\0')
		json_object_set_new(resp, "secret", json_string(secret));
	{
		const char *cur = json_string_value(json_object_get(
		    json_array_get(secrets, 0), "secret"));
		size_t cl = cur != NULL ? strlen(cur) : 0;

		json_object_set_new(resp, "secretHint", json_string(cl >= 4 ?
		    cur + cl - 4 : ""));
	}
	if (rotate && !created && json_array_size(secrets) > 1)
		json_object_set(resp, "previousSecretExpiresAt",
		    json_object_get(json_array_get(secrets, 1), "expiresAt"));
	json_object_set(resp, "createdAt", json_object_get(reg, "createdAt"));
	json_object_set(resp, "updatedAt", json_object_get(reg, "updatedAt"));
	return resp;
}

int
api_register(struct api_ctx *c, struct buf *out)
{
	json_t *o = api_parse_body(c, out), *v, *reg = NULL, *secrets, *resp;
	const char *k, *url;
	int rotate = 0, dfd, created, rc;
	char file[APPS_ID_MAX + 8], secret[80] = "", b[TSTIME_BUF];
	char *data, *s;
	size_t len;
	int64_t now_ms = c->rq->now * 1000;

	if (o == NULL)
		return 400;
	json_object_foreach(o, k, v)
		if (strcmp(k, "url") != 0 && strcmp(k, "rotateSecret") != 0) {
			static const char *const known[] = { "url",
			    "rotateSecret" };

			rc = api_unknown_member(c, out, k, known, 2);
			json_decref(o);
			return rc;
		}
	v = json_object_get(o, "rotateSecret");
	if (v != NULL && !json_is_boolean(v)) {
		json_decref(o);
		return api_validation(c, out, "rotateSecret", "must be a "
		    "boolean");
	}
	rotate = json_is_true(v);
	url = json_string_value(json_object_get(o, "url"));
	if (url == NULL) {
		json_decref(o);
		return api_validation(c, out, "url", "required string");
	}
	if ((rc = api_url_problem(c, out, url, "url")) != 0) {
		json_decref(o);
		return rc;
	}
	if ((dfd = api_state_subdir(c, "callbacks")) < 0 || flock(dfd,
	    LOCK_EX) != 0) {
		json_decref(o);
		if (dfd >= 0)
			close(dfd);
		return api_unavailable(c, out, "state/callbacks");
	}
	snprintf(file, sizeof(file), "%s.json", c->app_id);
	data = spool_read_file(dfd, file, API_REG_MAX, &len);
	if (data != NULL)
		reg = jsontext_loadb(data, len, 0, NULL);
	free(data);
	created = reg == NULL || !json_is_array(json_object_get(reg,
	    "secrets"));
	if (created) {
		json_decref(reg);
		reg = json_object();
		json_object_set_new(reg, "appId", json_string(c->app_id));
		json_object_set_new(reg, "createdAt",
		    json_string(api_fmt_time(b, now_ms)));
		json_object_set_new(reg, "secrets", json_array());
	}
	json_object_set_new(reg, "url", json_string(url));
	json_object_set_new(reg, "status", json_string("ACTIVE"));
	json_object_set_new(reg, "updatedAt", json_string(api_fmt_time(b,
	    now_ms)));
	secrets = json_object_get(reg, "secrets");
	if ((created || rotate) && (secrets = register_rotate(reg, secrets,
	    secret, sizeof(secret), now_ms)) == NULL) {
		json_decref(reg);
		json_decref(o);
		close(dfd);
		return api_unavailable(c, out, "RAND_bytes");
	}
	s = json_dumps(reg, JSON_COMPACT);
	if (s == NULL || spool_publish(&c->sp, dfd, file, s, strlen(s), -1,
	    0) != 0) {
		if (s != NULL)
			OPENSSL_cleanse(s, strlen(s));
		free(s);
		json_decref(reg);
		json_decref(o);
		close(dfd);
		return api_unavailable(c, out, "state/callbacks publish");
	}
	OPENSSL_cleanse(s, strlen(s));
	free(s);
	close(dfd);
	resp = register_answer(c, reg, url, secret, secrets, rotate,
	    created);
	json_decref(reg);
	json_decref(o);
	OPENSSL_cleanse(secret, sizeof(secret));
	return api_respond_json(c, out, created ? 201 : 200, resp);
}
