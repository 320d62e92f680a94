/*
 * probe — a hook for tests and benchmarks.  Static, so it starts fast.
 *
 * Reads executeParams (a flat JSON object) from stdin and understands:
 *   "log": "/path"     append START/END lines there (default
 *                      ../../probe.log, i.e. <spool>/probe.log, since a
 *                      hook's working directory is <spool>/workdirs/<node>.<slot>)
 *   "sleep_ms": N      sleep N ms between START and END
 *   "exit": N          exit status (default 0)
 *   "fail_attempts": N exit 75 while TASKSPOOL_ATTEMPT <= N
 *   "out_bytes": N     write N bytes of 'x' to stdout
 *   "result": true     write {"ok":true,"attempt":N} to the result file
 * Lines: "START <requestId> <attempt> <epoch ns> <pid>" and
 *        "END <requestId> <attempt> <epoch ns> <exit>", each written with
 * one write(2) on an O_APPEND descriptor, so concurrent probes never
 * interleave within a line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long
num(const char *js, const char *key, long def)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(js, pat);
	if (p == NULL)
		return def;
	p = strchr(p + strlen(pat), ':');
	return p != NULL ? strtol(p + 1, NULL, 10) : def;
}

int
main(void)
{
	long long t0 = now_ns();
	char in[65536], logpath[4096] = "../../probe.log", line[512];
	ssize_t n, len = 0;
	const char *id = getenv("TASKSPOOL_REQUEST_ID");
	const char *att = getenv("TASKSPOOL_ATTEMPT");
	const char *p;
	long sleep_ms, code, fail_att, out_bytes;
	int fd, l;

	while (len < (ssize_t)sizeof(in) - 1 &&
	    (n = read(0, in + len, sizeof(in) - 1 - (size_t)len)) > 0)
		len += n;
	in[len] = '\0';
	if ((p = strstr(in, "\"log\"")) != NULL &&
	    (p = strchr(p + 5, '"')) != NULL) {
		const char *e = strchr(p + 1, '"');

		if (e != NULL && (size_t)(e - p - 1) < sizeof(logpath)) {
			memcpy(logpath, p + 1, (size_t)(e - p - 1));
			logpath[e - p - 1] = '\0';
		}
	}
	if (id == NULL)
		id = "-";
	if (att == NULL)
		att = "0";
	fd = open(logpath, O_WRONLY | O_APPEND | O_CREAT, 0644);
	l = snprintf(line, sizeof(line), "START %s %s %lld %d\n", id, att, t0,
	    (int)getpid());
	if (fd >= 0)
		(void)!write(fd, line, (size_t)l);
	sleep_ms = num(in, "sleep_ms", 0);
	code = num(in, "exit", 0);
	fail_att = num(in, "fail_attempts", 0);
	out_bytes = num(in, "out_bytes", 0);
	if (atol(att) <= fail_att)
		code = 75;
	while (out_bytes > 0) {
		char buf[4096];
		size_t k = out_bytes > 4096 ? 4096 : (size_t)out_bytes;

		memset(buf, 'x', k);
		if (write(1, buf, k) < 0)
			break;
		out_bytes -= (long)k;
	}
	if (sleep_ms > 0) {
		struct timespec ts = { sleep_ms / 1000,
			(sleep_ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) != 0)
			;
	}
	if (strstr(in, "\"result\": true") || strstr(in, "\"result\":true")) {
		const char *rf = getenv("TASKSPOOL_RESULT_FILE");
		FILE *fp = rf ? fopen(rf, "w") : NULL;

		if (fp != NULL) {
			fprintf(fp, "{\"ok\":true,\"attempt\":%s}\n", att);
			fclose(fp);
		}
	}
	l = snprintf(line, sizeof(line), "END %s %s %lld %ld\n", id, att,
	    now_ns(), code);
	if (fd >= 0)
		(void)!write(fd, line, (size_t)l);
	return (int)code;
}
