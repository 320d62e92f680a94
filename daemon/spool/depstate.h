/*
 * depstate — the state of a task's parents, read from the spool (the
 * directory each parent's file is in: spool_locate), in the terms of
 * core/depend.h.  Mechanism only: reads directories, writes nothing,
 * logs nothing.  Shared by the leader's release (node/node_depend.c),
 * the writers that refuse unknown parents (taskspool submit, POST
 * /api/tasks) and the views (taskspool status and deps, GET /tasks/{id}).
 */
#ifndef TASKSPOOL_DEPSTATE_H
#define TASKSPOOL_DEPSTATE_H

#include "core/depend.h"
#include "spool/spool.h"

/*
 * Where requestId id is: done/ SUCCESS, failed/ FAILED, cancelled/
 * CANCELLED, any other directory of the task lifecycle (blocked/,
 * incoming/, delayed/, queue/, active/) PENDING, nowhere UNKNOWN (also
 * for an id the spool's grammar refuses).  A file seen in no directory
 * (it may be moving between two) is looked for once more before UNKNOWN.
 * The directory itself goes to *where when where is not NULL and the id
 * was found.
 */
enum depend_parent depstate_of(const struct spool *s, const char *id,
    enum spool_dir *where);

/*
 * The state requestId id is in, as `taskspool status` names it (the
 * spool_state_name of its directory: PENDING, BLOCKED, HELD, RUNNING,
 * SUCCESS...), or "UNKNOWN" when it is nowhere.  Returns a static
 * string.
 */
const char *depstate_name(const struct spool *s, const char *id);

/*
 * depstate_of for every edge of l: states (l->n entries, the caller's)
 * filled.  Returns the index of the first UNKNOWN parent, or -1 when
 * every parent is in the spool.
 */
long depstate_all(const struct spool *s, const struct depend_list *l,
    enum depend_parent *states);

/*
 * Every requestId a task of blocked/ or hold/ waits on, added to ws (initialised
 * by the caller: nameset_init), so that `taskspool purge` keeps those
 * tasks and results.  A file of blocked/ that cannot be read or decoded
 * adds nothing (the leader quarantines it).  Returns 0, or -1 with errno
 * (blocked/ unreadable, ENOMEM): the caller must then purge nothing.
 */
struct nameset;
int depstate_waited(const struct spool *s, struct nameset *ws);

#endif
