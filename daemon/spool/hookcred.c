/*
 * hookcred — the hooks' account; see hookcred.h.
 */
#include "spool/hookcred.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

/* Room for one getpwnam_r/getgrnam_r record (sysconf may say -1). */
#define HOOKCRED_PWBUF	16384

/* A decimal id: "1234" -> 0 with *id set; else -1. */
static int
parse_id(const char *s, unsigned long *id)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	*id = strtoul(s, &end, 10);
	return errno == 0 && *end == '\0' && *id < UINT32_MAX ? 0 : -1;
}

int
hookcred_resolve(const char *user, const char *group,
    struct hook_cred *hc, char *why, size_t whylen)
{
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	char *buf;
	unsigned long id;
	int e, n;

	memset(hc, 0, sizeof(*hc));
	if (user[0] == '\0') {
		if (group[0] != '\0') {
			snprintf(why, whylen, "hook_group: set without "
			    "hook_user (hooks run as the daemon's own user "
			    "and groups)");
			return -1;
		}
		return 0;
	}
	if ((buf = malloc(HOOKCRED_PWBUF)) == NULL) {
		snprintf(why, whylen, "hook_user: %s", strerror(errno));
		return -1;
	}
	if (parse_id(user, &id) == 0)
		e = getpwuid_r((uid_t)id, &pw, buf, HOOKCRED_PWBUF, &pwp);
	else
		e = getpwnam_r(user, &pw, buf, HOOKCRED_PWBUF, &pwp);
	if (pwp == NULL) {
		snprintf(why, whylen, "hook_user: no such user '%s'%s%s (create "
		    "it, e.g. useradd --system --no-create-home --shell "
		    "/usr/sbin/nologin %s, or leave hook_user empty to run "
		    "hooks as the daemon's user)", user, e ? ": " : "",
		    e ? strerror(e) : "", user);
		free(buf);
		return -1;
	}
	hc->uid = pw.pw_uid;
	hc->gid = pw.pw_gid;
	if (hc->uid == 0) {
		snprintf(why, whylen, "hook_user: '%s' is uid 0: hooks would "
		    "keep every privilege; name an unprivileged account, or "
		    "leave hook_user empty", user);
		free(buf);
		return -1;
	}
	snprintf(hc->user, sizeof(hc->user), "%s", pw.pw_name);
	n = HOOKCRED_NGROUPS_MAX;
	if (getgrouplist(pw.pw_name, pw.pw_gid, hc->groups, &n) < 0) {
		snprintf(why, whylen, "hook_user: '%s' is in more than %d "
		    "groups", user, HOOKCRED_NGROUPS_MAX);
		free(buf);
		return -1;
	}
	hc->ngroups = n;
	if (group[0] != '\0') {
		if (parse_id(group, &id) == 0)
			e = getgrgid_r((gid_t)id, &gr, buf, HOOKCRED_PWBUF,
			    &grp);
		else
			e = getgrnam_r(group, &gr, buf, HOOKCRED_PWBUF, &grp);
		if (grp == NULL) {
			snprintf(why, whylen, "hook_group: no such group "
			    "'%s'%s%s", group, e ? ": " : "",
			    e ? strerror(e) : "");
			free(buf);
			return -1;
		}
		if (gr.gr_gid == 0) {
			snprintf(why, whylen, "hook_group: '%s' is gid 0; name "
			    "an unprivileged group", group);
			free(buf);
			return -1;
		}
		hc->gid = gr.gr_gid;
		/* The primary group replaces the account's own in the
		 * list (getgrouplist put pw_gid first). */
		if (hc->ngroups > 0)
			hc->groups[0] = hc->gid;
	}
	snprintf(hc->group, sizeof(hc->group), "%s", grp != NULL ? gr.gr_name
	    : "");
	if (hc->group[0] == '\0') {
		struct group *g0 = NULL;

		if (getgrgid_r(hc->gid, &gr, buf, HOOKCRED_PWBUF, &g0) == 0 &&
		    g0 != NULL)
			snprintf(hc->group, sizeof(hc->group), "%s",
			    gr.gr_name);
		else
			snprintf(hc->group, sizeof(hc->group), "%lu",
			    (unsigned long)hc->gid);
	}
	free(buf);
	hc->active = hc->uid != getuid() || hc->gid != getgid();
	return 0;
}

/* The calling thread's effective capabilities (capget(2), raw). */
static int
caps_effective(uint64_t *eff)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	*eff = (uint64_t)d[1].effective << 32 | d[0].effective;
	return 0;
}

int
hookcred_check(const struct hook_cred *hc, char *why, size_t whylen)
{
	static const struct {
		int cap;
		const char *name;
	} need[] = {
		{ CAP_SETUID, "CAP_SETUID" },
		{ CAP_SETGID, "CAP_SETGID" },
		{ CAP_KILL, "CAP_KILL" },
	};
	struct hookcred_saved s;
	uint64_t eff = 0;

	if (!hc->active)
		return 0;
	if (caps_effective(&eff) != 0) {
		snprintf(why, whylen, "hook_user: capget: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if ((eff & (UINT64_C(1) << need[i].cap)) == 0) {
			snprintf(why, whylen, "hook_user = %s: the daemon "
			    "lacks %s (run it as root, or give it "
			    "CAP_SETUID CAP_SETGID CAP_KILL, e.g. "
			    "AmbientCapabilities= in its unit; or leave "
			    "hook_user empty to run hooks as the daemon's "
			    "user)", hc->user, need[i].name);
			return -1;
		}
	if (hookcred_enter(hc, HOOKCRED_USER, &s) != 0) {
		snprintf(why, whylen, "hook_user = %s: cannot take its "
		    "identity (setfsuid/setfsgid refused)", hc->user);
		return -1;
	}
	hookcred_leave(&s);
	return 0;
}

/* setfsuid/setfsgid return the previous id and never an error: the
 * switch is verified by asking again with an invalid id (-1). */
static uid_t
fsuid_set(uid_t u)
{
	return (uid_t)syscall(SYS_setfsuid, u);
}

static gid_t
fsgid_set(gid_t g)
{
	return (gid_t)syscall(SYS_setfsgid, g);
}

/* Set the dumpable flag back to was (PR_GET_DUMPABLE's answer) if a
 * credential change moved it. */
static void
dumpable_restore(int was)
{
	if (was >= 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != was)
		(void)prctl(PR_SET_DUMPABLE, was, 0, 0, 0);
}

int
hookcred_enter(const struct hook_cred *hc, int what,
    struct hookcred_saved *s)
{
	s->switched = 0;
	if (hc == NULL || !hc->active)
		return 0;
	s->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	s->fsgid = fsgid_set(hc->gid);
	if (fsgid_set((gid_t)-1) != hc->gid) {
		dumpable_restore(s->dumpable);
		errno = EPERM;
		return -1;
	}
	s->fsuid = fsuid_set((uid_t)-1);
	if (what == HOOKCRED_USER && (fsuid_set(hc->uid),
	    fsuid_set((uid_t)-1) != hc->uid)) {
		(void)fsuid_set(s->fsuid);
		(void)fsgid_set(s->fsgid);
		dumpable_restore(s->dumpable);
		errno = EPERM;
		return -1;
	}
	s->switched = 1;
	return 0;
}

void
hookcred_leave(const struct hookcred_saved *s)
{
	int e = errno;

	if (!s->switched)
		return;
	(void)fsuid_set(s->fsuid);
	(void)fsgid_set(s->fsgid);
	dumpable_restore(s->dumpable);
	errno = e;
}

int
hookcred_drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	/* The ambient set follows the inheritable one down. */
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) != 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
		return -1;
	return 0;
}

int
hookcred_become(const struct hook_cred *hc)
{
	if (syscall(SYS_setgroups, (size_t)hc->ngroups, hc->groups) != 0 ||
	    syscall(SYS_setresgid, hc->gid, hc->gid, hc->gid) != 0 ||
	    syscall(SYS_setresuid, hc->uid, hc->uid, hc->uid) != 0)
		return -1;
	/* From a non-root daemon with capabilities, setresuid keeps them. */
	if (hookcred_drop_caps() != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return 0;
}
