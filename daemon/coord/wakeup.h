/*
 * wakeup — wake-ups across hosts in cluster mode (issue 4 item 7).
 *
 * inotify sees only this kernel's writes: a daemon on another host (a
 * spool on NFS) would find a new file only at its next rescan
 * (scan_interval_ms).  So whoever puts a task where a daemon should
 * look — taskspool submit, the CGI, the leader promoting a due retry or
 * delay from delayed/, the scheduler firing a job, the dispatcher
 * filling queue/<node>/ — also PUBLISHes its path on the Redis channel
 * <redis_prefix>wake (Redis pub/sub), and every daemon SUBSCRIBEs to it
 * on a connection of its own.  Pub/sub delivers at most once and only
 * to connected subscribers: inotify and the periodic rescan remain the
 * safety net, and a lost message only delays a task to the next rescan.
 *
 * Message: "<dir>/<file name>" with dir "incoming", "delayed" or
 * "queue/<node>", or just "<dir>" (look at the whole directory).
 * Embedded mode (no redis) publishes nothing.
 */
#ifndef TASKSPOOL_WAKEUP_H
#define TASKSPOOL_WAKEUP_H

#include <stddef.h>
#include <stdint.h>

#include "spool/config.h"
#include "coord/coord.h"
#include "spool/spool.h"

/*
 * Publish path (borrowed; "<dir>/<name>" or "<dir>", see above) through
 * c's Redis connection.  Returns 0, or -1 with why (not in cluster
 * mode, or Redis unreachable: the rescans will find the file).
 */
int wakeup_publish(struct coord *c, const char *path, char *why,
    size_t whylen);

/*
 * For a client without a coord (the CLI, the CGI): when cfg names a
 * Redis server, open a coord on sp, publish "<dir name of d>/<name>"
 * (name may be NULL) and close it.  A failure is not reported (the
 * rescans are the safety net).  Embedded mode: does nothing.
 */
void wakeup_notify(const struct config *cfg, const struct spool *sp,
    enum spool_dir d, const char *name);

struct wakeup;

/*
 * A subscriber for coord c (borrowed, a redis coord; outliving it).
 * Not connected yet: call wakeup_connect.  Returns NULL when c is not in
 * cluster mode or on ENOMEM.
 */
struct wakeup *wakeup_new(struct coord *c);

/*
 * Connect and SUBSCRIBE when not connected (at most every 500 ms).
 * Returns the socket to poll for input (changes on reconnection), or -1
 * while Redis is unreachable (why says so).
 */
int wakeup_connect(struct wakeup *w, int64_t now_mono, char *why,
    size_t whylen);

/* The current socket, -1 when not connected. */
int wakeup_fd(const struct wakeup *w);

/*
 * Read what the socket has (call when it polls readable; does not
 * block for more) and call fn(arg, path) for each message (path
 * borrowed for the call).  Returns the number of messages, or -1 when
 * the connection was lost (closed; wakeup_connect again later).
 */
int wakeup_read(struct wakeup *w, void (*fn)(void *arg, const char *path),
    void *arg);

void wakeup_free(struct wakeup *w);	/* NULL allowed */

#endif
