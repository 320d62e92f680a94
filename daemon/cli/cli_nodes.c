/*
 * cli_nodes — "taskspool nodes": the node registry; see cli_nodes.h.
 */
#include "cli/cli_nodes.h"

#include <jansson.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "core/tags.h"
#include "core/task.h"
#include "core/tstime.h"
#include "coord/coord.h"
#include "coord/coord_open.h"
#include "spool/clock.h"
#include "spool/drain.h"

#define NODES_USAGE \
"usage: taskspool nodes [--json]\n" \
"       taskspool nodes drain NODE [--reason TEXT] [--force] [--no-wait]\n" \
"       taskspool nodes resume NODE [--no-wait]\n" \
"\n" \
"  (no command)  list the daemons of the spool: state (alive, draining,\n" \
"                drained, stopping, offline), heartbeat age, load,\n" \
"                running/slots, tags=<its tags>, leader, the drain\n" \
"                reason\n" \
"  drain NODE    NODE finishes the hooks it runs, claims nothing new and\n" \
"                stays up (its routed tasks go to other nodes); waits\n" \
"                until NODE confirms, unless --no-wait\n" \
"  resume NODE   NODE claims again\n" \
"  --reason TEXT why (shown by nodes and status, logged by the node)\n" \
"  --force       drain a NODE the registry does not know (yet)\n" \
"\n" \
"Exit status: 0 done; 64 usage; 68 no such node; 69 the registry cannot\n" \
"be read, or NODE did not confirm in time; 73 the marker cannot be\n" \
"written.\n"

/*
 * What `taskspool nodes` calls node nd: "offline" (no heartbeat for 3
 * heartbeat_ms), "stopping" (SIGTERM drain), "draining" (drained by an
 * operator, hooks still running), "drained" (and none running), else
 * "alive".
 */
static const char *
node_state(const struct coord_node *nd, int alive)
{
	if (!alive)
		return "offline";
	if (nd->draining == 2)
		return "stopping";
	if (nd->draining == 1)
		return nd->running > 0 ? "draining" : "drained";
	return "alive";
}

/* {"reason": ..., "since": ...} of a drain marker. */
static json_t *
drain_json(const struct drainmark *m)
{
	json_t *o = json_object();
	char b[TSTIME_BUF];

	json_object_set_new(o, "reason", json_string(m->reason));
	json_object_set_new(o, "since", m->since_ms > 0 ? json_string(
	    tstime_format_ms(b, sizeof(b), m->since_ms)) : json_null());
	return o;
}

/*
 * The registry (coord_nodes) as a client sees it: no node id, so it
 * holds nothing and removes nothing.  Returns 0 with *v (new, the caller
 * frees it) and *n, -1 when the coordination cannot be opened (a
 * configuration problem), -2 when the listing fails (e.g. Redis down);
 * why says which.
 */
static int
registry(const struct config *cfg, const struct spool *sp,
    struct coord_node **v, size_t *n, char *why, size_t whylen)
{
	struct coord *co = coord_open(cfg, "", sp, why, whylen);
	int rc;

	*v = NULL;
	*n = 0;
	if (co == NULL)
		return -1;
	rc = coord_nodes(co, v, n, why, whylen);
	coord_close(co);
	return rc != 0 ? -2 : 0;
}

static int
nodes_list(const struct config *cfg, const struct spool *sp, int json,
    int argc, char **argv)
{
	struct coord_node *v;
	size_t n;
	char why[512];
	int64_t now = tstime_now_ms();
	json_t *arr;
	int rc;

	if (argc != 1) {
		int help = argc == 2 && (strcmp(argv[1], "-h") == 0 ||
		    strcmp(argv[1], "--help") == 0);

		fputs(NODES_USAGE, help ? stdout : stderr);
		return help ? 0 : EX_USAGE;
	}
	if ((rc = registry(cfg, sp, &v, &n, why, sizeof(why))) != 0) {
		fprintf(stderr, "taskspool nodes: %s\n", why);
		return rc == -1 ? EX_CONFIG : EX_UNAVAILABLE;
	}
	arr = json ? json_array() : NULL;
	/* The columns named for a person; a script (no terminal) gets the
	 * lines alone, as before. */
	if (!json && n > 0 && isatty(STDOUT_FILENO))
		puts("# node state heartbeat-age-s load1 running/slots "
		    "[tags=...] [leader] [(drain: reason)]");
	for (size_t i = 0; i < n; i++) {
		int64_t age = now - v[i].at_ms;
		int alive = coord_node_alive(&v[i], now, cfg->heartbeat_ms);
		const char *state = node_state(&v[i], alive);
		struct drainmark m;
		char why2[512];
		int drained = drain_read(sp, v[i].id, &m, why2,
		    sizeof(why2)) == 1;

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
			/* Its tags (core/tags.h), [] when none. */
			json_object_set_new(o, "tags", tags_json(v[i].tags));
			/* The operator's drain marker, whether or not the
			 * node has seen it yet. */
			json_object_set_new(o, "drain", drained ?
			    drain_json(&m) : json_null());
			json_array_append_new(arr, o);
		} else
			printf("%s %s %.1f %.2f %ld/%ld%s%s%s%s%s%s\n",
			    v[i].id, state, (double)age / 1000, v[i].load1,
			    v[i].running, v[i].slots, v[i].tags[0] != '\0' ?
			    " tags=" : "", v[i].tags, v[i].leader && alive ?
			    " leader" : "", drained ? " (drain: " : "",
			    drained ? (m.reason[0] != '\0' ? m.reason :
			    "no reason given") : "", drained ? ")" : "");
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

/*
 * Wait until node's heartbeat says draining == want (1 drained, 0
 * claiming), at most 3 heartbeat_ms and 2 s more: the node reads its
 * marker every half second and writes its heartbeat at once when its
 * state changes.  Returns 1 confirmed, 0 not in time, -1 on a registry
 * error (why).
 */
static int
wait_confirm(const struct config *cfg, const struct spool *sp,
    const char *node, int want, char *why, size_t whylen)
{
	int64_t start = tstime_mono_ms();
	int64_t end = start + 3 * cfg->heartbeat_ms + 2000;
	int said = 0;

	for (;;) {
		struct coord_node *v;
		size_t n;
		int got = -1;

		if (registry(cfg, sp, &v, &n, why, whylen) != 0)
			return -1;
		for (size_t i = 0; i < n; i++)
			if (strcmp(v[i].id, node) == 0)
				got = v[i].draining;
		free(v);
		if (got == want || (want == 1 && got == 2))
			return 1;
		if (tstime_mono_ms() >= end)
			return 0;
		if (!said && tstime_mono_ms() - start >= 1000) {
			fprintf(stderr, "taskspool nodes: waiting for %s to "
			    "confirm (at most %ld s)...\n", node,
			    (3 * cfg->heartbeat_ms + 2000) / 1000);
			said = 1;
		}
		usleep(200000);
	}
}

/* Whether node is in the registry and alive: 1, 0 unknown, 2 offline,
 * -1 with why. */
static int
registry_has(const struct config *cfg, const struct spool *sp,
    const char *node, char *why, size_t whylen)
{
	struct coord_node *v;
	size_t n;
	int found = 0;

	if (registry(cfg, sp, &v, &n, why, whylen) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].id, node) == 0)
			found = coord_node_alive(&v[i], tstime_now_ms(),
			    cfg->heartbeat_ms) ? 1 : 2;
	free(v);
	return found;
}

/* `nodes drain NODE ...` and `nodes resume NODE ...`. */
static int
nodes_drain(const struct config *cfg, const struct spool *sp, int drain,
    int argc, char **argv)
{
	const char *node = NULL, *reason = "";
	int force = 0, nowait = 0, known, ok, reason_given = 0;
	char why[512];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reason") == 0 && drain && i + 1 < argc) {
			reason = argv[++i];
			reason_given = 1;
		} else if (strcmp(argv[i], "--force") == 0 && drain)
			force = 1;
		else if (strcmp(argv[i], "--no-wait") == 0)
			nowait = 1;
		else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fputs(NODES_USAGE, stdout);
			return 0;
		} else if (argv[i][0] != '-' && node == NULL)
			node = argv[i];
		else {
			fprintf(stderr, "taskspool nodes %s: unexpected "
			    "argument \"%s\"\n%s", argv[0], argv[i],
			    NODES_USAGE);
			return EX_USAGE;
		}
	}
	if (node == NULL || !task_name_ok(node, DRAINMARK_NODE_MAX)) {
		fprintf(stderr, "taskspool nodes %s: %s\n%s", argv[0],
		    node == NULL ? "which node? (taskspool nodes lists them)"
		    : "NODE must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}",
		    NODES_USAGE);
		return EX_USAGE;
	}
	if ((known = registry_has(cfg, sp, node, why, sizeof(why))) < 0) {
		fprintf(stderr, "taskspool nodes %s: %s\n", argv[0], why);
		return EX_UNAVAILABLE;
	}
	if (drain) {
		struct drainmark m;
		json_t *t;

		if (known == 0 && !force) {
			fprintf(stderr, "taskspool nodes drain: no node %s in "
			    "the registry (taskspool nodes lists them); "
			    "--force drains it before it starts\n", node);
			return EX_NOHOST;
		}
		if (!drainmark_reason_ok(reason) ||
		    (t = json_string(reason)) == NULL) {
			fprintf(stderr, "taskspool nodes drain: --reason must "
			    "be UTF-8 text of at most %d bytes without "
			    "control characters\n", DRAINMARK_REASON_MAX);
			return EX_USAGE;
		}
		json_decref(t);
		/* Draining a drained node again without --reason keeps the
		 * reason and the time it has. */
		if (!reason_given && drain_read(sp, node, &m, why,
		    sizeof(why)) == 1) {
			printf("node %s is already drained (since %s%s%s)\n",
			    node, tstime_format_ms(why, sizeof(why),
			    m.since_ms), m.reason[0] != '\0' ? ": " : "",
			    m.reason);
			return 0;
		}
		memset(&m, 0, sizeof(m));
		snprintf(m.node, sizeof(m.node), "%s", node);
		snprintf(m.reason, sizeof(m.reason), "%s", reason);
		m.since_ms = tstime_now_ms();
		if (drain_write(sp, &m) != 0) {
			fprintf(stderr, "taskspool nodes drain: cannot write "
			    "state/drain/%s.json: %s\n", node,
			    strerror(errno));
			return EX_CANTCREAT;
		}
	} else if (drain_remove(sp, node) != 0) {
		if (errno != ENOENT) {
			fprintf(stderr, "taskspool nodes resume: cannot "
			    "remove state/drain/%s.json: %s\n", node,
			    strerror(errno));
			return EX_CANTCREAT;
		}
		if (known == 0) {
			fprintf(stderr, "taskspool nodes resume: no node %s "
			    "in the registry and no drain marker of it "
			    "(taskspool nodes lists them)\n", node);
			return EX_NOHOST;
		}
		printf("node %s was not drained\n", node);
		return 0;
	}
	if (known != 1 || nowait) {
		printf("node %s %s%s\n", node, drain ? "drained" : "resumed",
		    known != 1 ? ": it is not running; it starts so" :
		    " (not waiting for it to confirm)");
		return 0;
	}
	if ((ok = wait_confirm(cfg, sp, node, drain, why, sizeof(why))) < 0) {
		fprintf(stderr, "taskspool nodes %s: %s\n", argv[0], why);
		return EX_UNAVAILABLE;
	}
	if (ok == 0) {
		fprintf(stderr, "taskspool nodes %s: %s has not confirmed in "
		    "%ld s; it will when it next reads its marker (is it "
		    "stuck? see its log)\n", argv[0], node,
		    (3 * cfg->heartbeat_ms + 2000) / 1000);
		return EX_UNAVAILABLE;
	}
	printf(drain ? "node %s drained: it claims nothing new; the hooks it "
	    "runs finish (taskspool nodes shows them)\n" :
	    "node %s resumed: it claims again\n", node);
	return 0;
}

int
cli_nodes_main(const struct config *cfg, const struct spool *sp, int json,
    int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "drain") == 0)
		return nodes_drain(cfg, sp, 1, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "resume") == 0)
		return nodes_drain(cfg, sp, 0, argc - 1, argv + 1);
	return nodes_list(cfg, sp, json, argc, argv);
}

void
cli_nodes_usage(FILE *fp)
{
	fputs(NODES_USAGE, fp);
}
