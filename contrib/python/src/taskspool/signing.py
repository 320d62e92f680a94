"""TS1-HMAC-SHA256 request signatures and Standard Webhooks v1 callback
verification, as the server computes them (daemon/core/sign.c,
daemon/core/whsign.c; README.md "Signing a request" and "Callbacks a
client receives"; contrib/openapi/openapi.yaml, securitySchemes).

Pure functions, no I/O.
"""

import base64
import binascii
import hashlib
import hmac
import secrets
import time
import urllib.parse
from typing import Dict, Optional, Tuple, Union

ALGORITHM = "TS1-HMAC-SHA256"

#: lowercase hex SHA-256 of no bytes, the body hash of a request without body
EMPTY_BODY_HASH = hashlib.sha256(b"").hexdigest()

#: seconds a callback's webhook-timestamp may be away from the clock
WEBHOOK_TOLERANCE = 300

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        b"0123456789-._~")
# The bytes a raw query may hold besides '%XX' (sign.c, sign_query_ok).
_QUERY_OK = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      b"0123456789-._~!$'()*,;:@/?=&")
_HEX = frozenset(b"0123456789abcdefABCDEF")


def query_ok(raw: str) -> bool:
    """Whether the raw query string raw passes the server's syntax check
    (rule 2 of the canonical query; the server answers 400 INVALID_QUERY
    otherwise): only letters, digits, -._~ !$'()*,;:@/?=& and '%' with
    two hex digits."""
    b = raw.encode("utf-8", "surrogateescape")
    i = 0
    while i < len(b):
        if b[i] == 0x25:  # '%'
            if i + 2 >= len(b) or b[i + 1] not in _HEX or \
                    b[i + 2] not in _HEX:
                return False
            i += 3
            continue
        if b[i] not in _QUERY_OK:
            return False
        i += 1
    return True


def _recode(part: str) -> str:
    return "".join(chr(c) if c in _UNRESERVED else "%%%02X" % c
                   for c in urllib.parse.unquote_to_bytes(part))


def canonical_query(raw: str) -> str:
    """The canonical query of the raw query string raw (without '?'):
    pieces cut at '&' (empty ones dropped), each at its first '=';
    name and value percent-decoded and encoded again (every byte but
    letters, digits and -._~ as %XX, uppercase); sorted by name, then
    value, byte by byte; joined as name=value with '&'.  Raises
    ValueError when raw breaks query_ok (the server would refuse it)."""
    if not query_ok(raw):
        raise ValueError("query string holds a byte the server refuses: %r"
                         % raw)
    pairs = []
    for piece in raw.split("&"):
        if not piece:
            continue
        name, _, value = piece.partition("=")
        pairs.append((_recode(name), _recode(value)))
    pairs.sort(key=lambda p: (p[0].encode("ascii"), p[1].encode("ascii")))
    return "&".join("%s=%s" % p for p in pairs)


def canonical_string(method: str, path: str, query: str, app_id: str,
                     timestamp: Union[int, str], nonce: str,
                     body: bytes) -> str:
    """The eight lines the signature covers, joined by LF, no LF after the
    last: the algorithm, method, path (the API's own /api/... path),
    canonical query of the raw query, X-App-Id, X-Timestamp, X-Nonce and
    the lowercase hex SHA-256 of the body bytes."""
    return "\n".join([ALGORITHM, method, path, canonical_query(query),
                      app_id, str(timestamp), nonce,
                      hashlib.sha256(body).hexdigest()])


def sign(secret: str, text: str) -> str:
    """Lowercase hex HMAC-SHA256 of text (UTF-8), keyed with the AppSecret's
    text as issued (its bytes, not decoded)."""
    return hmac.new(secret.encode("utf-8"), text.encode("utf-8"),
                    hashlib.sha256).hexdigest()


def ts1_headers(app_id: str, secret: str, method: str, path: str,
                query: str = "", body: bytes = b"",
                timestamp: Optional[int] = None,
                nonce: Optional[str] = None) -> Dict[str, str]:
    """The four signing headers of one request.  timestamp: Unix seconds
    (default: the clock); nonce: 16-64 of [A-Za-z0-9_-] (default: 32 fresh
    random hex digits).  Every request, a retry included, needs its own
    timestamp and nonce."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    n = secrets.token_hex(16) if nonce is None else nonce
    text = canonical_string(method, path, query, app_id, ts, n, body)
    return {"X-App-Id": app_id, "X-Timestamp": ts, "X-Nonce": n,
            "X-Signature": sign(secret, text)}


def verify_webhook(secret: str, msg_id: str, timestamp: str, signature: str,
                   body: bytes, now: Optional[float] = None,
                   tolerance: int = WEBHOOK_TOLERANCE) -> Tuple[bool, str]:
    """Check a received callback as a Standard Webhooks v1 receiver must.

    secret: "whsec_" + base64 of the key; msg_id, timestamp, signature:
    the webhook-id, webhook-timestamp and webhook-signature header values;
    body: the raw request body, exactly as received; now: Unix seconds
    (default: the clock).  The timestamp must be within tolerance seconds
    of now; the signed content is id "." timestamp "." body; each
    space-separated "v1,<base64>" entry is compared in constant time and
    one match is enough (two entries while a secret is rotated).
    Returns (True, "ok") or (False, the reason)."""
    if not secret.startswith("whsec_"):
        return False, "the secret does not start with whsec_"
    try:
        key = base64.b64decode(secret[len("whsec_"):], validate=True)
    except (binascii.Error, ValueError):
        return False, "the secret is not base64 after whsec_"
    if not msg_id:
        return False, "webhook-id is missing"
    if not timestamp.isdigit():
        return False, "webhook-timestamp is not Unix seconds"
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        return False, "webhook-timestamp is more than %d s away" % tolerance
    want = hmac.new(key, msg_id.encode() + b"." + timestamp.encode() + b"."
                    + body, hashlib.sha256).digest()
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
