/*
 * taskspoold — the taskspool node daemon.  Thin main: options, config,
 * logging, then node_run().  See taskspoold(8).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool/config.h"
#include "spool/hooklimit.h"
#include "core/journal.h"
#include "spool/log.h"
#include "node/node.h"
#include "spool/spool.h"
#include "core/version.h"

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: taskspoold [-dnv] [-c file] [-s spool] [-i node] [-j slots]\n"
"                  [-o key=value]...\n"
"\n"
"Run the taskspool node daemon on a spool (embedded mode: no servers).\n"
"\n"
"  -c file       configuration file (default: <spool>/taskspool.conf,\n"
"                else /etc/taskspool/taskspool.conf, else built-in)\n"
"  -s spool      spool directory (overrides the file's spool =)\n"
"  -i node       node id of this daemon (overrides node_id =)\n"
"  -j slots      hooks run at once (overrides slots =)\n"
"  -o key=value  set any configuration key (see taskspool config)\n"
"  -d            stay in the foreground; log to stderr (unless\n"
"                log_target = syslog)\n"
"  -n            check the configuration and the spool, print it, exit\n"
"  -v            verbose (log_level = debug)\n"
"  -h, --help    this help\n"
"  -V, --version print the version and exit\n"
"\n"
"Signals: SIGTERM/SIGINT drain (no new claims, running hooks finish; a\n"
"second one stops the hooks), SIGHUP reloads the configuration.\n"
"Exit status: 0 after a clean stop, 64 usage, 78 configuration error,\n"
"75 node id already in use, 73 cannot create a spool file, 71 system\n"
"error.\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cfile = NULL, *spool = NULL;
	char *sets[64];
	int owned[64];
	int nsets = 0, fg = 0, check = 0, verbose = 0, ch, rc, use_syslog;
	struct config cfg;
	char why[1024];

	argv[0] = (char *)"taskspoold";	/* getopt's messages name argv[0] */
	while ((ch = getopt_long(argc, argv, "c:s:i:j:o:dnvhV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			cfile = optarg;
			break;
		case 's':
			spool = optarg;
			break;
		case 'i':
		case 'j':
		case 'o':
			if (nsets == 64) {
				fprintf(stderr, "taskspoold: too many "
				    "settings\n");
				return EX_USAGE;
			}
			if (ch == 'o') {
				owned[nsets] = 0;
				sets[nsets++] = optarg;
			} else {
				size_t l = strlen(optarg) + 16;
				char *s = malloc(l);

				if (s == NULL)
					return EX_OSERR;
				snprintf(s, l, "%s=%s", ch == 'i' ? "node_id" :
				    "slots", optarg);
				owned[nsets] = 1;
				sets[nsets++] = s;
			}
			break;
		case 'd':
			fg = 1;
			break;
		case 'n':
			check = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'V':
			printf("taskspoold %s\n", TASKSPOOL_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return EX_USAGE;
	}
	log_init("taskspoold", 0, LOG_LEVEL_INFO);
	config_defaults(&cfg);
	if (spool == NULL)
		spool = getenv("TASKSPOOL_SPOOL");
	if (spool != NULL && spool[0] == '\0')
		spool = NULL;	/* -s "" or TASKSPOOL_SPOOL=: none given */
	if (config_locate(&cfg, cfile, spool, why, sizeof(why)) != 0)
		fatalx(EX_CONFIG, "%s", why);
	for (int i = 0; i < nsets; i++) {
		char *eq = strchr(sets[i], '='), key[64];

		if (eq == NULL || (size_t)(eq - sets[i]) >= sizeof(key))
			fatalx(EX_USAGE, "-o %s: expected key=value", sets[i]);
		memcpy(key, sets[i], (size_t)(eq - sets[i]));
		key[eq - sets[i]] = '\0';
		if ((rc = config_set(&cfg, key, eq + 1, why, sizeof(why))) !=
		    0)
			fatalx(rc == CONFIG_OUT_OF_RANGE ? EX_CONFIG :
			    EX_USAGE, "%s", why);
	}
	if (verbose)
		snprintf(cfg.log_level, sizeof(cfg.log_level), "debug");
	if (config_finish(&cfg, why, sizeof(why)) != 0 ||
	    hooklimit_check_process(&cfg, why, sizeof(why)) != 0)
		fatalx(EX_CONFIG, "%s", why);
	if (cfg.repeated[0] != '\0')
		log_warnx("%s", cfg.repeated);
	/* The hooks' account: resolved here, never in a hook's child. */
	if (hookcred_resolve(cfg.hook_user, cfg.hook_group, &cfg.hookcred,
	    why, sizeof(why)) != 0 ||
	    hookcred_check(&cfg.hookcred, why, sizeof(why)) != 0)
		fatalx(EX_CONFIG, "%s%s%s", cfg.source, cfg.source[0] ? ": " :
		    "", why);
	if (cfg.hookcred.active) {
		/* Secrets hook_user could read defeat it: refuse to start. */
		const char *secret[2] = { cfg.source, cfg.apps_file };

		for (int i = 0; i < 2; i++) {
			struct stat st;

			if (secret[i][0] != '\0' && stat(secret[i], &st) == 0 &&
			    (st.st_mode & S_IROTH))
				fatalx(EX_CONFIG, "%s is readable by every "
				    "user, hook_user %s included: chmod o-r "
				    "%s (root:taskspool 0640 is the layout)",
				    secret[i], cfg.hookcred.user, secret[i]);
		}
	}
	{
		struct stat st;
		char inc[CONFIG_PATH_MAX + 16];

		snprintf(inc, sizeof(inc), "%s/incoming", cfg.spool);
		if (stat(inc, &st) != 0 && errno == ENOENT)
			fatalx(EX_CONFIG, "no spool at %s (run `taskspool init "
			    "%s`)", cfg.spool, cfg.spool);
	}
	if (check) {
		struct spool sp;

		if (spool_open(&sp, cfg.spool, NULL, 0, why, sizeof(why)) != 0)
			fatalx(EX_CONFIG, "%s", why);
		spool_close(&sp);
		if (access(cfg.spool, R_OK | W_OK | X_OK) != 0)
			fatal(EX_CONFIG, "spool %s", cfg.spool);
		if (access(cfg.hooks_dir, R_OK | X_OK) != 0)
			fatal(EX_CONFIG, "hooks_dir %s", cfg.hooks_dir);
		printf("# configuration OK (%s)\n", cfg.source[0] ?
		    cfg.source : "built-in defaults");
		config_dump(&cfg, stdout, 1);
		return 0;
	}
	if (cfile != NULL && cfile[0] != '/') {
		/* daemon(3) moves to "/": keep the file SIGHUP re-reads. */
		static char abs_cfile[4096];

		if (realpath(cfile, abs_cfile) != NULL)
			cfile = abs_cfile;
	}
	/* log_target: empty = stderr with -d, syslog when detached;
	 * journal = native entries, stderr (kept open) when journald does
	 * not take one. */
	use_syslog = strcmp(cfg.log_target, "syslog") == 0 ||
	    (cfg.log_target[0] == '\0' && !fg);
	if (strcmp(cfg.log_target, "journal") == 0) {
		const char *js = getenv("TASKSPOOL_JOURNAL_SOCKET");

		if (log_set_journal(js != NULL && js[0] != '\0' ? js :
		    JOURNAL_SOCKET) != 0)
			fatal(EX_CONFIG, "log_target = journal: socket %s",
			    js != NULL ? js : JOURNAL_SOCKET);
	}
	log_set_format((enum log_format)log_format_parse(cfg.log_format));
	log_set_node(cfg.node_id);
	if (!fg) {
		int fd;

		if (daemon(0, 1) != 0)
			fatal(EX_OSERR, "daemon");
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			if (use_syslog)
				dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		log_init("taskspoold", use_syslog, LOG_LEVEL_INFO);
	} else {
		/* Make sure 0-2 are open so no task file lands on them. */
		int fd;

		while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
			;
		if (fd > 2)
			close(fd);
		if (use_syslog)
			log_init("taskspoold", 1, LOG_LEVEL_INFO);
	}
	log_set_level((enum log_level)log_level_parse(cfg.log_level));
	rc = node_run(&cfg, cfile, (const char *const *)sets, nsets);
	for (int i = 0; i < nsets; i++)
		if (owned[i])
			free(sets[i]);
	return rc;
}
