/*
 * hookcred — the account hooks run as (hook_user, hook_group in
 * taskspool.conf(5)): its uid, gid and supplementary groups resolved
 * once in the daemon (at start and on SIGHUP, never in a hook's child),
 * the switch a hook's child makes to it between vfork and execve, and
 * the daemon's own filesystem identity borrowed for the hooks' work
 * directories and /proc entries (setfsuid(2), setfsgid(2): one thread,
 * file access only; signals and the rest keep the daemon's identity).
 *
 * Every credential change is a raw system call (syscall(2)): glibc's
 * setuid/setgroups wrappers signal every thread of the process to change
 * theirs too, which in a vfork child would reach the daemon's threads.
 * The raw calls change the calling thread only.
 *
 * Follows Postfix pipe(8) (user=, resolved by the master, set by the
 * child before exec) and s6-setuidgid.  Needs CAP_SETUID and CAP_SETGID
 * (or root); kill(2) of the hooks' process groups needs CAP_KILL.
 */
#ifndef TASKSPOOL_HOOKCRED_H
#define TASKSPOOL_HOOKCRED_H

#include <sys/types.h>

/* Supplementary groups kept for the hook user: NGROUPS_MAX is 65536,
 * but an account in more than 64 groups is not a service account. */
#define HOOKCRED_NGROUPS_MAX	64

struct hook_cred {
	int active;			/* 0: hooks run as the daemon */
	uid_t uid;
	gid_t gid;			/* primary group (hook_group) */
	int ngroups;			/* groups[0..ngroups) */
	gid_t groups[HOOKCRED_NGROUPS_MAX];
	char user[64];			/* names as configured, for logs */
	char group[64];
};

/* The daemon's filesystem identity before hookcred_enter. */
struct hookcred_saved {
	int switched;
	uid_t fsuid;
	gid_t fsgid;
	int dumpable;			/* PR_GET_DUMPABLE before: a change of
					 * fsuid or fsgid clears it */
};

/*
 * Resolve user (a name or a numeric uid; "" = none) and group (a name or
 * a gid; "" = the user's primary group) into *hc (getpwnam_r,
 * getgrnam_r, getgrouplist: not async-signal-safe, never in a child).
 * hc->active is 0 when user is "" or is this process's own uid with its
 * own gid.  Returns 0, or -1 with "hook_user: ..." or "hook_group: ..."
 * in why (unknown name, uid 0, lookup error).
 */
int hookcred_resolve(const char *user, const char *group,
    struct hook_cred *hc, char *why, size_t whylen);

/*
 * Whether this process can run hooks as hc: it has CAP_SETUID, CAP_SETGID
 * and CAP_KILL in its effective set (root has them), and a filesystem
 * identity switch to hc and back works.  Returns 0 (also when
 * !hc->active), or -1 with the missing capability named in why.
 */
int hookcred_check(const struct hook_cred *hc, char *why, size_t whylen);

/* What hookcred_enter switches. */
#define HOOKCRED_GROUP	1	/* fsgid only: files made are the hooks'
				 * group, chown to it needs no CAP_CHOWN */
#define HOOKCRED_USER	3	/* fsgid and fsuid: access as the hook */

/*
 * The calling thread's file access becomes hc's (setfsgid, then with
 * HOOKCRED_USER setfsuid; what is HOOKCRED_GROUP or HOOKCRED_USER); *s
 * keeps what to restore.  Only the filesystem identity changes: the
 * daemon's supplementary groups stay, so callers check that what they
 * read is owned by hc->uid.  A no-op when hc is NULL or not active.
 * Returns 0, or -1 (EPERM: the switch did not take; nothing is changed
 * then).  Always pair with hookcred_leave(s), which also gives the
 * process back the dumpable flag the switch cleared (commit_creds; else
 * its /proc entries would turn root's and it would dump no core).
 */
int hookcred_enter(const struct hook_cred *hc, int what,
    struct hookcred_saved *s);

/* Restore the filesystem identity saved by hookcred_enter (s may hold a
 * failed or no-op enter: then nothing is done). */
void hookcred_leave(const struct hookcred_saved *s);

/*
 * In a hook's child (after vfork or fork, before execve): become hc for
 * good — setgroups, setresgid, setresuid, then drop every capability
 * (effective, permitted, inheritable, ambient) and set
 * PR_SET_NO_NEW_PRIVS, so neither the hook nor what it executes
 * (set-user-ID files, file capabilities) holds a privilege.
 * Async-signal-safe: system calls only.  Returns 0, or -1 with errno
 * (EPERM without CAP_SETUID/CAP_SETGID, EAGAIN over RLIMIT_NPROC...).
 */
int hookcred_become(const struct hook_cred *hc);

/*
 * In a hook's child without hook_user, of a daemon that is not root: drop
 * the capabilities the daemon was given (ambient, inheritable, permitted,
 * effective: e.g. the unit's AmbientCapabilities=), so the hook has none.
 * (Not for a root daemon: its hooks get root's again at execve, and an
 * execve that raises capabilities clears PR_SET_PDEATHSIG.)
 * Async-signal-safe.  Returns 0, or -1 with errno.
 */
int hookcred_drop_caps(void);

#endif
