/*
 * spool — the spool directory tree: directory handles, name checks, the
 * writer protocol, moves and safe opens.  Mechanism only: no policy, no
 * logging.  See spool-layout/README.md for the layout and the crash-state
 * table this module's operations keep true.
 *
 * Every directory is opened once, O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC, and all
 * file operations go through openat/renameat/linkat/unlinkat on those
 * handles, so a name can never escape its directory (names are also
 * whitelisted: spool_id_ok, spool_code_ok).  Errors are -1 with errno, and where a
 * caller shows a reason, a message in a caller buffer.
 */
#ifndef TASKSPOOL_SPOOL_H
#define TASKSPOOL_SPOOL_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define SPOOL_NAME_MAX	160	/* "<requestId>.json" and suffixes */

enum spool_dir {
	SPOOL_TMP, SPOOL_INCOMING, SPOOL_DELAYED, SPOOL_QUEUE, SPOOL_ACTIVE,
	SPOOL_DONE, SPOOL_FAILED, SPOOL_CANCELLED, SPOOL_CORRUPT,
	SPOOL_RESULTS, SPOOL_LOGS, SPOOL_JOBS, SPOOL_OUTBOX, SPOOL_STATE,
	SPOOL_METRICS, SPOOL_HOOKS, SPOOL_HOLD, SPOOL_BLOCKED, SPOOL_NDIRS
};

struct spool {
	int root;			/* the spool directory */
	int dir[SPOOL_NDIRS];		/* each top-level directory */
	int self;			/* active/<node>, -1 if no node */
	int cancel;			/* state/cancel */
	int holdmark;			/* state/hold (spool/hold.h), -1 if
					 * absent */
	int claims;			/* state/claims (claimmark.h); opened
					 * with a node only, else -1 */
	int work;			/* workdirs/, the hooks' work directories
					 * (SPOOL_WORK_MODE); opened with a
					 * node only, else -1 */
	int do_fsync;			/* 0 only for throw-away spools */
	char node[65];
	char path[4096];
};

/* Directory name of d, relative to the spool root ("incoming", ...). */
const char *spool_dir_name(enum spool_dir d);

/*
 * The task state a file in directory d means (spool-layout/README.md):
 * "PENDING" (incoming/, delayed/), "BLOCKED" (blocked/: waiting for the
 * tasks of its dependsOn), "DISPATCHED" (queue/), "RUNNING"
 * (active/), "SUCCESS", "FAILED", "CANCELLED", "CORRUPT", "HELD"
 * (hold/, coord/hold.h); NULL for any
 * other directory.  Returns a static string.
 */
const char *spool_state_name(enum spool_dir d);

/*
 * Write a new time-ordered requestId for an instant ms (epoch ms) into out
 * (len >= 40 bytes): req_<UTC yyyymmddThhmmssmmmZ>_<12 hex digits from
 * getrandom(2)>, e.g. req_20240601T120000000Z_0a1b2c3d4e5f (all zeros
 * when the kernel gives none: the instant still orders it).
 */
void spool_new_request_id(char *out, size_t len, int64_t ms);

/* Whether name is a valid requestId ([A-Za-z0-9][A-Za-z0-9_.-]{0,127}). */
int spool_id_ok(const char *id);

/* Whether code is a valid taskCode/node id ([A-Za-z0-9][A-Za-z0-9_.-]{0,63}). */
int spool_code_ok(const char *code);

/*
 * Modes of the spool root and of workdirs/ (spool-layout/README.md): others
 * (the hook user, hook_user in taskspool.conf(5)) may pass through the
 * root to reach workdirs/<node>.<slot>/ but list neither, and get nothing of
 * the other directories (o-rwx).
 */
#define SPOOL_ROOT_MODE	02751
#define SPOOL_WORK_MODE	02711

/*
 * Create the spool tree at path (mkdir -p semantics for path itself) with
 * the documented modes; group is the group id that may submit (-1 = keep).
 * Existing directories are left alone when group is -1; with a group,
 * the spool's own directories get it and their documented modes, and
 * every entry below the root (what daemons and writers made since:
 * active/<node>/, results, logs, taskspool.conf ...) gets the group as
 * `chgrp -R` would, directories the setgid bit (symbolic links are not
 * followed).  Returns 0, or -1 with errno and a message in why naming
 * the path.
 */
int spool_create(const char *path, long group, char *why, size_t whylen);

/*
 * Open an existing spool.  node may be NULL (CLI: no active/<node>).
 * Returns 0 and fills s, or -1 with errno and why ("not a spool: ...").
 * hold/ and state/hold/, newer than the rest, are made when missing by a
 * daemon (node != NULL); a client opens a spool without them with
 * s->dir[SPOOL_HOLD] and s->holdmark -1.
 */
int spool_open(struct spool *s, const char *path, const char *node,
    int do_fsync, char *why, size_t whylen);

/* Close every handle of s.  Safe on a zeroed or half-opened spool. */
void spool_close(struct spool *s);

/*
 * fsync a directory handle when s->do_fsync.  Returns 0 or -1 (errno).
 */
int spool_sync_dir(const struct spool *s, int dirfd);

/*
 * The writer protocol: write len bytes to a fresh tmp/ file, set its
 * mtime to mtime_ms when >= 0 (epoch ms: the due time in delayed/),
 * fsync it, then publish it as destfd/name and fsync destfd.
 * flags: SPOOL_PUBLISH_EXCL publishes with renameat2(RENAME_NOREPLACE)
 * (link(2) + unlink where the file system lacks it), so an existing
 * destfd/name makes it fail with EEXIST (O_EXCL semantics); without it,
 * rename(2) replaces.  SPOOL_PUBLISH_NOSYNCDIR skips the fsync of destfd
 * for a caller that batches directory fsyncs itself.  Returns 0 or -1
 * with errno; the tmp file is removed on failure.
 */
#define SPOOL_PUBLISH_EXCL	1
#define SPOOL_PUBLISH_NOSYNCDIR	2
int spool_publish(const struct spool *s, int destfd, const char *name,
    const void *data, size_t len, int64_t mtime_ms, int flags);

/*
 * The first half of the writer protocol, for callers that batch the
 * fsyncs (the daemon's group commit, groupsync.h): create a fresh file in
 * tmp/ with O_EXCL (mode 0640), write len bytes of data, set its mtime to
 * mtime_ms when >= 0 (epoch ms).  Nothing is fsynced.  Its name (at most
 * SPOOL_TMPNAME_MAX bytes with the NUL) goes to tmpname.  Returns the
 * open descriptor (O_WRONLY|O_CLOEXEC; the caller fsyncs, closes, renames
 * or unlinks it), or -1 with errno and nothing left in tmp/.  May be
 * called from several threads at once.
 */
#define SPOOL_TMPNAME_MAX	(SPOOL_NAME_MAX + 64)
int spool_stage(const struct spool *s, const void *data, size_t len,
    int64_t mtime_ms, char *tmpname, size_t tmplen);

/*
 * Safe open of dirfd/name for reading: O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC,
 * then fstat: a regular file, one link, at most max bytes, readable.
 * Returns the fd, or -1 with errno and a reason in why naming the rule
 * ("symbolic link", "not a regular file (FIFO)", "hard link (2 links)",
 * "larger than N bytes", "unreadable").
 */
int spool_open_safe(int dirfd, const char *name, size_t max,
    struct stat *st, char *why, size_t whylen);

/*
 * Move srcfd/name into corrupt/ (under the same name, or name.N when taken)
 * and write corrupt/<that>.reason holding reason and a newline.  Returns 0
 * or -1 with errno (the file stays where it was when the move failed).
 */
int spool_quarantine(const struct spool *s, int srcfd, const char *name,
    const char *reason);

/*
 * Find where requestId id is: fills *where and, for queue/ and active/,
 * node (65 bytes).  Checks active/<each>, queue/<each>, blocked,
 * incoming, delayed, hold, done, failed, cancelled.  Returns 0 when
 * found, -1 with ENOENT when not.
 */
int spool_locate(const struct spool *s, const char *id,
    enum spool_dir *where, char *node);

/*
 * Whether requestId id exists anywhere in s, live or finished: where
 * spool_locate looks, a result in results/, or a file in corrupt/ (the
 * rule that makes a repeated job fire or batch completion a no-op).
 * Returns 1 or 0.
 */
int spool_id_known(const struct spool *s, const char *id);

/*
 * Whether file (a name such as "<id>.json") is in active/<node>/ of any
 * node other than except (may be NULL).  Fills node (65 bytes, may be
 * NULL) with the first one found.  Returns 1 or 0.
 */
int spool_in_active(const struct spool *s, const char *file,
    const char *except, char *node);

/*
 * Whether file (a name such as "<id>.json") is in d/<node>/ of any node,
 * d being SPOOL_QUEUE or SPOOL_ACTIVE.  Fills node (65 bytes, may be
 * NULL) with the first one found.  Returns 1 or 0.
 */
int spool_in_nodes(const struct spool *s, enum spool_dir d,
    const char *file, char *node);

/*
 * Open (creating when needed) the per-node directory active/<node> or
 * queue/<node>.  Returns an O_DIRECTORY fd or -1 with errno.
 */
int spool_node_dir(const struct spool *s, enum spool_dir d,
    const char *node);

/*
 * Move fromfd/from to tofd/to unless to exists (then -1/EEXIST): with
 * renameat2(RENAME_NOREPLACE), or where the file system lacks it (NFS:
 * EINVAL) with link(2) + unlink(2), or for what cannot be hard-linked,
 * a check then rename(2).  Returns 0 or -1 with errno (ENOENT: from is
 * gone, e.g. another node moved it first).
 */
int spool_move_excl(int fromfd, const char *from, int tofd, const char *to);

/*
 * A directory stream over dirfd (borrowed: a dup is read, from the start,
 * so dirfd stays usable).  Returns new (closedir), or NULL with errno.
 */
DIR *spool_opendir(int dirfd);

/* Read a whole small file at dirfd/name into a new NUL-terminated string
 * (caller frees), at most max bytes.  Returns NULL with errno on failure.
 * The data may hold NULs: use *lenp, or spool_read_text() for text. */
char *spool_read_file(int dirfd, const char *name, size_t max,
    size_t *lenp);

/* spool_read_file() for a line-based text file (heartbeats, state): the
 * same, but a raw NUL or another control byte but tab, LF and CR
 * (textfile_check()) fails with errno EILSEQ, the reason, naming name,
 * line, column and byte, in why (when not NULL).  The string returned
 * holds no NUL before its end, so C string functions see all of it. */
char *spool_read_text(int dirfd, const char *name, size_t max, size_t *lenp,
    char *why, size_t whylen);

#endif
