/*
 * apps — apps.conf: parse, look up, rewrite; see apps.h.
 */
#include "api/apps.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "core/buf.h"
#include "spool/readfd.h"
#include "core/sign.h"
#include "spool/spool.h"
#include "core/textfile.h"

int
apps_token_ok(const char *s, size_t min, size_t max, const char *extra)
{
	size_t n = strlen(s);

	if (n < min || n > max)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr(extra, c) != NULL) ||
		    c == '\0')
			return 0;
	}
	return 1;
}

int
apps_id_ok(const char *s)
{
	return apps_token_ok(s, 1, APPS_ID_MAX, "_-");
}

static int
codes_ok(const char *s)
{
	char tmp[APPS_CODES_MAX], *save = NULL;

	if (strcmp(s, "*") == 0)
		return 1;
	if (strlen(s) >= sizeof(tmp) || s[0] == '\0' || s[0] == ',' ||
	    s[strlen(s) - 1] == ',' || strstr(s, ",,") != NULL)
		return 0;
	memcpy(tmp, s, strlen(s) + 1);
	for (char *c = strtok_r(tmp, ",", &save); c != NULL;
	    c = strtok_r(NULL, ",", &save))
		if (!spool_code_ok(c))
			return 0;
	return 1;
}

int
apps_role_parse(const char *s)
{
	if (strcmp(s, "read") == 0)
		return APPS_ROLE_READ;
	if (strcmp(s, "operate") == 0)
		return APPS_ROLE_OPERATE;
	return -1;
}

const char *
apps_role_name(int role)
{
	return role == APPS_ROLE_OPERATE ? "operate" : "read";
}

int
apps_rate_parse(const char *s, long *out)
{
	char *end;
	long v;

	if (s[0] < '0' || s[0] > '9' || strlen(s) > 7)
		return -1;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v > APPS_RATE_MAX)
		return -1;
	*out = v;
	return 0;
}

int
apps_add(struct apps *a, const struct app *app)
{
	struct app *nv;

	if (apps_find(a, app->id) != NULL) {
		errno = EEXIST;
		return -1;
	}
	nv = reallocarray(a->v, a->nv + 1, sizeof(*nv));
	if (nv == NULL)
		return -1;
	a->v = nv;
	a->v[a->nv++] = *app;
	return 0;
}

int
apps_parse(const char *data, size_t len, struct apps *a, char *why,
    size_t whylen)
{
	size_t line = 0;
	const char *p = data, *end = data + len;

	a->v = NULL;
	a->nv = 0;
	if (textfile_check(NULL, data, len, why, whylen) != 0) {
		errno = EINVAL;
		return -1;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl != NULL ? nl : end) - p);
		char buf[APPS_CODES_MAX + 512], *f[8], *save = NULL;
		int nf = 0;
		struct app app;

		line++;
		if (n >= sizeof(buf)) {
			snprintf(why, whylen, "line %zu: longer than %zu bytes",
			    line, sizeof(buf) - 1);
			goto bad;
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		p = nl != NULL ? nl + 1 : end;
		for (char *t = strtok_r(buf, " \t\r", &save); t != NULL &&
		    nf < 8; t = strtok_r(NULL, " \t\r", &save))
			f[nf++] = t;
		if (nf == 0 || f[0][0] == '#')
			continue;
		memset(&app, 0, sizeof(app));
		app.rate = APPS_RATE_DEFAULT;
		app.weight = APPS_WEIGHT_DEFAULT;
		app.role = APPS_ROLE_DEFAULT;
		/* The optional rate=N, weight=N and console=ROLE fields,
		 * anywhere after taskCodes. */
		for (int i = 3; i < nf; i++) {
			long w = 0;

			if (strncmp(f[i], "console=", 8) == 0) {
				int r = apps_role_parse(f[i] + 8);

				if (app.role != APPS_ROLE_DEFAULT || r < 0) {
					snprintf(why, whylen, "line %zu: "
					    "console= must be given once, as "
					    "\"read\" or \"operate\"", line);
					goto bad;
				}
				app.role = r;
			} else if (strncmp(f[i], "weight=", 7) == 0) {
				if (app.weight != APPS_WEIGHT_DEFAULT ||
				    apps_rate_parse(f[i] + 7, &w) != 0 ||
				    w < 1 || w > APPS_WEIGHT_MAX) {
					snprintf(why, whylen, "line %zu: "
					    "weight= must be given once, as a "
					    "whole number 1..%d", line,
					    APPS_WEIGHT_MAX);
					goto bad;
				}
				app.weight = (int)w;
			} else if (strncmp(f[i], "rate=", 5) != 0)
				continue;
			else if (app.rate != APPS_RATE_DEFAULT ||
			    apps_rate_parse(f[i] + 5, &app.rate) != 0) {
				snprintf(why, whylen, "line %zu: rate= must be "
				    "given once, as a whole number 0..%d",
				    line, APPS_RATE_MAX);
				goto bad;
			}
			for (int j = i; j + 1 < nf; j++)
				f[j] = f[j + 1];
			nf--;
			i--;
		}
		if (nf < 4 || nf > 5) {
			snprintf(why, whylen, "line %zu: expected \"appId "
			    "enabled|disabled taskCodes secret [secret] "
			    "[rate=N] [weight=N] [console=read|operate]\"",
			    line);
			goto bad;
		}
		if (!apps_id_ok(f[0])) {
			snprintf(why, whylen, "line %zu: appId must match "
			    "[A-Za-z0-9_-]{1,64}", line);
			goto bad;
		}
		memcpy(app.id, f[0], strlen(f[0]) + 1);
		if (strcmp(f[1], "enabled") == 0)
			app.enabled = 1;
		else if (strcmp(f[1], "disabled") != 0) {
			snprintf(why, whylen, "line %zu: state must be "
			    "\"enabled\" or \"disabled\"", line);
			goto bad;
		}
		if (!codes_ok(f[2])) {
			snprintf(why, whylen, "line %zu: taskCodes must be "
			    "\"*\" or task codes separated by commas", line);
			goto bad;
		}
		memcpy(app.codes, f[2], strlen(f[2]) + 1);
		for (int i = 3; i < nf; i++) {
			if (!apps_token_ok(f[i], APPS_SECRET_MIN, APPS_SECRET_MAX,
			    "_-")) {
				snprintf(why, whylen, "line %zu: a secret must "
				    "be %d to %d base64url characters", line,
				    APPS_SECRET_MIN, APPS_SECRET_MAX);
				goto bad;
			}
			memcpy(app.secrets[app.nsecrets++], f[i],
			    strlen(f[i]) + 1);
		}
		OPENSSL_cleanse(buf, sizeof(buf));
		if (apps_add(a, &app) != 0) {
			if (errno == EEXIST)
				snprintf(why, whylen, "line %zu: appId %s "
				    "listed twice", line, app.id);
			else
				snprintf(why, whylen, "out of memory");
			OPENSSL_cleanse(&app, sizeof(app));
			goto bad;
		}
		OPENSSL_cleanse(&app, sizeof(app));
		continue;
bad:
		if (errno != ENOMEM)
			errno = EINVAL;
		apps_free(a);
		return -1;
	}
	return 0;
}

int
apps_load(const char *path, struct apps *a, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct buf b;
	char w[256];
	int rc;

	a->v = NULL;
	a->nv = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	buf_init(&b, APPS_FILE_MAX);
	rc = buf_read_fd(&b, fd);
	close(fd);
	if (rc != 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		buf_fini(&b);
		return -1;
	}
	rc = apps_parse(b.data != NULL ? b.data : "", b.len, a, w, sizeof(w));
	if (rc != 0)
		snprintf(why, whylen, "%s: %s", path, w);
	if (b.data != NULL)
		OPENSSL_cleanse(b.data, b.len);
	buf_fini(&b);
	return rc;
}

void
apps_free(struct apps *a)
{
	if (a == NULL)
		return;
	if (a->v != NULL)
		OPENSSL_cleanse(a->v, a->nv * sizeof(*a->v));
	free(a->v);
	a->v = NULL;
	a->nv = 0;
}

struct app *
apps_find(const struct apps *a, const char *id)
{
	for (size_t i = 0; i < a->nv; i++)
		if (strcmp(a->v[i].id, id) == 0)
			return &a->v[i];
	return NULL;
}

int
apps_code_allowed(const struct app *app, const char *code)
{
	size_t n = strlen(code);

	if (strcmp(app->codes, "*") == 0)
		return 1;
	for (const char *p = app->codes; *p != '\0';) {
		const char *e = strchr(p, ',');
		size_t m = e != NULL ? (size_t)(e - p) : strlen(p);

		if (m == n && memcmp(p, code, n) == 0)
			return 1;
		p += m + (e != NULL);
	}
	return 0;
}

int
apps_write(const struct apps *a, const char *path, char *why, size_t whylen)
{
	struct buf b;
	struct stat old;
	char tmp[4200], dir[4096];
	int fd, dfd, rc = -1, saved;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp) || snprintf(dir, sizeof(dir), "%s", path) >=
	    (int)sizeof(dir)) {
		snprintf(why, whylen, "%s: path too long", path);
		errno = ENAMETOOLONG;
		return -1;
	}
	buf_init(&b, 0);
	buf_puts(&b, "# taskspool apps.conf (README.md, \"Apps\"): appId  "
	    "enabled|disabled  taskCodes  secrets (newest first)  "
	    "[rate=N]  [weight=N]  [console=read|operate]\n");
	for (size_t i = 0; i < a->nv; i++) {
		const struct app *p = &a->v[i];

		buf_printf(&b, "%s %s %s", p->id, p->enabled ? "enabled" :
		    "disabled", p->codes);
		for (int j = 0; j < p->nsecrets; j++)
			buf_printf(&b, " %s", p->secrets[j]);
		if (p->rate != APPS_RATE_DEFAULT)
			buf_printf(&b, " rate=%ld", p->rate);
		if (p->weight != APPS_WEIGHT_DEFAULT)
			buf_printf(&b, " weight=%d", p->weight);
		if (p->role != APPS_ROLE_DEFAULT)
			buf_printf(&b, " console=%s", apps_role_name(p->role));
		buf_puts(&b, "\n");
	}
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0640);
	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	(void)fchmod(fd, 0640);	/* whatever the umask */
	/* The group of the file it replaces (the CGI's, the daemon's), not
	 * the writer's: root running `taskspool apps add` must not make the
	 * file root's group only. */
	if (stat(path, &old) == 0 && old.st_gid != getegid())
		(void)!fchown(fd, (uid_t)-1, old.st_gid);
	if (write(fd, b.data, b.len) != (ssize_t)b.len || fsync(fd) != 0) {
		saved = errno;
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		close(fd);
		(void)unlink(tmp);
		errno = saved;
		goto out;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		saved = errno;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		(void)unlink(tmp);
		errno = saved;
		goto out;
	}
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:
	if (b.data != NULL)
		OPENSSL_cleanse(b.data, b.len);
	buf_fini(&b);
	return rc;
}

int
apps_new_secret(char *out, size_t outlen)
{
	unsigned char r[32];

	if (outlen < 44)
		return -1;
	do {
		if (RAND_bytes(r, sizeof(r)) != 1) {
			OPENSSL_cleanse(r, sizeof(r));
			return -1;
		}
		sign_base64url(r, sizeof(r), out);
	} while (out[0] == '-');
	OPENSSL_cleanse(r, sizeof(r));
	return 0;
}
