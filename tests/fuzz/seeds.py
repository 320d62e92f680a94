#!/usr/bin/env python3
"""Write the seed corpora tests/fuzz/corpus/<target>/ (README.md, "Seeds").

Sources: tests/data/api-vectors.json (request_signing: method, path, query,
headers and body of each S-vector), tests/data/cron-vectors.jsonl (one
expression per dialect and zone), the host's tzdata (a few small TZif
files), spool-layout/taskspool.conf.example, and hand-written valid files
of each format (the shapes of API.md and the unit tests' examples).
Run from the top of the tree: python3 tests/fuzz/seeds.py
"""
import json
import os
import sys

OUT = "tests/fuzz/corpus"


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    vec = json.load(open("tests/data/api-vectors.json"))
    tasks = []
    for v in vec["request_signing"]:
        hdr = {k.lower(): val for k, val in v["headers"].items()}
        body = bytes.fromhex(v["body_hex"])
        path = v["path"][4:] if v["path"].startswith("/api") else v["path"]
        line = "\n".join([v["method"], path, v["raw_query"],
                          hdr.get("content-type", ""),
                          hdr.get("idempotency-key", "")]) + "\n"
        put("fuzz_api", v["id"], line.encode() + body)
        if v["method"] == "POST" and path == "/tasks" and body:
            tasks.append(body)
    for name, line in [("health", "GET\n/health\n\n\n\n"),
                       ("metrics", "GET\n/metrics\n\n\n\n"),
                       ("get", "GET\n/tasks/r-1\n\n\n\n"),
                       ("list", "GET\n/tasks\nlimit=2&status=PENDING\n\n\n"),
                       ("cancel", "DELETE\n/tasks/r-1\n\n\n\n"),
                       ("cron-next", "GET\n/cron/next\nexpr=30%202%20*"
                        "%20*%20*&tz=America%2FNew_York&n=3&from="
                        "2026-03-01T00%3A00%3A00Z\n\n\n"),
                       ("bulk", "POST\n/tasks:bulk\n\napplication/json\n\n"
                        '{"tasks":[{"requestId":"b-1","taskCode":"x"},'
                        '{"taskCode":"x","maxRetries":101},3]}'),
                       ("logs", "GET\n/tasks/r-1/logs\nattempt=1&stream="
                        "stderr&offset=0&limit=5\n\n\n"),
                       ("cron-next-cal", "GET\n/cron/next\nexpr=Mon..Fri"
                        "%2009%3A00%20Europe%2FBerlin&dialect=systemd"
                        "\n\n\n"),
                       ("jobs-create", "POST\n/jobs\n\napplication/json\n\n"
                        '{"jobCode":"j-1","taskCode":"x","cron":"*/5 * * * *",'
                        '"timezone":"Europe/Berlin","executeParams":{"a":1}}'),
                       ("jobs-put", "PUT\n/jobs/j-1\n\napplication/json\n\n"
                        '{"jobCode":"j-1","taskCode":"x","fixedRateMs":60000,'
                        '"overlap":"replace","startAt":"2030-01-01T00:00:00Z"}'),
                       ("jobs-list", "GET\n/jobs\nlimit=2&after=a\n\n\n"),
                       ("console-login", "POST\n/console/login\n\n"
                        "application/x-www-form-urlencoded\n\n"
                        "app=fuzz&secret=a%2Bb+c%00d"),
                       ("console-tasks", "GET\n/console/tasks\nstate=failed"
                        "&code=a+b%3Cscript%3E&page=2\n\n\n"),
                       ("console-login-page", "GET\n/console/login\n\n\n\n"),
                       ("jobs-run", "POST\n/jobs/j-1/run\n\n"
                        "application/json\n\n{}"),
                       ("jobs-disable", "POST\n/jobs/j-1/disable\n\n"
                        "application/json\n\n"),
                       ("jobs-delete", "DELETE\n/jobs/j-1\n\n\n\n"),
                       ("register", "POST\n/callbacks/register\n\n"
                        "application/json\n\n"
                        '{"url":"https://93.184.215.14/cb"}'),
                       ("submit", "POST\n/tasks\n\napplication/json\nr-1\n"
                        '{"requestId":"r-1","taskCode":"x",'
                        '"executeParams":{"a":[1,2.5,"s",null,true]},'
                        '"callbackUrl":"https://93.184.215.14/cb"}')]:
        put("fuzz_api", name, line)

    tasks += [
        b'{"taskCode":"x"}',
        b'{"requestId":"r-1","taskCode":"x","taskName":"n",'
        b'"triggerType":"delay","delayMs":5000,"executeParams":[1,{"a":"b"}],'
        b'"maxRetries":3,"timeoutSec":60,"route":"any",'
        b'"callbackUrl":"https://example.com/cb"}',
        b'{"requestId":"r-2","taskCode":"x","triggerType":"at",'
        b'"runAt":"2024-06-01T12:00:00.000Z","createdAt":'
        b'"2024-06-01T11:00:00.000Z","notBefore":"2024-06-01T12:00:00.000Z",'
        b'"attempts":[{"attempt":1,"node":"n1","startedAt":'
        b'"2024-06-01T12:00:00.000Z","finishedAt":"2024-06-01T12:00:01.000Z",'
        b'"exitCode":75,"signal":0,"outcome":"TEMPFAIL","reason":"exit 75",'
        b'"retryAt":"2024-06-01T12:00:05.000Z"}],"shardIndex":0,'
        b'"shardTotal":3,"jobCode":"nightly","appId":"app-1"}',
    ]
    for i, t in enumerate(tasks):
        put("fuzz_task", "task-%02d" % i, t)
    # node tags (README "Node tags"): requireTags, route tag:<name>
    put("fuzz_task", "task-tags",
        '{"taskCode":"x","requireTags":["gpu","ssd"],"route":"tag:big"}')
    put("fuzz_task", "task-tags-dup",
        '{"taskCode":"x","requireTags":["gpu","gpu"]}')
    put("fuzz_task", "task-tags-bad",
        '{"taskCode":"x","requireTags":"gpu","route":"tag:"}')
    put("fuzz_task", "task-appweight",
        '{"taskCode":"x","appId":"shop","appWeight":7}')
    put("fuzz_task", "task-conckey",
        '{"taskCode":"x","concurrencyKey":"c:{id}/{n}",'
        '"maxConcurrentPerKey":2,"executeParams":{"id":"a","n":7}}')
    put("fuzz_task", "task-conckey-bad",
        '{"taskCode":"x","concurrencyKey":"c:{id","executeParams":{}}')
    put("fuzz_task", "task-conckey-missing",
        '{"taskCode":"x","concurrencyKey":"{id}{}","executeParams":[1]}')

    jobs = [
        '{"jobCode":"nightly","taskCode":"report","cron":"0 3 * * *"}',
        '{"jobCode":"q","taskCode":"t","cron":"0 5 * * * ?",'
        '"dialect":"quartz","timezone":"Europe/London","misfire":"fire_all",'
        '"misfireCap":5,"overlap":"allow","executeParams":{"k":[1,2]}}',
        '{"jobCode":"r","taskCode":"t","fixedRateMs":60000,"enabled":false,'
        '"startAt":"2024-01-01T00:00:00.000Z","endAt":'
        '"2025-01-01T00:00:00.000Z","jitterMs":1000,"route":"any",'
        '"maxRetries":2,"timeoutSec":30,"createdAt":'
        '"2024-01-01T00:00:00.000Z"}',
        '{"jobCode":"d","taskCode":"t","fixedDelayMs":1000,"misfire":"skip",'
        '"overlap":"replace"}',
    ]
    for i, j in enumerate(jobs):
        put("fuzz_job", "job-%02d" % i, j)
    put("fuzz_job", "job-tags", '{"jobCode":"g","taskCode":"t",'
        '"cron":"@hourly","requireTags":["gpu"],"route":"tag:ssd"}')
    put("fuzz_job", "job-conckey", '{"jobCode":"g","taskCode":"t",'
        '"cron":"@hourly","concurrencyKey":"t:{tenant}",'
        '"maxConcurrentPerKey":1,"executeParams":{"tenant":3}}')

    seen = set()
    for line in open("tests/data/cron-vectors.jsonl"):
        v = json.loads(line)
        key = (v["expr"], v.get("dialect"))
        if key in seen or len(seen) >= 40:
            continue
        seen.add(key)
        d = 1 if v.get("dialect") == "quartz" else 0
        put("fuzz_cron", "v%02d" % len(seen),
            bytes([d, len(seen) % 4]) + v["expr"].encode())
    put("fuzz_cron", "guess", b"\x02\x00@daily")
    for i, c in enumerate(["Mon..Fri *-*-* 09:30 Europe/Berlin",
                           "*-05~07/1", "quarterly", "*-*~1..6/4 *:0/15",
                           "2026..2030-*-01/5 00:00:00 UTC", "Sat,Sun 1:2:3",
                           "*-*-* 02:30 America/New_York"]):
        put("fuzz_cron", "systemd-%02d" % i, bytes([3, i % 4]) + c.encode())
    put("fuzz_job", "job-calendar", '{"jobCode":"c","taskCode":"t",'
        '"calendar":"Mon..Fri 09:00 Europe/Riga","jitterMs":500}')

    zi = "/usr/share/zoneinfo"
    for z in ["UTC", "America/New_York", "Australia/Lord_Howe",
              "Asia/Kathmandu"]:
        p = os.path.join(zi, z)
        if os.path.exists(p):
            put("fuzz_tz", "tzif-" + z.replace("/", "-"),
                b"\x00" + open(p, "rb").read())
    for i, s in enumerate(["EST5EDT,M3.2.0,M11.1.0", "<+03>-3",
                           "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
                           "GMT0BST,M3.5.0/1,M10.5.0",
                           "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
                           "AEST-10AEDT,J60/2:30,300/3", "UTC0"]):
        put("fuzz_tz", "posix-%02d" % i, b"\x01" + s.encode())

    put("fuzz_config", "example",
        open("spool-layout/taskspool.conf.example").read())
    put("fuzz_config", "small", "fsync = 0\nmax_retries = 5\n"
        "retry_base_ms = 200 # comment\napi_rate_limit = 10\n"
        "callback_delays = 1s,5s,30s\nhook_limit_nofile = 64\n")
    put("fuzz_config", "rates", "rate_limit = mail=10/1m,probe=10/1s:20,"
        "a.b-c_d=1/1ms,x=1000000/7d:1000000\n"
        "rate_limit_per_key = probe=2/500ms,mail=1/1h:3\n")
    put("fuzz_config", "rates-bad", "rate_limit = probe=10/1s,"
        "mail=2000/1s,p=1/8d,q=0/1s,r=1/1s:0,s=1/1x,probe=1/1s\n")

    put("fuzz_apps", "two", "# test apps\n"
        "app-test-01 enabled report.generate,notify.sms "
        "q8Yv2Kp0fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz "
        "Z0yX9wfuzzfuzzfuzzfuzz rate=5 weight=3\n\n"
        "other\tdisabled\t*\tAAAAAAAAAAAAAAAA\n")
    put("fuzz_apps", "console-roles", "ops enabled * console=operate "
        "q8Yv2Kp0fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz rate=0 weight=100\n"
        "view enabled a,b Z0yX9wfuzzfuzzfuzzfuzz console=read\n"
        "bad enabled a Z0yX9wfuzzfuzzfuzzfuzz console=root\n")

    put("fuzz_promtext", "two-nodes",
        "# HELP taskspool_tasks_total Tasks finished.\n"
        "# TYPE taskspool_tasks_total counter\n"
        'taskspool_tasks_total{node="n1",status="SUCCESS"} 3\n'
        "# HELP taskspool_hook_seconds Hook run time.\n"
        "# TYPE taskspool_hook_seconds histogram\n"
        'taskspool_hook_seconds_bucket{node="n1",le="1"} 2\n'
        'taskspool_hook_seconds_bucket{node="n1",le="+Inf"} 3\n'
        'taskspool_hook_seconds_sum{node="n1"} 2.5\n'
        'taskspool_hook_seconds_count{node="n1"} 3\n'
        "\0"
        "# HELP taskspool_tasks_total Tasks finished.\n"
        "# TYPE taskspool_tasks_total counter\n"
        'taskspool_tasks_total{node="n2",status="FAILED"} 1\n'
        "# a comment\n\n"
        'orphan_sample 1\n')

    t1, t2 = "2024-06-01T12:00:00.000Z", "2024-06-01T12:00:01.500Z"
    result = ('{"requestId":"r1","taskCode":"x","taskName":null,'
              '"status":"FAILED","createdAt":"%s","startedAt":"%s",'
              '"finishedAt":"%s","durationMs":1500,"attempt":1,'
              '"maxRetries":0,"node":"n1","triggerTime":"%s",'
              '"result":{"ok":false,"n":[1,2]},"failureReason":'
              '{"code":"EXIT_CODE","message":"exit 3"},"attempts":[{'
              '"attempt":1,"node":"n1","startedAt":"%s","finishedAt":"%s",'
              '"durationMs":1500,"exitCode":3,"signal":null,"outcome":'
              '"FAILED","reason":"exit 3","retryAt":null}],'
              '"stdoutTail":"out","stderrTail":""}' % (t1, t1, t2, t1, t1, t2))
    put("fuzz_result", "failed", result)
    put("fuzz_result", "success", result.replace('"FAILED"', '"SUCCESS"'))

    put("fuzz_delivery", "pending",
        '{"version":1,"webhookId":"whk_0123456789abcdefghijklmnop",'
        '"requestId":"r1","appId":"app-1","url":null,"createdAt":"%s",'
        '"status":"PENDING","reason":null,"attempts":0,"nextAttemptAt":"%s",'
        '"lastAttemptAt":null,"lastHttpStatus":null,"lastError":null,'
        '"finishedAt":null,"body":"{\\"type\\":\\"task.finished\\"}"}\n'
        % (t1, t1))
    put("fuzz_delivery", "failed",
        '{"version":1,"webhookId":"whk_0123456789abcdefghijklmnop",'
        '"requestId":"r1","appId":null,"url":"https://example.com/cb",'
        '"createdAt":"%s","status":"FAILED","reason":"GONE","attempts":3,'
        '"nextAttemptAt":null,"lastAttemptAt":"%s","lastHttpStatus":410,'
        '"lastError":"HTTP_STATUS","finishedAt":"%s","body":"{}"}\n'
        % (t1, t2, t2))

    put("fuzz_record", "marker",
        '{"appId":"fuzz-app","requestId":"fuzz-record-1","taskCode":"x",'
        '"fingerprint":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca4'
        '95991b7852b855","createdAt":"%s"}' % t1)

    src = open("tests/unit/check_records.c").read()
    for name in ["running", "pending", "result"]:
        start = src.index("static const char %s[] =" % name)
        end = src.index(";\n", start)
        lit = src[start:end].split("=", 1)[1]
        # The T1 and T2 macros of the C literals, spliced in.
        lit = lit.replace('" T1 "', t1).replace('" T2 "', t2)
        lit = lit.replace('"\nT2 "', t2)
        parts = []
        for seg in lit.strip().splitlines():
            seg = seg.strip()
            if seg.startswith('"') and seg.endswith('"'):
                parts.append(json.loads(seg))
        put("fuzz_outbox", name, "".join(parts))
    put("fuzz_outbox", "callback",
        '{"v":1,"state":"CALLBACK","requestId":"order-1","deliveryId":'
        '"whk_1","url":"https://h.example/cb","status":"PENDING",'
        '"attempts":2,"lastHttpStatus":500,"lastError":"HTTP_STATUS",'
        '"nextTryAt":"2024-06-01T12:00:08.010Z","updatedAt":'
        '"2024-06-01T12:00:08.000Z"}')
    put("fuzz_outbox", "definition",
        '{"v":1,"state":"DEFINITION","requestId":"nightly","jobCode":'
        '"nightly","taskCode":"report","schedule":"0 3 * * *","enabled":'
        'true,"definition":{"jobCode": "nightly", "cron": "0 3 * * *"},'
        '"updatedAt":"2024-06-01T12:00:08.000Z"}')
    ex = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    # Records with the trace context (migration 0003): the task's and the
    # attempt's span.
    put("fuzz_outbox", "running_traced",
        '{"v":1,"state":"RUNNING","requestId":"r1","taskCode":"probe",'
        '"traceparent":"00-%s","attempt":{"attempt":1,"node":"n1",'
        '"startedAt":"%s","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736'
        '-b7ad6b7169203331-01"}}' % (ex, t1))
    put("fuzz_outbox", "result_traced",
        '{"v":1,"state":"RESULT","requestId":"r1","result":{"taskCode":'
        '"probe","status":"SUCCESS","traceparent":"00-%s","attempts":[{'
        '"attempt":1,"outcome":"SUCCESS","traceparent":"00-%s"}]}}'
        % (ex, ex))
    put("fuzz_traceparent", "spec-example", "00-" + ex)
    put("fuzz_traceparent", "higher-version", "cc-" + ex + "-more")
    put("fuzz_traceparent", "version-ff", "ff-" + ex)
    put("fuzz_traceparent", "uppercase", "00-" + ex.upper())
    put("fuzz_drain", "drained",
        '{"node":"n1","reason":"kernel update","since":"%s"}\n' % t1)
    put("fuzz_drain", "no-reason", '{"node":"n1","since":"%s"}' % t1)
    put("fuzz_drain", "bell-in-reason",
        '{"node":"n1","reason":"a\\u0007b","since":"%s"}' % t1)
    put("fuzz_drain", "before-1970",
        '{"node":"n1","reason":"x","since":"1969-12-31T23:59:59Z"}')
    put("fuzz_drain", "offset",
        '{"node":"n1","reason":"\\u00e9t\\u00e9","since":'
        '"2026-12-02T03:00:00+05:30"}')
    put("fuzz_hold", "held",
        '{"requestId":"order-1","since":"%s","from":"incoming",'
        '"by":"cli uid 1000"}\n' % t1)
    put("fuzz_hold", "no-by",
        '{"requestId":"order-1","since":"%s","from":"active"}' % t1)
    put("fuzz_hold", "bad-from",
        '{"requestId":"order-1","since":"%s","from":"done"}' % t1)
    put("fuzz_hold", "bell-in-by",
        '{"requestId":"a","since":"%s","from":"hold","by":"a\\u0007"}'
        % t1)
    put("fuzz_batch", "open",
        '{"batchId":"nightly","createdAt":"%s"}\n' % t1)
    put("fuzz_batch", "completed",
        '{"batchId":"b1","createdAt":"%s","onComplete":"report",'
        '"callbackUrl":"https://example.com/b","closedAt":"%s",'
        '"completedAt":"%s","onCompleteRequestId":"b1.complete"}' %
        (t1, t1, t1))
    put("fuzz_batch", "completed-open",
        '{"batchId":"b1","createdAt":"%s","completedAt":"%s"}' % (t1, t1))
    put("fuzz_batch", "bad-url",
        '{"batchId":"b1","createdAt":"%s","callbackUrl":"ftp://x"}' % t1)
    put("fuzz_heartbeat", "node",
        "pid=4242\nslots=4\nrunning=1\nclaimed=10\nfinished=9\nleader=1\n"
        "at_ms=1717243200000\nstarted_ms=1717243100000\nload1=0.52\n"
        "draining=1\nhooks=a,b,report\ntags=gpu,ssd\n")
    put("fuzz_heartbeat", "bad-tags", "tags=gpu,,gpu\x1b[2J\ntags=" +
        ",".join("t%d" % i for i in range(40)) + "\n")
    put("fuzz_heartbeat", "cut-hooks",
        "hooks=" + ",".join("code%04d" % i for i in range(1200)) + "\n")
    put("fuzz_heartbeat", "older", "pid=1\nslots=2\ndraining=7\n=x\nnoeq\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
