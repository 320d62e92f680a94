/*
 * check_textfile.c — unit tests for daemon/core/textfile.c, the control-byte
 * gate of the line-based text files (issue 10).
 *
 * Hand-made byte strings; lines, columns (1-based) and offsets (0-based)
 * counted by hand next to each case.  Allowed: every byte >= 0x20 but DEL,
 * and tab, LF, CR (POSIX.1 defines a "text file" as lines with no NUL;
 * the other control bytes are what would reach a log or a terminal).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "core/textfile.h"
#include "unit.h"

START_TEST(test_refusals)
{
	static const struct {
		const char *data;
		size_t len;
		const char *why;
	} t[] = {
		/* "a=1" LF is offsets 0-3; "b=" 4-5; NUL offset 6 */
		{ "a=1\nb=\0\n", 8, "f.conf:2:3: raw NUL byte (offset 6;" },
		{ "\0", 1, "f.conf:1:1: raw NUL byte (offset 0;" },
		{ "x\x01y", 3, "f.conf:1:2: control byte 0x01 (offset 1;" },
		{ "\n\n\x1b[0m", 6, "f.conf:3:1: control byte 0x1b (offset 2;" },
		{ "ok\x7f", 3, "f.conf:1:3: control byte 0x7f (offset 2;" },
		{ "v\x0b", 2, "f.conf:1:2: control byte 0x0b (offset 1;" },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_int_eq(textfile_check("f.conf", t[i].data, t[i].len,
		    why, sizeof(why)), -1);
		ck_assert_msg(strncmp(why, t[i].why, strlen(t[i].why)) == 0,
		    "case %zu: \"%s\", want \"%s...\"", i, why, t[i].why);
	}
	/* without a name the reason starts with the line */
	ck_assert_int_eq(textfile_check(NULL, "a\0", 2, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "line 1 column 2: raw NUL byte (offset 1; a "
	    "text file holds no control byte but tab, LF and CR)");
	/* no buffer: still refused */
	ck_assert_int_eq(textfile_check(NULL, "\0", 1, NULL, 0), -1);
}
END_TEST

START_TEST(test_accepted)
{
	static const char ok[] = "# caf\xc3\xa9\r\nkey\t= value\n\n~ !\n";

	ck_assert_int_eq(textfile_check("f", ok, sizeof(ok) - 1, NULL, 0), 0);
	ck_assert_int_eq(textfile_check("f", "", 0, NULL, 0), 0);
}
END_TEST

static Suite *
textfile_suite(void)
{
	Suite *s = suite_create("textfile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_accepted);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(textfile_suite)
