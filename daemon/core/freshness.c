/*
 * freshness — is a periodically rewritten file stale; see freshness.h.
 */
#include "core/freshness.h"

int
freshness_stale(const struct freshness *f, int64_t newest_mtime_ms,
    int64_t now_ms)
{
	if (f->limit_ms <= 0)
		return 0;
	/* 1. One clock: the file system's, newest file against this one. */
	if (newest_mtime_ms - f->mtime_ms > f->limit_ms)
		return 1;
	/* 2. The reader's clock, which both the file system's and the
	 * writer's must agree with. */
	return now_ms - f->mtime_ms > f->limit_ms &&
	    (f->written_ms < 0 || now_ms - f->written_ms > f->limit_ms);
}
