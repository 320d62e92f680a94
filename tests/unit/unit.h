/*
 * unit.h — the main() every unit test shares (tests/unit/check_*.c).
 *
 * Each check_<module>.c builds its Suite and ends with CHECK_MAIN(suite_fn)
 * or, when its cases need a scratch directory, CHECK_MAIN_TMPDIR(suite_fn,
 * dir, name); a test with more set-up (a server, test vectors) calls
 * unit_run() and the directory helpers from its own main().  unit.c is
 * linked into every unit binary (the Makefile's $(BUILD)/tests/% rule).
 *
 * The runner is Check's own (srunner_run_all with CK_NORMAL, as each
 * main() had it), so Check reads its environment as before: CK_FORK,
 * CK_RUN_SUITE, CK_RUN_CASE, CK_INCLUDE_TAGS, CK_EXCLUDE_TAGS,
 * CK_DEFAULT_TIMEOUT, CK_TIMEOUT_MULTIPLIER (the Check manual, "Selective
 * Running", "No Fork Mode", "Test Timeouts"); CK_VERBOSITY is not read,
 * the print mode being CK_NORMAL and not CK_ENV.
 * Exit status: EXIT_SUCCESS when no test failed, EXIT_FAILURE otherwise
 * (also when the scratch directory cannot be made).
 */
#ifndef TASKSPOOL_TEST_UNIT_H
#define TASKSPOOL_TEST_UNIT_H

#include <stddef.h>

#include <check.h>

/*
 * Run every case of s (steals s: the runner frees it).  Returns
 * EXIT_SUCCESS when none failed, else EXIT_FAILURE.
 */
int unit_run(Suite *s);

/*
 * Make a fresh directory "$TMPDIR/<name>.XXXXXX" (TMPDIR unset: /tmp)
 * with mkdtemp(3) and write its path into buf (size bytes, 128 are
 * enough for the usual TMPDIR).  Returns 0, or -1 after printing the
 * reason (perror) when the name does not fit or mkdtemp fails.
 */
int unit_mkdtemp(char *buf, size_t size, const char *name);

/*
 * For a fixture's setup or a test case: make "<parent>/<name>.XXXXXX"
 * (parent NULL: $TMPDIR, else /tmp) with mkdtemp(3) into buf (size
 * bytes).  The running test fails (ck_assert) when the path does not fit
 * or mkdtemp fails.
 */
void unit_case_mkdtemp(char *buf, size_t size, const char *parent,
    const char *name);

/*
 * A new string from printf(3) arguments (vasprintf), for building a
 * test's input; the caller frees it.  The running test fails when it
 * cannot be made.
 */
char *unit_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

/*
 * Remove dir and everything below it, giving the owner rwx first so a
 * test's read-only or unsearchable directories go too (chmod -R u+rwx,
 * rm -rf).  Errors are ignored: it is the clean-up of a scratch directory.
 */
void unit_rmtree(const char *dir);

/*
 * unit_mkdtemp(dir, size, name), then unit_run(suite_fn()) (the suite is
 * built after the directory exists), then unit_rmtree(dir).  Returns what
 * unit_run returns, or EXIT_FAILURE when the directory cannot be made.
 */
int unit_run_in_tmpdir(Suite *(*suite_fn)(void), char *dir, size_t size,
    const char *name);

/* The whole main() of a unit test whose suite needs nothing else. */
#define CHECK_MAIN(suite_fn)						\
	int main(void) { return unit_run(suite_fn()); }

/*
 * The whole main() of a unit test whose cases work below dir (a char
 * array the test declares; its cases read the path from it).
 */
#define CHECK_MAIN_TMPDIR(suite_fn, dir, name)				\
	int main(void) {						\
		return unit_run_in_tmpdir(suite_fn, dir, sizeof(dir), name); \
	}

#endif
