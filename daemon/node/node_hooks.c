/*
 * node_hooks — the hooks this node has: whether hooks_dir/<code> is an
 * executable (cached a second), and the list the heartbeat advertises.
 *
 * Invariant: a missing hook is the node's trouble, never the task's: a
 * task whose hook this node lacks is parked (n->nohook) or sent back to
 * be routed, and comes back as a candidate when the list changes.
 * Reads hooks_dir only, with hook_user's file identity (hookcred.h):
 * a hook counts if whom runs it may execute it.
 */
#include "node/node_impl.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool/clock.h"
#include "spool/hookcred.h"
#include "spool/hookset.h"
#include "spool/log.h"
#include "core/nameset.h"

int
node_hook_ok(struct node *n, const char *code)
{
	struct nameset_node *h = nameset_find(&n->hookcache, code);
	int64_t now = tstime_mono_ms();
	struct stat hs;

	struct hookcred_saved sv;
	int ok = 0;

	if (h != NULL && now - h->key < 1000)
		return 1;
	/* Executable by whom runs it: hook_user's file identity (with the
	 * daemon's groups still: close, not exact). */
	if (hookcred_enter(&n->cfg->hookcred, HOOKCRED_USER, &sv) == 0)
		ok = fstatat(n->hooksfd, code, &hs, 0) == 0 &&
		    S_ISREG(hs.st_mode) && (hs.st_mode & 0111) != 0 &&
		    faccessat(n->hooksfd, code, X_OK, AT_EACCESS) == 0;
	hookcred_leave(&sv);
	if (!ok) {
		nameset_remove(&n->hookcache, code);
		return 0;
	}
	if (h == NULL && n->hookcache.count < 4096)
		h = nameset_add(&n->hookcache, code, NULL);
	if (h != NULL)
		h->key = now;
	return 1;
}

int
node_hooks_rescan(struct node *n, int all)
{
	char list[HOOKSET_MAX];
	size_t count;
	struct hookcred_saved sv;
	int rc = -1, changed;

	/* As node_hook_ok: the hooks hook_user may execute. */
	if (hookcred_enter(&n->cfg->hookcred, HOOKCRED_USER, &sv) == 0)
		rc = hookset_scan(n->hooksfd, list, sizeof(list), &count);
	hookcred_leave(&sv);

	if (rc < 0) {
		log_warn("hooks_dir %s: cannot list its hooks (advertising "
		    "the previous list)", n->cfg->hooks_dir);
		return 0;
	}
	changed = strcmp(list, n->hooks) != 0;
	if (changed) {
		memcpy(n->hooks, list, strlen(list) + 1);
		log_info("hooks: %zu in %s%s", count, n->cfg->hooks_dir, rc == 1 ?
		    " (more than the heartbeat holds: advertised as \"*\")" :
		    "");
	}
	if (changed || all) {
		struct nameset_node *c;

		while ((c = nameset_pop(&n->nohook)) != NULL) {
			node_cand_add(n, c->name, c->flags & CAND_ANNOUNCED);
			free(c);
		}
	}
	return changed;
}
