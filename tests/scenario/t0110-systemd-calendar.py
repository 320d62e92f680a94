#!/usr/bin/env python3
"""t0110-systemd-calendar.py — the systemd dialect against systemd itself.

Usage: t0110-systemd-calendar.py TASKSPOOL [SEED [COUNT]]

Generates calendar events (a fixed seed: the same set on every run) and
asks both `systemd-analyze calendar --iterations=N --base-time=...` (the
reference: Debian's systemd) and `taskspool cron next --dialect systemd`
for the next fires, in UTC and in zones with DST of unusual shapes
(Lord_Howe's 30 minutes, Chatham's 12:45 offset, Havana and Santiago at
midnight, Tehran before 2022, New York, Berlin).  The instants must be
the same.  The only differences allowed are the ones taskspool makes by
design (daemon/core/cron.h, README "Calendar events"), each checked
against the zone data here (Python's zoneinfo, not taskspool's reader) and
named in the output:

  gap     after a forward DST jump of d: taskspool fires a fixed-time
          event whose wall time was skipped at the first instant after the
          jump, and every matching time of [jump, jump + d); systemd skips
          the first and, having moved the skipped wall time forward by d,
          resumes its search there, skipping real instants in between
          (Chatham 2030-09-29: 03:40 became 04:40, so 03:45..03:53 did not
          fire);
  repeat  taskspool fires an interval event in the second pass of a
          repeated hour; systemd only in the first;
  eom-list  systemd 252 refuses a "~" day list whose element i (sorted) is
          above 28 - 3i (its check lowers the limit again per element);
          taskspool takes 28 for each;
  edeadlk systemd 252 gives up ("Resource deadlock avoided") on some
          searches that cross an offset change; taskspool answers.

Base times are never inside a repeated hour (where systemd may fire a
fixed time's second pass: the third named difference, tested by hand in
t0110-systemd-calendar.sh).  It also checks that both refuse the same
malformed events.  Prints TAP; exit 0 when every check passes.
"""
import datetime as dt
import os
import random
import subprocess
import sys
import zoneinfo

ITER = 8
ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe',
         'Pacific/Chatham', 'America/Havana', 'America/Santiago',
         'Asia/Tehran', 'Asia/Kolkata']
DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
UTC = dt.timezone.utc
GIVEUP = 'gives up'	# systemd parsed the event but found no next time


def comp(rng, lo, hi, eom=False):
    """One component systemd accepts: N, N..M, N/R or N..M/R."""
    if eom:
        hi = 28
    k = rng.random()
    a = rng.randint(lo, hi)
    if k < 0.4:
        return '%d' % a
    if k < 0.6 and a < hi:
        return '%d..%d' % (a, rng.randint(a + 1, hi))
    if k < 0.8:
        if eom:
            if a - lo < 1:
                return '%d' % a
            return '%d/%d' % (a, rng.randint(1, a - lo))
        if hi - a < 1:
            return '%d' % a
        return '%d/%d' % (a, rng.randint(1, hi - a))
    b = rng.randint(a, hi)
    return '%d..%d/%d' % (a, b, rng.randint(1, max(1, hi - lo)))


def values(c, lo, hi):
    """The values of one component text for a field lo..hi."""
    r = 0
    if '/' in c:
        c, r = c.split('/')
        r = int(r)
    a, _, b = c.partition('..')
    a, b = int(a), (int(b) if b else None)
    if b is not None and r == 0:
        r = 1
    if r == 0:
        return [a], None
    end = b if b is not None else hi
    return list(range(a, end + 1, r)), (None if b is not None else r)


def carries_right(comps, lo, his):
    """systemd 252 carries a repetition without an end past its field
    (hour 22 of "0/11" + 11 = 33 becomes 09:00 the next day, skipping
    00:00 and what follows: no reset of the lower field, fixed in later
    systemd).  True when no component of this field can land past the
    field's first value that way, for each possible field end in his."""
    for hi in his:
        allv = []
        reps = []
        for c in comps:
            v, r = values(c, lo, hi)
            allv += [x for x in v if x <= hi]
            if r is not None and v:
                reps.append((max(x for x in v if x <= hi) if
                             any(x <= hi for x in v) else v[0], r))
        if not allv:
            continue
        for last, r in reps:
            if last + r - (hi - lo + 1) > min(allv):
                return False
    return True


def part(rng, lo, hi, star, eom=False, width=2, his=None):
    if rng.random() < star:
        return '*'
    while True:
        n = 1 if rng.random() < 0.7 else rng.randint(2, 3)
        cs = [comp(rng, lo, hi, eom) for _ in range(n)]
        if eom or carries_right(cs, lo, his or [hi]):
            break
    out = []
    for c in cs:
        out.append(c if width == 0 else
                   '..'.join(x.zfill(width) if '/' not in x else x
                             for x in c.split('..')))
    return ','.join(out)


def eom_list_limit(text):
    """systemd 252 refuses a "~" day list whose element i (in sorted
    order) is above 28 - 3 i: its check lowers the limit by 3 again for
    each further element.  True when text has such an element."""
    date = [w for w in text.split(' ') if '~' in w]
    if not date:
        return False
    day = date[0].split('~')[1]
    if day == '*':
        return False
    comps = []
    for c in day.split(','):
        r = 0
        if '/' in c:
            c, r = c.split('/')
            r = int(r)
        a, _, b = c.partition('..')
        comps.append((int(a), int(b) if b else -1, r if r or not b else 1))
    comps = sorted(set(comps))
    for i, (a, b, r) in enumerate(comps):
        top = 28 - 3 * i
        if a > top or b > top or r > top - 1:
            return True
    return False


def weekdays(rng):
    if rng.random() < 0.6:
        return ''
    a = rng.randint(0, 6)
    if rng.random() < 0.5:
        s = DAYS[a]
    else:
        b = rng.randint(a, 6)
        s = '%s..%s' % (DAYS[a], DAYS[b])
    if rng.random() < 0.3:
        s += ',' + DAYS[rng.randint(0, 6)]
    return s + ' '


def event(rng):
    """(text without zone, fixed_time) — fixed unless h/m/s is '*'."""
    k = rng.random()
    if k < 0.08:
        s = rng.choice(['minutely', 'hourly', 'daily', 'weekly', 'monthly',
                        'quarterly', 'semiannually', 'yearly'])
        return s, s not in ('minutely', 'hourly')
    eom = rng.random() < 0.15
    date = '%s-%s%s%s' % (part(rng, 2026, 2040, 0.85, width=0),
                          part(rng, 1, 12, 0.6), '~' if eom else '-',
                          part(rng, 1, 31, 0.5, eom, his=[28, 29, 30, 31]))
    h = part(rng, 0, 23, 0.25)
    m = part(rng, 0, 59, 0.2)
    s = part(rng, 0, 59, 0.6) if rng.random() < 0.5 else None
    fixed = '*' not in (h[0], m[0]) and (s is None or s[0] != '*')
    time = '%s:%s' % (h, m) + ('' if s is None else ':' + s)
    if rng.random() < 0.1:
        time = ''
        fixed = True
    if rng.random() < 0.15 and time:
        return (weekdays(rng) + time).strip(), fixed
    return (weekdays(rng) + date + (' ' + time if time else '')).strip(), \
        fixed


def bases(rng, zone):
    """Base instants: near each DST change 2020-2030, and plain days."""
    z = zoneinfo.ZoneInfo(zone)
    out = []
    t = dt.datetime(2020, 1, 1, tzinfo=UTC)
    prev = t.astimezone(z).utcoffset()
    while t.year < 2031:		# hour steps: find the changes
        t2 = t + dt.timedelta(hours=1)
        o = t2.astimezone(z).utcoffset()
        if o != prev:
            out.append(t2 - dt.timedelta(hours=rng.randint(3, 30)))
            prev = o
        t = t2
    rng.shuffle(out)
    out = out[:6]
    out.append(dt.datetime(2026, 5, 28, 20, 26, 40, tzinfo=UTC))
    out.append(dt.datetime(2027, 1, 30, 23, 59, 59, tzinfo=UTC))
    return [b for b in out if not in_second_pass(z, b)]


def offset(z, t):
    return t.astimezone(z).utcoffset().total_seconds()


def repeat_size(z, t):
    """If t's wall time already occurred earlier (t lies in the second
    pass of a backward offset change), the size of that change in
    seconds, else 0."""
    off = offset(z, t)
    for s in range(60, 26 * 3600, 60):
        e = t - dt.timedelta(seconds=s)
        eo = offset(z, e)
        if eo == off:
            continue
        if eo < off:
            return 0			# the last change went forward
        lo, hi = e, e + dt.timedelta(seconds=60)	# the exact instant
        while (hi - lo).total_seconds() > 1:
            mid = lo + (hi - lo) / 2
            if offset(z, mid) == eo:
                lo = mid
            else:
                hi = mid
        change = hi.replace(microsecond=0)
        if offset(z, change) != off:
            change += dt.timedelta(seconds=1)
        return eo - off if (t - change).total_seconds() < eo - off else 0
    return 0


def in_second_pass(z, t):
    return repeat_size(z, t) > 0


def after_jump(z, t):
    """t lies in [T, T + d) after a forward offset change at T of d <= 3 h
    (the wall times of [T, T + d) are those just past the skipped ones)."""
    o = offset(z, t)
    for s in range(0, 3 * 3600 + 60, 60):
        e = t - dt.timedelta(seconds=s + 1)
        eo = offset(z, e)
        if eo != o:
            return 0 < o - eo <= 3 * 3600 and s < o - eo
    return False


def second_pass(z, t):
    """t is in the second pass of a backward change of at most 3 h."""
    return 0 < repeat_size(z, t) <= 3 * 3600


def changes_between(z, base, last):
    """The zone's offset changes between base and instant last (plus a
    day), sampled every 12 hours."""
    o = offset(z, base)
    end = dt.datetime.fromtimestamp(last, UTC) + dt.timedelta(days=1)
    t = base
    while t < end:
        t += dt.timedelta(hours=12)
        if offset(z, t) != o:
            return True
    return False


def sysd(exprs, base):
    """systemd-analyze's fires for each expression: list, or None."""
    env = dict(os.environ, TZ='UTC', LC_ALL='C', SYSTEMD_COLORS='0')
    cmd = ['systemd-analyze', 'calendar', '--iterations=%d' % ITER,
           '--base-time=%s' % base.strftime('%Y-%m-%d %H:%M:%S UTC')]
    p = subprocess.run(cmd + exprs, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        if len(exprs) > 1:
            return [sysd([e], base)[0] for e in exprs]
        if 'Failed to determine next elapse' in p.stderr:
            return [GIVEUP]
        return [None]
    res, cur = [], None
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith('Normalized form:'):
            cur = []
            res.append(cur)
            continue
        if line.startswith('Original form:'):
            continue
        if line.startswith('Next elapse:') or line.startswith('Iter. #'):
            v = line.split(':', 1)[1].strip()
            if v == 'never':
                continue
            cur.append(int(dt.datetime.strptime(
                v.split(' ', 1)[1], '%Y-%m-%d %H:%M:%S UTC')
                .replace(tzinfo=UTC).timestamp()))
    if len(res) != len(exprs):
        return [sysd([e], base)[0] for e in exprs]
    return res


def ours(ts, expr, base):
    p = subprocess.run([ts, 'cron', 'next', '--dialect', 'systemd', '-n',
                        str(ITER), '--from',
                        base.strftime('%Y-%m-%dT%H:%M:%SZ'), expr],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return None, p.stderr.strip()
    return [int(dt.datetime.fromisoformat(x.replace('Z', '+00:00'))
                .timestamp()) for x in p.stdout.split()], ''


def main():
    ts = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 20261206
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    rng = random.Random(seed)
    n = 0
    failures = []
    named = {'gap': 0, 'repeat': 0, 'eom-list': 0, 'edeadlk': 0}
    compared = 0
    for zone in ZONES:
        z = zoneinfo.ZoneInfo(zone)
        evs = [event(rng) for _ in range(count // len(ZONES))]
        for base in bases(rng, zone):
            texts = ['%s %s' % (e, zone) for e, _ in evs]
            ref = sysd(texts, base)
            for (e, fixed), text, want in zip(evs, texts, ref):
                got, err = ours(ts, text, base)
                if want is None and got is None:
                    continue
                if want == GIVEUP and got and changes_between(
                        z, base, got[-1]):
                    named['edeadlk'] += 1
                    continue
                if want == GIVEUP and got == []:
                    continue		# both: never (June 31)
                if want == GIVEUP:
                    failures.append('%s from %s: systemd gives up, and '
                                    'no offset change explains it' % (text, base))
                    continue
                if want is None and eom_list_limit(e):
                    named['eom-list'] += 1
                    continue
                if want is None or got is None:
                    failures.append('%s from %s: systemd %s, taskspool %s'
                                    % (text, base, 'refuses' if want is None
                                       else want, err or got))
                    continue
                compared += 1
                if got == want:
                    continue
                # Compare what both cover; explain every difference.
                if len(got) == ITER and len(want) == ITER:
                    h = min(got[-1], want[-1])
                else:
                    h = max(got + want)
                g = {t for t in got if t <= h}
                w = {t for t in want if t <= h}
                bad = []
                for t in sorted(w - g):
                    bad.append('systemd only %d' % t)
                for t in sorted(g - w):
                    u = dt.datetime.fromtimestamp(t, UTC)
                    if after_jump(z, u):
                        named['gap'] += 1
                    elif not fixed and second_pass(z, u):
                        named['repeat'] += 1
                    else:
                        bad.append('taskspool only %d' % t)
                if bad:
                    failures.append('%s from %s: %s (systemd %s, taskspool '
                                    '%s)' % (text, base, ', '.join(bad),
                                             want, got))
    n += 1
    print('%s %d - %d calendar events x bases x %d zones give systemd\'s '
          'instants (%d compared; named differences: gap %d, repeat %d, '
          'eom-list %d, edeadlk %d)' % ('not ok' if failures else 'ok', n,
                                        count, len(ZONES), compared,
                                        named['gap'], named['repeat'],
                                        named['eom-list'], named['edeadlk']))
    for f in failures[:40]:
        print('#   ' + f)
    ok = not failures

    # Both refuse the same malformed events (taskspool's extra refusals
    # are the README's: fractions of a second, @EPOCH).
    bad_events = ['*-*-32', '*-13-01', '*-*-* 24:00', '*-*-* 09:60',
                  '*-*-* 09:00:60', 'Fri..Mon', 'Sun..Mon', '*-*-5..1',
                  '*-*~3..1', '*-*~0', '*-*~29', '*:*/7', '*/2-*-* 0:0',
                  '0/15', '12', 'Tues 12:00', 'Mon.Fri', 'Mon,,Tue', ',Mon',
                  '*-*-* 9:00,', '1969-01-01', '2200-01-01', '2199/1-*-*',
                  '1970/230-*-*', '*-*-29/3', '*-*~3/3', '*-*-31/0',
                  '*-*-* *:*:59/1', '*-*-* 23/1:00', '2026~5', '*-~5',
                  '*-*-* 0900', '*', '*-*-* *', '*-*-* *:*:*:*',
                  ' *-*-* 9:00', '*-*-* 9:00 ', 'Mon..Wed..Fri', 'Mon..',
                  '*-*-* 12:00:00.', '100-01-01', '*-*-* 12:00 Foo/Bar',
                  '*-*-* 12:00 Mon', '*-*-* *:*:10..10',
                  '*-*-* 0:0:' + ','.join(['1'] * 242)]
    base = dt.datetime(2026, 5, 28, tzinfo=UTC)
    mism = []
    for b in bad_events:
        r = sysd([b], base)[0]
        g, _ = ours(ts, b, base)
        if r is not None or g is not None:
            mism.append('%r: systemd %s, taskspool %s' % (
                b, 'refuses' if r is None else 'accepts',
                'refuses' if g is None else 'accepts'))
    n += 1
    print('%s %d - %d malformed events refused by both' %
          ('not ok' if mism else 'ok', n, len(bad_events)))
    for m in mism:
        print('#   ' + m)
    ok = ok and not mism
    print('1..%d' % n)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
