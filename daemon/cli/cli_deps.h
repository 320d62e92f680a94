/*
 * cli_deps.h — task dependencies in the CLI (README.md, "Dependencies"):
 * `submit --after ID[:COND]`, the submit-time check of the parents, and
 * the "taskspool deps ID" subcommand.
 */
#ifndef CLI_DEPS_H
#define CLI_DEPS_H

#include <jansson.h>

#include "core/nameset.h"
#include "core/task.h"
#include "spool/spool.h"

/*
 * Append one --after argument, "ID" or "ID:afterok|afternotok|afterany"
 * (Slurm's sbatch --dependency=COND:ID, written the other way round),
 * to the JSON array *arr (new on the first call; the caller decrefs it)
 * as {"requestId": ID, "condition": COND}.  Returns 0, or -1 after
 * printing the reason (exit 64).
 */
int cli_deps_after(json_t **arr, const char *arg);

/*
 * The submit-time check of t's parents in sp (both borrowed): each must
 * be somewhere in the spool, or in earlier (may be NULL: the requestIds
 * that submit --ndjson publishes before t), so no cycle can form.
 * Returns 0, or 65 (EX_DATAERR) after printing "taskspool submit:
 * <what>invalid task: dependsOn[i].requestId: no task ID in the spool"
 * (what: "" or e.g. "line 3: ").
 */
int cli_deps_check(const struct spool *sp, const struct task *t,
    const struct nameset *earlier, const char *what);

/*
 * Run "taskspool deps ID [--json]": the task's parents, each with its
 * condition and state (and the verdict: waiting, holds, never), and the
 * tasks of blocked/ waiting on it.  Returns 0, 64 (usage), 66
 * (EX_NOINPUT: no such task).
 */
int cli_deps_main(const struct spool *sp, int json, int argc, char **argv);

/*
 * For "taskspool status": print to stdout, one line each, "waiting for
 * ID (COND, STATE)" for the parents of the blocked task whose file is
 * blocked/<id>.json.  Nothing when it cannot be read.
 */
void cli_deps_print_waiting(const struct spool *sp, const char *id);

#endif
