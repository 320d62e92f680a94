/*
 * limitspec — the max_concurrent (and max_concurrent_per_key) value
 * "<taskCode>=<N>[,...]"; see
 * limitspec.h.
 */
#include "core/limitspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conckey.h"
#include "core/task.h"

/* A task's maxConcurrentPerKey and the configuration's N agree. */
_Static_assert(CONCKEY_LIMIT_MAX == LIMIT_MAX, "per-key limit bounds");

int
limits_check(const char *spec, char *why, size_t whylen)
{
	return limits_check_key("max_concurrent", spec, why, whylen);
}

int
limits_check_key(const char *key, const char *spec, char *why,
    size_t whylen)
{
	const char *p = spec;

	while (*p != '\0') {
		const char *end = strchr(p, ','), *eq;
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		char item[TASK_CODE_MAX + 32], *num;
		long v;

		if (len == 0 || len >= sizeof(item)) {
			snprintf(why, whylen, "%s: empty or too "
			    "long item in \"%.200s\"", key, spec);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		eq = strchr(item, '=');
		if (eq == NULL) {
			snprintf(why, whylen, "%s: \"%s\" is not "
			    "<taskCode>=<N>", key, item);
			return -1;
		}
		item[eq - item] = '\0';
		v = strtol(eq + 1, &num, 10);
		if (!task_name_ok(item, TASK_CODE_MAX) || eq[1] == '\0' || *num != '\0' ||
		    v < 1 || v > LIMIT_MAX) {
			snprintf(why, whylen, "%s: \"%.*s\" is not "
			    "<taskCode>=<N> with 1 <= N <= %d", key, (int)len, p,
			    LIMIT_MAX);
			return -1;
		}
		if (limits_max(p + len, item) != 0) {	/* again later */
			snprintf(why, whylen, "%s: task code "
			    "\"%s\" given twice", key, item);
			return -1;
		}
		p += len;
		if (*p == ',' && *++p == '\0') {
			snprintf(why, whylen, "%s: empty item at "
			    "the end of \"%.200s\"", key, spec);
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
