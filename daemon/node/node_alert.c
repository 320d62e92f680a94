/*
 * node_alert — the system hook _on_task_failed (issue 14 item 5): run
 * once per task this node concludes FAILED, with the result envelope on
 * stdin.  Best-effort, like _on_callback_failed (spool/syshook.c starts
 * both): not waited for (the loop reaps it with waitpid(-1)), not
 * retried, not timed out, its exit status ignored.  The onFailure alert
 * task, a real task, is the durable way to alert; this hook is the
 * node-local one.
 */
#include "node/node_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "spool/log.h"
#include "spool/syshook.h"

#define NODE_FAILED_HOOK	"_on_task_failed"

/*
 * Start <hooks_dir>/_on_task_failed, if it is executable, for the task
 * id (taskCode code) that ended FAILED, result (len bytes, the result
 * envelope, borrowed) on its stdin.  Environment: TASKSPOOL_REQUEST_ID,
 * TASKSPOOL_TASK_CODE, TASKSPOOL_NODE and PATH.  Errors are logged,
 * never returned (best-effort).
 */
void
node_alert_hook(struct node *n, const char *id, const char *code,
    const void *result, size_t len)
{
	char e1[TASK_ID_MAX + 32], e2[TASK_CODE_MAX + 32],
	    e3[CONFIG_NODE_MAX + 32], e4[CONFIG_PATH_MAX + 8];
	/* Tagged, so that the sweep of processes hooks left behind
	 * (node_slots.c) knows it is no attempt's. */
	char e5[] = "TASKSPOOL_SYSTEM_HOOK=" NODE_FAILED_HOOK;
	char *envp[] = { e1, e2, e3, e4, e5, NULL };
	const char *p = getenv("PATH");
	pid_t pid;

	snprintf(e1, sizeof(e1), "TASKSPOOL_REQUEST_ID=%s", id);
	snprintf(e2, sizeof(e2), "TASKSPOOL_TASK_CODE=%s", code);
	snprintf(e3, sizeof(e3), "TASKSPOOL_NODE=%s", n->cfg->node_id);
	snprintf(e4, sizeof(e4), "PATH=%s", p != NULL ? p :
	    "/usr/local/bin:/usr/bin:/bin");
	pid = syshook_start(n->cfg, NODE_FAILED_HOOK, envp, result, len);
	if (pid < 0)
		log_warn("%s: cannot run %s", id, NODE_FAILED_HOOK);
	else if (pid > 0)
		log_info("%s: started %s (pid %d)", id, NODE_FAILED_HOOK,
		    (int)pid);
}
