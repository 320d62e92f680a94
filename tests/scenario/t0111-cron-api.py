#!/usr/bin/python3
"""t0111-cron-api.py - GET /api/cron/next through the Python client.

usage: t0111-cron-api.py CASE   (TS_URL, TS_APP_ID, TS_SECRET set)

CASE answers: every expected value below comes from outside the code --
the calendar (2026-12-04 and 2026-12-25 are Fridays), the zones' rules
(the US change of 2026 is on Sunday 2026-03-08 at 02:00 EST, the EU one
of 2027 on Sunday 2027-03-28 at 01:00 UTC: last Sunday of March), the
documented meaning of Quartz's "6L" (CronTrigger tutorial: "the last
Friday of the month") and the README's DST rule (a fixed time a forward
jump skips fires at once, at the first instant after the jump).
Prints what differs and exits 1, or exits 0.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "contrib", "python",
                                "src"))
import taskspool  # noqa: E402

c = taskspool.Client(os.environ["TS_URL"], os.environ["TS_APP_ID"],
                     os.environ["TS_SECRET"])
bad = []


def want(what, got, expected):
    if got != expected:
        bad.append("%s: got %r, want %r" % (what, got, expected))


def fixed_time_skip():
    r = c.cron_next("30 2 * * *", tz="America/New_York",
                    since="2026-03-01T00:00:00Z", n=3)
    want("dialect", r["dialect"], "vixie")
    want("schedule", r["schedule"], "fixed-time")
    want("timezone", r["timezone"], "America/New_York")
    want("means", r["means"], "at 02:30, every day")
    want("next", r["next"], ["2026-03-01T02:30:00-05:00",
                             "2026-03-02T02:30:00-05:00",
                             "2026-03-03T02:30:00-05:00"])
    want("nextUtc", r["nextUtc"], ["2026-03-01T07:30:00Z",
                                   "2026-03-02T07:30:00Z",
                                   "2026-03-03T07:30:00Z"])
    ch = r["offsetChange"] or {}
    want("at", ch.get("at"), "2026-03-08T03:00:00-04:00")
    want("offsets", (ch.get("offsetBefore"), ch.get("offsetAfter")),
         ("-05:00", "-04:00"))
    want("wallTimes", ch.get("wallTimes"),
         "02:00:00 to 02:59:59 on 2026-03-08")
    want("wallTimesAre", ch.get("wallTimesAre"), "skipped")
    want("affected", ch.get("affected"), True)
    if "fires once at 03:00:00" not in ch.get("effect", ""):
        bad.append("effect: %r" % ch.get("effect"))
    # The next fires walk through the change as the rule says.
    r = c.cron_next("30 2 * * *", tz="America/New_York",
                    since="2026-03-07T12:00:00Z", n=2)
    want("through the jump", r["next"], ["2026-03-08T03:00:00-04:00",
                                         "2026-03-09T02:30:00-04:00"])


def calendar_zone():
    r = c.cron_next("Mon..Fri 09:00 Europe/Berlin",
                    since="2026-12-04T12:00:00Z", n=3)
    want("dialect", r["dialect"], "systemd")
    want("timezone", r["timezone"], "Europe/Berlin")
    want("next", r["next"], ["2026-12-07T09:00:00+01:00",
                             "2026-12-08T09:00:00+01:00",
                             "2026-12-09T09:00:00+01:00"])
    want("nextUtc", r["nextUtc"][0], "2026-12-07T08:00:00Z")
    ch = r["offsetChange"] or {}
    want("at", ch.get("at"), "2027-03-28T03:00:00+02:00")
    want("affected", ch.get("affected"), False)
    # The same zone given as tz is no conflict.
    r = c.cron_next("Mon..Fri 09:00 Europe/Berlin", tz="Europe/Berlin",
                    since="2026-12-04T12:00:00Z", n=1)
    want("same zone", r["next"], ["2026-12-07T09:00:00+01:00"])


def quartz_and_default_zone():
    r = c.cron_next("0 15 10 ? * 6L", since="2026-12-01T00:00:00Z", n=2)
    want("dialect", r["dialect"], "quartz")
    want("timezone", r["timezone"], "UTC")
    want("next", r["next"], ["2026-12-25T10:15:00Z",
                             "2027-01-29T10:15:00Z"])
    want("offsetChange", r["offsetChange"], None)
    r = c.cron_next("0 0 1 1 *", since="2026-12-07T00:00:00Z")
    want("default n", len(r["next"]), 5)
    want("yearly", r["next"][:2], ["2027-01-01T00:00:00Z",
                                   "2028-01-01T00:00:00Z"])
    r = c.cron_next("0 0 30 2 *", since="2026-12-07T00:00:00Z")
    want("never", r["next"], [])


def problems():
    cases = [
        ("", "expr"),
        ("n=3", "expr"),
        ("expr=", "expr"),
        ("expr=61%20*%20*%20*%20*", "expr"),
        ("expr=*%20*%20*%20*%20*&dialect=cronie", "dialect"),
        ("expr=*%20*%20*%20*%20*&n=0", "n"),
        ("expr=*%20*%20*%20*%20*&n=101", "n"),
        ("expr=*%20*%20*%20*%20*&n=-1", "n"),
        ("expr=*%20*%20*%20*%20*&from=yesterday", "from"),
        ("expr=*%20*%20*%20*%20*&tz=Nope%2FZone", "tz"),
        ("expr=*%20*%20*%20*%20*&tz=..%2Fetc%2Fpasswd", "tz"),
        ("expr=*%20*%20*%20*%20*&tz=", "tz"),
        ("expr=daily%20Europe%2FBerlin&tz=Asia%2FTokyo", "tz"),
        ("expr=daily%20Nope%2FZone", "expr"),
        ("expr=*%20*%20*%20*%20*&expr=daily", "expr"),
        ("expr=*%20*%20*%20*%20*&limit=3", "limit"),
        ("expr=daily&tz=localtime", "tz"),
        ("expr=daily%20localtime", "expr"),
        ("expr=daily&=x", "query"),
        ("expr=daily&%C3%A9=1", "??"),
        ("expr=%C3%A9t%C3%A9", "expr"),
        ("expr=Mon%20%C3%A9%2009%3A00", "expr"),
        ("expr=" + "1," * 600 + "2%20*%20*%20*%20*", "expr"),
    ]
    for q, field in cases:
        r = c.request("GET", "/api/cron/next", query=q)
        try:
            doc = r.json()
        except ValueError:
            bad.append("%s: %d, not JSON: %r" % (q[:60], r.status,
                                                 r.body[:200]))
            continue
        errs = doc.get("errors") or [{}]
        if (r.status, doc.get("code"), errs[0].get("field")) != \
                (422, "VALIDATION_FAILED", field):
            bad.append("%s: %d %s %r" % (q[:60], r.status, doc.get("code"),
                                         errs[0]))
    r = c.request("POST", "/api/cron/next", query="expr=daily", body=b"{}")
    want("POST", (r.status, r.headers.get("allow")), (405, "GET"))
    r = c.request("GET", "/api/cron/next", query="expr=daily", signed=False)
    want("unsigned", r.status, 401)


CASES = {"fixed-time-skip": fixed_time_skip, "calendar-zone": calendar_zone,
         "quartz-and-default-zone": quartz_and_default_zone,
         "problems": problems}
CASES[sys.argv[1]]()
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
