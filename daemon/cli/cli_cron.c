/*
 * cli_cron.c — "taskspool cron next": print the next fire instants of a
 * cron expression.
 *
 * A thin policy layer over cron.c and tz.c: options, the default zone of
 * the host, RFC 3339 in and out.  Output lines have exactly the format of
 * the `next` lists of tests/data/cron-vectors.jsonl, so that file can be
 * replayed through this command.  Errors are messages on stderr and a
 * sysexits status returned to the caller; nothing here calls exit().
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_cron.h"
#include "cli/cli_cronexplain.h"
#include "core/cron.h"
#include "core/tz.h"
#include "spool/tzload.h"

#define CLI_CRON_N_DEFAULT	5
#define CLI_CRON_N_MAX		100000	/* most lines per call */
#define CLI_ZONEINFO		"/usr/share/zoneinfo/"

static void
cli_cron_usage(FILE *fp)
{
	fprintf(fp,
	    "usage: taskspool cron next|explain EXPR "
	    "[--dialect vixie|quartz|systemd]\n"
	    "                      [--tz ZONE] [--from RFC3339] [-n N]\n"
	    "\n"
	    "next: print the next N (default %d) fire times of cron "
	    "expression EXPR, one\n"
	    "per line, in RFC 3339 with the zone's offset (Z for UTC).\n"
	    "explain: say in words what EXPR matches, its next N fires, and "
	    "what the\n"
	    "zone's next offset change (DST) does to it.\n"
	    "\n"
	    "  EXPR              one argument: 5 fields or @macro (vixie), "
	    "6 or 7 (quartz),\n"
	    "                    a calendar event (systemd: "
	    "\"Mon..Fri 09:00\", \"daily\")\n"
	    "  --dialect D       vixie, quartz or systemd (default: from the "
	    "form of EXPR)\n"
	    "  --tz ZONE         IANA zone, e.g. Europe/Riga (default: the "
	    "zone a systemd\n"
	    "                    EXPR ends with, else TZ, /etc/timezone, "
	    "/etc/localtime, UTC)\n"
	    "  --from TIME       start strictly after TIME, e.g. "
	    "2024-03-10T01:30:00-05:00\n"
	    "                    (default: now)\n"
	    "  -n N              how many times to print (1-%d)\n"
	    "  -h, --help        this text\n"
	    "\n"
	    "Exit: 0 ok, 1 no fire time, 64 usage, 65 EXPR does not parse, "
	    "74 output\n"
	    "cannot be written.\n",
	    CLI_CRON_N_DEFAULT, CLI_CRON_N_MAX);
}

static int
cli_cron_usage_error(void)
{
	fprintf(stderr, "Try 'taskspool cron --help'.\n");
	return EX_USAGE;
}

/* Name the option getopt_long() just complained about, into buf. */
static const char *
cli_cron_optname(int ac, char **av, char *buf, size_t buflen)
{
	if (optopt != 0 && optopt != '?') {
		(void)snprintf(buf, buflen, "-%c", optopt);
		return buf;
	}
	return optind >= 1 && optind <= ac ? av[optind - 1] : "?";
}

static int
two_digits(const char *s, int *v)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return -1;
	*v = (s[0] - '0') * 10 + (s[1] - '0');
	return 0;
}

/*
 * RFC 3339 date-time: YYYY-MM-DD("T"|"t"|" ")HH:MM:SS[.frac](Z|z|+HH:MM|
 * -HH:MM).  A fraction is dropped: fire times are whole seconds, so "after
 * hh:mm:ss.f" and "after hh:mm:ss" are the same question.  Second 60 (a
 * leap second) reads as 59 for the same reason.
 */
static int
cli_rfc3339_parse(const char *s, int64_t *t)
{
	int y1, y2, mo, d, h, mi, sec, oh, om, off = 0;
	int64_t v;

	if (strlen(s) < 20 || two_digits(s, &y1) != 0 ||
	    two_digits(s + 2, &y2) != 0 || s[4] != '-' ||
	    two_digits(s + 5, &mo) != 0 || s[7] != '-' ||
	    two_digits(s + 8, &d) != 0 ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    two_digits(s + 11, &h) != 0 || s[13] != ':' ||
	    two_digits(s + 14, &mi) != 0 || s[16] != ':' ||
	    two_digits(s + 17, &sec) != 0)
		return -1;
	s += 19;
	if (*s == '.') {
		if (s[1] < '0' || s[1] > '9')
			return -1;
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	}
	if ((*s == 'Z' || *s == 'z') && s[1] == '\0') {
		off = 0;
	} else if ((*s == '+' || *s == '-') && two_digits(s + 1, &oh) == 0 &&
	    s[3] == ':' && two_digits(s + 4, &om) == 0 && s[6] == '\0') {
		if (oh > 23 || om > 59)
			return -1;
		off = (oh * 3600 + om * 60) * (*s == '-' ? -1 : 1);
	} else {
		return -1;
	}
	if (mo < 1 || mo > 12 || d < 1 ||
	    d > tz_month_days(y1 * 100 + y2, mo) || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	if (sec == 60)
		sec = 59;
	v = tz_days_from_civil(y1 * 100 + y2, mo, d) * 86400 + h * 3600 +
	    mi * 60 + sec - off;
	if (v < TZ_EPOCH_MIN || v > TZ_EPOCH_MAX)
		return -1;
	*t = v;
	return 0;
}


int
cli_cron_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dialect", required_argument, NULL, 'd' },
		{ "tz", required_argument, NULL, 'z' },
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char why[CRON_WHY_MAX + TZ_NAME_MAX], out[TZ_RFC3339_MAX], *end;
	char optbuf[8], **av = NULL;
	const char *zname = NULL, *from = NULL, *text, *dash_expr[2];
	struct cron_expr *e = NULL;
	struct tz *z = NULL;
	struct timespec now;
	enum cron_dialect d = CRON_DIALECT_VIXIE;
	int64_t t;
	long n = CLI_CRON_N_DEFAULT, i;
	int ch, have_dialect = 0, rc, r, ac = 0, ndash = 0, explain;

	if (argc < 2) {
		cli_cron_usage(stderr);
		return EX_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		cli_cron_usage(stdout);
		return 0;
	}
	explain = strcmp(argv[1], "explain") == 0;
	if (strcmp(argv[1], "next") != 0 && !explain) {
		fprintf(stderr, "taskspool cron: unknown subcommand \"%s\"\n",
		    argv[1]);
		return cli_cron_usage_error();
	}
	/*
	 * getopt_long() sees "next" as its program name.  An argument that
	 * starts with '-' but holds a blank is an expression ("-1 * * * *",
	 * which must fail as a parse error, not as an option): no option has
	 * a blank, so take it out of getopt's way.
	 */
	if ((av = calloc((size_t)argc, sizeof *av)) == NULL) {
		fprintf(stderr, "taskspool cron: out of memory\n");
		return EX_OSERR;
	}
	av[ac++] = argv[1];
	for (i = 2; i < argc; i++) {
		if (argv[i][0] == '-' && strpbrk(argv[i], " \t") != NULL)
			dash_expr[ndash < 2 ? ndash++ : 1] = argv[i];
		else
			av[ac++] = argv[i];
	}
	optind = 0;		/* glibc: full re-initialisation */
	opterr = 0;
	rc = EX_USAGE;
	while ((ch = getopt_long(ac, av, ":n:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			if (cron_dialect_from_name(optarg, &d) != 0) {
				fprintf(stderr, "taskspool cron: --dialect "
				    "must be vixie, quartz or systemd\n");
				rc = cli_cron_usage_error();
				goto out;
			}
			have_dialect = 1;
			break;
		case 'z':
			zname = optarg;
			break;
		case 'f':
			from = optarg;
			break;
		case 'n':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    n < 1 || n > CLI_CRON_N_MAX) {
				fprintf(stderr, "taskspool cron: -n must be "
				    "1-%d\n", CLI_CRON_N_MAX);
				rc = cli_cron_usage_error();
				goto out;
			}
			break;
		case 'h':
			cli_cron_usage(stdout);
			rc = 0;
			goto out;
		case ':':
			fprintf(stderr, "taskspool cron: %s needs a value\n",
			    cli_cron_optname(ac, av, optbuf, sizeof optbuf));
			rc = cli_cron_usage_error();
			goto out;
		default:
			fprintf(stderr, "taskspool cron: unknown option %s\n",
			    cli_cron_optname(ac, av, optbuf, sizeof optbuf));
			rc = cli_cron_usage_error();
			goto out;
		}
	}
	if (ac - optind + ndash != 1) {
		fprintf(stderr, "taskspool cron %s: expected one EXPR "
		    "(quote it: \"*/5 * * * *\")\n", argv[1]);
		rc = cli_cron_usage_error();
		goto out;
	}
	text = ndash == 1 ? dash_expr[0] : av[optind];

	if (!have_dialect && cron_dialect_guess(text, &d) != 0)
		d = CRON_DIALECT_VIXIE; /* whose error names the count */
	if ((e = cron_parse(text, d, why, sizeof why)) == NULL) {
		fprintf(stderr, "taskspool cron: %s\n", why);
		rc = EX_DATAERR;
		goto out;
	}

	if (cron_zone(e) != NULL && zname != NULL &&
	    !tz_names_same(cron_zone(e), zname)) {
		fprintf(stderr, "taskspool cron: EXPR names zone %s but --tz "
		    "says %s: give one of them\n", cron_zone(e), zname);
		rc = EX_USAGE;
		goto out;
	}
	if (zname == NULL && cron_zone(e) != NULL &&
	    (z = tz_load(cron_zone(e), why, sizeof why)) == NULL) {
		fprintf(stderr, "taskspool cron: zone at the end of EXPR: %s "
		    "(an IANA name such as Europe/Berlin; abbreviations like "
		    "CEST are not zones)\n", why);
		rc = EX_DATAERR;
		goto out;
	}
	if (z == NULL)
		z = zname != NULL ? tz_load(zname, why, sizeof why) :
		    tz_load_host(why, sizeof why);
	if (z == NULL) {
		fprintf(stderr, "taskspool cron: %s%s\n",
		    zname != NULL ? "--tz: " : "TZ: ", why);
		rc = EX_USAGE;
		goto out;
	}

	if (from != NULL) {
		if (cli_rfc3339_parse(from, &t) != 0) {
			fprintf(stderr, "taskspool cron: --from: \"%s\" is "
			    "not an RFC 3339 time like 2024-03-10T01:30:00Z "
			    "(years 0001-9999)\n", from);
			rc = EX_USAGE;
			goto out;
		}
	} else {
		(void)clock_gettime(CLOCK_REALTIME, &now);
		t = (int64_t)now.tv_sec;
	}

	if (explain) {
		rc = cli_cron_explain(text, d, e, z, t, n);
		goto out;
	}
	rc = 0;
	for (i = 0; i < n; i++) {
		r = cron_next_fire(e, z, t, &t);
		if (r != 1) {
			/* -1 here is ERANGE: the end of year 9999. */
			if (i == 0) {
				if (d == CRON_DIALECT_SYSTEMD)
					fprintf(stderr, "taskspool cron: "
					    "\"%s\" never fires after %s (a "
					    "calendar event ends with 2199)\n",
					    text, from != NULL ? from : "now");
				else
					fprintf(stderr, "taskspool cron: "
					    "\"%s\" never fires after %s "
					    "(searched %d years)\n", text,
					    from != NULL ? from : "now",
					    CRON_HORIZON_YEARS);
				rc = 1;
			} else {
				fprintf(stderr, "taskspool cron: only %ld fire "
				    "time%s: no more after the last\n", i,
				    i == 1 ? "" : "s");
			}
			break;
		}
		if (tz_format_rfc3339(z, t, out, sizeof out) != 0) {
			fprintf(stderr, "taskspool cron: cannot format "
			    "instant %lld\n", (long long)t);
			rc = EX_SOFTWARE;
			break;
		}
		printf("%s\n", out);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "taskspool cron: writing output failed\n");
		rc = EX_IOERR;
	}
out:
	tz_free(z);
	cron_free(e);
	free(av);
	return rc;
}
