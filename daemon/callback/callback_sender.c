/*
 * callback_sender — the callback sender thread: its start, wake-up and
 * stop (callback_sender.h), its dormancy while no delivery exists, and its loop.
 * Each pass sweeps lost deliveries back (callback_claim.c), claims the
 * due files, dispatches the ready ones (callback_dispatch.c), drives the
 * transfers of libcurl's multi interface (callback_http.c: one slow
 * receiver never delays the others) and flushes the new states
 * (callback_state.c).  The delivery file format and directories are in
 * callback.c (callback_impl.h).
 *
 * Invariants: a dormant sender holds no descriptor (no outbox handles, no
 * multi handle); the loop never blocks longer than CB_SCAN_MS, nor past
 * the flush of staged states; at stop every staged state is flushed and
 * every claimed delivery left unlocked, to be taken back at the next
 * start.  sender_main() stays about 85 lines: the pass in order.
 */
#include "callback/callback_sender.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "callback/callback.h"
#include "callback/callback_impl.h"
#include "core/ssrf.h"
#include "spool/clock.h"
#include "spool/log.h"
#include "spool/metrics.h"

/* Whether any delivery waits in pending/ or active/<node>/ (descriptors
 * held only for the look). */
static int
has_work(const struct callback_sender *cs)
{
	static const char *const dirs[] = { "callbacks/pending",
	    "callbacks/active" };
	int found = 0;

	for (size_t i = 0; i < 2 && !found; i++) {
		int fd = openat(cs->sp.dir[SPOOL_OUTBOX], dirs[i], O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct dirent *de;
		DIR *dp;

		if (fd < 0)
			continue;
		dp = fdopendir(fd);
		if (dp == NULL) {
			close(fd);
			continue;
		}
		while (!found && (de = readdir(dp)) != NULL) {
			int sub;
			DIR *sp;

			if (de->d_name[0] == '.')
				continue;
			if (i == 0) {
				found = 1;
				break;
			}
			sub = openat(dirfd(dp), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 || (sp = fdopendir(sub)) == NULL) {
				if (sub >= 0)
					close(sub);
				continue;
			}
			while ((de = readdir(sp)) != NULL)
				if (de->d_name[0] != '.')
					found = 1;
			closedir(sp);
		}
		closedir(dp);
	}
	return found;
}

/*
 * The sender's configuration: cfg copied, the retry schedule and the
 * destination policy derived from it (config_check_callback() has
 * checked its keys).  Every key is read at each try, so a reloaded one
 * applies from the next try on.
 */
static void
sender_configure(struct callback_sender *cs, const struct config *cfg)
{
	char msg[200];

	cs->cfg = *cfg;
	delivery_policy_default(&cs->pol);
	(void)delivery_policy_parse(&cs->pol, cfg->callback_delays_ms);
	cs->pol.jitter_pct = (int)cfg->callback_jitter_pct;
	memset(&cs->allow, 0, sizeof(cs->allow));
	(void)ssrf_parse_ports(&cs->allow, cfg->callback_allowed_ports, msg,
	    sizeof(msg));
	(void)ssrf_parse_cidrs(&cs->allow, cfg->callback_allow_cidrs, msg,
	    sizeof(msg));
}

/* A configuration given by callback_sender_reconfigure(), applied in the
 * sender's thread between two passes.  Called with cs->mu held. */
static void
sender_take_config(struct callback_sender *cs)
{
	if (!cs->reconf)
		return;
	cs->reconf = 0;
	sender_configure(cs, &cs->next_cfg);
}

/*
 * Dormant until there is work: a daemon with no callbacks holds no
 * descriptor for them (no outbox handles, no libcurl multi handle), so
 * a tight RLIMIT_NOFILE is left to the hooks.  Wakes on
 * callback_sender_wake() and every CB_SCAN_MS to look for deliveries left
 * by other nodes.  Returns 0 once active, -1 when asked to stop.
 */
static int
sender_activate(struct callback_sender *cs)
{
	int warned = 0;

	for (;;) {
		struct timespec ts;
		int stop, woken;
		CURLM *m;

		pthread_mutex_lock(&cs->mu);
		stop = cs->stop;
		woken = cs->woken;
		cs->woken = 0;
		sender_take_config(cs);
		pthread_mutex_unlock(&cs->mu);
		if (stop)
			return -1;
		if ((woken || has_work(cs)) && cbdirs_open(&cs->sp, cs->sp.node,
		    &cs->d) == 0) {
			if ((m = curl_multi_init()) != NULL) {
				pthread_mutex_lock(&cs->mu);
				cs->multi = m;
				pthread_mutex_unlock(&cs->mu);
				return 0;
			}
			cbdirs_close(&cs->d);
		} else if (woken && !warned++)
			log_warn("callback sender: outbox/callbacks (retried "
			    "every second)");
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += CB_SCAN_MS / 1000;
		pthread_mutex_lock(&cs->mu);
		if (!cs->stop && !cs->woken)
			pthread_cond_timedwait(&cs->cond, &cs->mu, &ts);
		pthread_mutex_unlock(&cs->mu);
	}
}

static void *
sender_main(void *arg)
{
	struct callback_sender *cs = arg;

	cs->pid = (long)getpid();
	if (sender_activate(cs) != 0)
		return NULL;
	sender_sweep(cs, 1);
	for (;;) {
		int64_t now = tstime_now_ms(), wait_ms;
		int running, woken, stop;

		pthread_mutex_lock(&cs->mu);
		woken = cs->woken;
		stop = cs->stop;
		cs->woken = 0;
		sender_take_config(cs);
		pthread_mutex_unlock(&cs->mu);
		if (stop)
			break;
		if (now >= cs->next_sweep) {
			sender_sweep(cs, 0);
			sender_spares_expire(cs, now);
			cs->next_sweep = now + 10 * CB_SCAN_MS;
		}
		if (woken || now >= cs->next_scan)
			sender_scan(cs, now);
		sender_dispatch_ready(cs, now);
		curl_multi_perform(cs->multi, &running);
		sender_reap_done(cs);
		/* Endpoints freed by the completions get their next try now,
		 * so the receivers work while the pass's states are made
		 * durable. */
		if (cs->ready != NULL) {
			sender_dispatch_ready(cs, tstime_now_ms());
			curl_multi_perform(cs->multi, &running);
		}
		if (cs->staged != NULL && (cs->ninflight == 0 || cs->nstaged >=
		    CB_FLUSH_MAX || tstime_now_ms() - cs->staged_ms >=
		    CB_FLUSH_MS))
			sender_flush(cs);
		{
			long open = 0;

			for (struct cbendpoint *e = cs->eps; e != NULL;
			    e = e->next)
				open += e->br.open != 0;
			metrics_callback_circuit_open(open);
		}
		wait_ms = cs->next_scan - tstime_now_ms();
		if (wait_ms > CB_SCAN_MS)
			wait_ms = CB_SCAN_MS;
		if (wait_ms < 0)
			wait_ms = 0;
		/* A finished transfer, a wake-up or the next due file ends
		 * the wait; ready jobs held back by WAIT are re-examined after
		 * every completion. */
		if (cs->ready != NULL && wait_ms > 100)
			wait_ms = 100;
		/* ... and so does the flush of staged states. */
		if (cs->staged != NULL) {
			int64_t left = cs->staged_ms + CB_FLUSH_MS -
			    tstime_now_ms();

			if (wait_ms > left)
				wait_ms = left > 0 ? left : 0;
		}
		curl_multi_poll(cs->multi, NULL, 0, (int)wait_ms, NULL);
	}
	sender_flush(cs);
	while (cs->flight != NULL) {
		struct cbjob *j = cs->flight;

		cs->flight = j->next;
		curl_multi_remove_handle(cs->multi, j->easy);
		curl_easy_cleanup(j->easy);
		sender_job_free(j);	/* unlocked: taken back at next start */
	}
	while (cs->ready != NULL) {
		struct cbjob *j = cs->ready;

		cs->ready = j->next;
		sender_job_free(j);
	}
	sender_spares_expire(cs, INT64_MAX);
	return NULL;
}

struct callback_sender *
callback_sender_start(const struct config *cfg, const struct spool *sp,
    char *why, size_t whylen)
{
	struct callback_sender *cs;
	const curl_version_info_data *vi;

	if (config_check_callback(cfg, why, whylen) != 0)
		return NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(why, whylen, "curl_global_init failed");
		return NULL;
	}
	vi = curl_version_info(CURLVERSION_NOW);
	if (!(vi->features & CURL_VERSION_ASYNCHDNS))
		log_warnx("libcurl %s has no asynchronous resolver: a slow DNS "
		    "server can delay callbacks past callback_timeout_ms "
		    "(use a libcurl built with c-ares or threaded DNS)",
		    vi->version);
	if ((cs = calloc(1, sizeof(*cs))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	sender_configure(cs, cfg);
	for (int i = 0; i < D_N; i++)
		cs->d.fd[i] = -1;
	cs->d.self = -1;
	cs->sp = *sp;		/* the same descriptors, used read-only */
	pthread_mutex_init(&cs->mu, NULL);
	pthread_cond_init(&cs->cond, NULL);
	if ((errno = pthread_create(&cs->th, NULL, sender_main, cs)) != 0) {
		snprintf(why, whylen, "pthread_create: %s", strerror(errno));
		pthread_cond_destroy(&cs->cond);
		pthread_mutex_destroy(&cs->mu);
		free(cs);
		return NULL;
	}
	cs->started = 1;
	return cs;
}

/* Wake the sender's thread, polling or dormant.  Called with cs->mu
 * held. */
static void
sender_poke(struct callback_sender *cs)
{
	if (cs->multi != NULL)
		curl_multi_wakeup(cs->multi);
	else
		pthread_cond_signal(&cs->cond);
}

void
callback_sender_wake(struct callback_sender *cs)
{
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->woken = 1;
	sender_poke(cs);
	pthread_mutex_unlock(&cs->mu);
}

int
callback_sender_reconfigure(struct callback_sender *cs,
    const struct config *cfg, char *why, size_t whylen)
{
	if (cs == NULL)
		return 0;
	if (config_check_callback(cfg, why, whylen) != 0)
		return -1;
	pthread_mutex_lock(&cs->mu);
	cs->next_cfg = *cfg;
	cs->reconf = 1;
	cs->woken = 1;
	sender_poke(cs);
	pthread_mutex_unlock(&cs->mu);
	return 0;
}

void
callback_sender_stop(struct callback_sender *cs)
{
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->stop = 1;
	sender_poke(cs);
	pthread_mutex_unlock(&cs->mu);
	pthread_join(cs->th, NULL);
	pthread_cond_destroy(&cs->cond);
	pthread_mutex_destroy(&cs->mu);
	if (cs->multi != NULL)
		curl_multi_cleanup(cs->multi);
	while (cs->eps != NULL) {
		struct cbendpoint *e = cs->eps;

		cs->eps = e->next;
		free(e);
	}
	cbdirs_close(&cs->d);
	free(cs);
	curl_global_cleanup();
}
