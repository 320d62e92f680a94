/*
 * coord_file — the embedded backend of coord (coord.h): leases and the
 * leader lock are flock(2)s, heartbeats the files state/heartbeat.<node>.
 * Its ops table is chosen by coord_open.c; coord_redis.c calls its
 * heartbeat and close for the heartbeat file it keeps too.
 */
#ifndef TASKSPOOL_COORD_FILE_H
#define TASKSPOOL_COORD_FILE_H

#include "coord/coord_impl.h"

extern const struct coord_ops coord_file_ops;

#endif
