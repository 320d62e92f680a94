/*
 * traceparent — the W3C Trace Context `traceparent` value (pure: no I/O,
 * no clock, no logging; random bytes only from getrandom(2) in
 * the *_fresh helpers, which daemon/README.md "Pure code" allows).
 *
 * Follows W3C Trace Context Level 1, §3.2 "traceparent Header"
 * (https://www.w3.org/TR/trace-context/):
 *
 *	version "-" trace-id "-" parent-id "-" trace-flags
 *	2 HEXDIGLC   32 HEXDIGLC  16 HEXDIGLC   2 HEXDIGLC
 *
 * Lowercase hex only (uppercase is invalid, §3.2.2); version ff is
 * invalid; version 00 is exactly 55 characters; a higher version is at
 * least 55 characters and, when longer, has a "-" at offset 55 after
 * which its further fields are ignored (§3.2.4 "Versioning of
 * traceparent": parse the first four fields); a trace-id or parent-id of
 * all zeros is invalid.  What this module formats is always version 00
 * (§3.2.4: a vendor sends the version it knows), so a value decoded and
 * formatted again is canonical.
 *
 * Invariant of a struct traceparent that parse or new made: trace_id and
 * parent_id are not all zeros.  No allocation anywhere.
 */
#ifndef TASKSPOOL_TRACEPARENT_H
#define TASKSPOOL_TRACEPARENT_H

#include <stddef.h>
#include <stdint.h>

#define TRACEPARENT_LEN		55	/* a version-00 value, characters */
#define TRACEPARENT_INPUT_MAX	512	/* longest value parse accepts */
#define TRACEPARENT_SAMPLED	0x01	/* trace-flags bit 0 (§3.2.2.5) */
#define TRACEPARENT_RANDOM_MAX	24	/* bytes traceparent_new() takes */

struct traceparent {
	uint8_t trace_id[16];
	uint8_t parent_id[8];
	uint8_t flags;
};

/*
 * Parse len bytes at s (not NUL-terminated necessarily) into tp.
 * Returns 0, or -1 with *why (when why is not NULL) set to a borrowed
 * static text naming the rule broken ("trace-id must not be all zeros",
 * ...); tp is then unspecified.  Thread-safe.
 */
int traceparent_parse(const char *s, size_t len, struct traceparent *tp,
    const char **why);

/*
 * Write tp as a version-00 value, 55 characters and a NUL, into out
 * (which holds TRACEPARENT_LEN + 1 bytes).  Thread-safe.
 */
void traceparent_format(const struct traceparent *tp,
    char out[TRACEPARENT_LEN + 1]);

/*
 * A child of parent (§3.2.2.4 "parent-id": the id of this request as
 * known by the caller): the same trace-id and trace-flags, parent-id the
 * 8 bytes at rnd.  Returns 0, or -1 when rnd is all zeros (an invalid
 * parent-id; draw again).  Thread-safe.
 */
int traceparent_child(const struct traceparent *parent,
    const uint8_t rnd[8], struct traceparent *child);

/*
 * A new trace: trace-id the first 16 bytes at rnd, parent-id the next 8,
 * trace-flags TRACEPARENT_SAMPLED (taskspool records every task).
 * Returns 0, or -1 when either id would be all zeros.  Thread-safe.
 */
int traceparent_new(const uint8_t rnd[TRACEPARENT_RANDOM_MAX],
    struct traceparent *tp);

/*
 * The one-call helpers writers use, with random bytes from getrandom(2):
 * traceparent_fresh() writes a new trace's value into out;
 * traceparent_child_fresh() writes a child of the value parent (a
 * NUL-terminated string that traceparent_parse accepts) into out.  Both
 * return 0, or -1 (errno EINVAL: parent invalid; EIO: getrandom
 * failed).  out holds TRACEPARENT_LEN + 1 bytes.  Thread-safe.
 */
int traceparent_fresh(char out[TRACEPARENT_LEN + 1]);
int traceparent_child_fresh(const char *parent,
    char out[TRACEPARENT_LEN + 1]);

/*
 * The trace-id of the version-00 value tp (as traceparent_format wrote
 * it, or any value parse accepts) as 32 characters and a NUL into out;
 * "" when tp is not valid.  For log lines.  Thread-safe.
 */
void traceparent_trace_id(const char *tp, char out[33]);

#endif
