/*
 * cli_apps — `taskspool apps add|list|rotate|disable|enable|rate|weight|
 * console`;
 * see
 * cli_apps.h and taskspool(1).  Edits are serialised with flock(2) on
 * <apps file>.lock and written with apps_write (tmp + fsync + rename).
 */
#include "cli/cli_apps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sysexits.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "api/apps.h"

static const char usage[] =
"usage: taskspool apps add APPID --codes CODE[,CODE...]|'*' [--rate N]\n"
"       taskspool apps list\n"
"       taskspool apps rate APPID N|default\n"
"       taskspool apps weight APPID N|default   (1..100: its fair share)\n"
"       taskspool apps console APPID read|operate   (its web console role)\n"
"       taskspool apps rotate APPID [--revoke-old]\n"
"       taskspool apps disable APPID\n"
"       taskspool apps enable APPID\n";

static int
lock_file(const char *path)
{
	char lp[4200];
	int fd;

	snprintf(lp, sizeof(lp), "%s.lock", path);
	fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int
save(const struct apps *a, const char *path)
{
	char why[4400];

	if (apps_write(a, path, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool apps: %s\n", why);
		return EX_IOERR;
	}
	return 0;
}

static int
list(const struct apps *a, int json)
{
	for (size_t i = 0; i < a->nv; i++) {
		const struct app *p = &a->v[i];
		/* Only a hint of each secret: the last 4 characters. */
		const char *h0 = p->secrets[0] + strlen(p->secrets[0]) - 4;
		const char *h1 = p->nsecrets > 1 ? p->secrets[1] +
		    strlen(p->secrets[1]) - 4 : NULL;
		char rate[24];
		int weight = p->weight > 0 ? p->weight : 1;

		if (p->rate == APPS_RATE_DEFAULT)
			snprintf(rate, sizeof(rate), json ? "null" :
			    "default");
		else
			snprintf(rate, sizeof(rate), "%ld", p->rate);

		if (json)
			printf("{\"appId\":\"%s\",\"enabled\":%s,"
			    "\"taskCodes\":\"%s\",\"secrets\":%d,"
			    "\"secretHints\":[\"%s\"%s%s%s],\"rate\":%s,"
			    "\"weight\":%d,\"console\":\"%s\"}\n",
			    p->id, p->enabled ? "true" : "false", p->codes,
			    p->nsecrets, h0, h1 ? ",\"" : "", h1 ? h1 : "",
			    h1 ? "\"" : "", rate, weight,
			    apps_role_name(p->role));
		else
			printf("%-24s %-8s secrets=%d (...%s%s%s) codes=%s "
			    "console=%s weight=%d rate=%s\n", p->id,
			    p->enabled ? "enabled" : "disabled", p->nsecrets,
			    h0, h1 ? ", ..." : "", h1 ? h1 : "", p->codes,
			    apps_role_name(p->role), weight, rate);
	}
	return 0;
}

int
cli_apps_main(int argc, char **argv, const char *path, int json)
{
	struct apps a;
	struct app *p;
	char why[4400], secret[APPS_SECRET_MAX + 1] = "";
	const char *cmd = argc > 1 ? argv[1] : "";
	int lk, rc;

	if (argc < 2 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EX_USAGE : 0;
	}
	if (strcmp(cmd, "list") == 0) {
		if (argc != 2) {
			fputs(usage, stderr);
			return EX_USAGE;
		}
		if (apps_load(path, &a, why, sizeof(why)) != 0) {
			fprintf(stderr, "taskspool apps: %s\n", why);
			return errno == EINVAL ? EX_CONFIG : EX_IOERR;
		}
		rc = list(&a, json);
		apps_free(&a);
		return rc;
	}
	if (argc < 3 || !apps_id_ok(argv[2])) {
		if (argc >= 3)
			fprintf(stderr, "taskspool apps: \"%s\" is not an "
			    "AppId ([A-Za-z0-9_-]{1,64})\n", argv[2]);
		else
			fputs(usage, stderr);
		return EX_USAGE;
	}
	if ((lk = lock_file(path)) < 0) {
		fprintf(stderr, "taskspool apps: %s.lock: %s\n", path,
		    strerror(errno));
		return EX_IOERR;
	}
	if (apps_load(path, &a, why, sizeof(why)) != 0) {
		fprintf(stderr, "taskspool apps: %s\n", why);
		close(lk);
		return errno == EINVAL ? EX_CONFIG : EX_IOERR;
	}
	p = apps_find(&a, argv[2]);
	rc = EX_USAGE;
	if (strcmp(cmd, "add") == 0) {
		struct app n;

		long rate = APPS_RATE_DEFAULT;

		if ((argc != 5 && argc != 7) || strcmp(argv[3], "--codes") !=
		    0 || (argc == 7 && strcmp(argv[5], "--rate") != 0)) {
			fputs(usage, stderr);
			goto out;
		}
		if (argc == 7 && apps_rate_parse(argv[6], &rate) != 0) {
			fprintf(stderr, "taskspool apps: --rate: \"%s\" is not "
			    "a whole number 0..%d\n", argv[6], APPS_RATE_MAX);
			goto out;
		}
		if (p != NULL) {
			fprintf(stderr, "taskspool apps: %s exists (use "
			    "rotate for a new secret)\n", argv[2]);
			rc = EX_CANTCREAT;
			goto out;
		}
		memset(&n, 0, sizeof(n));
		memcpy(n.id, argv[2], strlen(argv[2]) + 1);
		n.enabled = 1;
		n.rate = rate;
		n.weight = APPS_WEIGHT_DEFAULT;
		n.role = APPS_ROLE_DEFAULT;
		snprintf(n.codes, sizeof(n.codes), "%s", argv[4]);
		if (apps_new_secret(n.secrets[0], sizeof(n.secrets[0])) != 0) {
			rc = EX_SOFTWARE;
			goto out;
		}
		n.nsecrets = 1;
		{
			/* Check the codes with the file's own parser. */
			char line[APPS_CODES_MAX + 256];
			struct apps chk;

			snprintf(line, sizeof(line), "x enabled %s %s\n",
			    n.codes, n.secrets[0]);
			if (apps_parse(line, strlen(line), &chk, why,
			    sizeof(why)) != 0) {
				fprintf(stderr, "taskspool apps: --codes: "
				    "\"%s\" is not '*' or task codes "
				    "separated by commas\n", argv[4]);
				OPENSSL_cleanse(line, sizeof(line));
				rc = EX_DATAERR;
				goto out;
			}
			OPENSSL_cleanse(line, sizeof(line));
			apps_free(&chk);
		}
		snprintf(secret, sizeof(secret), "%s", n.secrets[0]);
		if (apps_add(&a, &n) != 0) {
			rc = EX_SOFTWARE;
			goto out;
		}
		OPENSSL_cleanse(&n, sizeof(n));
		if ((rc = save(&a, path)) == 0)
			printf("%s\n", secret);
		goto out;
	}
	if (p == NULL) {
		fprintf(stderr, "taskspool apps: no app %s in %s\n", argv[2],
		    path);
		rc = EX_NOINPUT;
		goto out;
	}
	if (strcmp(cmd, "disable") == 0 || strcmp(cmd, "enable") == 0) {
		if (argc != 3) {
			fputs(usage, stderr);
			goto out;
		}
		p->enabled = strcmp(cmd, "enable") == 0;
		rc = save(&a, path);
	} else if (strcmp(cmd, "rate") == 0) {
		long rate = APPS_RATE_DEFAULT;

		if (argc != 4 || (strcmp(argv[3], "default") != 0 &&
		    apps_rate_parse(argv[3], &rate) != 0)) {
			if (argc == 4)
				fprintf(stderr, "taskspool apps: rate: \"%s\" "
				    "is not \"default\" or a whole number "
				    "0..%d\n", argv[3], APPS_RATE_MAX);
			else
				fputs(usage, stderr);
			goto out;
		}
		p->rate = rate;
		rc = save(&a, path);
	} else if (strcmp(cmd, "weight") == 0) {
		long w = 0;

		if (argc != 4 || (strcmp(argv[3], "default") != 0 &&
		    (apps_rate_parse(argv[3], &w) != 0 || w < 1 ||
		    w > APPS_WEIGHT_MAX))) {
			if (argc == 4)
				fprintf(stderr, "taskspool apps: weight: "
				    "\"%s\" is not \"default\" or a whole "
				    "number 1..%d\n", argv[3], APPS_WEIGHT_MAX);
			else
				fputs(usage, stderr);
			goto out;
		}
		p->weight = strcmp(argv[3], "default") == 0 ?
		    APPS_WEIGHT_DEFAULT : (int)w;
		rc = save(&a, path);
	} else if (strcmp(cmd, "console") == 0) {
		int r = argc == 4 ? apps_role_parse(argv[3]) : -1;

		if (r < 0) {
			if (argc == 4)
				fprintf(stderr, "taskspool apps: console: "
				    "\"%s\" is not \"read\" or \"operate\"\n",
				    argv[3]);
			else
				fputs(usage, stderr);
			goto out;
		}
		p->role = r;
		rc = save(&a, path);
	} else if (strcmp(cmd, "rotate") == 0) {
		if (argc == 4 && strcmp(argv[3], "--revoke-old") == 0) {
			/* End of the rotation: only the newest stays. */
			p->nsecrets = 1;
			OPENSSL_cleanse(p->secrets[1], sizeof(p->secrets[1]));
			rc = save(&a, path);
			goto out;
		}
		if (argc != 3) {
			fputs(usage, stderr);
			goto out;
		}
		/* The new secret first; the previous newest stays active
		 * until rotate --revoke-old. */
		memcpy(p->secrets[1], p->secrets[0], sizeof(p->secrets[0]));
		if (apps_new_secret(p->secrets[0], sizeof(p->secrets[0])) !=
		    0) {
			rc = EX_SOFTWARE;
			goto out;
		}
		p->nsecrets = 2;
		snprintf(secret, sizeof(secret), "%s", p->secrets[0]);
		if ((rc = save(&a, path)) == 0)
			printf("%s\n", secret);
	} else {
		fprintf(stderr, "taskspool apps: unknown subcommand \"%s\"\n%s",
		    cmd, usage);
	}
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	apps_free(&a);
	close(lk);
	return rc;
}
