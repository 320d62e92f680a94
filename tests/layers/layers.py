#!/usr/bin/env python3
"""layers.py — check daemon/'s include graph against daemon/README.md.

Usage: python3 tests/layers/layers.py [--objs DIR] [REPO]
       (REPO defaults to .; DIR is the build's object tree, build/obj)

Reads the table "| folder | owns | may include |" of daemon/README.md (the
one source of the rules), then every daemon/<folder>/*.c and *.h, and
fails (exit 1, one line per finding) when:

  - a file includes a header of a folder its folder may not include, or a
    header that does not exist (every taskspool include names its folder:
    #include "core/task.h");
  - a library header escapes the folder the README's "Library headers"
    list gives it (hiredis only in coord/, mysql.h only in records/...);
  - a file of core/ includes a header of the OS interfaces that pure code
    does not use (the "Pure code" list of the README);
  - two concepts include each other, directly or through others (a cycle
    in the concept graph: a concept is a file stem, x.c with x.h, and
    x_impl.h belongs to concept x);
  - the folder rules themselves have a cycle.

With --objs (the objects of a build: DIR/<folder>/x.o for daemon/<folder>/
x.c; `make layers` passes $(BUILD)/obj), it also reads each object's
symbols with nm(1) and fails when:

  - a header daemon/F/x.h or x_impl.h declares a function that x.o does
    not define (one header per concept: a header that declares another
    concept's functions hides that concept's dependencies from the
    include graph);
  - two concepts call each other, directly or through others (a cycle in
    the call graph: each undefined symbol of x.o is resolved to the
    concept whose object defines it);
  - an object other than the one the README's "Library headers" list
    names calls a library function kept to one file (hiredis's commands
    only in coord/coord_redis.c).

Without DIR, or when DIR holds no object, those two checks are skipped
with a note.

It prints the folder-to-folder table of the include graph: for each
folder, how many include lines name each other folder.  Exit 0 when
nothing is found, 1 on findings, 2 when the README table cannot be read.
"""
import fnmatch
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


def readme_rules(path):
    """Parse daemon/README.md: folder rules, library headers, pure list."""
    try:
        text = open(path, encoding='utf-8').read()
    except OSError as e:
        sys.exit('layers: %s: %s' % (path, e.strerror))
    rules = {}
    for line in text.splitlines():
        m = re.match(r'^\|\s*`([a-z]+)/`\s*\|.*\|\s*([^|]*)\|\s*$', line)
        if not m:
            continue
        allowed = set(re.findall(r'`([a-z]+)/`', m.group(2)))
        rules[m.group(1)] = allowed
    libs = {}
    for m in re.finditer(r'^- `<([^>]+)>` only in `([a-z]+)/`', text, re.M):
        libs[m.group(1)] = m.group(2)
    calls = []		# (symbol pattern, the one file that may call it)
    for m in re.finditer(r'^- ((?:`[A-Za-z_][\w*]*`,? )+)[^`\n]*only in '
                         r'`([a-z]+/\w+)\.c`', text, re.M):
        for pat in re.findall(r'`([^`]+)`', m.group(1)):
            calls.append((pat, m.group(2)))
    # "Modules of several files": `F/x*` — the files F/x.c and F/x_*.c
    # with their headers count as one concept x (they share F/x_impl.h).
    for m in re.finditer(r'^- `([a-z]+)/([a-z_]+)\*` is one module', text,
                         re.M):
        MODULES.append((m.group(1), m.group(2)))
    pure = set()
    m = re.search(r'^Pure code includes none of: (.*)$', text, re.M)
    if m:
        pure = set(re.findall(r'`<([^>]+)>`', m.group(1)))
    if not rules:
        print('layers: %s has no "| `folder/` | owns | may include |" '
              'table' % path)
        sys.exit(2)
    return rules, libs, pure, calls


MODULES = []	# (folder, stem) of the README's modules of several files


def concept(path):
    """The concept of daemon/F/x.c, x.h, x_impl.h: (F, x); every file of a
    module F/m* of the README is concept F/m."""
    folder, name = path.split('/')[-2:]
    stem = os.path.splitext(name)[0]
    if stem.endswith('_impl'):
        stem = stem[:-len('_impl')]
    for mf, ms in MODULES:
        if folder == mf and (stem == ms or stem.startswith(ms + '_')):
            return folder + '/' + ms
    return folder + '/' + stem


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


DECL_NAME = re.compile(r'([A-Za-z_]\w*)\s*\($')


def declared_functions(text):
    """The names of the functions a header declares (prototypes only:
    comments, preprocessor lines, braced bodies, typedefs, static inline
    functions, function pointers and upper-case names, the invocations of
    X-macros such as MYSQL_DL_FUNCS(X), are left out)."""
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    text = re.sub(r'^\s*#(?:[^\n]*\\\n)*[^\n]*', ' ', text, flags=re.M)
    flat, depth = [], 0
    for ch in text:
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                flat.append(';')
        elif depth == 0:
            flat.append(ch)
    names = []
    for stmt in ''.join(flat).split(';'):
        stmt = ' '.join(stmt.split())
        if '(' not in stmt or re.match(r'(typedef|static)\b', stmt):
            continue
        m = DECL_NAME.search(stmt[:stmt.index('(') + 1])
        if m and not m.group(1).isupper() and not stmt[
                :stmt.index('(')].rstrip().endswith('*)'):
            names.append(m.group(1))
    return names


def object_symbols(path):
    """(defined global symbols, undefined symbols) of object path, by nm;
    None when nm fails."""
    try:
        out = subprocess.run(['nm', path], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == 'U':
            undefined.add(f[1])
        elif len(f) == 3 and f[1].isupper() and f[1] != 'U':
            defined.add(f[2])
    return defined, undefined


def folder_files(daemon, rules, ext):
    """(folder, file name) of every daemon/<folder>/*<ext> of the rules'
    folders, in order."""
    for folder in rules:
        fdir = os.path.join(daemon, folder)
        if os.path.isdir(fdir):
            for name in sorted(os.listdir(fdir)):
                if name.endswith(ext):
                    yield folder, name


def symbol_checks(daemon, objs, rules, lib_calls, findings):
    """The header and call-graph checks over the objects in objs.
    Returns the number of concepts of the call graph, or None (skipped)."""
    syms = {}
    for folder, name in folder_files(daemon, rules, '.c'):
        obj = os.path.join(objs, folder, name[:-2] + '.o')
        if os.path.isfile(obj):
            got = object_symbols(obj)
            if got is None:
                findings.append('%s: nm cannot read it' % obj)
            else:
                # the objects of a module count as one (concept())
                key = concept('daemon/%s/%s' % (folder, name))
                if key in syms:
                    syms[key] = (syms[key][0] | got[0],
                                 (syms[key][1] | got[1]) -
                                 (syms[key][0] | got[0]))
                else:
                    syms[key] = got
    if not syms:
        return None
    owner = {}
    for c, (defined, _) in syms.items():
        for s in defined:
            owner[s] = c
    for folder, name in folder_files(daemon, rules, '.h'):
        rel = 'daemon/%s/%s' % (folder, name)
        me = concept(rel)
        text = open(os.path.join(daemon, folder, name),
                    encoding='utf-8').read()
        for fn in declared_functions(text):
            if me in syms and fn in syms[me][0]:
                continue
            if me not in syms and not os.path.isfile(
                    os.path.join(daemon, me + '.c')):
                where = 'there is no daemon/%s.c' % me
            elif me not in syms:
                findings.append('%s: no object %s.o to check it '
                                'against (build first)' % (rel, me))
                break
            else:
                where = '%s.o does not define it' % me
            findings.append('%s declares %s(), but %s%s' % (
                rel, fn, where, ' (%s.c does)' % owner[fn]
                if fn in owner else ''))
    for c, (_, undefined) in sorted(syms.items()):
        for pat, home in lib_calls:
            for sym in sorted(undefined):
                if c != home and fnmatch.fnmatchcase(sym, pat):
                    findings.append('%s.o calls %s(), which only %s.c '
                                    'may call (daemon/README.md, "Library '
                                    'headers")' % (c, sym, home))
    calls = {}
    for c, (_, undefined) in syms.items():
        calls[c] = set(owner[s] for s in undefined
                       if s in owner and owner[s] != c)
    for comp in cycles(calls):
        findings.append('call cycle between concepts: %s' %
                        ' <-> '.join(comp))
    return len(calls)


def main():
    args = sys.argv[1:]
    objs = None
    if len(args) >= 2 and args[0] == '--objs':
        objs, args = args[1], args[2:]
    repo = args[0] if args else '.'
    daemon = os.path.join(repo, 'daemon')
    rules, libs, pure, lib_calls = readme_rules(os.path.join(daemon, 'README.md'))
    findings = []
    table = {}
    graph = {}
    for folder in sorted(os.listdir(daemon)):
        fdir = os.path.join(daemon, folder)
        if not os.path.isdir(fdir):
            continue
        files = sorted(f for f in os.listdir(fdir)
                       if f.endswith(('.c', '.h')))
        if files and folder not in rules:
            findings.append('daemon/%s/: a folder of code that '
                            'daemon/README.md does not list' % folder)
            continue
        for name in files:
            rel = 'daemon/%s/%s' % (folder, name)
            text = open(os.path.join(fdir, name), encoding='utf-8').read()
            me = concept(rel)
            graph.setdefault(me, set())
            for kind, inc in INCLUDE.findall(text):
                if kind == '<':
                    for lib, home in libs.items():
                        hit = (inc.startswith(lib[:-1]) if lib.endswith('*')
                               else inc == lib)
                        if hit and folder != home:
                            findings.append('%s: <%s> outside %s/' %
                                            (rel, inc, home))
                    if folder == 'core' and inc in pure:
                        findings.append('%s: <%s> in core/ (pure code does '
                                        'no I/O and reads no clock)' %
                                        (rel, inc))
                    continue
                parts = inc.split('/')
                if len(parts) != 2 or not os.path.isfile(
                        os.path.join(daemon, inc)):
                    findings.append('%s: "%s" is not daemon/<folder>/'
                                    '<file>.h' % (rel, inc))
                    continue
                to = parts[0]
                if to != folder:
                    table.setdefault(folder, {}).setdefault(to, 0)
                    table[folder][to] += 1
                    if to not in rules[folder]:
                        findings.append('%s: includes %s, but %s/ may '
                                        'include only %s' %
                                        (rel, inc, folder,
                                         ', '.join(sorted(rules[folder]))
                                         or 'itself'))
                other = concept('daemon/' + inc)
                if other != me:
                    graph[me].add(other)
    for comp in cycles(graph):
        findings.append('include cycle between concepts: %s' %
                        ' <-> '.join(comp))
    called = None
    if objs is not None and os.path.isdir(objs):
        called = symbol_checks(daemon, objs, rules, lib_calls, findings)
    for comp in cycles(rules):
        findings.append('daemon/README.md: the folder rules have a cycle: '
                        '%s' % ', '.join(comp))
    folders = list(rules)	# the README's order: lowest layer first
    print('folder-to-folder includes (row includes column; count of '
          'include lines):')
    width = max(len(f) for f in folders) + 1
    print(' ' * width + ' '.join('%8s' % f for f in folders))
    for f in folders:
        row = table.get(f, {})
        print(('%-' + str(width) + 's') % f + ' '.join(
            '%8s' % (row[t] if t in row else ('.' if t != f else '-'))
            for t in folders))
    for line in findings:
        print('layers: ' + line)
    if called is None:
        print('layers: note: no objects%s: the header and call-graph '
              'checks are skipped' % (' in ' + objs if objs else
                                      ' (--objs DIR not given)'))
    else:
        print('layers: call graph of %d objects checked' % called)
    print('layers: %d finding(s) in %d concepts' % (len(findings),
                                                    len(graph)))
    return 1 if findings else 0


if __name__ == '__main__':
    sys.exit(main())
