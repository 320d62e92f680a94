/*
 * purgestat — the totals of `taskspool purge` in state/purge; see
 * purgestat.h.
 */
#include "spool/purgestat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/buf.h"

#define PURGESTAT_FILE	"purge"
#define PURGESTAT_LOCK	"purge.lock"
#define PURGESTAT_MAX	4096	/* bytes read back */

static const char *const names[PURGESTAT_NDIRS] = { "done", "failed",
	"cancelled", "corrupt" };

const char *
purgestat_dir_name(enum purgestat_dir d)
{
	return (size_t)d < PURGESTAT_NDIRS ? names[d] : "?";
}

/* "<digits>" (at most 18) as a value, or -1. */
static long long
whole(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0 || n > 18 || s[n] != '\0')
		return -1;
	return strtoll(s, NULL, 10);
}

int
purgestat_read(const struct spool *sp, struct purgestat *out)
{
	char *text, *line, *save = NULL;

	memset(out, 0, sizeof(*out));
	out->at_ms = -1;
	if ((text = spool_read_text(sp->dir[SPOOL_STATE], PURGESTAT_FILE,
	    PURGESTAT_MAX, NULL, NULL, 0)) == NULL)
		return -1;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		long long v;
		size_t i;

		if (eq == NULL || (v = whole(eq + 1)) < 0)
			goto bad;
		*eq = '\0';
		if (strcmp(line, "at_ms") == 0) {
			out->at_ms = v;
			continue;
		}
		for (i = 0; i < PURGESTAT_NDIRS; i++)
			if (strcmp(line, names[i]) == 0)
				break;
		if (i == PURGESTAT_NDIRS)
			goto bad;
		out->removed[i] = v;
	}
	free(text);
	return 0;
bad:
	free(text);
	memset(out, 0, sizeof(*out));
	out->at_ms = -1;
	errno = EINVAL;
	return -1;
}

int
purgestat_add(const struct spool *sp, const long long *add, int64_t now_ms)
{
	struct purgestat st;
	struct buf b;
	int lock, rc = -1, saved;

	lock = openat(sp->dir[SPOOL_STATE], PURGESTAT_LOCK, O_RDWR | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, 0640);
	if (lock < 0)
		return -1;
	if (flock(lock, LOCK_EX) != 0)
		goto out;
	/* A missing or damaged file starts the totals again. */
	(void)purgestat_read(sp, &st);
	buf_init(&b, PURGESTAT_MAX);
	rc = buf_printf(&b, "at_ms=%lld\n", (long long)now_ms);
	for (size_t i = 0; i < PURGESTAT_NDIRS; i++)
		rc |= buf_printf(&b, "%s=%lld\n", names[i],
		    st.removed[i] + (add[i] > 0 ? add[i] : 0));
	if (rc == 0)
		rc = spool_publish(sp, sp->dir[SPOOL_STATE], PURGESTAT_FILE,
		    b.data, b.len, -1, 0);
	buf_fini(&b);
out:
	saved = errno;
	close(lock);	/* drops the flock */
	errno = saved;
	return rc;
}
