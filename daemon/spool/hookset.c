/*
 * hookset — the hooks a node advertises; see hookset.h.
 */
#include "spool/hookset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool/spool.h"

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether dirfd/name is a regular file we may execute. */
static int
is_hook(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, 0) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & 0111) != 0 && faccessat(dirfd, name, X_OK,
	    AT_EACCESS) == 0;
}

int
hookset_scan(int dirfd, char *out, size_t outlen, size_t *count)
{
	DIR *dp;
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0, len = 0;
	int fd, rc = 0;

	out[0] = '\0';
	if (count != NULL)
		*count = 0;
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(dp)) != NULL) {
		if (!spool_code_ok(de->d_name) || !is_hook(dirfd, de->d_name))
			continue;
		if (n == cap) {
			char **nv = reallocarray(v, cap ? cap * 2 : 32,
			    sizeof(*v));

			if (nv == NULL)
				break;	/* listed: what was read so far */
			v = nv;
			cap = cap ? cap * 2 : 32;
		}
		if ((v[n] = strdup(de->d_name)) == NULL)
			break;
		n++;
	}
	closedir(dp);
	if (n > 1)
		qsort(v, n, sizeof(*v), name_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i]);

		/* Room for ",name" now and ",*" after it. */
		if (rc == 0 && len + (len > 0) + l + 2 + 1 > outlen) {
			if (len + (len > 0) + 1 + 1 <= outlen) {
				if (len > 0)
					out[len++] = ',';
				out[len++] = '*';
				out[len] = '\0';
			}
			rc = 1;
		}
		if (rc == 0) {
			if (len > 0)
				out[len++] = ',';
			memcpy(out + len, v[i], l + 1);
			len += l;
		}
		free(v[i]);
	}
	free(v);
	if (count != NULL)
		*count = n;
	return rc;
}

int
hookset_has(const char *list, const char *code)
{
	size_t cl = strlen(code);

	for (const char *p = list; *p != '\0';) {
		const char *e = strchr(p, ',');
		size_t l = e != NULL ? (size_t)(e - p) : strlen(p);

		if ((l == 1 && *p == '*') || (l == cl && cl > 0 &&
		    memcmp(p, code, cl) == 0))
			return 1;
		if (e == NULL)
			break;
		p = e + 1;
	}
	return 0;
}
