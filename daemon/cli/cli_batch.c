/*
 * cli_batch — "taskspool batch open|close|status|list" and the member
 * entry of "submit --batch"; see cli_batch.h.  Every write goes through
 * spool/batchdir.c (writer protocol, flock on the batch's directory).
 */
#include "cli/cli_batch.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "callback/callback.h"
#include "core/batch.h"
#include "core/buf.h"
#include "core/tstime.h"
#include "spool/batchdir.h"
#include "spool/clock.h"

static const char *const batch_usage =
"usage: taskspool batch open ID [--on-complete CODE] [--callback-url URL]\n"
"       taskspool batch close ID [--on-complete CODE] [--callback-url URL]\n"
"       taskspool [--json] batch status ID\n"
"       taskspool [--json] batch list\n";

int
cli_batch_join(const struct spool *sp, const char *bid, const char *id)
{
	char why[512];

	switch (batchdir_join(sp, bid, id, NULL, tstime_now_ms(), why,
	    sizeof(why))) {
	case BATCHDIR_OK:
		return 0;
	case BATCHDIR_CLOSED:
		fprintf(stderr, "taskspool submit: invalid task: batchId: %s "
		    "(closed batches take no new member)\n", why);
		return EX_DATAERR;
	default:
		fprintf(stderr, "taskspool submit: batchId: %s\n", why);
		return errno == EINVAL ? EX_DATAERR : EX_IOERR;
	}
}

/* The batch's state in one word. */
static const char *
batch_word(const struct batch *b)
{
	return b->completed_ms >= 0 ? "completed" : b->closed_ms >= 0 ?
	    "closed" : "open";
}

/* open or close: write the batch. */
static int
cmd_put(const struct config *cfg, const struct spool *sp, int close_it,
    int argc, char **argv)
{
	static const struct option lo[] = {
		{ "on-complete", required_argument, NULL, 'o' },
		{ "callback-url", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 } };
	const char *code = NULL, *url = NULL, *verb = argv[0];
	struct batch b;
	char why[768];
	int ch;

	optind = 0;	/* glibc: re-initialise fully (cli.c) */
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'o': code = optarg; break;
		case 'u': url = optarg; break;
		default:
			fputs(batch_usage, stderr);
			return EX_USAGE;
		}
	}
	if (argc - optind != 1) {
		fputs(batch_usage, stderr);
		return EX_USAGE;
	}
	batch_init(&b);
	if (!batch_id_ok(argv[optind])) {
		fprintf(stderr, "taskspool batch %s: \"%s\" is not a batchId "
		    "([A-Za-z0-9][A-Za-z0-9_.-]{0,%d})\n", verb, argv[optind],
		    BATCH_ID_MAX - 1);
		return EX_USAGE;
	}
	memcpy(b.id, argv[optind], strlen(argv[optind]) + 1);
	if (code != NULL) {
		if (!task_name_ok(code, TASK_CODE_MAX)) {
			fprintf(stderr, "taskspool batch %s: --on-complete: "
			    "\"%s\" is not a taskCode\n", verb, code);
			return EX_USAGE;
		}
		memcpy(b.on_complete, code, strlen(code) + 1);
	}
	if (url != NULL) {
		enum urlcheck_rc v;

		if (strlen(url) > TASK_URL_MAX) {
			fprintf(stderr, "taskspool batch %s: --callback-url: "
			    "longer than %d bytes\n", verb, TASK_URL_MAX);
			return EX_DATAERR;
		}
		/* The rules of a task's callbackUrl (taskspool submit). */
		v = callback_url_check(cfg, url, why, sizeof(why));
		if (v != URLCHECK_OK) {
			fprintf(stderr, "taskspool batch %s: --callback-url: "
			    "%s\n", verb, why);
			return v == URLCHECK_UNAVAILABLE ? EX_UNAVAILABLE :
			    EX_DATAERR;
		}
		if (!callback_can_sign(sp, cfg, NULL)) {
			fprintf(stderr, "taskspool batch %s: --callback-url: "
			    "%s\n", verb, CALLBACK_NO_SECRET_WHY);
			return EX_DATAERR;
		}
		memcpy(b.callback_url, url, strlen(url) + 1);
	}
	b.created_ms = b.closed_ms = tstime_now_ms();
	switch (batchdir_put(sp, &b, close_it, close_it, why, sizeof(why))) {
	case BATCHDIR_OK:
		printf("%s %s\n", b.id, batch_word(&b));
		return 0;
	case BATCHDIR_CLOSED:
		fprintf(stderr, "taskspool batch %s: %s\n", verb, why);
		return EX_DATAERR;
	default:
		fprintf(stderr, "taskspool batch %s: %s\n", verb, why);
		return errno == ENOENT ? EX_NOINPUT : errno == EINVAL ?
		    EX_DATAERR : EX_IOERR;
	}
}

/* Read batch bid and its members' summary; prints the error. */
static int
load(const struct spool *sp, const char *bid, struct batch *b,
    struct batch_summary *s)
{
	char why[512];

	batch_summary_init(s);
	if (!batch_id_ok(bid)) {
		fprintf(stderr, "taskspool batch: \"%s\" is not a batchId\n",
		    bid);
		return EX_USAGE;
	}
	if (batchdir_read(sp, bid, b, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool batch: %s\n", why);
		return errno == ENOENT ? EX_NOINPUT : errno == EINVAL ?
		    EX_DATAERR : EX_IOERR;
	}
	if (batchdir_summary(sp, bid, tstime_now_ms(), s) != 0) {
		fprintf(stderr, "taskspool batch: %s: members: %s\n", bid,
		    strerror(errno));
		return EX_IOERR;
	}
	return 0;
}

static int
cmd_status(const struct spool *sp, int json, int argc, char **argv)
{
	struct batch b;
	struct batch_summary s;
	struct buf out;
	char t[TSTIME_BUF];
	int rc;

	if (argc != 2) {
		fputs(batch_usage, stderr);
		return EX_USAGE;
	}
	if ((rc = load(sp, argv[1], &b, &s)) != 0)
		return rc;
	if (json) {
		buf_init(&out, 0);
		rc = batch_summary_encode(&b, &s, 1, &out);
		if (rc == 0)
			printf("%.*s\n", (int)out.len, out.data);
		buf_fini(&out);
		batch_summary_fini(&s);
		return rc == 0 ? 0 : EX_SOFTWARE;
	}
	printf("batch %s: %s", b.id, batch_word(&b));
	if (b.closed_ms >= 0)
		printf(" (closed %s)", tstime_format_ms(t, sizeof(t),
		    b.closed_ms));
	printf("\n");
	if (b.on_complete[0] != '\0')
		printf("onComplete: %s%s%s\n", b.on_complete,
		    b.complete_id[0] != '\0' ? " -> " : "", b.complete_id);
	if (b.callback_url[0] != '\0')
		printf("callbackUrl: %s\n", b.callback_url);
	if (b.completed_ms >= 0)
		printf("completed: %s\n", tstime_format_ms(t, sizeof(t),
		    b.completed_ms));
	printf("total: %zu", s.total);
	for (size_t i = 0; i < s.nstates; i++)
		printf("%s%s %zu", i == 0 ? " (" : ", ", s.counts[i].state,
		    s.counts[i].n);
	printf("%s\n", s.nstates > 0 ? ")" : "");
	if (s.nfailed > 0) {
		printf("failed:");
		for (size_t i = 0; i < s.nfailed; i++)
			printf(" %s", s.failed[i]);
		printf("\n");
	}
	batch_summary_fini(&s);
	return 0;
}

struct list_ctx {
	const struct spool *sp;
	int json, n, rc;
};

static int
list_one(const char *bid, void *arg)
{
	struct list_ctx *lc = arg;
	struct batch b;
	struct batch_summary s;
	struct buf out;

	if (load(lc->sp, bid, &b, &s) != 0) {
		lc->rc = EX_DATAERR;
		return 0;	/* the others still */
	}
	if (lc->json) {
		buf_init(&out, 0);
		if (batch_summary_encode(&b, &s, 1, &out) == 0)
			printf("%s%.*s", lc->n > 0 ? "," : "", (int)out.len,
			    out.data);
		buf_fini(&out);
	} else
		printf("%s %s %zu member(s), %zu terminal, %zu failed\n",
		    b.id, batch_word(&b), s.total, s.nterminal, s.nfailed);
	lc->n++;
	batch_summary_fini(&s);
	return 0;
}

static int
cmd_list(const struct spool *sp, int json, int argc)
{
	struct list_ctx lc = { sp, json, 0, 0 };

	if (argc != 1) {
		fputs(batch_usage, stderr);
		return EX_USAGE;
	}
	if (json)
		printf("[");
	if (batchdir_each(sp, list_one, &lc) != 0) {
		fprintf(stderr, "taskspool batch list: state/batches/: %s\n",
		    strerror(errno));
		return EX_IOERR;
	}
	if (json)
		printf("]\n");
	return lc.rc;
}

int
cli_batch_main(const struct config *cfg, const struct spool *sp, int json,
    int argc, char **argv)
{
	if (argc < 2) {
		fputs(batch_usage, stderr);
		return EX_USAGE;
	}
	if (strcmp(argv[1], "open") == 0 || strcmp(argv[1], "close") == 0)
		return cmd_put(cfg, sp, argv[1][0] == 'c', argc - 1, argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return cmd_status(sp, json, argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0)
		return cmd_list(sp, json, argc - 1);
	fprintf(stderr, "taskspool batch: unknown subcommand \"%s\"\n%s",
	    argv[1], batch_usage);
	return EX_USAGE;
}
