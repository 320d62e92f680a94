#!/usr/bin/python3
"""t0113-api-bulk.py - POST /api/tasks:bulk through the Python client.

usage: t0113-api-bulk.py CASE SPOOL   (TS_URL, TS_APP_ID, TS_SECRET set)

The rule under test is README.md's: each item of a bulk submission is
answered as POST /api/tasks would answer it alone (the codes of the
README's problem table), all or nothing per item.  Prints what differs,
exits 1 on any difference.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "contrib", "python",
                                "src"))
import taskspool  # noqa: E402

c = taskspool.Client(os.environ["TS_URL"], os.environ["TS_APP_ID"],
                     os.environ["TS_SECRET"])
SPOOL = sys.argv[2]
bad = []


def want(what, got, expected):
    if got != expected:
        bad.append("%s: got %r, want %r" % (what, got, expected))


def code(res):
    return (res["status"], (res["body"] or {}).get("code"))


def mixed():
    items = [{"requestId": "b-ok", "taskCode": "echo"},
             {"requestId": "b-bad", "taskCode": "echo", "maxRetries": 101},
             {"requestId": "b-nocode", "taskCode": "nope"},
             {"requestId": "b-ok2", "taskCode": "echo",
              "executeParams": {"n": 2}}]
    r = c.submit_bulk(items)
    want("counts", (r["accepted"], r["refused"]), (2, 2))
    res = r["results"]
    want("item 0", (res[0]["status"], res[0]["body"]["requestId"],
                    res[0]["body"]["status"]), (202, "b-ok", "PENDING"))
    want("item 1", code(res[1]), (422, "VALIDATION_FAILED"))
    want("item 1 field", res[1]["body"]["errors"][0]["field"], "maxRetries")
    want("item 2", code(res[2]), (422, "UNKNOWN_TASK_CODE"))
    want("item 3", res[3]["status"], 202)
    # Stored: exactly the accepted ones, each a task file and a record.
    for rid, stored in (("b-ok", True), ("b-bad", False),
                        ("b-nocode", False), ("b-ok2", True)):
        want(rid + " task", os.path.exists(
            os.path.join(SPOOL, "incoming", rid + ".json")), stored)
        want(rid + " record", os.path.exists(
            os.path.join(SPOOL, "state", "requests", rid + ".json")), stored)
    # The same request again: the accepted ones replay, nothing doubles.
    r = c.submit_bulk(items)
    want("replay", [x["status"] for x in r["results"]], [202, 422, 422, 202])
    # Changed params under a used requestId: refused as alone.
    r = c.submit_bulk([{"requestId": "b-ok2", "taskCode": "echo",
                        "executeParams": {"n": 3}}])
    want("reuse", code(r["results"][0]), (422, "IDEMPOTENCY_KEY_REUSED"))
    # A single submission of the same item sees the bulk's record.
    s = c.get("b-ok")
    want("get", s["status"], "PENDING")


def many():
    items = [{"requestId": "m-%03d" % i, "taskCode": "echo"}
             for i in range(500)]
    r = c.submit_bulk(items)
    want("500", (r["accepted"], r["refused"]), (500, 0))
    n = len([f for f in os.listdir(os.path.join(SPOOL, "incoming"))
             if f.startswith("m-")])
    want("files", n, 500)
    ids = {x["body"]["requestId"] for x in r["results"]}
    want("ids", len(ids), 500)


def problems():
    def post(body, headers=None):
        r = c.request("POST", "/api/tasks:bulk",
                      body=json.dumps(body).encode(), headers=headers)
        doc = r.json()
        return (r.status, doc.get("code"),
                (doc.get("errors") or [{}])[0].get("field"))

    item = {"taskCode": "echo"}
    want("501", post({"tasks": [item] * 501}),
         (422, "VALIDATION_FAILED", "tasks"))
    want("empty", post({"tasks": []}), (422, "VALIDATION_FAILED", "tasks"))
    want("not array", post({"tasks": item}),
         (422, "VALIDATION_FAILED", "tasks"))
    want("member", post({"tasks": [item], "x": 1}),
         (422, "VALIDATION_FAILED", "x"))
    want("key", post({"tasks": [item]}, {"Idempotency-Key": "k-1"}),
         (422, "VALIDATION_FAILED", "Idempotency-Key"))
    r = c.request("POST", "/api/tasks:bulk", body=b'{"tasks":[3,"x"]}')
    res = r.json()["results"]
    want("not objects", [code(x) for x in res],
         [(400, "INVALID_JSON"), (400, "INVALID_JSON")])
    r = c.request("GET", "/api/tasks:bulk")
    want("GET", (r.status, r.headers.get("allow")), (405, "POST"))


{"mixed": mixed, "many": many, "problems": problems}[sys.argv[1]]()
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
