/*
 * syshook — starting a system hook (see syshook.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spool/hook.h"
#include "spool/hooklimit.h"
#include "spool/syshook.h"

pid_t
syshook_start(const struct config *cfg, const char *name,
    char *const *envp, const void *data, size_t len)
{
	char path[CONFIG_PATH_MAX + 32];
	char *argv[] = { (char *)name, NULL };
	struct hook_spec hs;
	struct hook_rlimit rl[HOOKLIMIT_MAX];
	pid_t pid, failed;
	int mfd;

	snprintf(path, sizeof(path), "%s/%s", cfg->hooks_dir, name);
	if (access(path, X_OK) != 0)
		return 0;
	if ((mfd = memfd_create(name, MFD_CLOEXEC)) < 0)
		return -1;
	if (write(mfd, data, len) != (ssize_t)len ||
	    lseek(mfd, 0, SEEK_SET) != 0) {
		close(mfd);
		return -1;
	}
	memset(&hs, 0, sizeof(hs));
	hs.path = path;
	hs.argv = argv;
	hs.envp = envp;
	hs.workdir = "/";	/* the daemon's directory is none of its business */
	hs.stdin_fd = mfd;
	hs.stdout_fd = 2;
	hs.stderr_fd = 2;
	hs.rlimits = rl;
	hs.nrlimits = hooklimit_from_config(cfg, rl);
	hs.cred = &cfg->hookcred;	/* as every hook: hook_user */
	pid = hook_spawn(&hs, &failed);
	close(mfd);
	return pid;
}
