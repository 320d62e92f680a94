/*
 * check_batch.c — unit tests for daemon/core/batch.c (README.md,
 * "Batches"): the batch.json codec (members and refusals as batch.h
 * states them, the round trip byte for byte) and the summary of the
 * members' states, on hand-counted cases: 6 members, 2 failing, in
 * readdir order; counts and failed ids sorted; terminal states; the
 * onComplete task's stdin text written out by hand.
 */
#include <string.h>

#include <check.h>

#include "core/batch.h"
#include "unit.h"

/* 2024-06-01T12:00:00.000Z is 1717243200000 ms (date -d ... +%s). */
#define T0	1717243200000LL

START_TEST(test_decode_full)
{
	static const char text[] = "{\"batchId\":\"b1\",\"createdAt\":"
	    "\"2024-06-01T12:00:00.000Z\",\"onComplete\":\"report\","
	    "\"callbackUrl\":\"https://example.com/b\",\"closedAt\":"
	    "\"2024-06-01T12:00:05.000Z\",\"completedAt\":"
	    "\"2024-06-01T12:00:09.500Z\",\"onCompleteRequestId\":"
	    "\"b1.complete\"}\n";
	struct batch b;
	struct task_error err;
	struct buf out;

	ck_assert_int_eq(batch_decode(text, strlen(text), &b, &err), 0);
	ck_assert_str_eq(b.id, "b1");
	ck_assert_int_eq(b.created_ms, T0);
	ck_assert_int_eq(b.closed_ms, T0 + 5000);
	ck_assert_int_eq(b.completed_ms, T0 + 9500);
	ck_assert_str_eq(b.on_complete, "report");
	ck_assert_str_eq(b.callback_url, "https://example.com/b");
	ck_assert_str_eq(b.complete_id, "b1.complete");
	buf_init(&out, 0);
	ck_assert_int_eq(batch_encode(&b, &out), 0);
	ck_assert_int_eq(out.len, strlen(text));
	ck_assert(memcmp(out.data, text, out.len) == 0);
	buf_fini(&out);
}
END_TEST

START_TEST(test_decode_refused)
{
	static const struct {
		const char *text, *field;
	} cases[] = {
		{ "{\"createdAt\":\"2024-06-01T12:00:00Z\"}", "batchId" },
		{ "{\"batchId\":\"b1\"}", "createdAt" },
		{ "{\"batchId\":\"-b\",\"createdAt\":\"2024-06-01T12:00:00Z\"}",
		    "batchId" },
		/* 120 bytes: one more than BATCH_ID_MAX (119). */
		{ "{\"batchId\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaaaaa\",\"createdAt\":"
		  "\"2024-06-01T12:00:00Z\"}",
		    "batchId" },
		{ "{\"batchId\":\"b1\",\"createdAt\":\"2024-06-01T12:00:00Z\","
		  "\"callbackUrl\":\"ftp://x\"}", "callbackUrl" },
		{ "{\"batchId\":\"b1\",\"createdAt\":\"2024-06-01T12:00:00Z\","
		  "\"completedAt\":\"2024-06-01T12:00:00Z\"}", "completedAt" },
		{ "{\"batchId\":\"b1\",\"createdAt\":\"2024-06-01T12:00:00Z\","
		  "\"onCompleteRequestId\":\"b1.complete\"}",
		    "onCompleteRequestId" },
		{ "{\"batchId\":\"b1\",\"createdAt\":\"2024-06-01T12:00:00Z\","
		  "\"colour\":1}", "colour" },
		{ "{\"batchId\":\"b1\",\"batchId\":\"b2\"}", "json" },
		{ "[1]", "json" },
		{ "{\"batchId\":\"b1\",\"createdAt\":\"1969-12-31T23:59:59Z\"}",
		    "createdAt" },
	};
	struct batch b;
	struct task_error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&err, 0, sizeof(err));
		ck_assert_msg(batch_decode(cases[i].text, strlen(cases[i].text),
		    &b, &err) == -1, "case %zu decoded", i);
		ck_assert_msg(strcmp(err.field, cases[i].field) == 0,
		    "case %zu: field %s, want %s (%s)", i, err.field,
		    cases[i].field, err.rule);
		ck_assert_str_eq(b.id, "");
	}
}
END_TEST

START_TEST(test_summary_six)
{
	/* readdir order; m2 and m0 failed, m4 still running. */
	static const char *const ids[] = { "m3", "m2", "m5", "m0", "m1",
	    "m4" };
	static const char *const st[] = { "SUCCESS", "FAILED", "SUCCESS",
	    "FAILED", "SUCCESS", "RUNNING" };
	struct batch b;
	struct batch_summary s;
	struct buf out;

	batch_init(&b);
	strcpy(b.id, "nightly");
	b.created_ms = T0;
	batch_summary_init(&s);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(batch_summary_add(&s, ids[i], st[i]), 0);
	ck_assert_int_eq(s.total, 6);
	ck_assert_int_eq(s.nterminal, 5);
	ck_assert(!batch_summary_done(&s));
	buf_init(&out, 0);
	ck_assert_int_eq(batch_summary_encode(&b, &s, 0, &out), 0);
	ck_assert_str_eq(out.data, "{\"batchId\":\"nightly\",\"total\":6,"
	    "\"counts\":{\"FAILED\":2,\"RUNNING\":1,\"SUCCESS\":3},"
	    "\"failed\":[\"m0\",\"m2\"]}");
	batch_summary_fini(&s);
	/* All six terminal: done; the text the onComplete task reads. */
	batch_summary_init(&s);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(batch_summary_add(&s, ids[i], i == 5 ?
		    "CANCELLED" : st[i]), 0);
	ck_assert(batch_summary_done(&s));
	batch_summary_sort(&s);
	ck_assert_str_eq(s.counts[0].state, "CANCELLED");
	ck_assert_str_eq(s.failed[0], "m0");
	ck_assert_str_eq(s.failed[2], "m4");
	buf_reset(&out);
	ck_assert_int_eq(batch_summary_encode(&b, &s, 0, &out), 0);
	ck_assert_str_eq(out.data, "{\"batchId\":\"nightly\",\"total\":6,"
	    "\"counts\":{\"CANCELLED\":1,\"FAILED\":2,\"SUCCESS\":3},"
	    "\"failed\":[\"m0\",\"m2\",\"m4\"]}");
	buf_fini(&out);
	batch_summary_fini(&s);
}
END_TEST

START_TEST(test_terminal_states)
{
	static const char *const yes[] = { "SUCCESS", "FAILED", "CANCELLED",
	    "CORRUPT", "MISSING" };
	static const char *const no[] = { "PENDING", "DISPATCHED", "RUNNING",
	    "SUBMITTING", "BLOCKED", "HELD", "" };
	struct batch_summary s;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert(batch_state_terminal(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert(!batch_state_terminal(no[i]));
	/* No member: never done (an empty closed batch waits). */
	batch_summary_init(&s);
	ck_assert(!batch_summary_done(&s));
	batch_summary_fini(&s);
}
END_TEST

START_TEST(test_summary_other)
{
	struct batch_summary s;
	char state[16];

	/* 15 distinct states fill the table; the 16th and 17th are OTHER. */
	batch_summary_init(&s);
	for (int i = 0; i < 17; i++) {
		snprintf(state, sizeof(state), "S%02d", i);
		ck_assert_int_eq(batch_summary_add(&s, "x", state), 0);
	}
	ck_assert_int_eq(s.nstates, 16);
	ck_assert_str_eq(s.counts[15].state, "OTHER");
	ck_assert_int_eq(s.counts[15].n, 2);
	ck_assert_int_eq(s.total, 17);
	batch_summary_fini(&s);
}
END_TEST

static Suite *
batch_suite(void)
{
	Suite *s = suite_create("batch");
	TCase *tc = tcase_create("batch");

	tcase_add_test(tc, test_decode_full);
	tcase_add_test(tc, test_decode_refused);
	tcase_add_test(tc, test_summary_six);
	tcase_add_test(tc, test_terminal_states);
	tcase_add_test(tc, test_summary_other);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(batch_suite)
