#!/usr/bin/env python3
"""cbrecv.py -- a callback receiver for the scenario tests (standard library
only).

    cbrecv.py PORTFILE LOGFILE SECRET[,SECRET...] [--tls CERT KEY]

Listens on 127.0.0.1, a free port (written to PORTFILE once listening).
Every request is verified as a Standard Webhooks receiver must (spec
1.0.0, "Verifying webhook authenticity"): the key is the base64-decoded
text after "whsec_"; the signed content is webhook-id "." webhook-timestamp
"." raw body; each "v1,<base64>" entry of webhook-signature is compared in
constant time (hmac.compare_digest); the timestamp must be within 300 s.
Each request is logged as an {"arrived": path, ...} line when its body has
been read, then as one JSON line in LOGFILE once answered: path, start and end
time, headers, sigOk (one signature matched), nsig (entries), allSigOk
(every entry matched one of the secrets), tsOk, body.  Accepted
connections are logged as {"connection": ...} lines.

Paths: /ok 200; /flaky 500 for the first two requests of a webhook-id,
then 200; /slow sleeps 10 s then 200; /slowonce sleeps 10 s on the first
request of a webhook-id, then 200; /redirect 302 to /ok; /gone 410;
/busy 503 with Retry-After: 1 on the first request of a webhook-id.

With CBRECV_DUMP=DIR in the environment, request number N (from 1) is
also saved raw: DIR/N.body (the body bytes) and DIR/N.hdr (a JSON object
of the webhook-id, webhook-timestamp and webhook-signature values), so
that another verifier (contrib/clients/tsapi.py verify) can check it.
"""
import base64
import hashlib
import hmac
import json
import os
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOGFILE, SECRETS = sys.argv[1], sys.argv[2], sys.argv[3]
KEYS = [base64.b64decode(s[len("whsec_"):], validate=True)
        for s in SECRETS.split(",")]
LOCK = threading.Lock()
SEEN = {}
DUMP = os.environ.get("CBRECV_DUMP")
NDUMP = [0]


def dump(headers, body):
    with LOCK:
        NDUMP[0] += 1
        n = NDUMP[0]
    base = os.path.join(DUMP, str(n))
    with open(base + ".body", "wb") as f:
        f.write(body)
    with open(base + ".hdr.tmp", "w") as f:
        json.dump({k: headers.get(k, "") for k in
                   ("webhook-id", "webhook-timestamp", "webhook-signature",
                   "traceparent")},
                  f)
    os.rename(base + ".hdr.tmp", base + ".hdr")


def log(rec):
    with LOCK:
        with open(LOGFILE, "a") as f:
            f.write(json.dumps(rec) + "\n")


def verify(wid, ts, body, header):
    entries = [e for e in header.split(" ") if e]
    ok = []
    for e in entries:
        if not e.startswith("v1,"):
            ok.append(False)
            continue
        got = base64.b64decode(e[3:])
        content = wid.encode() + b"." + ts.encode() + b"." + body
        ok.append(any(hmac.compare_digest(
            hmac.new(k, content, hashlib.sha256).digest(), got)
            for k in KEYS))
    return any(ok), len(entries), bool(ok) and all(ok)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        start = time.time()
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        wid = self.headers.get("webhook-id", "")
        ts = self.headers.get("webhook-timestamp", "")
        sig_ok, nsig, all_ok = verify(wid, ts, body,
                                      self.headers.get("webhook-signature", ""))
        ts_ok = ts.isdigit() and abs(time.time() - int(ts)) <= 300
        if DUMP:
            dump(self.headers, body)
        log({"arrived": self.path, "webhookId": wid, "start": start})
        with LOCK:
            SEEN[(self.path, wid)] = SEEN.get((self.path, wid), 0) + 1
            count = SEEN[(self.path, wid)]
        status, extra = 200, {}
        if self.path == "/flaky" and count <= 2:
            status = 500
        elif self.path == "/slow" or (self.path == "/slowonce" and count == 1):
            time.sleep(10)
        elif self.path == "/redirect":
            status, extra = 302, {"Location": "/ok"}
        elif self.path == "/gone":
            status = 410
        elif self.path == "/busy" and count == 1:
            status, extra = 503, {"Retry-After": "1"}
        rec = {"path": self.path, "start": start, "end": time.time(),
               "webhookId": wid, "timestamp": ts,
               "attempt": self.headers.get("X-Webhook-Attempt"),
               "contentType": self.headers.get("Content-Type"),
               "expect": self.headers.get("Expect"),
               "sigOk": sig_ok, "nsig": nsig, "allSigOk": all_ok,
               "tsOk": ts_ok, "status": status,
               "bodyHasEscapes": b"\\u" in body,
               "body": body.decode("utf-8")}
        log(rec)
        try:
            self.send_response(status)
            for k, v in extra.items():
                self.send_header(k, v)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        except OSError:
            pass            # the sender gave up (timeout): fine


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def verify_request(self, request, client_address):
        log({"connection": client_address[0], "time": time.time()})
        return True


srv = Server(("127.0.0.1", 0), Handler)
if len(sys.argv) > 4 and sys.argv[4] == "--tls":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[5], sys.argv[6])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
tmp = PORTFILE + ".tmp"
with open(tmp, "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, PORTFILE)
srv.serve_forever()
