/*
 * api_logs.c — GET /tasks/{requestId}/logs: bounded pages of a hook's
 * output.
 *
 * Owns the endpoint's query (attempt, stream, offset, limit) and the
 * page it answers from logs/<requestId>/<attempt>.out or .err, the files
 * the node daemon writes (node/node_stream.c; README.md "Hooks").  The
 * output is the hook's bytes, hostile: a page that is UTF-8 (with no
 * NUL) is sent as a JSON string, which escapes every control character,
 * so an escape sequence arrives inert; any other page is sent in base64
 * (RFC 4648 section 4), never altered.  A page never ends inside a UTF-8
 * sequence when more bytes follow.  A client follows a running attempt
 * by asking again from nextOffset until "complete" is true, as
 * `taskspool logs -f` does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "api/api_impl.h"
#include "spool/spool.h"

#define LOGS_LIMIT_DEFAULT	65536
#define LOGS_LIMIT_MAX		262144	/* bytes a page holds at most */
#define LOGS_ATTEMPT_MAX	1000000

/* The query, parsed. */
struct logs_query {
	long long	 attempt;	/* 0: the latest */
	int		 err;		/* 1: stderr */
	long long	 offset;
	long long	 limit;
};

/* A decimal in [lo, hi] from s; -1 if s is not one. */
static int
number(const char *s, long long lo, long long hi, long long *v)
{
	char *end;

	if (s[0] < '0' || s[0] > '9' || strlen(s) > 15)
		return -1;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *end != '\0' || errno != 0 || *v < lo || *v > hi ? -1 : 0;
}

/* Read QUERY_STRING into q; 0, or the status of the 422 sent. */
static int
read_query(struct api_ctx *c, struct buf *out, struct logs_query *q)
{
	char v[4][32];
	const struct api_param p[] = {
		{ "attempt", v[0], sizeof v[0] },
		{ "stream", v[1], sizeof v[1] },
		{ "offset", v[2], sizeof v[2] },
		{ "limit", v[3], sizeof v[3] },
	};
	unsigned seen;
	int rc;

	memset(q, 0, sizeof(*q));
	q->limit = LOGS_LIMIT_DEFAULT;
	if ((rc = api_query_read(c, out, p, 4, &seen)) != 0)
		return rc;
	if ((seen & 1u) && number(v[0], 1, LOGS_ATTEMPT_MAX, &q->attempt))
		return api_query_invalid(c, out, "attempt", "must be an "
		    "attempt number 1, 2, ...");
	if (seen & 2u) {
		if (strcmp(v[1], "stdout") != 0 && strcmp(v[1], "stderr") != 0)
			return api_query_invalid(c, out, "stream", "must be "
			    "stdout or stderr");
		q->err = v[1][3] == 'e';
	}
	if ((seen & 4u) && number(v[2], 0, 1LL << 50, &q->offset))
		return api_query_invalid(c, out, "offset", "must be a byte "
		    "offset 0, 1, ... (nextOffset of the previous page)");
	if ((seen & 8u) && number(v[3], 1, LOGS_LIMIT_MAX, &q->limit))
		return api_query_invalid(c, out, "limit", "must be an integer "
		    "1..262144 (bytes)");
	return 0;
}

/*
 * How many of the n bytes of p to send when more follow: n, or less so
 * that the page does not end inside a UTF-8 sequence (RFC 3629 section
 * 3: a lead byte tells the sequence's length).
 */
static size_t
utf8_cut(const unsigned char *p, size_t n)
{
	size_t back;

	for (back = 1; back <= 3 && back <= n; back++) {
		unsigned char b = p[n - back];
		size_t need;

		if ((b & 0xc0) == 0x80)
			continue;		/* a continuation byte */
		need = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 :
		    (b >> 3) == 30 ? 4 : 1;
		return need > back ? n - back : n;
	}
	return n;
}

/*
 * Read up to max bytes at offset from logs/<id>/<name> into b; *size the
 * file's size.  Returns 0; 1 when there is no such file (no output, or
 * none yet); -1 with errno when it cannot be read.
 */
static int
read_page(struct api_ctx *c, const char *id, const char *name,
    long long offset, size_t max, struct buf *b, long long *size)
{
	int dfd, fd, e;
	struct stat st;
	ssize_t n;

	*size = 0;
	dfd = openat(c->sp.dir[SPOOL_LOGS], id, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 1 : -1;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	e = errno;
	(void)close(dfd);
	if (fd < 0) {
		errno = e;
		return e == ENOENT ? 1 : -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		(void)close(fd);
		errno = EINVAL;
		return -1;
	}
	*size = (long long)st.st_size;
	if (offset < *size) {
		char *p = malloc(max);

		if (p == NULL) {
			(void)close(fd);
			errno = ENOMEM;
			return -1;
		}
		n = pread(fd, p, max, (off_t)offset);
		if (n > 0 && buf_append(b, p, (size_t)n) != 0)
			n = -1;
		free(p);
		if (n < 0) {
			e = errno;
			(void)close(fd);
			errno = e;
			return -1;
		}
		/* The file may have grown since fstat. */
		if ((long long)n + offset > *size)
			*size = (long long)n + offset;
	}
	(void)close(fd);
	return 0;
}

/* The page as "data" and "encoding" members of o. */
static int
put_data(json_t *o, const struct buf *b)
{
	json_t *s = NULL;
	char *enc;
	int n;

	if (b->len == 0 || memchr(b->data, 0, b->len) == NULL)
		s = json_stringn(b->len > 0 ? b->data : "", b->len);
	if (s != NULL) {
		json_object_set_new(o, "encoding", json_string("utf-8"));
		return json_object_set_new(o, "data", s);
	}
	if ((enc = malloc(4 * ((b->len + 2) / 3) + 1)) == NULL)
		return -1;
	n = EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)
	    b->data, (int)b->len);
	json_object_set_new(o, "encoding", json_string("base64"));
	json_object_set_new(o, "data", json_stringn(enc, (size_t)n));
	free(enc);
	return 0;
}

int
api_logs(struct api_ctx *c, struct buf *out, const char *id)
{
	struct logs_query q;
	struct api_marker m;
	struct buf b;
	json_t *v, *o;
	char name[48], why[96];
	const char *status;
	long long attempts, size, next;
	int rc, st, complete;

	/* The query first: its answer says nothing of the task. */
	if ((rc = read_query(c, out, &q)) != 0)
		return rc;
	if (api_own_marker(c, out, id, &m, &st) != 0)
		return st;
	if ((v = api_task_view(c, &m, 0)) == NULL) {
		if (errno == ENOENT)
			return api_task_not_found(c, out, id);
		return api_unavailable(c, out, "task state");
	}
	attempts = (long long)json_integer_value(json_object_get(v,
	    "attempt"));
	status = json_string_value(json_object_get(v, "status"));
	if (q.attempt == 0)
		q.attempt = attempts > 0 ? attempts : 1;
	if (q.attempt > (attempts > 0 ? attempts : 1)) {
		json_decref(v);
		(void)snprintf(why, sizeof why, "task %s has had %lld "
		    "attempt%s", id, attempts, attempts == 1 ? "" : "s");
		return api_query_invalid(c, out, "attempt", why);
	}
	/* An attempt has ended when a later one exists, or when it is the
	 * last one and the task is not running: its files never grow. */
	complete = q.attempt < attempts || (q.attempt == attempts &&
	    status != NULL && strcmp(status, "RUNNING") != 0) ||
	    (attempts == 0 && status != NULL && api_terminal(status));
	json_decref(v);
	(void)snprintf(name, sizeof name, "%lld.%s", q.attempt, q.err ?
	    "err" : "out");
	buf_init(&b, 0);
	rc = read_page(c, id, name, q.offset, (size_t)q.limit, &b, &size);
	if (rc < 0) {
		buf_fini(&b);
		return api_unavailable(c, out, "logs/");
	}
	/* Never a page of 0 bytes while bytes follow (a follower would ask
	 * the same forever): a limit below one character sends it cut, in
	 * base64. */
	if ((q.offset + (long long)b.len < size || !complete) && b.len > 0) {
		size_t cut = utf8_cut((const unsigned char *)b.data, b.len);

		if (cut > 0)
			b.len = cut;
	}
	next = q.offset + (long long)b.len;
	if ((o = json_object()) == NULL || put_data(o, &b) != 0) {
		json_decref(o);
		buf_fini(&b);
		return api_unavailable(c, out, "log page");
	}
	buf_fini(&b);
	json_object_set_new(o, "requestId", json_string(id));
	json_object_set_new(o, "attempt", json_integer(q.attempt));
	json_object_set_new(o, "stream", json_string(q.err ? "stderr" :
	    "stdout"));
	json_object_set_new(o, "offset", json_integer(q.offset));
	json_object_set_new(o, "length", json_integer(next - q.offset));
	json_object_set_new(o, "nextOffset", json_integer(next));
	json_object_set_new(o, "size", json_integer(size));
	json_object_set_new(o, "complete", json_boolean(complete &&
	    next >= size));
	return api_respond_json(c, out, 200, o);
}
