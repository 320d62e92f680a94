/*
 * scheduler — the leader's recurring-job scheduler; see scheduler.h.
 *
 * A pass: scheduler_tick takes the due jobs off the timing wheel; run_job
 * plans each one's instants (job_misfire_plan), drops those already
 * fired, applies the overlap policy, stages every fire in tmp/
 * (fire_stage); publish_staged then makes the staged files durable and
 * moves them into place, forbid/replace fires only through their run
 * marker (jobrun_publish).  Longest: run_job (about 160 lines), the
 * decisions of one job's pass in order (plan, replay, overlap, stage,
 * state); split, its steps would pass most of its locals around.
 */
#include "node/scheduler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "spool/readfd.h"
#include "core/job.h"
#include "coord/jobrun.h"
#include "core/jsontext.h"
#include "spool/log.h"
#include "records/records.h"
#include "core/task.h"
#include "core/traceparent.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "core/tz.h"
#include "spool/tzload.h"
#include "core/wheel.h"

#define SCHED_PLAN_MAX	64	/* fires planned per job per pass */
#define SCHED_END_POLL_MS 200	/* fixedDelay: how often to look for the end */
#define SCHED_JUMP_MS	1000	/* wall/mono disagreement called a jump */
#define SCHED_TICK_MAX	5000	/* fires staged per pass; more wait a pass */
#define SCHED_SYNCFS_MIN 64	/* from this many fires one syncfs beats
				 * an fsync each */
#define SCHED_SAVE_MS	10000	/* state written at most this often */
#define SCHED_LIVE_SCAN_MS 30000 /* the spool looked over for live tasks
				 * of jobs at least this often (mono ms) */
#define SCHED_PREPARE_MS 250	/* a fire's file is written and synced this
				 * long before its instant */

struct sched_job {
	struct wheel_entry we;		/* due = next fire (epoch ms) */
	struct sched_job *next;
	char file[SPOOL_NAME_MAX];	/* name in jobs/ */
	struct job def;
	struct tz *z;
	ino_t ino;
	struct timespec mtime;
	int64_t last_fire;		/* every instant <= this is settled */
	int64_t last_end;		/* fixedDelay: end of the last run */
	char last_id[JOB_TASK_ID_MAX + 1];	/* newest task fired */
	char (*live)[JOB_TASK_ID_MAX + 1];	/* tasks of the job that may
						 * be pending or running */
	size_t nlive, live_cap;
	int run_pending;		/* loaded: run_job after the scan */
	int save_due;			/* state_save after the publish */
	int waiting_end;		/* fixedDelay: polling for the end */
	int was_disabled;		/* state: disabled when last seen */
	int64_t replay_until;		/* fires <= this may exist already */
	int64_t saved_at;		/* when the state was last written */
	int state_dirty;		/* state to be written */
	int seen;			/* mark for scheduler_scan */
	struct sched_job *dnext;	/* due list during scheduler_tick */
	struct wheel_entry pwe;		/* due = when to prepare pre_want */
	int64_t pre_want;		/* the instant pwe prepares, -1 none */
	int64_t pre_t;			/* the instant prepared, -1 none */
	char pre_tmp[64];		/* its file in tmp/, synced */
	struct sched_job *pnext;	/* prepare list during a pass */
};

struct sched {
	struct spool *sp;
	const struct config *cfg;
	struct wheel *w;
	struct wheel *pw;		/* prepare times (SCHED_PREPARE_MS) */
	struct sched_job *jobs;
	int statefd;			/* state/jobs */
	int64_t last_wall, last_mono;	/* for clock-jump detection */
	struct staged *staged;		/* fires of this tick, in tmp/ */
	size_t nstaged;
	int64_t late_max;		/* this tick's latest fire, ms */
	size_t late_n;
	unsigned long long published;	/* tasks fired into the spool */
	int64_t next_live_scan;		/* mono ms: live_scan() due */
	int runsfd;			/* state/jobruns (jobrun.h) */
	char token[JOBRUN_TOKEN_MAX];	/* this scheduler, in run markers */
};

/*
 * A fire written into tmp/ (not yet synced) during one tick; all of a
 * tick's fires are synced together and then renamed into place.
 */
struct staged {
	struct staged *next;
	struct sched_job *j;
	int64_t t;			/* the instant, epoch ms */
	enum spool_dir dest;		/* SPOOL_INCOMING or SPOOL_DELAYED */
	int fenced;			/* published through the run marker */
	int synced;			/* prepared: already durable */
	char tmp[64];			/* name in tmp/ */
	char id[JOB_TASK_ID_MAX + 1];
};

static int
open_subdir(int at, const char *name)
{
	if (mkdirat(at, name, 0750) != 0 && errno != EEXIST)
		return -1;
	return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

struct sched *
scheduler_new(struct spool *sp, const struct config *cfg, int64_t now_ms)
{
	struct sched *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->sp = sp;
	s->cfg = cfg;
	s->statefd = open_subdir(sp->dir[SPOOL_STATE], "jobs");
	s->runsfd = jobrun_open(sp);
	s->w = wheel_new((uint64_t)now_ms);
	s->pw = wheel_new((uint64_t)now_ms);
	if (s->statefd < 0 || s->runsfd < 0 || s->w == NULL || s->pw == NULL ||
	    jobrun_token(s->token) != 0) {
		int e = errno;

		scheduler_free(s);
		errno = e;
		return NULL;
	}
	s->last_wall = now_ms;
	s->last_mono = tstime_mono_ms();
	return s;
}

static void state_save(struct sched *s, struct sched_job *j);
static void publish_staged(struct sched *s);
static void schedule(struct sched *s, struct sched_job *j, int64_t when);
static void unprepare(struct sched *s, struct sched_job *j);

static void
job_free(struct sched_job *j)
{
	free(j->live);
	job_fini(&j->def);
	tz_free(j->z);
	free(j);
}

void
scheduler_free(struct sched *s)
{
	struct sched_job *j, *next;

	if (s == NULL)
		return;
	publish_staged(s);
	for (j = s->jobs; j != NULL; j = next) {
		next = j->next;
		if (j->state_dirty)
			state_save(s, j);
		unprepare(s, j);
		job_free(j);
	}
	wheel_free(s->w);
	wheel_free(s->pw);
	if (s->statefd >= 0)
		close(s->statefd);
	if (s->runsfd > 0)
		close(s->runsfd);
	free(s);
}

/* --- persisted state: state/jobs/<J>.json --- */

static void
state_load(struct sched *s, struct sched_job *j)
{
	char name[TASK_CODE_MAX + 8], *data;
	size_t len;
	json_t *o, *v;

	snprintf(name, sizeof(name), "%s.json", j->def.code);
	data = spool_read_file(s->statefd, name, 65536, &len);
	if (data == NULL)
		return;
	o = jsontext_loadb(data, len, 0, NULL);
	free(data);
	if (o == NULL) {
		log_warnx("state/jobs/%s: unreadable; starting from now", name);
		return;
	}
	if (json_is_string(v = json_object_get(o, "lastFire")))
		(void)tstime_parse_rfc3339(json_string_value(v), &j->last_fire);
	if (json_is_string(v = json_object_get(o, "lastEnd")))
		(void)tstime_parse_rfc3339(json_string_value(v), &j->last_end);
	j->was_disabled = json_is_true(json_object_get(o, "disabled"));
	if (json_is_string(v = json_object_get(o, "lastTaskId")) &&
	    strlen(json_string_value(v)) < sizeof(j->last_id))
		snprintf(j->last_id, sizeof(j->last_id), "%s",
		    json_string_value(v));
	json_decref(o);
}

static void
state_save(struct sched *s, struct sched_job *j)
{
	char name[TASK_CODE_MAX + 8], a[TSTIME_BUF], b[TSTIME_BUF];
	struct buf out;
	json_t *o = json_object();
	char *text;

	snprintf(name, sizeof(name), "%s.json", j->def.code);
	json_object_set_new(o, "jobCode", json_string(j->def.code));
	json_object_set_new(o, "lastFire", j->last_fire >= 0 ?
	    json_string(tstime_format_ms(a, sizeof(a), j->last_fire)) :
	    json_null());
	json_object_set_new(o, "lastEnd", j->last_end >= 0 ?
	    json_string(tstime_format_ms(b, sizeof(b), j->last_end)) :
	    json_null());
	json_object_set_new(o, "lastTaskId", j->last_id[0] != '\0' ?
	    json_string(j->last_id) : json_null());
	json_object_set_new(o, "disabled", json_boolean(!j->def.enabled));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	buf_init(&out, 0);
	if (text == NULL || buf_puts(&out, text) != 0 || buf_puts(&out,
	    "\n") != 0 || spool_publish(s->sp, s->statefd, name, out.data,
	    out.len, -1, 0) != 0)
		log_warn("job %s: cannot save state/jobs/%s (a restart may "
		    "fire from an older point; task ids prevent duplicates)",
		    j->def.code, name);
	else {
		j->saved_at = tstime_now_ms();
		j->state_dirty = 0;
	}
	free(text);
	buf_fini(&out);
}

/* --- firing --- */

/* Remember id as a task of j that may be live (a fire, or a name found by
 * live_scan).  Returns 0, or -1 (ENOMEM: the next scan finds it). */
static int
live_add(struct sched_job *j, const char *id)
{
	for (size_t i = 0; i < j->nlive; i++)
		if (strcmp(j->live[i], id) == 0)
			return 0;
	if (j->nlive == j->live_cap) {
		size_t cap = j->live_cap ? j->live_cap * 2 : 4;
		void *p = reallocarray(j->live, cap, sizeof(*j->live));

		if (p == NULL)
			return -1;
		j->live = p;
		j->live_cap = cap;
	}
	snprintf(j->live[j->nlive++], sizeof(*j->live), "%s", id);
	return 0;
}

/* Drop the remembered tasks of j that are no longer pending or running.
 * Returns how many are live. */
static size_t
live_prune(struct sched *s, struct sched_job *j)
{
	size_t k = 0;

	for (size_t i = 0; i < j->nlive; i++)
		if (jobrun_task_live(s->sp, j->live[i])) {
			if (k != i)
				memcpy(j->live[k], j->live[i],
				    sizeof(*j->live));
			k++;
		}
	j->nlive = k;
	return k;
}

/* Whether j's overlap policy needs its live tasks (forbid, replace). */
static int
live_tracked(const struct sched_job *j)
{
	return j->def.overlap != JOB_OVERLAP_ALLOW;
}

/*
 * The job of a task file name "<jobCode>.<yyyymmddThhmmss[mmm]Z>.json"
 * (job_task_id's form) among the loaded jobs, or NULL.  The instant has
 * no '.', so the job code is what precedes the last '.' of the stem.
 */
static struct sched_job *
job_of_name(struct sched *s, const char *name, char *id, size_t idlen)
{
	size_t l = strlen(name), dl;
	const char *dot, *p;

	if (l <= 5 || l - 5 >= idlen || strcmp(name + l - 5, ".json") != 0)
		return NULL;
	memcpy(id, name, l - 5);
	id[l - 5] = '\0';
	if ((dot = strrchr(id, '.')) == NULL)
		return NULL;
	/* 8 digits, T, 6 digits, optionally 3 more, Z */
	p = dot + 1;
	dl = strspn(p, "0123456789");
	if (dl != 8 || p[8] != 'T')
		return NULL;
	p += 9;
	dl = strspn(p, "0123456789");
	if ((dl != 6 && dl != 9) || strcmp(p + dl, "Z") != 0)
		return NULL;
	for (struct sched_job *j = s->jobs; j != NULL; j = j->next)
		if (strlen(j->def.code) == (size_t)(dot - id) &&
		    strncmp(j->def.code, id, (size_t)(dot - id)) == 0)
			return live_tracked(j) ? j : NULL;
	return NULL;
}

static void
live_scan_dir(struct sched *s, int dfd)
{
	char id[JOB_TASK_ID_MAX + 1];
	struct dirent *de;
	struct sched_job *j;
	DIR *dp;

	if ((dp = spool_opendir(dfd)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL)
		if (de->d_name[0] != '.' &&
		    (j = job_of_name(s, de->d_name, id, sizeof(id))) != NULL &&
		    live_add(j, id) != 0)
			log_warn("job %s: remembering %s", j->def.code, id);
	closedir(dp);
}

/*
 * Look over the spool for tasks of the loaded forbid/replace jobs that
 * may be pending or running: every J.<instant> name in delayed/,
 * incoming/, queue/<node>/ and active/<node>/, in the order tasks move
 * through them, then delayed/ and incoming/ once more (a retry or a
 * give-back made meanwhile).  Run when jobs are (re)loaded — so a new
 * leader, a restarted one and a reloaded job start from what the spool
 * holds, not from state/jobs/ — and every SCHED_LIVE_SCAN_MS (a task of
 * the job published by someone else: `jobs run-now`, a deposed leader).
 */
static void
live_scan(struct sched *s)
{
	static const enum spool_dir order[] = { SPOOL_DELAYED,
		SPOOL_INCOMING, SPOOL_QUEUE, SPOOL_ACTIVE, SPOOL_DELAYED,
		SPOOL_INCOMING };
	int any = 0;

	for (struct sched_job *j = s->jobs; j != NULL; j = j->next)
		any |= live_tracked(j);
	s->next_live_scan = tstime_mono_ms() + SCHED_LIVE_SCAN_MS;
	if (!any)
		return;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		enum spool_dir d = order[i];
		struct dirent *de;
		DIR *dp;

		if (d != SPOOL_QUEUE && d != SPOOL_ACTIVE) {
			live_scan_dir(s, s->sp->dir[d]);
			continue;
		}
		if ((dp = spool_opendir(s->sp->dir[d])) == NULL)
			continue;
		while ((de = readdir(dp)) != NULL) {
			int nfd;

			if (de->d_name[0] == '.' || !spool_code_ok(de->d_name))
				continue;
			nfd = openat(s->sp->dir[d], de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0)
				continue;
			live_scan_dir(s, nfd);
			close(nfd);
		}
		closedir(dp);
	}
}

/*
 * Whether the fire id exists already (pending, running, finished): a
 * previous leader, or this one before a restart, published it.
 */
static int
fired_before(struct sched *s, const char *id)
{
	char rname[JOB_TASK_ID_MAX + 8];
	enum spool_dir where;
	struct stat st;

	snprintf(rname, sizeof(rname), "%s.json", id);
	return spool_locate(s->sp, id, &where, NULL) == 0 ||
	    fstatat(s->sp->dir[SPOOL_RESULTS], rname, &st, 0) == 0;
}

/*
 * Write the task file of j's fire at instant t (epoch ms) into tmp/, not
 * synced: created_ms = now; with jitter the due instant (*due, else -1)
 * becomes its notBefore and its mtime (the writer protocol's due time
 * for delayed/), else the mtime is mtime_ms when >= 0 (a prepared fire:
 * its instant, the time it becomes a task).  The name goes into tmp
 * (tmplen bytes).  Returns 0 or -1 (logged; nothing left in tmp/).
 */
static int
fire_write(struct sched *s, struct sched_job *j, int64_t t, int64_t now,
    int64_t mtime_ms, char *tmp, size_t tmplen, int64_t *duep)
{
	static unsigned counter;
	static long pid;
	struct task task;
	struct buf enc;
	int fd, rc = -1;
	int64_t due = -1;
	size_t off = 0;

	task_init(&task);
	buf_init(&enc, 0);
	if (job_make_task(&j->def, t, &task) != 0) {
		log_warnx("job %s: cannot build the task of instant %lld",
		    j->def.code, (long long)t);
		goto out;
	}
	task.created_ms = now;
	{
		/* Each fire starts a new trace (README.md, "Trace
		 * context"); without random bytes it has none. */
		char tp[TRACEPARENT_LEN + 1];

		if (traceparent_fresh(tp) == 0)
			task.traceparent = strdup(tp);
	}
	if (j->def.jitter_ms > 0) {
		uint32_t r = 0;

		(void)RAND_bytes((unsigned char *)&r, sizeof(r));
		due = t + (int64_t)(r % (uint32_t)(j->def.jitter_ms + 1));
		if (due > now)
			task.not_before_ms = due;
		else
			due = -1;
	}
	if (task_encode(&task, &enc) != 0)
		goto out;
	if (pid == 0)
		pid = (long)getpid();
	/* Created exclusively: a file of that name left by an earlier
	 * process with this pid (or by another host's, on a shared spool)
	 * is not truncated under its writer; the next name is tried. */
	for (int tries = 0;; tries++) {
		snprintf(tmp, tmplen, "fire.%ld.%u", pid, counter++);
		fd = openat(s->sp->dir[SPOOL_TMP], tmp, O_WRONLY | O_CREAT |
		    O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (fd >= 0 || errno != EEXIST || tries == 15)
			break;
	}
	if (fd < 0) {
		log_warn("job %s: tmp/%s", j->def.code, tmp);
		goto out;
	}
	while (off < enc.len) {
		ssize_t w = write(fd, enc.data + off, enc.len - off);

		if (w < 0) {
			log_warn("job %s: write tmp/%s", j->def.code, tmp);
			close(fd);
			(void)unlinkat(s->sp->dir[SPOOL_TMP], tmp, 0);
			goto out;
		}
		off += (size_t)w;
	}
	if (due > now || mtime_ms >= 0) {
		int64_t m = due > now ? due : mtime_ms;
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = (time_t)(m / 1000);
		ts[0].tv_nsec = ts[1].tv_nsec = (long)(m % 1000) * 1000000L;
		(void)futimens(fd, ts);
	}
	close(fd);
	rc = 0;
out:
	*duep = due > now ? due : -1;
	task_fini(&task);
	buf_fini(&enc);
	return rc;
}

/*
 * Stage the fire of job j at instant t (epoch ms): task J.<t> in tmp/
 * (published by publish_staged() at the end of the tick) — the file
 * prepared for t before it was due when there is one, else written now.
 * A fire at or before the job's replay horizon (what a previous leader
 * may have fired) is a no-op when its task exists anywhere: the task
 * name is the fence.  Returns 1 staged, 0 no-op, -1 error.
 */
static int
fire_stage(struct sched *s, struct sched_job *j, int64_t t, int64_t now)
{
	struct staged *st;
	int64_t due = -1;

	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return -1;
	if (job_task_id(j->def.code, t, st->id, sizeof(st->id)) != 0) {
		log_warnx("job %s: no task id for instant %lld", j->def.code,
		    (long long)t);
		free(st);
		return -1;
	}
	if (t <= j->replay_until && fired_before(s, st->id)) {
		log_debug("job %s: %s already fired", j->def.code, st->id);
		snprintf(j->last_id, sizeof(j->last_id), "%s", st->id);
		free(st);
		return 0;
	}
	if (j->pre_t == t) {
		snprintf(st->tmp, sizeof(st->tmp), "%s", j->pre_tmp);
		st->synced = 1;
		j->pre_t = -1;
	} else if (fire_write(s, j, t, now, -1, st->tmp, sizeof(st->tmp),
	    &due) != 0) {
		free(st);
		return -1;
	}
	st->j = j;
	st->t = t;
	st->fenced = live_tracked(j);
	st->dest = due > now ? SPOOL_DELAYED : SPOOL_INCOMING;
	st->next = s->staged;
	s->staged = st;
	s->nstaged++;
	if (now - t > 500) {
		s->late_n++;
		if (now - t > s->late_max)
			s->late_max = now - t;
	}
	return 1;
}

/* --- prepared fires --- */

/*
 * A fire's file is written and made durable SCHED_PREPARE_MS before its
 * instant (prepare_pass), so that at the instant only the decision
 * (run_job: misfire, overlap, the run marker) and the rename into
 * incoming/ remain: the lateness of a fire is then that of a rename, not
 * of writing and syncing every file of the second.  Only the next
 * instant of an enabled job without jitter is prepared (a jittered fire
 * goes to delayed/ with a due time of its own); the file is an ordinary
 * tmp/ file until then (a crash leaves it to the leader's hourly tmp/
 * cleaning; the next leader fires the instant itself), and it is
 * removed when the job is rescheduled otherwise, disabled, changed,
 * removed, or the fire is not made (overlap forbid).
 */

/* Forget j's prepared file (removed) and its pending prepare time. */
static void
unprepare(struct sched *s, struct sched_job *j)
{
	if (wheel_entry_pending(&j->pwe))
		wheel_cancel(s->pw, &j->pwe);
	j->pre_want = -1;
	if (j->pre_t >= 0) {
		(void)unlinkat(s->sp->dir[SPOOL_TMP], j->pre_tmp, 0);
		j->pre_t = -1;
	}
}

/* j fires next at instant next (> now): prepare it in time. */
static void
prepare_at(struct sched *s, struct sched_job *j, int64_t next, int64_t now)
{
	if (!j->def.enabled || j->def.jitter_ms > 0 || next <= now ||
	    next <= j->replay_until)
		return;
	j->pre_want = next;
	wheel_insert(s->pw, &j->pwe, (uint64_t)(next - SCHED_PREPARE_MS >
	    now ? next - SCHED_PREPARE_MS : now));
}

static void
on_prepare(struct wheel_entry *e, void *arg)
{
	struct sched_job **head = arg;
	struct sched_job *j = WHEEL_ENTRY_OWNER(e, struct sched_job, pwe);

	j->pnext = *head;
	*head = j;
}

/*
 * Prepare the fires whose prepare time is due at now: write each, then
 * make them durable together (one syncfs(2) from SCHED_SYNCFS_MIN files
 * on, else an fsync each), as publish_staged would.  A file that could
 * not be written or synced is not prepared: the fire writes its own.
 */
static void
prepare_pass(struct sched *s, int64_t now)
{
	struct sched_job *head = NULL, *j;
	size_t n = 0;
	int ok = 1;

	wheel_advance(s->pw, (uint64_t)(now > 0 ? now : 0), on_prepare,
	    &head);
	for (j = head; j != NULL; j = j->pnext) {
		int64_t due;

		if (j->pre_want < 0 || n >= SCHED_TICK_MAX ||
		    fire_write(s, j, j->pre_want, j->pre_want, j->pre_want,
		    j->pre_tmp, sizeof(j->pre_tmp), &due) != 0) {
			j->pre_want = -1;
			continue;
		}
		n++;
	}
	if (n == 0)
		return;
	if (s->sp->do_fsync && n >= SCHED_SYNCFS_MIN)
		ok = syncfs(s->sp->dir[SPOOL_TMP]) == 0;
	else if (s->sp->do_fsync)
		for (j = head; ok && j != NULL; j = j->pnext) {
			int fd;

			if (j->pre_want < 0)
				continue;
			fd = openat(s->sp->dir[SPOOL_TMP], j->pre_tmp,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			ok = fd >= 0 && fsync(fd) == 0;
			if (fd >= 0)
				close(fd);
		}
	if (!ok)
		log_warn("sync of %zu prepared fire(s) (written at their "
		    "instants instead)", n);
	for (j = head; j != NULL; j = j->pnext) {
		if (j->pre_want < 0)
			continue;
		if (ok) {
			j->pre_t = j->pre_want;
		} else
			(void)unlinkat(s->sp->dir[SPOOL_TMP], j->pre_tmp, 0);
		j->pre_want = -1;
	}
}

/*
 * Write the state of the jobs whose save run_job() asked for.  Called
 * once the pass's fires are in place, so that the last fire a state
 * records and its lastTaskId are the same fire (a save made before the
 * publish recorded the new instant beside the previous task).
 */
static void
saves_flush(struct sched *s)
{
	for (struct sched_job *j = s->jobs; j != NULL; j = j->next)
		if (j->save_due) {
			j->save_due = 0;
			state_save(s, j);
		}
}

/*
 * Publish every staged fire: one syncfs(2) makes all the tick's task
 * files durable at once (instead of one fsync each; below
 * SCHED_SYNCFS_MIN fires, one fsync each is cheaper), then each is moved
 * exclusively into incoming/ or delayed/, then each of those directories
 * is fsynced once.  A name that exists already (EEXIST) was fired before.
 */
static void
publish_staged(struct sched *s)
{
	struct staged *st, *next;
	int dirty[2] = { 0, 0 }, fenced = 0;
	size_t need = 0;

	if (s->staged == NULL) {
		saves_flush(s);
		return;
	}
	/* What is to be synced: the files not prepared (those are durable
	 * already) and the run markers of forbid/replace fires. */
	for (st = s->staged; st != NULL; st = st->next)
		need += !st->synced + st->fenced;
	/* The run markers of the pass's forbid/replace fires (written
	 * without fsync by jobrun_begin) become durable here too, before
	 * any of their runs is published. */
	if (s->sp->do_fsync && need >= SCHED_SYNCFS_MIN) {
		if (syncfs(s->sp->dir[SPOOL_TMP]) != 0)
			log_warn("syncfs before publishing %zu fire(s)",
			    s->nstaged);
	} else if (s->sp->do_fsync) {
		/* A few fires: syncing them one by one is cheaper than
		 * flushing everything else the file system holds. */
		for (st = s->staged; st != NULL; st = st->next) {
			int fd = st->synced ? -1 : openat(s->sp->dir[SPOOL_TMP],
			    st->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

			if (!st->synced && (fd < 0 || fsync(fd) != 0))
				log_warn("fsync tmp/%s", st->tmp);
			if (fd >= 0)
				close(fd);
			if (st->fenced && jobrun_sync(s->sp, s->runsfd,
			    st->j->def.code) != 0)
				log_warn("fsync state/jobruns/%s.run",
				    st->j->def.code);
			fenced |= st->fenced;
		}
		if (fenced && fsync(s->runsfd) != 0)
			log_warn("fsync state/jobruns/");
	}
	for (st = s->staged; st != NULL; st = next) {
		char file[JOB_TASK_ID_MAX + 8];

		next = st->next;
		snprintf(file, sizeof(file), "%s.json", st->id);
		/* A forbid/replace fire is moved only while the job's run
		 * marker names it (jobrun.h): a leader whose marker another
		 * took over meanwhile publishes nothing. */
		if ((st->fenced ? jobrun_publish(s->runsfd, st->j->def.code,
		    st->id, s->sp->dir[SPOOL_TMP], st->tmp,
		    s->sp->dir[st->dest], file) :
		    spool_move_excl(s->sp->dir[SPOOL_TMP], st->tmp,
		    s->sp->dir[st->dest], file)) == 0) {
			dirty[st->dest == SPOOL_DELAYED] = 1;
			s->published++;
			snprintf(st->j->last_id, sizeof(st->j->last_id), "%s",
			    st->id);
			if (live_tracked(st->j) && live_add(st->j, st->id) !=
			    0)
				log_warn("job %s: remembering %s",
				    st->j->def.code, st->id);
			log_debug("job %s: fired %s", st->j->def.code, st->id);
		} else {
			if (errno == ESTALE)
				log_info("job %s: fire %s dropped: the job's "
				    "run marker names another run now (another "
				    "leader fired the job)", st->j->def.code,
				    st->id);
			else if (errno != EEXIST) {
				/* Not fired: rewind, so this instant is
				 * planned again in a second. */
				log_warn("job %s: publish %s (tried again in "
				    "1 s)", st->j->def.code, st->id);
				if (st->t - 1 < st->j->last_fire)
					st->j->last_fire = st->t - 1;
				st->j->state_dirty = 1;
				schedule(s, st->j, tstime_now_ms() + 1000);
			}
			(void)unlinkat(s->sp->dir[SPOOL_TMP], st->tmp, 0);
		}
		free(st);
	}
	s->staged = NULL;
	s->nstaged = 0;
	saves_flush(s);
	if (dirty[0])
		(void)spool_sync_dir(s->sp, s->sp->dir[SPOOL_INCOMING]);
	if (dirty[1])
		(void)spool_sync_dir(s->sp, s->sp->dir[SPOOL_DELAYED]);
	if (s->late_n > 0)
		log_warnx("%zu fire(s) more than 500 ms late, the latest by "
		    "%lld ms", s->late_n, (long long)s->late_max);
	s->late_n = 0;
	s->late_max = 0;
}

static void
schedule(struct sched *s, struct sched_job *j, int64_t when)
{
	if (j->pre_want >= 0 || j->pre_t >= 0)
		unprepare(s, j);
	if (wheel_entry_pending(&j->we))
		wheel_cancel(s->w, &j->we);
	if (when >= 0)
		wheel_insert(s->w, &j->we, (uint64_t)when);
}

/* The end of the job's last run (fixedDelay), from its result file. */
static int64_t
run_end(struct sched *s, struct sched_job *j)
{
	char name[JOB_TASK_ID_MAX + 8];
	struct stat st;

	if (j->last_id[0] == '\0')
		return -1;
	snprintf(name, sizeof(name), "%s.json", j->last_id);
	if (fstatat(s->sp->dir[SPOOL_RESULTS], name, &st, 0) != 0)
		return -1;
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec /
	    1000000;
}

/* Plan and fire what is due for j at now, then schedule its next fire. */
static void
run_job(struct sched *s, struct sched_job *j, int64_t now)
{
	int64_t out[SCHED_PLAN_MAX];
	struct job_plan plan;
	size_t n;
	int fired = 0;

	if (!j->def.enabled) {
		/* A disabled job's missed instants are not caught up later:
		 * the state remembers it was disabled (see load_job). */
		if (now > j->last_fire)
			j->last_fire = now;
		state_save(s, j);
		schedule(s, j, -1);
		return;
	}
	if (j->waiting_end) {
		int64_t end = run_end(s, j);

		if (end < 0) {
			schedule(s, j, now + SCHED_END_POLL_MS);
			return;
		}
		j->waiting_end = 0;
		j->last_end = end;
		state_save(s, j);
	}
	n = job_misfire_plan(&j->def, j->z, j->last_fire, j->last_end, now,
	    JOB_MISFIRE_THRESHOLD_MS, out, SCHED_PLAN_MAX, &plan);
	if (plan.misfired)
		log_warnx("job %s: misfire after downtime or a clock jump: "
		    "policy %s fires %zu of the missed instant(s)%s",
		    j->def.code, job_misfire_name(j->def.misfire), n,
		    plan.dropped ? ", the others are dropped" : "");
	/* Instants a previous leader (or this one before a reload or a
	 * restart) may have fired are looked up by name: those that exist
	 * are not fired again, and the latest of them is the job's previous
	 * task for the overlap decision below. */
	{
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			char rid[JOB_TASK_ID_MAX + 1];

			if (out[i] <= j->replay_until &&
			    job_task_id(j->def.code, out[i], rid,
			    sizeof(rid)) == 0 && fired_before(s, rid)) {
				snprintf(j->last_id, sizeof(j->last_id), "%s",
				    rid);
				if (live_tracked(j))
					(void)live_add(j, rid);
				continue;
			}
			out[k++] = out[i];
		}
		n = k;
	}
	/* Overlap, decided once per pass from what the spool holds (the
	 * job's tasks pending or running, whoever fired them:
	 * jobrun_task_live), fenced by the job's run marker (jobrun.h: what
	 * another leader at the same time, or `jobs run-now`, fired): with
	 * forbid, a live task skips the whole pass, and a catch-up of
	 * several instants fires only the first; with replace, only the
	 * last instant fires and every live task of the job is cancelled.
	 * A replayed instant whose task is the live one is that task, not a
	 * new fire. */
	if (n > 0 && live_tracked(j)) {
		char lid[JOB_TASK_ID_MAX + 1], prev[JOB_TASK_ID_MAX + 1];
		size_t live = live_prune(s, j);
		int v;

		prev[0] = '\0';
		if (j->def.overlap == JOB_OVERLAP_REPLACE) {
			out[0] = out[n - 1];
			n = 1;
		} else if (live > 0)
			n = 0;
		else
			n = 1;
		if (job_task_id(j->def.code, out[0], lid, sizeof(lid)) != 0)
			lid[0] = '\0';
		if (n == 0)
			log_info("job %s: fire skipped: %s still pending or "
			    "running (overlap forbid)", j->def.code,
			    j->live[0]);
		v = n > 0 && lid[0] != '\0' ? jobrun_begin(s->sp, s->runsfd,
		    j->def.code, lid, s->token, s->sp->node,
		    j->def.overlap == JOB_OVERLAP_REPLACE, JOBRUN_NOSYNC, now,
		    prev, sizeof(prev)) : JOBRUN_FIRE;
		if (v < 0) {
			/* Not decided: this instant is tried again in 1 s. */
			if (errno == EWOULDBLOCK)
				log_info("job %s: its run marker is busy "
				    "(another leader fires it now); %s tried "
				    "again in 1 s", j->def.code, lid);
			else
				log_warn("job %s: run marker state/jobruns/"
				    "%s.run (%s tried again in 1 s)",
				    j->def.code, j->def.code, lid);
			if (out[0] - 1 > j->last_fire)
				j->last_fire = out[0] - 1;
			state_save(s, j);
			schedule(s, j, now + 1000);
			return;
		}
		if (v == JOBRUN_LIVE) {
			log_info("job %s: fire skipped: %s still pending or "
			    "running (overlap forbid)", j->def.code, prev);
			(void)live_add(j, prev);
			n = 0;
		} else if (v == JOBRUN_MADE) {
			log_info("job %s: %s already fired by another leader "
			    "(run marker)", j->def.code, lid);
			snprintf(j->last_id, sizeof(j->last_id), "%s", lid);
			(void)live_add(j, lid);
			n = 0;
		} else if (prev[0] != '\0' && strcmp(prev, lid) != 0 &&
		    jobrun_task_live(s->sp, prev))
			(void)live_add(j, prev);	/* replace: cancelled */
		for (size_t i = 0; n > 0 && i < j->nlive; i++) {
			if (strcmp(lid, j->live[i]) == 0)
				continue;
			log_info("job %s: new fire replaces %s (overlap "
			    "replace): cancelling it", j->def.code,
			    j->live[i]);
			if (s->sp->cancel >= 0 && spool_publish(s->sp,
			    s->sp->cancel, j->live[i], "", 0, -1, 0) != 0)
				log_warn("job %s: cancel %s", j->def.code,
				    j->live[i]);
		}
	}
	for (size_t i = 0; i < n; i++) {
		int r = fire_stage(s, j, out[i], now);

		if (r < 0) {
			/* Not settled: this instant is tried again in 1 s. */
			if (out[i] - 1 > j->last_fire)
				j->last_fire = out[i] - 1;
			state_save(s, j);
			schedule(s, j, now + 1000);
			return;
		}
		fired += r;
	}
	if (plan.settled_ms > j->last_fire || fired > 0) {
		if (plan.settled_ms > j->last_fire)
			j->last_fire = plan.settled_ms;
		/* Written at most every SCHED_SAVE_MS: after a crash the
		 * replay horizon and the task names make re-fires no-ops. */
		j->state_dirty = 1;
		if (plan.misfired || now - j->saved_at >= SCHED_SAVE_MS)
			j->save_due = 1;	/* after the publish */
	}
	if (plan.next_ms == JOB_NEXT_AFTER_END) {
		j->waiting_end = 1;
		schedule(s, j, now + SCHED_END_POLL_MS);
	} else if (plan.next_ms == JOB_NEXT_NONE) {
		schedule(s, j, -1);
	} else {
		schedule(s, j, plan.next_ms);
		prepare_at(s, j, plan.next_ms, now);
	}
}

/* --- loading --- */

static struct sched_job *
find_job(struct sched *s, const char *file)
{
	for (struct sched_job *j = s->jobs; j != NULL; j = j->next)
		if (strcmp(j->file, file) == 0)
			return j;
	return NULL;
}

static void
drop_job(struct sched *s, struct sched_job *dead)
{
	struct sched_job **pp;

	for (pp = &s->jobs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == dead) {
			*pp = dead->next;
			break;
		}
	if (wheel_entry_pending(&dead->we))
		wheel_cancel(s->w, &dead->we);
	unprepare(s, dead);
	job_free(dead);
}

/* Load jobs/<file> (new or changed).  Returns the job or NULL. */
/* MariaDB mode: mirror j's definition (data/len, the jobs/ file; NULL:
 * removed) into task_definition through the records outbox. */
static void
mirror_definition(struct sched *s, const struct sched_job *j,
    const char *data, size_t len, int64_t at)
{
	char sched[64];
	const char *sc = sched;

	if (s->cfg->mariadb[0] == '\0')
		return;
	if (j->def.kind == JOB_KIND_CRON)
		sc = j->def.cron_text;
	else
		snprintf(sched, sizeof(sched), "%s=%lld", j->def.kind ==
		    JOB_KIND_FIXED_RATE ? "fixedRateMs" : "fixedDelayMs",
		    (long long)j->def.interval_ms);
	if (records_append_definition(s->sp, j->def.code, j->def.task_code,
	    sc, j->def.enabled, data, len, at) != 0)
		log_warn("job %s: cannot write its definition record",
		    j->def.code);
}

static struct sched_job *
load_job(struct sched *s, const char *file, const struct stat *st,
    int64_t now)
{
	char why[512], stem[SPOOL_NAME_MAX];
	struct task_error te;
	struct sched_job *j;
	struct stat fst;
	struct buf b;
	size_t fl = strlen(file);
	int fd;

	fd = spool_open_safe(s->sp->dir[SPOOL_JOBS], file, JOB_FILE_MAX, &fst,
	    why, sizeof(why));
	if (fd < 0) {
		if (errno != ENOENT) {
			log_warnx("jobs/%s rejected: %s", file, why);
			(void)spool_quarantine(s->sp, s->sp->dir[SPOOL_JOBS],
			    file, why);
		}
		return NULL;
	}
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		close(fd);
		return NULL;
	}
	wheel_entry_init(&j->we);
	wheel_entry_init(&j->pwe);
	j->pre_want = j->pre_t = -1;
	job_init(&j->def);
	j->last_fire = j->last_end = -1;
	buf_init(&b, JOB_FILE_MAX);
	if (buf_read_fd(&b, fd) != 0) {
		log_warn("jobs/%s", file);
		goto fail;
	}
	close(fd);
	fd = -1;
	if (job_decode(b.data != NULL ? b.data : "", b.len, &j->def, &te)) {
		snprintf(why, sizeof(why), "%s: %s", te.field, te.rule);
		goto reject;
	}
	memcpy(stem, file, fl - 5);
	stem[fl - 5] = '\0';
	if (strcmp(stem, j->def.code) != 0) {
		snprintf(why, sizeof(why), "jobCode: \"%s\" does not match the "
		    "file name (must be <jobCode>.json)", j->def.code);
		goto reject;
	}
	j->z = j->def.timezone[0] != '\0' ? tz_load(j->def.timezone, why,
	    sizeof(why)) : tz_load_host(why, sizeof(why));
	if (j->z == NULL) {
		char msg[600];

		snprintf(msg, sizeof(msg), "%s: %s",
		    job_zone_member(&j->def), why);
		snprintf(why, sizeof(why), "%.500s", msg);
		goto reject;
	}
	memcpy(j->file, file, fl + 1);	/* fl < SPOOL_NAME_MAX: see scan */
	j->ino = st->st_ino;
	j->mtime = st->st_mtim;
	state_load(s, j);
	if (j->last_fire < 0) {
		/* Never fired: instants before it existed are not missed.
		 * Without createdAt, it exists since its file came into
		 * jobs/: the inode change time, which a rename sets and
		 * `cp -p` or touch(1) cannot set back (stat(2)); not "now",
		 * or a leader killed before its first state save would, at
		 * its restart, lose the instants of the outage. */
		int64_t came = (int64_t)st->st_ctim.tv_sec * 1000 +
		    st->st_ctim.tv_nsec / 1000000;

		j->last_fire = j->def.created_ms >= 0 ? j->def.created_ms :
		    came < now ? came : now;
	}
	if (j->def.enabled && j->was_disabled && now > j->last_fire)
		/* Re-enabled: what was missed while disabled is not due. */
		j->last_fire = now;
	if (j->def.created_ms > j->last_fire)
		/* Re-added under the same code: its past is not its own. */
		j->last_fire = j->def.created_ms;
	/* Up to now another leader (or this one before a restart) may have
	 * fired this job without the state showing it: such instants are
	 * looked up by task name before they are fired. */
	j->replay_until = now;
	j->saved_at = now;
	mirror_definition(s, j, b.data, b.len, (int64_t)st->st_mtim.tv_sec *
	    1000 + st->st_mtim.tv_nsec / 1000000);
	buf_fini(&b);
	return j;
reject:
	log_warnx("jobs/%s rejected → corrupt/: %s", file, why);
	(void)spool_quarantine(s->sp, s->sp->dir[SPOOL_JOBS], file, why);
fail:
	if (fd >= 0)
		close(fd);
	buf_fini(&b);
	job_free(j);
	return NULL;
}

void
scheduler_scan(struct sched *s, int64_t now)
{
	struct sched_job *j, *next;
	struct dirent *de;
	int loaded = 0;
	DIR *dp;

	if ((dp = spool_opendir(s->sp->dir[SPOOL_JOBS])) == NULL)
		return;
	for (j = s->jobs; j != NULL; j = j->next)
		j->seen = 0;
	while ((de = readdir(dp)) != NULL) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' || l <= 5 ||
		    strcmp(de->d_name + l - 5, ".json") != 0 ||
		    l >= SPOOL_NAME_MAX)
			continue;
		if (fstatat(s->sp->dir[SPOOL_JOBS], de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		j = find_job(s, de->d_name);
		if (j != NULL && j->ino == st.st_ino &&
		    j->mtime.tv_sec == st.st_mtim.tv_sec &&
		    j->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			j->seen = 1;
			continue;
		}
		/* New or changed: (re)load, keeping the fire history. */
		{
			struct sched_job *nj = load_job(s, de->d_name, &st,
			    now);

			if (j != NULL && nj != NULL &&
			    strcmp(j->def.code, nj->def.code) == 0) {
				/* A changed definition keeps the history
				 * this leader has, newer than the state
				 * file may be. */
				if (j->last_fire > nj->last_fire &&
				    nj->def.created_ms <= j->last_fire)
					nj->last_fire = j->last_fire;
				if (j->last_end > nj->last_end)
					nj->last_end = j->last_end;
				if (j->last_id[0] != '\0')
					snprintf(nj->last_id,
					    sizeof(nj->last_id), "%s",
					    j->last_id);
				for (size_t i = 0; live_tracked(nj) &&
				    i < j->nlive; i++)
					(void)live_add(nj, j->live[i]);
				nj->waiting_end = j->waiting_end;
			}
			if (j != NULL)
				drop_job(s, j);
			if (nj == NULL)
				continue;
			nj->seen = 1;
			nj->run_pending = 1;
			nj->next = s->jobs;
			s->jobs = nj;
			loaded = 1;
			log_info("job %s loaded (%s)", nj->def.code,
			    nj->def.enabled ? "enabled" : "disabled");
		}
	}
	closedir(dp);
	/* What of the (re)loaded jobs may still run is read from the spool
	 * (once for them all) before any of them fires. */
	if (loaded)
		live_scan(s);
	for (j = s->jobs; j != NULL; j = j->next)
		if (j->run_pending) {
			j->run_pending = 0;
			run_job(s, j, now);
		}
	publish_staged(s);	/* fires of (re)loaded jobs */
	for (j = s->jobs; j != NULL; j = next) {
		next = j->next;
		if (!j->seen) {
			char sname[TASK_CODE_MAX + 8];

			log_info("job %s removed", j->def.code);
			mirror_definition(s, j, NULL, 0, now);
			snprintf(sname, sizeof(sname), "%s.json", j->def.code);
			(void)unlinkat(s->statefd, sname, 0);
			drop_job(s, j);
		}
	}
}

/* Wheel callback: collect due jobs, in due order (run after the advance). */
struct due_list {
	struct sched_job *head, **tail;
};

static void
on_due(struct wheel_entry *e, void *arg)
{
	struct due_list *dl = arg;
	struct sched_job *j = WHEEL_ENTRY_OWNER(e, struct sched_job, we);

	j->dnext = NULL;
	*dl->tail = j;
	dl->tail = &j->dnext;
}

void
scheduler_tick(struct sched *s, int64_t now, int64_t mono)
{
	struct due_list dl;
	int64_t jump = (now - s->last_wall) - (mono - s->last_mono);

	if (jump > SCHED_JUMP_MS || jump < -SCHED_JUMP_MS)
		log_warnx("wall clock jumped %+lld ms (NTP step or manual "
		    "change); fires already made are not repeated, missed ones "
		    "follow each job's misfire policy", (long long)jump);
	s->last_wall = now;
	s->last_mono = mono;
	if (mono >= s->next_live_scan)
		live_scan(s);
	dl.head = NULL;
	dl.tail = &dl.head;
	wheel_advance(s->w, (uint64_t)(now > 0 ? now : 0), on_due, &dl);
	for (struct sched_job *j = dl.head, *next; j != NULL; j = next) {
		next = j->dnext;
		if (s->nstaged >= SCHED_TICK_MAX) {
			/* Bounded work per pass: the rest fire in the next
			 * pass, so claims and signals are not starved. */
			schedule(s, j, now);
			continue;
		}
		run_job(s, j, now);
	}
	publish_staged(s);
	prepare_pass(s, now);
}

int
scheduler_next(const struct sched *s, int64_t *due_ms)
{
	uint64_t d, p;
	int has = wheel_next_due(s->w, &d);

	if (wheel_next_due(s->pw, &p) && (!has || p < d)) {
		d = p;
		has = 1;
	}
	if (!has)
		return 0;
	*due_ms = (int64_t)d;
	return 1;
}

int
scheduler_count(const struct sched *s)
{
	int n = 0;

	for (const struct sched_job *j = s->jobs; j != NULL; j = j->next)
		n++;
	return n;
}

unsigned long long
scheduler_published(const struct sched *s)
{
	return s != NULL ? s->published : 0;
}
