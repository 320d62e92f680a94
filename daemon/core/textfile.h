/*
 * textfile — the byte-level gate for the line-based text files taskspool
 * reads (taskspool.conf, apps.conf, heartbeat, rate-limit and other state
 * files): pure, no I/O, no clock, no logging.
 *
 * Those files are lines of printable text; their parsers work on C
 * strings, so a raw NUL would cut a line short without a word (the
 * parser sees less than the file holds) and other control bytes would
 * reach logs and terminals.  textfile_check() refuses every byte below
 * 0x20 except tab, LF and CR, and DEL (0x7F), naming the line, the column
 * and the byte, before a parser sees the text.  Bytes 0x80..0xFF pass
 * (UTF-8 text in comments is fine); the parsers' own grammars decide the
 * rest.
 */
#ifndef TASKSPOOL_TEXTFILE_H
#define TASKSPOOL_TEXTFILE_H

#include <stddef.h>

/*
 * Check the len bytes at data (borrowed; any bytes, NULs included).
 * Returns 0 when they hold no forbidden byte; else -1 and, when why is
 * not NULL, a reason in why[0..whylen) such as "apps.conf:3:7: raw NUL
 * byte (offset 27; a text file holds no control byte but tab, LF and CR)"
 * — with name NULL it starts "line 3 column 7: ".  Lines and columns are
 * 1-based, columns count bytes.  Thread-safe.
 */
int textfile_check(const char *name, const char *data, size_t len, char *why,
    size_t whylen);

#endif
