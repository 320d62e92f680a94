/*
 * suggest — "did you mean ...?" for a name that is not one of a known
 * set: an unknown member of a task or job file, an unknown configuration
 * key.  Pure.
 *
 * Closeness is the optimal string alignment distance (Damerau-Levenshtein
 * restricted to adjacent transpositions: insert, delete, substitute, swap
 * two neighbours, each 1), on ASCII letters compared without case, so
 * "timeoutsec", "timoutSec" and "tiemoutSec" all suggest "timeoutSec".
 * A candidate is suggested when its distance is at most 1 when the longer
 * of the two names has up to 4 bytes, 2 up to 8, and 3 beyond (a typo, not another word: "code"
 * suggests nothing among the task members); of equal distances the first
 * in the table wins.
 */
#ifndef TASKSPOOL_SUGGEST_H
#define TASKSPOOL_SUGGEST_H

#include <stddef.h>

/* Longest name compared; longer ones get no suggestion. */
#define SUGGEST_NAME_MAX	64

/*
 * The candidate of names (n entries, borrowed) closest to word, or NULL
 * when none is close enough or word is longer than SUGGEST_NAME_MAX.  The
 * result points into names.
 */
const char *suggest_name(const char *word, const char *const *names,
    size_t n);

/*
 * The distance used above between a and b (each at most
 * SUGGEST_NAME_MAX bytes; longer ones return SUGGEST_NAME_MAX + 1).
 */
size_t suggest_distance(const char *a, const char *b);

#endif
