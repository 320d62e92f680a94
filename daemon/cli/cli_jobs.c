/*
 * cli_jobs.c — "taskspool jobs": list, add, enable, disable, remove,
 * run-now and next for the recurring jobs in the spool's jobs/ directory.
 *
 * A thin policy layer over job.c (codec, schedules), spool.c (safe reads,
 * the writer protocol) and tz.c (zones).  Every write is a spool_publish(),
 * so a running leader never sees half a file.  enable/disable are a read,
 * modify, replace: two of them racing leave the last writer's file, which
 * is still a complete, valid definition.  Errors are messages on stderr and
 * a sysexits status returned to the caller; nothing here calls exit().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "core/buf.h"
#include "spool/readfd.h"
#include "cli/cli_jobs.h"
#include "cli/cli_trace.h"
#include "core/job.h"
#include "coord/jobstore.h"
#include "spool/spool.h"
#include "core/task.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "core/tz.h"
#include "spool/tzload.h"

#define JOBS_N_DEFAULT	5
#define JOBS_N_MAX	100000		/* most lines of `jobs next` */
/*
 * Reason texts: a detail from spool.c/tz.c (< JOBS_DETAIL_MAX) or a
 * struct task_error (64 + 256) composed with a file name (SPOOL_NAME_MAX)
 * always fits in JOBS_WHY_MAX.
 */
#define JOBS_DETAIL_MAX	400
#define JOBS_WHY_MAX	1024
/* "<instant>.mmm" in a zone: TZ_RFC3339_MAX plus the fraction. */
#define JOBS_TIME_MAX	TZ_RFC3339_MS_MAX

struct jobs_cli {
	const char *spool_path;
	const char *hooks_dir;	/* NULL: no hook check */
	int do_fsync;
	int json;
	int long_fmt;		/* list --long: the explanation too */
	int sp_open;
	struct spool sp;
	struct tz *host;	/* new, loaded on first use */
	struct tz *utc;		/* new, loaded on first use */
};

#define JOBS_USAGE \
"usage: taskspool jobs list [--long] [--json]\n" \
"       taskspool jobs add FILE|- [--replace]\n" \
"       taskspool jobs enable JOB\n" \
"       taskspool jobs disable JOB\n" \
"       taskspool jobs remove JOB\n" \
"       taskspool jobs run-now JOB [--json]\n" \
"       taskspool jobs next JOB [N] [--from RFC3339] [--json]\n" \
"\n" \
"Recurring jobs are the files jobs/<jobCode>.json of the spool.\n" \
"  list      every job: code, kind and expression, zone, enabled, next fire\n" \
"            (--long: with each, in words what it matches and what the\n" \
"            zone's next offset change does to it, as `cron explain`)\n" \
"  add       validate FILE and publish it as jobs/<jobCode>.json (exit 73\n" \
"            if that exists; --replace overwrites it)\n" \
"  enable, disable   set \"enabled\" in the job's file\n" \
"  remove    delete the job's file\n" \
"  run-now   submit the job's task now, as task JOB.<UTC time>; print\n" \
"            its requestId (overlap forbid: exit 75 while a run of the\n" \
"            job is pending or running; replace: that run is cancelled)\n" \
"  next      the next N (default %d) fire times: the instant in the job's\n" \
"            zone, a space, the same instant in UTC (fixedDelay: assuming\n" \
"            each run ends as it starts); --from starts after that instant\n" \
"\n" \
"Exit: 0 ok, 1 no fire time (next), 64 usage, 65 invalid definition,\n" \
"      66 no such job, 73 exists, 74 I/O error, 75 a forbid job's run is\n" \
"      pending or running (run-now), 78 spool cannot be opened.\n"

static void
usage(FILE *fp)
{
	fprintf(fp, JOBS_USAGE, JOBS_N_DEFAULT);
}

static int
usage_error(const char *sub, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
usage_error(const char *sub, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "taskspool jobs%s%s: ", sub != NULL ? " " : "",
	    sub != NULL ? sub : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'taskspool jobs --help'.\n");
	return EX_USAGE;
}

/* --- zones --- */


/*
 * The zone of job j: its "timezone", loaded into *own (new, caller
 * frees), or the host's (borrowed from c).  Returns the zone, or NULL
 * with a reason in why (whylen bytes).
 */
static const struct tz *
job_zone(struct jobs_cli *c, const struct job *j, struct tz **own,
    char *why, size_t whylen)
{
	char tmp[JOBS_DETAIL_MAX];

	*own = NULL;
	if (j->timezone[0] != '\0') {
		if ((*own = tz_load(j->timezone, tmp, sizeof(tmp))) == NULL)
			(void)snprintf(why, whylen, "jobs/%s.json: invalid "
			    "definition: %s: %s", j->code, job_zone_member(j),
			    tmp);
		return *own;
	}
	if (c->host == NULL && (c->host = tz_load_host(tmp, sizeof(tmp))) ==
	    NULL)
		(void)snprintf(why, whylen, "host time zone: %s", tmp);
	return c->host;
}

/* --- spool access --- */

static int
open_spool(struct jobs_cli *c)
{
	char why[JOBS_WHY_MAX];

	if (c->sp_open)
		return 0;
	if (c->spool_path == NULL || spool_open(&c->sp, c->spool_path, NULL,
	    c->do_fsync, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool jobs: %s\n", c->spool_path == NULL ?
		    "no spool configured" : why);
		return EX_CONFIG;
	}
	c->sp_open = 1;
	return 0;
}

/* Check a JOB argument; 0 or EX_USAGE with a message. */
static int
check_code(const char *sub, const char *code)
{
	if (!spool_code_ok(code))
		return usage_error(sub, "\"%s\" is not a valid jobCode "
		    "([A-Za-z0-9][A-Za-z0-9_.-]{0,63})", code);
	return 0;
}

/*
 * Read and decode jobs/<code>.json (code already checked) into j
 * (initialised) by jobstore_load().  Returns 0, or an exit status with a
 * reason in why (whylen bytes): 66 no such job; 65 invalid definition,
 * or a file the spool refuses to read (a symbolic link, a FIFO, hard
 * links, too large); 74 I/O error.
 */
static int
load_job(struct jobs_cli *c, const char *code, struct job *j, char *why,
    size_t whylen)
{
	if (jobstore_load(&c->sp, code, j, why, whylen) == 0)
		return 0;
	return errno == ENOENT ? EX_NOINPUT : errno == EBADMSG ? EX_DATAERR :
	    EX_IOERR;
}

/* load_job(), printing the reason on failure. */
static int
load_job_or_say(struct jobs_cli *c, const char *sub, const char *code,
    struct job *j)
{
	char why[JOBS_WHY_MAX];
	int rc = load_job(c, code, j, why, sizeof(why));

	if (rc != 0)
		fprintf(stderr, "taskspool jobs %s: %s\n", sub, why);
	return rc;
}

/* Publish j by jobstore_put(); flags as that.  0 or an exit status. */
static int
store_job(struct jobs_cli *c, const char *sub, struct job *j, int flags)
{
	if (jobstore_put(&c->sp, j, flags, tstime_now_ms(), NULL, NULL,
	    NULL) == 0)
		return 0;
	if (errno == EEXIST) {
		fprintf(stderr, "taskspool jobs %s: job %s already exists (use "
		    "--replace)\n", sub, j->code);
		return EX_CANTCREAT;
	}
	if (errno == EFBIG) {
		fprintf(stderr, "taskspool jobs %s: %s: encoding: larger than "
		    "the job file cap\n", sub, j->code);
		return EX_DATAERR;
	}
	fprintf(stderr, "taskspool jobs %s: jobs/%s.json: %s\n", sub, j->code,
	    strerror(errno));
	return EX_IOERR;
}

/*
 * What the codec cannot check (jobstore_check): the zone, and with a
 * hooks directory an executable hooks_dir/<taskCode>; else 65.  what
 * (borrowed) names the input in the message.
 */
static int
check_job(struct jobs_cli *c, const char *sub, const char *what,
    const struct job *j)
{
	char why[JOBS_WHY_MAX];
	const char *field;

	if (jobstore_check(j, c->hooks_dir, &field, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, "taskspool jobs %s: %s%sinvalid definition: %s: %s\n",
	    sub, what != NULL ? what : "", what != NULL ? ": " : "", field,
	    why);
	return EX_DATAERR;
}

static int
flush_stdout(const char *sub)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "taskspool jobs %s: writing output failed\n",
		    sub);
		return EX_IOERR;
	}
	return 0;
}

/* Print a json_t (stolen) as one line. */
static int
print_json(json_t *o, const char *sub)
{
	char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (s == NULL) {
		fprintf(stderr, "taskspool jobs %s: out of memory\n", sub);
		return EX_SOFTWARE;
	}
	printf("%s\n", s);
	free(s);
	return 0;
}

/*
 * Parse the options of subcommand `sub`: av[0] is the subcommand, the
 * rest its arguments.  Recognises -h/--help, and --json, --long,
 * --replace, --from when `allowed` names them ("jlrf").  Positional
 * arguments are left in av[optind..ac).  Returns -1 to go on, or an exit
 * status.
 */
static int
parse_opts(struct jobs_cli *c, int ac, char **av, const char *allowed,
    int *replace, const char **from)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "long", no_argument, NULL, 'l' },
		{ "replace", no_argument, NULL, 'r' },
		{ "from", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sub = av[0];
	int ch;

	optind = 0;		/* glibc: full re-initialisation */
	opterr = 0;
	while ((ch = getopt_long(ac, av, ":h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return flush_stdout(sub);
		}
		if (ch == ':')
			return usage_error(sub, "%s needs a value",
			    av[optind - 1]);
		if (ch == '?' || strchr(allowed, ch) == NULL)
			return usage_error(sub, "unknown option %s",
			    av[optind - 1]);
		if (ch == 'j')
			c->json = 1;
		else if (ch == 'l')
			c->long_fmt = 1;
		else if (ch == 'r')
			*replace = 1;
		else if (ch == 'f')
			*from = optarg;
	}
	return -1;
}

/* --- list --- */

/*
 * The job codes in jobs/, sorted (jobstore_names), saying so when more
 * files are left out.  Returns the count, or -1 with errno.
 */
static ssize_t
job_names(struct jobs_cli *c, char ***names)
{
	int more;
	ssize_t n = jobstore_names(&c->sp, names, &more);

	if (n >= 0 && more)
		fprintf(stderr, "taskspool jobs list: warning: more than %d "
		    "job files in jobs/; only the first %d read are listed\n",
		    JOBSTORE_LIST_MAX, JOBSTORE_LIST_MAX);
	return n;
}

/*
 * The kind and expression of j as shown by list: "cron", "0 2 * * *";
 * "cal", "Mon..Fri 09:00" for a calendar event.
 */
static void
job_expr(const struct job *j, const char **kind, char *expr, size_t len)
{
	static const char *const kinds[] = { "cron", "rate", "delay" };

	*kind = kinds[j->kind];
	if (j->kind == JOB_KIND_CRON && j->dialect == CRON_DIALECT_SYSTEMD)
		*kind = "cal";
	if (j->kind == JOB_KIND_CRON)
		(void)snprintf(expr, len, "\"%s\"", j->cron_text);
	else
		(void)snprintf(expr, len, "%lldms", (long long)j->interval_ms);
}

/* A period in words: "90000 ms (1 minute 30 seconds)". */
static void
period_text(int64_t ms, char *out, size_t len)
{
	static const struct { int64_t ms; const char *unit; } u[] = {
		{ 86400000, "day" }, { 3600000, "hour" }, { 60000, "minute" },
		{ 1000, "second" } };
	size_t used = (size_t)snprintf(out, len, "%lld ms", (long long)ms);
	int64_t left = ms;
	int parts = 0;

	for (size_t i = 0; i < 4 && used < len && ms >= 1000; i++) {
		int64_t n = left / u[i].ms;

		if (n == 0)
			continue;
		left -= n * u[i].ms;
		used += (size_t)snprintf(out + used, len - used, "%s%lld %s%s",
		    parts++ == 0 ? " (" : " ", (long long)n, u[i].unit,
		    n > 1 ? "s" : "");
	}
	if (parts > 0 && used < len)
		(void)snprintf(out + used, len - used, "%s)", left > 0 ?
		    " and some ms" : "");
}

/*
 * The explanation of list --long for job j in zone z (both borrowed):
 * as lines after the job's line, or (o not NULL) as the members "means",
 * "schedule" and "offsetChange" of o.  The words are core/cron.h's
 * (cron_explain, cron_explain_change), the same as `cron explain`
 * prints, told from the job's next fire next_ms (epoch ms; -1 when it
 * has none: disabled, ended, never), so that startAt and endAt count; a
 * change after endAt is said not to apply.  A fixed-rate or fixed-delay
 * job follows elapsed time, which no offset change moves.
 */
static void
list_explain(const struct job *j, const struct tz *z, int64_t next_ms,
    json_t *o)
{
	char desc[512], per[96];
	struct cron_change ch;
	int rc = 0, fixed = 0;
	const char *none = NULL;

	if (j->kind != JOB_KIND_CRON) {
		period_text(j->interval_ms, per, sizeof per);
		(void)snprintf(desc, sizeof desc, "every %s %s", per,
		    j->kind == JOB_KIND_FIXED_RATE ?
		    "from one start to the next" :
		    "from the end of one run to the start of the next");
	} else {
		if (cron_explain(j->cron, desc, sizeof desc) < 0)
			(void)snprintf(desc + sizeof desc - 8, 8, " (cut)");
		fixed = cron_is_fixed_time(j->cron);
		if (!j->enabled)
			none = "the job is disabled";
		else if (next_ms < 0)
			none = "the job does not fire again";
		else
			rc = cron_explain_change(j->cron, z, next_ms / 1000 -
			    1, &ch);
		if (rc == 1 && j->end_ms >= 0 && ch.at * 1000 > j->end_ms) {
			rc = 0;
			none = "the next one comes after the job's endAt";
		}
	}
	if (o != NULL) {
		json_t *c = rc == 1 ? cron_change_json(&ch) : NULL;

		json_object_set_new(o, "means", json_string(desc));
		json_object_set_new(o, "schedule", json_string(j->kind !=
		    JOB_KIND_CRON ? "elapsed" : fixed ? "fixed-time" :
		    "interval"));
		json_object_set_new(o, "offsetChange", c != NULL ? c :
		    json_null());
		return;
	}
	if (none != NULL) {
		printf("    means: %s, in %s\n", desc, tz_name(z));
		printf("    offset change: not told (%s)\n", none);
		return;
	}
	printf("    means: %s%s%s\n", desc, j->kind == JOB_KIND_CRON ?
	    ", in " : "", j->kind == JOB_KIND_CRON ? tz_name(z) : "");
	if (j->kind != JOB_KIND_CRON)
		printf("    offset changes: none moves it (it follows elapsed "
		    "time)\n");
	else if (rc == 1)
		printf("    %s\n      %s\n", ch.head, ch.effect);
	else if (rc == 0)
		printf("    offset change: none in %s within 400 days\n",
		    tz_name(z));
}

/*
 * One line (or JSON object appended to arr) of `jobs list`.  An invalid
 * definition is listed as such, with its reason.  Returns 0, or the
 * status of a failure other than an invalid definition.
 */
static int
list_one(struct jobs_cli *c, const char *code, int64_t now, json_t *arr)
{
	char expr[CRON_TEXT_MAX + 8], when[JOBS_TIME_MAX] = "-";
	char utc[JOBS_TIME_MAX] = "", why[JOBS_WHY_MAX];
	const struct tz *z = NULL;
	const char *kind;
	struct tz *own = NULL;
	struct job j;
	int64_t next = -1;
	int rc, has_next = 0;

	job_init(&j);
	if ((rc = load_job(c, code, &j, why, sizeof(why))) != 0 ||
	    (z = job_zone(c, &j, &own, why, sizeof(why))) == NULL) {
		/* A bad host TZ is the environment's fault, not the job's. */
		int valid = rc == 0 && j.timezone[0] == '\0';

		/* The reason quotes the file, and may have been cut inside a
		 * UTF-8 character: printable ASCII only, so that it is a
		 * JSON string and harmless on a terminal. */
		for (char *p = why; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 ||
			    (unsigned char)*p > 0x7e)
				*p = '?';
		if (arr != NULL)
			json_array_append_new(arr, json_pack("{s:s,s:b,s:s}",
			    "jobCode", code, "valid", valid, "error", why));
		else
			printf("%-24s %s %s\n", code, valid ? "ERROR" :
			    "INVALID", why);
		job_fini(&j);
		return rc == EX_IOERR ? rc : 0;
	}
	/* A fixed-delay job's next fire depends on its current run; the
	 * leader fires only after createdAt. */
	if (j.enabled && j.kind != JOB_KIND_FIXED_DELAY &&
	    job_next_fire(&j, z, now > j.created_ms ? now : j.created_ms, -1,
	    &next) == 1 &&
	    tz_format_rfc3339_ms(z, next, when, sizeof(when)) == 0 &&
	    tz_format_rfc3339_ms(c->utc, next, utc, sizeof(utc)) == 0)
		has_next = 1;
	else
		(void)snprintf(when, sizeof(when), "-");
	job_expr(&j, &kind, expr, sizeof(expr));
	if (arr != NULL) {
		json_t *o = json_object();

		json_object_set_new(o, "jobCode", json_string(j.code));
		json_object_set_new(o, "valid", json_true());
		json_object_set_new(o, "taskCode", json_string(j.task_code));
		json_object_set_new(o, "kind", json_string(j.kind ==
		    JOB_KIND_CRON ? job_expr_member(&j) :
		    job_kind_member(j.kind)));
		if (j.kind == JOB_KIND_CRON)
			json_object_set_new(o, job_expr_member(&j),
			    json_string(j.cron_text));
		else
			json_object_set_new(o, job_kind_member(j.kind),
			    json_integer(j.interval_ms));
		json_object_set_new(o, "timezone", json_string(tz_name(z)));
		json_object_set_new(o, "hostZone",
		    json_boolean(j.timezone[0] == '\0'));
		json_object_set_new(o, "enabled", json_boolean(j.enabled));
		json_object_set_new(o, "misfire",
		    json_string(job_misfire_name(j.misfire)));
		json_object_set_new(o, "overlap",
		    json_string(job_overlap_name(j.overlap)));
		json_object_set_new(o, "nextFire", has_next ?
		    json_string(when) : json_null());
		json_object_set_new(o, "nextFireUtc", has_next ?
		    json_string(utc) : json_null());
		if (c->long_fmt)
			list_explain(&j, z, has_next ? next : -1, o);
		json_array_append_new(arr, o);
	} else {
		printf("%-24s %-5s %-24s %-20s %-8s %s\n", j.code, kind, expr,
		    tz_name(z), j.enabled ? "enabled" : "disabled", when);
		if (c->long_fmt)
			list_explain(&j, z, has_next ? next : -1, NULL);
	}
	tz_free(own);
	job_fini(&j);
	return 0;
}

static int
cmd_list(struct jobs_cli *c, int ac, char **av)
{
	char **names;
	json_t *arr = NULL;
	ssize_t n;
	int64_t now;
	int rc, worst = 0;

	if ((rc = parse_opts(c, ac, av, "jl", NULL, NULL)) >= 0)
		return rc;
	if (optind != ac)
		return usage_error("list", "unexpected argument \"%s\"",
		    av[optind]);
	if ((rc = open_spool(c)) != 0)
		return rc;
	if ((n = job_names(c, &names)) < 0) {
		fprintf(stderr, "taskspool jobs list: jobs/: %s\n",
		    strerror(errno));
		return EX_IOERR;
	}
	if (c->json && (arr = json_array()) == NULL)
		n = 0;
	now = tstime_now_ms();
	for (ssize_t i = 0; i < n; i++) {
		if ((rc = list_one(c, names[i], now, arr)) != 0)
			worst = rc;
		free(names[i]);
	}
	free(names);
	if (arr != NULL && (rc = print_json(arr, "list")) != 0)
		return rc;
	rc = flush_stdout("list");
	return rc != 0 ? rc : worst;
}

/* --- add --- */

static int
read_input(const char *path, struct buf *b)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO :
	    open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	int rc, e;

	if (fd < 0)
		return -1;
	rc = buf_read_fd(b, fd);
	e = errno;
	if (fd != STDIN_FILENO)
		(void)close(fd);
	errno = e;
	return rc;
}

static int
cmd_add(struct jobs_cli *c, int ac, char **av)
{
	struct task_error err;
	struct job j;
	struct buf in;
	int rc, replace = 0;

	if ((rc = parse_opts(c, ac, av, "r", &replace, NULL)) >= 0)
		return rc;
	if (ac - optind != 1)
		return usage_error("add", "%s", "expected one FILE (or - for "
		    "standard input)");
	job_init(&j);
	buf_init(&in, JOB_FILE_MAX + 1);
	if (read_input(av[optind], &in) != 0) {
		if (errno == EFBIG) {
			fprintf(stderr, "taskspool jobs add: %s: invalid "
			    "definition: file: larger than %d bytes\n",
			    av[optind], JOB_FILE_MAX);
			rc = EX_DATAERR;
		} else {
			fprintf(stderr, "taskspool jobs add: %s: %s\n",
			    av[optind], strerror(errno));
			rc = errno == ENOENT ? EX_NOINPUT : EX_IOERR;
		}
		goto out;
	}
	if (job_decode(in.data != NULL ? in.data : "", in.len, &j, &err)) {
		fprintf(stderr, "taskspool jobs add: %s: invalid definition: "
		    "%s: %s\n", av[optind], err.field, err.rule);
		rc = EX_DATAERR;
		goto out;
	}
	if ((rc = check_job(c, "add", av[optind], &j)) != 0 ||
	    (rc = open_spool(c)) != 0)
		goto out;
	/* createdAt, when absent: the replaced job's, else now (an edit is
	 * the same job, and keeps its history). */
	if ((rc = store_job(c, "add", &j, replace ? 0 : JOBSTORE_EXCL)) != 0)
		goto out;
	printf("%s\n", j.code);
	rc = flush_stdout("add");
out:
	buf_fini(&in);
	job_fini(&j);
	return rc;
}

/* --- enable, disable, remove --- */

static int
cmd_enable(struct jobs_cli *c, int ac, char **av, int on)
{
	const char *sub = av[0];
	char why[JOBS_WHY_MAX];
	struct job j;
	int rc;

	if ((rc = parse_opts(c, ac, av, "", NULL, NULL)) >= 0)
		return rc;
	if (ac - optind != 1)
		return usage_error(sub, "%s", "expected one JOB");
	if ((rc = check_code(sub, av[optind])) != 0 ||
	    (rc = open_spool(c)) != 0)
		return rc;
	job_init(&j);
	if (jobstore_set_enabled(&c->sp, av[optind], on, NULL, NULL, &j, why,
	    sizeof(why)) != 0) {
		fprintf(stderr, "taskspool jobs %s: %s\n", sub, why);
		return errno == ENOENT ? EX_NOINPUT : errno == EBADMSG ?
		    EX_DATAERR : EX_IOERR;
	}
	if (rc == 0) {
		printf("%s %s\n", j.code, on ? "enabled" : "disabled");
		rc = flush_stdout(sub);
	}
	job_fini(&j);
	return rc;
}

static int
cmd_remove(struct jobs_cli *c, int ac, char **av)
{
	int rc;

	if ((rc = parse_opts(c, ac, av, "", NULL, NULL)) >= 0)
		return rc;
	if (ac - optind != 1)
		return usage_error("remove", "%s", "expected one JOB");
	if ((rc = check_code("remove", av[optind])) != 0 ||
	    (rc = open_spool(c)) != 0)
		return rc;
	if (jobstore_remove(&c->sp, av[optind], NULL, NULL) != 0) {
		if (errno == ENOENT) {
			fprintf(stderr, "taskspool jobs remove: no job %s\n",
			    av[optind]);
			return EX_NOINPUT;
		}
		fprintf(stderr, "taskspool jobs remove: jobs/%s.json: %s\n",
		    av[optind], strerror(errno));
		return EX_IOERR;
	}
	printf("%s removed\n", av[optind]);
	return flush_stdout("remove");
}

/* --- run-now --- */

static int
cmd_run_now(struct jobs_cli *c, int ac, char **av)
{
	char prev[TASK_ID_MAX + 1], warn[JOBS_WHY_MAX];
	const char *node;
	struct job j;
	struct task t;
	int rc;

	if ((rc = parse_opts(c, ac, av, "j", NULL, NULL)) >= 0)
		return rc;
	if (ac - optind != 1)
		return usage_error("run-now", "%s", "expected one JOB");
	if ((rc = check_code("run-now", av[optind])) != 0 ||
	    (rc = open_spool(c)) != 0)
		return rc;
	node = c->sp.node[0] != '\0' ? c->sp.node : "cli";
	job_init(&j);
	task_init(&t);
	if ((rc = load_job_or_say(c, "run-now", av[optind], &j)) != 0 ||
	    (rc = check_job(c, "run-now", NULL, &j)) != 0)
		goto out;
	/* A manual run is a fire at now: same id scheme, triggerTime now. */
	if (jobstore_run_task(&j, tstime_now_ms(), &t) != 0) {
		fprintf(stderr, "taskspool jobs run-now: %s: %s\n", j.code,
		    strerror(errno));
		rc = EX_SOFTWARE;
		goto out;
	}
	/* As a fire: a new trace, or the caller's TRACEPARENT. */
	if ((rc = cli_trace_choose(NULL, &t)) != 0)
		goto out;
	if (jobstore_run(&c->sp, &j, &t, node, prev, sizeof(prev), warn,
	    sizeof(warn)) != 0) {
		int e = errno;

		rc = e == EEXIST ? EX_CANTCREAT : e == EBUSY || e == EAGAIN ?
		    EX_TEMPFAIL : e == EFBIG ? EX_DATAERR : EX_IOERR;
		if (e == EBUSY)
			fprintf(stderr, "taskspool jobs run-now: %s: %s is "
			    "still pending or running (overlap forbid)\n",
			    j.code, prev);
		else
			fprintf(stderr, "taskspool jobs run-now: %s: %s\n",
			    t.request_id, e == EEXIST ? "task already exists" :
			    e == EAGAIN ? "the leader is firing the job now; "
			    "try again" : e == EFBIG ? "the task would be "
			    "larger than the task file cap" : strerror(e));
		goto out;
	}
	if (warn[0] != '\0')
		fprintf(stderr, "taskspool jobs run-now: %s: %s\n", j.code,
		    warn);
	if (c->json)
		rc = print_json(json_pack("{s:s,s:s,s:s}", "requestId",
		    t.request_id, "jobCode", j.code, "status", "PENDING"),
		    "run-now");
	else
		printf("%s\n", t.request_id);
	if (rc == 0)
		rc = flush_stdout("run-now");
out:
	task_fini(&t);
	job_fini(&j);
	return rc;
}

/* --- next --- */

static int
cmd_next(struct jobs_cli *c, int ac, char **av)
{
	char local[JOBS_TIME_MAX], utc[JOBS_TIME_MAX], why[JOBS_WHY_MAX];
	char *end;
	const char *from = NULL;
	const struct tz *z;
	struct tz *own = NULL;
	json_t *arr = NULL;
	struct job j;
	int64_t t, last_end = -1;
	long n = JOBS_N_DEFAULT, i;
	int rc;

	if ((rc = parse_opts(c, ac, av, "jf", NULL, &from)) >= 0)
		return rc;
	if (ac - optind < 1 || ac - optind > 2)
		return usage_error("next", "%s", "expected JOB [N]");
	if ((rc = check_code("next", av[optind])) != 0)
		return rc;
	if (ac - optind == 2) {
		errno = 0;
		n = strtol(av[optind + 1], &end, 10);
		if (errno != 0 || end == av[optind + 1] || *end != '\0' ||
		    n < 1 || n > JOBS_N_MAX)
			return usage_error("next", "N must be 1-100000, not "
			    "\"%s\"", av[optind + 1]);
	}
	if (from != NULL) {
		if (tstime_parse_rfc3339(from, &t) != 0)
			return usage_error("next", "--from: \"%s\" is not an "
			    "RFC 3339 time like 2024-03-10T01:30:00Z", from);
	} else
		t = tstime_now_ms();
	if ((rc = open_spool(c)) != 0)
		return rc;
	job_init(&j);
	if ((rc = load_job_or_say(c, "next", av[optind], &j)) != 0)
		return rc;
	if ((z = job_zone(c, &j, &own, why, sizeof(why))) == NULL) {
		fprintf(stderr, "taskspool jobs next: %s\n", why);
		/* As `cron next`: a bad TZ is a usage error. */
		rc = j.timezone[0] != '\0' ? EX_DATAERR : EX_USAGE;
		goto out;
	}
	/* Without --from: from now, or from createdAt when that is later
	 * (the leader fires only after it). */
	if (from == NULL && j.created_ms > t)
		t = j.created_ms;
	if (!j.enabled)
		fprintf(stderr, "taskspool jobs next: note: %s is disabled; "
		    "these are the times it would fire\n", j.code);
	if (c->json && (arr = json_array()) == NULL) {
		rc = EX_SOFTWARE;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (job_next_fire(&j, z, t, last_end, &t) != 1) {
			/* As `cron next`: none at all is exit 1. */
			if (i == 0) {
				fprintf(stderr, "taskspool jobs next: %s never "
				    "fires after %s (its schedule%s has no "
				    "time left)\n", j.code, from != NULL ?
				    from : "now", j.end_ms >= 0 ?
				    " up to its endAt" : "");
				rc = 1;
			} else {
				fprintf(stderr, "taskspool jobs next: %s: only "
				    "%ld fire time%s%s\n", j.code, i, i == 1 ?
				    "" : "s", j.end_ms >= 0 ?
				    " before its endAt" : "");
			}
			break;
		}
		if (j.kind == JOB_KIND_FIXED_DELAY)
			last_end = t;	/* each run ends as it starts */
		if (tz_format_rfc3339_ms(z, t, local, sizeof(local)) != 0 ||
		    tz_format_rfc3339_ms(c->utc, t, utc, sizeof(utc)) != 0) {
			fprintf(stderr, "taskspool jobs next: cannot format "
			    "instant %lld ms\n", (long long)t);
			rc = EX_SOFTWARE;
			break;
		}
		if (arr != NULL)
			json_array_append_new(arr, json_pack("{s:s,s:s}",
			    "local", local, "utc", utc));
		else
			printf("%s %s\n", local, utc);
	}
	if (arr != NULL) {
		int r = print_json(json_pack("{s:s,s:s,s:o}", "jobCode",
		    j.code, "timezone", tz_name(z), "fires", arr), "next");

		arr = NULL;	/* stolen by "o" */
		if (rc == 0)
			rc = r;
	}
	if (rc == 0)
		rc = flush_stdout("next");
out:
	json_decref(arr);
	tz_free(own);
	job_fini(&j);
	return rc;
}

int
cli_jobs_main(int argc, char **argv, const char *spool_path,
    const char *hooks_dir, int do_fsync, int json)
{
	struct jobs_cli c;
	const char *sub;
	char why[JOBS_WHY_MAX];
	int rc;

	if (argc < 2) {
		usage(stderr);
		return EX_USAGE;
	}
	sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0 ||
	    strcmp(sub, "help") == 0) {
		usage(stdout);
		return flush_stdout("help");
	}
	memset(&c, 0, sizeof(c));
	c.spool_path = spool_path;
	c.hooks_dir = hooks_dir;
	c.do_fsync = do_fsync;
	c.json = json;
	if ((c.utc = tz_load("UTC", why, sizeof(why))) == NULL) {
		fprintf(stderr, "taskspool jobs: UTC: %s\n", why);
		return EX_SOFTWARE;
	}
	/* getopt_long sees the subcommand as its program name. */
	if (strcmp(sub, "list") == 0)
		rc = cmd_list(&c, argc - 1, argv + 1);
	else if (strcmp(sub, "add") == 0)
		rc = cmd_add(&c, argc - 1, argv + 1);
	else if (strcmp(sub, "enable") == 0)
		rc = cmd_enable(&c, argc - 1, argv + 1, 1);
	else if (strcmp(sub, "disable") == 0)
		rc = cmd_enable(&c, argc - 1, argv + 1, 0);
	else if (strcmp(sub, "remove") == 0)
		rc = cmd_remove(&c, argc - 1, argv + 1);
	else if (strcmp(sub, "run-now") == 0)
		rc = cmd_run_now(&c, argc - 1, argv + 1);
	else if (strcmp(sub, "next") == 0)
		rc = cmd_next(&c, argc - 1, argv + 1);
	else
		rc = usage_error(NULL, "unknown subcommand \"%s\"", sub);
	if (c.sp_open)
		spool_close(&c.sp);
	tz_free(c.host);
	tz_free(c.utc);
	return rc;
}
