/*
 * fuzz_outbox — the record file reader (records.h,
 * outbox/records/<ms>.<seq>.<node>.json, the MariaDB outbox):
 * records_decode() of any bytes, then records_row_fini().  A record that
 * decodes must have the members every row needs (a request id for a task
 * or callback row, a job code for a definition row).
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "records/records.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct records_row row;
	char why[256];

	memset(&row, 0, sizeof(row));
	if (records_decode((const char *)data, size, &row, why,
	    sizeof(why)) == 0) {
		if (row.def != NULL ? row.def->job_code == NULL ||
		    row.def->task_code == NULL : row.request_id == NULL)
			fuzz_fail("decoded a row without its key");
		for (size_t i = 0; i < row.natt; i++)
			if (row.att[i].state == NULL)
				fuzz_fail("attempt %zu without a state", i);
	}
	records_row_fini(&row);
	return 0;
}
