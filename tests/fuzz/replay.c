/*
 * replay — run a fuzz target's LLVMFuzzerTestOneInput() over saved inputs
 * without libFuzzer, so any compiler (gcc, with or without sanitizers)
 * replays the corpora in `make unit`.
 *
 *     replay_<target> FILE|DIR...
 *
 * Each FILE, and every regular file of each DIR (not recursive, in name
 * order, dot files skipped), is read whole and given to the target in a
 * child process of its own, so an input that aborts (a broken property,
 * a sanitizer report, a crash) is counted and named instead of ending
 * the run; the target's LLVMFuzzerInitialize(), when it has one, runs
 * once in this process first.  Prints "FAILED: <file> (...)" for each
 * such input and ends with the summary line
 *
 *     replay <target>: N inputs, M failed
 *
 * Exit status 0 when every input passed (and at least one was given), 1
 * otherwise, 2 on a usage or I/O error.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* Defined by the targets that need set-up; NULL in the others. */
#pragma weak LLVMFuzzerInitialize

#define INPUT_MAX	(8 << 20)	/* bytes of one input */

static long ninputs, nfailed;

/* Read path whole into *data (new) and *len; 0, or -1 with errno. */
static int
slurp(const char *path, unsigned char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0, r;
	unsigned char *b = NULL, *nb;

	if (f == NULL)
		return -1;
	for (;;) {
		if ((nb = realloc(b, cap)) == NULL)
			goto fail;
		b = nb;
		if ((r = fread(b + n, 1, cap - n, f)) == 0)
			break;
		n += r;
		if (n == cap && (cap *= 2) > INPUT_MAX) {
			errno = EFBIG;
			goto fail;
		}
	}
	if (ferror(f))
		goto fail;
	fclose(f);
	*data = b;
	*len = n;
	return 0;
fail:
	free(b);
	fclose(f);
	return -1;
}

static int
run_one(const char *path)
{
	unsigned char *data;
	size_t len;
	pid_t pid;
	int st;

	if (slurp(path, &data, &len) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ninputs++;
	fflush(NULL);
	if ((pid = fork()) < 0) {
		fprintf(stderr, "replay: fork: %s\n", strerror(errno));
		free(data);
		return -1;
	}
	if (pid == 0) {
		/* An exact copy the size of the input: a read past its end
		 * is a sanitizer report, as under libFuzzer. */
		unsigned char *copy = malloc(len > 0 ? len : 1);

		if (copy == NULL)
			_exit(3);
		memcpy(copy, data, len);
		LLVMFuzzerTestOneInput(copy, len);
		free(copy);
		/* exit, not _exit: LeakSanitizer checks at exit (make
		 * asan); the harness's spool is removed by its maker only. */
		exit(0);
	}
	free(data);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "replay: waitpid: %s\n",
			    strerror(errno));
			return -1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	nfailed++;
	if (WIFSIGNALED(st))
		printf("FAILED: %s (signal %d)\n", path, WTERMSIG(st));
	else
		printf("FAILED: %s (exit %d)\n", path, WEXITSTATUS(st));
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL, **nn;
	size_t n = 0;
	int rc = 0;

	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if ((nn = realloc(names, (n + 1) * sizeof(*names))) == NULL ||
		    (nn[n] = malloc(strlen(dir) + strlen(de->d_name) + 2)) ==
		    NULL) {
			fprintf(stderr, "replay: out of memory\n");
			if (nn != NULL)
				names = nn;
			rc = -1;
			break;
		}
		names = nn;
		sprintf(names[n++], "%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (rc == 0 && stat(names[i], &st) == 0 &&
		    S_ISREG(st.st_mode))
			rc = run_one(names[i]);
		free(names[i]);
	}
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *target = strrchr(argv[0], '/');
	int rc = 0;

	target = target != NULL ? target + 1 : argv[0];
	if (strncmp(target, "replay_", 7) == 0)
		target += 7;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc && rc == 0; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
			    strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode))
			rc = run_dir(argv[i]);
		else
			rc = run_one(argv[i]);
	}
	printf("replay %s: %ld inputs, %ld failed\n", target, ninputs,
	    nfailed);
	if (rc != 0)
		return 2;
	return nfailed == 0 && ninputs > 0 ? 0 : 1;
}
