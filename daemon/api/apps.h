/*
 * apps — the API callers' file apps.conf (API.md §3.1): which AppIds
 * exist, whether each is enabled, which task codes it may submit, and its
 * one or two active AppSecrets.  Mechanism only: parse, look up, edit and
 * rewrite; no logging.
 *
 * Format: one app per line, fields separated by blanks (spaces or tabs);
 * '#' at the start of a line begins a comment; blank lines are ignored:
 *
 *     # appId      state     taskCodes               secrets (newest first)
 *     app-test-01  enabled   report.generate,notify  q8Yv2Kp0...  Z0yX9w...
 *
 * appId matches [A-Za-z0-9_-]{1,64}; state is "enabled" or "disabled";
 * taskCodes is "*" (every task code) or a comma-separated list of task
 * codes; then one or two secrets of 16 to 128 characters from the
 * base64url alphabet (A-Z a-z 0-9 - _), and optionally, anywhere after
 * taskCodes, "rate=N": the app's own request limit per api_rate_window_sec
 * window (0 .. APPS_RATE_MAX, 0 = not limited), overriding api_rate_limit
 * (ratelimit.h), and "weight=N": the app's share of the daemons' claims
 * against other apps' tasks (1..APPS_WEIGHT_MAX, default 1;
 * core/fairshare.h), which the API writes into each task it makes as
 * appWeight; and "console=read" or "console=operate": what the app may
 * do in the web console (README.md, "The web console"): look, or also
 * act (cancel, retry, hold, release, run and enable jobs, drain); default
 * read.  A secret never holds '=', so they cannot be confused,
 * and files without rate= or weight= keep their meaning.  The file holds secrets: it must
 * be readable only by its owner and the group the CGI runs as (0640);
 * apps_write creates it so.
 */
#ifndef TASKSPOOL_APPS_H
#define TASKSPOOL_APPS_H

#include <stddef.h>

#define APPS_ID_MAX		64	/* AppId characters */
#define APPS_SECRETS_MAX	2	/* active secrets per AppId */
#define APPS_SECRET_MAX		128	/* characters of a secret */
#define APPS_SECRET_MIN		16
#define APPS_CODES_MAX		4096	/* bytes of the taskCodes field */
#define APPS_FILE_MAX		(4 * 1024 * 1024)
#define APPS_RATE_MAX		1000000	/* requests per window */
#define APPS_RATE_DEFAULT	(-1)	/* no rate=: api_rate_limit */
#define APPS_WEIGHT_MAX		100	/* = FAIR_WEIGHT_MAX */
#define APPS_WEIGHT_DEFAULT	(-1)	/* no weight=: 1 */
#define APPS_ROLE_DEFAULT	(-1)	/* no console=: read */
#define APPS_ROLE_READ		0	/* console=read */
#define APPS_ROLE_OPERATE	1	/* console=operate */

struct app {
	char id[APPS_ID_MAX + 1];
	int enabled;
	char codes[APPS_CODES_MAX];	/* "*" or "a,b,c" */
	char secrets[APPS_SECRETS_MAX][APPS_SECRET_MAX + 1];
	int nsecrets;			/* 1 or 2; [0] is the newest */
	long rate;			/* rate=N, or APPS_RATE_DEFAULT */
	int weight;			/* weight=N, or APPS_WEIGHT_DEFAULT */
	int role;			/* console=, or APPS_ROLE_DEFAULT */
};

struct apps {
	struct app *v;			/* new; nv entries */
	size_t nv;
};

/*
 * Whether s is min to max characters, each an ASCII letter, a digit or one
 * of the characters in extra (the header and file grammars of API.md
 * §3.2 are of this shape).  Returns 1 or 0.
 */
int apps_token_ok(const char *s, size_t min, size_t max, const char *extra);

/* Whether s matches the AppId grammar [A-Za-z0-9_-]{1,64}. */
int apps_id_ok(const char *s);

/*
 * Parse len bytes of apps.conf text into a (initialised by this call;
 * free with apps_free).  Returns 0, or -1 with "line N: ..." in why
 * (errno EINVAL for a format error, ENOMEM).
 */
int apps_parse(const char *data, size_t len, struct apps *a, char *why,
    size_t whylen);

/*
 * Read and parse the file at path.  A missing file is an empty list.
 * Returns 0, or -1 with errno and "path: ..." in why.
 */
int apps_load(const char *path, struct apps *a, char *why, size_t whylen);

/* Free what a owns (NULL accepted); a is empty afterwards. */
void apps_free(struct apps *a);

/* The entry for id in a (borrowed, valid until a changes), or NULL. */
struct app *apps_find(const struct apps *a, const char *id);

/*
 * Parse the value of a rate= field (or of `taskspool apps rate`): a
 * decimal 0 .. APPS_RATE_MAX into *out.  Returns 0, or -1 when s is not
 * one.
 */
int apps_rate_parse(const char *s, long *out);

/* The console role named s ("read", "operate"): APPS_ROLE_READ or
 * APPS_ROLE_OPERATE, or -1 for another text. */
int apps_role_parse(const char *s);

/* The name of role (APPS_ROLE_*; the default is "read"): static. */
const char *apps_role_name(int role);

/* Whether app may submit task code code (listed, or codes is "*"). */
int apps_code_allowed(const struct app *app, const char *code);

/*
 * Append a copy of app to a.  Returns 0, or -1 with errno ENOMEM or
 * EEXIST (an app with that id exists).
 */
int apps_add(struct apps *a, const struct app *app);

/*
 * Write a to path atomically: a new file path.tmp.<pid> (O_EXCL, mode
 * 0640), fsync, rename over path, fsync the directory.  Returns 0 or -1
 * with errno and a message in why.
 */
int apps_write(const struct apps *a, const char *path, char *why,
    size_t whylen);

/*
 * A new AppSecret: 32 bytes from RAND_bytes as 43 characters of
 * base64url without padding (API.md §3.1) into out (>= 44 bytes).  A
 * draw whose first character is '-' is drawn again, so that the secret
 * is never read as an option by a command line it is passed on (curl,
 * getopt; 1 draw in 64; the secret loses 0.02 of its 256 bits).  Returns
 * 0, or -1 if the CSPRNG fails.
 */
int apps_new_secret(char *out, size_t outlen);

#endif
