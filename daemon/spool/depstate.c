/*
 * depstate — the state of a task's parents from the spool; see
 * depstate.h.
 */
#include "spool/depstate.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "core/nameset.h"
#include "core/task.h"

enum depend_parent
depstate_of(const struct spool *s, const char *id, enum spool_dir *where)
{
	enum spool_dir d;
	char node[65];

	for (int pass = 0; pass < 2; pass++) {
		if (spool_locate(s, id, &d, node) != 0) {
			if (errno == EINVAL)
				return DEPEND_PARENT_UNKNOWN;
			continue;
		}
		if (where != NULL)
			*where = d;
		switch (d) {
		case SPOOL_DONE:
			return DEPEND_PARENT_SUCCESS;
		case SPOOL_FAILED:
			return DEPEND_PARENT_FAILED;
		case SPOOL_CANCELLED:
			return DEPEND_PARENT_CANCELLED;
		default:
			return DEPEND_PARENT_PENDING;
		}
	}
	return DEPEND_PARENT_UNKNOWN;
}

const char *
depstate_name(const struct spool *s, const char *id)
{
	enum spool_dir where = SPOOL_NDIRS;
	const char *name;

	if (depstate_of(s, id, &where) == DEPEND_PARENT_UNKNOWN ||
	    (name = spool_state_name(where)) == NULL)
		return "UNKNOWN";
	return name;
}

long
depstate_all(const struct spool *s, const struct depend_list *l,
    enum depend_parent *states)
{
	long first = -1;

	for (size_t i = 0; i < l->n; i++) {
		states[i] = depstate_of(s, l->v[i].id, NULL);
		if (states[i] == DEPEND_PARENT_UNKNOWN && first < 0)
			first = (long)i;
	}
	return first;
}

/* The parents named by the task files of directory dfd, into ws.
 * Returns 0 or -1 (ENOMEM, or dfd unreadable). */
static int
waited_in(int dfd, struct nameset *ws)
{
	struct dirent *de;
	DIR *dp;
	int rc = 0;

	if ((dp = spool_opendir(dfd)) == NULL)
		return -1;
	while (rc == 0 && (de = readdir(dp)) != NULL) {
		struct task t;
		struct task_error te;
		size_t len;
		char *data;

		if (de->d_name[0] == '.' || (data = spool_read_file(dfd,
		    de->d_name, TASK_FILE_MAX, &len)) == NULL)
			continue;
		task_init(&t);
		if (task_decode(data, len, &t, &te) == 0)
			for (size_t i = 0; i < t.depends.n; i++)
				if (nameset_add(ws, t.depends.v[i].id,
				    NULL) == NULL) {
					rc = -1;
					break;
				}
		task_fini(&t);
		free(data);
	}
	closedir(dp);
	return rc;
}

int
depstate_waited(const struct spool *s, struct nameset *ws)
{
	/* A held task may be a blocked one, and goes back to blocked/. */
	if (waited_in(s->dir[SPOOL_BLOCKED], ws) != 0)
		return -1;
	return s->dir[SPOOL_HOLD] >= 0 ? waited_in(s->dir[SPOOL_HOLD], ws) :
	    0;
}
