/*
 * unit.c — the shared main() of the unit tests: Check's runner, the
 * scratch directory and its removal.  Contract in unit.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "unit.h"

int
unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int
unit_mkdtemp(char *buf, size_t size, const char *name)
{
	const char *base = getenv("TMPDIR") != NULL ? getenv("TMPDIR") :
	    "/tmp";
	int n;

	n = snprintf(buf, size, "%s/%s.XXXXXX", base, name);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		perror(base);
		return -1;
	}
	if (mkdtemp(buf) == NULL) {
		perror(buf);
		return -1;
	}
	return 0;
}

void
unit_rmtree(const char *dir)
{
	char cmd[1024];
	int n;

	n = snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; "
	    "rm -rf '%s'", dir, dir);
	if (n > 0 && (size_t)n < sizeof(cmd))
		(void)!system(cmd);
}

int
unit_run_in_tmpdir(Suite *(*suite_fn)(void), char *dir, size_t size,
    const char *name)
{
	int rc;

	if (unit_mkdtemp(dir, size, name) != 0)
		return EXIT_FAILURE;
	rc = unit_run(suite_fn());
	unit_rmtree(dir);
	return rc;
}
