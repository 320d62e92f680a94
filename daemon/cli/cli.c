/*
 * cli — the `taskspool` command: init, submit, status, result, logs, list,
 * cancel, retry, config (and `cron`, in cli_cron.c).  Every write goes
 * through the spool's writer protocol, so the CLI is safe against running
 * daemons.  Exit codes (sysexits(3) where one fits) are documented in
 * usage() and taskspool(1).
 */
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "spool/log.h"
#include "spool/readfd.h"
#include "cli/cli_apps.h"
#include "cli/cli_batch.h"
#include "callback/callback.h"
#include "cli/cli_cron.h"
#include "cli/cli_hold.h"
#include "cli/cli_jobs.h"
#include "cli/cli_top.h"
#include "cli/cli_records.h"
#include "cli/cli_deps.h"
#include "cli/cli_nodes.h"
#include "cli/cli_trace.h"
#include "spool/config.h"
#include "coord/coord.h"
#include "coord/coord_open.h"
#include "coord/hold.h"
#include "coord/index.h"
#include "coord/retry.h"
#include "core/jsontext.h"
#include "core/nameset.h"
#include "core/priority.h"
#include "core/tags.h"
#include "coord/maxconc.h"
#include "core/result.h"
#include "spool/spool.h"
#include "spool/batchdir.h"
#include "core/version.h"
#include "core/task.h"
#include "core/traceparent.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "coord/wakeup.h"

#define EFTYPE_NOTREG	ENOTSUP	/* read_all: the path is not a regular file */
#define EXIT_TASK_FAILED	1
#define EXIT_TASK_CANCELLED	2

struct cli {
	struct config cfg;
	const char *cfile;
	const char *spool_arg;
	const char *spool_from;	/* "-s", "$TASKSPOOL_SPOOL" or NULL */
	int json;
	struct spool sp;
};

static const char *const top_usage =
"usage: taskspool [-c file] [-s spool] [--json] command [args]\n"
"\n"
"commands:\n"
"  init DIR [--group G]       create a spool with the documented modes\n"
"  submit FILE|-              submit a task file (JSON)\n"
"  submit --ndjson FILE|- [--batch ID] [--traceparent TP]\n"
"                             one task file per line, one group commit\n"
"  submit --code C [--params JSON] [--id ID] [--name TEXT]\n"
"         [--delay MS | --at RFC3339] [--retries N] [--timeout S]\n"
"         [--priority 0-9] [--require-tag TAG]...\n"
"         [--concurrency-key KEY [--max-per-key N]] [--wait]\n"
"         [--wait-timeout S] [--traceparent TP] [--batch ID]\n"
"         [--after ID[:afterok|afternotok|afterany]]...\n"
"         [--on-failure CODE [--on-failure-mode every|transition]]\n"
"  deps ID                    a task's parents (condition, state), dependents\n"
"  status ID                  where the task is: PENDING RUNNING SUCCESS ...\n"
"  status                     one-screen summary: nodes, queue, lag, failures\n"
"  top [--once] [-i MS]       the summary, refreshed until q is pressed\n"
"  result ID                  the result envelope (results/ID.json)\n"
"  logs ID [-f] [-a N] [--stderr|--stdout]   hook output of an attempt\n"
"  list [--state S] [--code C]   tasks, one per line\n"
"  cancel ID                  cancel a pending or running task\n"
"  hold ID|--code C|--batch B keep pending tasks out of every claim (HELD);\n"
"                             a running task's next retry is held\n"
"  release ID|--code C|--batch B|--all   put held tasks back in their place\n"
"  retry ID                   run a FAILED or CANCELLED task again\n"
"  config                     print the effective configuration\n"
"  nodes                      the daemons of the spool: state, age, load\n"
"  nodes drain NODE [--reason TEXT] [--force] [--no-wait] | resume NODE\n"
"                             NODE finishes what it runs and claims\n"
"                             nothing new (it stays up) / claims again\n"
"  batch open|close ID [--on-complete CODE] [--callback-url URL]\n"
"       | status ID | list   a batch of tasks (submit --batch ID): its\n"
"                             members by state, its onComplete task\n"
"  cron next EXPR [...]       next fire times of a cron expression\n"
"  jobs list|add FILE|enable JOB|disable JOB|remove JOB|run-now JOB|\n"
"       next JOB [N]          recurring job definitions in jobs/\n"
"  apps add ID --codes C,..|'*' [--rate N] | list | rotate ID\n"
"       [--revoke-old] | disable ID | enable ID | rate ID N|default |\n"
"       weight ID N|default\n"
"                             callers of the HTTP API (apps.conf)\n"
"  callbacks list             callback deliveries in outbox/callbacks/\n"
"  callbacks redeliver ID     send the callback of task ID again\n"
"  db migrate|status          MariaDB schema (cluster mode)\n"
"  history [--code C] [--state S] [--since T]   task history from MariaDB\n"
"  stats [--since T]          per task code: count, success rate, p50/p95\n"
"  purge --older-than D [--db] [--dry-run]\n"
"                             remove finished tasks' files (and rows)\n"
"\n"
"options: -c FILE configuration file; -s DIR spool (or $TASKSPOOL_SPOOL);\n"
"         --json machine-readable output of read commands; -h help;\n"
"         -V, --version the release.\n"
"exit status: 0 ok (with --wait: the task succeeded); 1 the task FAILED;\n"
"  2 it was CANCELLED; 64 usage; 65 invalid task or damaged result;\n"
"  66 no such task; 67 no such group (init); 69 no result yet or\n"
"  registry unreadable; 73 requestId already used; 74 I/O error;\n"
"  75 try again (callbacks redeliver; --wait-timeout passed);\n"
"  78 configuration error.\n";

static int
cli_open(struct cli *c)
{
	char why[1024];

	if (config_locate(&c->cfg, c->cfile, c->spool_arg, why,
	    sizeof(why)) != 0 || config_finish(&c->cfg, why, sizeof(why))) {
		fprintf(stderr, "taskspool: %s\n", why);
		return EX_CONFIG;
	}
	if (spool_open(&c->sp, c->cfg.spool, NULL, (int)c->cfg.fsync, why,
	    sizeof(why)) != 0) {
		/* Say where the path came from and the ways out: the
		 * same advice as taskspoold's. */
		if (errno == ENOENT)
			fprintf(stderr, "taskspool: no spool at %s (%s): create "
			    "it with `taskspool init %s`, or name an existing "
			    "one with -s DIR (before the command) or "
			    "$TASKSPOOL_SPOOL\n", c->cfg.spool,
			    c->spool_from != NULL ? c->spool_from :
			    c->cfg.source[0] != '\0' ? c->cfg.source :
			    "the default", c->cfg.spool);
		else
			fprintf(stderr, "taskspool: %s\n", why);
		return EX_CONFIG;
	}
	return 0;
}

static const char *
state_name(enum spool_dir d)
{
	const char *s = spool_state_name(d);

	return s != NULL ? s : "UNKNOWN";
}

/*
 * A new time-ordered requestId: req_<UTC yyyymmddThhmmssmmmZ>_<random>.
 * Within one ms (submit --ndjson makes many) the ids of this process
 * count up from the first one's random suffix, so they sort in the order
 * they were made (the suffix is 12 hex digits: it wraps after 2^48).
 */
static void
new_request_id(char *out, size_t len)
{
	static int64_t last_ms = -1;
	static unsigned long long last;
	int64_t ms = tstime_now_ms();
	char *u;

	spool_new_request_id(out, len, ms);
	if ((u = strrchr(out, '_')) == NULL || strlen(u + 1) != 12)
		return;
	if (ms == last_ms) {
		last = (last + 1) & 0xffffffffffffULL;
		snprintf(u + 1, len - (size_t)(u + 1 - out), "%012llx", last);
	} else {
		last_ms = ms;
		last = strtoull(u + 1, NULL, 16);
	}
}

/* --- callbacks --- */

static int
cmd_callbacks(struct cli *c, int argc, char **argv)
{
	char why[512];
	int rc;

	if (!(argc == 2 && strcmp(argv[1], "list") == 0) &&
	    !(argc == 3 && strcmp(argv[1], "redeliver") == 0)) {
		fputs("usage: taskspool callbacks list | redeliver ID\n",
		    stderr);
		return EX_USAGE;
	}
	if ((rc = cli_open(c)) != 0)
		return rc;
	if (argv[1][0] == 'l')
		return callback_list(&c->sp, stdout) < 0 ? EX_IOERR : 0;
	if (callback_redeliver(&c->sp, argv[2], why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool: %s\n", why);
		return errno == ENOENT ? EX_NOINPUT : errno == EINVAL ?
		    EX_USAGE : errno == EBUSY ? EX_TEMPFAIL : EX_IOERR;
	}
	printf("%s: callback queued for redelivery\n", argv[2]);
	return 0;
}

/* --- init --- */

static int
cmd_init(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "group", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	long gid = -1;
	const char *gname = NULL;
	char why[1024], conf[4200];
	int ch;

	while ((ch = getopt_long(argc, argv, "g:h", lo, NULL)) != -1) {
		if (ch == 'g') {
			struct group *g = getgrnam(optarg);

			if (g == NULL) {
				fprintf(stderr, "taskspool init: no group "
				    "\"%s\"\n", optarg);
				return EX_NOUSER;
			}
			gid = (long)g->gr_gid;
			gname = optarg;
		} else {
			fputs("usage: taskspool init DIR [--group GROUP]\n"
			    "Create a spool (and DIR/taskspool.conf if "
			    "missing); existing parts are kept.\n",
			    ch == 'h' ? stdout : stderr);
			return ch == 'h' ? 0 : EX_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fputs("usage: taskspool init DIR [--group GROUP]\n", stderr);
		return EX_USAGE;
	}
	if (spool_create(argv[optind], gid, why, sizeof(why)) != 0) {
		int e = errno;

		fprintf(stderr, "taskspool init: %s\n", why);
		/* Files of other users: what root can run instead. */
		if (gname != NULL && (e == EPERM || e == EACCES))
			fprintf(stderr, "taskspool init: as root: chgrp -R %s "
			    "%s && find %s -type d -exec chmod g+s {} +\n",
			    gname, argv[optind], argv[optind]);
		return EX_CANTCREAT;
	}
	snprintf(conf, sizeof(conf), "%s/taskspool.conf", argv[optind]);
	if (access(conf, F_OK) != 0) {
		/* 0640: it may get passwords, and others may pass through
		 * the spool root (o+x, for hook_user). */
		int fd = open(conf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0640);
		FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (fp == NULL && fd >= 0)
			close(fd);
		if (fp != NULL) {
			char abs[4096];

			config_defaults(&c->cfg);
			if (realpath(argv[optind], abs) != NULL)
				snprintf(c->cfg.spool, sizeof(c->cfg.spool),
				    "%s", abs);
			config_dump(&c->cfg, fp, 0);
			fclose(fp);
		}
	}
	{
		struct stat st;

		if (stat(conf, &st) == 0 && (st.st_mode & S_IROTH))
			fprintf(stderr, "taskspool init: warning: %s is "
			    "readable by every user, and others may pass "
			    "through the spool (for hook_user): chmod o-r "
			    "%s\n", conf, conf);
	}
	printf("spool ready: %s\n", argv[optind]);
	return 0;
}

/* --- submit --- */

static int
read_all(const char *path, struct buf *b)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY |
	    O_CLOEXEC | O_NONBLOCK);
	int rc;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fd != 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EFTYPE_NOTREG;
		return -1;
	}
	rc = buf_read_fd(b, fd);
	if (fd != 0)
		close(fd);
	return rc;
}

static int wait_for(struct cli *c, const char *id, int64_t limit_ms);

/* A task validated for submission: decoded, with its requestId, its
 * file's bytes and where it goes. */
struct prepared {
	struct task t;
	struct buf out;			/* the task file's bytes */
	char file[SPOOL_NAME_MAX];	/* <requestId>.json */
	enum spool_dir dest;		/* incoming/, delayed/ or blocked/ */
	int64_t due;			/* delayed/: the due ms, else -1 */
};

/*
 * Validate the task in in (a file's bytes, or the one --code composed;
 * from_file: in came from a file) for submission with c (open), as the
 * daemons and the HTTP API will read it: the codec, traceparent (the
 * --traceparent value, may be NULL), callbackUrl, an executable hook,
 * a requestId (generated when absent) not used yet, batch (--batch, may
 * be NULL; only for a file, which names no other), releasedBy refused,
 * dependsOn's parents (in the spool, or in earlier: cli_deps_check).  Errors go to stderr as "taskspool submit:
 * <what><reason>" (what: "" or e.g. "line 3: ").  p is initialised
 * here; the caller frees it with prepared_fini() whatever the result.
 * Returns 0, or the exit status (sysexits).
 */
static int
submit_prepare(struct cli *c, const char *what, const struct buf *in,
    int from_file, const char *batch, const char *traceparent,
    const struct nameset *earlier, struct prepared *p)
{
	struct task_error te;
	enum spool_dir where;
	int rc;

	task_init(&p->t);
	buf_init(&p->out, 0);
	p->file[0] = '\0';
	p->due = -1;
	p->dest = SPOOL_INCOMING;
	if (task_decode(in->data != NULL ? in->data : "", in->len, &p->t,
	    &te)) {
		fprintf(stderr, "taskspool submit: %sinvalid task: %s: %s\n",
		    what, te.field, te.rule);
		return EX_DATAERR;
	}
	if ((rc = cli_trace_choose(traceparent, &p->t)) != 0)
		return rc;
	if (p->t.callback_url != NULL) {
		/* As the HTTP API does: the URL under the callback_* keys,
		 * and a secret to sign with (the sender sends no unsigned
		 * callback). */
		char why[512];

		enum urlcheck_rc v = callback_url_check(&c->cfg,
		    p->t.callback_url, why, sizeof(why));

		if (v != URLCHECK_OK) {
			fprintf(stderr, "taskspool submit: %s%scallbackUrl: "
			    "%s\n", what, v == URLCHECK_UNAVAILABLE ? "" :
			    "invalid task: ", why);
			return v == URLCHECK_UNAVAILABLE ? EX_UNAVAILABLE :
			    EX_DATAERR;
		}
		if (!callback_can_sign(&c->sp, &c->cfg, p->t.app_id)) {
			fprintf(stderr, "taskspool submit: %sinvalid task: "
			    "callbackUrl: %s\n", what, CALLBACK_NO_SECRET_WHY);
			return EX_DATAERR;
		}
	}
	{
		char hook[CONFIG_PATH_MAX + 80];

		snprintf(hook, sizeof(hook), "%s/%s", c->cfg.hooks_dir,
		    p->t.task_code);
		if (access(hook, X_OK) != 0) {
			fprintf(stderr, "taskspool submit: %staskCode: no "
			    "executable hook %s\n", what, hook);
			return EX_DATAERR;
		}
	}
	if (p->t.request_id[0] == '\0')
		new_request_id(p->t.request_id, sizeof(p->t.request_id));
	snprintf(p->file, sizeof(p->file), "%s.json", p->t.request_id);
	if (spool_locate(&c->sp, p->t.request_id, &where, NULL) == 0) {
		fprintf(stderr, "taskspool submit: %srequestId %s already "
		    "used (%s)\n", what, p->t.request_id, state_name(where));
		return EX_CANTCREAT;
	}
	if (batch != NULL && from_file &&
	    strcmp(batch, p->t.batch_id) != 0) {
		/* A file's own batchId is the batch; --batch sets one. */
		if (p->t.batch_id[0] != '\0' || !task_name_ok(batch,
		    TASK_BATCH_ID_MAX)) {
			fprintf(stderr, "taskspool submit: %s--batch: \"%s\" "
			    "is not a batchId, or the file names another\n",
			    what, batch);
			return EX_USAGE;
		}
		memcpy(p->t.batch_id, batch, strlen(batch) + 1);
	}
	if (p->t.released.n > 0) {
		/* Only the leader writes it, when it releases a task
		 * (README.md, "Dependencies"): a forged one is refused. */
		fprintf(stderr, "taskspool submit: %sinvalid task: releasedBy: "
		    "written by the leader when it releases a blocked task; "
		    "a submitted task may not carry it\n", what);
		return EX_DATAERR;
	}
	if ((rc = cli_deps_check(&c->sp, &p->t, earlier, what)) != 0)
		return rc;
	p->t.created_ms = tstime_now_ms();
	p->due = task_set_not_before(&p->t);
	if (task_encode(&p->t, &p->out) != 0)
		return EX_SOFTWARE;
	if (p->out.len > TASK_FILE_MAX) {
		/* The members added here (requestId, createdAt...) must not
		 * push the file over the daemons' limit: they would send it
		 * to corrupt/ after this command said it was submitted. */
		fprintf(stderr, "taskspool submit: %sthe task file would be "
		    "%zu bytes with the members submit adds; at most %d\n",
		    what, p->out.len, TASK_FILE_MAX);
		return EX_DATAERR;
	}
	p->dest = p->t.depends.n > 0 ? SPOOL_BLOCKED : p->due >= 0 ?
	    SPOOL_DELAYED : SPOOL_INCOMING;
	return 0;
}

static void
prepared_fini(struct prepared *p)
{
	task_fini(&p->t);
	buf_fini(&p->out);
}


/* submit --ndjson: the input's cap, and the tasks of one group commit. */
#define NDJSON_MAX	((size_t)256 << 20)
#define NDJSON_GROUP	1000

/* The next line of b from *pos (without its LF and a CR before it) in
 * *line and *len; 0 at the end of b. */
static int
next_line(const struct buf *b, size_t *pos, const char **line, size_t *len)
{
	const char *s, *nl;

	if (*pos >= b->len)
		return 0;
	s = b->data + *pos;
	nl = memchr(s, '\n', b->len - *pos);
	*len = nl != NULL ? (size_t)(nl - s) : b->len - *pos;
	*pos += *len + (nl != NULL);
	if (*len > 0 && s[*len - 1] == '\r')
		(*len)--;
	*line = s;
	return 1;
}

/* One group of submit --ndjson: v[0..n-1] prepared, published with one
 * group commit: each staged in tmp/, one syncfs(2) of the spool's file
 * system for all of them (fsync of each where syncfs fails), each
 * moved into its directory (RENAME_NOREPLACE), one fsync of each
 * directory used.  *done counts the tasks published (their ids
 * printed).  Returns 0 or the exit status (the tasks before the one
 * that failed are published). */
static int
ndjson_commit(struct cli *c, struct prepared *v, size_t n, size_t *done)
{
	char (*tmp)[SPOOL_TMPNAME_MAX] = calloc(n, sizeof(*tmp));
	int *fds = calloc(n, sizeof(*fds)), used[SPOOL_NDIRS] = { 0 };
	size_t staged = 0, moved = 0;
	int rc = 0, synced = 0;

	if (tmp == NULL || fds == NULL) {
		free(tmp);
		free(fds);
		fputs("taskspool submit: out of memory\n", stderr);
		return EX_OSERR;
	}
	for (; staged < n; staged++) {
		if (v[staged].t.batch_id[0] != '\0' && (rc = cli_batch_join(
		    &c->sp, v[staged].t.batch_id, v[staged].t.request_id)) !=
		    0)
			break;
		fds[staged] = spool_stage(&c->sp, v[staged].out.data,
		    v[staged].out.len, v[staged].due, tmp[staged],
		    sizeof(tmp[staged]));
		if (fds[staged] < 0) {
			fprintf(stderr, "taskspool submit: tmp/: %s\n",
			    strerror(errno));
			if (v[staged].t.batch_id[0] != '\0')
				batchdir_leave(&c->sp, v[staged].t.batch_id,
				    v[staged].t.request_id);
			rc = EX_IOERR;
			break;
		}
	}
	if (c->sp.do_fsync && staged > 0)
		synced = syncfs(fds[0]) == 0;
	for (size_t i = 0; i < staged; i++) {
		int bad = c->sp.do_fsync && !synced && fsync(fds[i]) != 0;

		bad |= close(fds[i]) != 0;
		if (rc == 0 && bad) {
			fprintf(stderr, "taskspool submit: tmp/%s: %s\n",
			    tmp[i], strerror(errno));
			rc = EX_IOERR;
		}
	}
	for (; rc == 0 && moved < staged; moved++) {
		struct prepared *p = &v[moved];

		if (spool_move_excl(c->sp.dir[SPOOL_TMP], tmp[moved],
		    c->sp.dir[p->dest], p->file) != 0) {
			if (errno == EEXIST)
				fprintf(stderr, "taskspool submit: requestId "
				    "%s already used\n", p->t.request_id);
			else
				fprintf(stderr, "taskspool submit: %s: %s\n",
				    p->file, strerror(errno));
			rc = errno == EEXIST ? EX_CANTCREAT : EX_IOERR;
			break;
		}
		used[p->dest] = 1;
	}
	/* What was not moved: its tmp/ file and its batch entry go. */
	for (size_t i = moved; i < staged; i++) {
		(void)unlinkat(c->sp.dir[SPOOL_TMP], tmp[i], 0);
		if (v[i].t.batch_id[0] != '\0')
			batchdir_leave(&c->sp, v[i].t.batch_id,
			    v[i].t.request_id);
	}
	for (int d = 0; d < SPOOL_NDIRS; d++)
		if (used[d] && spool_sync_dir(&c->sp, c->sp.dir[d]) != 0 &&
		    rc == 0) {
			fprintf(stderr, "taskspool submit: fsync: %s\n",
			    strerror(errno));
			rc = EX_IOERR;
		}
	for (size_t i = 0; i < moved; i++) {
		if (v[i].dest != SPOOL_BLOCKED)
			wakeup_notify(&c->cfg, &c->sp, v[i].dest, v[i].file);
		if (c->json)
			printf("{\"requestId\":\"%s\",\"status\":\"%s\"}\n",
			    v[i].t.request_id, v[i].dest == SPOOL_BLOCKED ?
			    "BLOCKED" : "PENDING");
		else
			printf("%s\n", v[i].t.request_id);
	}
	fflush(stdout);
	*done += moved;
	free(tmp);
	free(fds);
	return rc;
}

/*
 * taskspool submit --ndjson FILE|-: one task file per line (NDJSON; empty
 * lines skipped), each validated as `submit FILE` does (submit_prepare);
 * batch and traceparent as its --batch and --traceparent.  Every line is
 * checked first: an invalid one, or a requestId given twice, submits
 * nothing (exit 65 or 73 naming the line).  Then the tasks are published
 * in groups of NDJSON_GROUP, one group commit each (ndjson_commit), their
 * requestIds printed in input order.  Returns the exit status.
 */
static int
submit_ndjson(struct cli *c, const char *path, const char *batch,
    const char *traceparent)
{
	struct buf in, one;
	struct nameset seen;
	struct prepared *v = NULL;
	const char *line;
	size_t pos = 0, len, lineno = 0, k = 0, done = 0;
	char what[48];
	int rc = 0;

	buf_init(&in, NDJSON_MAX);
	buf_init(&one, TASK_FILE_MAX + 1);
	if (nameset_init(&seen) != 0) {
		buf_fini(&in);
		return EX_OSERR;
	}
	if (read_all(path, &in) != 0) {
		fprintf(stderr, "taskspool submit: %s: %s\n", path,
		    errno == EFBIG ? "larger than 256 MiB" : errno ==
		    EFTYPE_NOTREG ? "not a regular file (use - to read "
		    "standard input)" : strerror(errno));
		rc = errno == EFBIG ? EX_DATAERR : EX_NOINPUT;
		goto out;
	}
	if (cli_open(c) != 0) {
		rc = EX_CONFIG;
		goto out;
	}
	/* Pass 1: every line valid, no requestId twice. */
	while (rc == 0 && next_line(&in, &pos, &line, &len)) {
		struct prepared p;

		lineno++;
		if (len == 0)
			continue;
		snprintf(what, sizeof(what), "line %zu: ", lineno);
		if (len > TASK_FILE_MAX) {
			fprintf(stderr, "taskspool submit: %slonger than %d "
			    "bytes\n", what, TASK_FILE_MAX);
			rc = EX_DATAERR;
			break;
		}
		one.len = 0;
		buf_append(&one, line, len);
		/* Parents: in the spool, or on an earlier line. */
		rc = submit_prepare(c, what, &one, 1, batch, traceparent,
		    &seen, &p);
		if (rc == 0 && nameset_find(&seen, p.t.request_id) != NULL) {
			fprintf(stderr, "taskspool submit: %srequestId %s is "
			    "given by an earlier line\n", what,
			    p.t.request_id);
			rc = EX_CANTCREAT;
		} else if (rc == 0)
			(void)nameset_add(&seen, p.t.request_id, NULL);
		prepared_fini(&p);
		k++;
	}
	if (rc != 0) {
		fputs("taskspool submit: nothing was submitted\n", stderr);
		goto out;
	}
	/* Pass 2: the groups. */
	if ((v = calloc(NDJSON_GROUP, sizeof(*v))) == NULL) {
		rc = EX_OSERR;
		goto out;
	}
	pos = lineno = 0;
	while (rc == 0) {
		size_t n = 0;

		while (n < NDJSON_GROUP && next_line(&in, &pos, &line, &len)) {
			lineno++;
			if (len == 0)
				continue;
			snprintf(what, sizeof(what), "line %zu: ", lineno);
			one.len = 0;
			buf_append(&one, line, len);
			/* seen holds every line's given id now; pass 1
			 * allowed only earlier ones as parents. */
			rc = submit_prepare(c, what, &one, 1, batch,
			    traceparent, &seen, &v[n]);
			n++;
			if (rc != 0)
				break;
		}
		if (rc == 0 && n > 0)
			rc = ndjson_commit(c, v, n, &done);
		for (size_t i = 0; i < n; i++)
			prepared_fini(&v[i]);
		if (n == 0)
			break;
	}
	if (rc != 0)
		fprintf(stderr, "taskspool submit: %zu of %zu task(s) were "
		    "submitted (their requestIds printed)\n", done, k);
out:
	free(v);
	nameset_fini(&seen);
	buf_fini(&one);
	buf_fini(&in);
	return rc;
}

static int
cmd_submit(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "code", required_argument, NULL, 'C' },
		{ "params", required_argument, NULL, 'p' },
		{ "id", required_argument, NULL, 'I' },
		{ "name", required_argument, NULL, 'N' },
		{ "delay", required_argument, NULL, 'D' },
		{ "at", required_argument, NULL, 'A' },
		{ "retries", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "priority", required_argument, NULL, 'P' },
		{ "wait", no_argument, NULL, 'w' },
		{ "wait-timeout", required_argument, NULL, 'W' },
		{ "traceparent", required_argument, NULL, 'T' },
		{ "batch", required_argument, NULL, 'B' },
		{ "after", required_argument, NULL, 'a' },
		{ "on-failure", required_argument, NULL, 'F' },
		{ "on-failure-mode", required_argument, NULL, 'M' },
		{ "require-tag", required_argument, NULL, 'R' },
		{ "concurrency-key", required_argument, NULL, 'K' },
		{ "max-per-key", required_argument, NULL, 'X' },
		{ "ndjson", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	json_t *after = NULL;		/* dependsOn, from --after */
	json_t *rtags = NULL;		/* requireTags, from --require-tag */
	const char *code = NULL, *params = NULL, *id = NULL, *name = NULL;
	const char *delay = NULL, *at = NULL, *retries = NULL, *timeout = NULL;
	const char *wait_timeout = NULL, *traceparent = NULL, *batch = NULL;
	const char *on_failure = NULL, *on_failure_mode = NULL;
	const char *priority = NULL;
	const char *conc_key = NULL, *max_per_key = NULL;
	int ch, waitp = 0, ndjson = 0, rc;
	struct buf in;
	struct prepared p;

	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'C': code = optarg; break;
		case 'p': params = optarg; break;
		case 'I': id = optarg; break;
		case 'N': name = optarg; break;
		case 'D': delay = optarg; break;
		case 'A': at = optarg; break;
		case 'r': retries = optarg; break;
		case 't': timeout = optarg; break;
		case 'P': priority = optarg; break;
		case 'K': conc_key = optarg; break;
		case 'X': max_per_key = optarg; break;
		case 'w': waitp = 1; break;
		case 'J': ndjson = 1; break;
		case 'W': wait_timeout = optarg; waitp = 1; break;
		case 'T': traceparent = optarg; break;
		case 'B': batch = optarg; break;
		case 'F': on_failure = optarg; break;
		case 'M': on_failure_mode = optarg; break;
		case 'R':
			/* a name of the grammar is ASCII: json_string() of it
			 * cannot fail for bytes that are not UTF-8; the codec
			 * refuses a duplicate, naming requireTags */
			if (!tags_name_ok(optarg, strlen(optarg))) {
				fprintf(stderr, "taskspool submit: "
				    "--require-tag: \"%s\" is not a tag name "
				    "([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\n",
				    optarg);
				json_decref(after);
				json_decref(rtags);
				return EX_USAGE;
			}
			if (rtags == NULL)
				rtags = json_array();
			json_array_append_new(rtags, json_string(optarg));
			break;
		case 'a':
			if (cli_deps_after(&after, optarg) != 0) {
				json_decref(after);
				json_decref(rtags);
				return EX_USAGE;
			}
			break;
		case 'h':
			json_decref(after);
			json_decref(rtags);
			fputs(top_usage, stdout);
			return 0;
		default:
			json_decref(after);
			json_decref(rtags);
			return EX_USAGE;
		}
	}
	{
		const char *nums[] = { retries, timeout, wait_timeout,
		    priority, max_per_key };
		const char *names[] = { "--retries", "--timeout",
		    "--wait-timeout", "--priority", "--max-per-key" };

		for (int i = 0; i < 5; i++)
			if (nums[i] != NULL && (nums[i][0] == '\0' ||
			    strspn(nums[i], "0123456789") != strlen(nums[i]) ||
			    strlen(nums[i]) > 9)) {
				fprintf(stderr, "taskspool submit: %s: \"%s\" "
				    "is not a whole number\n", names[i],
				    nums[i]);
				return EX_USAGE;
			}
	}
	{
		/* json_string() is NULL for bytes that are not UTF-8, and
		 * json_object_set_new() then drops the member silently. */
		const char *strs[] = { code, name, at, on_failure,
		    on_failure_mode, conc_key };
		const char *names[] = { "--code", "--name", "--at",
		    "--on-failure", "--on-failure-mode",
		    "--concurrency-key" };

		for (int i = 0; i < 6; i++) {
			json_t *s = strs[i] != NULL ? json_string(strs[i]) :
			    NULL;

			if (strs[i] != NULL && s == NULL) {
				fprintf(stderr, "taskspool submit: invalid "
				    "task: %s: not UTF-8 (RFC 8259 §8.1)\n",
				    names[i]);
				return EX_DATAERR;
			}
			json_decref(s);
		}
	}
	if (id != NULL && !spool_id_ok(id)) {
		fprintf(stderr, "taskspool submit: --id: \"%s\" is not a valid "
		    "requestId ([A-Za-z0-9][A-Za-z0-9_.-]{0,127})\n", id);
		return EX_USAGE;
	}
	if (delay != NULL && at != NULL) {
		fprintf(stderr, "taskspool submit: --delay and --at exclude "
		    "each other\n");
		return EX_USAGE;
	}
	if (code == NULL && (on_failure != NULL || on_failure_mode != NULL)) {
		fprintf(stderr, "taskspool submit: --on-failure and "
		    "--on-failure-mode go with --code (a task file names "
		    "onFailure and onFailureMode itself)\n");
		return EX_USAGE;
	}
	if (code == NULL && (conc_key != NULL || max_per_key != NULL)) {
		fprintf(stderr, "taskspool submit: --concurrency-key and "
		    "--max-per-key go with --code (a task file names "
		    "concurrencyKey and maxConcurrentPerKey itself)\n");
		json_decref(rtags);
		return EX_USAGE;
	}
	if (max_per_key != NULL && conc_key == NULL) {
		fprintf(stderr, "taskspool submit: --max-per-key goes with "
		    "--concurrency-key\n");
		json_decref(rtags);
		return EX_USAGE;
	}
	if (code == NULL && rtags != NULL) {
		fprintf(stderr, "taskspool submit: --require-tag goes with "
		    "--code (a task file names requireTags itself)\n");
		json_decref(rtags);
		return EX_USAGE;
	}
	if (ndjson && (code != NULL || params != NULL || id != NULL || name
	    != NULL || delay != NULL || at != NULL || retries != NULL ||
	    timeout != NULL || priority != NULL || waitp || after != NULL ||
	    rtags != NULL || conc_key != NULL || on_failure != NULL ||
	    on_failure_mode != NULL || optind + 1 != argc)) {
		fputs("usage: taskspool submit --ndjson FILE|- [--batch ID] "
		    "[--traceparent V]  (each line is a task file: it names "
		    "its own members)\n", stderr);
		json_decref(after);
		json_decref(rtags);
		return EX_USAGE;
	}
	if ((code == NULL) == (optind == argc) || argc - optind > 1) {
		fputs("usage: taskspool submit FILE|-  or  taskspool submit "
		    "--code CODE [options]  (see taskspool --help)\n", stderr);
		return EX_USAGE;
	}
	if (ndjson)
		return submit_ndjson(c, argv[optind], batch, traceparent);
	buf_init(&in, TASK_FILE_MAX + 1);
	task_init(&p.t);	/* prepared_fini() at out: */
	buf_init(&p.out, 0);
	if (code == NULL) {
		if (read_all(argv[optind], &in) != 0) {
			fprintf(stderr, "taskspool submit: %s: %s\n",
			    argv[optind], errno == EFBIG ? "larger than 1 MiB"
			    : errno == EFTYPE_NOTREG ? "not a regular file "
			    "(use - to read standard input)" : strerror(errno));
			rc = errno == EFBIG ? EX_DATAERR : EX_NOINPUT;
			goto out;
		}
	} else {
		/* Compose the task as JSON, then validate it like a file. */
		json_t *o = json_object();
		char *s;

		json_object_set_new(o, "taskCode", json_string(code));
		if (id != NULL)
			json_object_set_new(o, "requestId", json_string(id));
		if (name != NULL)
			json_object_set_new(o, "taskName", json_string(name));
		if (batch != NULL)
			json_object_set_new(o, "batchId", json_string(batch));
		if (delay != NULL) {
			json_object_set_new(o, "triggerType",
			    json_string("delay"));
			json_object_set_new(o, "delayMs", json_integer(
			    strtoll(delay, NULL, 10)));
			if (strspn(delay, "0123456789") != strlen(delay) ||
			    delay[0] == '\0') {
				fprintf(stderr, "taskspool submit: --delay: "
				    "\"%s\" is not a number of ms\n", delay);
				json_decref(o);
				rc = EX_USAGE;
				goto out;
			}
		}
		if (at != NULL) {
			json_object_set_new(o, "triggerType", json_string("at"));
			json_object_set_new(o, "runAt", json_string(at));
		}
		if (retries != NULL)
			json_object_set_new(o, "maxRetries", json_integer(
			    strtoll(retries, NULL, 10)));
		/* 0..9: the codec refuses others, naming priority. */
		if (priority != NULL)
			json_object_set_new(o, "priority", json_integer(
			    strtoll(priority, NULL, 10)));
		if (timeout != NULL)
			json_object_set_new(o, "timeoutSec", json_integer(
			    strtoll(timeout, NULL, 10)));
		if (after != NULL)
			json_object_set(o, "dependsOn", after);
		if (rtags != NULL)
			json_object_set(o, "requireTags", rtags);
		/* The codec checks the template (and expands it with
		 * --params), naming concurrencyKey. */
		if (conc_key != NULL)
			json_object_set_new(o, "concurrencyKey",
			    json_string(conc_key));
		if (max_per_key != NULL)
			json_object_set_new(o, "maxConcurrentPerKey",
			    json_integer(strtoll(max_per_key, NULL, 10)));
		if (on_failure != NULL)
			json_object_set_new(o, "onFailure",
			    json_string(on_failure));
		if (on_failure_mode != NULL)
			json_object_set_new(o, "onFailureMode",
			    json_string(on_failure_mode));
		s = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (s == NULL) {
			rc = EX_SOFTWARE;
			goto out;
		}
		/* --params is spliced raw so it reaches the hook as typed. */
		buf_append(&in, s, strlen(s) - 1);
		free(s);
		buf_puts(&in, ",\"executeParams\":");
		buf_puts(&in, params != NULL ? params : "{}");
		buf_puts(&in, "}");
	}
	if (cli_open(c) != 0) {
		rc = EX_CONFIG;
		goto out;
	}
	if ((rc = submit_prepare(c, "", &in, code == NULL, batch, traceparent,
	    NULL, &p)) != 0)
		goto out;
	/* The member entry before the task (spool/batchdir.h). */
	if (p.t.batch_id[0] != '\0' &&
	    (rc = cli_batch_join(&c->sp, p.t.batch_id, p.t.request_id)) != 0)
		goto out;
	/* With parents: straight into blocked/ (the leader releases it). */
	if (spool_publish(&c->sp, c->sp.dir[p.dest], p.file, p.out.data,
	    p.out.len, p.due, SPOOL_PUBLISH_EXCL) != 0) {
		if (p.t.batch_id[0] != '\0')
			batchdir_leave(&c->sp, p.t.batch_id, p.t.request_id);
		if (errno == EEXIST) {
			fprintf(stderr, "taskspool submit: requestId %s "
			    "already used\n", p.t.request_id);
			rc = EX_CANTCREAT;
		} else {
			fprintf(stderr, "taskspool submit: %s: %s\n", p.file,
			    strerror(errno));
			rc = EX_IOERR;
		}
		goto out;
	}
	if (p.dest != SPOOL_BLOCKED)
		wakeup_notify(&c->cfg, &c->sp, p.dest, p.file);
	if (c->json)
		printf("{\"requestId\":\"%s\",\"status\":\"%s\"}\n",
		    p.t.request_id, p.dest == SPOOL_BLOCKED ? "BLOCKED" :
		    "PENDING");
	else
		printf("%s\n", p.t.request_id);
	fflush(stdout);
	rc = waitp ? wait_for(c, p.t.request_id, wait_timeout != NULL ?
	    strtol(wait_timeout, NULL, 10) * 1000 : -1) : 0;
out:
	json_decref(after);
	json_decref(rtags);
	prepared_fini(&p);
	buf_fini(&in);
	return rc;
}

/* --- status --- */

struct status {
	enum spool_dir where;
	char node[65];
	char code[TASK_CODE_MAX + 1];
	int attempts;
	int64_t not_before;
	char traceparent[TRACEPARENT_LEN + 1];	/* "" when none */
	int priority;		/* 0..9 from the task file; -1 unknown */
};

/*
 * Whether finished task id's result is damaged: missing, or not a result
 * envelope (result_valid).  Returns 1 with the reason in why, or 0.
 */
static int
result_damaged(struct cli *c, const char *id, char *why, size_t whylen)
{
	char file[SPOOL_NAME_MAX], *data;
	size_t len;
	int bad;

	snprintf(file, sizeof(file), "%s.json", id);
	if ((data = spool_read_file(c->sp.dir[SPOOL_RESULTS], file, 64 << 20,
	    &len)) == NULL) {
		snprintf(why, whylen, "results/%s: %s", file, strerror(errno));
		return 1;
	}
	bad = !result_valid(data, len, why, whylen);
	free(data);
	return bad;
}

static int
get_status(struct cli *c, const char *id, struct status *st)
{
	char file[SPOOL_NAME_MAX];
	int dfd;
	char *data;
	size_t len;
	struct task t;
	struct task_error te;

	memset(st, 0, sizeof(*st));
	st->not_before = -1;
	st->priority = -1;
	if (spool_locate(&c->sp, id, &st->where, st->node) != 0) {
		struct stat sb;

		snprintf(file, sizeof(file), "%s.json", id);
		if (fstatat(c->sp.dir[SPOOL_CORRUPT], file, &sb,
		    AT_SYMLINK_NOFOLLOW) != 0)
			return -1;
		st->where = SPOOL_CORRUPT;
		return 0;
	}
	snprintf(file, sizeof(file), "%s.json", id);
	dfd = c->sp.dir[st->where];
	if (st->where == SPOOL_ACTIVE || st->where == SPOOL_QUEUE)
		dfd = spool_node_dir(&c->sp, st->where, st->node);
	data = dfd >= 0 ? spool_read_file(dfd, file, TASK_FILE_MAX, &len) :
	    NULL;
	if (dfd >= 0 && dfd != c->sp.dir[st->where])
		close(dfd);
	task_init(&t);
	if (data != NULL && task_decode(data, len, &t, &te) == 0) {
		snprintf(st->code, sizeof(st->code), "%s", t.task_code);
		st->attempts = (int)t.nattempts;
		st->not_before = t.not_before_ms;
		st->priority = t.priority >= 0 ? t.priority :
		    PRIORITY_DEFAULT;
		if (t.traceparent != NULL)
			snprintf(st->traceparent, sizeof(st->traceparent),
			    "%s", t.traceparent);
	}
	free(data);
	task_fini(&t);
	/* A finished task's file lacks its last attempt: the result has it. */
	if (st->where == SPOOL_DONE || st->where == SPOOL_FAILED ||
	    st->where == SPOOL_CANCELLED) {
		char status[16];
		size_t na;

		data = spool_read_file(c->sp.dir[SPOOL_RESULTS], file, 64 << 20,
		    &len);
		if (data != NULL && result_peek(data, len, status, &na) == 0)
			st->attempts = (int)na;
		free(data);
	}
	return 0;
}

/*
 * The reason a daemon gave for moving id to corrupt/ (the first line of
 * corrupt/<id>.json.reason, control bytes escaped) into out (len bytes),
 * or "no reason file" when there is none.
 */
static void
corrupt_reason(struct cli *c, const char *id, char *out, size_t len)
{
	char rn[SPOOL_NAME_MAX + 16], *why;

	snprintf(rn, sizeof(rn), "%s.json.reason", id);
	why = spool_read_file(c->sp.dir[SPOOL_CORRUPT], rn, 4096, NULL);
	if (why == NULL) {
		snprintf(out, len, "no reason file");
		return;
	}
	why[strcspn(why, "\n")] = '\0';
	log_safe(out, len, why);
	free(why);
}

static int
cmd_status(struct cli *c, int argc, char **argv)
{
	struct status st;
	struct index_entry ie;
	const char *state, *source = "spool";
	char when[TSTIME_BUF], reason[LIMITS_REASON_MAX] = "", why[256];
	int damaged = 0;
	int rc;

	if (argc == 1) {
		if ((rc = cli_open(c)) != 0)
			return rc;
		spool_close(&c->sp);
		return cli_top_summary(&c->cfg, c->json);
	}
	if (argc != 2 || argv[1][0] == '-') {
		fputs("usage: taskspool status [ID]\n", argc == 2 &&
		    strcmp(argv[1], "-h") == 0 ? stdout : stderr);
		return argc == 2 && strcmp(argv[1], "-h") == 0 ? 0 : EX_USAGE;
	}
	if ((rc = cli_open(c)) != 0)
		return rc;
	if (!spool_id_ok(argv[1])) {
		fprintf(stderr, "taskspool status: \"%s\" is not a valid "
		    "requestId\n", argv[1]);
		return EX_USAGE;
	}
	/* Cluster mode: the Redis index when it has the task (index.h). */
	if (index_client(&c->cfg, &c->sp, argv[1], 0, &ie) == 1) {
		memset(&st, 0, sizeof(st));
		st.where = ie.dir;
		snprintf(st.node, sizeof(st.node), "%s", ie.node);
		snprintf(st.code, sizeof(st.code), "%s", ie.code);
		st.attempts = (int)ie.attempts;
		st.not_before = ie.not_before_ms;
		st.traceparent[0] = '\0';
		st.priority = -1;
		state = ie.state;
		source = "index";
	} else if (get_status(c, argv[1], &st) != 0) {
		fprintf(stderr, "taskspool status: no task %s\n", argv[1]);
		return EX_NOINPUT;
	} else
		state = limits_state_name(&c->sp, st.where, argv[1]);
	if (st.priority < 0) {
		struct status fs;	/* the index has none: the file has */

		if (get_status(c, argv[1], &fs) == 0)
			st.priority = fs.priority;
	}
	if (strcmp(state, "WAITING") == 0)
		(void)limits_waiting_reason(&c->sp, argv[1], reason,
		    sizeof(reason));
	else if (st.where == SPOOL_CORRUPT)
		corrupt_reason(c, argv[1], reason, sizeof(reason));
	else
		cli_hold_reason(&c->sp, argv[1], st.where, reason,
		    sizeof(reason));
	/* A finished task whose result is torn: said, and exit 65. */
	if ((st.where == SPOOL_DONE || st.where == SPOOL_FAILED || st.where ==
	    SPOOL_CANCELLED) && result_damaged(c, argv[1], why,
	    sizeof(why))) {
		damaged = 1;
		fprintf(stderr, "taskspool status: %s: the result is damaged "
		    "(%s); the leader daemon rebuilds it\n", argv[1], why);
	}
	if (c->json) {
		json_t *o = json_object();
		char *s;

		json_object_set_new(o, "requestId", json_string(argv[1]));
		json_object_set_new(o, "status", json_string(state));
		json_object_set_new(o, "source", json_string(source));
		json_object_set_new(o, "directory",
		    json_string(spool_dir_name(st.where)));
		json_object_set_new(o, "taskCode", json_string(st.code));
		json_object_set_new(o, "node", st.node[0] ?
		    json_string(st.node) : json_null());
		json_object_set_new(o, "attempt", json_integer(st.attempts +
		    (st.where == SPOOL_ACTIVE)));
		json_object_set_new(o, "notBefore", st.not_before >= 0 &&
		    st.where == SPOOL_DELAYED ? json_string(tstime_format_ms(
		    when, sizeof(when), st.not_before)) : json_null());
		if (reason[0] != '\0')
			json_object_set_new(o, "reason", json_string(reason));
		{
			/* The index has no traceparent: the task file has. */
			struct status fs;

			if (st.traceparent[0] == '\0' && get_status(c,
			    argv[1], &fs) == 0)
				memcpy(st.traceparent, fs.traceparent,
				    sizeof(st.traceparent));
			if (st.priority >= 0)
				json_object_set_new(o, "priority",
				    json_integer(st.priority));
			if (st.traceparent[0] != '\0')
				json_object_set_new(o, "traceparent",
				    json_string(st.traceparent));
		}
		if (damaged)
			json_object_set_new(o, "resultDamaged", json_true());
		s = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		printf("%s\n", s);
		free(s);
		return damaged ? EX_DATAERR : 0;
	}
	printf("%s %s", argv[1], state);
	if (damaged)
		printf(" (result damaged)");
	if (st.where == SPOOL_ACTIVE)
		printf(" on %s (attempt %d)%s%s%s", st.node, st.attempts + 1,
		    reason[0] != '\0' ? " (" : "", reason, reason[0] != '\0' ?
		    ")" : "");
	else if (st.where == SPOOL_DELAYED && st.not_before >= 0)
		printf(" (waiting until %s, %d attempt(s) so far)",
		    tstime_format_ms(when, sizeof(when), st.not_before),
		    st.attempts);
	else if (reason[0] != '\0')
		printf(" (%s)", reason);
	/* Said only when it is not the default, so that the usual line
	 * stays as it was. */
	if (st.priority >= 0 && st.priority != PRIORITY_DEFAULT)
		printf(" priority %d", st.priority);
	printf("\n");
	if (st.where == SPOOL_BLOCKED)
		cli_deps_print_waiting(&c->sp, argv[1]);
	return damaged ? EX_DATAERR : 0;
}

/* --- result --- */

static int
cmd_result(struct cli *c, int argc, char **argv)
{
	char file[SPOOL_NAME_MAX], *data;
	size_t len;
	int rc;
	struct status st;

	if (argc != 2 || argv[1][0] == '-') {
		fputs("usage: taskspool result ID\n", stderr);
		return EX_USAGE;
	}
	if ((rc = cli_open(c)) != 0)
		return rc;
	if (!spool_id_ok(argv[1])) {
		fprintf(stderr, "taskspool result: \"%s\" is not a valid "
		    "requestId\n", argv[1]);
		return EX_USAGE;
	}
	snprintf(file, sizeof(file), "%s.json", argv[1]);
	if (get_status(c, argv[1], &st) == 0 && (st.where == SPOOL_INCOMING ||
	    st.where == SPOOL_DELAYED || st.where == SPOOL_ACTIVE ||
	    st.where == SPOOL_QUEUE)) {
		fprintf(stderr, "taskspool result: %s has no result yet "
		    "(%s)\n", argv[1], state_name(st.where));
		return EX_UNAVAILABLE;
	}
	data = spool_read_file(c->sp.dir[SPOOL_RESULTS], file, 64 << 20, &len);
	if (data == NULL) {
		fprintf(stderr, "taskspool result: no result for %s\n",
		    argv[1]);
		return EX_NOINPUT;
	}
	{
		char why[256];

		/* A torn result is a missing one (issue 11 item 5): never
		 * printed as if it were the answer. */
		if (!result_valid(data, len, why, sizeof(why))) {
			fprintf(stderr, "taskspool result: %s/results/%s is "
			    "damaged: %s; the leader daemon rebuilds it from "
			    "the task file (the damaged copy is kept in "
			    "corrupt/)\n", c->sp.path, file, why);
			free(data);
			return EX_DATAERR;
		}
	}
	fwrite(data, 1, len, stdout);
	free(data);
	return 0;
}

/* --- logs --- */

static int
cmd_logs(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "attempt", required_argument, NULL, 'a' },
		{ "stdout", no_argument, NULL, 'O' },
		{ "stderr", no_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int follow = 0, attempt = 0, want = 3, ch, rc, dfd, shown = 0;
	const char *id;
	off_t pos[2] = { 0, 0 };

	while ((ch = getopt_long(argc, argv, "fa:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'f': follow = 1; break;
		case 'a': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*optarg == '\0' || *end != '\0' || v < 1 ||
			    v > 1000000) {
				fprintf(stderr, "taskspool logs: -a: \"%s\" is "
				    "not an attempt number (1, 2, ...)\n",
				    optarg);
				return EX_USAGE;
			}
			attempt = (int)v;
			break;
		}
		case 'O': want = 1; break;
		case 'E': want = 2; break;
		case 'h':
			fputs("usage: taskspool logs ID [-f] [-a N] "
			    "[--stdout|--stderr]\n", stdout);
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fputs("usage: taskspool logs ID [-f] [-a N] "
		    "[--stdout|--stderr]\n", stderr);
		return EX_USAGE;
	}
	id = argv[optind];
	if ((rc = cli_open(c)) != 0)
		return rc;
	if (!spool_id_ok(id)) {
		fprintf(stderr, "taskspool logs: \"%s\" is not a valid "
		    "requestId\n", id);
		return EX_USAGE;
	}
	for (;;) {
		struct status st;
		int have = get_status(c, id, &st) == 0;
		int a = attempt;

		if (!have) {
			fprintf(stderr, "taskspool logs: no task %s\n", id);
			return EX_NOINPUT;
		}
		if (a == 0)
			a = st.attempts + (st.where == SPOOL_ACTIVE ? 1 : 0);
		if (a == 0)
			a = 1;
		if (attempt > 0 && attempt > st.attempts +
		    (st.where == SPOOL_ACTIVE ? 1 : 0)) {
			fprintf(stderr, "taskspool logs: %s has no attempt %d "
			    "(it has %d)\n", id, attempt, st.attempts +
			    (st.where == SPOOL_ACTIVE ? 1 : 0));
			return EX_NOINPUT;
		}
		if (attempt == 0 && a != shown) {
			/* A new attempt started while following: its logs
			 * are new files, read from their beginning. */
			if (shown != 0 && follow)
				printf("--- attempt %d ---\n", a);
			pos[0] = pos[1] = 0;
			shown = a;
		}
		dfd = openat(c->sp.dir[SPOOL_LOGS], id, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		for (int s = 0; s < 2 && dfd >= 0; s++) {
			char lname[64], chunk[8192];
			int fd;
			ssize_t n;

			if (!(want & (1 << s)))
				continue;
			snprintf(lname, sizeof(lname), "%d.%s", a,
			    s == 0 ? "out" : "err");
			fd = openat(dfd, lname, O_RDONLY | O_NOFOLLOW |
			    O_CLOEXEC);
			if (fd < 0)
				continue;
			lseek(fd, pos[s], SEEK_SET);
			while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
				fwrite(chunk, 1, (size_t)n, s == 0 ? stdout :
				    stderr);
				pos[s] += n;
			}
			close(fd);
		}
		if (dfd >= 0)
			close(dfd);
		fflush(stdout);
		if (!follow || st.where == SPOOL_DONE ||
		    st.where == SPOOL_FAILED || st.where == SPOOL_CANCELLED)
			break;
		usleep(200000);
	}
	return 0;
}

/* --- list --- */

static int
list_dir(struct cli *c, int dfd, enum spool_dir where, const char *node,
    const char *code, const char *state, json_t *arr)
{
	DIR *dp;
	struct dirent *de;

	if ((dp = spool_opendir(dfd)) == NULL) {
		return -1;
	}
	while ((de = readdir(dp)) != NULL) {
		size_t len, n = strlen(de->d_name);
		char *data, id[TASK_ID_MAX + 1], lastnode[CONFIG_NODE_MAX + 1];
		struct task t;
		struct task_error te;
		const char *shown = node;	/* the node column */
		int prio = -1;		/* shown while unfinished */
		char pcol[24] = "";

		if (de->d_name[0] == '.' || n <= 5 || n - 5 > TASK_ID_MAX ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		memcpy(id, de->d_name, n - 5);
		id[n - 5] = '\0';
		data = spool_read_file(dfd, de->d_name, TASK_FILE_MAX, &len);
		task_init(&t);
		if (data == NULL || task_decode(data, len, &t, &te) != 0)
			snprintf(t.task_code, sizeof(t.task_code), "?");
		else if (where != SPOOL_DONE && where != SPOOL_FAILED &&
		    where != SPOOL_CANCELLED)
			prio = t.priority >= 0 ? t.priority : PRIORITY_DEFAULT;
		free(data);
		if (where == SPOOL_DONE || where == SPOOL_FAILED ||
		    where == SPOOL_CANCELLED) {
			/* The final attempt (count, node) is only in the
			 * result. */
			json_t *r = NULL, *a;

			data = spool_read_file(c->sp.dir[SPOOL_RESULTS],
			    de->d_name, 64 << 20, &len);
			if (data != NULL && result_valid(data, len, NULL, 0))
				r = jsontext_loadb(data, len, 0, NULL);
			else	/* torn or missing (issue 11 item 5) */
				shown = "(result-damaged)";
			if (json_is_array(a = json_object_get(r, "attempts")))
				t.nattempts = json_array_size(a);
			if (json_string_length(json_object_get(r, "node")) > 0
			    && json_string_length(json_object_get(r, "node")) <
			    sizeof(lastnode)) {
				snprintf(lastnode, sizeof(lastnode), "%s",
				    json_string_value(json_object_get(r,
				    "node")));
				shown = lastnode;
			}
			json_decref(r);
			free(data);
		}
		if ((code == NULL || strcmp(code, t.task_code) == 0) &&
		    (state == NULL || strcmp(state, limits_state_name(&c->sp,
		    where, id)) == 0)) {
			char reason[LIMITS_REASON_MAX] = "";

			/* Why a WAITING task waits (maxconc.h, router.h). */
			if (strcmp(limits_state_name(&c->sp, where, id),
			    "WAITING") == 0)
				(void)limits_waiting_reason(&c->sp, id, reason,
				    sizeof(reason));
			if (arr != NULL) {
				json_t *o = json_object();

				json_object_set_new(o, "requestId",
				    json_string(id));
				json_object_set_new(o, "status",
				    json_string(limits_state_name(&c->sp,
				    where, id)));
				json_object_set_new(o, "taskCode",
				    json_string(t.task_code));
				json_object_set_new(o, "node", shown ?
				    json_string(shown) : json_null());
				json_object_set_new(o, "attempts",
				    json_integer((json_int_t)t.nattempts));
				if (prio >= 0)
					json_object_set_new(o, "priority",
					    json_integer(prio));
				if (reason[0] != '\0')
					json_object_set_new(o, "reason",
					    json_string(reason));
				json_array_append_new(arr, o);
			} else {
				/* The priority only when not the default, so
				 * the usual line keeps its four columns. */
				if (prio >= 0 && prio != PRIORITY_DEFAULT)
					snprintf(pcol, sizeof(pcol),
					    "  priority %d", prio);
				printf("%-10s %-40s %-20s %s%s%s%s\n",
				    limits_state_name(&c->sp, where, id),
				    id, t.task_code, shown ? shown : "-", pcol,
				    reason[0] ? "  " : "", reason);
			}
		}
		task_fini(&t);
	}
	closedir(dp);
	return 0;
}

static int
cmd_list(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "state", required_argument, NULL, 's' },
		{ "code", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	static const enum spool_dir order[] = { SPOOL_BLOCKED, SPOOL_INCOMING,
		SPOOL_DELAYED, SPOOL_QUEUE, SPOOL_ACTIVE, SPOOL_HOLD, SPOOL_DONE,
		SPOOL_FAILED, SPOOL_CANCELLED };
	const char *state = NULL, *code = NULL;
	json_t *arr = NULL;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 's': state = optarg; break;
		case 'C': code = optarg; break;
		case 'h':
			fputs("usage: taskspool list [--state PENDING|WAITING|"
			    "RUNNING|DISPATCHED|HELD|SUCCESS|FAILED|CANCELLED|"
			    "CORRUPT|BLOCKED] [--code C]\n", stdout);
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "taskspool list: unexpected argument \"%s\"\n",
		    argv[optind]);
		return EX_USAGE;
	}
	if (state != NULL && strcmp(state, "PENDING") && strcmp(state,
	    "WAITING") && strcmp(state, "RUNNING") && strcmp(state, "DISPATCHED") && strcmp(state,
	    "SUCCESS") && strcmp(state, "FAILED") && strcmp(state,
	    "CANCELLED") && strcmp(state, "CORRUPT") && strcmp(state, "HELD") &&
	    strcmp(state, "BLOCKED")) {
		fprintf(stderr, "taskspool list: --state: \"%s\" is not one "
		    "of PENDING WAITING RUNNING DISPATCHED HELD SUCCESS FAILED "
		    "CANCELLED CORRUPT BLOCKED\n", state);
		return EX_USAGE;
	}
	if ((rc = cli_open(c)) != 0)
		return rc;
	if (c->json)
		arr = json_array();
	if (state != NULL && strcmp(state, "CORRUPT") == 0) {
		DIR *dp = spool_opendir(c->sp.dir[SPOOL_CORRUPT]);
		struct dirent *de;

		while (dp != NULL && (de = readdir(dp)) != NULL) {
			size_t n = strlen(de->d_name);
			char *why;
			char rn[600];

			if (de->d_name[0] == '.' || (n > 7 && strcmp(de->d_name
			    + n - 7, ".reason") == 0))
				continue;
			snprintf(rn, sizeof(rn), "%.500s.reason", de->d_name);
			why = spool_read_file(c->sp.dir[SPOOL_CORRUPT], rn,
			    4096, NULL);
			if (why != NULL && strchr(why, '\n'))
				*strchr(why, '\n') = '\0';
			if (arr != NULL) {
				json_t *o = json_object();

				json_object_set_new(o, "file",
				    json_string(de->d_name));
				json_object_set_new(o, "reason", why ?
				    json_string(why) : json_null());
				json_array_append_new(arr, o);
			} else
				printf("CORRUPT    %-40s %s\n", de->d_name,
				    why ? why : "(no reason file)");
			free(why);
		}
		if (dp != NULL)
			closedir(dp);
	} else
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			enum spool_dir d = order[i];

			if (state != NULL && strcmp(state, state_name(d)) != 0
			    && (strcmp(state, "WAITING") != 0 || (d !=
			    SPOOL_INCOMING && d != SPOOL_QUEUE)))
				continue;
			if (d == SPOOL_ACTIVE || d == SPOOL_QUEUE) {
				DIR *dp = spool_opendir(c->sp.dir[d]);
				struct dirent *de;

				while (dp != NULL &&
				    (de = readdir(dp)) != NULL) {
					int nd;

					if (!spool_code_ok(de->d_name))
						continue;
					nd = spool_node_dir(&c->sp, d,
					    de->d_name);
					if (nd >= 0) {
						list_dir(c, nd, d, de->d_name,
						    code, state, arr);
						close(nd);
					}
				}
				if (dp != NULL)
					closedir(dp);
			} else
				list_dir(c, c->sp.dir[d], d, NULL, code,
				    state, arr);
		}
	if (arr != NULL) {
		char *s = json_dumps(arr, JSON_COMPACT);

		printf("%s\n", s);
		free(s);
		json_decref(arr);
	}
	return 0;
}

/* --- cancel, retry --- */

/*
 * Cancel: publish state/cancel/<id> (a group-writable directory, so any
 * submitter may ask) and let the daemons act: the owner kills a running
 * hook; any daemon claims a pending task and concludes it CANCELLED with
 * its result written first.  Waits up to 5 s to report the outcome.
 */
static int
cmd_cancel(struct cli *c, int argc, char **argv)
{
	struct status st;
	int rc, tty = isatty(2);
	int64_t until;

	if (argc != 2 || argv[1][0] == '-') {
		fputs("usage: taskspool cancel ID\n", stderr);
		return EX_USAGE;
	}
	if ((rc = cli_open(c)) != 0)
		return rc;
	if (!spool_id_ok(argv[1])) {
		fprintf(stderr, "taskspool cancel: \"%s\" is not a valid "
		    "requestId\n", argv[1]);
		return EX_USAGE;
	}
	if (get_status(c, argv[1], &st) != 0) {
		fprintf(stderr, "taskspool cancel: no task %s\n", argv[1]);
		return EX_NOINPUT;
	}
	if (st.where == SPOOL_DONE || st.where == SPOOL_FAILED ||
	    st.where == SPOOL_CANCELLED || st.where == SPOOL_CORRUPT) {
		fprintf(stderr, "taskspool cancel: %s already finished (%s)\n",
		    argv[1], state_name(st.where));
		return EX_UNAVAILABLE;
	}
	if (c->sp.cancel < 0 || spool_publish(&c->sp, c->sp.cancel, argv[1],
	    "", 0, -1, 0) != 0) {
		fprintf(stderr, "taskspool cancel: state/cancel/%s: %s\n",
		    argv[1], strerror(errno));
		return EX_IOERR;
	}
	until = tstime_mono_ms() + 5000;
	while (tstime_mono_ms() < until) {
		if (get_status(c, argv[1], &st) == 0 &&
		    (st.where == SPOOL_DONE || st.where == SPOOL_FAILED ||
		    st.where == SPOOL_CANCELLED)) {
			if (tty)
				fprintf(stderr, "\r\033[K");
			if (st.where == SPOOL_CANCELLED) {
				printf("%s CANCELLED\n", argv[1]);
				return 0;
			}
			fprintf(stderr, "taskspool cancel: %s finished as %s "
			    "before the cancel took effect\n", argv[1],
			    state_name(st.where));
			return EX_UNAVAILABLE;
		}
		if (tty)
			fprintf(stderr, "\r\033[Kcancelling %s (%s)...",
			    argv[1], state_name(st.where));
		usleep(50000);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	printf("%s cancel requested (still %s: no daemon has acted yet; it "
	    "takes effect when one does)\n", argv[1], state_name(st.where));
	return 0;
}

static int
cmd_retry(struct cli *c, int argc, char **argv)
{
	char warn[160];
	enum spool_dir where = SPOOL_NDIRS;
	size_t attempt = 0;
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		fputs("usage: taskspool retry ID\n", stderr);
		return EX_USAGE;
	}
	if ((rc = cli_open(c)) != 0)
		return rc;
	if (!spool_id_ok(argv[1])) {
		fprintf(stderr, "taskspool retry: \"%s\" is not a valid "
		    "requestId\n", argv[1]);
		return EX_USAGE;
	}
	if (task_retry(&c->cfg, &c->sp, argv[1], &attempt, &where, warn,
	    sizeof(warn)) != 0) {
		if (errno == ENOENT) {
			fprintf(stderr, "taskspool retry: no task %s\n",
			    argv[1]);
			return EX_NOINPUT;
		}
		if (errno == EBUSY) {
			fprintf(stderr, "taskspool retry: %s is %s; only "
			    "FAILED or CANCELLED tasks can be retried\n",
			    argv[1], state_name(where));
			return EX_UNAVAILABLE;
		}
		if (errno == EALREADY) {
			fprintf(stderr, "taskspool retry: %s: its job's run %s "
			    "is pending or running (overlap forbid or "
			    "replace); retry when it has ended\n", argv[1],
			    warn);
			return EX_TEMPFAIL;
		}
		fprintf(stderr, "taskspool retry: %s/%s.json: %s\n",
		    spool_dir_name(where), argv[1], errno == EBADMSG ?
		    "does not decode as a task" : strerror(errno));
		return EX_IOERR;
	}
	if (warn[0] != '\0')
		fprintf(stderr, "taskspool retry: warning: %s\n", warn);
	printf("%s PENDING (attempt %zu)\n", argv[1], attempt);
	return 0;
}

/* --- --wait --- */

/*
 * How many daemons of the spool are alive now: in the node registry
 * (coord_nodes: heartbeat files, or Redis in cluster mode) with a
 * heartbeat younger than 3 heartbeat_ms, the rule of `taskspool nodes`.
 * -1 when the registry cannot be read (then nothing is said).
 */
static int
live_daemons(struct cli *c)
{
	struct coord *co;
	struct coord_node *v = NULL;
	size_t n = 0;
	char why[512];
	int64_t now = tstime_now_ms();
	int alive = 0;

	if ((co = coord_open(&c->cfg, "", &c->sp, why, sizeof(why))) == NULL)
		return -1;
	if (coord_nodes(co, &v, &n, why, sizeof(why)) != 0) {
		coord_close(co);
		return -1;
	}
	coord_close(co);
	for (size_t i = 0; i < n; i++)
		alive += coord_node_alive(&v[i], now, c->cfg.heartbeat_ms);
	free(v);
	return alive;
}

/*
 * --wait: follow task id until it ends; progress on stderr (one line
 * rewritten on a terminal, a line per state otherwise).  Says so, once,
 * when no live daemon serves the spool (checked at the start and every
 * WAIT_LIVE_CHECK_MS): the task then waits in the spool until one
 * starts.  limit_ms >= 0 (--wait-timeout) ends the wait after that long
 * with EX_TEMPFAIL, the task left where it is.  Returns the exit status
 * of `submit --wait` (taskspool(1), EXIT STATUS).
 */
#define WAIT_LIVE_CHECK_MS	5000
static int
wait_for(struct cli *c, const char *id, int64_t limit_ms)
{
	int tty = isatty(2), said = 0;
	int64_t start = tstime_mono_ms(), next_check = start;
	const char *last = "";

	for (;;) {
		struct status st;
		const char *s;
		int64_t now = tstime_mono_ms();

		if (now >= next_check) {
			next_check = now + WAIT_LIVE_CHECK_MS;
			if (!said && live_daemons(c) == 0) {
				if (tty)
					fprintf(stderr, "\r\033[K");
				fprintf(stderr, "taskspool: no live daemon "
				    "serves %s (`taskspool nodes` shows none "
				    "alive): %s waits in the spool until one "
				    "starts (taskspoold -s %s)\n", c->cfg.spool,
				    id, c->cfg.spool);
				said = 1;
			}
		}
		if (limit_ms >= 0 && now - start >= limit_ms) {
			if (tty)
				fprintf(stderr, "\r\033[K");
			fprintf(stderr, "%s still %s after --wait-timeout %lld "
			    "s: not waiting longer (the task goes on; "
			    "`taskspool status %s`)\n", id, last[0] != '\0' ?
			    last : "PENDING", (long long)(limit_ms / 1000), id);
			return EX_TEMPFAIL;
		}

		if (get_status(c, id, &st) != 0) {
			usleep(20000);
			continue;
		}
		s = state_name(st.where);
		if (st.where == SPOOL_CORRUPT) {
			char why[1024];

			corrupt_reason(c, id, why, sizeof(why));
			if (tty)
				fprintf(stderr, "\r\033[K");
			fprintf(stderr, "%s rejected by the daemon (corrupt/): "
			    "%s\n", id, why);
			return EX_DATAERR;
		}
		if (st.where == SPOOL_DONE || st.where == SPOOL_FAILED ||
		    st.where == SPOOL_CANCELLED) {
			if (tty)
				fprintf(stderr, "\r\033[K");
			fprintf(stderr, "%s %s after %.1f s\n", id, s,
			    (double)(tstime_mono_ms() - start) / 1000.0);
			return st.where == SPOOL_DONE ? 0 :
			    st.where == SPOOL_FAILED ? EXIT_TASK_FAILED :
			    EXIT_TASK_CANCELLED;
		}
		if (tty)
			fprintf(stderr, "\r\033[K%s %s%s%s (attempt %d) %.1f s",
			    id, s, st.node[0] ? " on " : "", st.node,
			    st.attempts + (st.where == SPOOL_ACTIVE),
			    (double)(tstime_mono_ms() - start) / 1000.0);
		else if (strcmp(s, last) != 0)
			fprintf(stderr, "%s %s\n", id, s);
		last = s;
		usleep(tty ? 100000 : 20000);
	}
}

/*
 * Whether a subcommand's arguments ask for its help: "--help" anywhere
 * before a "--", or "-h" as the first argument (elsewhere "-h" may be an
 * option's value).
 */
static int
wants_help(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "-h") == 0)
		return 1;
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0)
			return 1;
	return 0;
}

/*
 * `taskspool CMD --help`: the lines of top_usage that describe CMD (a
 * line "  CMD ..." and the lines indented deeper that continue it), the
 * global options and the exit status, on stdout; exit 0.  An unknown CMD
 * gets the whole usage on stderr and EX_USAGE.  One text for both, so
 * `--help` and `taskspool --help` never disagree.
 */
static int
command_help(const char *cmd)
{
	size_t cl = strlen(cmd);
	const char *p = top_usage, *opts = strstr(top_usage, "\noptions:");
	int found = 0, in = 0;

	while (p < opts) {
		const char *nl = strchr(p, '\n');
		size_t len = (size_t)(nl - p) + 1;

		if (strncmp(p, "  ", 2) == 0 && p[2] != ' ')
			in = strncmp(p + 2, cmd, cl) == 0 &&
			    (p[2 + cl] == ' ' || p[2 + cl] == '\n');
		else if (strncmp(p, "   ", 3) != 0)
			in = 0;
		if (in) {
			if (!found)
				fputs("usage: taskspool [-c file] [-s spool] "
				    "[--json] <one of the lines below>\n",
				    stdout);
			fwrite(p, 1, len, stdout);
			found = 1;
		}
		p = nl + 1;
	}
	if (!found) {
		fprintf(stderr, "taskspool: unknown command \"%s\"\n%s", cmd,
		    top_usage);
		return EX_USAGE;
	}
	fputs(opts + 1, stdout);
	fputs("see taskspool(1) for each command's options.\n", stdout);
	return 0;
}

/* Whether cmd prints its own detailed usage for this --help, with or
 * without a spool: jobs, cron, logs, list, init and nodes wherever
 * --help is;
 * apps and the records commands when it comes first. */
static int
own_help(const char *cmd, int argc, char **argv)
{
	static const char *const any[] = { "jobs", "cron", "logs", "list",
		"init", "nodes", "hold", "release" };
	static const char *const first[] = { "apps", "db", "history",
		"stats", "purge" };

	for (size_t i = 0; i < sizeof(any) / sizeof(any[0]); i++)
		if (strcmp(cmd, any[i]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		if (strcmp(cmd, first[i]) == 0)
			return argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
			    strcmp(argv[1], "-h") == 0);
	return 0;
}

static const char *usage_cmd;	/* the command cli_run dispatched to */
static int cli_run(int argc, char **argv);

int
cli_main(int argc, char **argv)
{
	int rc;

	/* getopt names the program by argv[0]: not the path it was run by. */
	if (argc > 0)
		argv[0] = (char *)"taskspool";
	rc = cli_run(argc, argv);
	if (rc == EX_USAGE && usage_cmd != NULL)
		fprintf(stderr, "try 'taskspool --help' (commands and their "
		    "options) or taskspool(1)\n");
	return rc;
}

static int
cli_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 } };
	struct cli c;
	const char *cmd;
	int ch;

	memset(&c, 0, sizeof(c));
	config_defaults(&c.cfg);
	/* An empty $TASKSPOOL_SPOOL is no spool path (the shell's
	 * TASKSPOOL_SPOOL= leaves it set): as if unset. */
	if ((c.spool_arg = getenv("TASKSPOOL_SPOOL")) != NULL &&
	    c.spool_arg[0] == '\0')
		c.spool_arg = NULL;
	if (c.spool_arg != NULL)
		c.spool_from = "from $TASKSPOOL_SPOOL";
	while ((ch = getopt_long(argc, argv, "+c:s:hV", lo, NULL)) != -1) {
		switch (ch) {
		case 'c': c.cfile = optarg; break;
		case 's':
			if (optarg[0] == '\0') {
				fprintf(stderr, "taskspool: -s: the spool "
				    "directory must not be empty\n");
				return EX_USAGE;
			}
			c.spool_arg = optarg;
			c.spool_from = "from -s";
			break;
		case 'J': c.json = 1; break;
		case 'V':
			printf("taskspool %s\n", TASKSPOOL_VERSION);
			return 0;
		case 'h':
			fputs(top_usage, stdout);
			return 0;
		default:
			fputs(top_usage, stderr);
			return EX_USAGE;
		}
	}
	if (optind == argc) {
		fputs(top_usage, stderr);
		return EX_USAGE;
	}
	cmd = argv[optind];
	usage_cmd = cmd;
	argc -= optind;
	argv += optind;
	optind = 0;	/* 0, not 1: glibc re-initialises getopt fully, so
			 * subcommands accept options after their operands */
	/* Allow --json after the command name too. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0) {
			c.json = 1;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) *
			    sizeof(*argv));
			argc--;
			i--;
		}
	/* The commands with a usage text of their own print it; the
	 * others their lines of top_usage. */
	if (wants_help(argc, argv) && !own_help(cmd, argc, argv))
		return command_help(cmd);
	if (strcmp(cmd, "init") == 0)
		return cmd_init(&c, argc, argv);
	if (strcmp(cmd, "submit") == 0)
		return cmd_submit(&c, argc, argv);
	if (strcmp(cmd, "status") == 0)
		return cmd_status(&c, argc, argv);
	if (strcmp(cmd, "result") == 0)
		return cmd_result(&c, argc, argv);
	if (strcmp(cmd, "logs") == 0)
		return cmd_logs(&c, argc, argv);
	if (strcmp(cmd, "list") == 0)
		return cmd_list(&c, argc, argv);
	if (strcmp(cmd, "cancel") == 0)
		return cmd_cancel(&c, argc, argv);
	if (strcmp(cmd, "retry") == 0)
		return cmd_retry(&c, argc, argv);
	if (strcmp(cmd, "hold") == 0 || strcmp(cmd, "release") == 0) {
		int rc;

		if (wants_help(argc, argv)) {	/* also without a spool */
			cli_hold_usage(stdout);
			return 0;
		}
		rc = cli_open(&c);
		return rc != 0 ? rc : cli_hold_main(&c.cfg, &c.sp, c.json,
		    argc, argv);
	}
	if (strcmp(cmd, "callbacks") == 0)
		return cmd_callbacks(&c, argc, argv);
	if (strcmp(cmd, "cron") == 0)
		return cli_cron_main(argc, argv);
	if (strcmp(cmd, "top") == 0) {
		int rc = cli_open(&c);

		if (rc != 0)
			return rc;
		spool_close(&c.sp);
		return cli_top_main(argc, argv, &c.cfg);
	}
	if (strcmp(cmd, "jobs") == 0) {
		char why[1024];

		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
		    strcmp(argv[1], "-h") == 0))
			return cli_jobs_main(argc, argv, NULL, NULL, 1, c.json);
		if (config_locate(&c.cfg, c.cfile, c.spool_arg, why,
		    sizeof(why)) != 0 || config_finish(&c.cfg, why,
		    sizeof(why)) != 0) {
			fprintf(stderr, "taskspool: %s\n", why);
			return EX_CONFIG;
		}
		return cli_jobs_main(argc, argv, c.cfg.spool, c.cfg.hooks_dir,
		    (int)c.cfg.fsync, c.json);
	}
	if (strcmp(cmd, "apps") == 0 || cli_records_handles(cmd)) {
		char why[1024];

		if (config_locate(&c.cfg, c.cfile, c.spool_arg, why,
		    sizeof(why)) != 0 || config_finish(&c.cfg, why,
		    sizeof(why)) != 0) {
			fprintf(stderr, "taskspool: %s\n", why);
			return EX_CONFIG;
		}
		if (strcmp(cmd, "apps") == 0)
			return cli_apps_main(argc, argv, c.cfg.apps_file,
			    c.json);
		return cli_records_main(argc, argv, &c.cfg, c.json);
	}
	if (strcmp(cmd, "config") == 0) {
		char why[1024];

		if (argc > 1) {
			fprintf(stderr, "taskspool config: takes no arguments "
			    "(use -c FILE / -s SPOOL before the command)\n");
			return EX_USAGE;
		}
		if (config_locate(&c.cfg, c.cfile, c.spool_arg, why,
		    sizeof(why)) != 0 || config_finish(&c.cfg, why,
		    sizeof(why)) != 0) {
			fprintf(stderr, "taskspool: %s\n", why);
			return EX_CONFIG;
		}
		printf("# from: %s\n", c.cfg.source[0] ? c.cfg.source :
		    "built-in defaults");
		config_dump(&c.cfg, stdout, 1);
		return 0;
	}
	if (strcmp(cmd, "nodes") == 0) {
		int rc;

		if (wants_help(argc, argv)) {	/* also without a spool */
			cli_nodes_usage(stdout);
			return 0;
		}
		rc = cli_open(&c);

		return rc != 0 ? rc : cli_nodes_main(&c.cfg, &c.sp, c.json,
		    argc, argv);
	}
	if (strcmp(cmd, "batch") == 0) {
		int rc = cli_open(&c);

		return rc != 0 ? rc : cli_batch_main(&c.cfg, &c.sp, c.json,
		    argc, argv);
	}
	if (strcmp(cmd, "deps") == 0) {
		int rc = cli_open(&c);

		return rc != 0 ? rc : cli_deps_main(&c.sp, c.json, argc, argv);
	}
	if (strcmp(cmd, "help") == 0) {
		fputs(top_usage, stdout);
		return 0;
	}
	usage_cmd = NULL;	/* top_usage is the hint */
	fprintf(stderr, "taskspool: unknown command \"%s\"\n%s", cmd,
	    top_usage);
	return EX_USAGE;
}
