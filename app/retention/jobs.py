"""The scheduled jobs: claims past their retention deleted, kept credentials' status read again.

A job commits like a request does at its end; the status check also commits after each
individual, so no transaction (and on SQLite no write lock) is held while a status list is
fetched, and a run cut short keeps what it recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from app import clock, jobs
from app.audit import operations as audit
from app.extensions import db
from app.retention import operations
from app.statuslist import StatusError, StatusResult

log = logging.getLogger(__name__)

# When the queue's scheduler runs them (UTC). Re-check intervals are whole hours, so a run
# every quarter hour checks each individual at most 15 minutes after it falls due.
SWEEP_SCHEDULE = jobs.crontab(minute="7")
CHECK_SCHEDULE = jobs.crontab(minute="*/15")
# Individuals checked per run; the rest wait for the next run, longest-waiting first.
CHECK_BATCH = 500

StatusCheck = Callable[[dict[str, Any], datetime], StatusResult]
_status_check: Callable[[], StatusCheck] | None = None


def provide(status_check: Callable[[], StatusCheck]) -> None:
    """Called by the application factory: how the running deployment reads a kept status
    reference (its outbound fetcher and trust anchors)."""
    global _status_check
    _status_check = status_check


@jobs.periodic(SWEEP_SCHEDULE, name="retention.delete_expired_claims")
def delete_expired_claims() -> int:
    """Delete claims kept past their verification's ``retention_days``, and audit events
    older than ``AUDIT_RETENTION_DAYS``."""
    now = clock.now()
    erased = operations.expire_claims(now)
    if erased:
        log.info("deleted the claims of %d records past their retention", erased)
    # The audit trail's own retention (AUDIT_RETENTION_DAYS) runs with the same sweep.
    removed = audit.expire_events(now, audit.retention_days())
    if removed:
        log.info("deleted %d audit events past their retention", removed)
    return erased


@jobs.periodic(CHECK_SCHEDULE, name="retention.check_revocations")
def check_revocations(limit: int = CHECK_BATCH) -> int:
    """Check again the credential status of VERIFIED individuals that are due; returns how
    many were found revoked (each gets ``revoked_at`` and an ``individual.revoked`` event)."""
    if _status_check is None:
        raise RuntimeError("the status check is wired by the application factory")
    check = _status_check()
    now = clock.now()
    due = operations.due_for_status_check(now, limit)
    db.session.commit()  # end the read before any list is fetched
    revoked = 0
    for item in due:
        try:
            result: StatusResult | None = check(item.reference, now)
        except StatusError as exc:
            log.warning("status of individual %s not checked: %s", item.individual_id, exc)
            result = None
        if operations.record_status_check(item.individual_id, result, now) is not None:
            revoked += 1
        db.session.commit()
    return revoked
