/*
 * depstate — the state of a task's parents from the spool; see
 * depstate.h.
 */
#include "spool/depstate.h"

#include <errno.h>

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
