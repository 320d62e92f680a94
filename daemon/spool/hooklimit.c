/*
 * hooklimit — hooks' setrlimit(2) limits from the configuration; see
 * hooklimit.h.  Linux man pages: getrlimit(2) (RLIMIT_NOFILE, RLIMIT_AS,
 * RLIMIT_CPU with SIGXCPU at the soft and SIGKILL at the hard limit,
 * RLIMIT_FSIZE with SIGXFSZ or EFBIG), signal(7).
 */
#include "spool/hooklimit.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

struct key {
	const char *name;
	int resource;
	size_t off;		/* of the long in struct config */
	long extra_hard;	/* hard = value + this */
	const char *unit;
};

static const struct key keys[HOOKLIMIT_MAX] = {
	{ "hook_limit_nofile", RLIMIT_NOFILE,
	    offsetof(struct config, hook_limit_nofile), 0, "descriptors" },
	{ "hook_limit_as_bytes", RLIMIT_AS,
	    offsetof(struct config, hook_limit_as_bytes), 0, "bytes" },
	{ "hook_limit_cpu_sec", RLIMIT_CPU,
	    offsetof(struct config, hook_limit_cpu_sec), 1, "s" },
	{ "hook_limit_fsize_bytes", RLIMIT_FSIZE,
	    offsetof(struct config, hook_limit_fsize_bytes), 0, "bytes" },
};

static long
value(const struct config *cfg, const struct key *k)
{
	return *(const long *)(const void *)((const char *)cfg + k->off);
}

int
hooklimit_from_config(const struct config *cfg, struct hook_rlimit *v)
{
	int n = 0;

	for (int i = 0; i < HOOKLIMIT_MAX; i++) {
		long x = value(cfg, &keys[i]);

		if (x <= 0)
			continue;
		v[n].resource = keys[i].resource;
		v[n].rl.rlim_cur = (rlim_t)x;
		v[n].rl.rlim_max = (rlim_t)x + (rlim_t)keys[i].extra_hard;
		n++;
	}
	return n;
}

int
hooklimit_check_process(const struct config *cfg, char *why, size_t whylen)
{
	struct hook_rlimit v[HOOKLIMIT_MAX];
	int n = hooklimit_from_config(cfg, v);

	for (int i = 0; i < n; i++) {
		struct rlimit cur;
		const struct key *k = NULL;

		for (int j = 0; j < HOOKLIMIT_MAX; j++)
			if (keys[j].resource == v[i].resource)
				k = &keys[j];
		if (k == NULL || getrlimit(v[i].resource, &cur) != 0)
			continue;
		if (cur.rlim_max != RLIM_INFINITY && v[i].rl.rlim_max >
		    cur.rlim_max) {
			snprintf(why, whylen, "%s: %ld %s%s is above the "
			    "daemon's hard limit %llu (raise it, e.g. with "
			    "LimitNOFILE=/LimitAS=/LimitCPU=/LimitFSIZE= in "
			    "the service unit, or lower the key)", k->name,
			    value(cfg, k), k->unit, k->extra_hard ? " (+1 s "
			    "hard)" : "", (unsigned long long)cur.rlim_max);
			return -1;
		}
	}
	return 0;
}

int
hooklimit_explain(const struct config *cfg, int sig, int64_t cpu_ms,
    char *out, size_t len)
{
	long cpu = cfg->hook_limit_cpu_sec;

	if (sig == SIGXCPU && cpu > 0)
		snprintf(out, len, "; SIGXCPU: CPU time limit reached "
		    "(hook_limit_cpu_sec = %ld)", cpu);
	else if (sig == SIGKILL && cpu > 0 && cpu_ms >= cpu * 1000)
		/* Past the soft limit, so SIGXCPU was sent and survived.
		 * The hard limit's SIGKILL comes at cpu + 1 s of the
		 * scheduler's exact count; wait4's figure is sampled and may
		 * fall short of it (1.8 s measured), so the soft limit is
		 * the test. */
		snprintf(out, len, "; SIGKILL after %lld ms of CPU time, "
		    "past hook_limit_cpu_sec = %ld: the hard CPU time limit "
		    "(1 s higher) kills a hook that survives SIGXCPU",
		    (long long)cpu_ms, cpu);
	else if (sig == SIGXFSZ && cfg->hook_limit_fsize_bytes > 0)
		snprintf(out, len, "; SIGXFSZ: file size limit reached "
		    "(hook_limit_fsize_bytes = %ld)",
		    cfg->hook_limit_fsize_bytes);
	else {
		if (len > 0)
			out[0] = '\0';
		return 0;
	}
	return 1;
}
