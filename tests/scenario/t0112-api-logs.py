#!/usr/bin/python3
"""t0112-api-logs.py - GET /api/tasks/{id}/logs through the Python client.

usage: t0112-api-logs.py CASE TRASH   (TS_URL, TS_APP_ID, TS_SECRET and
       TS_OTHER_SECRET, the secret of app "other", set)

The expected bytes are the ones the hooks of t0112-api-logs.sh print,
written out again here; the page rules are README.md's ("GET
/api/tasks/<requestId>/logs"): UTF-8 pages as JSON strings, others in
base64 (RFC 4648), no page ending inside a UTF-8 sequence when more
follows (RFC 3629), nextOffset to go on.  Prints what differs, exits 1
on any difference.
"""
import base64
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "contrib", "python",
                                "src"))
import taskspool  # noqa: E402

URL = os.environ["TS_URL"]
c = taskspool.Client(URL, os.environ["TS_APP_ID"], os.environ["TS_SECRET"])
bad = []
OUT = "h\u00e9llo <script>alert(1)</script> \x1b[31mred\x1b[0m\n"
ERR = b"\xff\x00bin\n"


def want(what, got, expected):
    if got != expected:
        bad.append("%s: got %r, want %r" % (what, got, expected))


def logs(rid, query=""):
    r = c.request("GET", "/api/tasks/%s/logs" % rid, query=query)
    return r.status, (r.json() if r.body else None)


def raw(page):
    if page["encoding"] == "base64":
        return base64.b64decode(page["data"], validate=True)
    return page["data"].encode("utf-8")


def hostile():
    st, p = logs("out-1")
    want("status", st, 200)
    want("default page", (p["attempt"], p["stream"], p["encoding"],
                          p["data"], p["complete"]),
         (1, "stdout", "utf-8", OUT, True))
    n = len(OUT.encode("utf-8"))
    want("sizes", (p["offset"], p["length"], p["nextOffset"], p["size"]),
         (0, n, n, n))
    st, p = logs("out-1", "stream=stderr")
    want("stderr", (st, p["encoding"], raw(p), p["complete"]),
         (200, "base64", ERR, True))
    # Byte 1 starts the two-byte e-acute: a 2-byte page stops before it.
    st, p = logs("out-1", "limit=2")
    want("cut page", (p["data"], p["length"], p["nextOffset"],
                      p["complete"]), ("h", 1, 1, False))
    st, p = logs("out-1", "limit=2&offset=1")
    want("next page", (p["data"], p["nextOffset"]), ("\u00e9", 3))
    # A limit below one character still moves on: the byte, in base64.
    st, p = logs("out-1", "limit=1&offset=1")
    want("one byte of a character", (p["encoding"], raw(p), p["nextOffset"]),
         ("base64", b"\xc3", 2))
    # A task cancelled before any attempt: nothing will come.
    c.submit({"requestId": "late-1", "taskCode": "out",
              "triggerType": "at", "runAt": "2099-01-01T00:00:00Z"})
    c.cancel("late-1")
    st, p = logs("late-1")
    want("cancelled before a start", (st, p["size"], p["complete"]),
         (200, 0, True))
    # Paging through with 5-byte pages gives back every byte.
    got, off = b"", 0
    for _ in range(100):
        st, p = logs("out-1", "limit=5&offset=%d" % off)
        got += raw(p)
        off = p["nextOffset"]
        if p["complete"]:
            break
    want("paged", got, OUT.encode("utf-8"))
    st, p = logs("out-1", "offset=100000")
    want("past the end", (st, p["length"], p["nextOffset"], p["data"],
                          p["complete"]), (200, 0, 100000, "", True))


def attempts():
    st, p = logs("twice-1", "attempt=1")
    want("attempt 1", (st, p["data"], p["complete"]),
         (200, "try 1\n", True))
    st, p = logs("twice-1")
    want("latest", (st, p["attempt"], p["data"]), (200, 2, "try 2\n"))
    st, p = logs("twice-1", "attempt=2&stream=stderr")
    want("no stderr", (st, p["size"], p["data"], p["encoding"],
                       p["complete"]), (200, 0, "", "utf-8", True))


def problems():
    cases = [("attempt=3", "attempt"), ("attempt=0", "attempt"),
             ("attempt=x", "attempt"), ("stream=both", "stream"),
             ("offset=-1", "offset"), ("limit=0", "limit"),
             ("limit=262145", "limit"), ("tail=1", "tail"),
             ("limit=1&limit=2", "limit")]
    for q, field in cases:
        st, p = logs("twice-1", q)
        got = (st, (p or {}).get("code"),
               ((p or {}).get("errors") or [{}])[0].get("field"))
        want(q, got, (422, "VALIDATION_FAILED", field))
    other = taskspool.Client(URL, "other", os.environ["TS_OTHER_SECRET"])
    r = other.request("GET", "/api/tasks/out-1/logs")
    want("other app", (r.status, r.json().get("code")),
         (404, "TASK_NOT_FOUND"))
    st, p = logs("nope-1")
    want("no task", (st, p.get("code")), (404, "TASK_NOT_FOUND"))
    r = c.request("POST", "/api/tasks/out-1/logs", body=b"{}")
    want("POST", (r.status, r.headers.get("allow")), (405, "GET"))


def follow(trash):
    """Follow slow-1 while it runs, with Client.logs(): 'a' first, 'b'
    after go; complete only at the end, every byte once."""
    got, off, saw_open, released = b"", 0, False, False
    deadline = time.time() + 30
    while time.time() < deadline:
        p = c.logs("slow-1", offset=off)  # the client's own method
        got += taskspool.Client.log_bytes(p)
        off = p["nextOffset"]
        if p["complete"]:
            break
        saw_open = True
        if got == b"a\n" and not released:
            open(os.path.join(trash, "go"), "w").close()
            released = True
        time.sleep(0.05)
    want("followed", got, b"a\nb\n")
    want("seen running", saw_open, True)


def retry():
    """fail-1 FAILED after one attempt: retried over the API it runs
    again (attempt 2, its own log) and ends SUCCESS; a SUCCESS task is
    409 TASK_NOT_RETRYABLE with taskStatus; another app's 404; a body
    member 422."""
    doc = c.retry("fail-1")  # the client's own method; 202 or raises
    # The view is the task as it is now: a node may have claimed it
    # (the retry wakes them) and even finished it.
    if (doc.get("status"), doc.get("attempt")) not in (
            ("PENDING", 1), ("RUNNING", 2), ("SUCCESS", 2)):
        bad.append("retry view: %r" % doc)
    t = c.wait("fail-1", timeout=30)
    want("after", (t["status"], t["attempt"]), ("SUCCESS", 2))
    st, p = logs("fail-1", "attempt=2")
    want("attempt 2 log", (st, p.get("data")), (200, "try 2\n"))
    if st != 200:
        bad.append("attempt 2: %r" % p)
    r = c.request("POST", "/api/tasks/fail-1/retry", body=b"")
    want("finished", (r.status, r.json().get("code"),
                      r.json().get("taskStatus")),
         (409, "TASK_NOT_RETRYABLE", "SUCCESS"))
    other = taskspool.Client(URL, "other", os.environ["TS_OTHER_SECRET"])
    r = other.request("POST", "/api/tasks/fail-1/retry", body=b"{}")
    want("other app", (r.status, r.json().get("code")),
         (404, "TASK_NOT_FOUND"))
    r = c.request("POST", "/api/tasks/fail-1/retry", body=b'{"x":1}')
    want("member", (r.status, r.json().get("code")),
         (422, "VALIDATION_FAILED"))
    r = c.request("GET", "/api/tasks/fail-1/retry")
    want("GET", (r.status, r.headers.get("allow")), (405, "POST"))


def race(trash):
    """8 retries of fail-2 (FAILED) at once, each from its own client:
    exactly one 202, the others 409 TASK_NOT_RETRYABLE; the task runs once
    more and ends in done/ only; nothing in corrupt/."""
    import threading
    spool = os.path.join(trash, "spool")
    go = threading.Barrier(8)
    got = []

    def one():
        k = taskspool.Client(URL, os.environ["TS_APP_ID"],
                             os.environ["TS_SECRET"])
        go.wait()
        r = k.request("POST", "/api/tasks/fail-2/retry", body=b"{}")
        got.append((r.status, r.json().get("code")))

    ts = [threading.Thread(target=one) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    want("answers", sorted(got), [(202, None)] +
         [(409, "TASK_NOT_RETRYABLE")] * 7)
    t = c.wait("fail-2", timeout=30)
    want("after", (t["status"], t["attempt"]), ("SUCCESS", 2))
    time.sleep(0.5)
    want("failed/ copy", os.path.exists(
        os.path.join(spool, "failed", "fail-2.json")), False)
    want("corrupt/", [f for f in os.listdir(os.path.join(spool, "corrupt"))
                      if f.startswith("fail-2")], [])


CASES = {"retry": retry, "hostile": hostile, "attempts": attempts,
         "problems": problems}
if sys.argv[1] == "follow":  # noqa: SIM108
    follow(sys.argv[2])
elif sys.argv[1] == "race":
    race(sys.argv[2])
else:
    CASES[sys.argv[1]]()
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
