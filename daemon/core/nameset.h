/*
 * nameset — a set of file names with FIFO order (pure, single-threaded).
 *
 * Holds the names the daemon knows are waiting in a directory (from
 * inotify events and rescans), each once, so a rescan that sees a name
 * again adds nothing and claims are tried in arrival order.  Memory: one
 * node (five pointers, a key, three ints and the name) per name, plus the
 * bucket array.
 */
#ifndef TASKSPOOL_NAMESET_H
#define TASKSPOOL_NAMESET_H

#include <stddef.h>
#include <stdint.h>

#include "core/fairshare.h"
#include "core/priority.h"

struct nameset_node {
	struct nameset_node *hnext;	/* bucket chain */
	struct nameset_node *fnext;	/* FIFO order */
	struct nameset_node *fprev;
	struct nameset_node *lnext;	/* its priority level, by (key,
					 * name) when placed */
	struct nameset_node *lprev;
	int64_t key;			/* caller's value (e.g. due ms) */
	int flags;			/* caller's flags */
	int prio;			/* 0..9, PRIORITY_DEFAULT when new;
					 * set with nameset_set_prio */
	int flow;			/* its flow in ns->fair, FAIR_LOCAL
					 * when new; nameset_set_flow */
	char name[];
};

struct nameset {
	struct nameset_node **bucket;
	size_t nbucket, count;
	struct nameset_node *head, *tail;
	struct nameset_node *lhead[PRIORITY_MAX + 1];	/* per prio */
	struct nameset_node *ltail[PRIORITY_MAX + 1];
	struct fairshare *fair;		/* borrowed, or NULL: the flows of
					 * nameset_pop_priority (the caller
					 * sets it while the set is empty) */
	int levels;			/* 1: keep the per-priority lists
					 * nameset_pop_priority needs (set
					 * while empty; each add then costs
					 * up to a bounded walk); 0, as
					 * nameset_init leaves it: priorities
					 * are only recorded, adds are O(1),
					 * nameset_pop_priority is
					 * nameset_pop */
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

/*
 * Set node c's priority (clamped into 0..9).  c must be a node of ns.
 * A changed priority places c in its new level by its key as it is then
 * (give the key when adding: nameset_add_ordered).
 */
void nameset_set_prio(struct nameset *ns, struct nameset_node *c, int prio);

/*
 * Set node c's flow to i (an index of ns->fair): it leaves its old flow
 * and joins i (core/fairshare.h, fair_enter).  Without ns->fair, i
 * (0..FAIR_FLOWS_MAX - 1) is only recorded, for the caller to hand on.
 * An index out of range is ignored.
 */
void nameset_set_flow(struct nameset *ns, struct nameset_node *c, int i);

/*
 * Detach the node to claim first at now_ms (core/priority.h): the one of
 * highest effective priority, aging by one level per aging_ms since its
 * key (a due time in ms); ties go to the smaller key, then the higher
 * priority.  Each level keeps its nodes by (key, name) as they were
 * placed (added, or given their priority), so only the first of each
 * level competes: O(levels).  With ns->fair and two flows or more
 * backlogged, among the first maxwalk nodes of the order the one of
 * highest effective priority, then whose flow has the smallest start
 * tag (core/fairshare.h), then the smaller key, then the earliest in the
 * order: O(maxwalk); the flow of the node taken is served.  When every
 * node has one priority and one flow it is the head (nameset_pop,
 * O(1)), as it is in a set without levels (ns->levels 0) unless the
 * fair share walk applies.  Returns it (new: caller frees with free())
 * or NULL when empty.
 */
struct nameset_node *nameset_pop_priority(struct nameset *ns,
    size_t maxwalk, int64_t now_ms, int64_t aging_ms);

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
