#!/usr/bin/env python3
"""tsapi.py - a Python client for the taskspool HTTP API (README.md,
"The HTTP API").

Standard library only.  Signs every request with TS1-HMAC-SHA256
(README.md, "Signing a request"), submits tasks and polls them until
they finish.

    tsapi.py submit FILE|-        POST /api/tasks with the file's exact bytes
    tsapi.py get ID               GET /api/tasks/ID
    tsapi.py wait ID [SECONDS]    poll until SUCCESS, FAILED or CANCELLED
    tsapi.py cancel ID            DELETE /api/tasks/ID
    tsapi.py register URL         POST /api/callbacks/register
    tsapi.py verify ID TS SIG FILE|-
                                  verify a received callback (Standard
                                  Webhooks v1): the webhook-id,
                                  webhook-timestamp and webhook-signature
                                  header values and the raw body bytes;
                                  the secret (whsec_...) is TS_WEBHOOK_SECRET

Environment: TS_URL (scheme://host[:port], the API is under /api),
TS_APP_ID, TS_SECRET (the AppSecret text exactly as issued: its ASCII
bytes are the HMAC key).  Prints the response body; exit status 0 for a
2xx answer (wait: for SUCCESS), 1 otherwise, 2 for usage errors.
verify needs only TS_WEBHOOK_SECRET; it prints "ok" or the reason and
exits 0 when the callback is authentic, 1 otherwise.
"""
import base64
import binascii
import hashlib
import hmac
import http.client
import json
import os
import secrets
import sys
import time
import urllib.parse

UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       b"0123456789-._~")


def canonical_query(raw):
    """The canonical query (README.md, "Signing a request", steps 3-6)."""
    pairs = []
    for seg in raw.split("&"):
        if not seg:
            continue
        name, _, value = seg.partition("=")
        enc = []
        for part in (name, value):
            data = urllib.parse.unquote_to_bytes(part)
            enc.append("".join(chr(b) if b in UNRESERVED else "%%%02X" % b
                               for b in data))
        pairs.append(tuple(enc))
    pairs.sort(key=lambda p: (p[0].encode(), p[1].encode()))
    return "&".join("%s=%s" % p for p in pairs)


def canonical_string(method, path, query, app_id, ts, nonce, body):
    """The 8-line canonical string (no LF after the last line)."""
    return "\n".join(["TS1-HMAC-SHA256", method, path, canonical_query(query),
                      app_id, str(ts), nonce,
                      hashlib.sha256(body).hexdigest()])


def sign(secret, text):
    """Lowercase hex HMAC-SHA256; key = the secret's ASCII bytes."""
    return hmac.new(secret.encode("ascii"), text.encode("utf-8"),
                    hashlib.sha256).hexdigest()


WEBHOOK_TOLERANCE = 300     # seconds, Standard Webhooks / API.md section 6.3


def verify_webhook(secret, msg_id, timestamp, signature, body, now=None,
                   tolerance=WEBHOOK_TOLERANCE):
    """Check a callback as a Standard Webhooks v1 receiver must (spec
    1.0.0, "Verifying webhook authenticity"; API.md section 6.3).

    secret: "whsec_" + base64 of the key (the registration's secret);
    msg_id, timestamp, signature: the webhook-id, webhook-timestamp (epoch
    seconds) and webhook-signature header values; body: the raw request
    body (bytes, exactly as received); now: epoch seconds (default: the
    clock).  The timestamp must be within tolerance seconds of now (replay
    protection); the signed content is id "." timestamp "." body; each
    space-separated "v1,<base64>" entry is compared with the expected
    HMAC-SHA256 in constant time (hmac.compare_digest), and one match is
    enough (several entries appear while a secret is rotated).
    Returns (True, "ok") or (False, reason)."""
    if not secret.startswith("whsec_"):
        return False, "the secret does not start with whsec_"
    try:
        key = base64.b64decode(secret[len("whsec_"):], validate=True)
    except (binascii.Error, ValueError):
        return False, "the secret is not base64 after whsec_"
    if not msg_id:
        return False, "webhook-id is missing"
    if not timestamp.isdigit():
        return False, "webhook-timestamp is not epoch seconds"
    if now is None:
        now = time.time()
    if abs(now - int(timestamp)) > tolerance:
        return False, "webhook-timestamp is more than %d s away" % tolerance
    content = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    want = hmac.new(key, content, hashlib.sha256).digest()
    for entry in signature.split(" "):
        version, _, sig = entry.partition(",")
        if version != "v1":
            continue
        try:
            got = base64.b64decode(sig, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(want, got):
            return True, "ok"
    return False, "no v1 signature matches"


class Client:
    def __init__(self, url, app_id, secret, timeout=10):
        u = urllib.parse.urlsplit(url)
        self.https = u.scheme == "https"
        self.netloc = u.netloc
        self.app_id = app_id
        self.secret = secret
        self.timeout = timeout

    def request(self, method, path, body=b"", query=""):
        """Send one signed request; returns (status, headers, body bytes).
        A retry must call this again: new timestamp, nonce and signature,
        same body bytes (idempotency, README.md "The HTTP API")."""
        ts = int(time.time())
        nonce = secrets.token_hex(16)
        cs = canonical_string(method, path, query, self.app_id, ts, nonce,
                              body)
        headers = {"X-App-Id": self.app_id, "X-Timestamp": str(ts),
                   "X-Nonce": nonce, "X-Signature": sign(self.secret, cs)}
        if body or method == "POST":
            headers["Content-Type"] = "application/json"
            headers["Content-Length"] = str(len(body))
        conn_cls = (http.client.HTTPSConnection if self.https
                    else http.client.HTTPConnection)
        conn = conn_cls(self.netloc, timeout=self.timeout)
        try:
            conn.request(method, path + ("?" + query if query else ""),
                         body=body if body or method == "POST" else None,
                         headers=headers)
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def submit(self, body):
        return self.request("POST", "/api/tasks", body)

    def get(self, request_id):
        return self.request("GET", "/api/tasks/" + request_id)

    def wait(self, request_id, seconds=60.0):
        """Poll until the task is terminal or seconds pass."""
        end = time.monotonic() + seconds
        while True:
            status, headers, body = self.get(request_id)
            if status != 200:
                return status, headers, body
            if json.loads(body)["status"] in ("SUCCESS", "FAILED",
                                              "CANCELLED"):
                return status, headers, body
            if time.monotonic() > end:
                return status, headers, body
            time.sleep(0.2)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "verify":
        if len(argv) != 6 or "TS_WEBHOOK_SECRET" not in os.environ:
            sys.stderr.write(__doc__)
            return 2
        data = (sys.stdin.buffer.read() if argv[5] == "-"
                else open(argv[5], "rb").read())
        ok, why = verify_webhook(os.environ["TS_WEBHOOK_SECRET"], argv[2],
                                 argv[3], argv[4], data)
        sys.stdout.write(why + "\n")
        return 0 if ok else 1
    c = Client(os.environ["TS_URL"], os.environ["TS_APP_ID"],
               os.environ["TS_SECRET"])
    cmd, args = argv[1], argv[2:]
    if cmd == "submit" and len(args) == 1:
        data = (sys.stdin.buffer.read() if args[0] == "-"
                else open(args[0], "rb").read())
        status, _, body = c.submit(data)
    elif cmd == "get" and len(args) == 1:
        status, _, body = c.get(args[0])
    elif cmd == "cancel" and len(args) == 1:
        status, _, body = c.request("DELETE", "/api/tasks/" + args[0])
    elif cmd == "register" and len(args) == 1:
        status, _, body = c.request(
            "POST", "/api/callbacks/register",
            json.dumps({"url": args[0]}).encode())
    elif cmd == "wait" and len(args) in (1, 2):
        status, _, body = c.wait(args[0], float(args[1]) if len(args) > 1
                                 else 60.0)
        sys.stdout.write(body.decode("utf-8", "replace") + "\n")
        return 0 if (status == 200 and
                     json.loads(body)["status"] == "SUCCESS") else 1
    else:
        sys.stderr.write(__doc__)
        return 2
    sys.stdout.write(body.decode("utf-8", "replace") + "\n")
    return 0 if 200 <= status < 300 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
