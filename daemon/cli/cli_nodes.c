/*
 * cli_nodes — "taskspool nodes": the node registry; see cli_nodes.h.
 */
#include "cli/cli_nodes.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "coord/coord.h"
#include "coord/coord_open.h"
#include "spool/clock.h"

int
cli_nodes_main(const struct config *cfg, const struct spool *sp, int json,
    int argc, char **argv)
{
	struct coord *co;
	struct coord_node *v;
	size_t n;
	char why[512];
	int64_t now = tstime_now_ms();
	json_t *arr;

	if (argc != 1) {
		int help = argc == 2 && (strcmp(argv[1], "-h") == 0 ||
		    strcmp(argv[1], "--help") == 0);

		fputs("usage: taskspool nodes [--json]\n", help ? stdout :
		    stderr);
		return help ? 0 : EX_USAGE;
	}
	/* A client: no node id, so it holds nothing and removes nothing. */
	if ((co = coord_open(cfg, "", sp, why, sizeof(why))) == NULL) {
		fprintf(stderr, "taskspool nodes: %s\n", why);
		return EX_CONFIG;
	}
	if (coord_nodes(co, &v, &n, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool nodes: %s\n", why);
		coord_close(co);
		return EX_UNAVAILABLE;
	}
	coord_close(co);
	arr = json ? json_array() : NULL;
	for (size_t i = 0; i < n; i++) {
		int64_t age = now - v[i].at_ms;
		int alive = coord_node_alive(&v[i], now, cfg->heartbeat_ms);
		const char *state = alive ? "alive" : "offline";

		if (json) {
			json_t *o = json_object();

			json_object_set_new(o, "node", json_string(v[i].id));
			json_object_set_new(o, "state", json_string(state));
			json_object_set_new(o, "ageMs", json_integer(age));
			json_object_set_new(o, "pid", json_integer(v[i].pid));
			json_object_set_new(o, "slots",
			    json_integer(v[i].slots));
			json_object_set_new(o, "running",
			    json_integer(v[i].running));
			json_object_set_new(o, "claimed", json_integer(
			    (json_int_t)v[i].claimed));
			json_object_set_new(o, "finished", json_integer(
			    (json_int_t)v[i].finished));
			/* An offline node's heartbeat is its frozen view of
			 * itself: it says nothing of who leads now. */
			json_object_set_new(o, "leader",
			    json_boolean(v[i].leader && alive));
			json_object_set_new(o, "load1", json_real(v[i].load1));
			json_object_set_new(o, "startedAtMs",
			    json_integer(v[i].started_ms));
			/* The task codes it runs (hookset.h); null: its
			 * heartbeat has no list (an older version). */
			json_object_set_new(o, "hooks", v[i].hooks_known ?
			    json_string(v[i].hooks) : json_null());
			json_array_append_new(arr, o);
		} else
			printf("%s %s %.1f %.2f %ld/%ld%s\n", v[i].id, state,
			    (double)age / 1000, v[i].load1, v[i].running,
			    v[i].slots, v[i].leader && alive ? " leader" : "");
	}
	if (json) {
		/* load1 as the kernel gives it, 2 decimals (not 17) */
		char *s = json_dumps(arr, JSON_COMPACT |
		    JSON_REAL_PRECISION(6));

		printf("%s\n", s != NULL ? s : "[]");
		free(s);
		json_decref(arr);
	}
	free(v);
	return 0;
}
