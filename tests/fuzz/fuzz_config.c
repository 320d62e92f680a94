/*
 * fuzz_config — the configuration file parser (config.h): the input is
 * written to a file and read with config_load() over the defaults, then
 * config_finish().  When both accept it, the round trip config.h
 * promises of config_dump() ("the output is itself a valid file"): the
 * dump, loaded over fresh defaults and finished, must be accepted and
 * dump to the same text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool/config.h"
#include "harness.h"

static struct config base;	/* the harness spool's; for its path */
static char path[CONFIG_PATH_MAX + 64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_spool_init(&base);
	snprintf(path, sizeof(path), "%s/fuzz.conf", base.spool);
	return 0;
}

static void
put(const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0)
		fuzz_fail("%s: %s", path, strerror(errno));
}

/* config_dump(c) as new text in *len bytes. */
static char *
dump(const struct config *c, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (f == NULL)
		fuzz_fail("open_memstream: %s", strerror(errno));
	config_dump(c, f, 0);
	if (fclose(f) != 0)
		fuzz_fail("config_dump: %s", strerror(errno));
	return text;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *c = malloc(sizeof(*c)), *c2 = malloc(sizeof(*c2));
	char why[1024];
	char *d1, *d2;
	size_t n1, n2;

	if (c == NULL || c2 == NULL)
		fuzz_fail("out of memory");
	put((const char *)data, size);
	config_defaults(c);
	if (config_load(c, path, why, sizeof(why)) == 0 &&
	    config_finish(c, why, sizeof(why)) == 0) {
		d1 = dump(c, &n1);
		put(d1, n1);
		config_defaults(c2);
		if (config_load(c2, path, why, sizeof(why)) != 0 ||
		    config_finish(c2, why, sizeof(why)) != 0)
			fuzz_fail("config_dump wrote a file config_load "
			    "refuses: %s", why);
		d2 = dump(c2, &n2);
		if (n1 != n2 || memcmp(d1, d2, n1) != 0)
			fuzz_fail("config round trip changed the dump:\n"
			    "%.*s\n----\n%.*s", (int)n1, d1, (int)n2, d2);
		free(d1);
		free(d2);
	}
	free(c);
	free(c2);
	return 0;
}
