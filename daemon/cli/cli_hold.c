/*
 * cli_hold — `taskspool hold` and `taskspool release` (README.md,
 * "Holding and releasing tasks"): the moves are coord/hold.c's; this
 * file parses the command line, reports each task's outcome, and tells
 * cluster mode what changed (the Redis index entry of a moved task is
 * dropped, so `status` reads the spool; a released task's directory
 * gets a wake-up).
 */
#include "cli/cli_hold.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "core/batch.h"
#include "coord/hold.h"
#include "coord/index.h"
#include "coord/wakeup.h"
#include "spool/batchdir.h"
#include "spool/clock.h"
#include "core/tstime.h"

struct hold_run {
	const struct config *cfg;
	const struct spool *sp;
	int release;		/* release, not hold */
	int json;
	int quiet_missing;	/* --code/--all: a task gone meanwhile */
	int quiet_finished;	/* --code, --batch, --all: tasks that ended */
	json_t *arr;		/* --json with --code or --all */
	long moved, marked, other;
	int rc;			/* the worst exit status so far */
	char by[64];
};

void
cli_hold_usage(FILE *fp)
{
	fputs("usage: taskspool hold ID | --code C | --batch B\n"
	    "       taskspool release ID | --code C | --batch B | --all\n"
	    "\n"
	    "hold moves a pending task (PENDING, WAITING, DISPATCHED) into\n"
	    "hold/ (HELD): no node claims it until it is released.  A RUNNING\n"
	    "task runs on; its next retry, if any, is held.  --code C holds\n"
	    "every pending task of code C present now, --batch B every\n"
	    "member of batch B not finished yet.  release puts held\n"
	    "tasks back where they wait their turn (incoming/, or delayed/\n"
	    "when their notBefore is still ahead).\n"
	    "exit status: 0 done (also: already held, not held); 64 usage;\n"
	    "  66 no such task; 69 the task is finished; 74 I/O error.\n",
	    fp);
}

void
cli_hold_reason(const struct spool *sp, const char *id, enum spool_dir where,
    char *out, size_t len)
{
	struct holdmark m;
	char why[256], when[TSTIME_BUF];

	if (where != SPOOL_HOLD && where != SPOOL_ACTIVE)
		return;
	if (hold_mark_read(sp, id, &m, why, sizeof(why)) != 0) {
		if (where == SPOOL_HOLD)
			snprintf(out, len, "held; no hold marker%s%s",
			    errno == ENOENT ? "" : ": ", errno == ENOENT ?
			    "" : why);
		return;
	}
	tstime_format_ms(when, sizeof(when), m.since_ms);
	if (where == SPOOL_HOLD)
		snprintf(out, len, "held since %s, from %s/%s%s", when, m.from,
		    m.by[0] != '\0' ? ", by " : "", m.by);
	else
		snprintf(out, len, "hold requested %s%s%s: its next retry is "
		    "held", when, m.by[0] != '\0' ? " by " : "", m.by);
}

/* The status for a result that is a failure; keeps the worst. */
static void
fail(struct hold_run *r, int code)
{
	if (r->rc == 0 || code == EX_IOERR)
		r->rc = code;
}

/* One line (or JSON object) for task id: status word and message. */
static void
report(struct hold_run *r, const char *id, const char *status,
    const char *msg)
{
	if (r->json) {
		json_t *o = json_object();

		json_object_set_new(o, "requestId", json_string(id));
		json_object_set_new(o, "result", json_string(status));
		json_object_set_new(o, "message", json_string(msg));
		if (r->arr != NULL)
			json_array_append_new(r->arr, o);
		else {
			char *s = json_dumps(o, JSON_COMPACT);

			printf("%s\n", s != NULL ? s : "{}");
			free(s);
			json_decref(o);
		}
		return;
	}
	printf("%s %s: %s\n", id, status, msg);
}

static void
hold_one(const char *id, void *arg)
{
	struct hold_run *r = arg;
	enum spool_dir where = SPOOL_NDIRS;
	char why[512], msg[640];
	enum hold_status hs;

	hs = hold_task(r->sp, id, r->by, tstime_now_ms(), &where, why,
	    sizeof(why));
	switch (hs) {
	case HOLD_MOVED:
		r->moved++;
		(void)index_client(r->cfg, r->sp, id, 1, NULL);
		snprintf(msg, sizeof(msg), "moved from %s/ to hold/; no node "
		    "claims it until `taskspool release %s`",
		    spool_dir_name(where), id);
		report(r, id, "HELD", msg);
		break;
	case HOLD_MARKED:
		r->marked++;
		snprintf(msg, sizeof(msg), where == SPOOL_ACTIVE ? "it runs "
		    "now; its next retry, if it gets one, goes to hold/" :
		    "it waits in %s/ of its node, which moves it to hold/ "
		    "when it would claim it", spool_dir_name(where));
		report(r, id, "HOLD_REQUESTED", msg);
		break;
	case HOLD_ALREADY:
		r->other++;
		report(r, id, "HELD", "already held");
		break;
	case HOLD_FINISHED:
		r->other++;
		if (r->quiet_finished)
			break;
		fprintf(stderr, "taskspool hold: %s already finished (%s): "
		    "nothing to hold\n", id, spool_state_name(where));
		fail(r, EX_UNAVAILABLE);
		break;
	case HOLD_UNKNOWN:
		if (r->quiet_missing)
			break;
		fprintf(stderr, "taskspool hold: no task %s\n", id);
		fail(r, EX_NOINPUT);
		break;
	default:
		fprintf(stderr, "taskspool hold: %s: %s\n", id, why);
		fail(r, EX_IOERR);
		break;
	}
}

static void
release_one(const char *id, void *arg)
{
	struct hold_run *r = arg;
	enum spool_dir to = SPOOL_NDIRS;
	char why[512], msg[640];
	enum hold_status hs;

	hs = hold_release(r->sp, id, tstime_now_ms(), &to, why, sizeof(why));
	switch (hs) {
	case HOLD_MOVED:
		r->moved++;
		(void)index_client(r->cfg, r->sp, id, 1, NULL);
		wakeup_notify(r->cfg, r->sp, to, NULL);
		snprintf(msg, sizeof(msg), "moved from hold/ to %s/",
		    spool_dir_name(to));
		report(r, id, "PENDING", msg);
		break;
	case HOLD_MARKED:
		r->marked++;
		report(r, id, "RELEASED", "the hold request was withdrawn "
		    "(the task was not in hold/ yet)");
		break;
	case HOLD_NOT_HELD:
		r->other++;
		if (r->quiet_finished)
			break;
		snprintf(msg, sizeof(msg), "not held (%s)",
		    spool_state_name(to) != NULL ? spool_state_name(to) :
		    "?");
		report(r, id, "NOT_HELD", msg);
		break;
	case HOLD_FINISHED:
		r->other++;
		if (r->quiet_finished)
			break;
		fprintf(stderr, "taskspool release: %s already finished "
		    "(%s): nothing to release\n", id, spool_state_name(to));
		fail(r, EX_UNAVAILABLE);
		break;
	case HOLD_UNKNOWN:
		if (r->quiet_missing)
			break;
		fprintf(stderr, "taskspool release: no task %s\n", id);
		fail(r, EX_NOINPUT);
		break;
	default:
		fprintf(stderr, "taskspool release: %s: %s\n", id, why);
		fail(r, EX_IOERR);
		break;
	}
}

int
cli_hold_main(const struct config *cfg, const struct spool *sp, int json,
    int argc, char **argv)
{
	static const struct option lo[] = {
		{ "code", required_argument, NULL, 'C' },
		{ "batch", required_argument, NULL, 'B' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	const char *cmd = argv[0], *code = NULL, *batch = NULL;
	struct hold_run r;
	int ch, all = 0;
	long n;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.sp = sp;
	r.json = json;
	r.release = strcmp(cmd, "release") == 0;
	snprintf(r.by, sizeof(r.by), "cli uid %ld", (long)getuid());
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'C': code = optarg; break;
		case 'B': batch = optarg; break;
		case 'a': all = 1; break;
		case 'h':
			cli_hold_usage(stdout);
			return 0;
		default:
			cli_hold_usage(stderr);
			return EX_USAGE;
		}
	}
	if ((all && !r.release) || (code != NULL) + (batch != NULL) + all +
	    (optind < argc) != 1 || optind + 1 < argc) {
		cli_hold_usage(stderr);
		return EX_USAGE;
	}
	if (code != NULL && !spool_code_ok(code)) {
		fprintf(stderr, "taskspool %s: --code: \"%s\" is not a valid "
		    "taskCode\n", cmd, code);
		return EX_USAGE;
	}
	if (optind < argc) {
		if (!spool_id_ok(argv[optind])) {
			fprintf(stderr, "taskspool %s: \"%s\" is not a valid "
			    "requestId\n", cmd, argv[optind]);
			return EX_USAGE;
		}
		if (r.release)
			release_one(argv[optind], &r);
		else
			hold_one(argv[optind], &r);
		return r.rc;
	}
	if (batch != NULL && !batch_id_ok(batch)) {
		fprintf(stderr, "taskspool %s: --batch: \"%s\" is not a valid "
		    "batchId\n", cmd, batch);
		return EX_USAGE;
	}
	/* --code, --batch or --all: the tasks present now. */
	r.quiet_missing = 1;
	r.quiet_finished = 1;	/* ended meanwhile: nothing to do */
	if (json)
		r.arr = json_array();
	if (batch != NULL)
		n = batchdir_each_member(sp, batch, r.release ? release_one :
		    hold_one, &r);
	else
		n = r.release ? hold_each_held(sp, code, release_one, &r) :
		    hold_each_pending(sp, code, hold_one, &r);
	if (n < 0 && batch != NULL && errno == ENOENT) {
		fprintf(stderr, "taskspool %s: --batch: no batch %s\n", cmd,
		    batch);
		json_decref(r.arr);
		return EX_NOINPUT;
	}
	if (n < 0) {
		fprintf(stderr, "taskspool %s: %s/: %s\n", cmd, r.release ?
		    "hold" : "incoming", strerror(errno));
		json_decref(r.arr);
		return EX_IOERR;
	}
	if (r.arr != NULL) {
		char *s = json_dumps(r.arr, JSON_COMPACT);

		printf("%s\n", s != NULL ? s : "[]");
		free(s);
		json_decref(r.arr);
	} else if (r.release)
		printf("released %ld task(s)%s%s%s\n", r.moved + r.marked,
		    code != NULL ? " of code " : batch != NULL ? " of batch " :
		    "", code != NULL ? code : batch != NULL ? batch : "",
		    r.marked > 0 ? " (some were hold requests withdrawn)" :
		    "");
	else
		printf("held %ld task(s) of %s %s%s\n", r.moved, code != NULL ?
		    "code" : "batch", code != NULL ? code : batch,
		    r.marked > 0 ? " (more when their nodes claim them)" :
		    "");
	return r.rc;
}
