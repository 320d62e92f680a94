"""Client for the taskspool HTTP API.

The wire format is contrib/openapi/openapi.yaml (and the README's "The
HTTP API" section): requests are signed with TS1-HMAC-SHA256, errors are
RFC 9457 problem+json documents, raised here as ProblemError subclasses.
Standard library only.

    from taskspool import Client, TaskNotFoundError
    with Client("https://ts.example.org", "shop-prod", secret) as c:
        sub = c.submit({"taskCode": "report.generate",
                        "executeParams": {"orderId": 42}})
        task = c.wait(sub.request_id, timeout=60)
        for t in c.iter_tasks(status="FAILED"):
            print(t["requestId"], t["failureReason"])
"""

__version__ = "0.13.0"

from .client import Client, Response, retry_after_seconds  # noqa: E402
from .errors import (AuthenticationError, BadRequestError,  # noqa: E402
                     CallbackUrlError, ConflictError, ForbiddenError,
                     IdempotencyKeyReusedError, InternalServerError,
                     NotFoundError, PayloadTooLargeError, ProblemError,
                     RateLimitedError, RequestIdConflictError, ServerError,
                     ServiceUnavailableError, SignatureMismatchError,
                     TaskFinishedError, TaskNotFoundError, TaskspoolError,
                     TimestampExpiredError, TransportError,
                     UnknownTaskCodeError, UnprocessableError,
                     ValidationError, problem_error)
from .models import (TERMINAL, CallbackRegistration, CronNext,  # noqa: E402
                     Health, Job, JobFire, JobList, JobRun, LogPage,
                     OffsetChange, Submission, SubmitAccepted, Task,
                     TaskList)
from .signing import (canonical_query, canonical_string,  # noqa: E402
                      query_ok, sign, ts1_headers, verify_webhook)

__all__ = [
    "__version__", "Client", "Response", "retry_after_seconds",
    "TaskspoolError", "TransportError", "ProblemError", "problem_error",
    "BadRequestError", "AuthenticationError", "SignatureMismatchError",
    "TimestampExpiredError", "ForbiddenError", "NotFoundError",
    "TaskNotFoundError", "ConflictError", "RequestIdConflictError",
    "TaskFinishedError", "PayloadTooLargeError", "UnprocessableError",
    "ValidationError", "UnknownTaskCodeError", "IdempotencyKeyReusedError",
    "CallbackUrlError", "RateLimitedError", "ServerError",
    "InternalServerError", "ServiceUnavailableError",
    "TERMINAL", "Task", "TaskList", "SubmitAccepted", "Health", "CronNext",
    "OffsetChange", "LogPage", "Job", "JobFire", "JobList", "JobRun",
    "CallbackRegistration", "Submission",
    "canonical_query", "canonical_string", "query_ok", "sign",
    "ts1_headers", "verify_webhook",
]
