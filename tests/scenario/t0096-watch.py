#!/usr/bin/env python3
"""t0096-watch.py — the watcher of t0096-prepared-fires.sh.

  observe SPOOL J SECONDS
      every 2 ms for SECONDS: the requestIds of job J held by tmp/fire.*
      files, and those in incoming/, active/*/, done/, failed/; prints
      "instants N" (instants of J seen as tasks), "prepared P" (of those,
      seen in tmp/ before their instant) and "early E" (seen as a task
      before their instant), one line each, then the early ones.
  remove SPOOL J / disable SPOOL J
      wait (at most 5 s) until tmp/ holds J's prepared fire of a future
      instant, then remove jobs/J.json (or rewrite it with "enabled":
      false, by tmp/ + rename); prints "prepared-then-removed <id>" when
      that happened at least 60 ms before the instant (else "late").
  starts FILE
      FILE lines "<yyyymmddThhmmssZ> <start epoch ms>": exit 1 when a hook
      started before its instant.

The instant of J.<yyyymmddThhmmss>Z is that UTC second (a Quartz
"* * * * * ?" job).  Python's standard library only.
"""
import calendar
import json
import os
import sys
import time


def instant_ms(stamp):
    """yyyymmddThhmmssZ -> epoch ms."""
    t = time.strptime(stamp, "%Y%m%dT%H%M%SZ")
    return calendar.timegm(t) * 1000


def id_instant(job, rid):
    if not rid.startswith(job + "."):
        return None
    try:
        return instant_ms(rid[len(job) + 1:])
    except ValueError:
        return None


def tmp_ids(spool, job):
    """requestIds of J in tmp/fire.* files."""
    out = set()
    d = os.path.join(spool, "tmp")
    for n in os.listdir(d):
        if not n.startswith("fire."):
            continue
        try:
            with open(os.path.join(d, n), "rb") as f:
                rid = json.loads(f.read()).get("requestId", "")
        except (OSError, ValueError):
            continue
        if id_instant(job, rid) is not None:
            out.add(rid)
    return out


def task_ids(spool, job):
    dirs = ["incoming", "done", "failed", "delayed", "cancelled"]
    act = os.path.join(spool, "active")
    dirs += [os.path.join("active", n) for n in os.listdir(act)]
    out = set()
    for d in dirs:
        try:
            names = os.listdir(os.path.join(spool, d))
        except OSError:
            continue
        for n in names:
            if n.endswith(".json") and id_instant(job, n[:-5]) is not None:
                out.add(n[:-5])
    return out


def now_ms():
    return time.time_ns() // 1000000


def observe(spool, job, secs):
    first_tmp, first_task = {}, {}
    end = time.monotonic() + secs
    while time.monotonic() < end:
        t = now_ms()
        for rid in tmp_ids(spool, job):
            first_tmp.setdefault(rid, t)
        t = now_ms()
        for rid in task_ids(spool, job):
            first_task.setdefault(rid, t)
        time.sleep(0.002)
    early = [r for r, t in first_task.items() if t < id_instant(job, r)]
    prepared = [r for r in first_task
                if r in first_tmp and first_tmp[r] < id_instant(job, r)]
    print("instants %d" % len(first_task))
    print("prepared %d" % len(prepared))
    print("early %d" % len(early))
    for r in early:
        print("early: %s seen at %d" % (r, first_task[r]))


def remove(spool, job, disable):
    path = os.path.join(spool, "jobs", job + ".json")
    end = time.monotonic() + 5
    while time.monotonic() < end:
        now = now_ms()
        ids = [r for r in tmp_ids(spool, job) if id_instant(job, r) > now]
        if ids:
            rid = max(ids)
            if disable:
                with open(path) as f:
                    d = json.load(f)
                d["enabled"] = False
                tmp = os.path.join(spool, "tmp", "job." + job)
                with open(tmp, "w") as f:
                    json.dump(d, f)
                os.rename(tmp, path)
            else:
                os.unlink(path)
            left = id_instant(job, rid) - now_ms()
            print("prepared-then-removed %s" % rid if left >= 60 else
                  "late %s (%d ms before the instant)" % (rid, left))
            return
        time.sleep(0.002)
    print("never prepared")


def starts(path):
    bad = 0
    with open(path) as f:
        for line in f:
            stamp, ms = line.split()
            if int(ms) < instant_ms(stamp):
                print("hook of %s started at %s, before its instant" %
                      (stamp, ms))
                bad = 1
    sys.exit(bad)


def main():
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == "observe":
        observe(a[1], a[2], float(a[3]))
    elif len(a) == 3 and a[0] in ("remove", "disable"):
        remove(a[1], a[2], a[0] == "disable")
    elif len(a) == 2 and a[0] == "starts":
        starts(a[1])
    else:
        sys.exit("usage: t0096-watch.py observe SPOOL J SECONDS | "
                 "remove|disable SPOOL J | starts FILE")


if __name__ == "__main__":
    main()
