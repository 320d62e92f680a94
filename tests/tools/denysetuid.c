/*
 * denysetuid — run a program under a seccomp filter that makes
 * setresuid(2) fail with EPERM (every other system call allowed), for
 * t0019: the daemon's start-up check of hook_user (setfsuid) passes, and
 * the switch in a hook's child then fails as a kernel refusal would.
 * Usage: denysetuid PROGRAM [ARG...].  Sets PR_SET_NO_NEW_PRIVS (needed
 * to install a filter without CAP_SYS_ADMIN; ambient capabilities pass
 * execve all the same) and execs PROGRAM.  Exit 77 on an architecture it
 * does not know, 71 if the filter cannot be installed, 127 if PROGRAM
 * cannot be run.  Filter layout from seccomp(2), "EXAMPLES".
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH	AUDIT_ARCH_AARCH64
#endif

int
main(int argc, char **argv)
{
#ifdef ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setresuid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM &
		    SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (argc < 2) {
		fprintf(stderr, "usage: denysetuid PROGRAM [ARG...]\n");
		return 64;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("denysetuid: seccomp");
		return 71;
	}
	execv(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "denysetuid: unknown architecture\n");
	return 77;
#endif
}
