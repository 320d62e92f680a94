/*
 * purgestat — what `taskspool purge` has removed from a spool, kept in
 * state/purge so that every daemon's metrics file can say it (retention
 * without logrotate: a purge run by a timer leaves a trace Prometheus
 * sees).  Lines "key=value": at_ms=<epoch ms of the last purge>, then
 * <dir>=<count> for done, failed, cancelled and corrupt, each the total
 * removed since the file was created (a counter: it only grows).
 *
 * Written by the writer protocol (tmp + fsync + rename + fsync(dir))
 * under an flock(2) of state/purge.lock, so two purges at once add up
 * rather than lose one's counts; read back as hostile text (a value that
 * is not a whole number, or a file over 4 KiB, reads as nothing).
 */
#ifndef TASKSPOOL_PURGESTAT_H
#define TASKSPOOL_PURGESTAT_H

#include <stdint.h>

#include "spool/spool.h"

/* The directories whose removals are counted, in this order. */
enum purgestat_dir { PURGESTAT_DONE, PURGESTAT_FAILED, PURGESTAT_CANCELLED,
	PURGESTAT_CORRUPT, PURGESTAT_NDIRS };

struct purgestat {
	int64_t at_ms;			/* last purge, epoch ms; -1 never */
	long long removed[PURGESTAT_NDIRS];	/* totals */
};

/* The name of d as in the file and the metric's dir label ("done"...). */
const char *purgestat_dir_name(enum purgestat_dir d);

/*
 * Read state/purge of sp into *out: 0, or -1 with errno (ENOENT: no
 * purge yet; EINVAL: a line that is not key=<whole number> of a known
 * key) and *out zeroed with at_ms -1.
 */
int purgestat_read(const struct spool *sp, struct purgestat *out);

/*
 * Add add[] (removals of one purge, PURGESTAT_NDIRS entries) to
 * state/purge and set at_ms to now_ms (epoch ms), under the lock.
 * Returns 0, or -1 with errno (the purge itself is done either way: the
 * caller says the count could not be kept).
 */
int purgestat_add(const struct spool *sp, const long long *add,
    int64_t now_ms);

#endif
