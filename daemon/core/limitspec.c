/*
 * limitspec — the max_concurrent value "<taskCode>=<N>[,...]"; see
 * limitspec.h.
 */
#include "core/limitspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/task.h"

int
limits_check(const char *spec, char *why, size_t whylen)
{
	const char *p = spec;

	while (*p != '\0') {
		const char *end = strchr(p, ','), *eq;
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		char item[TASK_CODE_MAX + 32], *num;
		long v;

		if (len == 0 || len >= sizeof(item)) {
			snprintf(why, whylen, "max_concurrent: empty or too "
			    "long item in \"%.200s\"", spec);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		eq = strchr(item, '=');
		if (eq == NULL) {
			snprintf(why, whylen, "max_concurrent: \"%s\" is not "
			    "<taskCode>=<N>", item);
			return -1;
		}
		item[eq - item] = '\0';
		v = strtol(eq + 1, &num, 10);
		if (!task_name_ok(item, TASK_CODE_MAX) || eq[1] == '\0' || *num != '\0' ||
		    v < 1 || v > LIMIT_MAX) {
			snprintf(why, whylen, "max_concurrent: \"%.*s\" is not "
			    "<taskCode>=<N> with 1 <= N <= %d", (int)len, p,
			    LIMIT_MAX);
			return -1;
		}
		if (limits_max(p + len, item) != 0) {	/* again later */
			snprintf(why, whylen, "max_concurrent: task code "
			    "\"%s\" given twice", item);
			return -1;
		}
		p += len;
		if (*p == ',' && *++p == '\0') {
			snprintf(why, whylen, "max_concurrent: empty item at "
			    "the end of \"%.200s\"", spec);
			return -1;
		}
	}
	return 0;
}

long
limits_max(const char *spec, const char *code)
{
	size_t cl = strlen(code);

	for (const char *p = spec; p != NULL && *p != '\0';) {
		if (strncmp(p, code, cl) == 0 && p[cl] == '=')
			return strtol(p + cl + 1, NULL, 10);
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return 0;
}
