/*
 * promtext — merging several Prometheus text exposition files (format
 * 0.0.4) into one.  Each daemon writes metrics/<node>.prom with its own
 * "# HELP" and "# TYPE" lines; the format allows those lines only once
 * per metric family in one exposition, so GET /metrics cannot simply
 * concatenate the files (see the Prometheus documentation, "Exposition
 * formats", text format: "Only one HELP line may exist for any given
 * metric name", and a TYPE line must come before the family's first
 * sample).  The node label keeps the samples of different files apart.
 *
 * Pure: no I/O, no clock, no logging.
 */
#ifndef TASKSPOOL_PROMTEXT_H
#define TASKSPOOL_PROMTEXT_H

#include <stddef.h>

#include "core/buf.h"

/*
 * Merge the n texts (text[i] of len[i] bytes, borrowed; need not end in
 * a newline) into out (appended): every metric family once, in the order
 * of first appearance, with the HELP and TYPE lines seen first for it,
 * followed by that family's sample lines from every text in text order.
 * A family is named by its HELP/TYPE line; sample lines belong to the
 * family of the header above them in their own text (so histogram
 * _bucket/_sum/_count lines stay with their family).  Sample lines
 * before any header form an unnamed family that is output first.  Other
 * comment lines and blank lines are dropped.  Returns 0, or -1 when out
 * could not grow (out then holds a prefix).
 */
int promtext_merge(const char *const *text, const size_t *len, size_t n,
    struct buf *out);

/*
 * The value of the first sample of metric name (borrowed; the whole
 * metric name, e.g. "taskspool_leader", matched up to its '{' or blank)
 * in text (len bytes, borrowed) into *v.  Returns 0, or -1 when there is
 * no such sample or its value does not parse as a number.
 */
int promtext_value(const char *text, size_t len, const char *name,
    double *v);

/*
 * Append text (len bytes, borrowed) to out without the families whose
 * TYPE line says type (e.g. "gauge"), their HELP and TYPE lines and their
 * samples, except families whose name starts with keep_prefix ("" keeps
 * none).  Families are found as promtext_merge() finds them; samples
 * before any header and comment lines are kept.  Returns 0, or -1 when
 * out could not grow.
 */
int promtext_drop_type(const char *text, size_t len, const char *type,
    const char *keep_prefix, struct buf *out);

/*
 * Whether the text of len bytes (borrowed) is a valid text exposition
 * (format 0.0.4; the Prometheus documentation, "Exposition formats",
 * text format): UTF-8 throughout (checked by jansson's decoder, the
 * one the JSON files use); every line that does not start with '#' is
 * empty or a sample: a metric name [a-zA-Z_:][a-zA-Z0-9_:]*, optional
 * labels {name="value",...} (label names [a-zA-Z_][a-zA-Z0-9_]*, a
 * value's backslash followed by \\, \" or n only), blanks, a float
 * value (digits, '.', 'e', signs, no overflow; NaN, +Inf, -Inf),
 * optional blanks and an integer timestamp; a "# HELP" / "# TYPE" line names a metric,
 * and TYPE one of counter, gauge, histogram, summary, untyped.  Blanks
 * are spaces and tabs only (a CR is an error).  Returns 0, or -1 with
 * why (whylen bytes, may be NULL) naming line, column and the rule.
 * One node's file that fails this would make the whole merged answer
 * of GET /metrics unparseable, so the API leaves such a file out.
 */
int promtext_check(const char *text, size_t len, char *why, size_t whylen);

#endif
