/*
 * cli_records — `taskspool db|history|stats|purge`; see cli_records.h.
 *
 * Reads MariaDB only through records.h (no libmariadb here).  purge works
 * on the spool with the spool module's handles: for each task in done/,
 * failed/ or cancelled/ whose end (the mtime of results/<id>.json, else
 * of the task file) is older than the cut-off, it removes logs/<id>/,
 * then results/<id>.json, then the task file — the task file last, so
 * an interrupted purge leaves a task that the next purge finds again.
 * Files of corrupt/ older than the cut-off go too.  What it removed is
 * added to state/purge (purgestat.h), which the daemons' metrics show.
 */
#include "cli/cli_records.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include <jansson.h>

#include "records/records.h"
#include "core/nameset.h"
#include "spool/depstate.h"
#include "spool/purgestat.h"
#include "records/records_mariadb.h"
#include "spool/spool.h"
#include "core/tstime.h"
#include "spool/clock.h"

#define PAGE_DEFAULT	500	/* rows per query of history */

static const char *const usage =
"usage: taskspool db migrate|status\n"
"       taskspool history [--code C] [--state S] [--since T] [--limit N]\n"
"                         [--page-size N] [--json]\n"
"       taskspool stats [--since T] [--json]\n"
"       taskspool purge --older-than D [--db] [--dry-run]\n"
"T: an RFC 3339 time or a duration before now (7d); D: N[smhdw].\n";

int
cli_records_duration(const char *s, int64_t *ms)
{
	char *end;
	long long v;
	int64_t unit = 1000;

	errno = 0;
	if (s[0] < '0' || s[0] > '9') {
		errno = EINVAL;
		return -1;
	}
	v = strtoll(s, &end, 10);
	if (errno != 0)
		return -1;
	switch (*end) {
	case '\0': case 's': break;
	case 'm': unit = 60000; break;
	case 'h': unit = 3600000; break;
	case 'd': unit = 86400000; break;
	case 'w': unit = 7 * 86400000LL; break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (*end != '\0' && end[1] != '\0') {
		errno = EINVAL;
		return -1;
	}
	if (v > INT64_MAX / unit) {
		errno = ERANGE;
		return -1;
	}
	*ms = v * unit;
	return 0;
}

/* --since: RFC 3339, or a duration before now. */
static int
parse_since(const char *s, int64_t *ms)
{
	int64_t d;

	if (tstime_parse_rfc3339(s, ms) == 0)
		return 0;
	if (cli_records_duration(s, &d) != 0)
		return -1;
	*ms = tstime_now_ms() - d;
	return 0;
}

static struct records_db *
connect_db(const struct config *cfg)
{
	char why[1024];
	struct records_db *db = records_db_connect(cfg, why, sizeof(why));

	if (db == NULL)
		fprintf(stderr, "taskspool: MariaDB: %s\n", why);
	return db;
}

static int
cmd_db(int argc, char **argv, const struct config *cfg, int json)
{
	struct records_db *db;
	char why[1024];
	unsigned v;
	int n, rc = 0;

	if (argc != 2 || (strcmp(argv[1], "migrate") != 0 &&
	    strcmp(argv[1], "status") != 0)) {
		fputs(usage, stderr);
		return EX_USAGE;
	}
	if ((db = connect_db(cfg)) == NULL)
		return EX_UNAVAILABLE;
	if (strcmp(argv[1], "migrate") == 0) {
		if (records_db_migrate(db, &n, why, sizeof(why)) != 0) {
			fprintf(stderr, "taskspool db migrate: %s\n", why);
			rc = EX_DATAERR;
		} else if (records_db_version(db, &v, why, sizeof(why)) == 0)
			printf(json ? "{\"applied\":%d,\"version\":%u}\n" :
			    "applied %d migration(s); schema version %u\n",
			    n, v);
	} else if (records_db_version(db, &v, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool db status: %s\n", why);
		rc = EX_DATAERR;
	} else {
		if (json)
			printf("{\"version\":%u,\"latest\":%u,\"pending\":[",
			    v, records_latest_version());
		else
			printf("schema version %u (latest %u)\n", v,
			    records_latest_version());
		n = 0;
		for (const struct records_migration *m = records_migrations;
		    m->name != NULL; m++)
			if (m->version > v)
				printf(json ? "%s\"%s\"" : "%spending: %s\n",
				    json && n++ ? "," : "", m->name);
		if (json)
			printf("]}\n");
	}
	records_db_close(db);
	return rc;
}

static void
put_time(const char *k, int64_t ms, int json)
{
	char b[TSTIME_BUF];

	if (json)
		printf(",\"%s\":", k);
	else
		putchar(' ');
	if (ms == RECORDS_NULL || ms < 0)
		fputs(json ? "null" : "-", stdout);
	else
		printf(json ? "\"%s\"" : "%s", tstime_format_ms(b, sizeof(b),
		    ms));
}

static void
put_num(const char *k, int64_t v, int json)
{
	if (json)
		printf(",\"%s\":", k);
	else
		putchar(' ');
	if (v == RECORDS_NULL)
		fputs(json ? "null" : "-", stdout);
	else
		printf("%lld", (long long)v);
}

/* Names in the database are the spool's grammar ([A-Za-z0-9_.-]), so
 * they need no JSON escaping; anything else is printed as null. */
static void
put_name(const char *k, const char *v, int json)
{
	int ok = v[0] != '\0';

	for (const char *p = v; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
		    *p == '-'))
			ok = 0;
	if (json)
		printf("%s\"%s\":", strcmp(k, "requestId") == 0 ? "" : ",",
		    k);
	else if (strcmp(k, "requestId") != 0)
		putchar(' ');
	if (!ok)
		fputs(json ? "null" : "-", stdout);
	else
		printf(json ? "\"%s\"" : "%s", v);
}

static int
cmd_history(int argc, char **argv, const struct config *cfg, int json)
{
	static const struct option lo[] = {
		{ "code", required_argument, NULL, 'c' },
		{ "state", required_argument, NULL, 's' },
		{ "since", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' },
		{ "page-size", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 } };
	struct records_filter f = { NULL, NULL, RECORDS_NULL };
	struct records_task *rows;
	struct records_db *db;
	long limit = LONG_MAX, page = PAGE_DEFAULT, shown = 0;
	int64_t after_created = 0;
	char after_id[TASK_ID_MAX + 1], why[1024];
	int ch, have_after = 0, rc = 0;
	char *end;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'c': f.task_code = optarg; break;
		case 's':
			/* the states task_execution rows take */
			if (strcmp(optarg, "PENDING") != 0 &&
			    strcmp(optarg, "RUNNING") != 0 &&
			    strcmp(optarg, "SUCCESS") != 0 &&
			    strcmp(optarg, "FAILED") != 0 &&
			    strcmp(optarg, "CANCELLED") != 0) {
				fprintf(stderr, "taskspool history: --state: "
				    "one of PENDING RUNNING SUCCESS FAILED "
				    "CANCELLED\n");
				return EX_USAGE;
			}
			f.status = optarg;
			break;
		case 't':
			if (parse_since(optarg, &f.since_ms) != 0) {
				fprintf(stderr, "taskspool history: --since: "
				    "an RFC 3339 time or N[smhdw]\n");
				return EX_USAGE;
			}
			break;
		case 'n':
		case 'p':
			errno = 0;
			if (ch == 'n')
				limit = strtol(optarg, &end, 10);
			else
				page = strtol(optarg, &end, 10);
			if (errno || *end || (ch == 'n' ? limit : page) < 1 ||
			    page > 100000) {
				fprintf(stderr, "taskspool history: --%s: a "
				    "number 1..100000\n", ch == 'n' ? "limit" :
				    "page-size");
				return EX_USAGE;
			}
			break;
		default:
			fputs(usage, stderr);
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return EX_USAGE;
	}
	if ((rows = calloc((size_t)page, sizeof(*rows))) == NULL) {
		fprintf(stderr, "taskspool history: out of memory\n");
		return EX_OSERR;
	}
	if ((db = connect_db(cfg)) == NULL) {
		free(rows);
		return EX_UNAVAILABLE;
	}
	if (json)
		fputs("[", stdout);
	/* Keyset pagination: each page starts after the last row shown. */
	while (shown < limit) {
		size_t n, want = (size_t)(limit - shown < page ? limit - shown :
		    page);

		if (records_db_list(db, &f, after_created, have_after ?
		    after_id : NULL, rows, want, &n, why, sizeof(why)) != 0) {
			fprintf(stderr, "taskspool history: %s\n", why);
			rc = EX_DATAERR;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			struct records_task *t = &rows[i];

			if (json)
				fputs(shown + (long)i > 0 ? ",\n{" : "\n{",
				    stdout);
			put_name("requestId", t->request_id, json);
			put_name("taskCode", t->task_code, json);
			put_name("status", t->status, json);
			put_num("attempt", t->attempt, json);
			put_name("node", t->node, json);
			put_time("createdAt", t->created_at, json);
			put_time("startedAt", t->started_at, json);
			put_time("finishedAt", t->finished_at, json);
			put_num("durationMs", t->duration_ms, json);
			put_num("exitCode", t->exit_code, json);
			put_name("failureCode", t->failure_code, json);
			put_name("traceparent", t->traceparent, json);
			fputs(json ? "}" : "\n", stdout);
		}
		shown += (long)n;
		if (n < want)
			break;
		after_created = rows[n - 1].created_at;
		snprintf(after_id, sizeof(after_id), "%s",
		    rows[n - 1].request_id);
		have_after = 1;
	}
	if (json)
		fputs("\n]\n", stdout);
	records_db_close(db);
	free(rows);
	return rc;
}

static int
cmd_stats(int argc, char **argv, const struct config *cfg, int json)
{
	static const struct option lo[] = {
		{ "since", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 } };
	int64_t since = RECORDS_NULL;
	struct records_stat *v;
	struct records_db *db;
	char why[1024];
	size_t n;
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch != 't' || parse_since(optarg, &since) != 0) {
			fputs(usage, stderr);
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return EX_USAGE;
	}
	if ((db = connect_db(cfg)) == NULL)
		return EX_UNAVAILABLE;
	if (records_db_stats(db, since, &v, &n, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool stats: %s\n", why);
		records_db_close(db);
		return EX_DATAERR;
	}
	if (json)
		fputs("[", stdout);
	else
		printf("%-24s %8s %8s %8s %9s %10s %10s %10s %8s %9s\n",
		    "taskCode", "count", "success", "failed", "cancelled",
		    "successPct", "p50Ms", "p95Ms", "retries", "cbFailed");
	for (size_t i = 0; i < n; i++) {
		const struct records_stat *s = &v[i];
		double pct = s->count > 0 ? 100.0 * (double)s->success /
		    (double)s->count : 0.0;

		if (json) {
			printf("%s\n{", i ? "," : "");
			printf("\"taskCode\":\"%s\",\"count\":%ld,\"success\":"
			    "%ld,\"failed\":%ld,\"cancelled\":%ld,"
			    "\"successRate\":%.4f", s->task_code, s->count,
			    s->success, s->failed, s->cancelled,
			    s->count > 0 ? (double)s->success /
			    (double)s->count : 0.0);
			put_num("p50Ms", s->p50_ms, 1);
			put_num("p95Ms", s->p95_ms, 1);
			printf(",\"retries\":%ld,\"callbackFailures\":%ld}",
			    s->retries, s->callback_failures);
		} else {
			printf("%-24s %8ld %8ld %8ld %9ld %9.1f%%", s->task_code,
			    s->count, s->success, s->failed, s->cancelled,
			    pct);
			printf(" %10lld %10lld %8ld %9ld\n",
			    (long long)(s->p50_ms == RECORDS_NULL ? -1 :
			    s->p50_ms), (long long)(s->p95_ms == RECORDS_NULL ?
			    -1 : s->p95_ms), s->retries, s->callback_failures);
		}
	}
	if (json)
		fputs("\n]\n", stdout);
	free(v);
	records_db_close(db);
	return 0;
}

/* Remove logs/<id>/ and what it holds (one level: <attempt>.out|.err). */
static int
remove_logs(const struct spool *sp, const char *id)
{
	int fd = openat(sp->dir[SPOOL_LOGS], id, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") !=
		    0 && unlinkat(fd, de->d_name, 0) != 0 && errno != ENOENT) {
			closedir(d);
			return -1;
		}
	closedir(d);
	if (unlinkat(sp->dir[SPOOL_LOGS], id, AT_REMOVEDIR) != 0 &&
	    errno != ENOENT)
		return -1;
	return 0;
}

/*
 * What a purged task leaves besides its task file, result and logs: its
 * idempotency record (state/requests/, written by taskspool.cgi; API.md
 * §4.1 step 5: after purge the requestId is new again) and its concluded
 * callback delivery (outbox/callbacks/delivered/ or failed/).  Each fd is
 * -1 when the directory does not exist.
 */
struct purge_extra {
	int requests, cb_delivered, cb_failed;
	struct nameset waited;	/* ids a task of blocked/ waits on: kept
				 * (README.md, "Dependencies") */
};

static int
open_sub(int dfd, const char *path)
{
	return openat(dfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

static int
unlink_opt(int dfd, const char *name)
{
	return dfd < 0 || unlinkat(dfd, name, 0) == 0 || errno == ENOENT ?
	    0 : -1;
}

/* A task file being purged: renamed to PURGE_PREFIX<name> in its
 * terminal directory (a leading dot: no task name, so nothing else reads
 * it); a purge that was interrupted is finished by the next one. */
#define PURGE_PREFIX	".purging."

/* Remove what belongs to the claimed task id of dir: its logs, its
 * result, its concluded callback delivery, then its idempotency record
 * (last of these: until then a new submission of the id is a replay, so
 * no new task's result can be taken for the old one's), then the claimed
 * file.  Returns 0, or -1 after a message on stderr. */
static int
purge_rest(const struct spool *sp, const struct purge_extra *x,
    enum spool_dir dir, const char *id, const char *claimed)
{
	char file[TASK_ID_MAX + 8];

	snprintf(file, sizeof(file), "%s.json", id);
	if (remove_logs(sp, id) != 0 ||
	    unlink_opt(sp->dir[SPOOL_RESULTS], file) != 0 ||
	    unlink_opt(x->cb_delivered, file) != 0 ||
	    unlink_opt(x->cb_failed, file) != 0 ||
	    unlink_opt(x->requests, file) != 0 ||
	    unlink_opt(sp->dir[dir], claimed) != 0) {
		fprintf(stderr, "taskspool purge: %s: %s\n", id,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* What --dry-run would remove, "<dir>/<name>": appended to items (with
 * --json) when not NULL, else printed as a line. */
static void
dry_item(json_t *items, const char *dir, const char *name)
{
	char what[NAME_MAX + 32];

	snprintf(what, sizeof(what), "%s/%s", dir, name);
	if (items != NULL)
		json_array_append_new(items, json_string(what));
	else
		printf("%s\n", what);
}

/* items: with --json --dry-run, the array the would-be-purged tasks
 * are appended to ("<dir>/<id>") instead of printed; else NULL. */
static int
purge_dir(const struct spool *sp, const struct purge_extra *x,
    enum spool_dir dir, int64_t cutoff, int dry, long *count, json_t *items)
{
	DIR *d = spool_opendir(sp->dir[dir]);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		fprintf(stderr, "taskspool purge: %s/: %s\n",
		    spool_dir_name(dir), strerror(errno));
		return EX_IOERR;
	}
	while ((de = readdir(d)) != NULL) {
		char id[TASK_ID_MAX + 1], claimed[sizeof(PURGE_PREFIX) + NAME_MAX];
		const char *name = de->d_name;
		size_t l;
		struct stat st;
		int64_t end;
		int leftover = strncmp(name, PURGE_PREFIX,
		    strlen(PURGE_PREFIX)) == 0;

		if (leftover)
			name += strlen(PURGE_PREFIX);
		l = strlen(name);
		if (l <= 5 || l - 5 > TASK_ID_MAX ||
		    strcmp(name + l - 5, ".json") != 0)
			continue;
		memcpy(id, name, l - 5);
		id[l - 5] = '\0';
		if (!spool_id_ok(id) || (!leftover &&
		    nameset_find(&x->waited, id) != NULL))
			continue;
		snprintf(claimed, sizeof(claimed), PURGE_PREFIX "%s", name);
		if (leftover) {
			enum spool_dir where;

			/* Claimed by a purge that did not finish: finish it,
			 * unless the id is in use again (a new task). */
			if (dry || spool_locate(sp, id, &where, NULL) == 0)
				continue;
			if (purge_rest(sp, x, dir, id, claimed) != 0)
				rc = EX_IOERR;
			continue;
		}
		if (fstatat(sp->dir[SPOOL_RESULTS], de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0 && fstatat(sp->dir[dir],
		    de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		end = (int64_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000;
		if (end >= cutoff)
			continue;
		if (dry) {
			dry_item(items, spool_dir_name(dir), id);
			(*count)++;
			continue;
		}
		/* Claim the task by renaming it within its directory: a
		 * task that `taskspool retry` (or anything else) moved away
		 * since it was looked at is left alone, and nothing can move
		 * it while its result and record are removed. */
		if (renameat(sp->dir[dir], de->d_name, sp->dir[dir],
		    claimed) != 0) {
			if (errno != ENOENT) {
				fprintf(stderr, "taskspool purge: %s: %s\n",
				    id, strerror(errno));
				rc = EX_IOERR;
			}
			continue;
		}
		if (purge_rest(sp, x, dir, id, claimed) != 0) {
			rc = EX_IOERR;
			continue;
		}
		(*count)++;
	}
	closedir(d);
	return rc;
}

/*
 * corrupt/: every regular file older than cutoff (mtime, epoch ms) is
 * removed — a refused file, its .reason, a torn result kept as
 * <id>.result.torn — and each that is not a .reason counts in *count.
 * dry: listed ("corrupt/<name>", into items when not NULL), not removed.
 */
static int
purge_corrupt(const struct spool *sp, int64_t cutoff, int dry,
    long long *count, json_t *items)
{
	DIR *d = spool_opendir(sp->dir[SPOOL_CORRUPT]);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		fprintf(stderr, "taskspool purge: corrupt/: %s\n",
		    strerror(errno));
		return EX_IOERR;
	}
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		int reason = l > 7 && strcmp(de->d_name + l - 7, ".reason") == 0;
		struct stat st;

		if (de->d_name[0] == '.' || fstatat(sp->dir[SPOOL_CORRUPT],
		    de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || (int64_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000 >= cutoff)
			continue;
		if (dry) {
			if (!reason) {
				dry_item(items, "corrupt", de->d_name);
				(*count)++;
			}
			continue;
		}
		if (unlinkat(sp->dir[SPOOL_CORRUPT], de->d_name, 0) != 0) {
			if (errno != ENOENT) {
				fprintf(stderr, "taskspool purge: corrupt/%s: "
				    "%s\n", de->d_name, strerror(errno));
				rc = EX_IOERR;
			}
			continue;
		}
		*count += !reason;
	}
	closedir(d);
	return rc;
}

static int
cmd_purge(int argc, char **argv, const struct config *cfg, int json)
{
	static const struct option lo[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "db", no_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 } };
	/* In the order of enum purgestat_dir. */
	static const enum spool_dir dirs[] = { SPOOL_DONE, SPOOL_FAILED,
	    SPOOL_CANCELLED };
	long long removed[PURGESTAT_NDIRS] = { 0 };
	int64_t age = -1, cutoff;
	int ch, db_too = 0, dry = 0, rc = 0, r;
	long count = 0, rows = -1;
	struct spool sp;
	struct purge_extra x;
	json_t *items = NULL;
	char why[1024];

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'o':
			if (cli_records_duration(optarg, &age) != 0) {
				fprintf(stderr, "taskspool purge: --older-than:"
				    " N[smhdw], e.g. 7d\n");
				return EX_USAGE;
			}
			break;
		case 'd': db_too = 1; break;
		case 'n': dry = 1; break;
		default:
			fputs(usage, stderr);
			return EX_USAGE;
		}
	}
	if (age < 0 || optind != argc) {
		fputs(usage, stderr);
		return EX_USAGE;
	}
	cutoff = tstime_now_ms() - age;
	if (spool_open(&sp, cfg->spool, NULL, (int)cfg->fsync, why,
	    sizeof(why)) != 0) {
		fprintf(stderr, "taskspool: %s\n", why);
		return EX_CONFIG;
	}
	if (json && dry)
		items = json_array();
	if (nameset_init(&x.waited) != 0 ||
	    depstate_waited(&sp, &x.waited) != 0) {
		fprintf(stderr, "taskspool purge: blocked/ (the parents its "
		    "tasks wait on are kept): %s\n", strerror(errno));
		nameset_fini(&x.waited);
		spool_close(&sp);
		json_decref(items);
		return EX_IOERR;
	}
	x.requests = open_sub(sp.dir[SPOOL_STATE], "requests");
	x.cb_delivered = open_sub(sp.dir[SPOOL_OUTBOX], "callbacks/delivered");
	x.cb_failed = open_sub(sp.dir[SPOOL_OUTBOX], "callbacks/failed");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		long before = count;

		if ((r = purge_dir(&sp, &x, dirs[i], cutoff, dry, &count,
		    items)) != 0)
			rc = r;
		removed[i] = count - before;
	}
	if ((r = purge_corrupt(&sp, cutoff, dry, &removed[PURGESTAT_CORRUPT],
	    items)) != 0)
		rc = r;
	if (!dry && purgestat_add(&sp, removed, tstime_now_ms()) != 0)
		fprintf(stderr, "taskspool purge: state/purge (the totals the "
		    "metrics show): %s\n", strerror(errno));
	if (x.requests >= 0)
		close(x.requests);
	if (x.cb_delivered >= 0)
		close(x.cb_delivered);
	if (x.cb_failed >= 0)
		close(x.cb_failed);
	nameset_fini(&x.waited);
	spool_close(&sp);
	if (db_too && !dry) {
		struct records_db *db = connect_db(cfg);

		if (db == NULL)
			return EX_UNAVAILABLE;
		if (records_db_purge(db, cutoff, &rows, why, sizeof(why)) !=
		    0) {
			fprintf(stderr, "taskspool purge --db: %s\n", why);
			rc = EX_DATAERR;
		}
		records_db_close(db);
	}
	if (json) {
		json_t *o = json_object();
		char *text;

		json_object_set_new(o, "tasks", json_integer(count));
		json_object_set_new(o, "corrupt",
		    json_integer(removed[PURGESTAT_CORRUPT]));
		json_object_set_new(o, "rows", rows >= 0 ? json_integer(rows) :
		    json_null());
		if (items != NULL)
			json_object_set_new(o, "wouldPurge", items);
		text = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (text != NULL)
			printf("%s\n", text);
		free(text);
	}
	else if (!dry) {
		printf("purged %ld task(s) from the spool", count);
		if (removed[PURGESTAT_CORRUPT] > 0)
			printf(", %lld file(s) from corrupt/",
			    removed[PURGESTAT_CORRUPT]);
		if (rows >= 0)
			printf(", %ld row(s) from MariaDB", rows);
		putchar('\n');
	}
	return rc;
}

int
cli_records_handles(const char *cmd)
{
	return strcmp(cmd, "db") == 0 || strcmp(cmd, "history") == 0 ||
	    strcmp(cmd, "stats") == 0 || strcmp(cmd, "purge") == 0;
}

int
cli_records_main(int argc, char **argv, const struct config *cfg, int json)
{
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(argv[0], "db") == 0)
		return cmd_db(argc, argv, cfg, json);
	if (strcmp(argv[0], "history") == 0)
		return cmd_history(argc, argv, cfg, json);
	if (strcmp(argv[0], "stats") == 0)
		return cmd_stats(argc, argv, cfg, json);
	return cmd_purge(argc, argv, cfg, json);
}
