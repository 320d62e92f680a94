/*
 * check_depend.c — unit tests for daemon/core/depend.c: the condition
 * table of task dependencies and the dependsOn/releasedBy codec.
 *
 * The table is Slurm's, from sbatch(1), --dependency: afterok "can begin
 * execution after the specified jobs have successfully executed (ran to
 * completion with an exit code of zero)"; afternotok "after the
 * specified jobs have terminated in some failed state (non-zero exit
 * code, node failure, timed out, etc)"; afterany "after the specified
 * jobs have terminated" (any terminal state).  A cancelled parent is a
 * failed state for afternotok, as Slurm's controller counts it (finished,
 * not complete).  A parent not ended yet (or not found) always waits.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/depend.h"
#include "core/task.h"
#include "unit.h"

START_TEST(test_table)
{
	static const struct {
		enum depend_cond c;
		enum depend_parent p;
		enum depend_verdict want;
	} v[] = {
		{ DEPEND_AFTEROK, DEPEND_PARENT_SUCCESS, DEPEND_READY },
		{ DEPEND_AFTEROK, DEPEND_PARENT_FAILED, DEPEND_NEVER },
		{ DEPEND_AFTEROK, DEPEND_PARENT_CANCELLED, DEPEND_NEVER },
		{ DEPEND_AFTEROK, DEPEND_PARENT_PENDING, DEPEND_WAIT },
		{ DEPEND_AFTEROK, DEPEND_PARENT_UNKNOWN, DEPEND_WAIT },
		{ DEPEND_AFTERNOTOK, DEPEND_PARENT_SUCCESS, DEPEND_NEVER },
		{ DEPEND_AFTERNOTOK, DEPEND_PARENT_FAILED, DEPEND_READY },
		{ DEPEND_AFTERNOTOK, DEPEND_PARENT_CANCELLED, DEPEND_READY },
		{ DEPEND_AFTERNOTOK, DEPEND_PARENT_PENDING, DEPEND_WAIT },
		{ DEPEND_AFTERANY, DEPEND_PARENT_SUCCESS, DEPEND_READY },
		{ DEPEND_AFTERANY, DEPEND_PARENT_FAILED, DEPEND_READY },
		{ DEPEND_AFTERANY, DEPEND_PARENT_CANCELLED, DEPEND_READY },
		{ DEPEND_AFTERANY, DEPEND_PARENT_PENDING, DEPEND_WAIT },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_msg(depend_cond_eval(v[i].c, v[i].p) == v[i].want,
		    "%s x %s", depend_cond_name(v[i].c),
		    depend_parent_name(v[i].p));
}
END_TEST

/* Decode the task text s; returns task_decode's answer, err filled. */
static int
decode(const char *s, struct task *t, struct task_error *err)
{
	task_init(t);
	return task_decode(s, strlen(s), t, err);
}

START_TEST(test_codec)
{
	struct task t;
	struct task_error err;
	static const struct {
		const char *text, *field;
	} bad[] = {
		{ "{\"taskCode\":\"x\",\"dependsOn\":[]}", "dependsOn" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":{}}", "dependsOn" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":[\"a\"]}", "dependsOn" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":[{\"condition\":"
		    "\"afterok\"}]}", "dependsOn[0].requestId" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":[{\"requestId\":\"a\"},"
		    "{\"requestId\":\"b\",\"condition\":\"afterOK\"}]}",
		    "dependsOn[1].condition" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":[{\"requestId\":\"../x\"}"
		    "]}", "dependsOn[0].requestId" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":[{\"requestId\":\"a\"},"
		    "{\"requestId\":\"b\"},{\"requestId\":\"a\"}]}",
		    "dependsOn[2].requestId" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":[{\"requestId\":\"a\","
		    "\"when\":1}]}", "dependsOn[0].when" },
		{ "{\"requestId\":\"me\",\"taskCode\":\"x\",\"dependsOn\":"
		    "[{\"requestId\":\"me\"}]}", "dependsOn" },
		{ "{\"taskCode\":\"x\",\"releasedBy\":[{\"requestId\":\"a\","
		    "\"state\":\"SUCCESS\"}]}", "releasedBy" },
		{ "{\"taskCode\":\"x\",\"dependsOn\":[{\"requestId\":\"a\"}],"
		    "\"releasedBy\":[{\"requestId\":\"a\",\"state\":"
		    "\"PENDING\"}]}", "releasedBy[0].state" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(decode(bad[i].text, &t, &err) == -1, "%s",
		    bad[i].text);
		ck_assert_str_eq(err.field, bad[i].field);
		task_fini(&t);
	}
	ck_assert_int_eq(decode("{\"taskCode\":\"x\",\"dependsOn\":["
	    "{\"requestId\":\"a\"},{\"requestId\":\"b\",\"condition\":"
	    "\"afternotok\"},{\"requestId\":\"c\",\"condition\":"
	    "\"afterany\"}],\"releasedBy\":[{\"requestId\":\"a\",\"state\":"
	    "\"SUCCESS\"}]}", &t, &err), 0);
	ck_assert_uint_eq(t.depends.n, 3);
	ck_assert_str_eq(t.depends.v[0].id, "a");
	ck_assert_int_eq(t.depends.v[0].cond, DEPEND_AFTEROK);
	ck_assert_int_eq(t.depends.v[1].cond, DEPEND_AFTERNOTOK);
	ck_assert_int_eq(t.depends.v[2].cond, DEPEND_AFTERANY);
	ck_assert_uint_eq(t.released.n, 1);
	ck_assert_int_eq(t.released.v[0].state, DEPEND_PARENT_SUCCESS);
	task_fini(&t);
	{
		const char *s = "{\"taskCode\":\"x\",\"dependsOn\":[{"
		    "\"requestId\":\"p1\",\"condition\":\"afterany\"}],"
		    "\"releasedBy\":[{\"requestId\":\"p1\",\"state\":"
		    "\"CANCELLED\"}]}";

		ck_assert_int_eq(task_roundtrip(s, strlen(s), &err), 0);
	}
}
END_TEST

/* A fan-in of 1,000 parents: decoded, evaluated, round-tripped. */
START_TEST(test_fanin)
{
	struct buf b;
	struct task t;
	struct task_error err;
	enum depend_parent *st;
	size_t which = 99;

	buf_init(&b, 0);
	ck_assert_int_eq(buf_puts(&b, "{\"taskCode\":\"x\",\"dependsOn\":["),
	    0);
	for (int i = 0; i < 1000; i++) {
		char e[64];

		snprintf(e, sizeof(e), "%s{\"requestId\":\"p%04d\"}",
		    i ? "," : "", i);
		ck_assert_int_eq(buf_puts(&b, e), 0);
	}
	ck_assert_int_eq(buf_puts(&b, "]}"), 0);
	task_init(&t);
	ck_assert_int_eq(task_decode(b.data, b.len, &t, &err), 0);
	ck_assert_uint_eq(t.depends.n, 1000);
	ck_assert_str_eq(t.depends.v[999].id, "p0999");
	ck_assert_int_eq(task_roundtrip(b.data, b.len, &err), 0);
	st = calloc(1000, sizeof(*st));
	ck_assert_ptr_nonnull(st);
	for (int i = 0; i < 1000; i++)
		st[i] = DEPEND_PARENT_SUCCESS;
	ck_assert_int_eq(depend_eval(&t.depends, st, NULL), DEPEND_READY);
	st[500] = DEPEND_PARENT_PENDING;
	ck_assert_int_eq(depend_eval(&t.depends, st, &which), DEPEND_WAIT);
	ck_assert_uint_eq(which, 500);
	st[700] = DEPEND_PARENT_FAILED;	/* afterok: never, over waiting */
	ck_assert_int_eq(depend_eval(&t.depends, st, &which), DEPEND_NEVER);
	ck_assert_uint_eq(which, 700);
	free(st);
	task_fini(&t);
	buf_fini(&b);
}
END_TEST

/* The cap: DEPEND_MAX entries decode, one more is refused. */
START_TEST(test_cap)
{
	struct depend_list l;
	struct task_error err;
	json_t *a = json_array();

	for (int i = 0; i <= DEPEND_MAX; i++) {
		char id[16];

		snprintf(id, sizeof(id), "q%d", i);
		json_array_append_new(a, json_pack("{ss}", "requestId", id));
	}
	depend_list_init(&l);
	ck_assert_int_eq(depend_decode(a, "dependsOn", 0, &l, &err), -1);
	ck_assert_str_eq(err.field, "dependsOn");
	json_array_remove(a, 0);
	ck_assert_int_eq(depend_decode(a, "dependsOn", 0, &l, &err), 0);
	ck_assert_uint_eq(l.n, DEPEND_MAX);
	depend_list_fini(&l);
	json_decref(a);
}
END_TEST

static Suite *
depend_suite(void)
{
	Suite *s = suite_create("depend");
	TCase *tc = tcase_create("depend");

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_codec);
	tcase_add_test(tc, test_fanin);
	tcase_add_test(tc, test_cap);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(depend_suite)
