"""Tests of the taskspool Python client (contrib/python), unittest only.

Run by tests/scenario/t0056-python-client.sh with the package installed
into a venv by pip, as a user installs it.  Two parts:

- LiveTest: against the running API (lighttpd + taskspool.cgi + a
  daemon) named by the environment the script sets: TS_URL, and the
  secrets of the apps it made: TS_SECRET (app "tester": task codes echo
  and count), TS_PAGER_SECRET ("pager": count), TS_LIMITED_SECRET
  ("limited": rate=2 per api_rate_window_sec = 3), TS_CB_SECRET ("cb",
  which registers a callback and submits nothing).  Skipped (and then
  the script fails) when TS_URL is unset.
- FakeServerTest: the client's own behaviour on answers the real server
  gives only in rare states (a run of 503s, a connection it drops, an
  HTML page from the web server), from a local http.server.
"""
import datetime
import http.server
import json
import os
import re
import socket
import threading
import time
import unittest

import taskspool
from taskspool import (Client, ForbiddenError, IdempotencyKeyReusedError,
                       NotFoundError, ProblemError, RateLimitedError,
                       ServiceUnavailableError, SignatureMismatchError,
                       TaskFinishedError, TaskNotFoundError, TransportError,
                       UnknownTaskCodeError, ValidationError)

URL = os.environ.get("TS_URL", "")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                  r"[0-9a-f]{12}$")


def run_id(prefix):
    return "%s-%d-%d" % (prefix, os.getpid(), time.monotonic_ns() % 10**9)


@unittest.skipUnless(URL, "TS_URL not set")
class LiveTest(unittest.TestCase):
    def setUp(self):
        self.c = Client(URL, "tester", os.environ["TS_SECRET"], timeout=30)

    def tearDown(self):
        self.c.close()

    def test_installed_package(self):
        # The package under test is the installed one, typed.
        here = os.path.dirname(taskspool.__file__)
        self.assertIn("site-packages", here)
        self.assertTrue(os.path.exists(os.path.join(here, "py.typed")))
        # pyproject.toml's version is the module's.
        from importlib.metadata import version
        self.assertEqual(version("taskspool"), taskspool.__version__)

    def test_health(self):
        h = self.c.health()
        self.assertEqual(h["status"], "ok")
        self.assertEqual(h["nodes"], 1)
        # The release the CGI names (git describe may add "-N-gHASH" or
        # "+gHASH") is the package's version.
        self.assertRegex(h["version"], "^%s([-+].*)?$"
                         % re.escape(taskspool.__version__))

    def test_submit_replay_and_result(self):
        rid = run_id("py-e2e")
        task = {"requestId": rid, "taskCode": "echo",
                "executeParams": {"x": [1, 2], "s": "é"}}
        s1 = self.c.submit(task)
        self.assertEqual(s1.request_id, rid)
        self.assertFalse(s1.replayed)
        self.assertEqual(s1.location, "/api/tasks/" + rid)
        self.assertEqual(s1.body["links"]["self"], "/api/tasks/" + rid)
        s2 = self.c.submit(task)
        self.assertTrue(s2.replayed)
        self.assertEqual(s2.request_id, rid)
        t = self.c.wait(rid, timeout=30, interval=0.1)
        self.assertEqual(t["status"], "SUCCESS")
        self.assertEqual(t["result"], {"got": {"x": [1, 2], "s": "é"}})
        with self.assertRaises(IdempotencyKeyReusedError) as cm:
            self.c.submit(dict(task, executeParams={"x": 3}))
        e = cm.exception
        self.assertEqual((e.status, e.code), (422, "IDEMPOTENCY_KEY_REUSED"))
        self.assertEqual(e.type, "urn:ts:problem:idempotency-key-reused")
        self.assertEqual(e.extras["requestId"], rid)

    def test_idempotency_key(self):
        # Without a requestId the client generates a key (a UUID), so a
        # retry of the same call object cannot make a second task ...
        s = self.c.submit({"taskCode": "count"})
        self.assertRegex(s.request_id, UUID)
        # ... and two calls are two tasks.
        self.assertNotEqual(self.c.submit({"taskCode": "count"}).request_id,
                            s.request_id)
        key = run_id("py-key")
        body = b'{"taskCode":"count"}'
        a = self.c.submit(body, idempotency_key=key)
        b = self.c.submit(body, idempotency_key=key)
        self.assertEqual((a.request_id, a.replayed), (key, False))
        self.assertEqual((b.request_id, b.replayed), (key, True))

    def test_problem_errors(self):
        with self.assertRaises(TaskNotFoundError) as cm:
            self.c.get("no-such-task")
        e = cm.exception
        self.assertIsInstance(e, NotFoundError)
        self.assertIsInstance(e, ProblemError)
        self.assertEqual(e.status, 404)
        self.assertEqual(e.code, "TASK_NOT_FOUND")
        self.assertEqual(e.title, "No such task")
        self.assertEqual(e.instance, "/api/tasks/no-such-task")
        self.assertRegex(e.trace_id, "^[0-9a-f]{32}$")
        self.assertEqual(e.extras, {"requestId": "no-such-task"})
        with self.assertRaises(ValidationError) as cm:
            self.c.submit({"taskCode": "echo", "bogus": 1})
        self.assertEqual(cm.exception.fields, {"bogus": "unknown member"})
        with self.assertRaises(ValidationError) as cm:
            self.c.submit({"taskCode": "echo", "timeoutSec": 0})
        self.assertEqual(list(cm.exception.fields), ["timeoutSec"])
        with self.assertRaises(UnknownTaskCodeError) as cm:
            self.c.submit({"taskCode": "no.such.code"})
        self.assertEqual(cm.exception.extras["taskCode"], "no.such.code")
        with self.assertRaises(ForbiddenError) as cm:
            self.c.submit({"taskCode": "secret.code"})
        self.assertEqual(cm.exception.code, "TASK_CODE_FORBIDDEN")
        with self.assertRaises(ValueError):
            self.c.get("../health")

    def test_wrong_secret(self):
        bad = Client(URL, "tester", "not-the-secret")
        with self.assertRaises(SignatureMismatchError) as cm:
            bad.get("x-1")
        e = cm.exception
        self.assertEqual(e.status, 401)
        cs = e.extras["canonicalString"].split("\n")
        self.assertEqual(cs[:5], ["TS1-HMAC-SHA256", "GET", "/api/tasks/x-1",
                                  "", "tester"])
        self.assertEqual(cs[7], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4"
                                "649b934ca495991b7852b855")
        bad.close()

    def test_cancel(self):
        rid = run_id("py-cancel")
        self.c.submit({"requestId": rid, "taskCode": "echo",
                       "triggerType": "delay", "delayMs": 3600000})
        t = self.c.cancel(rid)
        if t["status"] != "CANCELLED":     # 202: no daemon acted in 2 s
            t = self.c.wait(rid, timeout=30, interval=0.1)
        self.assertEqual(t["status"], "CANCELLED")
        with self.assertRaises(TaskFinishedError) as cm:
            self.c.cancel(rid)
        self.assertEqual(cm.exception.extras["taskStatus"], "CANCELLED")

    def test_pagination(self):
        p = Client(URL, "pager", os.environ["TS_PAGER_SECRET"])
        since = datetime.datetime.now(datetime.timezone.utc) - \
            datetime.timedelta(seconds=2)
        ids = []
        for i in range(7):
            rid = run_id("py-page-%d" % i)
            p.submit({"requestId": rid, "taskCode": "count"})
            ids.append(rid)
            time.sleep(0.002)          # distinct createdAt (ms)
        got = [t["requestId"] for t in p.iter_tasks(since=since,
                                                    page_size=3)]
        self.assertEqual(got, list(reversed(ids)))
        first = p.list_tasks(since=since, limit=3)
        self.assertEqual(len(first["items"]), 3)
        self.assertIsNotNone(first["nextCursor"])
        last = p.list_tasks(since=since, limit=7)
        self.assertIsNone(last["nextCursor"])
        self.assertEqual(list(p.iter_tasks(task_code="echo")), [])
        with self.assertRaises(ValidationError) as cm:
            p.list_tasks(limit=501)
        self.assertEqual(cm.exception.fields, {"limit": "must be an integer "
                                                         "1..500"})
        p.close()

    def test_keep_alive_and_reconnect(self):
        self.c.health()
        port = self.c._conn.sock.getsockname()[1]
        for _ in range(3):
            with self.assertRaises(TaskNotFoundError):
                self.c.get("no-such-task")
            self.assertEqual(self.c._conn.sock.getsockname()[1], port,
                             "a new connection for a request")
        # The connection dies under the client (as when the server closes
        # an idle one): the next request reconnects once and succeeds.
        self.c._conn.sock.shutdown(socket.SHUT_RDWR)
        self.assertEqual(self.c.health()["status"], "ok")
        self.assertNotEqual(self.c._conn.sock.getsockname()[1], port)

    def test_rate_limit_retry_after(self):
        secret = os.environ["TS_LIMITED_SECRET"]
        strict = Client(URL, "limited", secret, max_retry_wait=0)
        waits = []
        strict.sleep = waits.append
        raised = None
        for _ in range(3):
            try:
                strict.list_tasks()
            except RateLimitedError as e:
                raised = e
                break
        self.assertIsNotNone(raised, "no 429 in 3 requests with rate=2")
        self.assertEqual(raised.status, 429)
        self.assertGreaterEqual(raised.retry_after, 1)
        self.assertLessEqual(raised.retry_after, 3)
        self.assertEqual((raised.extras["limit"], raised.extras["windowSec"]),
                         (2, 3))
        self.assertEqual(waits, [])
        # The default client waits Retry-After and gets through.
        patient = Client(URL, "limited", secret)
        slept = []

        def sleep(s):
            slept.append(s)
            time.sleep(s)
        patient.sleep = sleep
        t0 = time.monotonic()
        self.assertIn("items", patient.list_tasks())
        self.assertGreaterEqual(len(slept), 1)
        self.assertGreaterEqual(time.monotonic() - t0, slept[0] - 0.05)
        strict.close()
        patient.close()

    def test_register_callback(self):
        cb = Client(URL, "cb", os.environ["TS_CB_SECRET"])
        url = "https://203.0.113.10/taskspool/callbacks"
        r = cb.register_callback(url)
        self.assertEqual((r["appId"], r["url"], r["status"]),
                         ("cb", url, "ACTIVE"))
        self.assertRegex(r["secret"], "^whsec_[A-Za-z0-9+/]{43}=$")
        self.assertEqual(r["secretHint"], r["secret"][-4:])
        again = cb.register_callback(url)
        self.assertNotIn("secret", again)
        rot = cb.register_callback(url, rotate_secret=True)
        self.assertNotEqual(rot["secret"], r["secret"])
        self.assertIn("previousSecretExpiresAt", rot)
        with self.assertRaises(taskspool.CallbackUrlError) as cm:
            cb.register_callback("ftp://203.0.113.10/x")
        self.assertEqual(cm.exception.code, "INVALID_CALLBACK_URL")
        cb.close()

    def test_metrics(self):
        text = self.c.metrics()
        self.assertIsInstance(text, str)


class _Fake(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = []          # [(status, headers, body, drop)] answered in turn
    seen = []            # (method, path, headers) of each request
    connections = 0

    def setup(self):
        type(self).connections += 1
        super().setup()

    def log_message(self, *a):
        pass

    def _answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        type(self).seen.append((self.command, self.path, dict(self.headers)))
        status, headers, body, drop = type(self).script.pop(0)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if drop:                 # close without saying so (keep-alive)
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True

    do_GET = do_POST = do_DELETE = _answer


def problem(status, code, **extra):
    doc = {"type": "urn:ts:problem:" + code.lower().replace("_", "-"),
           "title": "t", "status": status, "detail": "d",
           "instance": "/api/x", "code": code, "traceId": "0" * 32}
    doc.update(extra)
    return json.dumps(doc).encode()


PJ = {"Content-Type": "application/problem+json"}
J = {"Content-Type": "application/json"}
HEALTH = json.dumps({"status": "ok", "nodes": 1, "leader": None,
                     "version": "0"}).encode()


class FakeServerTest(unittest.TestCase):
    def setUp(self):
        _Fake.script, _Fake.seen, _Fake.connections = [], [], 0
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        self.waits = []
        self.c = Client(self.url, "app", "secret", timeout=10)
        self.c.sleep = self.waits.append

    def tearDown(self):
        self.c.close()
        self.srv.shutdown()
        self.srv.server_close()

    def test_503_retried_after_retry_after_with_new_signatures(self):
        _Fake.script = [(503, dict(PJ, **{"Retry-After": "1"}),
                         problem(503, "SERVICE_UNAVAILABLE"), False),
                        (503, dict(PJ, **{"Retry-After": "2"}),
                         problem(503, "SERVICE_UNAVAILABLE"), False),
                        (200, J, b'{"requestId":"a"}', False)]
        self.assertEqual(self.c.get("a"), {"requestId": "a"})
        self.assertEqual(self.waits, [1.0, 2.0])
        nonces = {h["X-Nonce"] for _, _, h in _Fake.seen}
        self.assertEqual(len(nonces), 3, "a retry reused a nonce")
        self.assertEqual(_Fake.connections, 1)

    def test_retry_bounds(self):
        # More retries than max_retries: the last answer is raised.
        _Fake.script = [(429, dict(PJ, **{"Retry-After": "1"}),
                         problem(429, "RATE_LIMITED", limit=1, windowSec=1),
                         False)] * 4
        c = Client(self.url, "app", "secret", max_retries=2)
        c.sleep = self.waits.append
        with self.assertRaises(RateLimitedError) as cm:
            c.get("a")
        self.assertEqual(cm.exception.retry_after, 1)
        self.assertEqual(self.waits, [1.0, 1.0])
        self.assertEqual(len(_Fake.seen), 3)
        c.close()
        # A Retry-After beyond max_retry_wait is raised at once.
        _Fake.seen[:] = []
        _Fake.script = [(503, dict(PJ, **{"Retry-After": "100"}),
                         problem(503, "SERVICE_UNAVAILABLE"), False)]
        with self.assertRaises(ServiceUnavailableError) as cm:
            self.c.health()
        self.assertEqual(cm.exception.retry_after, 100)
        self.assertEqual(len(_Fake.seen), 1)

    def test_reconnect_once_on_dropped_connection(self):
        _Fake.script = [(200, J, HEALTH, True), (200, J, HEALTH, False)]
        self.c.health()
        time.sleep(0.1)
        self.assertEqual(self.c.health()["status"], "ok")
        self.assertEqual(_Fake.connections, 2)
        self.assertEqual(len(_Fake.seen), 2)

    def test_no_connection_is_transport_error(self):
        self.srv.shutdown()
        self.srv.server_close()
        c = Client(self.url, "app", "secret", timeout=2)
        with self.assertRaises(TransportError):
            c.health()

    def test_html_error_page_is_transport_error(self):
        _Fake.script = [(413, {"Content-Type": "text/html"},
                         b"<h1>413</h1>", False)]
        with self.assertRaises(TransportError) as cm:
            self.c.submit({"taskCode": "x"})
        self.assertEqual(cm.exception.status, 413)
        self.assertEqual(cm.exception.body, b"<h1>413</h1>")
        # The submission carried its generated Idempotency-Key.
        self.assertRegex(_Fake.seen[0][2]["Idempotency-Key"], UUID)


VECTORS = os.environ.get("TS_API_VECTORS", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "data",
    "api-vectors.json"))


class SigningTest(unittest.TestCase):
    def test_shared_vectors(self):
        # tests/data/api-vectors.json: request_signing S01-S14 and
        # query_canonicalization (made with hmac/hashlib, checked with
        # openssl dgst).
        with open(VECTORS, encoding="utf-8") as f:
            v = json.load(f)
        self.assertEqual(len(v["request_signing"]), 14)
        for s in v["request_signing"]:
            body = bytes.fromhex(s.get("body_hex", ""))
            h = taskspool.ts1_headers(s["app_id"], s["secret"], s["method"],
                                      s["path"], s["raw_query"], body,
                                      timestamp=s["timestamp"],
                                      nonce=s["nonce"])
            self.assertEqual(h["X-Signature"], s["signature_hex"], s["id"])
            self.assertEqual(taskspool.canonical_string(
                s["method"], s["path"], s["raw_query"], s["app_id"],
                s["timestamp"], s["nonce"], body), s["canonical_string"],
                s["id"])
        for q in v["query_canonicalization"]:
            if "error" in q:
                self.assertFalse(taskspool.query_ok(q["raw_query"]),
                                 q["raw_query"])
            else:
                self.assertEqual(taskspool.canonical_query(q["raw_query"]),
                                 q["canonical_query"])

    def test_document_vector(self):
        # contrib/openapi/openapi.yaml, securitySchemes.TS1Signature
        # (recomputed with openssl dgst by t0055).
        h = taskspool.ts1_headers(
            "shop-prod", "ts_example_secret_do_not_use", "POST", "/api/tasks",
            "", b'{"requestId":"order-42","taskCode":"report.generate",'
                b'"executeParams":{"orderId":42}}',
            timestamp=1717243200, nonce="0123456789abcdef0123456789abcdef")
        self.assertEqual(h["X-Signature"], "599d32a2d32207314ee15480394b41fe"
                                           "c0c974aa21cfe10ddd26fb73c392a943")

    def test_canonical_query(self):
        # README.md "Signing a request", the canonical query example.
        self.assertEqual(taskspool.canonical_query(
            "status=FAILED&limit=5&taskCode=report%2egenerate"),
            "limit=5&status=FAILED&taskCode=report.generate")
        self.assertEqual(taskspool.canonical_query("a=1&a-b=2"), "a=1&a-b=2")
        self.assertEqual(taskspool.canonical_query("b&&a=%7e%2f"),
                         "a=~%2F&b=")
        for bad in ("a+b", "a b", "a=%2", "a=%zz", "é"):
            self.assertFalse(taskspool.query_ok(bad), bad)
            self.assertRaises(ValueError, taskspool.canonical_query, bad)

    def test_retry_after_date(self):
        now = 1445412480.0   # Wed, 21 Oct 2015 07:28:00 GMT
        self.assertEqual(taskspool.retry_after_seconds(
            "Wed, 21 Oct 2015 07:28:30 GMT", now=now), 30)
        self.assertEqual(taskspool.retry_after_seconds("7"), 7)
        self.assertIsNone(taskspool.retry_after_seconds("soon"))


if __name__ == "__main__":
    unittest.main()
