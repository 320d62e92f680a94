/*
 * cli_deps — task dependencies in the CLI: --after, the parents' check
 * at submit, "taskspool deps ID"; see cli_deps.h.
 */
#include "cli/cli_deps.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "core/buf.h"
#include "core/depend.h"
#include "spool/depstate.h"

int
cli_deps_after(json_t **arr, const char *arg)
{
	char id[DEPEND_ID_MAX + 1];
	const char *colon = strchr(arg, ':'), *cond = "afterok";
	enum depend_cond c;
	size_t len = colon != NULL ? (size_t)(colon - arg) : strlen(arg);

	if (colon != NULL)
		cond = colon + 1;
	if (len < 1 || len > DEPEND_ID_MAX) {
		fprintf(stderr, "taskspool submit: --after: \"%s\" must be "
		    "ID[:afterok|afternotok|afterany]\n", arg);
		return -1;
	}
	memcpy(id, arg, len);
	id[len] = '\0';
	if (!spool_id_ok(id) || depend_cond_parse(cond, &c) != 0) {
		fprintf(stderr, "taskspool submit: --after: \"%s\" must be "
		    "ID[:afterok|afternotok|afterany], ID a requestId\n", arg);
		return -1;
	}
	if (*arr == NULL && (*arr = json_array()) == NULL)
		return -1;
	json_array_append_new(*arr, json_pack("{ssss}", "requestId", id,
	    "condition", depend_cond_name(c)));
	return 0;
}

int
cli_deps_check(const struct spool *sp, const struct task *t,
    const struct nameset *earlier, const char *what)
{
	for (size_t i = 0; i < t->depends.n; i++)
		if ((earlier == NULL || nameset_find(earlier,
		    t->depends.v[i].id) == NULL) && depstate_of(sp,
		    t->depends.v[i].id, NULL) == DEPEND_PARENT_UNKNOWN) {
			fprintf(stderr, "taskspool submit: %sinvalid task: "
			    "dependsOn[%zu].requestId: no task %s in the spool "
			    "(a parent must exist before its dependent)\n",
			    what, i, t->depends.v[i].id);
			return EX_DATAERR;
		}
	return 0;
}

/* Read the task file of id wherever it is.  Returns 0 or -1. */
static int
read_task(const struct spool *sp, const char *id, struct task *t,
    enum spool_dir *where)
{
	char file[SPOOL_NAME_MAX];
	struct task_error te;
	size_t len;
	char *data;
	int dfd;

	if (depstate_of(sp, id, where) == DEPEND_PARENT_UNKNOWN)
		return -1;
	if (*where == SPOOL_ACTIVE || *where == SPOOL_QUEUE) {
		t->depends.n = 0;	/* its parents are history now */
		return 0;
	}
	dfd = sp->dir[*where];
	snprintf(file, sizeof(file), "%s.json", id);
	if ((data = spool_read_file(dfd, file, TASK_FILE_MAX, &len)) == NULL)
		return 0;
	(void)task_decode(data, len, t, &te);
	free(data);
	return 0;
}

static const char *
verdict_name(enum depend_verdict v)
{
	return v == DEPEND_READY ? "holds" : v == DEPEND_NEVER ? "never" :
	    "waiting";
}

void
cli_deps_print_waiting(const struct spool *sp, const char *id)
{
	struct task t;
	enum spool_dir where;

	task_init(&t);
	if (read_task(sp, id, &t, &where) == 0 && where == SPOOL_BLOCKED)
		for (size_t i = 0; i < t.depends.n; i++)
			printf("waiting for %s (%s, %s)\n", t.depends.v[i].id,
			    depend_cond_name(t.depends.v[i].cond),
			    depstate_name(sp, t.depends.v[i].id));
	task_fini(&t);
}

int
cli_deps_main(const struct spool *sp, int json, int argc, char **argv)
{
	struct task t, k;
	enum spool_dir where;
	json_t *o, *parents, *kids;
	struct dirent *de;
	DIR *dp;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		fputs("usage: taskspool deps ID [--json]\n", stdout);
		return 0;
	}
	if (argc != 2 || !spool_id_ok(argv[1])) {
		fputs("usage: taskspool deps ID [--json]\n", stderr);
		return EX_USAGE;
	}
	task_init(&t);
	if (read_task(sp, argv[1], &t, &where) != 0) {
		fprintf(stderr, "taskspool deps: no task %s\n", argv[1]);
		return EX_NOINPUT;
	}
	o = json_object();
	parents = json_array();
	kids = json_array();
	json_object_set_new(o, "requestId", json_string(argv[1]));
	json_object_set_new(o, "status", json_string(spool_state_name(where)));
	for (size_t i = 0; i < t.depends.n; i++) {
		enum depend_parent p = depstate_of(sp, t.depends.v[i].id, NULL);

		json_array_append_new(parents, json_pack("{ssssssss}",
		    "requestId", t.depends.v[i].id, "condition",
		    depend_cond_name(t.depends.v[i].cond), "state",
		    depstate_name(sp, t.depends.v[i].id), "verdict", verdict_name(
		    depend_cond_eval(t.depends.v[i].cond, p))));
	}
	/* Dependents: the tasks of blocked/ naming it. */
	if ((dp = spool_opendir(sp->dir[SPOOL_BLOCKED])) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			struct task_error te;
			size_t len;
			char *data;
			long w;

			if (de->d_name[0] == '.' || (data = spool_read_file(
			    sp->dir[SPOOL_BLOCKED], de->d_name, TASK_FILE_MAX,
			    &len)) == NULL)
				continue;
			task_init(&k);
			if (task_decode(data, len, &k, &te) == 0 &&
			    (w = depend_find(&k.depends, argv[1])) >= 0)
				json_array_append_new(kids, json_pack(
				    "{ssss}", "requestId", k.request_id,
				    "condition", depend_cond_name(
				    k.depends.v[w].cond)));
			task_fini(&k);
			free(data);
		}
		closedir(dp);
	}
	if (json) {
		json_object_set_new(o, "parents", parents);
		json_object_set_new(o, "dependents", kids);
		json_dumpf(o, stdout, JSON_COMPACT);
		putchar('\n');
	} else {
		size_t i;
		json_t *e;

		printf("%s %s\n", argv[1], spool_state_name(where));
		json_array_foreach(parents, i, e)
			printf("  after %s %s (%s: %s)\n", json_string_value(
			    json_object_get(e, "condition")),
			    json_string_value(json_object_get(e,
			    "requestId")), json_string_value(json_object_get(
			    e, "state")), json_string_value(json_object_get(e,
			    "verdict")));
		json_array_foreach(kids, i, e)
			printf("  before %s (%s)\n", json_string_value(
			    json_object_get(e, "requestId")),
			    json_string_value(json_object_get(e,
			    "condition")));
		json_decref(parents);
		json_decref(kids);
	}
	json_decref(o);
	task_fini(&t);
	return 0;
}
