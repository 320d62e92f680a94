/*
 * fuzz_heartbeat — the heartbeat file parser, coord_heartbeat_parse()
 * (state/heartbeat.<node>, read back by every node's registry listing,
 * `taskspool nodes` and `taskspool status`): any bytes, cut at the first
 * NUL as spool_read_text() would refuse them.  Checks: the hooks list
 * is a NUL-terminated string within its buffer, draining is 0, 1 or 2,
 * the tags are a well-formed list (core/tags.h) or none.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "coord/coord.h"
#include "core/tags.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct coord_node nd;
	char *text = malloc(size + 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&nd, 0, sizeof(nd));
	coord_heartbeat_parse(text, &nd);
	if (memchr(nd.hooks, '\0', sizeof(nd.hooks)) == NULL)
		fuzz_fail("hooks not terminated within its buffer");
	if (memchr(nd.tags, '\0', sizeof(nd.tags)) == NULL ||
	    !tags_list_ok(nd.tags))
		fuzz_fail("tags not a well-formed list");
	if (nd.draining < 0 || nd.draining > 2)
		fuzz_fail("draining = %d", nd.draining);
	free(text);
	return 0;
}
