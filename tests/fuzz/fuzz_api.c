/*
 * fuzz_api — the HTTP API handler api_handle() (api.h), past
 * authentication.  The input is five lines and a body:
 *
 *     METHOD \n PATH_INFO \n QUERY_STRING \n CONTENT_TYPE \n
 *     Idempotency-Key \n BODY
 *
 * (an empty line leaves that meta-variable unset; a missing line too,
 * and the body is then empty).  The harness signs each request with the
 * app's secret at the fixed clock (harness.h, fuzz_api_call), so the
 * fuzzer reaches submit, get, cancel, list, register, the cron preview
 * (GET /cron/next, which loads zone files), health and metrics, and
 * checks what api.h promises of every answer (status line,
 * Content-Length, a JSON body that parses) and, after an accepted
 * submission, that every task file the API wrote into incoming/ is one
 * the daemon's reader accepts (task_decode), so nothing the API takes
 * in goes to corrupt/ later; likewise that every job file it wrote into
 * jobs/ (POST and PUT /jobs) is one job_decode accepts, under its own
 * name, so the leader fires it.  One spool per process,
 * emptied before each input (fuzz_spool_wipe), so an input is answered
 * the same way each time it is run.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "spool/spool.h"
#include "core/job.h"
#include "core/task.h"

static struct config cfg;

FUZZ_SPOOL_INITIALIZE(cfg)

/* Every file of incoming/ must pass task_decode. */
static void
check_incoming(void)
{
	char dir[CONFIG_PATH_MAX + 16];
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "%s/incoming", cfg.spool);
	if ((d = opendir(dir)) == NULL)
		fuzz_fail("%s: cannot open", dir);
	while ((de = readdir(d)) != NULL) {
		struct task t;
		struct task_error err;
		size_t len;
		char *data;

		if (de->d_name[0] == '.')
			continue;
		data = spool_read_file(dirfd(d), de->d_name, TASK_FILE_MAX,
		    &len);
		if (data == NULL)
			fuzz_fail("incoming/%s: cannot read", de->d_name);
		task_init(&t);
		if (task_decode(data, len, &t, &err) != 0)
			fuzz_fail("the API stored incoming/%s, which "
			    "task_decode refuses: %s: %s", de->d_name,
			    err.field, err.rule);
		task_fini(&t);
		free(data);
	}
	closedir(d);
}

/* Every file of jobs/ must pass job_decode, its jobCode its name. */
static void
check_jobs(void)
{
	char dir[CONFIG_PATH_MAX + 16];
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "%s/jobs", cfg.spool);
	if ((d = opendir(dir)) == NULL)
		fuzz_fail("%s: cannot open", dir);
	while ((de = readdir(d)) != NULL) {
		struct job j;
		struct task_error err;
		size_t len, n = strlen(de->d_name);
		char *data;

		if (de->d_name[0] == '.')
			continue;
		data = spool_read_file(dirfd(d), de->d_name, JOB_FILE_MAX,
		    &len);
		if (data == NULL)
			fuzz_fail("jobs/%s: cannot read", de->d_name);
		job_init(&j);
		if (job_decode(data, len, &j, &err) != 0)
			fuzz_fail("the API stored jobs/%s, which job_decode "
			    "refuses: %s: %s", de->d_name, err.field, err.rule);
		if (n <= 5 || strlen(j.code) != n - 5 ||
		    strncmp(j.code, de->d_name, n - 5) != 0)
			fuzz_fail("the API stored job %s as jobs/%s", j.code,
			    de->d_name);
		job_fini(&j);
		free(data);
	}
	closedir(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *field[5] = { NULL, NULL, NULL, NULL, NULL };
	char *copy = malloc(size + 1), *p, *end;
	struct fuzz_request rq;
	struct buf out;

	if (copy == NULL)
		fuzz_fail("out of memory");
	memcpy(copy, data, size);
	copy[size] = '\0';
	p = copy;
	end = copy + size;
	memset(&rq, 0, sizeof(rq));
	rq.body = "";
	for (int i = 0; i < 5; i++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl == NULL) {
			field[i] = p[0] != '\0' ? p : NULL;
			p = end;
			break;
		}
		*nl = '\0';
		field[i] = p[0] != '\0' ? p : NULL;
		p = nl + 1;
		if (i == 4) {
			rq.body = p;
			rq.body_len = (size_t)(end - p);
		}
	}
	rq.method = field[0];
	rq.path = field[1];
	rq.query = field[2];
	rq.ctype = field[3];
	rq.idem_key = field[4];
	fuzz_spool_wipe(&cfg);
	buf_init(&out, 0);
	switch (fuzz_api_call(&cfg, &rq, &out)) {
	case 202:
		check_incoming();
		break;
	case 200:
	case 201:
		check_jobs();
		break;
	}
	buf_fini(&out);
	free(copy);
	return 0;
}
