#!/usr/bin/env python3
"""tsapi.py - a Python client for the taskspool HTTP API (README.md,
"The HTTP API").

Standard library only: a command line over the taskspool package
(contrib/python; from the source tree it needs no installation).  Signs
every request with TS1-HMAC-SHA256 (README.md, "Signing a request"),
submits tasks and polls them until they finish.

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
import json
import os
import sys
import time

# In the source tree the package next to this file (contrib/python/src)
# is the one it goes with, ahead of any installed release; elsewhere the
# installed package (pip, python3-taskspool).
_TREE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                     "python", "src")
if os.path.isfile(os.path.join(_TREE, "taskspool", "client.py")):
    sys.path.insert(0, _TREE)
try:
    import taskspool
    import taskspool.signing
except ImportError:
    sys.stderr.write("tsapi.py: needs the taskspool Python package "
                     "(contrib/python: pip install ./contrib/python)\n")
    sys.exit(2)

# The signing functions are the package's (contrib/python, signing.py).
canonical_query = taskspool.canonical_query
canonical_string = taskspool.canonical_string
sign = taskspool.sign
verify_webhook = taskspool.verify_webhook
WEBHOOK_TOLERANCE = taskspool.signing.WEBHOOK_TOLERANCE


class Client:
    """The package's Client without its exceptions: request() returns
    (status, headers, body bytes) for any answer."""

    def __init__(self, url, app_id, secret, timeout=10):
        self.c = taskspool.Client(url, app_id, secret, timeout)

    def request(self, method, path, body=b"", query=""):
        """Send one signed request; returns (status, headers, body bytes).
        A retry must call this again: new timestamp, nonce and signature,
        same body bytes (idempotency, README.md "The HTTP API")."""
        r = self.c.request(method, path, query,
                           body if body or method == "POST" else None)
        return r.status, r.headers, r.body

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
            if json.loads(body)["status"] in taskspool.TERMINAL:
                return status, headers, body
            if time.monotonic() > end:
                return status, headers, body
            time.sleep(0.2)


def read_input(name):
    """The bytes of the file name, or of standard input for "-"."""
    if name == "-":
        return sys.stdin.buffer.read()
    with open(name, "rb") as f:
        return f.read()


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "verify":
        if len(argv) != 6 or "TS_WEBHOOK_SECRET" not in os.environ:
            sys.stderr.write(__doc__)
            return 2
        ok, why = verify_webhook(os.environ["TS_WEBHOOK_SECRET"], argv[2],
                                 argv[3], argv[4], read_input(argv[5]))
        sys.stdout.write(why + "\n")
        return 0 if ok else 1
    unset = [v for v in ("TS_URL", "TS_APP_ID", "TS_SECRET")
             if not os.environ.get(v)]
    if unset:
        sys.stderr.write(__doc__)
        sys.stderr.write("tsapi.py: %s not set\n" % ", ".join(unset))
        return 2
    c = Client(os.environ["TS_URL"], os.environ["TS_APP_ID"],
               os.environ["TS_SECRET"])
    cmd, args = argv[1], argv[2:]
    if cmd == "submit" and len(args) == 1:
        status, _, body = c.submit(read_input(args[0]))
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
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError, taskspool.TaskspoolError) as e:
        # A file that does not open, a bad URL, no connection: a line,
        # never a traceback.
        sys.stderr.write("tsapi.py: %s\n" % e)
        sys.exit(1)
