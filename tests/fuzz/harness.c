/*
 * harness.c — see harness.h.  The spool and the signing follow
 * tests/unit/check_api.c (make_spool, run) and API.md §3.3.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api.h"
#include "harness.h"
#include "core/sign.h"
#include "spool/spool.h"

void
fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void
fuzz_same_encoding(const char *what, const struct buf *a,
    const struct buf *b)
{
	if (a->len != b->len || memcmp(a->data, b->data, a->len) != 0)
		fuzz_fail("round trip changed the %s:\n%.*s\n%.*s", what,
		    (int)a->len, a->data, (int)b->len, b->data);
}

/*
 * No name lookups while fuzzing.  The API checks a callbackUrl's host
 * with getaddrinfo(3) (urlcheck.c), and the fuzzer makes up host names by
 * the million: each would be a DNS query leaving the machine, and a slow
 * one.  These two definitions take the place of the C library's in every
 * program linked with the harness (a sanitizer's interceptor is a weak
 * alias, so it yields too): a numeric IPv4 address in any form
 * inet_aton(3) takes ("127.1", "0x7f000001", as glibc's getaddrinfo
 * does) or a numeric IPv6 address, with a numeric service or none, is
 * answered with one entry; anything else is EAI_NONAME, as for a name that does not exist.
 * Each entry is one allocation, the address after the struct, as the C
 * library's own freeaddrinfo expects too.
 */
int
getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res)
{
	int family = hints != NULL ? hints->ai_family : AF_UNSPEC;
	struct addrinfo *ai;
	unsigned char addr[16];
	struct in_addr a4;
	unsigned long port = 0;
	char *end;

	*res = NULL;
	if (node == NULL)
		return EAI_NONAME;
	if (service != NULL) {
		port = strtoul(service, &end, 10);
		if (service[0] == '\0' || *end != '\0' || port > 65535)
			return EAI_SERVICE;
	}
	if ((ai = calloc(1, sizeof(*ai) + sizeof(struct sockaddr_in6))) ==
	    NULL)
		return EAI_MEMORY;
	ai->ai_addr = (struct sockaddr *)(ai + 1);
	if (family != AF_INET6 && inet_aton(node, &a4) != 0) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ai->ai_addr;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		sin->sin_addr = a4;
		ai->ai_family = AF_INET;
		ai->ai_addrlen = sizeof(*sin);
	} else if (family != AF_INET && inet_pton(AF_INET6, node, addr) ==
	    1) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ai->ai_addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		memcpy(&sin6->sin6_addr, addr, 16);
		ai->ai_family = AF_INET6;
		ai->ai_addrlen = sizeof(*sin6);
	} else {
		free(ai);
		return EAI_NONAME;
	}
	ai->ai_socktype = hints != NULL && hints->ai_socktype != 0 ?
	    hints->ai_socktype : SOCK_STREAM;
	ai->ai_protocol = hints != NULL ? hints->ai_protocol : 0;
	*res = ai;
	return 0;
}

void
freeaddrinfo(struct addrinfo *ai)
{
	while (ai != NULL) {
		struct addrinfo *next = ai->ai_next;

		free(ai->ai_canonname);
		free(ai);
		ai = next;
	}
}

static char top[256];		/* the mkdtemp directory, "" = none */
static pid_t top_pid;		/* the process that made it */

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

static void
rm_top(void)
{
	/* replay.c's children share the parent's spool: only the maker
	 * removes it. */
	if (top[0] != '\0' && getpid() == top_pid)
		(void)nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0 ||
	    chmod(path, mode) != 0) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

void
fuzz_spool_init(struct config *cfg)
{
	char why[1024], path[CONFIG_PATH_MAX + 64];
	const char *tmp = getenv("TMPDIR");
	const char *codes = FUZZ_CODES, *comma;

	snprintf(top, sizeof(top), "%s/taskspool-fuzz.XXXXXX",
	    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(top) == NULL) {
		fprintf(stderr, "fuzz: mkdtemp %s: %s\n", top,
		    strerror(errno));
		exit(1);
	}
	top_pid = getpid();
	atexit(rm_top);
	snprintf(path, sizeof(path), "%s/spool", top);
	config_defaults(cfg);
	if (spool_create(path, -1, why, sizeof(why)) != 0 ||
	    config_set(cfg, "spool", path, why, sizeof(why)) != 0 ||
	    config_set(cfg, "fsync", "0", why, sizeof(why)) != 0 ||
	    config_finish(cfg, why, sizeof(why)) != 0) {
		fprintf(stderr, "fuzz: spool %s: %s\n", path, why);
		exit(1);
	}
	write_file(cfg->apps_file, FUZZ_APP_ID " enabled " FUZZ_CODES " "
	    FUZZ_APP_SECRET "\n", 0640);
	for (;;) {
		size_t n = (comma = strchr(codes, ',')) != NULL ?
		    (size_t)(comma - codes) : strlen(codes);

		snprintf(path, sizeof(path), "%s/%.*s", cfg->hooks_dir,
		    (int)n, codes);
		write_file(path, "#!/bin/sh\nexit 0\n", 0755);
		if (comma == NULL)
			break;
		codes = comma + 1;
	}
}

/* Remove the files under dir (an open directory descriptor, closed). */
static void
wipe_dir(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (d == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (depth < 8 && (sub = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			wipe_dir(sub, depth + 1);
	}
	closedir(d);
}

void
fuzz_spool_wipe(const struct config *cfg)
{
	for (int i = 0; i < SPOOL_NDIRS; i++) {
		char path[CONFIG_PATH_MAX + 64];
		int dfd;

		if (i == SPOOL_HOOKS)
			continue;
		snprintf(path, sizeof(path), "%s/%s", cfg->spool,
		    spool_dir_name((enum spool_dir)i));
		if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) >= 0)
			wipe_dir(dfd, 0);
	}
}

void
fuzz_spool_put(const struct config *cfg, const char *rel, const void *data,
    size_t len)
{
	char path[CONFIG_PATH_MAX + 256], *slash;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", cfg->spool, rel);
	if ((slash = strrchr(path, '/')) != NULL) {
		*slash = '\0';
		(void)mkdir(path, 0770);
		*slash = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) != 0)
		fuzz_fail("%s: %s", path, strerror(errno));
}

/* --- requests -------------------------------------------------------- */

#define NVARS 16

struct call {
	const char *name[NVARS], *value[NVARS];
	int n;
	const unsigned char *body;
	size_t len, off;
};

static const char *
call_getenv(void *ctx, const char *name)
{
	struct call *c = ctx;

	for (int i = 0; i < c->n; i++)
		if (strcmp(c->name[i], name) == 0)
			return c->value[i];
	return NULL;
}

static ssize_t
call_read(void *ctx, void *b, size_t n)
{
	struct call *c = ctx;

	if (n > c->len - c->off)
		n = c->len - c->off;
	memcpy(b, c->body + c->off, n);
	c->off += n;
	return (ssize_t)n;
}

static void
call_set(struct call *c, const char *name, const char *value)
{
	if (value == NULL || c->n == NVARS)
		return;
	c->name[c->n] = name;
	c->value[c->n++] = value;
}

#define CTYPE_APP	"\r\nContent-Type: application/"

/* Check the response framing api.h promises; the status it says. */
static int
check_response(const struct buf *out, int status)
{
	const char *hb, *cl, *ct;
	int st = 0;
	size_t n, blen;

	if (out->data == NULL || out->len == 0)
		fuzz_fail("status %d with an empty response", status);
	if (sscanf(out->data, "Status: %d ", &st) != 1 || st != status)
		fuzz_fail("returned %d, response says \"%.20s\"", status,
		    out->data);
	if ((hb = strstr(out->data, "\r\n\r\n")) == NULL)
		fuzz_fail("status %d: no CRLF CRLF after the headers", status);
	blen = out->len - (size_t)(hb + 4 - out->data);
	cl = strstr(out->data, "\r\nContent-Length: ");
	if (cl == NULL || cl > hb || sscanf(cl + 18, "%zu", &n) != 1 ||
	    n != blen)
		fuzz_fail("status %d: Content-Length does not say the body's "
		    "%zu bytes", status, blen);
	ct = strstr(out->data, CTYPE_APP);
	if (ct != NULL && ct < hb && (strncmp(ct + strlen(CTYPE_APP), "json",
	    4) == 0 || strncmp(ct + strlen(CTYPE_APP), "problem+json", 12) ==
	    0)) {
		json_error_t e;
		json_t *o = json_loadb(hb + 4, blen, 0, &e);

		if (o == NULL)
			fuzz_fail("status %d: the JSON body does not parse: %s "
			    "(offset %d)", status, e.text, e.position);
		json_decref(o);
	}
	/* A console page (api_html.c): never a script, never a raw
	 * control byte but tab and LF (outside bytes are escaped). */
	ct = strstr(out->data, "\r\nContent-Type: text/html");
	if (ct != NULL && ct < hb) {
		if (memmem(hb + 4, blen, "<script", 7) != NULL)
			fuzz_fail("status %d: a console page with <script",
			    status);
		for (size_t i = 0; i < blen; i++) {
			unsigned char ch = (unsigned char)hb[4 + i];

			if ((ch < 0x20 && ch != '\t' && ch != '\n') ||
			    ch == 0x7f)
				fuzz_fail("status %d: a console page with raw "
				    "byte 0x%02x at %zu", status, ch, i);
		}
	}
	return st;
}

int
fuzz_api_call(const struct config *cfg, const struct fuzz_request *rq,
    struct buf *out)
{
	static unsigned long seq;
	struct call c;
	struct api_request ar;
	struct buf cq, cs;
	char ts[24], nonce[40], clen[24], body_hex[SIGN_HEX_LEN + 1];
	char path[512], sig[SIGN_HEX_LEN + 1] = "";
	const char *cqs = "";
	int status;

	memset(&c, 0, sizeof(c));
	c.body = rq->body;
	c.len = rq->body_len;
	snprintf(ts, sizeof(ts), "%lld", (long long)FUZZ_NOW);
	snprintf(nonce, sizeof(nonce), "fuzz-nonce-%08lu-%d", ++seq,
	    (int)getpid());
	snprintf(clen, sizeof(clen), "%zu", rq->body_len);
	call_set(&c, "GATEWAY_INTERFACE", "CGI/1.1");
	call_set(&c, "SCRIPT_NAME", "/api");
	call_set(&c, "REQUEST_METHOD", rq->method);
	call_set(&c, "PATH_INFO", rq->path);
	call_set(&c, "QUERY_STRING", rq->query);
	call_set(&c, "CONTENT_TYPE", rq->ctype);
	call_set(&c, "CONTENT_LENGTH", clen);
	call_set(&c, "HTTP_IDEMPOTENCY_KEY", rq->idem_key);
	call_set(&c, "HTTP_X_APP_ID", FUZZ_APP_ID);
	call_set(&c, "HTTP_X_TIMESTAMP", ts);
	call_set(&c, "HTTP_X_NONCE", nonce);
	/* The canonical string as api_auth.c's api_authenticate() builds it. */
	buf_init(&cq, 0);
	buf_init(&cs, 0);
	if (sign_canonical_query(rq->query != NULL ? rq->query : "", &cq) ==
	    0 && cq.data != NULL)
		cqs = cq.data;
	snprintf(path, sizeof(path), "/api%s", rq->path != NULL ? rq->path :
	    "");
	if (sign_sha256_hex(rq->body, rq->body_len, body_hex) != 0 ||
	    sign_canonical_string(rq->method != NULL ? rq->method : "", path,
	    cqs, FUZZ_APP_ID, ts, nonce, body_hex, &cs) != 0 ||
	    sign_hmac_hex(FUZZ_APP_SECRET, cs.data, cs.len, sig) != 0)
		fuzz_fail("cannot sign a request");
	buf_fini(&cq);
	buf_fini(&cs);
	call_set(&c, "HTTP_X_SIGNATURE", sig);
	memset(&ar, 0, sizeof(ar));
	ar.getenv = call_getenv;
	ar.body_read = call_read;
	ar.ctx = &c;
	ar.in_fd = -1;
	ar.now = FUZZ_NOW;
	ar.now_ms = FUZZ_NOW * 1000;
	ar.cfg = cfg;
	buf_reset(out);
	status = api_handle(&ar, out);
	return check_response(out, status);
}
