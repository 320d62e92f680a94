/*
 * callback_claim — taking deliveries: a due file of
 * outbox/callbacks/pending/ (its mtime is the due time) is claimed by
 * flock, then rename into active/<node>/ (the lock travels with the
 * inode), then read; the sweep hands back to pending/ what an unlocked
 * file in any active/<node>/ holds (a dead sender's, or ours from before
 * a restart).
 *
 * Invariants: a delivery is sent only by the holder of its flock in
 * active/<node>/; a file that does not decode goes to corrupt/ (it is
 * never the task's fault, and never retried as is); a copy in active/
 * whose name already has a newer state elsewhere is removed, not handed
 * back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callback/callback_impl.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "spool/readfd.h"

/* Claim pending/<name>: lock, then rename into active/<node>/ (the lock
 * travels with the inode), then read.  Returns a new job or NULL. */
static struct cbjob *
claim(struct callback_sender *cs, const char *name)
{
	struct stat a, b;
	struct cbjob *j;
	struct buf buf;
	char why[200];
	int fd;

	fd = openat(cs->d.fd[D_PENDING], name, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || renameat(cs->d.fd[D_PENDING],
	    name, cs->d.self, name) != 0) {
		close(fd);
		return NULL;		/* another sender has it */
	}
	/* A redelivery may have replaced the name after our open. */
	if (fstat(fd, &a) != 0 || fstatat(cs->d.self, name, &b,
	    AT_SYMLINK_NOFOLLOW) != 0 || a.st_ino != b.st_ino) {
		close(fd);
		fd = openat(cs->d.self, name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
	}
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		close(fd);
		return NULL;
	}
	j->fd = fd;
	snprintf(j->file, sizeof(j->file), "%.*s", SPOOL_NAME_MAX - 1, name);
	buf_init(&buf, CB_FILE_MAX);
	if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode) || a.st_nlink != 1 ||
	    buf_read_fd(&buf, fd) != 0 || cbdel_decode(buf.data != NULL ?
	    buf.data : "", buf.len, &j->c, why, sizeof(why)) != 0) {
		if (buf.len == 0 && why[0] == '\0')
			snprintf(why, sizeof(why), "unreadable delivery file");
		log_warnx("outbox/callbacks/%s: %s; moved to corrupt/", name,
		    why);
		(void)spool_quarantine(&cs->sp, cs->d.self, name, why);
		buf_fini(&buf);
		j->fd = -1;
		close(fd);
		free(j);
		return NULL;
	}
	buf_fini(&buf);
	j->uid = a.st_uid;
	j->mode = a.st_mode & 07777;
	if (j->c.st.attempts == 0)
		sender_note_record(cs, j, j->c.created_ms);	/* created */
	return j;
}

/* Hand back unlocked deliveries in active/<node>/ (a dead sender's, or
 * ours from before a restart). */
static void
sweep_dir(struct callback_sender *cs, int dirfd, const char *owner)
{
	struct dirent *de;
	DIR *dp;

	if ((dp = spool_opendir(dirfd)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			int newer = 0;
			struct stat st;

			for (int i = D_PENDING; i <= D_FAILED; i++)
				if (i != D_ACTIVE && fstatat(cs->d.fd[i],
				    de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
					newer = 1;
			if (newer)
				(void)unlinkat(dirfd, de->d_name, 0);
			else if (spool_move_excl(dirfd, de->d_name,
			    cs->d.fd[D_PENDING], de->d_name) == 0)
				log_info("callback %s: taken back from "
				    "active/%s/", de->d_name, owner);
		}
		close(fd);
	}
	closedir(dp);
}

void
sender_sweep(struct callback_sender *cs, int self_too)
{
	struct dirent *de;
	DIR *dp;

	if ((dp = spool_opendir(cs->d.fd[D_ACTIVE])) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		int fd;

		if (!spool_code_ok(de->d_name) || (!self_too &&
		    strcmp(de->d_name, cs->sp.node) == 0))
			continue;
		fd = openat(cs->d.fd[D_ACTIVE], de->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		sweep_dir(cs, fd, de->d_name);
		close(fd);
	}
	closedir(dp);
}

/* Claim every due file of pending/; set next_scan from the earliest
 * not yet due. */
void
sender_scan(struct callback_sender *cs, int64_t now)
{
	struct dirent *de;
	DIR *dp;
	int64_t next = now + CB_SCAN_MS;
	long depth = 0;

	if ((dp = spool_opendir(cs->d.fd[D_PENDING])) == NULL) {
		cs->next_scan = next;
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		struct stat st;
		int64_t due;
		struct cbjob *j;

		if (de->d_name[0] == '.' || strlen(de->d_name) >=
		    SPOOL_NAME_MAX || fstatat(cs->d.fd[D_PENDING],
		    de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		depth++;
		due = (int64_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000;
		if (due > now) {
			if (due < next)
				next = due;
			continue;
		}
		/* Bounded work in hand: the rest waits for the next pass. */
		if (cs->nready + cs->ninflight >= 4 *
		    cs->cfg.callback_max_inflight) {
			next = now;
			break;
		}
		if ((j = claim(cs, de->d_name)) != NULL) {
			j->next = cs->ready;
			cs->ready = j;
			cs->nready++;
		}
	}
	closedir(dp);
	cs->next_scan = next;
	/* pending/ as far as this pass read it (taskspool_outbox_depth) */
	metrics_outbox_depth("callback", depth);
}
