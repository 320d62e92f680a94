/*
 * check_tags.c — unit tests for daemon/core/tags.c.
 *
 * Expectations from tags.h and README.md ("Node tags"): a node takes a
 * task only when it has every tag the task requires; a name is
 * [A-Za-z0-9][A-Za-z0-9_.-]{0,63}; a list holds at most 32 names; the
 * configuration's list is sorted, white space around names dropped; a
 * heartbeat's list that is not well-formed is refused.  Every row's
 * answer is worked out by hand in its comment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/tags.h"
#include "unit.h"

/* Which node sets satisfy which requirements. */
START_TEST(test_has_all_table)
{
	static const struct {
		const char *have, *need;
		int want;
	} cases[] = {
		{ "", "", 1 },			/* nothing needed */
		{ "", NULL, 1 },		/* NULL: nothing needed */
		{ "gpu", NULL, 1 },
		{ "", "gpu", 0 },		/* a node without tags */
		{ "gpu", "gpu", 1 },
		{ "gpu,ssd", "gpu", 1 },	/* more than needed is fine */
		{ "gpu,ssd", "ssd", 1 },
		{ "gpu,ssd", "gpu,ssd", 1 },
		{ "gpu,ssd", "ssd,gpu", 1 },	/* order does not matter */
		{ "gpu", "gpu,ssd", 0 },	/* ssd missing */
		{ "ssd", "gpu,ssd", 0 },	/* gpu missing */
		{ "big,gpu,ssd", "ssd,big", 1 },
		/* names are whole: a prefix or a longer name is another */
		{ "gpu2", "gpu", 0 },
		{ "gp", "gpu", 0 },
		{ "gpu", "gpu2", 0 },
		{ "a.gpu,gpu-b", "gpu", 0 },
		/* case matters */
		{ "GPU", "gpu", 0 },
		/* the last and the first names of a list count */
		{ "a,b,c,d", "d", 1 },
		{ "a,b,c,d", "a", 1 },
		{ "a,b,c,d", "a,d,c,b", 1 },
		{ "a,b,c,d", "a,d,e", 0 },	/* e missing */
		/* an unsorted node list (tags_has_all does not need it
		 * sorted) */
		{ "ssd,gpu", "gpu", 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(tags_has_all(cases[i].have, cases[i].need) ==
		    cases[i].want, "row %zu: tags_has_all(\"%s\", \"%s\") != %d",
		    i, cases[i].have, cases[i].need != NULL ? cases[i].need :
		    "(null)", cases[i].want);
	/* a task of three nodes n1 = gpu, n2 = none, n3 = gpu,ssd:
	 * requireTags [gpu] -> n1, n3; [ssd] -> n3; [gpu,ssd] -> n3;
	 * [] -> all three; [fpga] -> none */
	{
		static const char *const nodes[] = { "gpu", "", "gpu,ssd" };
		static const struct {
			const char *need;
			const char *takers;	/* "1" = the node may */
		} reqs[] = {
			{ "gpu", "101" }, { "ssd", "001" },
			{ "gpu,ssd", "001" }, { "", "111" }, { "fpga", "000" },
		};

		for (size_t r = 0; r < sizeof(reqs) / sizeof(reqs[0]); r++)
			for (size_t k = 0; k < 3; k++)
				ck_assert_msg(tags_has_all(nodes[k],
				    reqs[r].need) == (reqs[r].takers[k] == '1'),
				    "need \"%s\", node %zu", reqs[r].need, k + 1);
	}
}
END_TEST

START_TEST(test_name_ok)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
		{ "gpu", 1 }, { "G", 1 }, { "9", 1 }, { "a.b-c_d", 1 },
		{ "", 0 }, { ".a", 0 }, { "-a", 0 }, { "_a", 0 },
		{ "a b", 0 }, { "a,b", 0 }, { "a/b", 0 }, { "a:b", 0 },
		{ "\xc3\xa9", 0 },	/* é: not ASCII */
		/* 64 bytes pass, 65 do not */
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    1 },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(tags_name_ok(cases[i].s, strlen(cases[i].s)) ==
		    cases[i].want, "tags_name_ok(\"%s\")", cases[i].s);
	/* the length counts, not the NUL: "gpu" of "gpux" */
	ck_assert_int_eq(tags_name_ok("gpux", 3), 1);
	ck_assert_int_eq(tags_name_ok("gpu\0x", 5), 0);
}
END_TEST

START_TEST(test_parse_config)
{
	static const struct {
		const char *value;
		const char *want;	/* the list, or NULL: refused */
		const char *why;	/* part of the reason when refused */
	} cases[] = {
		{ "", "", NULL },
		{ "gpu", "gpu", NULL },
		{ "ssd,gpu", "gpu,ssd", NULL },		/* sorted */
		{ "ssd, gpu ,\tbig", "big,gpu,ssd", NULL },	/* spaces */
		{ "  ", "", NULL },
		{ "B,a,A,b", "A,B,a,b", NULL },		/* strcmp order */
		{ "gpu,", NULL, "empty name" },
		{ ",gpu", NULL, "empty name" },
		{ "gpu,,ssd", NULL, "empty name" },
		{ "gpu, ,ssd", NULL, "empty name" },
		{ "gpu,gpu", NULL, "\"gpu\" given twice" },
		{ "g pu", NULL, "does not match" },
		{ "gpu;ssd", NULL, "does not match" },
		{ "-gpu", NULL, "does not match" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    NULL, "longer than 64 bytes" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[TAGS_TEXT_MAX], why[256] = "";
		int rc = tags_parse_config(cases[i].value, out, sizeof(out),
		    why, sizeof(why));

		if (cases[i].want != NULL) {
			ck_assert_msg(rc == 0, "\"%s\" refused: %s",
			    cases[i].value, why);
			ck_assert_str_eq(out, cases[i].want);
			ck_assert_int_eq(tags_list_ok(out), 1);
		} else {
			ck_assert_msg(rc == -1, "\"%s\" accepted",
			    cases[i].value);
			ck_assert_msg(strncmp(why, "tags: ", 6) == 0 &&
			    strstr(why, cases[i].why) != NULL,
			    "\"%s\": why \"%s\"", cases[i].value, why);
			ck_assert_str_eq(out, "");
		}
	}
	/* 32 names pass, 33 do not */
	{
		char v[512] = "", out[TAGS_TEXT_MAX], why[256];

		for (int i = 1; i <= 32; i++)
			snprintf(v + strlen(v), sizeof(v) - strlen(v), "%st%d",
			    i > 1 ? "," : "", i);
		ck_assert_int_eq(tags_parse_config(v, out, sizeof(out), why,
		    sizeof(why)), 0);
		strcat(v, ",t33");
		ck_assert_int_eq(tags_parse_config(v, out, sizeof(out), why,
		    sizeof(why)), -1);
		ck_assert_ptr_nonnull(strstr(why, "more than 32 names"));
	}
	/* an out buffer too small is refused, not overrun */
	{
		char out[4], why[256];

		ck_assert_int_eq(tags_parse_config("gpu,ssd", out, sizeof(out),
		    why, sizeof(why)), -1);
		ck_assert_str_eq(out, "");
	}
}
END_TEST

/* A heartbeat's list is another node's bytes: only a well-formed one. */
START_TEST(test_list_ok)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
		{ "", 1 }, { "gpu", 1 }, { "gpu,ssd", 1 }, { "ssd,gpu", 1 },
		{ ",", 0 }, { "gpu,", 0 }, { ",gpu", 0 }, { "gpu,,ssd", 0 },
		{ "gpu,gpu", 0 }, { "a,b,a", 0 }, { "gpu ssd", 0 },
		{ "gpu\x1b[2J", 0 },	/* a terminal escape */
		{ "*", 0 },
	};
	char big[TAGS_TEXT_MAX + 8] = "";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(tags_list_ok(cases[i].s) == cases[i].want,
		    "tags_list_ok(\"%s\")", cases[i].s);
	for (int i = 1; i <= 33; i++)		/* 33 names */
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "%st%d",
		    i > 1 ? "," : "", i);
	ck_assert_int_eq(tags_list_ok(big), 0);
	*strrchr(big, ',') = '\0';		/* 32 */
	ck_assert_int_eq(tags_list_ok(big), 1);
}
END_TEST

START_TEST(test_route)
{
	char *route = strdup("tag:gpu"), *tags = NULL;
	struct task_error err;

	ck_assert_int_eq(tags_route_ok("tag:gpu"), 1);
	ck_assert_int_eq(tags_route_ok("tag:"), 0);
	ck_assert_int_eq(tags_route_ok("tag:a,b"), 0);
	ck_assert_int_eq(tags_route_ok("tags:gpu"), 0);
	ck_assert_int_eq(tags_route_ok("node:gpu"), 0);
	ck_assert_int_eq(tags_route_ok(NULL), 0);
	/* tag:gpu alone: requireTags [gpu], route any */
	ck_assert_int_eq(tags_route_fold(&route, &tags, &err), 0);
	ck_assert_ptr_null(route);
	ck_assert_str_eq(tags, "gpu");
	/* added after what is there, once */
	route = strdup("tag:ssd");
	ck_assert_int_eq(tags_route_fold(&route, &tags, &err), 0);
	ck_assert_str_eq(tags, "gpu,ssd");
	route = strdup("tag:gpu");
	ck_assert_int_eq(tags_route_fold(&route, &tags, &err), 0);
	ck_assert_ptr_null(route);
	ck_assert_str_eq(tags, "gpu,ssd");
	/* other routes are left alone */
	route = strdup("round_robin");
	ck_assert_int_eq(tags_route_fold(&route, &tags, &err), 0);
	ck_assert_str_eq(route, "round_robin");
	ck_assert_str_eq(tags, "gpu,ssd");
	free(route);
	route = NULL;
	ck_assert_int_eq(tags_route_fold(&route, &tags, &err), 0);
	free(tags);
}
END_TEST

START_TEST(test_json)
{
	json_t *a = json_pack("[sss]", "b", "a", "c"), *e;
	char *out = NULL, *s;
	struct task_error err;

	ck_assert_int_eq(tags_json_decode(a, "requireTags", &out, &err), 0);
	ck_assert_str_eq(out, "b,a,c");		/* the file's order */
	e = tags_json(out);
	s = json_dumps(e, JSON_COMPACT);
	ck_assert_str_eq(s, "[\"b\",\"a\",\"c\"]");
	free(s);
	json_decref(e);
	json_decref(a);
	/* a refusal leaves *out as it was */
	a = json_pack("[ss]", "x", "x");
	ck_assert_int_eq(tags_json_decode(a, "requireTags", &out, &err), -1);
	ck_assert_str_eq(err.field, "requireTags[1]");
	ck_assert_str_eq(out, "b,a,c");
	json_decref(a);
	/* \u0000 inside a name is refused */
	a = json_array();
	json_array_append_new(a, json_stringn("gp\0u", 4));
	ck_assert_int_eq(tags_json_decode(a, "requireTags", &out, &err), -1);
	ck_assert_str_eq(err.field, "requireTags[0]");
	json_decref(a);
	/* [] is nothing required */
	a = json_array();
	ck_assert_int_eq(tags_json_decode(a, "requireTags", &out, &err), 0);
	ck_assert_ptr_null(out);
	json_decref(a);
	e = tags_json("");
	ck_assert_uint_eq(json_array_size(e), 0);
	json_decref(e);
}
END_TEST

static Suite *
tags_suite(void)
{
	Suite *s = suite_create("tags");
	TCase *tc = tcase_create("tags");

	tcase_add_test(tc, test_has_all_table);
	tcase_add_test(tc, test_name_ok);
	tcase_add_test(tc, test_parse_config);
	tcase_add_test(tc, test_list_ok);
	tcase_add_test(tc, test_route);
	tcase_add_test(tc, test_json);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(tags_suite)
