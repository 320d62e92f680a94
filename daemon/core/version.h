/*
 * version — the release of taskspool that these programs are, printed by
 * `--version` (or -V) of taskspoold, taskspool, taskspool.cgi and
 * taskspool.fcgi, in the daemon's start-up log line, in /api/health
 * ("version") and in the taskspool_build_info metric.  One string for all
 * programs (the format version of the spool's files is separate:
 * spool-layout/README.md).
 *
 * It is set at build time, not in the source: the Makefile writes
 * $(BUILD)/gen/version_gen.c with daemon/core/version.sh (git describe
 * --tags --dirty in a git checkout, else debian/changelog's version, else
 * 0.0.0+unknown; or TASKSPOOL_VERSION=... given to make, as debian/rules
 * does), and rewrites it only when the release changes, so a new commit
 * recompiles that one file.
 */
#ifndef TASKSPOOL_VERSION_H
#define TASKSPOOL_VERSION_H

/* The release, a NUL-terminated string of at most 64 bytes of
 * [0-9A-Za-z.+~:_-], e.g. "0.13.0" or "0.13.0-4-g1a2b3c4-dirty".  Static
 * storage; never NULL. */
extern const char taskspool_version[];

#define TASKSPOOL_VERSION	taskspool_version

#endif
