#!/usr/bin/python3
"""replay.py - hold contrib/openapi/openapi.yaml against the running API.

usage: replay.py SPEC API_C BASE_URL APP_ID SECRET [OPID=APP_ID:SECRET ...]
       replay.py --webhook SPEC DUMPDIR WHSEC

1. Routes: every route of route_match() in API_C (daemon/api/api.c) is a
   path of SPEC with exactly the methods its Allow string names, and every
   path of SPEC is such a route; every (status, code) of an api_problem()
   call in the api*.c files next to API_C is in the ProblemCode enum and in
   a response of that status (405 METHOD_NOT_ALLOWED: in info.description),
   and every ProblemCode is emitted (the document cannot drift from the
   code).
2. The document's own examples: every request and response example
   validates against the schema next to it.
3. Replay: every documented request example is sent to BASE_URL, signed
   with TS1-HMAC-SHA256 as APP_ID (or the app given for that operationId
   OPID),
   in document order.  A body example, or a set of parameter examples of
   one name, is one request; an operation without examples is sent once
   bare.  Each answer must have a status the operation documents, the
   media type of that response, every header it marks required, headers
   and body valid against its schemas (JSON Schema 2020-12, $ref resolved
   in the document, date-time checked), and X-Trace-Id equal to a
   problem's traceId.  When a response example has the request example's
   name, the answer's status must be that response's.  Then probes on
   every operation: a query with '+' (400), no signature and a wrong one
   (401, signed operations), a POST as text/plain (415), each answer held
   to the document in the same way.

With --webhook: the callbacks tests/tools/cbrecv.py saved in DUMPDIR
(CBRECV_DUMP) against webhooks.taskFinished: headers, payload schema,
and the signature, as documented, with the registration's secret WHSEC.

Prints one line per check ("ok ..." or "not ok ..."); exit status 0 when
every check passed, 1 otherwise, 2 for usage errors.  Needs Debian's
python3-yaml and python3-jsonschema; signs with the package of
contrib/python (imported from the source tree).
"""
import http.client
import json
import os
import re
import sys
import urllib.parse

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "contrib", "python", "src"))
import taskspool  # noqa: E402

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
failures = 0


def report(ok, what):
    global failures
    if not ok:
        failures += 1
    print("%s %s" % ("ok" if ok else "not ok", what))
    return ok


# --- the document --------------------------------------------------------

def resolve(spec, node):
    """node with its $ref (an in-document JSON pointer) followed."""
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise ValueError("external $ref %s" % ref)
        node = spec
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?"
                     r"(Z|[+-]\d\d:\d\d)$", re.I)
FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("date-time")
def _date_time(v):
    return not isinstance(v, str) or bool(RFC3339.match(v))


def validator(spec, schema):
    """A Draft 2020-12 validator of schema whose $refs resolve in spec."""
    resolver = jsonschema.RefResolver(base_uri="", referrer=spec)
    return jsonschema.Draft202012Validator(schema, resolver=resolver,
                                           format_checker=FORMATS)


def schema_errors(spec, schema, value):
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)",
                        e.message)
            for e in validator(spec, schema).iter_errors(value)]


def operations(spec):
    """(path, method, path item, operation) in document order."""
    for path, item in spec["paths"].items():
        for m in item:
            if m in METHODS:
                yield path, m, item, item[m]


def parameters(spec, item, op):
    ps = [resolve(spec, p) for p in item.get("parameters", [])]
    ps += [resolve(spec, p) for p in op.get("parameters", [])]
    return ps


# --- 1. routes ------------------------------------------------------------

def code_routes(api_c):
    """{openapi path: set of methods} from route_match() in api.c."""
    src = open(api_c, encoding="utf-8").read()
    body = src[src.index("route_match(const char *p"):]
    body = body[:body.index("\n}\n")]
    routes = {}
    pat = re.compile(r'(strcmp\(p, "([^"]+)"\) == 0|strncmp\(p, "([^"]+)", '
                     r'\d+\) == 0 && (spool_id_ok|task_action\(p \+ \d+,'
                     r'\s*"([^"]+)")).*?\*allow = "([^"]+)"', re.S)
    for m in pat.finditer(body):
        exact, prefix, action, allow = (m.group(2), m.group(3), m.group(5),
                                        m.group(6))
        if exact is not None:
            path = exact if exact == "/metrics" else "/api" + exact
        else:
            # "{id}/hold": task_action() names the part after the id
            path = "/api" + prefix + "{requestId}" + (action or "")
        routes[path] = {a.strip().lower() for a in allow.split(",")}
    # route_batch() and route_job(): /batches/{batchId}, /jobs/{jobCode}
    # (the "return R_BATCH;" or "return R_JOB;" after its *allow), and
    # each action "if (strcmp(slash, "/x") == 0) return R_...;" with the
    # *allow set last before it.
    for fn, base, whole in (("route_batch(const char *b",
                             "/api/batches/{batchId}", "R_BATCH"),
                            ("route_job(const char *j",
                             "/api/jobs/{jobCode}", "R_JOB")):
        if fn not in src:
            continue
        rb = src[src.index(fn):]
        rb = rb[:rb.index("\n}\n")]
        allow = None
        tok = re.compile(r'\*allow = "([^"]+)";|'
                         r'strcmp\(slash, "([^"]+)"\) == 0\)\s*return (R_\w+);|'
                         r'return (%s);' % whole)
        for m in tok.finditer(rb):
            if m.group(1) is not None:
                allow = m.group(1)
                continue
            path = base + (m.group(2) or "")
            routes[path] = {a.strip().lower() for a in allow.split(",")}
    return routes


def check_routes(spec, api_c):
    routes = code_routes(api_c)
    report(len(routes) >= 5, "route_match() in %s yields %d routes"
           % (os.path.basename(api_c), len(routes)))
    doc = {p: {m for m in METHODS if m in item}
           for p, item in spec["paths"].items()}
    for p in sorted(set(routes) | set(doc)):
        report(routes.get(p) == doc.get(p),
               "route %s: code allows %s, document has %s"
               % (p, sorted(routes.get(p, [])), sorted(doc.get(p, []))))


def code_problems(api_dir):
    """{(status, code)} of every api_problem() call in API_DIR/api*.c, and
    of the helpers that make one (invalid_field: 422 VALIDATION_FAILED,
    api_unavailable: 503 SERVICE_UNAVAILABLE, in api.c)."""
    found = set()
    pat = re.compile(r'api_problem\(\s*[&\w]+,\s*\w+,\s*(\d+),\s*"([A-Z_]+)"')
    for name in sorted(os.listdir(api_dir)):
        if name.startswith("api") and name.endswith(".c"):
            src = open(os.path.join(api_dir, name), encoding="utf-8").read()
            found |= {(int(a), b) for a, b in pat.findall(src)}
    return found


def response_codes(spec, schema, out):
    """Collect the code const/enum values of a problem response schema."""
    schema = resolve(spec, schema)
    code = schema.get("properties", {}).get("code", {})
    out.update([code["const"]] if "const" in code else code.get("enum", []))
    for k in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(k, []):
            response_codes(spec, sub, out)


def check_problems(spec, api_dir):
    emitted = code_problems(api_dir)
    report(len(emitted) >= 25, "%d (status, code) pairs emitted by %s/api*.c"
           % (len(emitted), os.path.basename(api_dir)))
    enum = set(resolve(spec, {"$ref": "#/components/schemas/ProblemCode"})
               ["enum"])
    documented = {}
    for path, m, item, op in operations(spec):
        for st, r in op["responses"].items():
            for c in resolve(spec, r).get("content", {}).values():
                codes = set()
                response_codes(spec, c["schema"], codes)
                documented.setdefault(int(st), set()).update(codes)
    info = spec["info"]["description"]
    for st, code in sorted(emitted):
        report(code in enum, "problem code %s is in ProblemCode" % code)
        ok = code in documented.get(st, set()) or \
            "`%d %s`" % (st, code) in info
        report(ok, "problem %d %s is documented under status %d" % (st, code,
                                                                   st))
    for code in sorted(enum - {c for _, c in emitted}):
        report(False, "ProblemCode %s is emitted by no api_problem() call"
               % code)


# --- 2. the examples ------------------------------------------------------

def check_examples(spec):
    for path, m, item, op in operations(spec):
        oid = op["operationId"]
        rb = resolve(spec, op.get("requestBody", {}))
        for mt, c in rb.get("content", {}).items():
            for name, ex in c.get("examples", {}).items():
                errs = schema_errors(spec, c["schema"],
                                     resolve(spec, ex)["value"])
                report(not errs, "%s request example %s matches its schema%s"
                       % (oid, name, ": " + "; ".join(errs) if errs else ""))
        for p in parameters(spec, item, op):
            for name, ex in p.get("examples", {}).items():
                errs = schema_errors(spec, p["schema"],
                                     resolve(spec, ex)["value"])
                report(not errs, "%s parameter %s example %s matches%s"
                       % (oid, p["name"], name,
                          ": " + "; ".join(errs) if errs else ""))
        for st, r in op["responses"].items():
            r = resolve(spec, r)
            for mt, c in r.get("content", {}).items():
                for name, ex in c.get("examples", {}).items():
                    errs = schema_errors(spec, c["schema"],
                                         resolve(spec, ex)["value"])
                    report(not errs, "%s %s example %s matches its schema%s"
                           % (oid, st, name,
                              ": " + "; ".join(errs) if errs else ""))


# --- 3. replay ------------------------------------------------------------

def cases(spec, item, op):
    """[(name, path params, query pairs, body bytes or None)]."""
    params = parameters(spec, item, op)
    path_params = [p for p in params if p["in"] == "path"]
    query_params = [p for p in params if p["in"] == "query"]

    def path_values(name):
        v = {}
        for p in path_params:
            exs = p.get("examples", {})
            ex = exs.get(name) or (next(iter(exs.values())) if exs else None)
            v[p["name"]] = (resolve(spec, ex)["value"] if ex is not None
                            else p["example"])
        return v

    def query_values(name):
        q = []
        for p in query_params:
            ex = p.get("examples", {}).get(name)
            if ex is None:
                continue
            val = resolve(spec, ex)["value"]
            for v in val if isinstance(val, list) else [val]:
                q.append((p["name"], str(v)))
        return q

    out = []
    rb = resolve(spec, op.get("requestBody", {}))
    bodies = rb.get("content", {}).get("application/json", {}).get(
        "examples", {})
    if bodies:
        for name, ex in bodies.items():
            body = json.dumps(resolve(spec, ex)["value"], ensure_ascii=False,
                              separators=(",", ":")).encode("utf-8")
            out.append((name, path_values(name), [], body))
        return out
    names = []
    for p in params:
        for n in p.get("examples", {}):
            if n not in names:
                names.append(n)
    if not path_params or not names:
        out.append(("(bare)", path_values(""), [], None))
    for n in names:
        out.append((n, path_values(n), query_values(n), None))
    return out


def paired_status(spec, op, name):
    for st, r in op["responses"].items():
        for c in resolve(spec, r).get("content", {}).values():
            if name in c.get("examples", {}):
                return st
    return None


def essence(mt):
    return mt.split(";")[0].strip().lower()


def norm(mt):
    return mt.replace(" ", "").lower()


def check_answer(spec, what, op, status, headers, body, want):
    responses = op["responses"]
    if not report(str(status) in responses, "%s: status %d is documented (%s)"
                  % (what, status, ", ".join(responses))):
        print("#   body: %s" % body[:300].decode("utf-8", "replace"))
        return
    if want is not None:
        report(str(status) == want, "%s: status %d is the paired example's %s"
               % (what, status, want))
    r = resolve(spec, responses[str(status)])
    for name, h in r.get("headers", {}).items():
        h = resolve(spec, h)
        v = headers.get(name.lower())
        if v is None:
            report(not h.get("required", False), "%s: header %s present"
                   % (what, name))
            continue
        errs = schema_errors(spec, h["schema"], v)
        report(not errs, "%s: header %s: %r valid%s"
               % (what, name, v, ": " + "; ".join(errs) if errs else ""))
    content = r.get("content", {})
    ct = headers.get("content-type", "")
    keys = [k for k in content if essence(k) == essence(ct) and
            (";" not in k or norm(k) == norm(ct))]
    if not report(bool(keys) or not content, "%s: Content-Type %r documented"
                  " (%s)" % (what, ct, ", ".join(content))):
        return
    if not content:
        return
    schema = content[keys[0]]["schema"]
    if essence(ct).endswith("json"):
        try:
            doc = json.loads(body.decode("utf-8"))
        except ValueError as e:
            report(False, "%s: body is JSON (%s)" % (what, e))
            return
    else:
        doc = body.decode("utf-8")
    errs = schema_errors(spec, schema, doc)
    report(not errs, "%s: body valid against the %d response's schema%s"
           % (what, status, ": " + "; ".join(errs[:5]) if errs else ""))
    if errs:
        print("#   body: %s" % body[:600].decode("utf-8", "replace"))
    if isinstance(doc, dict) and "traceId" in doc:
        report(doc["traceId"] == headers.get("x-trace-id"),
               "%s: traceId equals X-Trace-Id" % what)


def exchange(conn, method, path, query, headers, body):
    """Send one request on conn (a body as application/json unless headers
    name a Content-Type); returns (status, headers in lower case, body)."""
    h = dict(headers)
    if body is not None:
        h.setdefault("Content-Type", "application/json")
    conn.request(method.upper(), path + ("?" + query if query else ""),
                 body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    if r.will_close:
        conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def replay(spec, base, apps):
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    sent = 0
    for path, m, item, op in operations(spec):
        oid = op["operationId"]
        signed = op.get("security", spec.get("security")) != []
        app_id, secret = apps.get(oid, apps[""])
        for name, pv, q, body in cases(spec, item, op):
            p = path
            for k, v in pv.items():
                p = p.replace("{%s}" % k, v)
            query = "&".join("%s=%s" % (urllib.parse.quote(k, safe=""),
                                        urllib.parse.quote(v, safe=""))
                             for k, v in q)
            h = {}
            if signed:
                h.update(taskspool.ts1_headers(app_id, secret, m.upper(), p,
                                               query, body or b""))
            what = "%s %s%s [%s]" % (m.upper(), p, "?" + query if query
                                     else "", name)
            check_answer(spec, what, op, *exchange(conn, m, p, query, h,
                                                   body),
                         paired_status(spec, op, name))
            sent += 1
        # Probes: the errors every operation can meet must be documented
        # for it too (status, headers, body).
        p = path
        for k, v in cases(spec, item, op)[0][1].items():
            p = p.replace("{%s}" % k, v)
        body = b"{}" if m in ("post", "put") else None
        # contrib/lighttpd rewrites "^/metrics$" only: /metrics with a
        # query never reaches the program (lighttpd's own 404).
        probes = [] if path == "/metrics" else [
            ("bad query", "a=b+c", {}, body, 400)]
        if signed:
            probes.append(("unsigned", "", {}, body, 401))
            probes.append(("wrong secret", "", taskspool.ts1_headers(
                app_id, secret + "x", m.upper(), p, "", body or b""), body,
                401))
        if m in ("post", "put"):
            probes.append(("text/plain", "", {"Content-Type": "text/plain"},
                           body, 415))
        for name, query, h, b, want in probes:
            check_answer(spec, "%s %s [probe: %s]" % (m.upper(), p, name), op,
                         *exchange(conn, m, p, query, h, b), str(want))
            sent += 1
    report(sent >= 10, "%d requests replayed" % sent)


def check_webhook(spec, dump, secret):
    """The callbacks a receiver saved in dump (tests/tools/cbrecv.py's
    CBRECV_DUMP: N.body, N.hdr) against webhooks.taskFinished: each
    documented header present and valid, the body valid against the
    payload schema, the signature good for secret (whsec_...)."""
    op = spec["webhooks"]["taskFinished"]["post"]
    params = {p["name"].lower(): p for p in parameters(spec, {}, op)}
    schema = resolve(spec, op["requestBody"])["content"][
        "application/json"]["schema"]
    n = 0
    for name in sorted(os.listdir(dump)):
        if not name.endswith(".hdr"):
            continue
        n += 1
        base = os.path.join(dump, name[:-4])
        hdr = json.load(open(base + ".hdr", encoding="utf-8"))
        body = open(base + ".body", "rb").read()
        for k, v in hdr.items():
            p = params.get(k.lower())
            if report(p is not None, "callback %s: header %s documented"
                      % (name[:-4], k)):
                errs = schema_errors(spec, p["schema"], v)
                report(not errs, "callback %s: header %s: %r valid%s"
                       % (name[:-4], k, v, ": " + "; ".join(errs)
                          if errs else ""))
        errs = schema_errors(spec, schema, json.loads(body.decode("utf-8")))
        report(not errs, "callback %s: body valid against the payload "
               "schema%s" % (name[:-4], ": " + "; ".join(errs) if errs
                             else ""))
        ok, why = taskspool.verify_webhook(
            secret, hdr.get("webhook-id", ""), hdr.get("webhook-timestamp",
                                                        ""),
            hdr.get("webhook-signature", ""), body)
        report(ok, "callback %s: signature as documented: %s"
               % (name[:-4], why))
    report(n >= 1, "%d callbacks checked" % n)


def main(argv):
    if len(argv) == 5 and argv[1] == "--webhook":
        check_webhook(yaml.safe_load(open(argv[2], encoding="utf-8")),
                      argv[3], argv[4])
        print("# %d failed" % failures)
        return 1 if failures else 0
    if len(argv) < 6:
        sys.stderr.write(__doc__)
        return 2
    spec = yaml.safe_load(open(argv[1], encoding="utf-8"))
    apps = {"": (argv[4], argv[5])}
    for a in argv[6:]:
        oid, _, cred = a.partition("=")
        app, _, sec = cred.partition(":")
        apps[oid] = (app, sec)
    report(spec.get("openapi") == "3.1.0", "document is OpenAPI 3.1.0")
    check_routes(spec, argv[2])
    check_problems(spec, os.path.dirname(os.path.abspath(argv[2])))
    check_examples(spec)
    replay(spec, argv[3], apps)
    print("# %d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
