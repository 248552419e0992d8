"""The trust source jobs on the queue: refresh one source, and find those due every minute."""

from __future__ import annotations

import logging
import uuid

from app import clock, jobs
from app.trust_sources import operations

log = logging.getLogger(__name__)

SWEEP_JOB = "trust_sources.sweep"


@jobs.job(name=operations.REFRESH_JOB)
def refresh(source_id: str) -> None:
    operations.refresh(uuid.UUID(source_id))


@jobs.periodic(jobs.crontab(minute="*"), name=SWEEP_JOB)
def sweep() -> None:
    """Queue a refresh of every list that is due (``TRUST_LIST_REFRESH_MINUTES``)."""
    for source_id in operations.due_sources(clock.now()):
        operations.refresh_after_commit(source_id)
