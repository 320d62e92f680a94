/*
 * nameset — a set of file names with FIFO order (pure, single-threaded).
 *
 * Holds the names the daemon knows are waiting in a directory (from
 * inotify events and rescans), each once, so a rescan that sees a name
 * again adds nothing and claims are tried in arrival order.  Memory: one
 * node (two pointers, a flag word and the name) per name, plus the
 * bucket array.
 */
#ifndef TASKSPOOL_NAMESET_H
#define TASKSPOOL_NAMESET_H

#include <stddef.h>
#include <stdint.h>

struct nameset_node {
	struct nameset_node *hnext;	/* bucket chain */
	struct nameset_node *fnext;	/* FIFO order */
	int64_t key;			/* caller's value (e.g. due ms) */
	int flags;			/* caller's flags */
	char name[];
};

struct nameset {
	struct nameset_node **bucket;
	size_t nbucket, count;
	struct nameset_node *head, *tail;
};

/* Initialise an empty set.  Returns 0 or -1 (ENOMEM). */
int nameset_init(struct nameset *ns);

/* Free every node and the buckets.  NULL-safe. */
void nameset_fini(struct nameset *ns);

/*
 * Add name at the tail unless present.  Returns the node (new or the
 * existing one; borrowed, valid until removed), or NULL (ENOMEM).
 * *added (may be NULL) tells which.
 */
struct nameset_node *nameset_add(struct nameset *ns, const char *name,
    int *added);

/*
 * nameset_add for a name whose key (e.g. a file's mtime in ms) orders it,
 * names breaking ties (strcmp): a new node goes at the tail when (key,
 * name) is not before the tail's (the usual arrival), else before the
 * first node after it in that order, looked for
 * from the head over at most maxwalk nodes (past them: at the tail), so
 * that one late arrival, such as a released held task, keeps its place
 * and a long unordered backlog costs O(maxwalk) per name.  An existing
 * node is returned as it is.  Returns as nameset_add.
 */
struct nameset_node *nameset_add_ordered(struct nameset *ns, const char *name,
    int64_t key, size_t maxwalk, int *added);

/* The node for name, or NULL. */
struct nameset_node *nameset_find(const struct nameset *ns, const char *name);

/* Remove and free the node for name; 0 if it was there, -1 if not. */
int nameset_remove(struct nameset *ns, const char *name);

/*
 * Detach the oldest node and return it (new: caller frees with free()),
 * or NULL when empty.
 */
struct nameset_node *nameset_pop(struct nameset *ns);

#endif
