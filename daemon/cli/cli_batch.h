/*
 * cli_batch — the "taskspool batch" command of the CLI (open, close,
 * status, list) and the batch side of "taskspool submit --batch"
 * (README.md, "Batches"; the files: spool/batchdir.h).
 */
#ifndef CLI_BATCH_H
#define CLI_BATCH_H

#include "spool/config.h"
#include "spool/spool.h"

/*
 * Run "taskspool batch open|close ID [--on-complete CODE]
 * [--callback-url URL]", "batch status ID" or "batch list" (argv[0] is
 * "batch") on the open spool sp under cfg (both borrowed); json: status
 * and list print JSON (status: the summary of batch_summary_encode with
 * full; list: one array).  Returns an exit status: 0; 64 (EX_USAGE); 65
 * (EX_DATAERR: a closed batch whose onComplete or callbackUrl would
 * change, a refused callbackUrl, a damaged batch.json); 66 (EX_NOINPUT:
 * no such batch); 69 (EX_UNAVAILABLE: the callback URL cannot be checked
 * now); 74 (EX_IOERR).
 */
int cli_batch_main(const struct config *cfg, const struct spool *sp, int json,
    int argc, char **argv);

/*
 * The batch side of a submission: make request id a member of batch bid
 * (batchdir_join) before the caller publishes the task, printing the
 * refusal on stderr.  Returns 0, 65 (EX_DATAERR: the batch is closed, or
 * its batch.json is damaged) or 74 (EX_IOERR).  A caller whose publish
 * then fails calls batchdir_leave().
 */
int cli_batch_join(const struct spool *sp, const char *bid, const char *id);

#endif
