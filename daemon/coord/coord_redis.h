/*
 * coord_redis — the cluster backend of coord (coord.h) and the one
 * connection wrapper through which the Redis-backed modules of coord/
 * (index.c, maxconc.c, ratelimit.c, wakeup.c) speak to Redis: every
 * command goes through coord_redis_command, coord_redis_append or
 * coord_redis_command_on, which never hand hiredis a NULL context.
 * Replies are hiredis's redisReply * (freeReplyObject), passed as void *
 * so that this header needs no hiredis include.
 */
#ifndef TASKSPOOL_COORD_REDIS_H
#define TASKSPOOL_COORD_REDIS_H

#include <stddef.h>

#include "coord/coord_impl.h"

extern const struct coord_ops coord_redis_ops;

/* Drop c's shared connection (after a change of server: the next call
 * connects again).  No-op without one. */
void coord_redis_drop(struct coord *c);

/*
 * One command on c's connection (connecting when needed), through the
 * single door of coord_redis.c that never hands hiredis a NULL context:
 * argc/argv as redisCommandArgv (argv borrowed, NUL-terminated strings).
 * Returns a new reply (caller frees with freeReplyObject) of type type
 * (a REDIS_REPLY_* value; -1: any type, error replies included), or NULL
 * with why: not a redis coord, no connection, an I/O error or timeout
 * (the connection is then dropped), or a reply of another type (freed;
 * the connection is kept).
 */
void *coord_redis_command(struct coord *c, int type, int argc,
    const char **argv, char *why, size_t whylen);

/*
 * Pipelining (Redis docs, "Redis pipelining"): append one command to c's
 * connection without waiting for its reply — argc/argv as
 * redisAppendCommandArgv, argvlen[i] the length of argv[i] (a binary-safe
 * key) or argvlen NULL for NUL-terminated strings; all borrowed during
 * the call (hiredis copies them).  The first command of a pipeline
 * connects when needed; later ones use that connection as it is, and
 * fail when it was dropped meanwhile.  Returns 0, or -1 with why.  Read
 * the replies with coord_redis_flush.
 */
int coord_redis_append(struct coord *c, int argc, const char **argv,
    const size_t *argvlen, char *why, size_t whylen);

/*
 * Send the commands appended and read every one's reply (freed).
 * Returns 0 when each came and none is an error reply; -1 with why
 * otherwise (on an I/O error or timeout the connection is dropped and
 * the pipeline forgotten).  0 with nothing appended.
 */
int coord_redis_flush(struct coord *c, char *why, size_t whylen);

/* A new connection (redisContext *, caller frees with redisFree) to c's
 * server, authenticated and with the db selected, for a subscriber or a
 * one-request client; NULL with why. */
void *coord_redis_connect_new(struct coord *c, char *why, size_t whylen);

/*
 * One command on conn, a connection of coord_redis_connect_new (NULL is
 * allowed: then hiredis is not called): argc/argv as
 * coord_redis_command.  Returns a new reply of any type (error replies
 * included; caller frees), or NULL with why (no connection, no reply).
 * The caller owns conn and frees it after a NULL.
 */
void *coord_redis_command_on(void *conn, int argc, const char **argv,
    char *why, size_t whylen);

/*
 * The text of a Redis string or status reply (a redisReply *, borrowed)
 * when it is one C string: its len bytes hold no NUL, so strlen() and
 * the reply's own length agree (issue 10: a binary-safe value must not
 * be read as a shorter string).  Returns reply->str (borrowed, valid
 * while the reply is), or NULL for any other reply.
 */
const char *coord_reply_text(const void *reply);

#endif
