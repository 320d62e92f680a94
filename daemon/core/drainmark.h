/*
 * drainmark — the drain marker of a node, `state/drain/<node>.json`: an
 * operator's request that the node finish what it runs and claim nothing
 * new while it stays up (Slurm's `scontrol update nodename=N
 * state=drain reason=...`).  `taskspool nodes drain` writes it, `resume`
 * removes it, the node reads it (node/node_drain.c).  Pure codec.
 *
 *   {"node": "n1", "reason": "kernel update", "since":
 *    "2026-12-02T03:00:00.000Z"}
 *
 * node: the node's id (task_name_ok, at most 64 bytes), and must be the
 * name the file is under; reason: at most DRAINMARK_REASON_MAX bytes of
 * printable text (no control byte: it is shown in logs and the CLI),
 * may be empty; since: RFC 3339.  Nothing else.
 */
#ifndef TASKSPOOL_DRAINMARK_H
#define TASKSPOOL_DRAINMARK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/jsonfield.h"

#define DRAINMARK_NODE_MAX	64
#define DRAINMARK_REASON_MAX	256
#define DRAINMARK_FILE_MAX	1024	/* bytes of a marker file */

struct drainmark {
	char node[DRAINMARK_NODE_MAX + 1];
	char reason[DRAINMARK_REASON_MAX + 1];
	int64_t since_ms;		/* epoch ms */
};

/*
 * Decode the len bytes at data (any bytes) into *m.  Returns 0, or -1
 * with *err naming the member and the rule (a JSON text refused by the
 * RFC 8259 byte gate or the parser: field "json").  Borrows data.
 */
int drainmark_decode(const char *data, size_t len, struct drainmark *m,
    struct task_error *err);

/*
 * Encode *m (as drainmark_decode accepts it) into out, one line with a
 * final LF.  Returns 0, or -1 (out of memory, or m not valid: a reason
 * with a control byte, a bad node id).
 */
int drainmark_encode(const struct drainmark *m, struct buf *out);

/*
 * Whether reason is one a marker may hold: at most DRAINMARK_REASON_MAX
 * bytes, no byte below 0x20 and no 0x7f.  Returns 1 or 0.
 */
int drainmark_reason_ok(const char *reason);

#endif
