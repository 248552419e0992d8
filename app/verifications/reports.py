"""What the dashboard's overview shows an organization: counts and recent outcomes.

Read-only queries, kept beside the operations so the pages hold no query logic.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from app.extensions import db
from app.integrations.models import Integration
from app.organizations.models import Organization
from app.verifications.models import (
    Individual,
    PresentationAttempt,
    PresentationRequest,
    Status,
    Verification,
)


@dataclass(frozen=True)
class Overview:
    verifications: int
    integrations: int
    individuals: dict[str, int]


@dataclass(frozen=True)
class Outcome:
    """One presentation attempt, named the way staff know it."""

    at: datetime
    outcome: str
    reason: str | None
    issuer: str | None
    verification_id: str
    verification_name: str
    customer_id: str


def overview(organization: Organization) -> Overview:
    verifications = db.session.scalar(
        select(func.count())
        .select_from(Verification)
        .where(Verification.organization_id == organization.id, Verification.deleted_at.is_(None))
    )
    integrations = db.session.scalar(
        select(func.count())
        .select_from(Integration)
        .where(Integration.organization_id == organization.id)
    )
    by_status = dict.fromkeys((status.value for status in Status), 0)
    rows = db.session.execute(
        select(Individual.status, func.count())
        .join(Verification, Individual.verification_id == Verification.id)
        .where(Verification.organization_id == organization.id)
        .group_by(Individual.status)
    )
    for status, count in rows:
        by_status[Status(status).value] = count
    return Overview(verifications or 0, integrations or 0, by_status)


def recent_outcomes(organization: Organization, limit: int = 10) -> list[Outcome]:
    """The latest presentations to the organization's verifications, newest first."""
    rows = db.session.execute(
        select(PresentationAttempt, Individual.customer_id, Verification.id, Verification.name)
        .join(PresentationAttempt.request)
        .join(Individual, PresentationRequest.individual_id == Individual.id)
        .join(Verification, Individual.verification_id == Verification.id)
        .where(Verification.organization_id == organization.id)
        .order_by(PresentationAttempt.created_at.desc(), PresentationAttempt.id)
        .limit(limit)
    )
    return [
        Outcome(
            attempt.created_at,
            attempt.outcome.value,
            attempt.validation_error,
            attempt.issuer,
            str(verification_id),
            name,
            customer_id,
        )
        for attempt, customer_id, verification_id, name in rows
    ]


def attempts_by_individual(
    individual_ids: list[uuid.UUID],
) -> dict[uuid.UUID, list[PresentationAttempt]]:
    """Every presentation each individual of a page made (the audit trail), newest first, in
    one query.

    The dashboard's individuals page lists many at once; one query per row would not do.
    """
    found: dict[uuid.UUID, list[PresentationAttempt]] = {i: [] for i in individual_ids}
    if not individual_ids:
        return found
    rows = db.session.execute(
        select(PresentationAttempt, PresentationRequest.individual_id)
        .join(PresentationAttempt.request)
        .where(PresentationRequest.individual_id.in_(individual_ids))
        .order_by(PresentationAttempt.created_at.desc(), PresentationAttempt.id)
    )
    for attempt, individual_id in rows:
        found[individual_id].append(attempt)
    return found
