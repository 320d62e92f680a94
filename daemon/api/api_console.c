/*
 * api_console.c — the web console at /console/ (README.md, "The web
 * console"): its routes, the login, the session cookie, the CSRF token,
 * the answers' security headers.  The pages are api_console_pages.c,
 * the HTML api_html.c.
 *
 * Invariants:
 *   - A session is made only by a login with an enabled AppId and one
 *     of its active secrets (compared in constant time); the cookie
 *     holds 32 random bytes (hex), the spool only their SHA-256
 *     (state/console/<digest>.session), so reading the spool gives no
 *     usable cookie.  The cookie is HttpOnly, Secure, SameSite=Strict,
 *     Path=/console, and expires with the session (CONSOLE_SESSION_S).
 *   - The app's rights are read from apps.conf on every request: a
 *     disabled or removed app, or a narrowed grant, takes effect at once;
 *     the session also keeps the SHA-256 of the secret it was made
 *     with, and ends when that secret is no longer the app's (`apps
 *     rotate --revoke-old`).  Expired session files go at the next
 *     login.
 *   - Every POST but the login carries the session's CSRF token (a
 *     hidden field, compared in constant time), and when the browser
 *     sends Origin it must be this host; an action needs the role
 *     "operate" (apps.conf console=operate).
 *   - Every answer forbids inline script and any asset from elsewhere
 *     (Content-Security-Policy), framing, sniffing and referrers to
 *     other sites (same-origin: a no-referrer page makes the browser
 *     send "Origin: null" with its forms, which the Origin check
 *     refuses); no
 *     secret is ever written into a page.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api/api_impl.h"
#include "core/sign.h"

#define CONSOLE_BODY_MAX	65536	/* bytes of a console POST */
#define CONSOLE_COOKIE		"ts_console"

static const char csp[] = "Content-Security-Policy: default-src 'none'; "
    "style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'\r\n"
    "X-Content-Type-Options: nosniff\r\nReferrer-Policy: same-origin\r\n"
    "X-Frame-Options: DENY\r\n";

int
console_page(struct api_ctx *c, struct buf *out, int status,
    const struct buf *html)
{
	buf_puts(&c->hdr, csp);
	return api_respond(c, out, status, "text/html; charset=utf-8",
	    html->data != NULL ? html->data : "", html->len);
}

int
console_redirect(struct api_ctx *c, struct buf *out, const char *to)
{
	struct buf b;
	int st;

	buf_init(&b, 0);
	buf_printf(&c->hdr, "Location: %s\r\n", to);
	html_head(&b, "Moved", NULL, NULL, NULL);
	buf_puts(&b, "<p><a href=\"");
	html_text(&b, to);
	buf_puts(&b, "\">Continue</a></p>");
	html_foot(&b);
	st = console_page(c, out, 303, &b);
	buf_fini(&b);
	return st;
}

int
console_message(struct api_ctx *c, struct buf *out, int status,
    const struct console_session *s, const char *title, const char *text)
{
	struct buf b;
	int st;

	buf_init(&b, 0);
	html_head(&b, title, s != NULL ? s->app_id : NULL, s != NULL ?
	    apps_role_name(s->role) : NULL, s != NULL ? s->csrf : NULL);
	buf_puts(&b, "<h1>");
	html_text(&b, title);
	buf_puts(&b, "</h1><p class=\"err\">");
	html_text(&b, text);
	buf_puts(&b, "</p>");
	html_foot(&b);
	st = console_page(c, out, status, &b);
	buf_fini(&b);
	return st;
}

int
console_unavailable(struct api_ctx *c, struct buf *out,
    const struct console_session *s, const char *what)
{
	fprintf(stderr, "taskspool.cgi: trace %s: console: %s: %s\n",
	    c->trace, what, strerror(errno));
	buf_puts(&c->hdr, "Retry-After: 1\r\n");
	return console_message(c, out, 503, s, "Unavailable", "The spool "
	    "could not be read or written; try again shortly. The web "
	    "server's error log names the problem.");
}

/* --- form and query decoding ----------------------------------------- */

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int
console_field(const char *s, size_t len, const char *name, char *out,
    size_t outlen)
{
	const char *p = s, *end = s + len;
	size_t nl = strlen(name);

	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *e = amp != NULL ? amp : end;
		size_t o = 0;

		if ((size_t)(e - p) > nl && memcmp(p, name, nl) == 0 &&
		    p[nl] == '=') {
			for (const char *q = p + nl + 1; q < e; q++) {
				int ch = (unsigned char)*q, h, l;

				if (ch == '+')
					ch = ' ';
				else if (ch == '%') {
					if (e - q < 3 || (h = hexval(q[1])) <
					    0 || (l = hexval(q[2])) < 0)
						return 1;
					ch = h << 4 | l;
					q += 2;
				}
				if (ch == 0 || o + 1 >= outlen)
					return 1;
				out[o++] = (char)ch;
			}
			out[o] = '\0';
			return 0;
		}
		if ((size_t)(e - p) == nl && memcmp(p, name, nl) == 0) {
			out[0] = '\0';
			return 0;
		}
		p = e + (amp != NULL);
	}
	return -1;
}

/* --- sessions -------------------------------------------------------- */

/* The session file's name for cookie value sid (64 hex digits). */
static int
session_name(const char *sid, char *name, size_t namelen)
{
	char d[SIGN_HEX_LEN + 1];

	if (sign_sha256_hex(sid, strlen(sid), d) != 0)
		return -1;
	snprintf(name, namelen, "%s.session", d);
	return 0;
}

static void
hex_of(const unsigned char *r, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

static int
all_hex(const char *s, size_t n)
{
	return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

/* The cookie's session id from HTTP_COOKIE (RFC 6265 §5.4) into sid
 * (65 bytes).  Returns 0, or -1 when there is none of the right form. */
static int
cookie_sid(struct api_ctx *c, char *sid)
{
	const char *h = api_env(c, "HTTP_COOKIE"), *p;
	size_t n = strlen(CONSOLE_COOKIE);

	for (p = h; p != NULL && *p != '\0'; ) {
		p += strspn(p, " \t;");
		if (strncmp(p, CONSOLE_COOKIE, n) == 0 && p[n] == '=') {
			size_t v = strcspn(p + n + 1, "; \t");

			/* A malformed one (a sibling site may set one for a
			 * narrower path) does not hide a good one after it. */
			if (v == 64) {
				memcpy(sid, p + n + 1, 64);
				sid[64] = '\0';
				if (all_hex(sid, 64))
					return 0;
			}
		}
		p += strcspn(p, ";");
	}
	return -1;
}

/*
 * Whether key (hex SHA-256) is that of one of app's active secrets: a
 * session lasts only while the secret it was made with does (`apps
 * rotate --revoke-old` ends it).
 */
static int
secret_key_ok(const struct app *a, const char *key)
{
	char d[SIGN_HEX_LEN + 1];
	int ok = 0;

	for (int i = 0; i < a->nsecrets; i++)
		if (sign_sha256_hex(a->secrets[i], strlen(a->secrets[i]),
		    d) == 0 && CRYPTO_memcmp(d, key, SIGN_HEX_LEN) == 0)
			ok = 1;
	OPENSSL_cleanse(d, sizeof(d));
	return ok;
}

/* Remove the session files older than a session lasts (by mtime; at
 * most 10000 looked at per login). */
static void
sessions_purge(struct api_ctx *c)
{
	int dfd = api_state_subdir(c, "console"), n = 0;
	DIR *d = dfd >= 0 ? spool_opendir(dfd) : NULL;
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL && n++ < 10000) {
		struct stat st;
		size_t len = strlen(de->d_name);

		if (len > 8 && strcmp(de->d_name + len - 8, ".session") == 0 &&
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_mtime + CONSOLE_SESSION_S < c->rq->now)
			(void)unlinkat(dfd, de->d_name, 0);
	}
	if (d != NULL)
		closedir(d);
	if (dfd >= 0)
		(void)close(dfd);
}

/*
 * The app of a session (state/console/<digest>.session, read back as
 * hostile: "app=", "csrf=", "expires=" lines) into s, with its rights
 * from apps.conf.  Returns 0, or -1 when there is no valid, unexpired
 * session of an enabled app.
 */
static int
session_load(struct api_ctx *c, struct console_session *s)
{
	char sid[65], name[SIGN_HEX_LEN + 16], why[512];
	char key[SIGN_HEX_LEN + 1] = "";
	char *data, *line, *save = NULL;
	struct apps apps;
	struct app *a;
	long long exp = -1;
	int dfd, ok = 0;

	memset(s, 0, sizeof(*s));
	if (cookie_sid(c, sid) != 0 || session_name(sid, name,
	    sizeof(name)) != 0 || (dfd = api_state_subdir(c, "console")) < 0)
		return -1;
	data = spool_read_text(dfd, name, 1024, NULL, NULL, 0);
	(void)close(dfd);
	if (data == NULL)
		return -1;
	for (line = strtok_r(data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "app=", 4) == 0 && apps_id_ok(line + 4))
			snprintf(s->app_id, sizeof(s->app_id), "%s", line + 4);
		else if (strncmp(line, "csrf=", 5) == 0 && all_hex(line + 5,
		    64))
			snprintf(s->csrf, sizeof(s->csrf), "%s", line + 5);
		else if (strncmp(line, "key=", 4) == 0 && all_hex(line + 4,
		    SIGN_HEX_LEN))
			snprintf(key, sizeof(key), "%s", line + 4);
		else if (strncmp(line, "expires=", 8) == 0 &&
		    strspn(line + 8, "0123456789") == strlen(line + 8) &&
		    strlen(line + 8) < 18)
			exp = strtoll(line + 8, NULL, 10);
	}
	free(data);
	if (s->app_id[0] == '\0' || s->csrf[0] == '\0' || exp <= c->rq->now)
		return -1;
	s->expires = exp;
	snprintf(s->sid_name, sizeof(s->sid_name), "%s", name);
	if (apps_load(c->rq->cfg->apps_file, &apps, why, sizeof(why)) != 0)
		return -1;
	if ((a = apps_find(&apps, s->app_id)) != NULL && a->enabled &&
	    key[0] != '\0' && secret_key_ok(a, key)) {
		s->app = *a;
		OPENSSL_cleanse(s->app.secrets, sizeof(s->app.secrets));
		s->role = a->role == APPS_ROLE_OPERATE ? APPS_ROLE_OPERATE :
		    APPS_ROLE_READ;
		ok = 1;
	}
	OPENSSL_cleanse(apps.v, apps.nv * sizeof(*apps.v));
	apps_free(&apps);
	return ok ? 0 : -1;
}

/* A new session for app id, logged in with secret: its file, and the
 * cookie in c->hdr. */
static int
session_make(struct api_ctx *c, const char *id, const char *secret)
{
	char key[SIGN_HEX_LEN + 1];

	unsigned char r[32], t[32];
	char sid[65], csrf[65], name[SIGN_HEX_LEN + 16];
	struct buf b;
	int dfd, rc;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r) ||
	    getrandom(t, sizeof(t), 0) != (ssize_t)sizeof(t))
		return -1;
	hex_of(r, sizeof(r), sid);
	hex_of(t, sizeof(t), csrf);
	OPENSSL_cleanse(r, sizeof(r));
	if (session_name(sid, name, sizeof(name)) != 0 ||
	    (dfd = api_state_subdir(c, "console")) < 0)
		return -1;
	buf_init(&b, 0);
	if (sign_sha256_hex(secret, strlen(secret), key) != 0) {
		(void)close(dfd);
		return -1;
	}
	buf_printf(&b, "app=%s\ncsrf=%s\nkey=%s\nexpires=%lld\n", id, csrf,
	    key, (long long)c->rq->now + CONSOLE_SESSION_S);
	rc = spool_publish(&c->sp, dfd, name, b.data, b.len, -1,
	    SPOOL_PUBLISH_EXCL);
	buf_fini(&b);
	(void)close(dfd);
	if (rc == 0)
		buf_printf(&c->hdr, "Set-Cookie: " CONSOLE_COOKIE "=%s; "
		    "Path=/console; Max-Age=%d; HttpOnly; Secure; "
		    "SameSite=Strict\r\n", sid, CONSOLE_SESSION_S);
	OPENSSL_cleanse(sid, sizeof(sid));
	return rc;
}

/* Whether the login's secret is one of app id's, the app enabled. */
static int
login_ok(struct api_ctx *c, const char *id, const char *secret)
{
	char why[512];
	struct apps apps;
	struct app *a;
	int ok = 0;

	if (!apps_id_ok(id) || apps_load(c->rq->cfg->apps_file, &apps, why,
	    sizeof(why)) != 0)
		return 0;
	if ((a = apps_find(&apps, id)) != NULL && a->enabled)
		for (int i = 0; i < a->nsecrets; i++)
			if (strlen(a->secrets[i]) == strlen(secret) &&
			    CRYPTO_memcmp(a->secrets[i], secret,
			    strlen(secret)) == 0)
				ok = 1;
	OPENSSL_cleanse(apps.v, apps.nv * sizeof(*apps.v));
	apps_free(&apps);
	return ok;
}

/* --- the login page -------------------------------------------------- */

static int
login_page(struct api_ctx *c, struct buf *out, int status, const char *err)
{
	struct buf b;
	int st;

	buf_init(&b, 0);
	html_head(&b, "Log in", NULL, NULL, NULL);
	buf_puts(&b, "<form class=\"login\" method=\"post\" "
	    "action=\"/console/login\"><h1>Log in</h1>");
	if (err != NULL) {
		buf_puts(&b, "<p class=\"err\" role=\"alert\">");
		html_text(&b, err);
		buf_puts(&b, "</p>");
	}
	{
		/* The cookie is Secure: over plain HTTP a browser keeps it
		 * only from a loopback name; say so rather than loop. */
		const char *https = api_env(c, "HTTPS");
		const char *host = api_env(c, "HTTP_HOST");

		if ((https == NULL || strcasecmp(https, "on") != 0) &&
		    (host == NULL || (strncmp(host, "localhost", 9) != 0 &&
		    strncmp(host, "127.0.0.1", 9) != 0 && strncmp(host,
		    "[::1]", 5) != 0)))
			buf_puts(&b, "<p class=\"err\">This page came over "
			    "plain HTTP: the session cookie is Secure, so a "
			    "browser keeps it only over HTTPS (or from "
			    "localhost). Serve the console over HTTPS.</p>");
	}
	buf_puts(&b, "<label for=\"app\">AppId</label>"
	    "<input id=\"app\" name=\"app\" autocomplete=\"username\" "
	    "required maxlength=\"64\">"
	    "<label for=\"secret\">AppSecret</label>"
	    "<input id=\"secret\" name=\"secret\" type=\"password\" "
	    "autocomplete=\"current-password\" required maxlength=\"128\">"
	    "<p><button type=\"submit\">Log in</button></p>"
	    "<p>An app of <code>taskspool apps</code>; its role is set with "
	    "<code>taskspool apps console APPID read|operate</code>.</p>"
	    "</form>");
	html_foot(&b);
	st = console_page(c, out, status, &b);
	buf_fini(&b);
	return st;
}

static int
login_post(struct api_ctx *c, struct buf *out, const char *body,
    size_t len)
{
	char id[APPS_ID_MAX + 2], secret[APPS_SECRET_MAX + 2];
	int ok;

	if (console_field(body, len, "app", id, sizeof(id)) != 0 ||
	    console_field(body, len, "secret", secret, sizeof(secret)) != 0) {
		OPENSSL_cleanse(secret, sizeof(secret));
		return login_page(c, out, 400, "Give an AppId and its "
		    "AppSecret.");
	}
	ok = login_ok(c, id, secret);
	if (!ok) {
		OPENSSL_cleanse(secret, sizeof(secret));
		/* One answer for an unknown app and a wrong secret, and
		 * slowly: a guess costs half a second. */
		fprintf(stderr, "taskspool.cgi: trace %s: console: failed "
		    "login\n", c->trace);
		usleep(500000);
		return login_page(c, out, 401, "Unknown AppId, disabled app "
		    "or wrong AppSecret.");
	}
	sessions_purge(c);
	if (session_make(c, id, secret) != 0)
		ok = 0;
	OPENSSL_cleanse(secret, sizeof(secret));
	if (!ok)
		return console_message(c, out, 503, NULL, "Unavailable",
		    "The session could not be stored; try again.");
	return console_redirect(c, out, "/console/");
}

static int
logout(struct api_ctx *c, struct buf *out, const struct console_session *s)
{
	int dfd = api_state_subdir(c, "console");

	if (dfd >= 0) {
		(void)unlinkat(dfd, s->sid_name, 0);
		(void)close(dfd);
	}
	buf_puts(&c->hdr, "Set-Cookie: " CONSOLE_COOKIE "=; Path=/console; "
	    "Max-Age=0; HttpOnly; Secure; SameSite=Strict\r\n");
	return console_redirect(c, out, "/console/login");
}

/* --- requests -------------------------------------------------------- */

/* Origin, when the browser sends it, must be this host (RFC 6454). */
static int
origin_ok(struct api_ctx *c)
{
	const char *o = api_env(c, "HTTP_ORIGIN");
	const char *h = api_env(c, "HTTP_HOST");
	const char *p;

	if (o == NULL)
		return 1;
	if (h == NULL || (p = strstr(o, "://")) == NULL)
		return 0;
	return strcmp(p + 3, h) == 0;
}

/* Read the POST body (form-encoded, at most CONSOLE_BODY_MAX) into a
 * new string *body, its length in *len.  Returns 0 or the status sent. */
static int
read_form(struct api_ctx *c, struct buf *out, char **body, size_t *len)
{
	const char *cl = api_env(c, "CONTENT_LENGTH");
	const char *ct = api_env(c, "CONTENT_TYPE");
	size_t n;
	char *b;

	*body = NULL;
	if (ct == NULL || strncasecmp(ct, "application/x-www-form-urlencoded",
	    33) != 0 || (ct[33] != '\0' && ct[33] != ';'))
		return console_message(c, out, 415, NULL, "Unsupported",
		    "A console form is sent as "
		    "application/x-www-form-urlencoded.");
	if (cl == NULL || cl[0] == '\0' || strlen(cl) > 6 || strspn(cl,
	    "0123456789") != strlen(cl) || (n = strtoul(cl, NULL, 10)) >
	    CONSOLE_BODY_MAX)
		return console_message(c, out, 413, NULL, "Too large",
		    "A console form is at most 64 KiB, with Content-Length.");
	if ((b = malloc(n + 1)) == NULL)
		return console_unavailable(c, out, NULL, "memory");
	if (api_read_body(c->rq, b, n) != 0) {
		free(b);
		return console_message(c, out, 400, NULL, "Bad request",
		    "The form ended early.");
	}
	b[n] = '\0';
	*body = b;
	*len = n;
	return 0;
}

int
api_console(struct api_ctx *c, struct buf *out)
{
	const char *p = c->path + 8, *m = c->method;
	int get = strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
	int post = strcmp(m, "POST") == 0, st;
	struct console_session s;
	char why[1024], *body = NULL, csrf[80];
	size_t len = 0;

	if (strcmp(p, "/style.css") == 0 && get) {
		size_t n;
		const char *css = html_css(&n);

		buf_puts(&c->hdr, "X-Content-Type-Options: nosniff\r\n");
		return api_respond(c, out, 200, "text/css; charset=utf-8",
		    css, n);
	}
	if (!get && !post) {
		buf_puts(&c->hdr, "Allow: GET, POST\r\n");
		return console_message(c, out, 405, NULL, "Not allowed",
		    "The console takes GET and POST.");
	}
	if (spool_open(&c->sp, c->rq->cfg->spool, NULL,
	    (int)c->rq->cfg->fsync, why, sizeof(why)) != 0) {
		errno = EIO;
		return console_unavailable(c, out, NULL, why);
	}
	c->sp_open = 1;
	if (post && (st = read_form(c, out, &body, &len)) != 0)
		return st;
	if (post && !origin_ok(c)) {
		st = console_message(c, out, 403, NULL, "Forbidden",
		    "This form came from another site.");
		goto out;
	}
	if (strcmp(p, "/login") == 0) {
		st = post ? login_post(c, out, body, len) :
		    login_page(c, out, 200, NULL);
		goto out;
	}
	if (session_load(c, &s) != 0) {
		st = post ? console_message(c, out, 403, NULL, "Forbidden",
		    "Your session has ended; log in again.") :
		    console_redirect(c, out, "/console/login");
		goto out;
	}
	if (post && (console_field(body, len, "csrf", csrf, sizeof(csrf)) !=
	    0 || strlen(csrf) != 64 || CRYPTO_memcmp(csrf, s.csrf, 64) != 0)) {
		st = console_message(c, out, 403, &s, "Forbidden",
		    "The form's token does not match your session; reload "
		    "the page and try again.");
		goto out;
	}
	if (post && strcmp(p, "/logout") == 0)
		st = logout(c, out, &s);
	else if (post)
		st = console_action(c, out, &s, p, body, len);
	else
		st = console_get(c, out, &s, p);
out:
	if (body != NULL) {
		OPENSSL_cleanse(body, len);
		free(body);
	}
	OPENSSL_cleanse(&s, sizeof(s));
	return st;
}
