/*
 * check_jsontext.c — unit tests for daemon/core/jsontext.c, the RFC 8259 byte
 * gate in front of every JSON parse (issue 10).
 *
 * Every input is a hand-made byte string; every offset is counted by
 * hand from the start (0-based) and written next to the case.  The rules
 * come from RFC 8259: §2 allows only space, tab, LF and CR between tokens;
 * §7 requires U+0000..U+001F inside a string to be escaped; §8.1 makes
 * JSON text UTF-8, so no byte >= 0x80 stands outside a string.
 */
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "core/jsontext.h"
#include "unit.h"

static const struct refusal {
	const char *name;
	const char *data;
	size_t len;
	size_t offset;
	const char *why;	/* the start of the reason */
} refusals[] = {
	/* "[1" then NUL: offset 2 */
	{ "NUL after a number", "[1\0]", 4, 2,
	    "raw NUL byte at offset 2 outside a string (RFC 8259 §2" },
	/* "[true" is 5 bytes */
	{ "NUL after a literal", "[true\0]", 7, 5,
	    "raw NUL byte at offset 5 outside a string" },
	{ "NUL after null", "{\"a\":null\0}", 11, 9,
	    "raw NUL byte at offset 9 outside a string" },
	/* {"a":"b" is 8 bytes */
	{ "NUL after a string", "{\"a\":\"b\"\0}", 10, 8,
	    "raw NUL byte at offset 8 outside a string" },
	/* {"a":"b is 7 bytes */
	{ "NUL inside a string", "{\"a\":\"b\0c\"}", 11, 7,
	    "raw NUL byte at offset 7 inside a string (RFC 8259 §7" },
	{ "NUL after }", "{}\0", 3, 2,
	    "raw NUL byte at offset 2 outside a string" },
	{ "NUL after ,", "[1,\0 2]", 7, 3,
	    "raw NUL byte at offset 3 outside a string" },
	{ "NUL first", "\0{}", 3, 0, "raw NUL byte at offset 0" },
	/* an escaped quote does not end the string: ["a\"b" is 7 bytes */
	{ "NUL after an escaped quote", "[\"a\\\"b\"\0]", 9, 7,
	    "raw NUL byte at offset 7 outside a string" },
	{ "control 0x01 in a string", "[\"a\x01\"]", 5, 3,
	    "raw control byte 0x01 at offset 3 inside a string" },
	{ "control 0x1f in a string", "[\"\x1f\"]", 4, 2,
	    "raw control byte 0x1f at offset 2 inside a string" },
	{ "raw LF in a string", "[\"a\nb\"]", 6, 3,
	    "raw control byte 0x0a at offset 3 inside a string" },
	{ "raw tab in a string", "[\"\t\"]", 4, 2,
	    "raw control byte 0x09 at offset 2 inside a string" },
	/* a backslash then a raw control byte: the byte is in the string */
	{ "control after a backslash", "[\"\\\x01\"]", 5, 3,
	    "raw control byte 0x01 at offset 3 inside a string" },
	{ "vertical tab between tokens", "[1,\x0b" "2]", 5, 3,
	    "control byte 0x0b at offset 3 outside a string" },
	{ "form feed between tokens", "\x0c{}", 3, 0,
	    "control byte 0x0c at offset 0 outside a string" },
	{ "DEL between tokens", "[1]\x7f", 4, 3,
	    "control byte 0x7f at offset 3 outside a string" },
	{ "NBSP between tokens", "[1]\xc2\xa0", 5, 3,
	    "non-ASCII byte 0xc2 at offset 3 outside a string" },
};

START_TEST(test_refusals)
{
	const struct refusal *r = &refusals[_i];
	char why[JSONTEXT_WHY_MAX];
	size_t at = 999;

	ck_assert_msg(jsontext_check(r->data, r->len, &at, why,
	    sizeof(why)) == -1, "%s: accepted", r->name);
	ck_assert_msg(at == r->offset, "%s: offset %zu, want %zu", r->name,
	    at, r->offset);
	ck_assert_msg(strncmp(why, r->why, strlen(r->why)) == 0,
	    "%s: \"%s\", want \"%s...\"", r->name, why, r->why);
	/* the wrapper refuses too, before jansson sees the bytes */
	{
		json_error_t e;

		ck_assert_ptr_null(jsontext_loadb(r->data, r->len,
		    JSON_DECODE_ANY, &e));
		ck_assert_str_eq(e.source, JSONTEXT_SOURCE);
		ck_assert_int_eq(e.position, (int)r->offset);
		ck_assert_str_eq(e.text, why);
		ck_assert_int_eq(json_error_code(&e),
		    json_error_invalid_syntax);
	}
}
END_TEST

/* Valid JSON texts that must pass the gate byte for byte. */
START_TEST(test_accepted)
{
	static const struct { const char *data; size_t len; } ok[] = {
		{ "{}", 2 },
		{ " \t\r\n[1e10, -0.5, true, false, null]\r\n", 37 },
		{ "{\"a\":\"\\u0000\"}", 14 },	/* an escape, not a raw NUL */
		{ "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", 20 },
		{ "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]", 18 },
		{ "[\"\x7f\"]", 5 },	/* DEL is no control character */
		{ "123456789012345678901234567890", 30 },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		size_t at = 0;

		ck_assert_uint_eq(strlen(ok[i].data), ok[i].len);
		ck_assert_msg(jsontext_check(ok[i].data, ok[i].len, &at, NULL,
		    0) == 0, "case %zu refused at %zu", i, at);
	}
	ck_assert_int_eq(jsontext_check("", 0, NULL, NULL, 0), 0);
}
END_TEST

/* Where a refused byte stands: 1-based line and column, as jansson. */
START_TEST(test_line_column)
{
	/* "{" LF then "a":1 — offsets 0 '{', 1 LF, 2..6 "a":1, 7 NUL */
	static const char d[] = "{\n\"a\":1\0}";
	json_error_t e;

	ck_assert_ptr_null(jsontext_loadb(d, sizeof(d) - 1, 0, &e));
	ck_assert_int_eq(e.line, 2);
	ck_assert_int_eq(e.column, 6);
	ck_assert_int_eq(e.position, 7);
	/* NULL error: still refused, nothing written */
	ck_assert_ptr_null(jsontext_loadb(d, sizeof(d) - 1, 0, NULL));
}
END_TEST

/* Past the gate, the parser's own errors and values are jansson's. */
START_TEST(test_passes_to_jansson)
{
	json_error_t e;
	json_t *v = jsontext_loadb("{\"a\":[1,2]}", 11, 0, &e);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(json_array_size(json_object_get(v, "a")), 2);
	json_decref(v);
	ck_assert_ptr_null(jsontext_loadb("{x}", 3, 0, &e));
	ck_assert_str_ne(e.source, JSONTEXT_SOURCE);
	/* ["a\u0000"]: valid JSON that jansson refuses without its flag;
	 * the reason names the rule, the error code stays jansson's */
	ck_assert_ptr_null(jsontext_loadb("[\"a\\u0000\"]", 11, 0, &e));
	ck_assert_int_eq(json_error_code(&e), json_error_null_character);
	ck_assert_str_eq(e.text, "\\u0000 in a string: valid JSON (RFC 8259 "
	    "§7), refused here (a limit RFC 8259 §9 allows)");
}
END_TEST

static Suite *
jsontext_suite(void)
{
	Suite *s = suite_create("jsontext");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_refusals, 0,
	    (int)(sizeof(refusals) / sizeof(refusals[0])));
	tcase_add_test(tc, test_accepted);
	tcase_add_test(tc, test_line_column);
	tcase_add_test(tc, test_passes_to_jansson);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(jsontext_suite)
