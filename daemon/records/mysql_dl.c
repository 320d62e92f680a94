/*
 * mysql_dl — the pointers and the loader of mysql_dl.h.  Refers to no
 * libmariadb symbol (only to their types), so linking it adds no
 * dependency.
 */
#include "records/mysql_dl.h"

#include <dlfcn.h>
#include <stdio.h>

#define MYSQL_DL_DEF(f) __typeof__(f) *mysql_dl_##f;
MYSQL_DL_FUNCS(MYSQL_DL_DEF)
#undef MYSQL_DL_DEF

int
mysql_dl_load(char *why, size_t whylen)
{
	static int loaded;		/* 1 ok, -1 failed */
	static char err[256];
	void *h;

	if (loaded == 0) {
		loaded = -1;
		h = dlopen("libmariadb.so.3", RTLD_NOW | RTLD_LOCAL);
		if (h == NULL) {
			snprintf(err, sizeof(err), "libmariadb: %s",
			    dlerror());
			goto out;
		}
#define MYSQL_DL_SYM(f) \
		if ((*(void **)&mysql_dl_##f = dlsym(h, #f)) == NULL) { \
			snprintf(err, sizeof(err), "libmariadb: no %s", #f); \
			goto out; \
		}
		MYSQL_DL_FUNCS(MYSQL_DL_SYM)
#undef MYSQL_DL_SYM
		loaded = 1;
	}
out:
	if (loaded > 0)
		return 0;
	snprintf(why, whylen, "%s", err);
	return -1;
}
