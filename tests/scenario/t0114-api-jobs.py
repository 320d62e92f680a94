#!/usr/bin/python3
"""t0114-api-jobs.py - /api/jobs through the Python client.

usage: t0114-api-jobs.py CASE TRASH   (TS_URL, TS_APP_ID, TS_SECRET,
                                       TS_OTHER_SECRET, TS_ALL_SECRET,
                                       SPOOL set)

Expected values come from outside the code: the calendar (2030-01-01
is a Tuesday, so the Mondays after it are the 7th, 14th, 21st, 28th of
January and 4 February), the zone's rules (Europe/Berlin is +01:00 in
winter), the job file format of `taskspool jobs add` (README, "Recurring
jobs": its field and rule texts, which the CLI prints for the same
definition), and RFC 9110 (405 with Allow).  Prints what differs and
exits 1, or exits 0.
"""
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "contrib", "python",
                                "src"))
import taskspool  # noqa: E402

URL = os.environ["TS_URL"]
c = taskspool.Client(URL, os.environ["TS_APP_ID"], os.environ["TS_SECRET"])
other = taskspool.Client(URL, "other", os.environ["TS_OTHER_SECRET"])
admin = taskspool.Client(URL, "admin", os.environ["TS_ALL_SECRET"])
SPOOL = os.environ["SPOOL"]
bad = []

WEEKLY = {"jobCode": "weekly", "taskCode": "report",
          "cron": "0 12 * * 1", "timezone": "Europe/Berlin",
          "startAt": "2030-01-01T00:00:00Z",
          "executeParams": {"to": "ops"}}
MONDAYS = [("2030-01-%02dT12:00:00+01:00" % d, "2030-01-%02dT11:00:00Z" % d)
           for d in (7, 14, 21, 28)] + [("2030-02-04T12:00:00+01:00",
                                         "2030-02-04T11:00:00Z")]


def want(what, got, expected):
    if got != expected:
        bad.append("%s: got %r, want %r" % (what, got, expected))


def raw(method, path, body=None, client=None):
    r = (client or c).request(method, path, body=body)
    try:
        doc = r.json()
    except ValueError:
        doc = None
    return r, doc


def field(doc):
    return ((doc or {}).get("errors") or [{}])[0].get("field")


def job_file(code):
    with open(os.path.join(SPOOL, "jobs", code + ".json")) as f:
        return json.load(f)


def crud():
    j = c.create_job(WEEKLY)
    want("created", (j["jobCode"], j["valid"], j["timezone"], j["enabled"],
                     j["hostZone"]),
         ("weekly", True, "Europe/Berlin", True, False))
    want("next five Mondays", [(f["local"], f["utc"]) for f in
                               j["nextFires"]], MONDAYS)
    created = j["definition"].get("createdAt")
    want("createdAt stamped", isinstance(created, str), True)
    want("file = definition", job_file("weekly"), j["definition"])
    want("executeParams kept", j["definition"]["executeParams"],
         {"to": "ops"})
    r, doc = raw("POST", "/api/jobs", json.dumps(WEEKLY).encode())
    want("create again", (r.status, doc.get("code"), doc.get("jobCode")),
         (409, "JOB_EXISTS", "weekly"))
    g = c.get_job("weekly")
    want("GET", (g["definition"], [f["utc"] for f in g["nextFires"]]),
         (j["definition"], [m[1] for m in MONDAYS]))
    # The CLI reads the same file: its next fires are the API's.
    cli = subprocess.run([os.environ["TS"], "-c", os.environ["CONF"], "jobs",
                          "next", "weekly", "5", "--from",
                          "2029-12-31T00:00:00Z"], capture_output=True,
                         text=True)
    want("CLI next", cli.stdout.split("\n")[:5],
         ["%s %s" % m for m in MONDAYS])
    # PUT replaces (200) and keeps createdAt; the same PUT twice gives
    # the same file (idempotent).
    w2 = dict(WEEKLY, cron="0 13 * * 1")
    r, doc = raw("PUT", "/api/jobs/weekly", json.dumps(w2).encode())
    want("PUT replace", (r.status, doc["definition"]["cron"],
                         doc["definition"].get("createdAt"),
                         doc["nextFires"][0]["local"]),
         (200, "0 13 * * 1", created, "2030-01-07T13:00:00+01:00"))
    before = job_file("weekly")
    p2 = c.put_job(w2)
    want("PUT again, same file", (job_file("weekly"), p2["definition"]),
         (before, before))
    r, doc = raw("PUT", "/api/jobs/fresh", json.dumps(
        dict(WEEKLY, jobCode="fresh")).encode())
    want("PUT creates", (r.status, r.headers.get("location")),
         (201, "/api/jobs/fresh"))
    r, doc = raw("PUT", "/api/jobs/fresh", json.dumps(WEEKLY).encode())
    want("PUT other jobCode", (r.status, field(doc)), (422, "jobCode"))
    page = c.list_jobs()
    want("list", ([x["jobCode"] for x in page["jobs"]], page["nextAfter"]),
         (["fresh", "weekly"], None))
    p1 = c.list_jobs(limit=1)
    want("page 1", ([x["jobCode"] for x in p1["jobs"]], p1["nextAfter"]),
         (["fresh"], "fresh"))
    want("iter", [x["jobCode"] for x in c.iter_jobs(page_size=1)],
         ["fresh", "weekly"])
    for q, f in (("limit=0", "limit"), ("limit=1001", "limit"),
                 ("after=%2Fx", "after"), ("sort=1", "sort")):
        r = c.request("GET", "/api/jobs", query=q)
        want("list " + q, (r.status, field(r.json())), (422, f))


def cli_rule(defn):
    """What `taskspool jobs add` says of defn: its stderr."""
    p = subprocess.run([os.environ["TS"], "-c", os.environ["CONF"], "jobs",
                        "add", "-"], input=json.dumps(defn),
                       capture_output=True, text=True)
    return p.returncode, p.stderr


def validation():
    cases = [
        (dict(WEEKLY, jobCode="v1", cron="61 * * * *"), "cron"),
        (dict(WEEKLY, jobCode="v2", cron=None, fixedRateMs=0), "fixedRateMs"),
        (dict(WEEKLY, jobCode="v3", misfire="sometimes"), "misfire"),
        (dict(WEEKLY, jobCode="v4", timezone="Mars/Base"), "timezone"),
        (dict(WEEKLY, jobCode="v5", colour="red"), "colour"),
    ]
    for defn, f in cases:
        defn = {k: v for k, v in defn.items() if v is not None}
        r, doc = raw("POST", "/api/jobs", json.dumps(defn).encode())
        want("422 " + f, (r.status, doc.get("code"), field(doc)),
             (422, "VALIDATION_FAILED", f))
        # One codec: the CLI names the same field with the same rule.
        rc, err = cli_rule(defn)
        reason = ((doc or {}).get("errors") or [{}])[0].get("reason", "?")
        if rc != 65 or ("%s: %s" % (f, reason)) not in err:
            bad.append("CLI for %s: rc %d, %r lacks %r" % (f, rc, err,
                                                           reason))
    r, doc = raw("POST", "/api/jobs", json.dumps(
        dict(WEEKLY, jobCode="v6", taskCode="nohook")).encode(), admin)
    want("no hook", (r.status, doc.get("code"), doc.get("taskCode")),
         (422, "UNKNOWN_TASK_CODE", "nohook"))
    r, doc = raw("POST", "/api/jobs", json.dumps(
        dict(WEEKLY, jobCode="v7", taskCode="out")).encode())
    want("not granted", (r.status, doc.get("code")),
         (403, "TASK_CODE_FORBIDDEN"))
    r, doc = raw("POST", "/api/jobs", json.dumps(
        dict(WEEKLY, jobCode="v8", onFailure="out")).encode())
    want("onFailure not granted", (r.status, doc.get("code"),
                                   doc.get("field")),
         (403, "TASK_CODE_FORBIDDEN", "onFailure"))
    r, doc = raw("POST", "/api/jobs", b"[1]")
    want("not an object", (r.status, doc.get("code")), (400, "INVALID_JSON"))
    for code in ("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"):
        if os.path.exists(os.path.join(SPOOL, "jobs", code + ".json")):
            bad.append("refused %s was stored" % code)


def scoping():
    """other (task code out only) sees none of the tester's jobs; admin
    ("*") sees them, and an undecodable file as valid false."""
    want("other lists none", other.list_jobs()["jobs"], [])
    for m, path, body in (("GET", "/api/jobs/weekly", None),
                          ("DELETE", "/api/jobs/weekly", None),
                          ("POST", "/api/jobs/weekly/run", b"{}"),
                          ("POST", "/api/jobs/weekly/disable", b"{}")):
        r, doc = raw(m, path, body, other)
        want("other %s %s" % (m, path), (r.status, doc.get("code")),
             (404, "JOB_NOT_FOUND"))
    r, doc = raw("PUT", "/api/jobs/weekly", json.dumps(
        dict(WEEKLY, taskCode="out")).encode(), other)
    want("other PUT over it", (r.status, doc.get("code")),
         (403, "TASK_CODE_FORBIDDEN"))
    r, doc = raw("POST", "/api/jobs", json.dumps(
        dict(WEEKLY, taskCode="out")).encode(), other)
    want("other POST its name", (r.status, doc.get("code")),
         (409, "JOB_EXISTS"))
    want("still the tester's", job_file("weekly")["taskCode"], "report")
    with open(os.path.join(SPOOL, "jobs", "broken.json"), "w") as f:
        f.write('{"jobCode":"broken","taskCode":"report","cron":"<b>"}')
    codes = {x["jobCode"]: x for x in admin.list_jobs()["jobs"]}
    want("admin sees all", sorted(codes), ["broken", "fresh", "weekly"])
    want("broken: invalid", (codes["broken"]["valid"],
                             "cron" in codes["broken"]["error"]),
         (False, True))
    want("tester: no broken", [x["jobCode"] for x in c.list_jobs()["jobs"]],
         ["fresh", "weekly"])
    r, doc = raw("GET", "/api/jobs/broken")
    want("tester GET broken", (r.status, doc.get("code")),
         (404, "JOB_NOT_FOUND"))
    r, doc = raw("DELETE", "/api/jobs/broken", client=admin)
    want("admin deletes broken", (r.status, doc),
         (200, {"jobCode": "broken", "deleted": True}))


def enable():
    d = c.enable_job("weekly", False)
    want("disabled", (d["enabled"], d["nextFires"],
                      job_file("weekly").get("enabled")), (False, [], False))
    e = c.enable_job("weekly")
    want("enabled", (e["enabled"], len(e["nextFires"]),
                     job_file("weekly").get("enabled", True)), (True, 5, True))
    r, doc = raw("POST", "/api/jobs/weekly/enable", b'{"now":true}')
    want("enable body", (r.status, field(doc)), (422, "now"))
    r, doc = raw("POST", "/api/jobs/nosuch/enable", b"")
    want("enable unknown", (r.status, doc.get("code")),
         (404, "JOB_NOT_FOUND"))


def run(trash):
    """A run is the caller's task: it runs, GET and logs see it."""
    c.put_job({"jobCode": "echo-now", "taskCode": "report",
               "fixedRateMs": 86400000, "startAt": "2099-01-01T00:00:00Z",
               "overlap": "allow"})
    r = c.run_job("echo-now")
    rid = r["requestId"]
    want("run answer", (r["jobCode"], r["status"], rid.startswith(
        "echo-now.")), ("echo-now", "PENDING", True))
    t = c.wait(rid, timeout=30)
    want("run ran", t["status"], "SUCCESS")
    page = c.logs(rid)
    want("its log", page["data"], "report ran\n")
    r, doc = raw("GET", "/api/tasks/" + rid, client=other)
    want("not other's", (r.status, doc.get("code")), (404, "TASK_NOT_FOUND"))
    # forbid: while a run is pending or running, another is 409.
    c.put_job({"jobCode": "slow-job", "taskCode": "slow",
               "fixedRateMs": 86400000, "startAt": "2099-01-01T00:00:00Z"})
    first = c.run_job("slow-job")["requestId"]
    r, doc = raw("POST", "/api/jobs/slow-job/run", b"")
    want("forbid", (r.status, doc.get("code"), doc.get("activeRequestId")),
         (409, "JOB_RUN_IN_PROGRESS", first))
    want("currentRun", c.get_job("slow-job")["currentRun"], first)
    open(os.path.join(trash, "go"), "w").close()
    want("first ends", c.wait(first, timeout=30)["status"], "SUCCESS")
    second = c.run_job("slow-job")["requestId"]
    want("after it, a run", second != first, True)
    want("second ends", c.wait(second, timeout=30)["status"], "SUCCESS")


def race():
    """8 PUTs of one job at once, each with its own executeParams: the
    file is one of them, whole, with the first createdAt."""
    created = job_file("weekly")["createdAt"]
    errs = []

    def put(i):
        try:
            c2 = taskspool.Client(URL, os.environ["TS_APP_ID"],
                                  os.environ["TS_SECRET"])
            c2.put_job(dict(WEEKLY, executeParams={"n": i}))
        except Exception as e:  # noqa: BLE001 - reported below
            errs.append(repr(e))
    th = [threading.Thread(target=put, args=(i,)) for i in range(8)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    want("no error", errs, [])
    f = job_file("weekly")
    want("one of them", f["executeParams"]["n"] in range(8), True)
    want("createdAt kept", f["createdAt"], created)


def delete():
    c.delete_job("fresh")
    want("file gone", os.path.exists(os.path.join(SPOOL, "jobs",
                                                  "fresh.json")), False)
    r, doc = raw("GET", "/api/jobs/fresh")
    want("GET after", (r.status, doc.get("code")), (404, "JOB_NOT_FOUND"))
    r, doc = raw("DELETE", "/api/jobs/fresh")
    want("DELETE again", (r.status, doc.get("code")), (404, "JOB_NOT_FOUND"))


def methods():
    for m, path, allow in (("PATCH", "/api/jobs/weekly", "GET, PUT, DELETE"),
                           ("POST", "/api/jobs/weekly", "GET, PUT, DELETE"),
                           ("GET", "/api/jobs/weekly/run", "POST"),
                           ("DELETE", "/api/jobs", "GET, POST")):
        r = c.request(m, path, body=b"{}" if m != "GET" else None)
        want("%s %s" % (m, path), (r.status, r.headers.get("allow")),
             (405, allow))
    for path in ("/api/jobs/-bad", "/api/jobs/weekly/start",
                 "/api/jobs/" + "a" * 65, "/api/jobs/"):
        r = c.request("GET", path)
        want("GET " + path, (r.status, r.json().get("code")),
             (404, "NOT_FOUND"))
    r = c.request("GET", "/api/jobs", signed=False)
    want("unsigned", r.status, 401)


def fences():
    """What a breaker found: a fire's requestId taken first, a run of a
    job whose onFailure is not granted, a definition whose tasks cannot
    fit in a task file (1 MiB, README "The task file"), fires before a
    future createdAt."""
    r, doc = raw("POST", "/api/tasks", json.dumps(
        {"requestId": "weekly.20300107T110000Z", "taskCode": "out"}).encode(),
        other)
    want("fire id refused", (r.status, field(doc)), (422, "requestId"))
    r, doc = raw("POST", "/api/tasks", json.dumps(
        {"requestId": "weekly.20300107T110000123Z",
         "taskCode": "report"}).encode())
    want("fire id with ms refused", (r.status, field(doc)),
         (422, "requestId"))
    admin.put_job({"jobCode": "alerting", "taskCode": "report",
                   "onFailure": "out", "fixedRateMs": 86400000,
                   "startAt": "2099-01-01T00:00:00Z"})
    r, doc = raw("POST", "/api/jobs/alerting/run", b"")
    want("run, onFailure not granted", (r.status, doc.get("code"),
                                        doc.get("field")),
         (403, "TASK_CODE_FORBIDDEN", "onFailure"))
    big = dict(WEEKLY, jobCode="big", executeParams={"pad": "x" * 1047600})
    r, doc = raw("PUT", "/api/jobs/big", json.dumps(big).encode())
    want("oversize tasks", (r.status, field(doc)), (422, "executeParams"))
    want("not stored", os.path.exists(os.path.join(SPOOL, "jobs",
                                                   "big.json")), False)
    later = c.put_job({"jobCode": "later", "taskCode": "report",
                       "cron": "0 6 * * *", "timezone": "UTC",
                       "createdAt": "2099-03-01T10:00:00Z"})
    want("after createdAt", later["nextFires"][0]["utc"],
         "2099-03-02T06:00:00Z")
    c.delete_job("later")


def retry_fence(trash):
    """A retry of an old run of a forbid job while another run is live
    is 409 JOB_RUN_IN_PROGRESS (the marker, as a fire); after it, 202."""
    slow = os.path.join(trash, "flip-slow")
    c.put_job({"jobCode": "fx", "taskCode": "flip", "maxRetries": 0,
               "fixedRateMs": 86400000, "startAt": "2099-01-01T00:00:00Z"})
    first = c.run_job("fx")["requestId"]
    want("first fails", c.wait(first, timeout=30)["status"], "FAILED")
    open(slow, "w").close()
    second = c.run_job("fx")["requestId"]
    for _ in range(200):
        if c.get(second)["status"] == "RUNNING":
            break
        time.sleep(0.05)
    r, doc = raw("POST", "/api/tasks/%s/retry" % first, b"")
    want("retry beside a live run", (r.status, doc.get("code"),
                                     doc.get("activeRequestId")),
         (409, "JOB_RUN_IN_PROGRESS", second))
    os.unlink(slow)
    want("second ends", c.wait(second, timeout=30)["status"], "FAILED")
    r, doc = raw("POST", "/api/tasks/%s/retry" % first, b"")
    want("retry after it", r.status, 202)
    want("retried run ends", c.wait(first, timeout=30)["status"], "FAILED")
    want("marker names it", c.get_job("fx")["currentRun"], first)


CASES = {"retry_fence": retry_fence, "fences": fences, "crud": crud, "validation": validation, "scoping": scoping,
         "enable": enable, "run": run, "race": race, "delete": delete,
         "methods": methods}

if __name__ == "__main__":
    fn = CASES[sys.argv[1]]
    if fn in (run, retry_fence):
        fn(sys.argv[2])
    else:
        fn()
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)
