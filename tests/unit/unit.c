/*
 * unit.c — the shared main() of the unit tests: Check's runner, the
 * scratch directory and its removal.  Contract in unit.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* "<parent>/<name>.XXXXXX" into buf; 0, or -1 when it does not fit. */
static int
template(char *buf, size_t size, const char *parent, const char *name)
{
	int n;

	if (parent == NULL)
		parent = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
	n = snprintf(buf, size, "%s/%s.XXXXXX", parent, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int
unit_mkdtemp(char *buf, size_t size, const char *name)
{
	if (template(buf, size, NULL, name) != 0) {
		errno = ENAMETOOLONG;
		perror(name);
		return -1;
	}
	if (mkdtemp(buf) == NULL) {
		perror(buf);
		return -1;
	}
	return 0;
}

void
unit_case_mkdtemp(char *buf, size_t size, const char *parent,
    const char *name)
{
	ck_assert_msg(template(buf, size, parent, name) == 0,
	    "%s/%s.XXXXXX: longer than %zu bytes", parent != NULL ? parent :
	    "$TMPDIR", name, size);
	ck_assert_msg(mkdtemp(buf) != NULL, "mkdtemp %s: %s", buf,
	    strerror(errno));
}

char *
unit_fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, f);
	ck_assert(vasprintf(&s, f, ap) >= 0);
	va_end(ap);
	return s;
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
