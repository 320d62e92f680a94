/*
 * config — key = value configuration; see config.h.
 */
#include "spool/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alert.h"
#include "core/buf.h"
#include "core/delivery.h"
#include "core/limitspec.h"
#include "core/ratespec.h"
#include "core/ssrf.h"
#include "core/suggest.h"
#include "core/tags.h"
#include "core/task.h"
#include "core/whsign.h"
#include "spool/readfd.h"
#include "spool/log.h"
#include "spool/spool.h"
#include "core/textfile.h"

/* Bytes a taskspool.conf may hold: far above any real file, so a runaway
 * one (or /dev/zero by mistake) is refused, not read to the end. */
#define CONFIG_FILE_MAX	(1024 * 1024)

enum key_type { KEY_STR, KEY_LONG };

struct key_def {
	const char *name;
	enum key_type type;
	size_t off;
	size_t size;		/* KEY_STR buffer size */
	long min, max;		/* KEY_LONG range */
	const char *def;
	const char *help;
};

#define S(f, d, h) { #f, KEY_STR, offsetof(struct config, f), \
	sizeof(((struct config *)0)->f), 0, 0, d, h }
#define L(f, lo, hi, d, h) { #f, KEY_LONG, offsetof(struct config, f), 0, \
	lo, hi, d, h }

static const struct key_def keys[] = {
	S(spool, "/var/spool/taskspool", "spool root directory"),
	S(hooks_dir, "", "directory of hooks (executables named after task "
	    "codes); empty = <spool>/hooks"),
	S(node_id, "", "this daemon's node id ([A-Za-z0-9][A-Za-z0-9_.-]{0,63})"
	    "; empty = <host>-<yyyymmdd>-<nn> (daemon)"),
	S(tags, "", "this node's tags, comma-separated names "
	    "([A-Za-z0-9][A-Za-z0-9_.-]{0,63}, at most 32): a task with "
	    "requireTags runs only on a node that has them all; empty = none"),
	S(log_level, "info", "error | warning | info | debug"),
	S(on_failure, "", "taskCode of the alert task raised for a task "
	    "without onFailure that ends FAILED; empty = none"),
	S(on_failure_mode, "every", "every | transition: default "
	    "onFailureMode (README \"Failure alerts\")"),
	L(slots, 0, 4096, "0", "hooks run at once by one daemon; 0 = number "
	    "of CPUs"),
	L(max_retries, 0, 100, "3", "default maxRetries of a task (attempts "
	    "= retries + 1)"),
	L(timeout_sec, 1, 604800, "3600", "default timeoutSec of a task, "
	    "seconds"),
	L(kill_grace_ms, 0, 3600000, "5000", "ms between SIGTERM and SIGKILL "
	    "of a hook's process group on timeout or cancel"),
	L(retry_base_ms, 0, 86400000, "1000", "ms before the first retry; "
	    "doubles per attempt"),
	L(retry_max_ms, 0, 604800000, "600000", "ms, cap of one retry delay"),
	L(retry_jitter_pct, 0, 100, "20", "percent: a retry delay d is drawn "
	    "uniformly from [d - d*pct/100, d]"),
	L(scan_interval_ms, 100, 3600000, "5000", "ms between full rescans "
	    "of incoming/ (the safety net under inotify)"),
	L(settle_ms, 0, 600000, "2000", "ms: a file in incoming/ not "
	    "announced complete, or ending early, and younger than this may "
	    "still be written"),
	L(priority_aging_sec, 0, 86400, "60", "seconds a due task waits per "
	    "priority level it climbs (0: no aging)"),
	L(heartbeat_ms, 100, 600000, "5000", "ms between heartbeat writes"),
	L(reap_interval_ms, 100, 600000, "1000", "ms between the leader's "
	    "reaper passes"),
	L(log_cap_bytes, 0, 1L << 40, "1048576", "bytes kept per stream per "
	    "attempt in logs/"),
	L(tail_bytes, 0, 1048576, "4096", "bytes of stdout/stderr tail in "
	    "the result file"),
	L(result_max_bytes, 0, 1048576 * 16, "1048576", "largest hook result "
	    "($TASKSPOOL_RESULT_FILE) accepted, bytes"),
	L(fsync, 0, 1, "1", "1 = every state change is durable (fsync); 0 "
	    "= no fsync, for throw-away test spools only"),
	L(metrics_interval_ms, 0, 3600000, "5000", "ms between rewrites of "
	    "metrics/<node>.prom (Prometheus text format); 0 = no metrics"),
	S(log_format, "logfmt", "logfmt (one key=value line per event) | "
	    "text"),
	S(log_target, "", "stderr | syslog | journal; empty = stderr with -d, "
	    "else syslog"),
	S(apps_file, "", "the HTTP API's apps and secrets (taskspool apps); "
	    "empty = <spool>/apps.conf"),
	S(callback_delays_ms, "5000,30000,120000,600000,1800000", "callback "
	    "retry delays in ms, each counted from the end of the failed try; "
	    "tries = delays + 1 (1..16 delays, comma-separated)"),
	L(callback_jitter_pct, 0, 100, "20", "percent: a callback retry delay "
	    "d is drawn uniformly from [d, d + d*pct/100)"),
	L(callback_timeout_ms, 1000, 30000, "3000", "ms, whole callback "
	    "attempt (DNS, connect, TLS, request, response status)"),
	L(callback_max_inflight, 1, 10000, "256", "callback requests one "
	    "daemon has in flight at once"),
	L(callback_allow_http, 0, 1, "0", "1 = callbacks may use plain http "
	    "(development only); 0 = https only"),
	S(callback_allowed_ports, "443,8443", "ports a callback URL may use "
	    "(comma-separated); empty = any port"),
	S(callback_allow_cidrs, "", "CIDRs callbacks may reach although "
	    "they are special-purpose (private, loopback...) addresses, "
	    "comma-separated; empty = none"),
	S(callback_secret, "", "whsec_ secret signing callbacks to a task's "
	    "callbackUrl when its app has no registration; empty = those "
	    "callbacks are refused"),
	S(callback_ca_file, "", "CA bundle (PEM) to verify callback "
	    "receivers with; empty = the system's"),
	S(mariadb, "", "MariaDB of the records (cluster mode): HOST:PORT, "
	    "/path/to/socket or mariadb://USER:PASSWORD@HOST:PORT/DB; "
	    "empty = embedded (result files only)"),
	S(mariadb_user, "taskspool", "MariaDB user when the mariadb value "
	    "names none"),
	S(mariadb_password, "", "MariaDB password when the mariadb value "
	    "names none"),
	S(mariadb_database, "taskspool", "MariaDB database when the mariadb "
	    "value names none"),
	L(records_reconcile_sec, 0, 86400, "300", "s between reconcile passes "
	    "of the record writer (MariaDB): a result file whose row is "
	    "missing or not terminal is written from results/ (also at "
	    "start); 0 = only at start"),
	S(redis, "", "host:port of the Redis server: cluster mode (leases, "
	    "heartbeats, leader lock in Redis); empty = embedded mode"),
	S(redis_password, "", "Redis AUTH password; empty = none"),
	L(redis_db, 0, 1000000, "0", "Redis database index (SELECT)"),
	S(redis_prefix, "taskspool:", "prefix of every Redis key (one "
	    "prefix per spool sharing a server)"),
	S(sentinel, "", "host:port[,host:port...] of Redis Sentinels: the "
	    "master is asked of them at each connection (overrides redis)"),
	S(sentinel_master, "mymaster", "master name given to the sentinels"),
	L(lease_ms, 1000, 86400000, "180000", "ms a Redis task lease lives "
	    "without renewal; a node that cannot renew kills the hook first"),
	L(lease_renew_ms, 100, 43200000, "30000", "ms between lease "
	    "renewals; at most lease_ms/2 (lease_ms/6 advised)"),
	S(max_concurrent, "", "maxConcurrent per task code across every "
	    "daemon of the spool: <taskCode>=<N>[,...]; tasks over it wait "
	    "(WAITING) in incoming/ or queue/; empty = no limit but slots"),
	S(max_concurrent_per_key, "", "attempts at once per task code and "
	    "concurrencyKey across every daemon of the spool: "
	    "<taskCode>=<N>[,...]; a task's maxConcurrentPerKey overrides "
	    "it; tasks over it wait (WAITING, with the key)"),
	S(rate_limit, "", "execution rate limit per task code across every "
	    "daemon of the spool: <taskCode>=<N>/<period>[:<burst>][,...], "
	    "period <n>ms|s|m|h|d, burst default N (GCRA: at most burst "
	    "starts at once, then one per period/N); tasks over it wait "
	    "(WAITING); empty = none"),
	S(rate_limit_per_key, "", "the same per (task code, concurrencyKey): "
	    "each key of a code has its own bucket; empty = none"),
	L(index_ttl_sec, 1, 31536000, "86400", "s a finished task's entry "
	    "stays in the Redis index (cluster mode; status then reads the "
	    "spool)"),
	L(inotify, 0, 1, "1", "0 = the daemon ignores inotify and finds new "
	    "files by rescans and Redis wake-ups only (tests; as on NFS)"),
	L(api_rate_limit, 0, 1000000, "0", "HTTP API: requests one AppId may "
	    "make per api_rate_window_sec (fixed window; more get 429 "
	    "RATE_LIMITED); apps.conf rate=N overrides it per app; 0 = no "
	    "limit"),
	L(api_rate_window_sec, 1, 86400, "1", "s, the window of "
	    "api_rate_limit"),
	L(hook_limit_nofile, 0, 1L << 30, "0", "RLIMIT_NOFILE of every hook "
	    "(open descriptors, soft = hard; at least 16); 0 = the daemon's"),
	L(hook_limit_as_bytes, 0, 1L << 50, "0", "RLIMIT_AS of every hook "
	    "(address space, bytes, soft = hard; at least 16777216); 0 = the "
	    "daemon's"),
	L(hook_limit_cpu_sec, 0, 604800, "0", "RLIMIT_CPU of every hook (s "
	    "of CPU time: SIGXCPU then, 1 s later, SIGKILL); 0 = the "
	    "daemon's"),
	L(hook_limit_fsize_bytes, 0, 1L << 50, "0", "RLIMIT_FSIZE of every "
	    "hook (largest file it may write, bytes: SIGXFSZ, or EFBIG when "
	    "it ignores that signal); 0 = the daemon's"),
	S(hook_user, "", "account hooks run as (a name or uid; the daemon "
	    "needs root or CAP_SETUID, CAP_SETGID, CAP_KILL); empty = the "
	    "daemon's own user"),
	S(hook_group, "", "primary group of the hooks (a name or gid); empty "
	    "= hook_user's own group"),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const struct key_def *
key_find(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

int
config_set(struct config *c, const char *key, const char *value, char *why,
    size_t whylen)
{
	const struct key_def *k = key_find(key);
	char *end;
	long v;

	if (k == NULL) {
		const char *names[NKEYS], *near;

		for (size_t i = 0; i < NKEYS; i++)
			names[i] = keys[i].name;
		if ((near = suggest_name(key, names, NKEYS)) != NULL)
			snprintf(why, whylen, "unknown key \"%s\" (did you "
			    "mean \"%s\"?)", key, near);
		else
			snprintf(why, whylen, "unknown key \"%s\" (taskspool "
			    "config lists every key)", key);
		return -1;
	}
	if (k->type == KEY_STR) {
		size_t n = strlen(value);

		/* Only values the file format can hold, so config_dump's
		 * output always reads back the same: config_dump writes
		 * "key = value", where a '#' first in the value, or after
		 * white space, would start a comment. */
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f ||
			    (value[i] == '#' && (i == 0 ||
			    isspace((unsigned char)value[i - 1])))) {
				snprintf(why, whylen, "%s: control character, "
				    "or \"#\" first or after white space, in "
				    "the value (it would start a comment)", key);
				return -1;
			}
		if (n > 0 && (isspace((unsigned char)value[0]) ||
		    isspace((unsigned char)value[n - 1]))) {
			snprintf(why, whylen, "%s: leading or trailing white "
			    "space in the value", key);
			return -1;
		}
		if (strlen(value) >= k->size) {
			snprintf(why, whylen, "%s: value longer than %zu bytes",
			    key, k->size - 1);
			return -1;
		}
		memcpy((char *)c + k->off, value, strlen(value) + 1);
		return 0;
	}
	errno = 0;
	v = strtol(value, &end, 10);
	if (value[0] == '\0' || *end != '\0' || errno != 0) {
		snprintf(why, whylen, "%s: \"%s\" is not a whole number", key,
		    value);
		return -1;
	}
	if (v < k->min || v > k->max) {
		snprintf(why, whylen, "%s: %ld out of range %ld..%ld", key, v,
		    k->min, k->max);
		return CONFIG_OUT_OF_RANGE;
	}
	*(long *)(void *)((char *)c + k->off) = v;
	return 0;
}

void
config_defaults(struct config *c)
{
	char why[256];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NKEYS; i++)
		if (config_set(c, keys[i].name, keys[i].def, why,
		    sizeof(why)) != 0)
			abort();	/* the table itself is wrong */
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int
config_load(struct config *c, const char *path, char *why, size_t whylen)
{
	FILE *fp = fopen(path, "re");
	char line[8192], msg[512];
	int lineno = 0, first[NKEYS] = { 0 };

	if (fp == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* fgets() and the string functions below stop at a NUL: check the
	 * bytes of the whole file first (issue 10). */
	{
		struct buf all;
		int bad;

		buf_init(&all, CONFIG_FILE_MAX);
		bad = buf_read_fd(&all, fileno(fp));
		if (bad != 0)
			snprintf(why, whylen, errno == EFBIG ? "%s: larger "
			    "than 1 MiB" : "%s: %s", path, strerror(errno));
		else if ((bad = textfile_check(path, all.data, all.len, why,
		    whylen)) == 0 && lseek(fileno(fp), 0, SEEK_SET) != 0) {
			snprintf(why, whylen, "%s: %s", path, strerror(errno));
			bad = -1;
		}
		buf_fini(&all);
		if (bad != 0)
			goto fail;
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *p, *eq, *hash;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(fp)) {
			snprintf(why, whylen, "%s:%d: line too long", path,
			    lineno);
			goto fail;
		}
		p = line;
		/* A comment starts at '#' at line start or after blank. */
		for (hash = p; (hash = strchr(hash, '#')) != NULL; hash++)
			if (hash == p || isspace((unsigned char)hash[-1])) {
				*hash = '\0';
				break;
			}
		p = trim(p);
		if (*p == '\0')
			continue;
		eq = strchr(p, '=');
		if (eq == NULL) {
			snprintf(why, whylen, "%s:%d: expected \"key = value\"",
			    path, lineno);
			goto fail;
		}
		*eq = '\0';
		if (config_set(c, trim(p), trim(eq + 1), msg, sizeof(msg))) {
			snprintf(why, whylen, "%s:%d: %s", path, lineno, msg);
			goto fail;
		}
		{
			const struct key_def *k = key_find(trim(p));
			size_t i = k != NULL ? (size_t)(k - keys) : 0;

			if (k != NULL && first[i] == 0)
				first[i] = lineno;
			else if (k != NULL && c->repeated[0] == '\0')
				snprintf(c->repeated, sizeof(c->repeated),
				    "%s: %s at line %d repeats line %d; the "
				    "later value is used", path, k->name,
				    lineno, first[i]);
		}
	}
	if (ferror(fp)) {
		snprintf(why, whylen, "%s: read error", path);
		goto fail;
	}
	fclose(fp);
	snprintf(c->source, sizeof(c->source), "%s", path);
	return 0;
fail:
	fclose(fp);
	errno = EINVAL;
	return -1;
}

int
config_locate(struct config *c, const char *explicit_path, const char *spool,
    char *why, size_t whylen)
{
	char path[CONFIG_PATH_MAX + 32];

	if (spool != NULL && config_set(c, "spool", spool, why, whylen))
		return -1;
	if (explicit_path != NULL) {
		if (config_load(c, explicit_path, why, whylen))
			return -1;
	} else {
		snprintf(path, sizeof(path), "%s/taskspool.conf", c->spool);
		if (access(path, F_OK) == 0) {
			if (config_load(c, path, why, whylen))
				return -1;
		} else if (access("/etc/taskspool/taskspool.conf", F_OK) == 0) {
			if (config_load(c, "/etc/taskspool/taskspool.conf", why,
			    whylen))
				return -1;
		}
	}
	/* A spool named on the command line wins over the file's. */
	if (spool != NULL && config_set(c, "spool", spool, why, whylen))
		return -1;
	return 0;
}

/* Make a path absolute (hooks are started from their work directory). */
static int
absolutize(char *path, size_t size, const char *key, char *why,
    size_t whylen)
{
	char cwd[CONFIG_PATH_MAX], tmp[CONFIG_PATH_MAX * 2 + 2];

	if (path[0] == '/' || path[0] == '\0')
		return 0;
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		snprintf(why, whylen, "%s: relative path and no working "
		    "directory: %s", key, strerror(errno));
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s/%s", cwd, path);
	if (strlen(tmp) >= size) {
		snprintf(why, whylen, "%s: path too long", key);
		return -1;
	}
	memcpy(path, tmp, strlen(tmp) + 1);
	return 0;
}

/*
 * The line of the file at path that last sets key, when that line's value
 * is value (so a value that came from -o is not blamed on the file); 0 if
 * none.
 */
static int
key_line(const char *path, const char *key, const char *value)
{
	FILE *fp = fopen(path, "re");
	char line[8192];
	int lineno = 0, found = 0;

	if (fp == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *p = line, *eq, *hash;

		lineno++;
		for (hash = p; (hash = strchr(hash, '#')) != NULL; hash++)
			if (hash == p || isspace((unsigned char)hash[-1])) {
				*hash = '\0';
				break;
			}
		if ((eq = strchr(p, '=')) == NULL)
			continue;
		*eq = '\0';
		if (strcmp(trim(p), key) == 0)
			found = strcmp(trim(eq + 1), value) == 0 ? lineno : 0;
	}
	fclose(fp);
	return found;
}

static int config_check(struct config *c, char *why, size_t whylen);

/*
 * Whether s is a user or group name as useradd(8) and groupadd(8) take
 * them (POSIX portable characters, at most 32, a trailing '$' allowed)
 * or a decimal id.
 */
static int
account_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n > 0 && s[n - 1] == '$')
		n--;
	if (n == 0 || n > 32 || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '.' && s[i] != '-')
			return 0;
	return 1;
}

int
config_finish(struct config *c, char *why, size_t whylen)
{
	char msg[1024], key[64];
	const struct key_def *k = NULL;
	size_t kl;
	int line = 0;

	if (config_check(c, msg, sizeof(msg)) == 0)
		return 0;
	/* Every message starts with "key: "; name the file and line. */
	kl = strcspn(msg, ":");
	if (kl < sizeof(key)) {
		memcpy(key, msg, kl);
		key[kl] = '\0';
		for (size_t i = 0; i < NKEYS; i++)
			if (strcmp(keys[i].name, key) == 0)
				k = &keys[i];
	}
	if (c->source[0] != '\0' && k != NULL && k->type == KEY_STR)
		line = key_line(c->source, key, (const char *)c + k->off);
	else if (c->source[0] != '\0' && k != NULL) {
		char v[32];

		snprintf(v, sizeof(v), "%ld", *(const long *)(const void *)
		    ((const char *)c + k->off));
		line = key_line(c->source, key, v);
	}
	if (line > 0)
		snprintf(why, whylen, "%s:%d: %s", c->source, line, msg);
	else if (c->source[0] != '\0' && k == NULL)
		snprintf(why, whylen, "%s: %s", c->source, msg);
	else
		snprintf(why, whylen, "%s", msg);
	errno = EINVAL;
	return -1;
}

int
config_check_callback(const struct config *c, char *why, size_t whylen)
{
	struct delivery_policy p;
	struct ssrf_allow a;
	unsigned char key[WHSIGN_KEY_MAX];
	char msg[200];

	delivery_policy_default(&p);
	if (delivery_policy_parse(&p, c->callback_delays_ms) != 0) {
		snprintf(why, whylen, "callback_delays_ms: \"%s\" is not 1..%d "
		    "comma-separated delays of 1..86400000 ms",
		    c->callback_delays_ms, DELIVERY_DELAYS_MAX);
		return -1;
	}
	if (ssrf_parse_ports(&a, c->callback_allowed_ports, msg,
	    sizeof(msg)) != 0) {
		snprintf(why, whylen, "callback_allowed_ports: %s", msg);
		return -1;
	}
	if (ssrf_parse_cidrs(&a, c->callback_allow_cidrs, msg,
	    sizeof(msg)) != 0) {
		snprintf(why, whylen, "callback_allow_cidrs: %s", msg);
		return -1;
	}
	if (c->callback_secret[0] != '\0' &&
	    whsign_secret_decode(c->callback_secret, key) < 0) {
		snprintf(why, whylen, "callback_secret: not whsec_ + standard "
		    "base64 (with padding) of 24..64 bytes");
		return -1;
	}
	return 0;
}

/*
 * The hook_limit_* values that need more than a range: a non-zero
 * hook_limit_as_bytes below HOOKLIMIT_AS_MIN or hook_limit_nofile below
 * HOOKLIMIT_NOFILE_MIN (config.h).  Returns 0, or -1 with "key: ..." in
 * why.
 */
static int
hooklimit_keys_check(const struct config *cfg, char *why, size_t whylen)
{
	if (cfg->hook_limit_as_bytes > 0 && cfg->hook_limit_as_bytes <
	    HOOKLIMIT_AS_MIN) {
		snprintf(why, whylen, "hook_limit_as_bytes: %ld is below %ld "
		    "bytes (16 MiB; too small to start a program); 0 = the "
		    "daemon's limit", cfg->hook_limit_as_bytes,
		    HOOKLIMIT_AS_MIN);
		return -1;
	}
	if (cfg->hook_limit_nofile > 0 && cfg->hook_limit_nofile <
	    HOOKLIMIT_NOFILE_MIN) {
		snprintf(why, whylen, "hook_limit_nofile: %ld is below %ld "
		    "(too few descriptors to start a program); 0 = the "
		    "daemon's limit", cfg->hook_limit_nofile,
		    HOOKLIMIT_NOFILE_MIN);
		return -1;
	}
	return 0;
}

static int
config_check(struct config *c, char *why, size_t whylen)
{
	if (absolutize(c->spool, sizeof(c->spool), "spool", why, whylen) ||
	    absolutize(c->hooks_dir, sizeof(c->hooks_dir), "hooks_dir", why,
	    whylen))
		return -1;
	if (c->hooks_dir[0] == '\0' &&
	    (size_t)snprintf(c->hooks_dir, sizeof(c->hooks_dir), "%s/hooks",
	    c->spool) >= sizeof(c->hooks_dir)) {
		snprintf(why, whylen, "hooks_dir: path too long");
		return -1;
	}
	if (absolutize(c->apps_file, sizeof(c->apps_file), "apps_file", why,
	    whylen) != 0)
		return -1;
	if (c->apps_file[0] == '\0' && (size_t)snprintf(
	    c->apps_file, sizeof(c->apps_file), "%s/apps.conf", c->spool) >=
	    sizeof(c->apps_file)) {
		snprintf(why, whylen, "apps_file: path too long");
		return -1;
	}
	if (c->node_id[0] == '\0') {
		char host[256];

		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "node");
		host[sizeof(host) - 1] = '\0';
		/* Keep the first label, mapped into the node grammar. */
		for (char *h = host; *h != '\0'; h++)
			if (!isalnum((unsigned char)*h) && *h != '-' &&
			    *h != '_') {
				*h = '\0';
				break;
			}
		if (host[0] == '\0' || !isalnum((unsigned char)host[0]))
			snprintf(host, sizeof(host), "node");
		snprintf(c->node_id, sizeof(c->node_id), "%.64s", host);
		c->node_id_auto = 1;
	}
	if (!spool_code_ok(c->node_id)) {
		snprintf(why, whylen, "node_id: \"%s\" does not match "
		    "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", c->node_id);
		return -1;
	}
	{
		char list[TAGS_TEXT_MAX];

		/* the sorted list replaces the text: the heartbeat's form */
		if (tags_parse_config(c->tags, list, sizeof(list), why,
		    whylen) != 0)
			return -1;
		memcpy(c->tags, list, strlen(list) + 1);
	}
	if (log_level_parse(c->log_level) < 0) {
		snprintf(why, whylen, "log_level: \"%s\" is not one of error, "
		    "warning, info, debug", c->log_level);
		return -1;
	}
	if (c->on_failure[0] != '\0' &&
	    !task_name_ok(c->on_failure, TASK_CODE_MAX)) {
		snprintf(why, whylen, "on_failure: \"%s\" does not match "
		    "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", c->on_failure);
		return -1;
	}
	if (alert_mode_parse(c->on_failure_mode, &(enum alert_mode){ 0 })) {
		snprintf(why, whylen, "on_failure_mode: \"%s\" is not one of "
		    "every, transition", c->on_failure_mode);
		return -1;
	}
	if (log_format_parse(c->log_format) < 0) {
		snprintf(why, whylen, "log_format: \"%s\" is not one of logfmt, "
		    "text", c->log_format);
		return -1;
	}
	if (c->log_target[0] != '\0' && strcmp(c->log_target, "stderr") != 0
	    && strcmp(c->log_target, "syslog") != 0 &&
	    strcmp(c->log_target, "journal") != 0) {
		snprintf(why, whylen, "log_target: \"%s\" is not one of stderr, "
		    "syslog, journal", c->log_target);
		return -1;
	}
	if (c->hook_user[0] != '\0' && !account_name_ok(c->hook_user)) {
		snprintf(why, whylen, "hook_user: \"%s\" is not a user name "
		    "([A-Za-z0-9_.][A-Za-z0-9_.-]{0,31}) or a uid",
		    c->hook_user);
		return -1;
	}
	if (c->hook_group[0] != '\0' && !account_name_ok(c->hook_group)) {
		snprintf(why, whylen, "hook_group: \"%s\" is not a group name "
		    "([A-Za-z0-9_.][A-Za-z0-9_.-]{0,31}) or a gid",
		    c->hook_group);
		return -1;
	}
	if (config_check_callback(c, why, whylen) != 0 ||
	    limits_check(c->max_concurrent, why, whylen) != 0 ||
	    limits_check_key("max_concurrent_per_key",
	    c->max_concurrent_per_key, why, whylen) != 0 ||
	    ratespec_check("rate_limit", c->rate_limit, why, whylen) != 0 ||
	    ratespec_check("rate_limit_per_key", c->rate_limit_per_key, why,
	    whylen) != 0 ||
	    hooklimit_keys_check(c, why, whylen) != 0)
		return -1;
	if (c->slots == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		c->slots = n > 0 ? n : 1;
	}
	return 0;
}

/*
 * The password of a URL's userinfo (RFC 3986 §3.2.1, "user:password@"):
 * its offset and length in v, or 0 when v has none.  The authority ends
 * at the first '/', '?' or '#' after "://"; the userinfo at its last '@'.
 */
static size_t
url_password(const char *v, size_t *off)
{
	const char *a = strstr(v, "://"), *end, *at = NULL, *colon;

	if (a == NULL)
		return 0;
	a += 3;
	end = a + strcspn(a, "/?#");
	for (const char *p = a; p < end; p++)
		if (*p == '@')
			at = p;
	if (at == NULL || (colon = memchr(a, ':', (size_t)(at - a))) == NULL)
		return 0;
	*off = (size_t)(colon + 1 - v);
	return (size_t)(at - colon - 1);
}

void
config_dump(const struct config *c, FILE *fp, int hide_secrets)
{
	fprintf(fp, "# taskspool configuration (key = value; # comments)\n");
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key_def *k = &keys[i];
		size_t nl = strlen(k->name);

		fprintf(fp, "\n# %s (default: %s)\n", k->help,
		    k->def[0] != '\0' ? k->def : "empty");
		if (hide_secrets && k->type == KEY_STR &&
		    ((nl > 9 && strcmp(k->name + nl - 9, "_password") == 0) ||
		    (nl > 7 && strcmp(k->name + nl - 7, "_secret") == 0)) &&
		    *((const char *)c + k->off) != '\0')
			fprintf(fp, "# %s = (set, not shown)\n", k->name);
		else if (k->type == KEY_STR) {
			/* mariadb = mariadb://USER:PASSWORD@HOST... */
			const char *v = (const char *)c + k->off;
			size_t off = 0, pl = hide_secrets ?
			    url_password(v, &off) : 0;

			if (pl > 0)
				fprintf(fp, "# %s = %.*s(not shown)%s\n",
				    k->name, (int)off, v, v + off + pl);
			else if (c->node_id_auto && strcmp(k->name,
			    "node_id") == 0)
				/* What the daemon adds at start (README.md,
				 * "Configuration"): a free <host>-<date>-<nn>. */
				fprintf(fp, "# %s = (not set: %s-<yyyymmdd>-<nn> "
				    "chosen at start)\n", k->name, v);
			else
				fprintf(fp, "%s = %s\n", k->name, v);
		} else
			fprintf(fp, "%s = %ld\n", k->name,
			    *(const long *)(const void *)((const char *)c +
			    k->off));
	}
}
