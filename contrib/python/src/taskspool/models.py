"""The shapes of the API's answers (contrib/openapi/openapi.yaml,
components.schemas), as typing.TypedDict for type checkers; at run time
they are plain dicts from json.loads.  Submission is what
Client.submit() returns.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, TypedDict

TERMINAL = frozenset(["SUCCESS", "FAILED", "CANCELLED"])
"""The task states after which nothing changes."""


class CallbackState(TypedDict):
    """A task's callback delivery (schema CallbackState)."""
    status: str
    attempts: int
    lastAttemptAt: Optional[str]
    lastHttpStatus: Optional[int]
    lastError: Optional[str]


class FailureReason(TypedDict):
    """Why a task FAILED (schema FailureReason)."""
    code: str
    message: str


class _TaskBase(TypedDict):
    requestId: str
    taskCode: str
    taskName: Optional[str]
    status: str
    createdAt: Optional[str]
    startedAt: Optional[str]
    finishedAt: Optional[str]
    durationMs: Optional[int]
    attempt: Optional[int]
    maxRetries: Optional[int]
    node: Optional[str]
    triggerTime: Optional[str]
    failureReason: Optional[FailureReason]
    callback: CallbackState


class Task(_TaskBase, total=False):
    """A task (schemas Task and TaskSummary): result only in GET and
    DELETE answers, estimatedDelay only while PENDING."""
    result: Any
    estimatedDelay: int


class TaskList(TypedDict):
    """One page of GET /api/tasks (schema TaskList)."""
    items: List[Task]
    nextCursor: Optional[str]


class Links(TypedDict):
    """The links member of an accepted submission."""
    self: str


class SubmitAccepted(TypedDict):
    """The 202 body of POST /api/tasks (schema SubmitAccepted)."""
    requestId: str
    taskCode: str
    status: str
    estimatedDelay: int
    createdAt: str
    links: Links


class Health(TypedDict):
    """GET /api/health (schema Health)."""
    status: str
    nodes: int
    leader: Optional[str]
    version: str


class LogPage(TypedDict):
    """GET /api/tasks/{requestId}/logs (schema LogPage): data is text
    when encoding is "utf-8", base64 when "base64"."""
    requestId: str
    attempt: int
    stream: str
    offset: int
    length: int
    nextOffset: int
    size: int
    complete: bool
    encoding: str
    data: str


class OffsetChange(TypedDict):
    """The zone's next offset change and its effect (schema
    OffsetChange)."""
    at: str
    offsetBefore: str
    offsetAfter: str
    wallTimes: str
    wallTimesAre: str
    affected: bool
    effect: str


class CronNext(TypedDict):
    """GET /api/cron/next (schema CronNext)."""
    expr: str
    dialect: str
    schedule: str
    timezone: str
    means: str
    next: List[str]
    nextUtc: List[str]
    offsetChange: Optional[OffsetChange]


class JobFire(TypedDict):
    """One fire instant of a job: in its zone and in UTC."""
    local: str
    utc: str


class Job(TypedDict, total=False):
    """A recurring job (schema Job): valid is False only for a definition
    that does not decode (then only jobCode and error), seen by an AppId
    granted "*"."""
    jobCode: str
    valid: bool
    error: str
    definition: Dict[str, Any]
    timezone: Optional[str]
    hostZone: bool
    enabled: bool
    nextFires: List[JobFire]
    lastTaskId: Optional[str]
    currentRun: Optional[str]


class JobList(TypedDict):
    """GET /api/jobs (schema JobList)."""
    jobs: List[Job]
    nextAfter: Optional[str]


class JobRun(TypedDict, total=False):
    """POST /api/jobs/{jobCode}/run (schema JobRun)."""
    requestId: str
    jobCode: str
    status: str
    traceparent: str


class CallbackRegistration(TypedDict, total=False):
    """POST /api/callbacks/register (schema CallbackRegistration): secret
    only when one was made, previousSecretExpiresAt after a rotation."""
    appId: str
    url: str
    status: str
    secret: str
    secretHint: str
    previousSecretExpiresAt: str
    createdAt: str
    updatedAt: str


@dataclass(frozen=True)
class Submission:
    """The answer to a submission: request_id (the idempotency key the
    task has), status (its state now), replayed (True when the server
    answered an earlier submission with the same key and body: no new
    task), location (the task's path) and body (the whole 202 body)."""
    request_id: str
    status: str
    replayed: bool
    location: str
    body: SubmitAccepted
