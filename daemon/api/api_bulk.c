/*
 * api_bulk.c — POST /tasks:bulk: up to API_BULK_MAX submissions in one
 * signed request, each answered as POST /tasks would answer it alone.
 *
 * Owns the envelope {"tasks": [...]} and the answer {"results": [...]}.
 * Each item goes through api_submit() itself, in a context of its own
 * whose body is the item in jansson's compact form (its idempotency
 * fingerprint is the SHA-256 of those bytes), so the rules, the codes
 * and the all-or-nothing of one submission hold per item: an item is
 * stored (record and task file) or not at all, whatever the others do.
 * Items are submitted in order; results[i] answers tasks[i] with the
 * status and body a single POST would have had.  The Idempotency-Key
 * header names one task, so it is refused here: each item carries its
 * requestId.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api/api_impl.h"

/*
 * The status and body of a CGI response api_submit() wrote into r:
 * *status from its "Status: NNN" line, the body parsed (new; NULL when
 * it is not JSON).
 */
static json_t *
response_parts(const struct buf *r, int *status)
{
	const char *end;

	*status = 500;
	if (r->data == NULL || r->len < 12 || strncmp(r->data, "Status: ",
	    8) != 0)
		return NULL;
	*status = atoi(r->data + 8);
	end = memmem(r->data, r->len, "\r\n\r\n", 4);
	if (end == NULL)
		return NULL;
	end += 4;
	return json_loadb(end, r->len - (size_t)(end - r->data), 0, NULL);
}

/* One item through api_submit() in a context of its own; the answer as
 * {"status": N, "body": {...}}, new (NULL: out of memory). */
static json_t *
submit_item(struct api_ctx *c, const json_t *item)
{
	struct api_ctx s;
	struct buf r;
	json_t *body, *o;
	char *text = json_dumps(item, JSON_COMPACT | JSON_ENCODE_ANY);
	int status = 500;

	if (text == NULL)
		return NULL;
	s = *c;				/* the caller, spool and request */
	buf_init(&s.hdr, 0);		/* the item's own headers */
	s.body = text;
	s.body_len = strlen(text);
	buf_init(&r, 0);
	if (sign_sha256_hex(text, s.body_len, s.body_hex) == 0) {
		(void)api_submit(&s, &r);
		body = response_parts(&r, &status);
	} else
		body = NULL;
	OPENSSL_cleanse(&s.app, sizeof(s.app));	/* the copy's secret */
	buf_fini(&s.hdr);
	buf_fini(&r);
	free(text);
	o = json_pack("{s:i,s:o}", "status", status, "body", body != NULL ?
	    body : json_null());
	return o;
}

int
api_submit_bulk(struct api_ctx *c, struct buf *out)
{
	static const char *const known[] = { "tasks" };
	char key[8];
	json_t *b, *tasks, *results, *v, *o;
	const char *k;
	size_t i, n, accepted = 0;

	if (api_header(c, "HTTP_IDEMPOTENCY_KEY", key, sizeof key) != -1)
		return api_validation(c, out, "Idempotency-Key", "not taken "
		    "by a bulk submission: give each task its requestId");
	if ((b = api_parse_body(c, out)) == NULL)
		return 400;
	json_object_foreach(b, k, v) {
		if (strcmp(k, "tasks") != 0) {
			int rc = api_unknown_member(c, out, k, known, 1);

			json_decref(b);
			return rc;
		}
	}
	tasks = json_object_get(b, "tasks");
	if (!json_is_array(tasks) || json_array_size(tasks) == 0 ||
	    json_array_size(tasks) > API_BULK_MAX) {
		json_decref(b);
		return api_validation(c, out, "tasks", "must be an array of 1 "
		    "to 500 task objects");
	}
	n = json_array_size(tasks);
	if ((results = json_array()) == NULL) {
		json_decref(b);
		return api_unavailable(c, out, "answer");
	}
	for (i = 0; i < n; i++) {
		json_t *r = submit_item(c, json_array_get(tasks, i));

		if (r == NULL) {
			json_decref(results);
			json_decref(b);
			return api_unavailable(c, out, "bulk item");
		}
		if (json_integer_value(json_object_get(r, "status")) == 202)
			accepted++;
		json_array_append_new(results, r);
	}
	json_decref(b);
	o = json_pack("{s:I,s:I,s:o}", "accepted", (json_int_t)accepted,
	    "refused", (json_int_t)(n - accepted), "results", results);
	return api_respond_json(c, out, 200, o);
}
