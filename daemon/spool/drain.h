/*
 * drain — the drain marker files, state/drain/<node>.json (their format:
 * core/drainmark.h).  `taskspool nodes drain` writes one, `resume`
 * removes it, and the node polls its own (node/node_drain.c): while it
 * is there the node finishes the hooks it runs, claims nothing new and
 * stays up — the operator's drain of Slurm's `scontrol update
 * state=drain`, not the SIGTERM drain that ends in an exit.  The marker
 * is a file of the shared spool, so it works the same in embedded and
 * cluster mode, and reaches a node that is offline when it starts.
 */
#ifndef TASKSPOOL_DRAIN_H
#define TASKSPOOL_DRAIN_H

#include <stddef.h>

#include "core/drainmark.h"
#include "spool/spool.h"

/*
 * Read node's marker into *m.  Returns 1 when the node is drained, 0
 * when there is no marker, -1 with errno and why (when whylen > 0) when
 * it cannot be read (EACCES, EIO...: a problem of this host, not a
 * decision; the caller keeps what it knew).  A marker that does not
 * decode, names another node, is larger than a marker or is a symbolic
 * link (never followed) still drains (someone meant it): m's
 * reason then says it is damaged and why, since_ms is 0.
 */
int drain_read(const struct spool *sp, const char *node, struct drainmark *m,
    char *why, size_t whylen);

/*
 * Write m (drainmark_encode) as m->node's marker by the writer protocol
 * (tmp + fsync + rename + fsync(state/drain/)), replacing one that is
 * there; state/drain/ is made (mode 02750) when missing.  Returns 0, or
 * -1 with errno (EINVAL: m is not valid).
 */
int drain_write(const struct spool *sp, const struct drainmark *m);

/*
 * Remove node's marker and fsync state/drain/.  Returns 0, or -1 with
 * errno (ENOENT: it was not drained).
 */
int drain_remove(const struct spool *sp, const char *node);

#endif
