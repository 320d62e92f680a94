/*
 * hookset — the task codes a node can run: the executables of its
 * hooks_dir, as the node advertises them in its heartbeat (coord.h,
 * struct coord_node.hooks) so that claiming and dispatch never hand a
 * task to a node without its hook (issue 11 item 4: a missing hook is a
 * property of the node, not of the task).
 *
 * The list is text: the codes sorted by strcmp and joined by ',' (a task
 * code never holds a comma: [A-Za-z0-9][A-Za-z0-9_.-]{0,63}).  It is
 * bounded by HOOKSET_MAX bytes; a directory with more hooks than fit is
 * advertised with the entry "*" last, which readers take as "may have
 * any hook": such a node is offered every code and checks its own
 * hooks_dir when it claims (and gives back what it cannot run).
 *
 * hookset_scan reads a directory (mechanism); hookset_has is pure.
 * Nothing here logs.
 */
#ifndef TASKSPOOL_HOOKSET_H
#define TASKSPOOL_HOOKSET_H

#include <stddef.h>

#define HOOKSET_MAX	8192	/* bytes of the advertised list with its
				 * NUL: ~120 codes of 64 characters, ~900
				 * of 8 */

/*
 * List the hooks of the directory open on dirfd (borrowed; read from
 * its start with a dup, dirfd's offset is not used): every name that is
 * a valid task code and a regular file executable by this process
 * (faccessat X_OK, effective ids), sorted, joined by ',' into out
 * (outlen bytes, at least 2).  When they do not fit, as many as fit are
 * listed followed by "*".  *count (may be NULL) receives the number of
 * hooks found (all of them, listed or not).  Returns 0 (complete list),
 * 1 (truncated, "*" last) or -1 with errno (the directory cannot be
 * read; out is then "").
 */
int hookset_scan(int dirfd, char *out, size_t outlen, size_t *count);

/*
 * Whether the list (as above; NUL-terminated) names code, or ends with
 * "*".  Returns 1 or 0.
 */
int hookset_has(const char *list, const char *code);

#endif
