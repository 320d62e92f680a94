/*
 * dispatch — node choice per route; see dispatch.h.
 */
#include "core/dispatch.h"

#include <string.h>

int
dispatch_parse(const char *route, const char **node)
{
	static const struct {
		const char *name;
		enum dispatch_route r;
	} names[] = {
		{ "any", DISPATCH_ANY },
		{ "round_robin", DISPATCH_ROUND_ROBIN },
		{ "least_active", DISPATCH_LEAST_ACTIVE },
		{ "consistent_hash", DISPATCH_CONSISTENT_HASH },
		{ "broadcast", DISPATCH_BROADCAST },
	};

	*node = NULL;
	if (route == NULL)
		return DISPATCH_ANY;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(route, names[i].name) == 0)
			return (int)names[i].r;
	if (strncmp(route, "node:", 5) == 0 && route[5] != '\0') {
		*node = route + 5;
		return DISPATCH_NODE;
	}
	return -1;
}

int
dispatch_pick(enum dispatch_route r, const struct dispatch_node *nodes,
    size_t n, unsigned long *rr, const struct ring *ring, const char *key,
    const char *target)
{
	const char *owner;
	long best_free = 0;
	int best = -1;

	if (n == 0)
		return -1;
	switch (r) {
	case DISPATCH_ROUND_ROBIN:
		return (int)((*rr)++ % n);
	case DISPATCH_LEAST_ACTIVE:
		for (size_t i = 0; i < n; i++) {
			long fr = nodes[i].slots - nodes[i].running;

			if (best < 0 || fr > best_free) {
				best = (int)i;
				best_free = fr;
			}
		}
		return best;
	case DISPATCH_CONSISTENT_HASH:
		if (ring == NULL || (owner = ring_lookup(ring, key != NULL ?
		    key : "")) == NULL)
			return -1;
		for (size_t i = 0; i < n; i++)
			if (strcmp(nodes[i].id, owner) == 0)
				return (int)i;
		return -1;
	case DISPATCH_NODE:
		for (size_t i = 0; target != NULL && i < n; i++)
			if (strcmp(nodes[i].id, target) == 0)
				return (int)i;
		return -1;
	default:
		return -1;
	}
}
