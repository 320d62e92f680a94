/*
 * limitspec — the value of the max_concurrent key (taskspool.conf(5)):
 * "<taskCode>=<N>[,...]", e.g. "probe=2,report=5", a limit per task code
 * on the hooks running at once across the spool (coord/maxconc.h enforces
 * it); max_concurrent_per_key has the same grammar, a limit per task
 * code and concurrency key (core/conckey.h).  Pure.
 */
#ifndef TASKSPOOL_LIMITSPEC_H
#define TASKSPOOL_LIMITSPEC_H

#include <stddef.h>

/* Largest N of one item. */
#define LIMIT_MAX	4096

/*
 * Check a max_concurrent value (see above): every item is <code>=<N>,
 * code a valid task code, 1 <= N <= 4096.  Returns 0, or -1 with a
 * message naming the key and the item in why.
 */
int limits_check(const char *spec, char *why, size_t whylen);

/*
 * limits_check() for the value of configuration key key (its messages
 * start "<key>: "): max_concurrent_per_key has the same grammar.
 */
int limits_check_key(const char *key, const char *spec, char *why,
    size_t whylen);

/*
 * The limit of task code code in spec (a checked max_concurrent value),
 * 0 when code has none.
 */
long limits_max(const char *spec, const char *code);

#endif
