/*
 * stamp — the benchmark's no-op hook: its first action is to read the
 * clock, then it appends "<requestId> <epoch ns>\n" to the stamp log with
 * one write(2) and exits 0.  The log is $STAMP_LOG, else ../../stamps.log
 * (a hook runs in <spool>/tmp/work.*, so that is <spool>/stamps.log).
 * With an argument (as xargs runs it) the argument is the id.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec ts;
	char line[256];
	const char *id, *log;
	int fd, n;

	clock_gettime(CLOCK_REALTIME, &ts);
	id = argc > 1 ? argv[1] : getenv("TASKSPOOL_REQUEST_ID");
	log = getenv("STAMP_LOG");
	if (log == NULL)
		log = "../../stamps.log";
	n = snprintf(line, sizeof(line), "%s %lld\n", id ? id : "-",
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0) {
		(void)!write(fd, line, (size_t)n);
		close(fd);
	}
	return 0;
}
