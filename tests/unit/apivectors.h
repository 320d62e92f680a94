/*
 * apivectors.h — for unit tests: load $TESTDATA/api-vectors.json (the
 * shared vectors of API.md §10; TESTDATA unset or empty: tests/data).
 * api_vectors() is for a test case (a new reference: json_decref it);
 * API_VECTORS_MAIN for a test whose cases share one loaded copy.
 */
#ifndef TASKSPOOL_TEST_APIVECTORS_H
#define TASKSPOOL_TEST_APIVECTORS_H

#include <stdio.h>
#include <stdlib.h>

#include <check.h>
#include <jansson.h>

#include "unit.h"

/* A why buffer for api_vectors_load: the path, ": ", jansson's text. */
#define API_VECTORS_WHY_LEN (4096 + 2 + JSON_ERROR_TEXT_LENGTH)

/*
 * Returns the vectors, or NULL with "path: jansson's reason" in why
 * (whylen bytes, API_VECTORS_WHY_LEN for the whole text).
 */
static inline json_t *
api_vectors_load(char *why, size_t whylen)
{
	const char *dir = getenv("TESTDATA");
	char path[4096];
	json_error_t jerr;
	json_t *v;

	if (dir == NULL || dir[0] == '\0')
		dir = "tests/data";
	snprintf(path, sizeof(path), "%s/api-vectors.json", dir);
	if ((v = json_load_file(path, 0, &jerr)) == NULL)
		snprintf(why, whylen, "%s: %s", path, jerr.text);
	return v;
}

/* Returns the vectors; the running test fails when they do not load. */
static inline json_t *
api_vectors(void)
{
	char why[API_VECTORS_WHY_LEN];
	json_t *v = api_vectors_load(why, sizeof(why));

	ck_assert_msg(v != NULL, "%s", why);
	return v;
}

/*
 * Load the vectors into *vectors, run suite_fn()'s suite (unit_run),
 * free them.  Returns unit_run's exit status, or EXIT_FAILURE after
 * printing why the file does not load.
 */
static inline int
api_vectors_run(Suite *(*suite_fn)(void), json_t **vectors)
{
	char why[API_VECTORS_WHY_LEN];
	int rc;

	if ((*vectors = api_vectors_load(why, sizeof(why))) == NULL) {
		fprintf(stderr, "%s\n", why);
		return EXIT_FAILURE;
	}
	rc = unit_run(suite_fn());
	json_decref(*vectors);
	*vectors = NULL;
	return rc;
}

/* The whole main() of a test whose cases read the static json_t *vectors. */
#define API_VECTORS_MAIN(suite_fn, vectors)				\
	int main(void) { return api_vectors_run(suite_fn, &(vectors)); }

#endif
