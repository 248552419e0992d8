"""The housekeeping job that keeps the idempotency table to a day of keys."""

from __future__ import annotations

import logging

from app import clock, jobs
from app.idempotency import operations

log = logging.getLogger(__name__)


@jobs.periodic(jobs.crontab(minute="23"), name="idempotency.sweep")
def sweep() -> int:
    """Delete the keys past their 24-hour window."""
    swept = operations.sweep(clock.now())
    if swept:
        log.info("deleted %d expired idempotency keys", swept)
    return swept
