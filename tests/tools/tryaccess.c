/*
 * tryaccess — what an account may do with some paths, for t0019 (hooks
 * under hook_user).  Each argument is LABEL=OP:PATH with OP
 *   r   open(PATH, O_RDONLY) and read one byte
 *   l   opendir(PATH) and readdir once (list the directory)
 *   w   open(PATH, O_WRONLY | O_CREAT | O_EXCL, 0600), then unlink it
 * and the output is one JSON object, {"LABEL":"OK"|"<errno name>",...}
 * (strerrorname_np: "EACCES", "ENOENT"...), on stdout.  Exit 0, or 64
 * for a malformed argument.  Labels and paths are the test's own: no
 * JSON escaping.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 0 when op on path worked, else the errno of the first failing call. */
static int
try(char op, const char *path)
{
	char c;
	DIR *dp;
	int fd;

	switch (op) {
	case 'r':
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return errno;
		if (read(fd, &c, 1) < 0) {
			int e = errno;

			close(fd);
			return e;
		}
		close(fd);
		return 0;
	case 'l':
		if ((dp = opendir(path)) == NULL)
			return errno;
		errno = 0;
		if (readdir(dp) == NULL && errno != 0) {
			int e = errno;

			closedir(dp);
			return e;
		}
		closedir(dp);
		return 0;
	case 'w':
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600)) < 0)
			return errno;
		close(fd);
		(void)unlink(path);
		return 0;
	}
	return EINVAL;
}

int
main(int argc, char **argv)
{
	printf("{");
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		int e;

		if (eq == NULL || eq[1] == '\0' || eq[2] != ':') {
			fprintf(stderr, "usage: tryaccess LABEL=r|l|w:PATH "
			    "...\n");
			return 64;
		}
		*eq = '\0';
		e = try(eq[1], eq + 3);
		printf("%s\"%s\":\"%s\"", i > 1 ? "," : "", argv[i],
		    e == 0 ? "OK" : strerrorname_np(e));
	}
	printf("}\n");
	return 0;
}
