/*
 * callback_sender — the callback sender thread: claims delivery files
 * from outbox/callbacks/pending/, sends them with libcurl's multi
 * interface (one slow receiver never delays the others), records each
 * try in the file and moves it on; see callback.h.  The delivery file
 * format and directories are in callback.c (callback_impl.h).
 */
#include "callback/callback.h"
#include "callback/callback_sender.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "core/delivery.h"
#include "spool/hook.h"
#include "spool/hooklimit.h"
#include "core/jsontext.h"
#include "spool/log.h"
#include "spool/metrics.h"
#include "records/records.h"
#include "core/ssrf.h"
#include "core/tstime.h"
#include "spool/clock.h"
#include "core/whsign.h"

#include "callback/callback_impl.h"
#include "spool/readfd.h"

/* --- registrations ------------------------------------------------------ */

struct reg {
	char url[TASK_URL_MAX + 1];
	int disabled;
	char secret[WHSIGN_SECRETS_MAX][WHSIGN_SECRET_MAX];
	size_t nsecrets;		/* unexpired, newest first */
	char updated[TSTIME_BUF + 8];
};

/* Read state/callbacks/<app>.json (written by the CGI, API.md §4.3).
 * Returns 0, or -1 with errno (ENOENT: none; EINVAL: unusable). */
static int
reg_read(int regfd, const char *app, int64_t now_ms, struct reg *r)
{
	char file[TASK_CODE_MAX + 8];
	json_t *o, *v, *s;
	size_t len, i;
	char *data;

	memset(r, 0, sizeof(*r));
	snprintf(file, sizeof(file), "%s.json", app);
	if ((data = spool_read_file(regfd, file, CB_REG_MAX, &len)) == NULL)
		return -1;
	o = jsontext_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	free(data);
	if (o == NULL)
		goto bad;
	v = json_object_get(o, "url");
	if (!json_is_string(v) || json_string_length(v) > TASK_URL_MAX)
		goto bad;
	snprintf(r->url, sizeof(r->url), "%s", json_string_value(v));
	v = json_object_get(o, "status");
	if (!json_is_string(v))
		goto bad;
	r->disabled = strcmp(json_string_value(v), "ACTIVE") != 0;
	v = json_object_get(o, "updatedAt");
	if (json_is_string(v))
		snprintf(r->updated, sizeof(r->updated), "%s",
		    json_string_value(v));
	json_array_foreach(json_object_get(o, "secrets"), i, s) {
		json_t *sec = json_object_get(s, "secret");
		json_t *exp = json_object_get(s, "expiresAt");
		int64_t until;

		if (!json_is_string(sec) || json_string_length(sec) >=
		    WHSIGN_SECRET_MAX)
			continue;
		if (json_is_string(exp) && (tstime_parse_rfc3339(
		    json_string_value(exp), &until) != 0 || until <= now_ms))
			continue;
		if (r->nsecrets < WHSIGN_SECRETS_MAX)
			snprintf(r->secret[r->nsecrets++], WHSIGN_SECRET_MAX,
			    "%s", json_string_value(sec));
	}
	json_decref(o);
	return 0;
bad:
	json_decref(o);
	errno = EINVAL;
	return -1;
}

/* Set a registration's status to DISABLED (a 410, API.md §6.4) with the
 * writer protocol.  Returns 0 or -1 with errno. */
static int
reg_disable(const struct spool *s, int regfd, const char *app,
    char *updated, size_t ulen)
{
	char file[TASK_CODE_MAX + 8], t[TSTIME_BUF];
	json_t *o;
	char *data, *text;
	size_t len;
	int rc;

	snprintf(file, sizeof(file), "%s.json", app);
	if ((data = spool_read_file(regfd, file, CB_REG_MAX, &len)) == NULL)
		return -1;
	o = jsontext_loadb(data, len, 0, NULL);
	free(data);
	if (o == NULL || !json_is_object(o)) {
		json_decref(o);
		errno = EINVAL;
		return -1;
	}
	tstime_format_ms(t, sizeof(t), tstime_now_ms());
	json_object_set_new(o, "status", json_string("DISABLED"));
	json_object_set_new(o, "updatedAt", json_string(t));
	text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_INDENT(2));
	json_decref(o);
	if (text == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rc = spool_publish(s, regfd, file, text, strlen(text), -1, 0);
	free(text);
	snprintf(updated, ulen, "%s", t);
	return rc;
}

/* --- the sender --------------------------------------------------------- */

#define CB_SPARES_MAX	256	/* spare files in tmp/ (recycle()) */

/* Per endpoint (registration, or origin of a per-task URL): the breaker. */
struct endpoint {
	struct endpoint *next;
	char key[TASK_URL_MAX + 8];
	struct delivery_breaker br;
	char reg_updated[TSTIME_BUF + 8];
};

struct job {
	struct job *next;
	struct cbdel c;
	char file[SPOOL_NAME_MAX];
	int fd;				/* locked, in active/<node>/ */
	struct endpoint *ep;
	int using_reg;			/* URL from the registration */
	CURL *easy;
	struct curl_slist *hdrs;
	int blocked;			/* refused by the SSRF check */
	size_t resp_bytes;
	int aborted;			/* stopped reading at CB_RESP_MAX */
	int64_t retry_after_ms;
	int probe;
	uid_t uid;			/* the claimed file's owner, */
	mode_t mode;			/* and permissions */
	char url[TASK_URL_MAX + 1];
	char tmp[SPOOL_NAME_MAX];	/* staged new state in tmp/ */
	struct buf state;		/* its bytes */
};

struct callback_sender {
	struct config cfg;
	struct spool sp;		/* handles borrowed from the node */
	struct cbdirs d;
	pthread_t th;
	int started;
	CURLM *multi;			/* NULL while dormant; set under mu */
	pthread_mutex_t mu;
	pthread_cond_t cond;		/* wakes a dormant sender */
	int stop, woken;		/* under mu */
	struct delivery_policy pol;
	struct ssrf_allow allow;
	struct job *ready;		/* claimed, not yet sent */
	struct job *flight;		/* requests in flight */
	struct job *staged;		/* new states to publish */
	int nstaged;
	int64_t staged_ms;		/* when the first of them was */
	unsigned long tmp_seq;
	long pid;			/* in tmp/ names */
	/* Spare files in tmp/ (recycle()), oldest first. */
	char spare[CB_SPARES_MAX][SPOOL_NAME_MAX];
	int64_t spare_ms[CB_SPARES_MAX];	/* when each became spare */
	int nspare;
	uid_t new_uid;			/* a new file's owner and permissions */
	mode_t new_mode;		/* (0: none made yet) */
	char fresh[CB_SPARES_MAX][SPOOL_NAME_MAX]; /* flush_staged's */
	int ninflight, nready;
	struct endpoint *eps;
	int64_t next_scan, next_sweep;
};

static uint32_t
rnd32(void)
{
	uint32_t r = 0;

	(void)RAND_bytes((unsigned char *)&r, sizeof(r));
	return r;
}

static struct endpoint *
endpoint_get(struct callback_sender *cs, const char *key)
{
	struct endpoint *e;

	for (e = cs->eps; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	snprintf(e->key, sizeof(e->key), "%s", key);
	delivery_breaker_init(&e->br);
	e->next = cs->eps;
	cs->eps = e;
	return e;
}

static void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	if (j->fd >= 0)
		close(j->fd);
	cbdel_fini(&j->c);
	curl_slist_free_all(j->hdrs);
	buf_fini(&j->state);
	free(j);
}

/* Run hooks/_on_callback_failed with the delivery file on stdin; the
 * daemon's main loop reaps it (waitpid(-1)). */
static void
run_failed_hook(struct callback_sender *cs, const struct job *j,
    const struct buf *file)
{
	char path[CONFIG_PATH_MAX + 32], e1[TASK_ID_MAX + 40],
	    e2[WHSIGN_ID_LEN + 40], e3[CONFIG_PATH_MAX + 8];
	char *argv[] = { (char *)CB_FAILED_HOOK, NULL };
	char *envp[] = { e1, e2, e3, NULL };
	struct hook_spec hs;
	struct hook_rlimit rl[HOOKLIMIT_MAX];
	pid_t pid, failed;
	int mfd;
	const char *p = getenv("PATH");

	snprintf(path, sizeof(path), "%s/%s", cs->cfg.hooks_dir,
	    CB_FAILED_HOOK);
	if (access(path, X_OK) != 0)
		return;
	snprintf(e1, sizeof(e1), "TASKSPOOL_CALLBACK_REQUEST_ID=%s",
	    j->c.request_id);
	snprintf(e2, sizeof(e2), "TASKSPOOL_WEBHOOK_ID=%s", j->c.webhook_id);
	snprintf(e3, sizeof(e3), "PATH=%s", p != NULL ? p :
	    "/usr/local/bin:/usr/bin:/bin");
	if ((mfd = memfd_create("callback", MFD_CLOEXEC)) < 0 ||
	    write(mfd, file->data, file->len) != (ssize_t)file->len ||
	    lseek(mfd, 0, SEEK_SET) != 0) {
		log_warn("%s: cannot run %s", j->c.request_id, CB_FAILED_HOOK);
		if (mfd >= 0)
			close(mfd);
		return;
	}
	memset(&hs, 0, sizeof(hs));
	hs.path = path;
	hs.argv = argv;
	hs.envp = envp;
	hs.stdin_fd = mfd;
	hs.stdout_fd = 2;
	hs.stderr_fd = 2;
	hs.rlimits = rl;
	hs.nrlimits = hooklimit_from_config(&cs->cfg, rl);
	pid = hook_spawn(&hs, &failed);
	if (pid < 0)
		log_warn("%s: %s", j->c.request_id, CB_FAILED_HOOK);
	else
		log_info("%s: started %s (pid %d)", j->c.request_id,
		    CB_FAILED_HOOK, (int)pid);
	close(mfd);
}

/*
 * Spare files.  A delivery's try ends with its new state in a file
 * renamed out of tmp/ and its claimed copy removed from active/<node>/:
 * one inode made and one freed per delivery, which on some file systems
 * (ext4 without a journal scans the recently freed inodes of a group at
 * every creation) costs more than the rest of the try.  So the claimed
 * copy, once its delivery's new state is durable, is renamed into tmp/
 * instead, and after the removal from active/<node>/ is durable too
 * (fsync, so a crash can never bring the name back onto other bytes)
 * its inode is overwritten with a later state.  Spares are used newest
 * first and removed when unused for CB_SPARE_MS or when the sender stops;
 * a killed daemon's are removed by the leader's hourly tmp/ cleaning.
 */
#define CB_SPARE_MS	60000

static void
tmp_name(struct callback_sender *cs, char *name)
{
	snprintf(name, SPOOL_NAME_MAX, "cb.%.64s.%ld.%lu", cs->sp.node,
	    cs->pid, ++cs->tmp_seq);
}

/* Remove the spares unused since before now - CB_SPARE_MS (every one
 * when now is INT64_MAX). */
static void
spares_expire(struct callback_sender *cs, int64_t now)
{
	int k = 0;

	while (k < cs->nspare && (now == INT64_MAX ||
	    now - cs->spare_ms[k] > CB_SPARE_MS))
		(void)unlinkat(cs->sp.dir[SPOOL_TMP], cs->spare[k++], 0);
	if (k == 0)
		return;
	memmove(cs->spare, cs->spare[k], (size_t)(cs->nspare - k) *
	    sizeof(cs->spare[0]));
	memmove(cs->spare_ms, cs->spare_ms + k, (size_t)(cs->nspare - k) *
	    sizeof(cs->spare_ms[0]));
	cs->nspare -= k;
}

/*
 * Open a file of tmp/ for a new state, its name into name
 * (SPOOL_NAME_MAX bytes): the newest spare, or a new file.  Returns a
 * descriptor open for writing at offset 0, with the size of the bytes
 * it holds already in *old (0 for a new file), or -1 with errno.
 */
static int
tmp_open(struct callback_sender *cs, char *name, off_t *old)
{
	int tmp = cs->sp.dir[SPOOL_TMP];
	struct stat st;
	int fd;

	while (cs->nspare > 0) {
		snprintf(name, SPOOL_NAME_MAX, "%s", cs->spare[--cs->nspare]);
		fd = openat(tmp, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;	/* removed meanwhile: next */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_nlink == 1 && st.st_uid == cs->new_uid) {
			*old = st.st_size;
			return fd;
		}
		close(fd);
	}
	*old = 0;
	/* A name can be taken by a killed daemon that had our pid. */
	for (int i = 0; i < 8; i++) {
		tmp_name(cs, name);
		fd = openat(tmp, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd >= 0 && cs->new_mode == 0 && fstat(fd, &st) == 0) {
		cs->new_uid = st.st_uid;
		cs->new_mode = st.st_mode & 07777;
	}
	return fd;
}

/*
 * Record j's new state (takes j over): its file is written to tmp/ now
 * and published by flush_staged() at the end of a loop pass (at most
 * CB_FLUSH_MS later), which makes every staged file durable with one
 * syncfs(2) (or one fsync each when they are few), renames each into
 * pending/ (a retry, mtime = the due time), delivered/ or failed/,
 * fsyncs those directories once, and only then removes the claimed
 * copies (recycle()) and drops their locks.
 */
static void
persist(struct callback_sender *cs, struct job *j)
{
	char tmp[SPOOL_NAME_MAX];
	struct buf b;
	off_t old = 0;
	int fd = -1;

	buf_init(&b, 0);
	if (cbdel_encode(&j->c, &b) != 0 || (fd = tmp_open(cs, tmp,
	    &old)) < 0 || write(fd, b.data, b.len) != (ssize_t)b.len ||
	    (old > (off_t)b.len && ftruncate(fd, (off_t)b.len) != 0)) {
		/* Left unlocked in active/: the next sweep hands it back. */
		log_warn("%s: cannot record the callback state; the try will "
		    "be repeated", j->c.request_id);
		if (fd >= 0) {
			close(fd);
			(void)unlinkat(cs->sp.dir[SPOOL_TMP], tmp, 0);
		}
		buf_fini(&b);
		job_free(j);
		return;
	}
	if (j->c.st.status == DELIVERY_PENDING && j->c.st.next_ms >= 0) {
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = (time_t)(j->c.st.next_ms / 1000);
		ts[0].tv_nsec = ts[1].tv_nsec = (long)(j->c.st.next_ms %
		    1000) * 1000000;
		(void)futimens(fd, ts);
		if (j->c.st.next_ms < cs->next_scan)
			cs->next_scan = j->c.st.next_ms; /* look again then */
	}
	close(fd);
	snprintf(j->tmp, sizeof(j->tmp), "%s", tmp);
	j->state = b;			/* kept for _on_callback_failed */
	if (cs->staged == NULL)
		cs->staged_ms = tstime_now_ms();
	j->next = cs->staged;
	cs->staged = j;
	cs->nstaged++;
}

/* MariaDB mode: the callback_record history gets j's state as of at
 * (epoch ms): created, each try, DELIVERED, CALLBACK_FAILED. */
static void
note_record(struct callback_sender *cs, const struct job *j, int64_t at)
{
	struct records_callback r;

	if (cs->cfg.mariadb[0] == '\0')
		return;
	r.delivery_id = j->c.webhook_id;
	r.request_id = j->c.request_id;
	r.url = j->url[0] != '\0' ? j->url : j->c.url != NULL ? j->c.url : "";
	r.state = delivery_status_name(j->c.st.status);
	r.last_error = j->c.st.last_error != DELIVERY_ERR_NONE ?
	    delivery_error_name(j->c.st.last_error) : NULL;
	r.attempts = j->c.st.attempts;
	r.last_http = j->c.st.last_http;
	r.next_try_ms = j->c.st.status == DELIVERY_PENDING ? j->c.st.next_ms :
	    -1;
	r.updated_ms = at;
	if (records_append_callback(&cs->sp, &r) != 0)
		log_warn("%s: cannot write the callback record",
		    j->c.request_id);
}

#define CB_SYNCFS_MIN 16	/* from this many files one syncfs is cheaper */
/*
 * New states are flushed together: at the end of the loop pass in which
 * the first of them is CB_FLUSH_MS old, or there are CB_FLUSH_MAX, or
 * no request is in flight (then at once).  A busy sender shares one
 * syncfs and one fsync per directory among more tries; the endpoints do
 * not wait for it (the next try of an endpoint starts when the previous
 * one's response is in).
 */
#define CB_FLUSH_MS	10
#define CB_FLUSH_MAX	CB_SPARES_MAX

/*
 * Move j's claimed copy (its new state is durable) into tmp/ as a spare,
 * named into name (SPOOL_NAME_MAX bytes); nfresh were moved before it in
 * this pass.  Returns 1 when moved, 0 when another user owns it or there
 * are spares enough: the caller removes it.
 */
static int
recycle(struct callback_sender *cs, const struct job *j, char *name,
    int nfresh)
{
	/* Owner and permissions as a new file's; a new mtime, because the
	 * leader's tmp/ cleaning goes by age. */
	if (cs->new_mode == 0 || j->uid != cs->new_uid ||
	    cs->nspare + nfresh >= CB_SPARES_MAX || (j->mode != cs->new_mode &&
	    fchmod(j->fd, cs->new_mode) != 0) || futimens(j->fd, NULL) != 0)
		return 0;
	tmp_name(cs, name);
	return renameat(cs->d.self, j->file, cs->sp.dir[SPOOL_TMP], name) ==
	    0;
}

/* Make the n files just moved into tmp/ by recycle() spares, once their
 * names' removal from active/<node>/ is durable (or remove them). */
static void
spares_add(struct callback_sender *cs, char (*name)[SPOOL_NAME_MAX], int n)
{
	int64_t now = tstime_now_ms();
	int ok;

	if (n == 0)
		return;
	ok = !cs->sp.do_fsync || fsync(cs->d.self) == 0;
	for (int i = 0; i < n; i++)
		if (!ok || cs->nspare == CB_SPARES_MAX)
			(void)unlinkat(cs->sp.dir[SPOOL_TMP], name[i], 0);
		else {
			memcpy(cs->spare[cs->nspare], name[i],
			    sizeof(cs->spare[0]));
			cs->spare_ms[cs->nspare++] = now;
		}
}

static void
flush_staged(struct callback_sender *cs)
{
	static const int dest[] = { [DELIVERY_PENDING] = D_PENDING,
	    [DELIVERY_DELIVERED] = D_DELIVERED, [DELIVERY_FAILED] = D_FAILED };
	int dirty[D_N] = { 0 };
	struct job *j, *next;
	char (*fresh)[SPOOL_NAME_MAX] = cs->fresh;
	int nfresh = 0;

	if (cs->staged == NULL)
		return;
	if (cs->sp.do_fsync && cs->nstaged >= CB_SYNCFS_MIN) {
		if (syncfs(cs->sp.dir[SPOOL_TMP]) != 0)
			log_warn("syncfs for %d callback state(s)",
			    cs->nstaged);
	} else if (cs->sp.do_fsync)
		for (j = cs->staged; j != NULL; j = j->next) {
			int fd = openat(cs->sp.dir[SPOOL_TMP], j->tmp,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0 || fsync(fd) != 0)
				log_warn("fsync tmp/%s", j->tmp);
			if (fd >= 0)
				close(fd);
		}
	for (j = cs->staged; j != NULL; j = j->next) {
		int d = dest[j->c.st.status];

		if (renameat(cs->sp.dir[SPOOL_TMP], j->tmp, cs->d.fd[d],
		    j->file) != 0) {
			log_warn("%s: cannot record the callback state; the try "
			    "will be repeated", j->c.request_id);
			(void)unlinkat(cs->sp.dir[SPOOL_TMP], j->tmp, 0);
			j->tmp[0] = '\0';
		} else
			dirty[d] = 1;
	}
	for (int d = 0; d < D_N; d++)
		if (dirty[d])
			(void)spool_sync_dir(&cs->sp, cs->d.fd[d]);
	for (j = cs->staged; j != NULL; j = next) {
		next = j->next;
		if (j->tmp[0] != '\0') {
			if (recycle(cs, j, fresh[nfresh], nfresh))
				nfresh++;
			else if (unlinkat(cs->d.self, j->file, 0) != 0 &&
			    errno != ENOENT)
				log_warn("%s: unlink claimed delivery",
				    j->c.request_id);
			note_record(cs, j, tstime_now_ms());
			if (j->c.st.status == DELIVERY_FAILED)
				run_failed_hook(cs, j, &j->state);
		}
		job_free(j);		/* closes the fd: drops the lock */
	}
	cs->staged = NULL;
	cs->nstaged = 0;
	spares_add(cs, fresh, nfresh);
}

/*
 * Log a try of j (sent: a request was made) and count it in
 * taskspool_callbacks_total: ok (delivered), failed (CALLBACK_FAILED),
 * retry (failed, another try scheduled) or rejected (not sent: blocked
 * destination, circuit open, no secret, and another try scheduled).
 */
static void
log_try(const struct job *j, int64_t at, const char *what, int sent)
{
	char u[256];

	metrics_callback_outcome(j->c.st.status == DELIVERY_DELIVERED ? "ok" :
	    j->c.st.status == DELIVERY_FAILED ? "failed" : sent ? "retry" :
	    "rejected");

	log_info("%s: callback try %d to %s: %s -> %s%s%s", j->c.request_id,
	    j->c.st.attempts, log_safe(u, sizeof(u), j->url[0] != '\0' ?
	    j->url : "(no URL)"), what, delivery_status_name(j->c.st.status),
	    j->c.st.status == DELIVERY_FAILED ? " " : "",
	    j->c.st.status == DELIVERY_FAILED ?
	    delivery_reason_name(j->c.st.reason) : "");
	(void)at;
}

/* Claim pending/<name>: lock, then rename into active/<node>/ (the lock
 * travels with the inode), then read.  Returns a new job or NULL. */
static struct job *
claim(struct callback_sender *cs, const char *name)
{
	struct stat a, b;
	struct job *j;
	struct buf buf;
	char why[200];
	int fd;

	fd = openat(cs->d.fd[D_PENDING], name, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || renameat(cs->d.fd[D_PENDING],
	    name, cs->d.self, name) != 0) {
		close(fd);
		return NULL;		/* another sender has it */
	}
	/* A redelivery may have replaced the name after our open. */
	if (fstat(fd, &a) != 0 || fstatat(cs->d.self, name, &b,
	    AT_SYMLINK_NOFOLLOW) != 0 || a.st_ino != b.st_ino) {
		close(fd);
		fd = openat(cs->d.self, name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
	}
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		close(fd);
		return NULL;
	}
	j->fd = fd;
	snprintf(j->file, sizeof(j->file), "%.*s", SPOOL_NAME_MAX - 1, name);
	buf_init(&buf, CB_FILE_MAX);
	if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode) || a.st_nlink != 1 ||
	    buf_read_fd(&buf, fd) != 0 || cbdel_decode(buf.data != NULL ?
	    buf.data : "", buf.len, &j->c, why, sizeof(why)) != 0) {
		if (buf.len == 0 && why[0] == '\0')
			snprintf(why, sizeof(why), "unreadable delivery file");
		log_warnx("outbox/callbacks/%s: %s; moved to corrupt/", name,
		    why);
		(void)spool_quarantine(&cs->sp, cs->d.self, name, why);
		buf_fini(&buf);
		j->fd = -1;
		close(fd);
		free(j);
		return NULL;
	}
	buf_fini(&buf);
	j->uid = a.st_uid;
	j->mode = a.st_mode & 07777;
	if (j->c.st.attempts == 0)
		note_record(cs, j, j->c.created_ms);	/* created */
	return j;
}

/* Hand back unlocked deliveries in active/<node>/ (a dead sender's, or
 * ours from before a restart). */
static void
sweep_dir(struct callback_sender *cs, int dirfd, const char *owner)
{
	struct dirent *de;
	DIR *dp;

	if ((dp = spool_opendir(dirfd)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			int newer = 0;
			struct stat st;

			for (int i = D_PENDING; i <= D_FAILED; i++)
				if (i != D_ACTIVE && fstatat(cs->d.fd[i],
				    de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
					newer = 1;
			if (newer)
				(void)unlinkat(dirfd, de->d_name, 0);
			else if (spool_move_excl(dirfd, de->d_name,
			    cs->d.fd[D_PENDING], de->d_name) == 0)
				log_info("callback %s: taken back from "
				    "active/%s/", de->d_name, owner);
		}
		close(fd);
	}
	closedir(dp);
}

static void
sweep(struct callback_sender *cs, int self_too)
{
	struct dirent *de;
	DIR *dp;

	if ((dp = spool_opendir(cs->d.fd[D_ACTIVE])) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		int fd;

		if (!spool_code_ok(de->d_name) || (!self_too &&
		    strcmp(de->d_name, cs->sp.node) == 0))
			continue;
		fd = openat(cs->d.fd[D_ACTIVE], de->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		sweep_dir(cs, fd, de->d_name);
		close(fd);
	}
	closedir(dp);
}

/* Claim every due file of pending/; set next_scan from the earliest
 * not yet due. */
static void
scan_pending(struct callback_sender *cs, int64_t now)
{
	struct dirent *de;
	DIR *dp;
	int64_t next = now + CB_SCAN_MS;
	long depth = 0;

	if ((dp = spool_opendir(cs->d.fd[D_PENDING])) == NULL) {
		cs->next_scan = next;
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		struct stat st;
		int64_t due;
		struct job *j;

		if (de->d_name[0] == '.' || strlen(de->d_name) >=
		    SPOOL_NAME_MAX || fstatat(cs->d.fd[D_PENDING],
		    de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		depth++;
		due = (int64_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000;
		if (due > now) {
			if (due < next)
				next = due;
			continue;
		}
		/* Bounded work in hand: the rest waits for the next pass. */
		if (cs->nready + cs->ninflight >= 4 *
		    cs->cfg.callback_max_inflight) {
			next = now;
			break;
		}
		if ((j = claim(cs, de->d_name)) != NULL) {
			j->next = cs->ready;
			cs->ready = j;
			cs->nready++;
		}
	}
	closedir(dp);
	cs->next_scan = next;
	/* pending/ as far as this pass read it (taskspool_outbox_depth) */
	metrics_outbox_depth("callback", depth);
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct job *j = arg;

	(void)p;
	j->resp_bytes += size * n;
	if (j->resp_bytes > CB_RESP_MAX) {
		j->aborted = 1;
		return 0;		/* abort: bounded memory and time */
	}
	return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct job *j = arg;
	size_t len = size * n;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0)
		j->retry_after_ms = -1;		/* a new response */
	else if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		size_t i = 12;
		int64_t v = 0;
		int digits = 0;

		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < len && p[i] >= '0' && p[i] <= '9' && digits < 10) {
			v = v * 10 + (p[i++] - '0');
			digits++;
		}
		/* delta-seconds only; an HTTP-date is ignored. */
		if (digits > 0 && (i == len || p[i] == '\r' || p[i] == '\n' ||
		    p[i] == ' '))
			j->retry_after_ms = v * 1000;
	}
	return len;
}

static curl_socket_t
on_opensocket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct job *j = arg;
	struct callback_sender *cs;
	curl_socket_t fd;

	curl_easy_getinfo(j->easy, CURLINFO_PRIVATE, (char **)&cs);
	(void)purpose;
	if (ssrf_denied(&a->addr, a->addrlen, &cs->allow)) {
		j->blocked = 1;
		return CURL_SOCKET_BAD;
	}
	fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	return fd < 0 ? CURL_SOCKET_BAD : fd;
}

/* URL policy before any connection (API.md §7.1, §4.3): scheme, no
 * userinfo, allowed port.  Fills key with "url:<scheme>://<host>:<port>".
 * Returns 0 or -1. */
static int
url_check(const struct callback_sender *cs, const char *url, char *key,
    size_t klen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *user = NULL;
	int rc = -1;

	if (u == NULL || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) !=
	    CURLUE_OK)
		goto out;
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK)
		goto out;
	if (strcmp(scheme, "https") != 0 && !(strcmp(scheme, "http") == 0 &&
	    cs->cfg.callback_allow_http))
		goto out;
	if (cs->allow.nport > 0 && !ssrf_port_ok(&cs->allow, atoi(port)))
		goto out;
	snprintf(key, klen, "url:%s://%s:%s", scheme, host, port);
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(user);
	curl_url_cleanup(u);
	return rc;
}

/* Start the request of j at now.  Returns 0, or -1 when it could not be
 * started (j is then finished as a failed try). */
static int
start_request(struct callback_sender *cs, struct job *j, int64_t now,
    const char *const *secrets, size_t nsecrets)
{
	char h[WHSIGN_HEADER_MAX + 40], sig[WHSIGN_HEADER_MAX];
	int64_t ts = now / 1000;
	CURL *e;

	j->retry_after_ms = -1;
	if (whsign_header(secrets, nsecrets, j->c.webhook_id, ts, j->c.body,
	    j->c.body_len, sig) != 0)
		return -1;
	if ((e = curl_easy_init()) == NULL)
		return -1;
	j->easy = e;
	j->hdrs = curl_slist_append(j->hdrs, "Content-Type: application/json");
	j->hdrs = curl_slist_append(j->hdrs, "User-Agent: ts-callback/1");
	snprintf(h, sizeof(h), "webhook-id: %s", j->c.webhook_id);
	j->hdrs = curl_slist_append(j->hdrs, h);
	snprintf(h, sizeof(h), "webhook-timestamp: %" PRId64, ts);
	j->hdrs = curl_slist_append(j->hdrs, h);
	snprintf(h, sizeof(h), "webhook-signature: %s", sig);
	j->hdrs = curl_slist_append(j->hdrs, h);
	snprintf(h, sizeof(h), "X-Webhook-Attempt: %d", j->c.st.attempts);
	j->hdrs = curl_slist_append(j->hdrs, h);
	j->hdrs = curl_slist_append(j->hdrs, "Expect:");
	if (j->hdrs == NULL)
		return -1;
	/* API.md §7.4, every option. */
	curl_easy_setopt(e, CURLOPT_URL, j->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR,
	    cs->cfg.callback_allow_http ? "http,https" : "https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "https");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS, CURLPROTO_HTTPS |
	    (cs->cfg.callback_allow_http ? CURLPROTO_HTTP : 0));
#endif
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 0L);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_opensocket);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, j);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (cs->cfg.callback_ca_file[0] != '\0')
		curl_easy_setopt(e, CURLOPT_CAINFO, cs->cfg.callback_ca_file);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	    cs->cfg.callback_timeout_ms);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, cs->cfg.callback_timeout_ms);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	curl_easy_setopt(e, CURLOPT_UNRESTRICTED_AUTH, 0L);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, j->c.body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)j->c.body_len);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, j->hdrs);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, j);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, j);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)cs);
	if (curl_multi_add_handle(cs->multi, e) != CURLM_OK)
		return -1;
	return 0;
}

/* Finish j's request: classify, update state and breaker, persist. */
static void
finish_request(struct callback_sender *cs, struct job *j, CURLcode rc)
{
	struct delivery_outcome o;
	long code = 0;
	int64_t end = tstime_now_ms();
	char what[64];

	curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &code);
	o.http_status = (int)code;
	o.retry_after_ms = j->retry_after_ms;
	o.error = DELIVERY_ERR_NONE;
	/* A 2xx status line that arrived stays a success even when we
	 * stopped reading the body (§6.4). */
	if (rc != CURLE_OK && !(code >= 200 && code <= 299)) {
		o.http_status = 0;
		if (j->blocked)
			o.error = DELIVERY_ERR_BLOCKED;
		else if (rc == CURLE_OPERATION_TIMEDOUT)
			o.error = DELIVERY_ERR_TIMEOUT;
		else if (rc == CURLE_COULDNT_RESOLVE_HOST)
			o.error = DELIVERY_ERR_DNS;
		else if (rc == CURLE_SSL_CONNECT_ERROR ||
		    rc == CURLE_PEER_FAILED_VERIFICATION ||
		    rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CIPHER ||
		    rc == CURLE_SSL_CACERT_BADFILE)
			o.error = DELIVERY_ERR_TLS;
		else if (rc == CURLE_UNSUPPORTED_PROTOCOL)
			o.error = DELIVERY_ERR_BLOCKED;
		else if (code > 0) {
			o.http_status = (int)code;
			o.error = DELIVERY_ERR_HTTP;
		} else
			o.error = DELIVERY_ERR_CONNECT;
	}
	if (delivery_done(&cs->pol, &j->c.st, &j->ep->br, &o, end, rnd32()) &&
	    j->using_reg) {
		if (reg_disable(&cs->sp, cs->d.fd[D_REG], j->c.app_id,
		    j->ep->reg_updated, sizeof(j->ep->reg_updated)) != 0)
			log_warn("%s: cannot disable the registration of %s",
			    j->c.request_id, j->c.app_id);
		else
			log_warnx("callback registration of app %s disabled: "
			    "the receiver answered 410 Gone", j->c.app_id);
	}
	if (j->c.st.status != DELIVERY_PENDING)
		j->c.finished_ms = end;
	if (o.http_status > 0)
		snprintf(what, sizeof(what), "HTTP %d", o.http_status);
	else
		snprintf(what, sizeof(what), "%s (%s)",
		    delivery_error_name(o.error), curl_easy_strerror(rc));
	log_try(j, end, what, 1);
	curl_multi_remove_handle(cs->multi, j->easy);
	curl_easy_cleanup(j->easy);
	j->easy = NULL;
	persist(cs, j);
}

/*
 * Decide about ready job j at now.  Returns 1 when j left the ready list
 * (sent, or finished without a request), 0 when it must wait.
 */
static int
dispatch(struct callback_sender *cs, struct job *j, int64_t now)
{
	const char *sec[WHSIGN_SECRETS_MAX];
	size_t nsec = 0;
	struct reg r;
	int have_reg = 0, disabled = 0, bad_url = 0;
	char key[TASK_URL_MAX + 8];
	enum delivery_action act;

	if (j->c.st.status != DELIVERY_PENDING) {
		persist(cs, j);		/* a finished file found in pending/ */
		return 1;
	}
	/* Its endpoint (fixed for a delivery: its URL's origin, or its
	 * app's registration) has a try in flight: wait, without reading
	 * the registration or parsing the URL again at every pass. */
	if (j->ep != NULL && j->ep->br.inflight > 0)
		return 0;
	if (j->c.app_id[0] != '\0' && reg_read(cs->d.fd[D_REG], j->c.app_id,
	    now, &r) == 0)
		have_reg = 1;
	j->using_reg = j->c.url == NULL;
	if (j->using_reg) {
		snprintf(key, sizeof(key), "app:%s", j->c.app_id);
		snprintf(j->url, sizeof(j->url), "%s", have_reg ? r.url : "");
		/* No registration any more: as good as disabled. */
		disabled = !have_reg || r.disabled;
	} else
		snprintf(j->url, sizeof(j->url), "%s", j->c.url);
	if (!disabled && url_check(cs, j->url, key, sizeof(key)) != 0) {
		bad_url = 1;
		if (!j->using_reg)
			snprintf(key, sizeof(key), "url:invalid");
	}
	if ((j->ep = endpoint_get(cs, key)) == NULL)
		return 0;
	/* Re-registering (a new updatedAt) resets the breaker (§4.3). */
	if (have_reg && j->using_reg && strcmp(j->ep->reg_updated,
	    r.updated) != 0) {
		if (j->ep->reg_updated[0] != '\0')
			delivery_breaker_init(&j->ep->br);
		snprintf(j->ep->reg_updated, sizeof(j->ep->reg_updated), "%s",
		    r.updated);
	}
	if (have_reg)
		for (size_t i = 0; i < r.nsecrets; i++)
			sec[nsec++] = r.secret[i];
	else if (cs->cfg.callback_secret[0] != '\0')
		sec[nsec++] = cs->cfg.callback_secret;
	act = delivery_begin(&j->ep->br, disabled, now, &j->probe);
	if (act == DELIVERY_WAIT)
		return 0;
	if (act == DELIVERY_SEND && !bad_url && nsec > 0 &&
	    cs->ninflight >= cs->cfg.callback_max_inflight)
		return 0;
	if (act == DELIVERY_SEND && nsec == 0) {
		/* Unsigned callbacks are never sent (callback_secret). */
		j->c.st.attempts++;
		j->c.st.last_attempt_ms = now;
		j->c.st.status = DELIVERY_FAILED;
		j->c.st.reason = DELIVERY_REASON_NO_SECRET;
		j->c.st.next_ms = -1;
		j->c.finished_ms = now;
		log_try(j, now, "no secret to sign with", 0);
		persist(cs, j);
		return 1;
	}
	if (act != DELIVERY_SEND) {
		delivery_fail_fast(&cs->pol, &j->c.st, act == DELIVERY_REFUSE,
		    now, rnd32());
		if (j->c.st.status != DELIVERY_PENDING)
			j->c.finished_ms = now;
		log_try(j, now, act == DELIVERY_REFUSE ? "ENDPOINT_DISABLED" :
		    "CIRCUIT_OPEN (no request)", 0);
		persist(cs, j);
		return 1;
	}
	delivery_sent(&j->c.st, &j->ep->br, now);
	if (bad_url || start_request(cs, j, now, sec, nsec) != 0) {
		struct delivery_outcome o = { DELIVERY_ERR_BLOCKED, 0, -1 };

		if (!bad_url)
			o.error = DELIVERY_ERR_CONNECT;
		if (j->easy != NULL) {
			curl_easy_cleanup(j->easy);
			j->easy = NULL;
		}
		delivery_done(&cs->pol, &j->c.st, &j->ep->br, &o, now, rnd32());
		if (j->c.st.status != DELIVERY_PENDING)
			j->c.finished_ms = now;
		log_try(j, now, bad_url ? "BLOCKED_DESTINATION (URL not "
		    "allowed)" : "CONNECT_FAILED (could not start)", !bad_url);
		persist(cs, j);
		return 1;
	}
	j->next = cs->flight;
	cs->flight = j;
	cs->ninflight++;
	return 1;
}

static void
dispatch_ready(struct callback_sender *cs, int64_t now)
{
	struct job **pp = &cs->ready;

	while (*pp != NULL) {
		struct job *j = *pp, *next = j->next;

		if (dispatch(cs, j, now)) {
			*pp = next;
			cs->nready--;
		} else
			pp = &j->next;
	}
}

static void
reap_done(struct callback_sender *cs)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(cs->multi, &left)) != NULL) {
		struct job **pp;

		if (m->msg != CURLMSG_DONE)
			continue;
		for (pp = &cs->flight; *pp != NULL; pp = &(*pp)->next)
			if ((*pp)->easy == m->easy_handle) {
				struct job *j = *pp;
				CURLcode rc = m->data.result;

				*pp = j->next;
				cs->ninflight--;
				finish_request(cs, j, rc);
				break;
			}
	}
}

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
	sweep(cs, 1);
	for (;;) {
		int64_t now = tstime_now_ms(), wait_ms;
		int running, woken, stop;

		pthread_mutex_lock(&cs->mu);
		woken = cs->woken;
		stop = cs->stop;
		cs->woken = 0;
		pthread_mutex_unlock(&cs->mu);
		if (stop)
			break;
		if (now >= cs->next_sweep) {
			sweep(cs, 0);
			spares_expire(cs, now);
			cs->next_sweep = now + 10 * CB_SCAN_MS;
		}
		if (woken || now >= cs->next_scan)
			scan_pending(cs, now);
		dispatch_ready(cs, now);
		curl_multi_perform(cs->multi, &running);
		reap_done(cs);
		/* Endpoints freed by the completions get their next try now,
		 * so the receivers work while the pass's states are made
		 * durable. */
		if (cs->ready != NULL) {
			dispatch_ready(cs, tstime_now_ms());
			curl_multi_perform(cs->multi, &running);
		}
		if (cs->staged != NULL && (cs->ninflight == 0 || cs->nstaged >=
		    CB_FLUSH_MAX || tstime_now_ms() - cs->staged_ms >=
		    CB_FLUSH_MS))
			flush_staged(cs);
		{
			long open = 0;

			for (struct endpoint *e = cs->eps; e != NULL;
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
	flush_staged(cs);
	while (cs->flight != NULL) {
		struct job *j = cs->flight;

		cs->flight = j->next;
		curl_multi_remove_handle(cs->multi, j->easy);
		curl_easy_cleanup(j->easy);
		job_free(j);		/* unlocked: taken back at next start */
	}
	while (cs->ready != NULL) {
		struct job *j = cs->ready;

		cs->ready = j->next;
		job_free(j);
	}
	spares_expire(cs, INT64_MAX);
	return NULL;
}

struct callback_sender *
callback_sender_start(const struct config *cfg, const struct spool *sp,
    char *why, size_t whylen)
{
	struct callback_sender *cs;
	const curl_version_info_data *vi;
	char msg[200];

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
	cs->cfg = *cfg;
	delivery_policy_default(&cs->pol);
	(void)delivery_policy_parse(&cs->pol, cfg->callback_delays_ms);
	cs->pol.jitter_pct = (int)cfg->callback_jitter_pct;
	(void)ssrf_parse_ports(&cs->allow, cfg->callback_allowed_ports, msg,
	    sizeof(msg));
	(void)ssrf_parse_cidrs(&cs->allow, cfg->callback_allow_cidrs, msg,
	    sizeof(msg));
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

void
callback_sender_wake(struct callback_sender *cs)
{
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->woken = 1;
	if (cs->multi != NULL)
		curl_multi_wakeup(cs->multi);
	else
		pthread_cond_signal(&cs->cond);
	pthread_mutex_unlock(&cs->mu);
}

void
callback_sender_stop(struct callback_sender *cs)
{
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->stop = 1;
	if (cs->multi != NULL)
		curl_multi_wakeup(cs->multi);
	else
		pthread_cond_signal(&cs->cond);
	pthread_mutex_unlock(&cs->mu);
	pthread_join(cs->th, NULL);
	pthread_cond_destroy(&cs->cond);
	pthread_mutex_destroy(&cs->mu);
	if (cs->multi != NULL)
		curl_multi_cleanup(cs->multi);
	while (cs->eps != NULL) {
		struct endpoint *e = cs->eps;

		cs->eps = e->next;
		free(e);
	}
	cbdirs_close(&cs->d);
	free(cs);
	curl_global_cleanup();
}
