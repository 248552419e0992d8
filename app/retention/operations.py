"""Claims that expire and credentials checked again after the decision.

Both work per verification setting (``retention_days``, ``status_check_hours``), so each
statement handles every verification sharing one value: a few distinct values, a few
statements, whatever the number of verifications. Nothing here commits; the job that calls it
does, so a run's writes and the events they cause land together.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import null, or_, select, update

from app.extensions import db
from app.policies.models import PolicyRequest
from app.statuslist import StatusResult
from app.verifications.models import Individual, Status, Verification
from app.webhooks import outbox
from app.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEvent

# -- retention -------------------------------------------------------------------------------


def expire_claims(now: datetime) -> int:
    """Delete the claims kept past their verification's ``retention_days``; returns how many
    records lost them. The outcome, its reason, the issuer and every attempt stay."""
    erased = 0
    for days in db.session.scalars(select(Verification.retention_days).distinct()).all():
        cutoff = now - timedelta(days=max(days, 0))
        of_verifications = select(Verification.id).where(Verification.retention_days == days)
        for model in (Individual, PolicyRequest):
            expired = select(model.id).where(
                model.verification_id.in_(of_verifications),
                model.claims.is_not(None),
                model.verified_at < cutoff,
            )
            # Claims waiting in the outbox for endpoints that opted in go with the record's,
            # and so do the logged request bodies that carried them.
            _erase_attempt_bodies(expired)
            db.session.execute(
                update(WebhookEvent)
                .where(WebhookEvent.subject_id.in_(expired), WebhookEvent.claims.is_not(None))
                .values(claims=null())
                .execution_options(synchronize_session=False)
            )
            values: dict[str, Any] = {"claims": null()}
            if model is Individual:  # re-checking stops with the claims (it is "while kept")
                values["status_reference"] = null()
            result = db.session.execute(
                update(model)
                .where(model.id.in_(expired))
                .values(**values)
                .execution_options(synchronize_session=False)
            )
            erased += result.rowcount
    return erased


def _erase_attempt_bodies(subjects: Any) -> None:
    """Delivery attempts keep their request body (``app.webhooks.exchange``); one that held
    the subjects' claims loses it. Its headers and the answer stay. So does a body that an
    attempt in flight during an earlier run logged after its event's claims were gone: the
    next run finds it by the event."""
    deliveries = (
        select(WebhookDelivery.id)
        .join(WebhookEvent, WebhookEvent.sequence == WebhookDelivery.event_sequence)
        .where(or_(WebhookEvent.subject_id.in_(subjects), WebhookEvent.claims.is_(None)))
    )
    db.session.execute(
        update(WebhookAttempt)
        .where(
            WebhookAttempt.request_carries_claims.is_(True),
            WebhookAttempt.delivery_id.in_(deliveries),
        )
        .values(request_body=null(), request_body_cut=False, request_carries_claims=False)
        .execution_options(synchronize_session=False)
    )


# -- revocation checked again ----------------------------------------------------------------


@dataclass(frozen=True)
class Due:
    """A VERIFIED individual whose credential status is due for another look."""

    individual_id: uuid.UUID
    reference: dict[str, Any]


def due_for_status_check(now: datetime, limit: int) -> list[Due]:
    """Individuals last checked longer ago than their verification's ``status_check_hours``,
    the longest-waiting first; only those whose claims are still kept and not yet revoked."""
    due: list[Due] = []
    hours_in_use = db.session.scalars(
        select(Verification.status_check_hours)
        .where(Verification.status_check_hours > 0)
        .distinct()
    ).all()
    for hours in hours_in_use:
        of_verifications = select(Verification.id).where(
            Verification.status_check_hours == hours,
            Verification.retention_days > 0,
            Verification.deleted_at.is_(None),
        )
        rows = db.session.execute(
            select(Individual.id, Individual.status_reference)
            .where(
                Individual.verification_id.in_(of_verifications),
                Individual.status == Status.VERIFIED,
                Individual.revoked_at.is_(None),
                Individual.status_reference.is_not(None),
                Individual.status_checked_at <= now - timedelta(hours=hours),
            )
            .order_by(Individual.status_checked_at, Individual.id)
            .limit(limit - len(due))
        )
        due.extend(Due(row.id, row.status_reference) for row in rows)
        if len(due) >= limit:
            break
    return due


def record_status_check(
    individual_id: uuid.UUID, result: StatusResult | None, now: datetime
) -> Individual | None:
    """Note a check of the individual's credential status; ``result`` None means no statement
    could be made (the list was unreachable or did not verify): checked again next time.

    Returns the individual when this check found the credential withdrawn, so the caller can
    tell the organization. The row is locked and read again first: its claims may have expired
    or the person been erased while the list was fetched, and then nothing is recorded.
    """
    individual = db.session.scalar(
        select(Individual).where(Individual.id == individual_id).with_for_update(of=Individual)
    )
    if individual is None or individual.status_reference is None or individual.revoked_at:
        return None
    individual.status_checked_at = now
    # Any status other than VALID, as at the decision: a suspended credential is not one its
    # issuer vouches for now. The status stays VERIFIED (it is final); revoked_at says why not.
    if result is not None and result.revoked:
        individual.revoked_at = now
        # In this transaction (the outbox): the event exists exactly when revoked_at does.
        outbox.emit(
            "individual.revoked",
            individual,
            individual.verification.organization_id,
            individual.id,
        )
        db.session.flush()
        return individual
    db.session.flush()
    return None
