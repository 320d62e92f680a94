/*
 * version — the release of taskspool that these programs are, printed by
 * `taskspool --version`, `taskspoold --version` and `taskspool.cgi
 * --version`.  One string for all programs, bumped with a release (the
 * format version of the spool's files is separate: spool-layout/README.md).
 */
#ifndef TASKSPOOL_VERSION_H
#define TASKSPOOL_VERSION_H

/* The release, in the form MAJOR.MINOR.PATCH (Semantic Versioning 2.0.0). */
#define TASKSPOOL_VERSION	"0.11.0"

#endif
