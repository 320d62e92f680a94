"""Client: one keep-alive HTTP connection to a taskspool API, every
request signed with TS1-HMAC-SHA256 (signing.py), every error answer
raised as a ProblemError (errors.py), 429 and 503 retried after their
Retry-After within a bound (contrib/openapi/openapi.yaml is the contract).

Standard library only (http.client): it works offline.  Not thread-safe:
use one Client per thread.
"""

import base64
import datetime
import email.utils
import http.client
import json
import re
import ssl
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, Iterator, Mapping,
                    Optional, Tuple, Union, cast)

from . import __version__
from .errors import ProblemError, TransportError, problem_error
from .models import (TERMINAL, CallbackRegistration, CronNext, Health, Job,
                     JobList, JobRun, LogPage, Submission, SubmitAccepted,
                     Task, TaskList)
from .signing import ts1_headers

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")

# What a connection that the server (or a middlebox) closed while idle
# looks like when it is used again: worth one new connection.
_DROPPED = (http.client.RemoteDisconnected, http.client.BadStatusLine,
            ConnectionResetError, ConnectionAbortedError, BrokenPipeError)


@dataclass(frozen=True)
class Response:
    """One answer: status, headers (names in lower case) and raw body."""
    status: int
    headers: Dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        """The body parsed as JSON (raises ValueError when it is not)."""
        return json.loads(self.body.decode("utf-8"))


def retry_after_seconds(value: Optional[str],
                        now: Optional[float] = None) -> Optional[int]:
    """The Retry-After header value (RFC 9110 §10.2.3: delay-seconds or an
    HTTP-date) in whole seconds from now (Unix s, default the clock), at
    least 0; None when absent or unreadable."""
    if value is None:
        return None
    v = value.strip()
    if v.isdigit():
        return int(v)
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0, int(when.timestamp() - (time.time() if now is None
                                           else now) + 0.999))


def _check_id(request_id: str) -> str:
    if not isinstance(request_id, str) or not _ID.match(request_id):
        raise ValueError("not a requestId ([A-Za-z0-9][A-Za-z0-9._-]{0,127}):"
                         " %r" % (request_id,))
    return request_id


def _query(params: Iterable[Tuple[str, str]]) -> str:
    return "&".join("%s=%s" % (urllib.parse.quote(k, safe=""),
                               urllib.parse.quote(v, safe=""))
                    for k, v in params)


def _instant(v: Union[str, datetime.datetime]) -> str:
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            raise ValueError("since: a datetime needs a time zone")
        u = v.astimezone(datetime.timezone.utc)
        # %04d, not strftime's %Y: glibc does not pad years before 1000.
        return "%04d-%s.%03dZ" % (u.year, u.strftime("%m-%dT%H:%M:%S"),
                                  u.microsecond // 1000)
    return v


class Client:
    """A client of one taskspool API.

    base_url: "https://host[:port]" (or http), optionally with the prefix
    the web server mounts the API under ("https://host/ts" for
    https://host/ts/api/tasks); the signed path is always the API's own
    /api/... path.  app_id, secret: the AppId and its AppSecret text as
    `taskspool apps add` printed it.  timeout: seconds for connecting and
    for each read.  max_retries: how many times a 429 or 503 answer is
    retried (each retry a new request: new timestamp, nonce, signature;
    same body); max_retry_wait: the most seconds all those waits may add
    up to, for one call (a Retry-After beyond it is raised at once).
    ssl_context: for https (default ssl.create_default_context()).

    Every method raises a ProblemError subclass for an error answer of the
    API and TransportError when no usable answer arrived; ValueError for
    an argument the server would refuse (a requestId outside its grammar).
    """

    def __init__(self, base_url: str, app_id: str, secret: str,
                 timeout: float = 10.0, *, max_retries: int = 3,
                 max_retry_wait: float = 30.0,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("base_url must be http(s)://host[:port][/prefix]:"
                             " %r" % (base_url,))
        self.base_url = base_url
        self.app_id = app_id
        self._secret = secret
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self._ssl = ssl_context
        self._conn: Optional[http.client.HTTPConnection] = None
        self._used = False
        #: how long to wait for a Retry-After (replaceable in tests)
        self.sleep: Callable[[float], None] = time.sleep

    # --- connection ----------------------------------------------------

    def close(self) -> None:
        """Close the connection (a later request opens a new one)."""
        if self._conn is not None:
            self._conn.close()
        self._conn = None
        self._used = False

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Client(%r, %r)" % (self.base_url, self.app_id)

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._https:
                self._conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self.timeout,
                    context=self._ssl or ssl.create_default_context())
            else:
                self._conn = http.client.HTTPConnection(
                    self._host, self._port, timeout=self.timeout)
            self._used = False
        return self._conn

    def _send(self, method: str, path: str, query: str,
              body: Optional[bytes], headers: Mapping[str, str],
              signed: bool) -> Response:
        h = {"User-Agent": "taskspool-python/" + __version__}
        h.update(headers)
        if signed:
            h.update(ts1_headers(self.app_id, self._secret, method, path,
                                 query, body or b""))
        if body is not None:
            h["Content-Type"] = "application/json"
        target = self._prefix + path + ("?" + query if query else "")
        conn = self._connection()
        conn.request(method, target, body=body, headers=h)
        self._used = True
        r = conn.getresponse()
        data = r.read()
        resp = Response(r.status, {k.lower(): v for k, v in r.getheaders()},
                        data)
        if r.will_close:
            self.close()
        return resp

    def request(self, method: str, path: str, query: str = "",
                body: Optional[bytes] = None,
                headers: Optional[Mapping[str, str]] = None,
                signed: bool = True) -> Response:
        """Send one request and return its answer, whatever the status.

        method: GET, POST, PUT or DELETE; path: the API's path (/api/...,
        /metrics); query: the raw query string without '?' (only bytes the
        server accepts: signing.query_ok); body: the exact bytes to send
        (sent as application/json); signed: add the TS1 headers (computed
        for this request).  On a kept connection that turns out to be
        closed by the server it reconnects once and sends the request
        again, newly signed.  Raises TransportError when no answer
        arrives."""
        for attempt in (1, 2):
            reused = self._conn is not None and self._used
            try:
                return self._send(method, path, query, body, headers or {},
                                  signed)
            except _DROPPED as e:
                self.close()
                if attempt == 2 or not reused:
                    raise TransportError("%s %s: connection lost: %s"
                                         % (method, path, e)) from e
            except (OSError, http.client.HTTPException) as e:
                self.close()
                raise TransportError("%s %s: %s" % (method, path, e)) from e
        raise AssertionError("not reached")

    def _error(self, r: Response) -> Exception:
        retry = retry_after_seconds(r.headers.get("retry-after"))
        ctype = r.headers.get("content-type", "")
        if ctype.split(";")[0].strip().lower() == "application/problem+json":
            try:
                doc = r.json()
            except ValueError:
                doc = None
            if isinstance(doc, dict):
                return problem_error(r.status, doc, retry)
        return TransportError("unexpected answer %d (%s)" % (r.status,
                              ctype or "no Content-Type"), r.status, r.body)

    def call(self, method: str, path: str, ok: Tuple[int, ...],
             query: str = "", body: Optional[bytes] = None,
             headers: Optional[Mapping[str, str]] = None,
             signed: bool = True) -> Response:
        """request() until an answer with a status in ok, which it
        returns.  A 429 or 503 is retried after its Retry-After (1 s when
        it has none), at most max_retries times and max_retry_wait seconds
        in all; any other answer, or one that may not be retried any more,
        is raised (ProblemError, or TransportError for an answer that is
        not a problem document)."""
        tries, waited = 0, 0.0
        while True:
            r = self.request(method, path, query, body, headers, signed)
            if r.status in ok:
                return r
            err = self._error(r)
            if r.status in (429, 503) and tries < self.max_retries:
                wait = float(getattr(err, "retry_after", None) or 1)
                if waited + wait <= self.max_retry_wait:
                    self.sleep(wait)
                    waited += wait
                    tries += 1
                    continue
            raise err

    # --- operations (operationId in contrib/openapi/openapi.yaml) -------

    def health(self) -> Health:
        """getHealth: GET /api/health (unsigned)."""
        return cast(Health, self.call("GET", "/api/health", (200,),
                                      signed=False).json())

    def metrics(self) -> str:
        """getMetrics: GET /metrics (unsigned), the Prometheus text."""
        return self.call("GET", "/metrics", (200,),
                         signed=False).body.decode("utf-8")

    def submit(self, task: Union[Mapping[str, Any], bytes], *,
               idempotency_key: Optional[str] = None) -> Submission:
        """submitTask: POST /api/tasks.

        task: the task's members (serialised compactly as UTF-8 JSON) or
        the exact body bytes.  idempotency_key: sent as Idempotency-Key;
        by default the task's requestId, else a new random key, so that
        the client's own retries (a dropped connection, 429, 503) can
        never create a second task.  Keep the key to retry after a
        timeout yourself: the same key with the same body answers the
        same task (Submission.replayed); with another body it raises
        IdempotencyKeyReusedError."""
        if isinstance(task, (bytes, bytearray)):
            body = bytes(task)
            rid = None
            try:
                parsed = json.loads(body.decode("utf-8"))
                if isinstance(parsed, dict) and isinstance(
                        parsed.get("requestId"), str):
                    rid = parsed["requestId"]
            except ValueError:
                pass
        else:
            body = json.dumps(task, ensure_ascii=False,
                              separators=(",", ":")).encode("utf-8")
            rid = task.get("requestId") if isinstance(
                task.get("requestId"), str) else None
        key = idempotency_key or rid or str(uuid.uuid4())
        r = self.call("POST", "/api/tasks", (202,), body=body,
                      headers={"Idempotency-Key": key})
        doc: SubmitAccepted = r.json()
        return Submission(doc["requestId"], doc["status"],
                          r.headers.get("idempotent-replayed") == "true",
                          r.headers.get("location", ""), doc)

    def get(self, request_id: str) -> Task:
        """getTask: GET /api/tasks/{requestId}."""
        return cast(Task, self.call("GET", "/api/tasks/" +
                                    _check_id(request_id), (200,)).json())

    def cancel(self, request_id: str) -> Task:
        """cancelTask: DELETE /api/tasks/{requestId}; the task's view after
        up to 2 s (status CANCELLED, or its current state when no daemon
        acted yet).  A finished task raises TaskFinishedError."""
        return cast(Task, self.call("DELETE", "/api/tasks/" +
                                    _check_id(request_id), (200, 202)).json())

    def list_tasks(self, *, status: Union[None, str, Iterable[str]] = None,
                   task_code: Optional[str] = None,
                   since: Union[None, str, datetime.datetime] = None,
                   limit: Optional[int] = None,
                   cursor: Optional[str] = None) -> TaskList:
        """listTasks: one page of GET /api/tasks, newest first.  status:
        one state or several; since: RFC 3339 text or an aware datetime;
        limit 1..500 (server default 50); cursor: nextCursor of the
        previous page."""
        q = []
        if status is not None:
            for s in [status] if isinstance(status, str) else status:
                q.append(("status", s))
        if task_code is not None:
            q.append(("taskCode", task_code))
        if since is not None:
            q.append(("since", _instant(since)))
        if limit is not None:
            q.append(("limit", str(int(limit))))
        if cursor is not None:
            q.append(("cursor", cursor))
        return cast(TaskList, self.call("GET", "/api/tasks", (200,),
                                        query=_query(q)).json())

    def iter_tasks(self, *, status: Union[None, str, Iterable[str]] = None,
                   task_code: Optional[str] = None,
                   since: Union[None, str, datetime.datetime] = None,
                   page_size: Optional[int] = None) -> Iterator[Task]:
        """Every task list_tasks() finds with these filters, page after
        page (following nextCursor, page_size per request), newest
        first.  Lazy: a page is fetched when the previous one is used up."""
        st = [status] if isinstance(status, str) else (
            list(status) if status is not None else None)
        cursor: Optional[str] = None
        while True:
            page = self.list_tasks(status=st, task_code=task_code,
                                   since=since, limit=page_size,
                                   cursor=cursor)
            for item in page["items"]:
                yield item
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def submit_bulk(self, tasks: Iterable[Mapping[str, Any]]) -> Any:
        """submitTasksBulk: POST /api/tasks:bulk with up to 500 task
        objects (each with its requestId, so a retried request replays
        instead of duplicating).  Returns the answer, {"accepted",
        "refused", "results": [{"status", "body"}, ...]}: results[i] is
        what submit() of tasks[i] alone would have got (202 and the
        summary, or the problem); nothing is raised for a refused item."""
        body = json.dumps({"tasks": list(tasks)},
                          separators=(",", ":")).encode("utf-8")
        return self.call("POST", "/api/tasks:bulk", (200,), body=body).json()

    def retry(self, request_id: str) -> Task:
        """retryTask: POST /api/tasks/{requestId}/retry, a FAILED or
        CANCELLED task back to the queue with its history (202: the task
        as it is now).  Any other state raises ConflictError
        (TASK_NOT_RETRYABLE, its taskStatus in the problem)."""
        return cast(Task, self.call(
            "POST", "/api/tasks/" + _check_id(request_id) + "/retry",
            (202,), body=b"{}").json())

    def logs(self, request_id: str, *, attempt: Optional[int] = None,
             stream: str = "stdout", offset: int = 0,
             limit: Optional[int] = None) -> LogPage:
        """getTaskLogs: one page of what an attempt (default the latest)
        of the task wrote to stream ("stdout" or "stderr") from byte
        offset on, at most limit bytes (1..262144, server default 65536).
        Follow a running attempt by asking again from the page's
        nextOffset until its "complete" is true; log_bytes() decodes a
        page's data."""
        q = [("stream", stream), ("offset", str(int(offset)))]
        if attempt is not None:
            q.append(("attempt", str(int(attempt))))
        if limit is not None:
            q.append(("limit", str(int(limit))))
        return cast(LogPage, self.call(
            "GET", "/api/tasks/" + _check_id(request_id) + "/logs", (200,),
            query=_query(q)).json())

    @staticmethod
    def log_bytes(page: LogPage) -> bytes:
        """The bytes of a logs() page, whatever its encoding."""
        if page["encoding"] == "base64":
            return base64.b64decode(page["data"], validate=True)
        return page["data"].encode("utf-8")

    def cron_next(self, expr: str, *, dialect: Optional[str] = None,
                  tz: Optional[str] = None,
                  since: Union[None, str, datetime.datetime] = None,
                  n: Optional[int] = None) -> CronNext:
        """cronNext: GET /api/cron/next, the `taskspool cron next` and
        `cron explain` preview: the next n (1..100, server default 5)
        fire instants of expr after since (RFC 3339 text or an aware
        datetime; default now) in zone tz (default: the zone a systemd
        calendar event names, else UTC), with its meaning in words and
        what the zone's next offset change does to it.  dialect: vixie,
        quartz or systemd (default: guessed from expr)."""
        q = [("expr", expr)]
        if dialect is not None:
            q.append(("dialect", dialect))
        if tz is not None:
            q.append(("tz", tz))
        if since is not None:
            q.append(("from", _instant(since)))
        if n is not None:
            q.append(("n", str(int(n))))
        return cast(CronNext, self.call("GET", "/api/cron/next", (200,),
                                        query=_query(q)).json())

    # --- recurring jobs ---------------------------------------------------

    @staticmethod
    def _job_path(job_code: str, action: str = "") -> str:
        if not isinstance(job_code, str) or not _CODE.match(job_code):
            raise ValueError("not a jobCode ([A-Za-z0-9][A-Za-z0-9_.-]"
                             "{0,63}): %r" % (job_code,))
        return "/api/jobs/" + job_code + action

    @staticmethod
    def _job_body(job: Union[Mapping[str, Any], bytes]) -> bytes:
        if isinstance(job, (bytes, bytearray)):
            return bytes(job)
        return json.dumps(job, ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8")

    def list_jobs(self, *, limit: Optional[int] = None,
                  after: Optional[str] = None) -> JobList:
        """listJobs: one page of GET /api/jobs, the jobs of the task codes
        this AppId is granted, by jobCode; limit 1..1000 (server default
        100); after: the nextAfter of the previous page."""
        q = []
        if limit is not None:
            q.append(("limit", str(int(limit))))
        if after is not None:
            q.append(("after", after))
        return cast(JobList, self.call("GET", "/api/jobs", (200,),
                                       query=_query(q)).json())

    def iter_jobs(self, page_size: Optional[int] = None) -> Iterator[Job]:
        """Every job list_jobs() finds, page after page."""
        after: Optional[str] = None
        while True:
            page = self.list_jobs(limit=page_size, after=after)
            for item in page["jobs"]:
                yield item
            after = page.get("nextAfter")
            if not after:
                return

    def create_job(self, job: Union[Mapping[str, Any], bytes]) -> Job:
        """createJob: POST /api/jobs, a new job from its definition (the
        members of a jobs/<jobCode>.json file).  An existing jobCode
        raises ConflictError (JOB_EXISTS); a definition the codec refuses
        raises ValidationError naming the field."""
        return cast(Job, self.call("POST", "/api/jobs", (201,),
                                   body=self._job_body(job)).json())

    def put_job(self, job: Union[Mapping[str, Any], bytes],
                job_code: Optional[str] = None) -> Job:
        """putJob: PUT /api/jobs/{jobCode}, create or replace (idempotent;
        a replaced job keeps its createdAt).  job_code: default the
        definition's jobCode."""
        if job_code is None:
            if isinstance(job, (bytes, bytearray)):
                job_code = json.loads(bytes(job).decode("utf-8"))["jobCode"]
            else:
                job_code = job["jobCode"]
        return cast(Job, self.call("PUT", self._job_path(str(job_code)),
                                   (200, 201),
                                   body=self._job_body(job)).json())

    def get_job(self, job_code: str) -> Job:
        """getJob: GET /api/jobs/{jobCode}: the definition, the zone it
        fires in and its next five fires in that zone and in UTC."""
        return cast(Job, self.call("GET", self._job_path(job_code),
                                   (200,)).json())

    def delete_job(self, job_code: str) -> None:
        """deleteJob: DELETE /api/jobs/{jobCode}; its pending and running
        tasks stay."""
        self.call("DELETE", self._job_path(job_code), (200,))

    def run_job(self, job_code: str) -> JobRun:
        """runJob: POST /api/jobs/{jobCode}/run, `taskspool jobs run-now`:
        a task of the job now, this AppId's (get(), logs() work on it).
        A forbid job whose run is pending or running raises ConflictError
        (JOB_RUN_IN_PROGRESS, activeRequestId in the problem)."""
        return cast(JobRun, self.call("POST", self._job_path(job_code,
                                                             "/run"),
                                      (202,), body=b"{}").json())

    def enable_job(self, job_code: str, enabled: bool = True) -> Job:
        """enableJob / disableJob: POST /api/jobs/{jobCode}/enable or
        /disable."""
        return cast(Job, self.call(
            "POST", self._job_path(job_code, "/enable" if enabled
                                   else "/disable"), (200,),
            body=b"{}").json())

    def disable_job(self, job_code: str) -> Job:
        """disableJob: POST /api/jobs/{jobCode}/disable."""
        return self.enable_job(job_code, False)

    def register_callback(self, url: str, *,
                          rotate_secret: bool = False) -> CallbackRegistration:
        """registerCallback: POST /api/callbacks/register.  The answer's
        secret (whsec_...) is there only when one was made (the first
        registration, or rotate_secret): keep it, it is not shown again."""
        doc: Dict[str, Any] = {"url": url}
        if rotate_secret:
            doc["rotateSecret"] = True
        body = json.dumps(doc, separators=(",", ":")).encode("utf-8")
        return cast(CallbackRegistration, self.call(
            "POST", "/api/callbacks/register", (200, 201), body=body).json())

    def wait(self, request_id: str, timeout: float = 60.0,
             interval: float = 0.5) -> Task:
        """get() every interval seconds until the task is SUCCESS, FAILED
        or CANCELLED or timeout seconds have passed; returns the last view
        (check its status: it is not terminal after a timeout)."""
        end = time.monotonic() + timeout
        while True:
            t = self.get(request_id)
            if t["status"] in TERMINAL or time.monotonic() >= end:
                return t
            time.sleep(interval)


__all__ = ["Client", "Response", "retry_after_seconds", "ProblemError"]
