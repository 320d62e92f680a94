/*
 * node_hold — the node's side of holding (coord/hold.h, README.md,
 * "Holding and releasing tasks"): a task whose hold marker
 * state/hold/<id> is there when this node would claim it goes to hold/
 * instead; the retry of an attempt of a marked task is published into
 * hold/ instead of delayed/; a task that ends terminal has its marker
 * removed.
 *
 * Writes: hold/ (by rename under the claim lock and claim marker, or the
 * retry's publish), state/hold/ (removals).  Held tasks are the
 * operator's until released: neither the claim loop, the reaper nor the
 * leader moves anything out of hold/ (recovery only reads a held retry
 * there, to know an orphan in active/ is its stale copy; a cancel claims
 * a held task like a pending one).
 */
#include "node/node_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coord/hold.h"
#include "spool/log.h"
#include "spool/spool.h"
#include "core/task.h"

int
node_hold_claim(struct node *n, int dfd, const char *name,
    const char *final, const struct task *t)
{
	const char *id = t->request_id;
	char why[256];

	if (!hold_marked(&n->sp, id))
		return 0;
	if (spool_move_excl(dfd, name, n->sp.dir[SPOOL_HOLD], final) != 0) {
		if (errno == EEXIST) {
			snprintf(why, sizeof(why), "requestId: duplicate: "
			    "\"%s\" is already held in hold/ (a second copy)",
			    id);
			node_quarantine(n, dfd, name, why);
		} else if (errno != ENOENT && errno != ESTALE)
			log_warn("%s: move to hold/", id);
		return 1;
	}
	node_mark_dirty(n, SPOOL_HOLD);
	if (dfd == n->sp.dir[SPOOL_INCOMING])
		node_mark_dirty(n, SPOOL_INCOMING);
	else
		(void)spool_sync_dir(&n->sp, dfd);
	node_index_note(n, id, SPOOL_HOLD, NULL, NULL, t, -1);
	log_info("%s: held (state/hold/%s): moved to hold/ instead of "
	    "being claimed; `taskspool release %s` puts it back", id, id, id);
	return 1;
}

enum spool_dir
node_hold_retry_dir(struct node *n, const char *id)
{
	return hold_marked(&n->sp, id) ? SPOOL_HOLD : SPOOL_DELAYED;
}

void
node_hold_ended(struct node *n, const char *id)
{
	if (hold_mark_clear(&n->sp, id) != 0)
		log_warn("%s: remove state/hold/%s", id, id);
}
