"""Background jobs on a Huey queue: the registration API every domain uses.

A domain module declares its jobs with ``@job`` (run when enqueued) or ``@periodic`` (run by
the queue's scheduler), and asks for one to run with ``enqueue``. None of it needs Flask: the
application factory builds the queue (``app.jobs.queue``) from the registered jobs and says
where the running application keeps it (``provide``), as the issuing settings do. A job runs
inside an application context and commits once when it returns (rolls back if it raises),
like a request.

Modules holding jobs are listed in ``JOB_MODULES`` so the web process and the worker both
import them before the queue is built (the worker must know every job it may be handed).

    from app import jobs

    @jobs.periodic(jobs.crontab(minute="*/10"), name="retention.sweep")
    def sweep() -> None: ...

    @jobs.job(name="webhooks.deliver")
    def deliver(delivery_id: str) -> None: ...

    jobs.enqueue("webhooks.deliver", str(delivery.id), delay=30)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from huey import crontab

__all__ = [
    "JOB_MODULES",
    "Job",
    "crontab",
    "enqueue",
    "job",
    "periodic",
    "provide",
    "registered",
]

log = logging.getLogger(__name__)

# Modules whose import registers jobs (imported by the factory, in this order).
JOB_MODULES: tuple[str, ...] = (
    "app.webhooks.jobs",
    "app.policies.jobs",
    "app.retention.jobs",
    "app.trust_sources.jobs",
)


@dataclass(frozen=True)
class Job:
    name: str
    func: Callable[..., Any]
    # A huey ``crontab(...)`` (or any callable taking a datetime) for periodic jobs.
    schedule: Callable[[Any], bool] | None = None


_registry: dict[str, Job] = {}


def job(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func`` as a job run when enqueued under ``name`` (arguments must be JSON-
    like: strings, numbers; pass ids, never records)."""

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        _add(Job(name, func))
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
    def enqueue(self, name: str, *args: Any, delay: float | None = None) -> None: ...


_provider: Callable[[], Queue] | None = None


def provide(provider: Callable[[], Queue]) -> None:
    """Called by the application factory: where the running application keeps its queue."""
    global _provider
    _provider = provider


def enqueue(name: str, *args: Any, delay: float | None = None) -> None:
    """Hand job ``name`` to the queue, to run now or after ``delay`` seconds.

    Raises when the queue's storage cannot be reached; callers that have a periodic sweep to
    fall back on (the webhook relay) catch and log that.
    """
    if _provider is None:
        raise RuntimeError("the job queue is wired by the application factory")
    _provider().enqueue(name, *args, delay=delay)
