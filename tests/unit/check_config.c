/*
 * check_config.c — unit tests for daemon/spool/config.c.
 *
 * Defaults are the literal values documented in config.c's key table
 * (and DESIGN.md §3: heartbeat 5 s); the file format is config.h's:
 * "key = value", '#' comments at line start or after white space, blank
 * lines ignored, values trimmed; errors name FILE:LINE and the key.
 * Files are written into a fresh mkdtemp directory per test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "spool/config.h"
#include "spool/spool.h"
#include "unit.h"

#define WHY_LEN 1024

/*
 * Every test's directory is made inside basedir, which main() creates
 * and removes: Check skips the teardown of a failed test.
 */
static char basedir[128];
static char tmpdir[256];

static void
setup(void)
{
	unit_case_mkdtemp(tmpdir, sizeof(tmpdir), basedir, "t");
}

static void
teardown(void)
{
	unit_rmtree(tmpdir);
}

/* Write text to <tmpdir>/name; path receives the full path. */
static void
write_file(const char *name, const char *text, char *path, size_t len)
{
	FILE *fp;

	snprintf(path, len, "%s/%s", tmpdir, name);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fputs(text, fp) >= 0, 1);
	ck_assert_int_eq(fclose(fp), 0);
}

static void
config_eq(const struct config *a, const struct config *b)
{
	ck_assert_str_eq(a->spool, b->spool);
	ck_assert_str_eq(a->hooks_dir, b->hooks_dir);
	ck_assert_str_eq(a->node_id, b->node_id);
	ck_assert_str_eq(a->log_level, b->log_level);
	ck_assert_int_eq(a->slots, b->slots);
	ck_assert_int_eq(a->max_retries, b->max_retries);
	ck_assert_int_eq(a->timeout_sec, b->timeout_sec);
	ck_assert_int_eq(a->kill_grace_ms, b->kill_grace_ms);
	ck_assert_int_eq(a->retry_base_ms, b->retry_base_ms);
	ck_assert_int_eq(a->retry_max_ms, b->retry_max_ms);
	ck_assert_int_eq(a->retry_jitter_pct, b->retry_jitter_pct);
	ck_assert_int_eq(a->scan_interval_ms, b->scan_interval_ms);
	ck_assert_int_eq(a->settle_ms, b->settle_ms);
	ck_assert_int_eq(a->heartbeat_ms, b->heartbeat_ms);
	ck_assert_int_eq(a->reap_interval_ms, b->reap_interval_ms);
	ck_assert_int_eq(a->log_cap_bytes, b->log_cap_bytes);
	ck_assert_int_eq(a->tail_bytes, b->tail_bytes);
	ck_assert_int_eq(a->result_max_bytes, b->result_max_bytes);
	ck_assert_int_eq(a->fsync, b->fsync);
}

START_TEST(test_defaults)
{
	struct config c;

	memset(&c, 0x5a, sizeof(c));	/* defaults overwrite everything */
	config_defaults(&c);
	ck_assert_str_eq(c.spool, "/var/spool/taskspool");
	ck_assert_str_eq(c.hooks_dir, "");	/* = <spool>/hooks */
	ck_assert_str_eq(c.node_id, "");	/* = host name */
	ck_assert_str_eq(c.log_level, "info");
	ck_assert_int_eq(c.slots, 0);		/* = CPUs after finish */
	ck_assert_int_eq(c.max_retries, 3);
	ck_assert_int_eq(c.timeout_sec, 3600);
	ck_assert_int_eq(c.kill_grace_ms, 5000);
	ck_assert_int_eq(c.retry_base_ms, 1000);
	ck_assert_int_eq(c.retry_max_ms, 600000);
	ck_assert_int_eq(c.retry_jitter_pct, 20);
	ck_assert_int_eq(c.scan_interval_ms, 5000);
	ck_assert_int_eq(c.settle_ms, 2000);
	ck_assert_int_eq(c.heartbeat_ms, 5000);
	ck_assert_int_eq(c.priority_aging_sec, 60);	/* the issue: 60 s */
	ck_assert_int_eq(c.reap_interval_ms, 1000);
	ck_assert_int_eq(c.log_cap_bytes, 1048576);
	ck_assert_int_eq(c.tail_bytes, 4096);
	ck_assert_int_eq(c.result_max_bytes, 1048576);
	ck_assert_int_eq(c.fsync, 1);
	ck_assert_str_eq(c.source, "");		/* no file loaded */
	ck_assert_str_eq(c.tags, "");		/* no tags */
}
END_TEST

START_TEST(test_finish)
{
	struct config c;
	char why[WHY_LEN] = "";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	config_defaults(&c);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), 0);
	ck_assert_int_eq(c.slots, cpus > 0 ? cpus : 1);
	ck_assert_int_gt(c.slots, 0);
	ck_assert_str_eq(c.hooks_dir, "/var/spool/taskspool/hooks");
	ck_assert_msg(spool_code_ok(c.node_id), "node_id \"%s\"", c.node_id);

	/* explicit values are kept */
	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "slots", "3", why, sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "hooks_dir", "/opt/h", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "node_id", "n-7", why, sizeof(why)),
	    0);
	ck_assert_int_eq(config_set(&c, "spool", "/srv/s", why, sizeof(why)),
	    0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), 0);
	ck_assert_int_eq(c.slots, 3);
	ck_assert_str_eq(c.hooks_dir, "/opt/h");
	ck_assert_str_eq(c.node_id, "n-7");

	/* hooks_dir follows the spool */
	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "spool", "/srv/s", why, sizeof(why)),
	    0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), 0);
	ck_assert_str_eq(c.hooks_dir, "/srv/s/hooks");

	/* bad node id and log level are errors naming the key */
	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "node_id", "bad/id", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "node_id"));
	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "log_level", "loud", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "log_level"));
}
END_TEST

/* tags (README "Node tags"): a list of names, sorted by config_finish;
 * anything else refused at load with a reason naming tags, FILE:LINE. */
START_TEST(test_tags)
{
	static const struct {
		const char *value;
		const char *want;	/* NULL: refused */
	} cases[] = {
		{ "", "" },
		{ "gpu", "gpu" },
		{ "ssd,gpu", "gpu,ssd" },
		{ "ssd , gpu", "gpu,ssd" },
		{ "gpu,,ssd", NULL },
		{ "gpu,gpu", NULL },
		{ "gpu ssd", NULL },
		{ "gpu/x", NULL },
		{ "gpu,", NULL },
		{ "t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11,t12,t13,t14,t15,t16,t17,"
		    "t18,t19,t20,t21,t22,t23,t24,t25,t26,t27,t28,t29,t30,t31,"
		    "t32", "t1,t10,t11,t12,t13,t14,t15,t16,t17,t18,t19,t2,t20,"
		    "t21,t22,t23,t24,t25,t26,t27,t28,t29,t3,t30,t31,t32,t4,t5,"
		    "t6,t7,t8,t9" },
		{ "t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11,t12,t13,t14,t15,t16,t17,"
		    "t18,t19,t20,t21,t22,t23,t24,t25,t26,t27,t28,t29,t30,t31,"
		    "t32,t33", NULL },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaa", NULL },		/* 65 bytes */
	};
	char why[WHY_LEN], path[512], *text;
	struct config c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		config_defaults(&c);
		ck_assert_int_eq(config_set(&c, "tags", cases[i].value, why,
		    sizeof(why)), 0);
		if (cases[i].want != NULL) {
			ck_assert_msg(config_finish(&c, why, sizeof(why)) == 0,
			    "\"%s\": %s", cases[i].value, why);
			ck_assert_str_eq(c.tags, cases[i].want);
		} else {
			ck_assert_msg(config_finish(&c, why, sizeof(why)) ==
			    -1, "\"%s\" accepted", cases[i].value);
			ck_assert_msg(strncmp(why, "tags: ", 6) == 0, "%s",
			    why);
		}
	}
	/* the default: none */
	config_defaults(&c);
	ck_assert_str_eq(c.tags, "");
	/* from a file: the reason names the file, the line and the key */
	text = unit_fmt("slots = 2\ntags = gpu, gpu\n");
	write_file("t.conf", text, path, sizeof(path));
	free(text);
	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, path, why, sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "t.conf:2: tags: \"gpu\" given twice") !=
	    NULL, "%s", why);
	write_file("t.conf", "tags = ssd,gpu\n", path, sizeof(path));
	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, path, why, sizeof(why)), 0);
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), 0);
	ck_assert_str_eq(c.tags, "gpu,ssd");
	/* finishing again keeps it (SIGHUP, -n) */
	ck_assert_int_eq(config_finish(&c, why, sizeof(why)), 0);
	ck_assert_str_eq(c.tags, "gpu,ssd");
}
END_TEST

/* max_concurrent_per_key (README "Per-key concurrency"): the grammar of
 * max_concurrent, refused with a reason naming this key. */
START_TEST(test_max_per_key)
{
	static const struct {
		const char *value;
		int ok;
	} cases[] = {
		{ "", 1 },
		{ "mail=2", 1 },
		{ "mail=2,fax=4096", 1 },
		{ "mail=0", 0 },		/* N >= 1 */
		{ "mail=4097", 0 },		/* N <= 4096 */
		{ "mail", 0 },
		{ "mail=2,mail=3", 0 },		/* twice */
		{ "mail=2,", 0 },
		{ "m ail=2", 0 },
	};
	char why[WHY_LEN];
	struct config c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		config_defaults(&c);
		ck_assert_int_eq(config_set(&c, "max_concurrent_per_key",
		    cases[i].value, why, sizeof(why)), 0);
		if (cases[i].ok)
			ck_assert_msg(config_finish(&c, why, sizeof(why)) == 0,
			    "\"%s\": %s", cases[i].value, why);
		else {
			ck_assert_msg(config_finish(&c, why, sizeof(why)) ==
			    -1, "\"%s\" accepted", cases[i].value);
			ck_assert_msg(strncmp(why, "max_concurrent_per_key: ",
			    24) == 0, "%s", why);
		}
	}
	config_defaults(&c);
	ck_assert_str_eq(c.max_concurrent_per_key, "");
}
END_TEST

START_TEST(test_load_file)
{
	static const char text[] =
	    "# taskspool test configuration\n"
	    "\n"
	    "   \t\n"
	    "spool = /srv/ts\n"
	    "slots=4\n"
	    "  max_retries   =   7   # trailing comment\n"
	    "timeout_sec = 60\t# tab before the comment\n"
	    "hooks_dir = /opt/hooks#not-a-comment\n"
	    "# slots = 99\n"
	    "\t# indented comment\n"
	    "log_level = debug\n"
	    "retry_jitter_pct = 0\n"
	    "log_cap_bytes = 1099511627776\n"	/* 2^40, the maximum */
	    "fsync = 0";			/* no final newline */
	struct config c;
	char path[512], why[WHY_LEN] = "";

	write_file("a.conf", text, path, sizeof(path));
	config_defaults(&c);
	ck_assert_msg(config_load(&c, path, why, sizeof(why)) == 0, "%s",
	    why);
	ck_assert_str_eq(c.spool, "/srv/ts");
	ck_assert_int_eq(c.slots, 4);
	ck_assert_int_eq(c.max_retries, 7);
	ck_assert_int_eq(c.timeout_sec, 60);
	ck_assert_str_eq(c.hooks_dir, "/opt/hooks#not-a-comment");
	ck_assert_str_eq(c.log_level, "debug");
	ck_assert_int_eq(c.retry_jitter_pct, 0);
	ck_assert_int_eq(c.log_cap_bytes, 1099511627776L);
	ck_assert_int_eq(c.fsync, 0);
	/* untouched keys keep their defaults */
	ck_assert_int_eq(c.heartbeat_ms, 5000);
	ck_assert_int_eq(c.retry_base_ms, 1000);
	ck_assert_str_eq(c.source, path);

	/* config_set after the file overrides it (command-line flags) */
	ck_assert_int_eq(config_set(&c, "slots", "8", why, sizeof(why)), 0);
	ck_assert_int_eq(c.slots, 8);
	ck_assert_int_eq(config_set(&c, "spool", "/other", why, sizeof(why)),
	    0);
	ck_assert_str_eq(c.spool, "/other");

	/* an empty file changes nothing but the source */
	write_file("empty.conf", "", path, sizeof(path));
	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, path, why, sizeof(why)), 0);
	ck_assert_int_eq(c.max_retries, 3);
	ck_assert_str_eq(c.source, path);
}
END_TEST

static const struct {
	const char *text;
	int line;
	const char *key;	/* must appear in the message */
} load_errors[] = {
	{ "slots = 4\nslot = 4\n", 2, "slot" },
	{ "\n# comment\nslots = four\n", 3, "slots" },
	{ "slots = 4097\n", 1, "slots" },	/* range 0..4096 */
	{ "slots = -1\n", 1, "slots" },
	{ "slots = 4x\n", 1, "slots" },
	{ "slots = 4.0\n", 1, "slots" },
	{ "slots =\n", 1, "slots" },
	{ "slots = 99999999999999999999\n", 1, "slots" },
	{ "max_retries = 101\n", 1, "max_retries" },
	{ "timeout_sec = 0\n", 1, "timeout_sec" },
	{ "timeout_sec = 604801\n", 1, "timeout_sec" },
	{ "retry_jitter_pct = 101\n", 1, "retry_jitter_pct" },
	{ "fsync = 2\n", 1, "fsync" },
	{ "scan_interval_ms = 99\n", 1, "scan_interval_ms" },
	{ "Slots = 4\n", 1, "Slots" },		/* keys are case-sensitive */
	{ "slots = 4\n\n\nbogus_key = 1 # c\n", 4, "bogus_key" },
	{ "slots 4\n", 1, "key = value" },	/* no '=' */
	/* a typo: the nearest key suggested */
	{ "slot = 4\n", 1, "unknown key \"slot\" (did you mean \"slots\"?)" },
	{ "max_retry = 1\n", 1, "(did you mean \"max_retries\"?)" },
	{ "nothing_like_it = 1\n", 1, "(taskspool config lists every key)" },
};

START_TEST(test_load_errors)
{
	for (size_t i = 0; i < sizeof(load_errors) / sizeof(load_errors[0]);
	    i++) {
		struct config c;
		char path[512], why[WHY_LEN] = "", prefix[600];

		write_file("bad.conf", load_errors[i].text, path, sizeof(path));
		config_defaults(&c);
		ck_assert_msg(config_load(&c, path, why, sizeof(why)) == -1,
		    "case %zu accepted: %s", i, load_errors[i].text);
		snprintf(prefix, sizeof(prefix), "%s:%d:", path,
		    load_errors[i].line);
		ck_assert_msg(strncmp(why, prefix, strlen(prefix)) == 0,
		    "case %zu: \"%s\" does not start with \"%s\"", i, why,
		    prefix);
		ck_assert_msg(strstr(why + strlen(prefix), load_errors[i].key)
		    != NULL, "case %zu: \"%s\" does not name \"%s\"", i, why,
		    load_errors[i].key);
	}
}
END_TEST

START_TEST(test_load_missing_and_long)
{
	struct config c;
	char path[512], why[WHY_LEN] = "";
	char *text;

	snprintf(path, sizeof(path), "%s/none.conf", tmpdir);
	config_defaults(&c);
	errno = 0;
	ck_assert_int_eq(config_load(&c, path, why, sizeof(why)), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(why, path));

	/* a 10000-byte line is refused, naming its line */
	text = malloc(10100);
	ck_assert_ptr_nonnull(text);
	strcpy(text, "slots = 1\nspool = /");
	memset(text + strlen(text), 'a', 10000);
	text[19 + 10000] = '\n';
	text[19 + 10001] = '\0';
	write_file("long.conf", text, path, sizeof(path));
	free(text);
	config_defaults(&c);
	ck_assert_int_eq(config_load(&c, path, why, sizeof(why)), -1);
	{
		char prefix[600];

		snprintf(prefix, sizeof(prefix), "%s:2:", path);
		ck_assert_msg(strncmp(why, prefix, strlen(prefix)) == 0, "%s",
		    why);
	}
}
END_TEST

/* Write len bytes (NULs included) to tmpdir/name. */
static void
write_bytes(const char *name, const char *data, size_t len, char *path,
    size_t plen)
{
	FILE *fp;

	snprintf(path, plen, "%s/%s", tmpdir, name);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	ck_assert_uint_eq(fwrite(data, 1, len, fp), len);
	ck_assert_int_eq(fclose(fp), 0);
}

/*
 * Issue 10: a raw NUL or another control byte in taskspool.conf is
 * refused with the file, line, column and byte (the old fgets() loop
 * took "spool = /srv<NUL>/x" on a last line without LF as "/srv").
 * Offsets by hand: "slots = 4\n" is bytes 0-9, "spool = /srv" bytes
 * 10-21, so the NUL is offset 22, line 2 column 13; in
 * "log_level = debug<ESC>[31m" ESC is offset 17, line 1 column 18.
 */
START_TEST(test_load_control_bytes)
{
	static const struct {
		const char *data;
		size_t len;
		const char *why;	/* after "<path>:" */
	} t[] = {
		{ "slots = 4\nspool = /srv\0/x", 26,
		    "2:13: raw NUL byte (offset 22;" },
		{ "slots = 4\nspool = /srv\0/x\n", 27,
		    "2:13: raw NUL byte (offset 22;" },
		{ "log_level = debug\x1b[31m\n", 24,
		    "1:18: control byte 0x1b (offset 17;" },
		{ "slots = 4\r\n\x7f\n", 13,
		    "2:1: control byte 0x7f (offset 11;" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct config c;
		char path[512], why[WHY_LEN] = "", want[700];

		write_bytes("ctl.conf", t[i].data, t[i].len, path,
		    sizeof(path));
		config_defaults(&c);
		ck_assert_msg(config_load(&c, path, why, sizeof(why)) == -1,
		    "case %zu accepted", i);
		snprintf(want, sizeof(want), "%s:%s", path, t[i].why);
		ck_assert_msg(strncmp(why, want, strlen(want)) == 0,
		    "case %zu: \"%s\", want \"%s...\"", i, why, want);
		ck_assert_str_ne(c.spool, "/srv");
	}
}
END_TEST

START_TEST(test_set_errors)
{
	struct config c;
	char why[WHY_LEN];
	char *big;

	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "nosuch", "1", why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "nosuch"));
	ck_assert_int_eq(config_set(&c, "slots", "x", why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "slots"));
	ck_assert_int_eq(c.slots, 0);		/* unchanged */
	ck_assert_int_eq(config_set(&c, "heartbeat_ms", "99", why,
	    sizeof(why)), CONFIG_OUT_OF_RANGE);	/* range 100..600000 */
	ck_assert_ptr_nonnull(strstr(why, "heartbeat_ms"));
	ck_assert_int_eq(c.heartbeat_ms, 5000);
	/* boundaries accepted */
	ck_assert_int_eq(config_set(&c, "heartbeat_ms", "100", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "slots", "4096", why, sizeof(why)), 0);
	ck_assert_int_eq(c.slots, 4096);
	/* a string longer than its buffer (CONFIG_PATH_MAX - 1) */
	big = malloc(CONFIG_PATH_MAX + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, 'p', CONFIG_PATH_MAX);
	big[CONFIG_PATH_MAX] = '\0';
	ck_assert_int_eq(config_set(&c, "spool", big, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "spool"));
	ck_assert_str_eq(c.spool, "/var/spool/taskspool");
	big[CONFIG_PATH_MAX - 1] = '\0';	/* 4095 bytes fit */
	ck_assert_int_eq(config_set(&c, "spool", big, why, sizeof(why)), 0);
	free(big);
	/* node ids longer than 64 */
	ck_assert_int_eq(config_set(&c, "node_id",
	    "n234567890123456789012345678901234567890123456789012345678901234"
	    "5", why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "node_id"));
}
END_TEST

START_TEST(test_locate)
{
	struct config c;
	char path[512], why[WHY_LEN] = "", spool[512];

	/* <spool>/taskspool.conf is found; the spool argument wins over
	 * the file's own spool line. */
	write_file("taskspool.conf", "spool = /elsewhere\nslots = 9\n", path,
	    sizeof(path));
	snprintf(spool, sizeof(spool), "%s", tmpdir);
	config_defaults(&c);
	ck_assert_msg(config_locate(&c, NULL, spool, why, sizeof(why)) == 0,
	    "%s", why);
	ck_assert_int_eq(c.slots, 9);
	ck_assert_str_eq(c.spool, spool);
	ck_assert_str_eq(c.source, path);

	/* an explicit file is used instead */
	write_file("explicit.conf", "slots = 2\n", path, sizeof(path));
	config_defaults(&c);
	ck_assert_int_eq(config_locate(&c, path, spool, why, sizeof(why)), 0);
	ck_assert_int_eq(c.slots, 2);
	ck_assert_str_eq(c.source, path);

	/* an explicit file that does not exist is an error */
	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	config_defaults(&c);
	ck_assert_int_eq(config_locate(&c, path, spool, why, sizeof(why)),
	    -1);
	ck_assert_ptr_nonnull(strstr(why, "missing.conf"));
}
END_TEST

/* Dump c, load the dump over fresh defaults, compare. */
static void
dump_reload(const struct config *c, struct config *out)
{
	char path[512], why[WHY_LEN] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "%s/dump.conf", tmpdir);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	config_dump(c, fp, 0);
	ck_assert_int_eq(fclose(fp), 0);
	config_defaults(out);
	ck_assert_msg(config_load(out, path, why, sizeof(why)) == 0, "%s",
	    why);
}

/* taskspool config / taskspoold -n: passwords are not printed. */
START_TEST(test_dump_hides_passwords)
{
	struct config c;
	char why[WHY_LEN], *text = NULL;
	size_t len = 0;
	FILE *fp;

	config_defaults(&c);
	ck_assert_int_eq(config_set(&c, "mariadb_password", "s3cret-db", why,
	    sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "redis_password", "s3cret-redis",
	    why, sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "callback_secret",
	    "whsec_s3cretAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", why,
	    sizeof(why)), 0);
	fp = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(fp);
	config_dump(&c, fp, 1);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_ptr_null(strstr(text, "s3cret"));
	ck_assert_ptr_nonnull(strstr(text,
	    "\n# mariadb_password = (set, not shown)\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "\n# redis_password = (set, not shown)\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "\n# callback_secret = (set, not shown)\n"));
	/* other keys are still printed as key = value */
	ck_assert_ptr_nonnull(strstr(text, "\nmariadb_user = taskspool\n"));
	free(text);
	/* the password of the mariadb URL's userinfo (RFC 3986 §3.2.1) too;
	 * a URL without one is printed as it is */
	ck_assert_int_eq(config_set(&c, "mariadb",
	    "mariadb://ts:s3cret:x@db.example:3306/tasks", why, sizeof(why)), 0);
	ck_assert_int_eq(config_set(&c, "redis", "127.0.0.1:6379", why,
	    sizeof(why)), 0);
	text = NULL;
	fp = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(fp);
	config_dump(&c, fp, 1);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_ptr_null(strstr(text, "s3cret"));
	ck_assert_ptr_nonnull(strstr(text, "\n# mariadb = mariadb://ts:"
	    "(not shown)@db.example:3306/tasks\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nredis = 127.0.0.1:6379\n"));
	free(text);
	/* without hiding (taskspool init writes the file), they are kept */
	text = NULL;
	fp = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(fp);
	config_dump(&c, fp, 0);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_ptr_nonnull(strstr(text, "\nmariadb_password = s3cret-db\n"));
	free(text);
}
END_TEST

START_TEST(test_dump_roundtrip)
{
	static const struct {
		const char *key, *value;
	} set[] = {
		{ "spool", "/srv/taskspool" },
		{ "hooks_dir", "/opt/hooks" },
		{ "node_id", "node-1.example" },
		{ "log_level", "debug" },
		{ "slots", "17" },
		{ "max_retries", "0" },
		{ "timeout_sec", "604800" },
		{ "kill_grace_ms", "1" },
		{ "retry_base_ms", "250" },
		{ "retry_max_ms", "604800000" },
		{ "retry_jitter_pct", "100" },
		{ "scan_interval_ms", "100" },
		{ "settle_ms", "0" },
		{ "heartbeat_ms", "600000" },
		{ "reap_interval_ms", "333" },
		{ "log_cap_bytes", "0" },
		{ "tail_bytes", "1048576" },
		{ "result_max_bytes", "16777216" },
		{ "fsync", "0" },
	};
	struct config c, back;
	char why[WHY_LEN];

	/* defaults survive the round trip (empty strings included) */
	config_defaults(&c);
	dump_reload(&c, &back);
	config_eq(&c, &back);

	/* every key changed from its default */
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		ck_assert_msg(config_set(&c, set[i].key, set[i].value, why,
		    sizeof(why)) == 0, "%s", why);
	dump_reload(&c, &back);
	config_eq(&c, &back);
	ck_assert_str_eq(back.node_id, "node-1.example");
	ck_assert_int_eq(back.result_max_bytes, 16777216);
}
END_TEST

/*
 * The dump is "itself a valid file" (config.h), and must reload to the
 * same values.  A value the format cannot carry (it has no quoting: a
 * " #" starts a comment, and so does a '#' first in the value, as
 * config_dump writes "key = value"; white space is trimmed, a newline ends the line)
 * must then be refused by config_set rather than silently changed.
 */
START_TEST(test_dump_roundtrip_unrepresentable)
{
	static const struct {
		const char *key, *value;
	} cases[] = {
		{ "spool", "/srv/spool #1" },
		{ "hooks_dir", "#hooks" },	/* "hooks_dir =#hooks" */
		{ "hooks_dir", " /leading/space" },
		{ "hooks_dir", "/a\nslots = 1" },
	};
	char bad[WHY_LEN] = "";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config c, back;
		char why[WHY_LEN];

		config_defaults(&c);
		if (config_set(&c, cases[i].key, cases[i].value, why,
		    sizeof(why)) != 0)
			continue;	/* refused: fine */
		dump_reload(&c, &back);
		if (strcmp(c.spool, back.spool) != 0 ||
		    strcmp(c.hooks_dir, back.hooks_dir) != 0 ||
		    c.slots != back.slots)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			    "[%s=\"%s\" accepted but reloads as "
			    "spool=\"%.40s\" hooks_dir=\"%.40s\" slots=%ld] ",
			    cases[i].key, cases[i].value, back.spool,
			    back.hooks_dir, back.slots);
	}
	ck_assert_msg(bad[0] == '\0', "%s", bad);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_finish);
	tcase_add_test(tc, test_tags);
	tcase_add_test(tc, test_max_per_key);
	tcase_add_test(tc, test_load_file);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_load_missing_and_long);
	tcase_add_test(tc, test_load_control_bytes);
	tcase_add_test(tc, test_set_errors);
	tcase_add_test(tc, test_locate);
	tcase_add_test(tc, test_dump_roundtrip);
	tcase_add_test(tc, test_dump_hides_passwords);
	tcase_add_test(tc, test_dump_roundtrip_unrepresentable);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_TMPDIR(config_suite, basedir, "check_config")
