/*
 * holdmark — the hold marker of a task, `state/hold/<requestId>`: an
 * operator's request that the task be kept out of every claim until it is
 * released (Postfix's `postsuper -h` hold queue).  `taskspool hold` and
 * `POST /api/tasks/{id}/hold` write it (spool/hold.c), `release` removes
 * it; a claiming node that finds it moves the task into hold/ instead of
 * running it, and a node concluding an attempt to be retried puts the
 * retry into hold/ (node/node_claim.c, node/node_conclude.c).  Pure
 * codec.
 *
 *   {"requestId": "order-1", "since": "2026-12-02T03:00:00.000Z",
 *    "from": "incoming", "by": "cli uid 1000"}
 *
 * requestId: the task's (task_name_ok, at most 128 bytes), and must be
 * the name the file is under; since: RFC 3339, when the hold was asked
 * for; from: where the task was then, one of incoming, delayed, queue,
 * active (running: its next retry is held), hold, blocked (waiting for
 * its parents: released into incoming/, it goes back to blocked/ and
 * waits there again); by: who asked, at most
 * HOLDMARK_BY_MAX bytes of printable text (no control byte: it is shown
 * in logs and the CLI), may be empty.  Nothing else.
 */
#ifndef TASKSPOOL_HOLDMARK_H
#define TASKSPOOL_HOLDMARK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/jsonfield.h"

#define HOLDMARK_ID_MAX		128
#define HOLDMARK_FROM_MAX	16	/* "incoming", "delayed" ... */
#define HOLDMARK_BY_MAX		128
#define HOLDMARK_FILE_MAX	1024	/* bytes of a marker file */

struct holdmark {
	char request_id[HOLDMARK_ID_MAX + 1];
	char from[HOLDMARK_FROM_MAX + 1];
	char by[HOLDMARK_BY_MAX + 1];
	int64_t since_ms;		/* epoch ms */
};

/*
 * Decode the len bytes at data (any bytes) into *m.  Returns 0, or -1
 * with *err naming the member and the rule (a JSON text refused by the
 * RFC 8259 byte gate or the parser: field "json").  Borrows data.
 */
int holdmark_decode(const char *data, size_t len, struct holdmark *m,
    struct task_error *err);

/*
 * Encode *m (as holdmark_decode accepts it) into out, one line with a
 * final LF.  Returns 0, or -1 with errno (ENOMEM; EINVAL: m not valid,
 * a bad requestId or from, a by with a control byte).
 */
int holdmark_encode(const struct holdmark *m, struct buf *out);

/* Whether from is one of the places a marker may name.  Returns 1 or 0. */
int holdmark_from_ok(const char *from);

/*
 * Whether by is text a marker may hold: at most HOLDMARK_BY_MAX bytes,
 * no byte below 0x20 and no 0x7f.  Returns 1 or 0.
 */
int holdmark_by_ok(const char *by);

#endif
