/*
 * apivectors.h — for unit tests: load $TESTDATA/api-vectors.json (the
 * shared vectors of API.md §10; TESTDATA defaults to tests/data).
 * Returns a new reference; the test fails when the file does not load.
 */
#ifndef TASKSPOOL_TEST_APIVECTORS_H
#define TASKSPOOL_TEST_APIVECTORS_H

#include <stdio.h>
#include <stdlib.h>

#include <check.h>
#include <jansson.h>

static json_t *
api_vectors(void)
{
	const char *dir = getenv("TESTDATA");
	char path[4096];
	json_error_t jerr;
	json_t *v;

	if (dir == NULL || dir[0] == '\0')
		dir = "tests/data";
	snprintf(path, sizeof(path), "%s/api-vectors.json", dir);
	v = json_load_file(path, 0, &jerr);
	ck_assert_msg(v != NULL, "%s: %s", path, jerr.text);
	return v;
}

#endif
