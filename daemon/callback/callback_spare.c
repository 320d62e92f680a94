/*
 * callback_spare — spare files in tmp/: the claimed copy of a delivery
 * whose new state is durable is renamed into tmp/ and its inode reused
 * for a later state, instead of one inode made and one freed per try;
 * and the names of the new files of tmp/.
 *
 * Invariants: a spare is used only after the removal of its name from
 * active/<node>/ is durable (fsync), so a crash never brings that name
 * back onto other bytes; a spare has one link and the sender's owner;
 * spares are removed after CB_SPARE_MS unused and when the sender stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callback/callback_impl.h"
#include "spool/clock.h"

/*
 * Spare files.  A delivery's try ends with its new state in a file
 * renamed out of tmp/ and its claimed copy removed from active/<node>/:
 * one inode made and one freed per delivery, which on some file systems
 * (ext4 without a journal scans the recently freed inodes of a group at
 * every creation) costs more than the rest of the try.  So the claimed
 * copy, once its delivery's new state is durable, is renamed into tmp/
 * instead, and after the removal from active/<node>/ is durable too
 * (fsync, so a crash can never bring the name back onto other bytes)
 * its inode is overwritten with a later state.  Spares are used newest
 * first and removed when unused for CB_SPARE_MS or when the sender stops;
 * a killed daemon's are removed by the leader's hourly tmp/ cleaning.
 */
#define CB_SPARE_MS	60000

static void
tmp_name(struct callback_sender *cs, char *name)
{
	snprintf(name, SPOOL_NAME_MAX, "cb.%.64s.%ld.%lu", cs->sp.node,
	    cs->pid, ++cs->tmp_seq);
}

/* Remove the spares unused since before now - CB_SPARE_MS (every one
 * when now is INT64_MAX). */
void
sender_spares_expire(struct callback_sender *cs, int64_t now)
{
	int k = 0;

	while (k < cs->nspare && (now == INT64_MAX ||
	    now - cs->spare_ms[k] > CB_SPARE_MS))
		(void)unlinkat(cs->sp.dir[SPOOL_TMP], cs->spare[k++], 0);
	if (k == 0)
		return;
	memmove(cs->spare, cs->spare[k], (size_t)(cs->nspare - k) *
	    sizeof(cs->spare[0]));
	memmove(cs->spare_ms, cs->spare_ms + k, (size_t)(cs->nspare - k) *
	    sizeof(cs->spare_ms[0]));
	cs->nspare -= k;
}

/*
 * Open a file of tmp/ for a new state, its name into name
 * (SPOOL_NAME_MAX bytes): the newest spare, or a new file.  Returns a
 * descriptor open for writing at offset 0, with the size of the bytes
 * it holds already in *old (0 for a new file), or -1 with errno.
 */
int
sender_tmp_open(struct callback_sender *cs, char *name, off_t *old)
{
	int tmp = cs->sp.dir[SPOOL_TMP];
	struct stat st;
	int fd;

	while (cs->nspare > 0) {
		snprintf(name, SPOOL_NAME_MAX, "%s", cs->spare[--cs->nspare]);
		fd = openat(tmp, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;	/* removed meanwhile: next */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_nlink == 1 && st.st_uid == cs->new_uid) {
			*old = st.st_size;
			return fd;
		}
		close(fd);
	}
	*old = 0;
	/* A name can be taken by a killed daemon that had our pid. */
	for (int i = 0; i < 8; i++) {
		tmp_name(cs, name);
		fd = openat(tmp, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd >= 0 && cs->new_mode == 0 && fstat(fd, &st) == 0) {
		cs->new_uid = st.st_uid;
		cs->new_mode = st.st_mode & 07777;
	}
	return fd;
}

/*
 * Move j's claimed copy (its new state is durable) into tmp/ as a spare,
 * named into name (SPOOL_NAME_MAX bytes); nfresh were moved before it in
 * this pass.  Returns 1 when moved, 0 when another user owns it or there
 * are spares enough: the caller removes it.
 */
int
sender_recycle(struct callback_sender *cs, const struct cbjob *j, char *name,
    int nfresh)
{
	/* Owner and permissions as a new file's; a new mtime, because the
	 * leader's tmp/ cleaning goes by age. */
	if (cs->new_mode == 0 || j->uid != cs->new_uid ||
	    cs->nspare + nfresh >= CB_SPARES_MAX || (j->mode != cs->new_mode &&
	    fchmod(j->fd, cs->new_mode) != 0) || futimens(j->fd, NULL) != 0)
		return 0;
	tmp_name(cs, name);
	return renameat(cs->d.self, j->file, cs->sp.dir[SPOOL_TMP], name) ==
	    0;
}

/* Make the n files just moved into tmp/ by sender_recycle() spares, once their
 * names' removal from active/<node>/ is durable (or remove them). */
void
sender_spares_add(struct callback_sender *cs, char (*name)[SPOOL_NAME_MAX],
    int n)
{
	int64_t now = tstime_now_ms();
	int ok;

	if (n == 0)
		return;
	ok = !cs->sp.do_fsync || fsync(cs->d.self) == 0;
	for (int i = 0; i < n; i++)
		if (!ok || cs->nspare == CB_SPARES_MAX)
			(void)unlinkat(cs->sp.dir[SPOOL_TMP], name[i], 0);
		else {
			memcpy(cs->spare[cs->nspare], name[i],
			    sizeof(cs->spare[0]));
			cs->spare_ms[cs->nspare++] = now;
		}
}
