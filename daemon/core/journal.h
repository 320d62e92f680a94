/*
 * journal — entries for the systemd journal over its native protocol
 * (systemd's "Native Journal Protocol" document; systemd-journald(8),
 * systemd.journal-fields(7)), so structured fields such as REQUEST_ID
 * and TASK_CODE reach `journalctl REQUEST_ID=r1` without libsystemd.
 *
 * An entry is one AF_UNIX datagram of fields.  A field whose value has
 * no newline is "NAME=value\n"; one with a newline is "NAME\n", the
 * value's length as a 64-bit little-endian integer, the value, "\n".
 * Field names are upper-case letters, digits and '_', not starting with
 * '_' (journald drops the others); the caller passes constants.  The
 * datagram goes out through unixdgram.h.
 */
#ifndef TASKSPOOL_JOURNAL_H
#define TASKSPOOL_JOURNAL_H

#include <stddef.h>

/* journald's socket (systemd-journald.socket). */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

struct journal_field {
	const char *name;		/* e.g. "MESSAGE"; borrowed */
	const char *value;		/* NUL-terminated; borrowed; NULL or
					 * "" omits the field */
};

/*
 * Encode the n fields f[] as one entry into out (cap bytes).  Returns
 * the entry's length in bytes, or 0 when it does not fit (out is then
 * unspecified).  Pure: no I/O.
 */
size_t journal_encode(char *out, size_t cap, const struct journal_field *f,
    int n);

#endif
