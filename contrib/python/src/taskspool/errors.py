"""The exceptions of the client: every problem+json answer of the server
(RFC 9457; README.md "Errors"; contrib/openapi/openapi.yaml, the Problem
schema) becomes a ProblemError, of the subclass for its code or status;
anything else that goes wrong on the wire is a TransportError.
"""

from typing import Any, Dict, List, Mapping, Optional, Type


class TaskspoolError(Exception):
    """Base of every exception this package raises."""


class TransportError(TaskspoolError):
    """No usable answer: the connection failed or dropped (after the one
    reconnect), or the answer is not the API's (e.g. a web server's own
    HTML error page).  status and body are those of the answer when one
    arrived, else 0 and b""."""

    def __init__(self, message: str, status: int = 0, body: bytes = b""):
        super().__init__(message)
        self.status = status
        self.body = body


class ProblemError(TaskspoolError):
    """An error answer of the API (application/problem+json).

    status: the HTTP status; type, title, detail, instance, code, trace_id:
    the problem's members (switch on code, never on title or detail);
    fields: the VALIDATION_FAILED members and their reasons ({field:
    reason}, from "errors"; empty for other codes); extras: the other
    members the code carries (offset, header, serverTime, canonicalString,
    requestId, taskCode, taskStatus, limit, windowSec, ...); problem: the
    whole document; retry_after: the Retry-After header in seconds, or
    None."""

    def __init__(self, status: int, problem: Mapping[str, Any],
                 retry_after: Optional[int] = None):
        self.status = status
        self.problem: Dict[str, Any] = dict(problem)
        self.type: str = str(problem.get("type", "about:blank"))
        self.title: str = str(problem.get("title", ""))
        self.detail: str = str(problem.get("detail", ""))
        self.instance: str = str(problem.get("instance", ""))
        self.code: str = str(problem.get("code", ""))
        self.trace_id: str = str(problem.get("traceId", ""))
        self.retry_after = retry_after
        errs = problem.get("errors")
        self.errors: List[Dict[str, str]] = (
            [e for e in errs if isinstance(e, dict)]
            if isinstance(errs, list) else [])
        self.fields: Dict[str, str] = {
            str(e.get("field")): str(e.get("reason")) for e in self.errors}
        self.extras: Dict[str, Any] = {
            k: v for k, v in problem.items() if k not in _CORE}
        super().__init__("%d %s: %s (trace %s)" % (
            status, self.code or "?", self.detail or self.title,
            self.trace_id or "-"))


_CORE = frozenset(["type", "title", "status", "detail", "instance", "code",
                   "traceId", "errors"])


class BadRequestError(ProblemError):
    """400: INVALID_QUERY, INVALID_CONTENT_LENGTH, INCOMPLETE_BODY,
    INVALID_JSON."""


class AuthenticationError(ProblemError):
    """401: the request is not authenticated (AUTH_HEADER_MISSING,
    AUTH_HEADER_MALFORMED, APP_NOT_FOUND, TIMESTAMP_EXPIRED,
    SIGNATURE_MISMATCH, NONCE_REPLAYED)."""


class SignatureMismatchError(AuthenticationError):
    """401 SIGNATURE_MISMATCH; extras["canonicalString"] is the server's."""


class TimestampExpiredError(AuthenticationError):
    """401 TIMESTAMP_EXPIRED; extras["serverTime"] is the server's clock."""


class ForbiddenError(ProblemError):
    """403: APP_DISABLED, TASK_CODE_FORBIDDEN."""


class NotFoundError(ProblemError):
    """404: NOT_FOUND (no such resource)."""


class TaskNotFoundError(NotFoundError):
    """404 TASK_NOT_FOUND: no task of this AppId has that requestId."""


class ConflictError(ProblemError):
    """409."""


class RequestIdConflictError(ConflictError):
    """409 REQUEST_ID_CONFLICT: the requestId belongs to another AppId or
    to a task not submitted through the API."""


class TaskFinishedError(ConflictError):
    """409 TASK_FINISHED: cancel of a finished task (extras["taskStatus"])."""


class PayloadTooLargeError(ProblemError):
    """413 PAYLOAD_TOO_LARGE (extras["limit"] in bytes)."""


class UnprocessableError(ProblemError):
    """422."""


class ValidationError(UnprocessableError):
    """422 VALIDATION_FAILED: fields names each member and why."""


class UnknownTaskCodeError(UnprocessableError):
    """422 UNKNOWN_TASK_CODE: no hook for the task code."""


class IdempotencyKeyReusedError(UnprocessableError):
    """422 IDEMPOTENCY_KEY_REUSED: the key was first used with another
    body."""


class CallbackUrlError(UnprocessableError):
    """422 INVALID_CALLBACK_URL, CALLBACK_URL_FORBIDDEN,
    CALLBACK_URL_UNRESOLVABLE."""


class RateLimitedError(ProblemError):
    """429 RATE_LIMITED; retry_after seconds until the window ends."""


class ServerError(ProblemError):
    """5xx."""


class InternalServerError(ServerError):
    """500 INTERNAL_ERROR: the server cannot serve until an operator acts."""


class ServiceUnavailableError(ServerError):
    """503 SERVICE_UNAVAILABLE: retry after retry_after seconds."""


_BY_CODE: Dict[str, Type[ProblemError]] = {
    "SIGNATURE_MISMATCH": SignatureMismatchError,
    "TIMESTAMP_EXPIRED": TimestampExpiredError,
    "TASK_NOT_FOUND": TaskNotFoundError,
    "REQUEST_ID_CONFLICT": RequestIdConflictError,
    "TASK_FINISHED": TaskFinishedError,
    "VALIDATION_FAILED": ValidationError,
    "UNKNOWN_TASK_CODE": UnknownTaskCodeError,
    "IDEMPOTENCY_KEY_REUSED": IdempotencyKeyReusedError,
    "INVALID_CALLBACK_URL": CallbackUrlError,
    "CALLBACK_URL_FORBIDDEN": CallbackUrlError,
    "CALLBACK_URL_UNRESOLVABLE": CallbackUrlError,
    "RATE_LIMITED": RateLimitedError,
    "INTERNAL_ERROR": InternalServerError,
    "SERVICE_UNAVAILABLE": ServiceUnavailableError,
}

_BY_STATUS: Dict[int, Type[ProblemError]] = {
    400: BadRequestError, 401: AuthenticationError, 403: ForbiddenError,
    404: NotFoundError, 409: ConflictError, 413: PayloadTooLargeError,
    422: UnprocessableError, 429: RateLimitedError,
    500: InternalServerError, 503: ServiceUnavailableError,
}


def problem_error(status: int, problem: Mapping[str, Any],
                  retry_after: Optional[int] = None) -> ProblemError:
    """The exception for a problem document problem answered with status:
    the class of its code, else of its status, else ServerError (5xx) or
    ProblemError."""
    cls = _BY_CODE.get(str(problem.get("code", "")))
    if cls is None:
        cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else ProblemError
    return cls(status, problem, retry_after)
