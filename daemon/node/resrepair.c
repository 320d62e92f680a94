/*
 * resrepair — repair of result files; see resrepair.h.
 */
#include "node/resrepair.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/tstime.h"

#define RESULT_MAX	(64 << 20)	/* bytes read of a result file */

static const enum spool_dir terminal[] = { SPOOL_DONE, SPOOL_FAILED,
	SPOOL_CANCELLED };

struct resrepair {
	const struct spool *sp;
	size_t di;			/* index in terminal[] */
	DIR *dp;			/* its listing, NULL between passes */
};

int
resrepair_keep(const struct spool *sp, const char *id, const char *data,
    size_t len, const char *reason, char *kept, size_t keptlen)
{
	char name[TASK_ID_MAX + 32], rname[TASK_ID_MAX + 40];
	int cfd = sp->dir[SPOOL_CORRUPT];

	for (int n = 0; n < 1000; n++) {
		if (n == 0)
			snprintf(name, sizeof(name), "%s.result.torn", id);
		else
			snprintf(name, sizeof(name), "%s.result.torn.%d", id,
			    n);
		if (spool_publish(sp, cfd, name, data, len, -1,
		    SPOOL_PUBLISH_EXCL) == 0)
			break;
		if (errno != EEXIST)
			return -1;
		if (n == 999)
			return -1;	/* errno EEXIST */
	}
	snprintf(rname, sizeof(rname), "%s.reason", name);
	if (spool_publish(sp, cfd, rname, reason, strlen(reason), -1, 0) != 0)
		return -1;
	if (kept != NULL)
		snprintf(kept, keptlen, "%s", name);
	return 0;
}

int
resrepair_drop(const struct spool *sp, const char *id, const char *data,
    size_t len, const char *why, char *kept, size_t keptlen)
{
	char file[TASK_ID_MAX + 8], reason[512], *now;
	size_t nl;
	int same;

	snprintf(file, sizeof(file), "%s.json", id);
	snprintf(reason, sizeof(reason), "results/%s: %s; the task had not "
	    "finished: it is run again or concluded by recovery", file, why);
	if (resrepair_keep(sp, id, data, len, reason, kept, keptlen) != 0)
		return -1;
	/* Only the bytes that were judged: a result published meanwhile
	 * (the task concluded by its owner) stays. */
	now = spool_read_file(sp->dir[SPOOL_RESULTS], file, RESULT_MAX, &nl);
	if (now == NULL)
		return errno == ENOENT ? 0 : -1;
	same = nl == len && memcmp(now, data, len) == 0;
	free(now);
	if (same && unlinkat(sp->dir[SPOOL_RESULTS], file, 0) != 0 &&
	    errno != ENOENT)
		return -1;
	return spool_sync_dir(sp, sp->dir[SPOOL_RESULTS]);
}

struct resrepair *
resrepair_new(const struct spool *sp)
{
	struct resrepair *r = calloc(1, sizeof(*r));

	if (r != NULL)
		r->sp = sp;
	return r;
}

void
resrepair_free(struct resrepair *r)
{
	if (r == NULL)
		return;
	if (r->dp != NULL)
		closedir(r->dp);
	free(r);
}

static int64_t
ctime_ms(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000 + st->st_ctim.tv_nsec /
	    1000000;
}

/* Check the terminal task file dir/name; repair its result if needed. */
static void
check_one(struct resrepair *r, enum spool_dir d, const char *name,
    int default_retries, int64_t now_ms,
    void (*fixed)(void *, const struct resrepair_fix *),
    void (*fail)(void *, const char *, int), void *arg)
{
	const struct spool *sp = r->sp;
	char id[TASK_ID_MAX + 1], why[256], kept[TASK_ID_MAX + 40] = "";
	char reason[512];
	char *res, *tf;
	size_t rl = 0, tl, nl = strlen(name);
	struct stat st;
	struct task t;
	struct task_error te;
	struct buf out;
	const char *status = d == SPOOL_DONE ? "SUCCESS" : d == SPOOL_FAILED ?
	    "FAILED" : "CANCELLED";

	if (nl <= 5 || nl - 5 > TASK_ID_MAX || strcmp(name + nl - 5,
	    ".json") != 0)
		return;
	memcpy(id, name, nl - 5);
	id[nl - 5] = '\0';
	if (!spool_id_ok(id))
		return;
	res = spool_read_file(sp->dir[SPOOL_RESULTS], name, RESULT_MAX, &rl);
	if (res != NULL) {
		if (result_valid(res, rl, why, sizeof(why))) {
			free(res);
			return;		/* the usual case */
		}
	} else if (errno != ENOENT) {
		if (fail != NULL)
			fail(arg, id, errno);
		return;
	} else {
		/* Missing: only once the task has settled (`retry`). */
		if (fstatat(sp->dir[d], name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    now_ms - ctime_ms(&st) < RESREPAIR_SETTLE_MS)
			return;
		snprintf(why, sizeof(why), "missing");
	}
	task_init(&t);
	buf_init(&out, 0);
	if ((tf = spool_read_file(sp->dir[d], name, TASK_FILE_MAX, &tl)) ==
	    NULL || task_decode(tf, tl, &t, &te) != 0) {
		/* Gone meanwhile (retry, purge) or not a task: not ours. */
		free(tf);
		goto out;
	}
	free(tf);
	snprintf(t.request_id, sizeof(t.request_id), "%s", id);
	if (res != NULL) {
		snprintf(reason, sizeof(reason), "results/%s: %s; rebuilt "
		    "from %s/%s", name, why, spool_dir_name(d), name);
		if (resrepair_keep(sp, id, res, rl, reason, kept,
		    sizeof(kept)) != 0) {
			if (fail != NULL)
				fail(arg, id, errno);
			goto out;
		}
	}
	if (result_rebuild(&t, status, res, rl, t.max_retries >= 0 ?
	    t.max_retries : default_retries, &out) != 0 ||
	    spool_publish(sp, sp->dir[SPOOL_RESULTS], name, out.data, out.len,
	    -1, 0) != 0) {
		if (fail != NULL)
			fail(arg, id, errno);
		goto out;
	}
	if (fixed != NULL) {
		struct resrepair_fix f = { &t, d, out.data, out.len, why,
			kept };

		fixed(arg, &f);
	}
out:
	free(res);
	buf_fini(&out);
	task_fini(&t);
}

int
resrepair_step(struct resrepair *r, size_t max, int default_retries,
    int64_t now_ms, void (*fixed)(void *, const struct resrepair_fix *),
    void (*fail)(void *, const char *, int), void *arg)
{
	size_t seen = 0;
	struct dirent *de;

	while (seen < max) {
		if (r->dp == NULL) {
			if (r->di == sizeof(terminal) / sizeof(terminal[0])) {
				r->di = 0;
				return 0;	/* the pass is over */
			}
			if ((r->dp = spool_opendir(r->sp->dir[
			    terminal[r->di]])) == NULL) {
				r->di++;
				continue;
			}
		}
		if ((de = readdir(r->dp)) == NULL) {
			closedir(r->dp);
			r->dp = NULL;
			r->di++;
			continue;
		}
		if (de->d_name[0] == '.')
			continue;
		seen++;
		check_one(r, terminal[r->di], de->d_name, default_retries,
		    now_ms, fixed, fail, arg);
	}
	return 1;
}
