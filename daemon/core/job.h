/*
 * job — recurring job definitions: the jobs/<jobCode>.json codec and the
 * schedule arithmetic the leader fires by (pure: no I/O, no clock, no
 * logging, no globals).
 *
 * A job file is one JSON object with the same JSON rules as a task file
 * (task.h: UTF-8, no BOM, at most JOB_FILE_MAX bytes, duplicate members
 * rejected).  Members:
 *
 *   jobCode       required; the taskCode grammar (DESIGN.md §2), <= 64
 *   taskCode      required; the hook to run
 *   cron          \  exactly one of these four:
 *   calendar       | a cron expression, a systemd calendar event
 *   fixedRateMs    | (cron.h, dialect systemd: "Mon..Fri 09:00"), a rate
 *   fixedDelayMs  /  in ms (fires at anchor + k * rate), a delay in ms
 *                    after each run ends
 *   dialect       "vixie" | "quartz"; only with cron; default: from the
 *                 field count (cron_dialect_guess); a cron that reads as
 *                 a calendar event is refused with a pointer to calendar
 *   timezone      IANA zone name; default (member absent): the zone at
 *                 the end of calendar, else the host's zone; with both,
 *                 they must be the same
 *   executeParams any JSON; kept as the raw bytes of the file, as task.c
 *                 does, and handed to every task this job makes
 *   route, requireTags, concurrencyKey, maxConcurrentPerKey, maxRetries
 *                 (0..100), timeoutSec (1..604800): copied into each
 *                 task; same rules as in a task file
 *                 (route tag:<name> is folded into requireTags)
 *   misfire       "fire_once" (default) | "skip" | "fire_all"
 *   misfireCap    1..1000, default 10; only with misfire "fire_all"
 *   overlap       "forbid" (default) | "allow" | "replace"
 *   enabled       true (default) | false
 *   startAt, endAt  RFC 3339 date-times bounding the fires, both inclusive
 *                 (Quartz's startTime/endTime); startAt <= endAt
 *   jitterMs      0..3600000, default 0 (see job_next_fire)
 *   createdAt     RFC 3339; written by `taskspool jobs add`; the anchor of
 *                 a fixed-rate job without startAt (see job_next_fire)
 *
 * Any other member is an error.  Decoding reports the first violation as
 * (field, rule) in a struct task_error, e.g. ("cron", "minute: \"61\" out
 * of range 0-59"); the daemon moves such a file to corrupt/ with that text
 * as the reason.  A definition is also refused when the task it makes
 * would not pass task_decode() (e.g. executeParams nested too deep), so a
 * valid job never fires a corrupt task.  No json_t escapes this module.
 *
 * What job_decode() cannot check, because it is pure: that the zone in
 * "timezone" exists (the caller loads it with tz_load() and reports a
 * failure as field "timezone"), and that hooks/<taskCode> exists.
 *
 * Times: every *_ms value is epoch milliseconds (UTC, leap seconds not
 * counted), -1 meaning "absent" where a member is optional; cron fires are
 * whole seconds (cron_next_fire works in epoch seconds).
 *
 * Errors: decode errors as above; the schedule functions cannot fail on
 * a decoded job except for instants outside 1970..9999, which they treat
 * as "no fire".  Programming errors (NULL job) are not checked.
 */
#ifndef TASKSPOOL_JOB_H
#define TASKSPOOL_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/cron.h"
#include "core/task.h"
#include "core/tz.h"

struct tz;

#define JOB_FILE_MAX		TASK_FILE_MAX	/* bytes of a job file */
#define JOB_INTERVAL_MAX_MS	31536000000LL	/* 365 days, as delayMs */
#define JOB_JITTER_MAX_MS	3600000		/* 1 h */
#define JOB_MISFIRE_CAP_MAX	1000		/* most fires of fire_all */
#define JOB_MISFIRE_CAP_DEFAULT	10

/*
 * Recommended misfire threshold: a due instant is "missed" only when it
 * is later than this when looked at (Quartz's default
 * org.quartz.jobStore.misfireThreshold, 60 s).  The daemon passes its
 * configured value to job_misfire_plan().
 */
#define JOB_MISFIRE_THRESHOLD_MS	60000

/*
 * Room for any id job_task_id() writes: a 64-byte jobCode, ".", the
 * 19-character "yyyymmddThhmmssmmmZ", the NUL; a requestId (<= 128) always
 * holds one.
 */
#define JOB_TASK_ID_MAX	(TASK_CODE_MAX + 1 + 19 + 1)

/* Latest instant the schedule functions handle: 9999-12-31T23:59:59.999Z. */
#define JOB_TIME_MAX_MS	(TZ_EPOCH_MAX * 1000 + 999)

/* Special values of struct job_plan.next_ms. */
#define JOB_NEXT_NONE		INT64_C(-1)	/* no fire ever again */
#define JOB_NEXT_AFTER_END	INT64_C(-2)	/* fixedDelay: after the run */

enum job_kind {
	JOB_KIND_CRON,		/* "cron" */
	JOB_KIND_FIXED_RATE,	/* "fixedRateMs" */
	JOB_KIND_FIXED_DELAY	/* "fixedDelayMs" */
};

/*
 * What to do with fires missed while no leader ran (job_misfire_plan).
 * Each maps onto the Quartz misfire instruction named, MISFIRE_INSTRUCTION_*
 * (Quartz 2.3.2 CronTrigger / Trigger javadoc), with the differences noted
 * at job_misfire_plan().
 */
enum job_misfire {
	JOB_MISFIRE_FIRE_ONCE,	/* "fire_once": ..._FIRE_ONCE_NOW */
	JOB_MISFIRE_SKIP,	/* "skip": ..._DO_NOTHING */
	JOB_MISFIRE_FIRE_ALL	/* "fire_all": ..._IGNORE_MISFIRE_POLICY */
};

/*
 * What the leader does when a fire comes while a task of the job's
 * previous fire is still pending or running.  Enforced by the caller;
 * meaningless for fixedDelay jobs, whose runs never overlap.
 */
enum job_overlap {
	JOB_OVERLAP_FORBID,	/* "forbid": skip this fire */
	JOB_OVERLAP_ALLOW,	/* "allow": fire anyway */
	JOB_OVERLAP_REPLACE	/* "replace": cancel the old task, then fire */
};

struct job {
	char code[TASK_CODE_MAX + 1];		/* jobCode */
	char task_code[TASK_CODE_MAX + 1];	/* taskCode */
	enum job_kind kind;
	char *cron_text;	/* new: "cron" as written; NULL unless CRON */
	struct cron_expr *cron;	/* new: cron_text parsed; NULL unless CRON */
	enum cron_dialect dialect;	/* what cron was parsed with */
	int dialect_given;	/* 1: "dialect" present (else guessed) */
	int64_t interval_ms;	/* fixedRateMs / fixedDelayMs; 0 for CRON */
	char timezone[TZ_NAME_MAX + 1];	/* "" = absent: the host's zone */
	int timezone_from_calendar;	/* 1: timezone is the calendar's */
	char *params;		/* new: raw executeParams bytes, "{}" default */
	size_t params_len;
	char *route;		/* new or NULL (absent); never tag:<name> */
	char *require_tags;	/* new or NULL: core/tags.h list, file order */
	char *conc_key_tmpl;	/* concurrencyKey: new or NULL; copied into
				 * the tasks (core/conckey.h) */
	int max_per_key;	/* maxConcurrentPerKey; -1 = absent */
	int max_retries;	/* -1 = absent (config default) */
	int timeout_sec;	/* -1 = absent (config default) */
	int priority;		/* 0..9, passed to the tasks it fires;
				 * -1 = absent (core/priority.h) */
	enum job_misfire misfire;
	int misfire_cap;	/* 1..JOB_MISFIRE_CAP_MAX; used by fire_all */
	enum job_overlap overlap;
	int enabled;		/* 1 or 0 */
	int64_t start_ms;	/* startAt, epoch ms; -1 = absent */
	int64_t end_ms;		/* endAt, epoch ms; -1 = absent */
	int64_t jitter_ms;	/* 0..JOB_JITTER_MAX_MS */
	int64_t created_ms;	/* createdAt, epoch ms; -1 = absent */
	char on_failure[TASK_CODE_MAX + 1];	/* onFailure; "" = absent */
	int on_failure_mode;	/* onFailureMode: -1 absent, else an enum
				 * alert_mode (core/alert.h) */
};

/*
 * job_init() makes j an empty job with every optional member at its
 * default (enabled, fire_once with cap 10, forbid, no bounds).  No
 * allocation.
 */
void	job_init(struct job *j);

/* job_fini() frees what j owns and re-initialises it.  NULL is accepted. */
void	job_fini(struct job *j);

/*
 * job_decode() decodes and validates len bytes at data (borrowed) into j,
 * which must be initialised; its previous contents are freed.  Returns 0,
 * or -1 with err filled with the first violation (field, rule) and j left
 * initialised-empty.  A bad cron expression gives field "cron" with the
 * cron parser's message as the rule (cron_parse(), cron(5) / Quartz).
 * The zone name is checked for syntax only (tz_name_ok); out of memory is
 * reported as rule "out of memory" on the field being decoded.
 */
int	job_decode(const char *data, size_t len, struct job *j,
	    struct task_error *err);

/*
 * job_encode() appends j (borrowed) as one JSON object (compact, members
 * in a fixed order, a newline after it) to out.  executeParams is spliced
 * byte for byte; optional members that are absent stay absent (timezone,
 * dialect, route, ...), so job_decode(job_encode(j)) gives j back.
 * Instants are written as UTC RFC 3339 with milliseconds.  Returns 0 or
 * -1 with errno (ENOMEM, or EFBIG from out's cap).
 */
int	job_encode(const struct job *j, struct buf *out);

/*
 * job_diff() names the first member in which two decoded jobs differ
 * ("cron", "misfireCap", "executeParams", ...), or returns NULL when they
 * hold the same value (the parsed cron is compared through its text).
 * Returns a borrowed static string.
 */
const char *job_diff(const struct job *a, const struct job *b);

/*
 * job_roundtrip() checks the codec's round-trip property (issue 10, item
 * 2) on len bytes at data: 1 when job_decode() refuses them (err says
 * why), 0 when decode(encode(decode(data))) equals decode(data), -1 when
 * not (err->field names the member) or on ENOMEM.  For the unit tests and
 * the fuzz target.
 */
int	job_roundtrip(const char *data, size_t len, struct task_error *err);

/*
 * job_next_fire() stores in *next_ms the first fire of j (borrowed)
 * strictly after after_ms, in zone z (borrowed; used by cron jobs only,
 * may be NULL otherwise), honouring startAt and endAt (both inclusive).
 * Returns 1, or 0 when there is none (past endAt; a cron expression with
 * no further time: cron_next_fire() returned 0 or ERANGE past 9999).
 * Ignores "enabled": the caller decides whether a disabled job fires.
 *
 *   cron        the first instant cron_next_fire() gives after after_ms
 *               (whole seconds; DST as cron.h / CRON-RULES.md 4.6, i.e.
 *               cronie's: a fixed-time job in a spring-forward gap fires
 *               at the first instant after the gap).
 *   fixedRate   anchor + k * rate for the smallest k >= 0 that is after
 *               after_ms, where anchor = startAt, else createdAt, else the
 *               Unix epoch (so a hand-written file without either still
 *               fires at the same instants on every node and after every
 *               failover).  Quartz SimpleTrigger with repeat forever.
 *   fixedDelay  last_end_ms + delay, where last_end_ms is when the
 *               previous run ended (epoch ms; -1 = never ran, then: startAt,
 *               else createdAt + delay, else after_ms + delay).  If that
 *               is not after after_ms the fire is overdue and the chain
 *               restarts at after_ms + delay (job_misfire_plan() is where
 *               overdue fires are judged).  The caller must not ask while
 *               a run is in flight.  last_end_ms is ignored by the others.
 *
 * Jitter is not applied here: the instant returned is the scheduled one,
 * which is also the task's triggerTime and part of its requestId, so a
 * fire repeated by another leader is the same task.  The caller delays
 * the publication (or sets notBefore) by a random 0..jitterMs of its own.
 */
int	job_next_fire(const struct job *j, const struct tz *z,
	    int64_t after_ms, int64_t last_end_ms, int64_t *next_ms);

/* What job_misfire_plan() decided besides the fires themselves. */
struct job_plan {
	/*
	 * 1 when the oldest due instant was more than threshold_ms late, so
	 * the misfire policy was applied; 0 when every due instant was on
	 * time (all are planned, oldest first) or nothing was due.
	 */
	int misfired;
	/*
	 * 1 when some due instants were not planned (skip; fire_once with
	 * more than one due; fire_all over misfireCap or max).  A flag, not
	 * a count: counting missed cron instants would cost one
	 * cron_next_fire() call each.
	 */
	int dropped;
	/*
	 * Record this as last_fire_ms once the planned fires are published:
	 * every scheduled instant up to it has been fired or dropped.  It is
	 * now_ms, except when `max` cut an on-time list short: then it is the
	 * last instant planned and next_ms is due already (call again).  It
	 * never moves back: with now_ms < last_fire_ms (the wall clock
	 * stepped back) it stays last_fire_ms; with max == 0 and something
	 * due it is last_fire_ms unchanged.
	 */
	int64_t settled_ms;
	/*
	 * The first scheduled instant after settled_ms (epoch ms), or
	 * JOB_NEXT_NONE (past endAt, cron exhausted), or JOB_NEXT_AFTER_END
	 * (fixedDelay with a fire planned: ask job_next_fire() with the end
	 * of that run).
	 */
	int64_t next_ms;
};

/*
 * job_misfire_plan() decides which fires of j (borrowed) are due at now_ms
 * (epoch ms), e.g. after leader downtime or failover, and stores them in
 * out (caller's array of max instants), oldest first.  Returns how many;
 * *plan (may be NULL) gets the rest of the answer.  z as for
 * job_next_fire().
 *
 * The due instants are the scheduled ones in (last_fire_ms, now_ms].
 * last_fire_ms is the settled_ms the caller recorded last time (-1 if the
 * job never fired: then the window opens at createdAt, or at startAt if
 * that is later; with no createdAt nothing counts as missed).  If the
 * oldest due instant is at most threshold_ms (>= 0) old, nothing misfired:
 * all due instants are planned, as on-time fires, oldest first, at most
 * max.  Otherwise the policy applies to all of them (Quartz: a trigger
 * misfires when its next fire time is older than misfireThreshold):
 *
 *   fire_once  exactly one fire: the latest due instant (cron: found by a
 *              bisection over cron_next_fire, so a long downtime costs
 *              ~40 calls, not one per missed instant).  Quartz
 *              MISFIRE_INSTRUCTION_FIRE_ONCE_NOW, except that the task's
 *              triggerTime is that scheduled instant, not the current
 *              time: the task id stays the same on every leader.
 *   skip       no fire; the schedule resumes after now_ms.  Quartz
 *              MISFIRE_INSTRUCTION_DO_NOTHING.
 *   fire_all   the missed instants, oldest first, at most misfireCap (and
 *              max); the rest are dropped.  Quartz
 *              MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY, which fires every
 *              missed instant oldest first; the cap keeps a prefix of that
 *              same sequence rather than reordering it, and oldest-first is
 *              resumable: a caller that records the last planned instant
 *              instead of settled_ms gets the next batch on its next call.
 *
 * fixedDelay jobs have at most one pending instant: one delay after the
 * later of last_end_ms and last_fire_ms (so a recorded skip restarts the
 * chain), or, when both are -1, job_next_fire's first-fire rule with
 * after_ms = now_ms.  fire_once and fire_all fire it, skip drops it and
 * the chain restarts at now_ms + delay.  The caller must not ask while a
 * run of the job is in flight.
 *
 * Pass max >= misfireCap (JOB_MISFIRE_CAP_MAX always suffices for the
 * misfire path; an on-time list cut short by max is resumed, see
 * settled_ms).  Pure; cannot fail.
 */
size_t	job_misfire_plan(const struct job *j, const struct tz *z,
	    int64_t last_fire_ms, int64_t last_end_ms, int64_t now_ms,
	    int64_t threshold_ms, int64_t *out, size_t max,
	    struct job_plan *plan);

/*
 * job_task_id() writes the requestId of the fire of job `job_code`
 * (borrowed) at t_ms: "<jobCode>.<UTC yyyymmddThhmmss[mmm]Z>", the
 * milliseconds only when t_ms is not a whole second
 * ("nightly.20240601T020000Z", "tick.20240601T020000250Z"; DESIGN.md §5),
 * into out (len bytes; JOB_TASK_ID_MAX is always enough).  The result
 * matches the requestId grammar.  Returns 0, or -1 with errno EINVAL
 * (job_code not a valid code), ERANGE (t_ms outside 0..JOB_TIME_MAX_MS) or
 * ENOSPC (len too small; out then holds "").
 */
int	job_task_id(const char *job_code, int64_t t_ms, char *out,
	    size_t len);

/*
 * job_fire_id() says whether id (borrowed) has the shape job_task_id()
 * gives: a jobCode, ".", 8 digits, "T", 6 digits, optionally 3 more, "Z"
 * ("nightly.20240601T020000Z").  Such names are the leader's: the HTTP
 * API refuses them in a submission, so no caller can take a fire of a
 * job before it comes (which would stand in for it, or hold a forbid
 * job's run marker).  Returns 1 or 0.
 */
int	job_fire_id(const char *id);

/*
 * job_make_task() fills *out (initialised; previous contents freed) with
 * the task of j's fire at t_ms: requestId from job_task_id(), taskCode,
 * a copy of executeParams, route, requireTags, concurrencyKey (the
 * template: the task's decoding expands it), maxConcurrentPerKey,
 * maxRetries, timeoutSec, priority, triggerTime =
 * t_ms, jobCode = j->code, triggerType "now".  createdAt (and notBefore,
 * for jitter) are left to the caller.  Returns 0, or -1 with errno
 * (job_task_id's, or ENOMEM) and *out initialised-empty.
 */
int	job_make_task(const struct job *j, int64_t t_ms, struct task *out);

/* Names as in the file: "cron", "fixedRateMs", ...; "fire_once", ... */
const char *job_kind_member(enum job_kind k);
/*
 * job_expr_member() is the member j's expression is written in:
 * "calendar" for a systemd calendar event, else "cron"; and
 * job_zone_member() the member j's zone came from: "calendar" when the
 * event named it and "timezone" was absent, else "timezone".  For
 * messages and the encoder; static strings.
 */
const char *job_expr_member(const struct job *j);
const char *job_zone_member(const struct job *j);
const char *job_misfire_name(enum job_misfire m);
const char *job_overlap_name(enum job_overlap o);

#endif
