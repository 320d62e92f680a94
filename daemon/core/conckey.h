/*
 * conckey — the concurrency key of a task (README.md, "Per-key
 * concurrency"): the member concurrencyKey, a template over the
 * task's executeParams such as "customer:{customerId}", expanded into
 * the key that max_concurrent_per_key (or the task's
 * maxConcurrentPerKey) limits, in the spirit of Sidekiq Enterprise's
 * and BullMQ Pro's group concurrency.  Pure: no I/O, no clock.
 *
 * The template's grammar:
 *   template    = 1*( literal / placeholder )
 *   placeholder = "{" name "}"      name: [A-Za-z0-9_.-]{1,64}
 *   literal     = any character but "{", "}" and the controls
 *                 (below 0x20, and 0x7f)
 * A placeholder names a top-level member of executeParams whose value
 * is a string (without controls) or an integer; the value takes its
 * place (an integer in decimal).  The expanded key is 1 to CONCKEY_MAX
 * bytes.  Everything else is refused with a reason naming the member
 * concurrencyKey: an unmatched brace, an empty or bad name, a member
 * that is missing or of another type, a key too long.
 *
 * The key's name in the coordination store is its digest: the first
 * 16 bytes of its SHA-256 (FIPS 180-4) in hex, CONCKEY_HASH_LEN
 * characters, so that any key (any byte, any length) makes a file
 * name and a Redis key of a fixed shape.
 */
#ifndef TASKSPOOL_CONCKEY_H
#define TASKSPOOL_CONCKEY_H

#include <stddef.h>

#include "core/jsonfield.h"	/* struct task_error, json_t */

#define CONCKEY_TEMPLATE_MAX	256	/* bytes of a template */
#define CONCKEY_MAX		256	/* bytes of an expanded key */
#define CONCKEY_NAME_MAX	64	/* bytes of a placeholder's name */
#define CONCKEY_HASH_LEN	32	/* hex digits of a key's digest */
#define CONCKEY_LIMIT_MAX	4096	/* the most maxConcurrentPerKey: the
					 * LIMIT_MAX of core/limitspec.h */

/*
 * Check the template tmpl (NUL-terminated) against the grammar above,
 * without executeParams.  Returns 0, or -1 with err naming field.
 */
int conckey_template_check(const char *tmpl, const char *field,
    struct task_error *err);

/*
 * Expand tmpl with the members of params (a JSON object, or NULL / any
 * other value: no member) into *out: a new NUL-terminated string the
 * caller frees.  Returns 0, or -1 with err naming field (the template's
 * faults, a member missing or not a string or integer, a string member
 * with a control character, a key longer than CONCKEY_MAX, or ENOMEM)
 * and *out NULL.
 */
int conckey_expand(const char *tmpl, json_t *params, const char *field,
    char **out, struct task_error *err);

/*
 * The digest of key (NUL-terminated) as CONCKEY_HASH_LEN lowercase hex
 * digits and a NUL into hex (CONCKEY_HASH_LEN + 1 bytes).  Returns 0,
 * or -1 when OpenSSL's digest fails (hex is then "").
 */
int conckey_hash(const char *key, char *hex);

#endif
