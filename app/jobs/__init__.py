"""Background jobs on a Huey queue: the registration API every domain uses.

A domain module declares its jobs with ``@job`` (run when enqueued) or ``@periodic`` (run by
the queue's scheduler), and asks for one to run with ``enqueue``. None of it needs Flask: the
application factory builds the queue (``app.jobs.queue``) from the registered jobs and says
where the running application keeps it (``provide``), as the issuing settings do. A job runs
inside an application context and commits once when it returns (rolls back if it raises),
like a request.

Modules holding jobs are listed in ``JOB_MODULES`` so the web process and the worker both
import them before the queue is built (the worker must know every job it may be handed).

Jobs go to one of five queues, each worked by threads of its own: ``DELIVERIES`` for work that
waits on organizations' servers (webhook deliveries), ``DIDCOMM`` for the DIDComm agent's
work, which waits on servers anyone may name (a holder's mediator, a presentation's issuer),
``HOUSEKEEPING`` for the service's own scheduled work (retention, revocation re-checks, policy
expiry, the webhook sweep), ``UPLOADS`` for the dashboard's CSV uploads (a thousand rows take a
while), ``ZK`` for the zero-knowledge answers whose proofs are checked (each takes a second of
CPU). A slow receiver, a mediator that never answers or a big file can then hold the threads
of its own queue only: a flood of DIDComm messages naming a tarpit never delays a webhook.

    from app import jobs

    @jobs.periodic(jobs.crontab(minute="*/10"), name="retention.sweep")
    def sweep() -> None: ...

    @jobs.job(name="webhooks.deliver")
    def deliver(delivery_id: str) -> None: ...

    jobs.enqueue("webhooks.deliver", str(delivery.id), delay=30)

A caller with a periodic sweep to fall back on hands a job over with ``try_enqueue``: while the
queue's storage is unreachable it logs one line when the outage starts and one when it ends,
not a traceback per request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from huey import crontab

__all__ = [
    "DELIVERIES",
    "DIDCOMM",
    "HOUSEKEEPING",
    "JOB_MODULES",
    "QUEUES",
    "UPLOADS",
    "ZK",
    "Job",
    "QueueOutage",
    "crontab",
    "enqueue",
    "job",
    "periodic",
    "provide",
    "registered",
    "try_enqueue",
    "waiting",
]

log = logging.getLogger(__name__)

# Modules whose import registers jobs (imported by the factory, in this order).
JOB_MODULES: tuple[str, ...] = (
    "app.webhooks.jobs",
    "app.policies.jobs",
    "app.retention.jobs",
    "app.trust_sources.jobs",
    "app.idempotency.jobs",
    "app.staff.upload_jobs",
    "app.didcomm_agent.jobs",
    "app.presentations.zk_checks",
)

# The queues, each worked by its own threads (``flask jobs worker``).
HOUSEKEEPING = "housekeeping"
DELIVERIES = "deliveries"
UPLOADS = "uploads"
DIDCOMM = "didcomm"
ZK = "zk"
QUEUES: tuple[str, ...] = (HOUSEKEEPING, DELIVERIES, UPLOADS, DIDCOMM, ZK)


@dataclass(frozen=True)
class Job:
    name: str
    func: Callable[..., Any]
    # A huey ``crontab(...)`` (or any callable taking a datetime) for periodic jobs.
    schedule: Callable[[Any], bool] | None = None
    queue: str = HOUSEKEEPING


_registry: dict[str, Job] = {}


def job(name: str, queue: str = HOUSEKEEPING) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func`` as a job run when enqueued under ``name`` (arguments must be JSON-
    like: strings, numbers; pass ids, never records), on ``queue``."""
    if queue not in QUEUES:
        raise ValueError(f"no job queue is named {queue!r}")

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        _add(Job(name, func, queue=queue))
        return func

    return register


def periodic(
    schedule: Callable[[Any], bool], name: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func`` (no arguments) to run whenever ``schedule`` (a ``crontab``) matches,
    on the worker's scheduler; it can also be enqueued by name like any job."""

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        _add(Job(name, func, schedule))
        return func

    return register


def _add(new: Job) -> None:
    existing = _registry.get(new.name)
    if existing is not None and existing.func is not new.func:
        raise ValueError(f"two jobs are named {new.name!r}")
    _registry[new.name] = new


def registered() -> dict[str, Job]:
    return dict(_registry)


class Queue(Protocol):
    outage: QueueOutage

    def enqueue(self, name: str, *args: Any, delay: float | None = None) -> None: ...

    def waiting(self, queue: str) -> int: ...


_provider: Callable[[], Queue] | None = None


def provide(provider: Callable[[], Queue]) -> None:
    """Called by the application factory: where the running application keeps its queue."""
    global _provider
    _provider = provider


def enqueue(name: str, *args: Any, delay: float | None = None) -> None:
    """Hand job ``name`` to the queue, to run now or after ``delay`` seconds.

    Raises when the queue's storage cannot be reached; callers that have a periodic sweep to
    fall back on (the webhook relay) use ``try_enqueue``.
    """
    _queue().enqueue(name, *args, delay=delay)


def waiting(queue: str) -> int:
    """How many jobs ``queue`` holds, due now or scheduled for later (a retry's delay), not
    counting those running: what a door that must not outgrow its queue compares with its
    bound."""
    return _queue().waiting(queue)


def _queue() -> Queue:
    if _provider is None:
        raise RuntimeError("the job queue is wired by the application factory")
    return _provider()


class QueueOutage:
    """One log line when the queue's storage becomes unreachable and one when it is back, per
    application (so per process), as for the database (``app.database.OutageLog``): during an outage every request
    that changes something would otherwise log a traceback."""

    def __init__(self) -> None:
        self.since: float | None = None
        self.missed = 0
        self.lock = threading.Lock()

    def failed(self, error: BaseException) -> None:
        with self.lock:
            self.missed += 1
            if self.since is not None:
                return
            self.since = time.monotonic()
        first_line = (str(error).strip().splitlines() or [""])[0]
        log.error(
            "job queue unavailable: %s: %s (the sweep hands over what is missed)",
            type(error).__name__,
            first_line[:200],
        )

    def reached(self) -> None:
        if self.since is None:
            return
        with self.lock:
            if self.since is None:
                return
            seconds, missed = time.monotonic() - self.since, self.missed
            self.since, self.missed = None, 0
        log.warning(
            "job queue available again after %.1f s (%d jobs not enqueued meanwhile)",
            seconds,
            missed,
        )


def try_enqueue(name: str, *args: Any, delay: float | None = None) -> bool:
    """``enqueue``, for callers whose work a periodic sweep finds anyway: an unreachable queue
    is logged once per outage, and False returned instead of raising."""
    outage = _queue().outage
    try:
        enqueue(name, *args, delay=delay)
    except Exception as exc:
        outage.failed(exc)
        return False
    outage.reached()
    return True
