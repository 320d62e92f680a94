/*
 * tags — node tags (README.md, "Node tags"): the names a node declares
 * in its configuration (key `tags`) and advertises in its heartbeat,
 * the names a task or job requires (member requireTags, or the route
 * shorthand tag:<name>), and the one rule that matches them: a node
 * takes a task only when it has every tag the task requires.  Pure: no
 * I/O, no clock, no logging.
 *
 * A tag is a name of the taskCode grammar, [A-Za-z0-9][A-Za-z0-9_.-]
 * {0,63}.  A list is text: the names joined by ',' (a name never holds
 * one), at most TAGS_MAX of them, so that it always fits TAGS_TEXT_MAX
 * bytes with its NUL.  A node's list is sorted (strcmp) and has no
 * duplicate; a task's keeps the order of its file (so that the file
 * reads back the same) and has no duplicate either.  "" is the empty
 * list: a node without tags, a task that requires none.
 *
 * Errors: the decoders return -1 with the reason naming the field
 * (struct task_error, or a why buffer for the configuration); nothing
 * panics on input.
 */
#ifndef TASKSPOOL_TAGS_H
#define TASKSPOOL_TAGS_H

#include <stddef.h>

#include "core/jsonfield.h"	/* struct task_error, json_t */

#define TAGS_MAX	32	/* names in one list */
#define TAGS_NAME_MAX	64	/* bytes of one name */
#define TAGS_TEXT_MAX	(TAGS_MAX * (TAGS_NAME_MAX + 1))	/* a list
				 * with its separators and NUL */

/*
 * Whether the len bytes at s are one tag name (the grammar above).
 * Returns 1 or 0.
 */
int tags_name_ok(const char *s, size_t len);

/*
 * The value of the configuration key `tags` (NUL-terminated; names
 * separated by ',', white space around a name ignored, "" = none) as a
 * node's list: sorted, joined by ',' without spaces, into out (outlen
 * bytes; TAGS_TEXT_MAX is always enough).  Returns 0, or -1 with a
 * reason starting "tags: " in why (an empty name, a bad name, a name
 * longer than TAGS_NAME_MAX, a duplicate, more than TAGS_MAX names, or
 * out too small); out is then "".
 */
int tags_parse_config(const char *value, char *out, size_t outlen,
    char *why, size_t whylen);

/*
 * Whether the NUL-terminated list from outside (a heartbeat: a file of
 * state/, a Redis hash) is a well-formed list: names of the grammar
 * joined by ',', at most TAGS_MAX, no duplicate, shorter than
 * TAGS_TEXT_MAX.  "" is well-formed.  Returns 1 or 0.
 */
int tags_list_ok(const char *list);

/*
 * Whether the list have (a node's) holds every name of the list need (a
 * task's).  need NULL or "" is satisfied by every node.  Both lists are
 * well-formed (tags_list_ok); have may be unsorted.  Returns 1 or 0.
 */
int tags_has_all(const char *have, const char *need);

/*
 * Whether the list (NUL-terminated) names name.  Returns 1 or 0.
 */
int tags_has(const char *list, const char *name);

/*
 * The member requireTags of a task or job file: a JSON array of at most
 * TAGS_MAX distinct tag names, into *out as a list in the array's order
 * (new: the caller frees it), or NULL for an empty array (nothing
 * required); a previous *out is freed.  Returns 0, or -1 with *err
 * naming field ("requireTags: must be an array of tag names",
 * "requireTags[2]: must match ...", "requireTags: more than 32 tags",
 * "requireTags[1]: duplicate tag \"gpu\"") and *out unchanged.
 */
int tags_json_decode(json_t *v, const char *field, char **out,
    struct task_error *err);

/*
 * The list (NUL-terminated, well-formed) as a new JSON array of strings
 * (json_decref it), or NULL when out of memory.  For the task and job
 * encoders and the views.
 */
json_t *tags_json(const char *list);

/*
 * Whether route is the shorthand tag:<name> of a route (README.md,
 * "Node tags").  Returns 1 or 0.
 */
int tags_route_ok(const char *route);

/*
 * Fold the route shorthand into the list: when *route is tag:<name>, add
 * name to *tags (new or NULL; appended unless already there) and free
 * *route (set to NULL: route any).  Other routes are left alone.
 * Returns 0, or -1 with *err (field "requireTags": more than TAGS_MAX
 * tags with the route's; out of memory) and both unchanged.
 */
int tags_route_fold(char **route, char **tags, struct task_error *err);

#endif
