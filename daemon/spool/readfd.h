/*
 * readfd — read a descriptor to its end into a struct buf (core/buf.h).
 * Kept out of core/, whose code does no I/O.
 */
#ifndef TASKSPOOL_READFD_H
#define TASKSPOOL_READFD_H

#include "core/buf.h"

/*
 * Read fd to EOF (or until b's cap) appending to b.  Returns 0, or -1 with
 * errno from read(2) (EINTR is retried), or EFBIG when the data exceeds
 * the cap (buf_append).  fd stays open and owned by the caller.
 */
int buf_read_fd(struct buf *b, int fd);

#endif
