/*
 * config — the one configuration file shared by every taskspool program.
 *
 * Format: lines of "key = value"; '#' starts a comment (whole line or after
 * white space); blank lines are ignored; values are trimmed; no quoting.
 * Unknown keys, bad numbers and out-of-range values are errors that name
 * the file, line and key.  Every key, its default and its unit is in the
 * table in config.c, printed by `taskspool config` and documented in
 * spool-layout/taskspool.conf.example.
 *
 * Lookup order (config_locate): -c FILE; else <spool>/taskspool.conf when
 * it exists; else /etc/taskspool/taskspool.conf when it exists; else the
 * built-in defaults.  Command-line flags are applied after the file with
 * config_set(), so they override it.
 */
#ifndef TASKSPOOL_CONFIG_H
#define TASKSPOOL_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/tags.h"
#include "spool/hookcred.h"

#define CONFIG_PATH_MAX 4096
#define CONFIG_NODE_MAX 64	/* node ids use the task-code grammar */
/* Smallest non-zero hook_limit_as_bytes and hook_limit_nofile (see
 * spool/hooklimit.h): below them a dynamic executable cannot start. */
#define HOOKLIMIT_AS_MIN	(16L << 20)	/* bytes */
#define HOOKLIMIT_NOFILE_MIN	16L	/* the 3 standard descriptors, the
					 * loader's libraries, room to work */

struct config {
	char spool[CONFIG_PATH_MAX];	/* spool root directory */
	char hooks_dir[CONFIG_PATH_MAX]; /* "" = <spool>/hooks */
	char node_id[CONFIG_NODE_MAX + 1]; /* "" = host name */
	/* This node's tags (core/tags.h; README "Node tags"): as written
	 * (room for white space around the names), made a sorted list by
	 * config_finish; "" = none. */
	char tags[2 * TAGS_TEXT_MAX];
	char log_level[16];
	char on_failure[65];	/* default onFailure taskCode; "" = none */
	char on_failure_mode[16]; /* default onFailureMode: every|transition */
	long slots;		/* concurrent hooks per daemon; 0 = CPUs */
	long max_retries;	/* default maxRetries of a task */
	long timeout_sec;	/* default timeoutSec of a task */
	long kill_grace_ms;	/* SIGTERM → SIGKILL grace */
	long retry_base_ms;	/* first retry delay */
	long retry_max_ms;	/* cap of a retry delay */
	long retry_jitter_pct;	/* delay drawn from [d*(100-j)/100, d] */
	long scan_interval_ms;	/* full rescan of incoming/ (safety net) */
	long settle_ms;		/* a file unannounced and younger is in-flight */
	long heartbeat_ms;	/* heartbeat file refresh */
	long priority_aging_sec;	/* s of waiting per priority level
					 * climbed (core/priority.h); 0 off */
	long reap_interval_ms;	/* leader: reaper and delayed/ scan period */
	long log_cap_bytes;	/* per stream per attempt in logs/ */
	long tail_bytes;	/* stdout/stderr tail kept in the result */
	long result_max_bytes;	/* largest hook result file accepted */
	long fsync;		/* 1 = durable writes (default), 0 = tests only */
	long metrics_interval_ms; /* metrics/<node>.prom rewrite; 0 = off */
	char log_format[16];	/* "logfmt" (default) or "text" */
	char log_target[16];	/* "" = stderr with -d else syslog */
	char apps_file[CONFIG_PATH_MAX]; /* API apps; "" = <spool>/apps.conf */
	/* Callback sender (callback.h, API.md §6-7). */
	char callback_delays_ms[256];	/* retry schedule, ms, comma list */
	long callback_jitter_pct;	/* delay * [1, 1 + pct/100) */
	long callback_timeout_ms;	/* whole attempt */
	long callback_max_inflight;	/* requests at once per daemon */
	long callback_allow_http;	/* 1 = plain http allowed (dev only) */
	char callback_allowed_ports[128]; /* port list */
	char callback_allow_cidrs[1024]; /* CIDRs exempt from the deny list */
	char callback_secret[128];	/* whsec_ for URLs without registration */
	char callback_ca_file[CONFIG_PATH_MAX]; /* "" = system CA store */
	char mariadb[1024];	/* "" = embedded records; see records.h */
	char mariadb_user[128];
	char mariadb_password[256];
	char mariadb_database[65];
	long records_reconcile_sec;	/* results/ vs rows, every N s */
	char redis[256];	/* "host:port" of Redis: cluster mode; "" = embedded */
	char redis_password[256]; /* AUTH password, "" = none */
	long redis_db;		/* SELECT index */
	char redis_prefix[64];	/* prefix of every key */
	char sentinel[256];	/* "host:port[,...]" of Redis Sentinels */
	char sentinel_master[64]; /* master name asked of the sentinels */
	long lease_ms;		/* Redis lease of a running task, ms */
	long lease_renew_ms;	/* lease renewal period, ms */
	char max_concurrent[1024]; /* "<code>=<N>,...": maxconc.h */
	char max_concurrent_per_key[1024]; /* the same grammar: per
				 * (code, concurrencyKey), maxconc.h */
	char rate_limit[1024];	/* "<code>=<N>/<period>[:<burst>],...":
				 * core/ratespec.h, coord/execrate.h */
	char rate_limit_per_key[1024];	/* the same, per (code, key) */
	long index_ttl_sec;	/* life of a finished task's index hash */
	long inotify;		/* 0 = ignore inotify (tests: rescans, wake-ups) */
	/* HTTP API rate limit (ratelimit.h): requests per AppId per window;
	 * 0 = none.  apps.conf's rate=N overrides it per app. */
	long api_rate_limit;
	long api_rate_window_sec;
	/* setrlimit(2) limits of every hook (hooklimit.h); 0 = inherit. */
	long hook_limit_nofile;		/* RLIMIT_NOFILE, descriptors */
	long hook_limit_as_bytes;	/* RLIMIT_AS, bytes */
	long hook_limit_cpu_sec;	/* RLIMIT_CPU soft, seconds */
	long hook_limit_fsize_bytes;	/* RLIMIT_FSIZE, bytes */
	char hook_user[64];		/* "" = the daemon's own user */
	char hook_group[64];		/* "" = hook_user's primary group */
	struct hook_cred hookcred;	/* hook_user resolved by the daemon
					 * (hookcred_resolve; config_load
					 * leaves it inactive) */
	char source[CONFIG_PATH_MAX];	/* file loaded, "" if defaults */
	char repeated[256];		/* config_load: "" or the first key
					 * the file sets twice ("KEY at line
					 * N repeats line M; the later value
					 * is used"), for the daemon to warn
					 * of (every daemon of a spool must
					 * agree on limits) */
	int node_id_auto;	/* node_id was empty: config_finish put the
				 * host name there; the daemon makes it
				 * <host>-<yyyymmdd>-<nn> (node.c) */
};

/* Fill c with the built-in defaults (spool /var/spool/taskspool). */
void config_defaults(struct config *c);

/*
 * Set one key from text.  Returns 0, or -1 with a message naming the key
 * and the rule in why (whylen bytes): -1 when the key is unknown or the
 * text is not of the key's form, CONFIG_OUT_OF_RANGE for a whole number
 * outside the key's range (the configuration check's refusal: taskspoold
 * exits 78 for it, 64 for a form error of -o).
 */
#define CONFIG_OUT_OF_RANGE	(-2)
int config_set(struct config *c, const char *key, const char *value,
    char *why, size_t whylen);

/*
 * Read path and apply every key in it over c's current values.  Returns 0,
 * or -1 with "FILE:LINE: message" in why (errno set for I/O errors).
 */
int config_load(struct config *c, const char *path, char *why,
    size_t whylen);

/*
 * Choose and load the configuration file: explicit (may be NULL), else
 * <spool>/taskspool.conf, else /etc/taskspool/taskspool.conf; missing
 * implicit files are not errors.  spool (may be NULL) sets c->spool first.
 * Returns 0 or -1 with why as config_load.
 */
int config_locate(struct config *c, const char *explicit_path,
    const char *spool, char *why, size_t whylen);

/* Resolve derived defaults (hooks_dir, node_id — the host name's first
 * label, with node_id_auto set —, slots), make tags a sorted list
 * (tags_parse_config) and check the values that need
 * more than a range.  Returns 0, or -1 with a message in why ("FILE:LINE:
 * key: ..." when the loaded file set the bad value, else "key: ...") and
 * errno EINVAL. */
int config_finish(struct config *c, char *why, size_t whylen);

/*
 * Check the callback_* keys of c (the delay schedule, ports, CIDRs, the
 * whsec_ secret) with the parsers that use them (core/delivery.h,
 * core/ssrf.h, core/whsign.h).  Part of config_finish; also run by the
 * callback sender on the configuration it is given.  Returns 0, or -1
 * with a message naming the key in why.
 */
int config_check_callback(const struct config *c, char *why, size_t whylen);

/*
 * Write every key with its current value, unit and meaning to fp in the
 * configuration file format (so the output is itself a valid file).  With
 * hide_secrets, a key named *_password or *_secret that has a value is
 * written as a comment saying it is set, without the value, and so is
 * a value holding a URL whose userinfo has a password ("mariadb =
 * mariadb://USER:PASSWORD@HOST..."): as a comment, with "(not shown)"
 * in the password's place (for
 * `taskspool config` and `taskspoold -n`, whose output ends up in
 * tickets and logs).
 */
void config_dump(const struct config *c, FILE *fp, int hide_secrets);

#endif
