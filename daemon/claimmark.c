/*
 * claimmark — the per-requestId claim marker; see claimmark.h.
 */
#include "claimmark.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coord.h"

#define CLAIMMARK_TRIES	4	/* create/open rounds before EAGAIN */

/* Read what fd holds (the previous claimant's line) into prev. */
static void
read_info(int fd, char *prev, size_t prevlen)
{
	ssize_t r;

	if (prev == NULL || prevlen == 0)
		return;
	r = pread(fd, prev, prevlen - 1, 0);
	if (r < 0)
		r = 0;
	prev[r] = '\0';
	prev[strcspn(prev, "\n")] = '\0';
}

/* Write our line over fd's content (fresh: the file is empty, nothing
 * to cut off). */
static int
write_info(int fd, const char *node, int64_t now_ms, int fresh)
{
	char line[CLAIMMARK_INFO_MAX];
	int l;

	l = snprintf(line, sizeof(line), "node=%.64s pid=%ld at_ms=%lld\n",
	    node, (long)getpid(), (long long)now_ms);
	if (l < 0 || (size_t)l >= sizeof(line)) {
		errno = EOVERFLOW;
		return -1;
	}
	/* Written over, then cut to its length: never truncated to 0 first
	 * (ext4's auto_da_alloc would then flush the file at close: a
	 * millisecond per claim). */
	if (pwrite(fd, line, (size_t)l, 0) != l || (!fresh &&
	    ftruncate(fd, l) != 0))
		return -1;
	return 0;
}

int
claimmark_take(const struct spool *sp, const char *id, const char *node,
    int64_t now_ms, int *taken_over, char *prev, size_t prevlen)
{
	struct stat st;

	if (taken_over != NULL)
		*taken_over = 0;
	if (prev != NULL && prevlen > 0)
		prev[0] = '\0';
	if (sp->claims < 0) {
		errno = EBADF;
		return -1;
	}
	for (int i = 0; i < CLAIMMARK_TRIES; i++) {
		int fd, created = 1;

		fd = openat(sp->claims, id, O_RDWR | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd < 0 && errno == EEXIST) {
			created = 0;
			fd = openat(sp->claims, id, O_RDWR | O_NOFOLLOW |
			    O_NONBLOCK | O_CLOEXEC);
			if (fd < 0 && errno == ENOENT)
				continue;	/* released meanwhile */
			if (fd < 0 && errno == ELOOP) {
				/* Not ours: a marker is a regular file. */
				(void)unlinkat(sp->claims, id, 0);
				continue;
			}
		}
		if (fd < 0)
			return -1;
		if (fstat(fd, &st) != 0) {
			close(fd);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			close(fd);
			(void)unlinkat(sp->claims, id, 0);
			continue;
		}
		if (coord_flock_verify(fd, sp->claims, id) != 0) {
			int e = errno;

			close(fd);
			if (e == ESTALE || e == ENOENT)
				continue;	/* released and made again */
			errno = e;		/* EWOULDBLOCK: held */
			return -1;
		}
		if (!created) {
			if (taken_over != NULL)
				*taken_over = 1;
			read_info(fd, prev, prevlen);
		}
		if (write_info(fd, node, now_ms, created) != 0) {
			int e = errno;

			claimmark_release(sp, id, fd);
			errno = e;
			return -1;
		}
		return fd;
	}
	errno = EAGAIN;
	return -1;
}

void
claimmark_release(const struct spool *sp, const char *id, int fd)
{
	if (fd < 0)
		return;
	(void)unlinkat(sp->claims, id, 0);
	close(fd);
}

size_t
claimmark_sweep(const struct spool *sp, int64_t now_ms, int64_t min_age_ms)
{
	struct dirent *de;
	size_t removed = 0;
	DIR *dp;

	if (sp->claims < 0 || (dp = spool_opendir(sp->claims)) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		struct stat st;
		int64_t mt;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = openat(sp->claims, de->d_name, O_RDWR | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		mt = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec /
		    1000000;
		if (now_ms - mt >= min_age_ms &&
		    coord_flock_verify(fd, sp->claims, de->d_name) == 0 &&
		    unlinkat(sp->claims, de->d_name, 0) == 0)
			removed++;
		close(fd);
	}
	closedir(dp);
	return removed;
}
