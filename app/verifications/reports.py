"""What the dashboard's overview shows an organization: counts, recent outcomes, outcomes per
day, failures by reason and each verification's funnel.

Read-only queries, kept beside the operations so the pages hold no query logic.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Select, case, func, select

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
    individual_id: str


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
        select(
            PresentationAttempt,
            Individual.customer_id,
            Individual.id,
            Verification.id,
            Verification.name,
        )
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
            str(individual_id),
        )
        for attempt, customer_id, individual_id, verification_id, name in rows
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


# -- what happened over time ---------------------------------------------------------------

CHART_DAYS = 30


@dataclass(frozen=True)
class Day:
    day: date
    verified: int
    failed: int

    @property
    def total(self) -> int:
        return self.verified + self.failed


@dataclass(frozen=True)
class Funnel:
    verification_id: str
    name: str
    opened: int
    link_taken: int
    presented: int
    verified: int


def _attempts_of(organization: Organization) -> Select[Any]:
    return (
        select(PresentationAttempt)
        .join(PresentationAttempt.request)
        .join(Individual, PresentationRequest.individual_id == Individual.id)
        .join(Verification, Individual.verification_id == Verification.id)
        .where(Verification.organization_id == organization.id)
    )


def _utc_day(column: Any) -> Any:
    """The UTC calendar day of a timestamp, in SQL (PostgreSQL would use the session's zone)."""
    if db.engine.dialect.name == "postgresql":
        return func.date(func.timezone("UTC", column))
    return func.date(column)


def outcomes_per_day(organization: Organization, today: date, days: int = CHART_DAYS) -> list[Day]:
    """Verified and failed presentations per UTC day, the last ``days`` days (today included),
    every day present even when nothing happened."""
    first = today - timedelta(days=days - 1)
    since = datetime(first.year, first.month, first.day, tzinfo=UTC)
    day = _utc_day(PresentationAttempt.created_at)
    attempts = (
        _attempts_of(organization)
        .where(PresentationAttempt.created_at >= since)
        .with_only_columns(day, PresentationAttempt.outcome, func.count())
        .group_by(day, PresentationAttempt.outcome)
    )
    counts: dict[tuple[str, str], int] = {}
    for when, outcome, count in db.session.execute(attempts):
        counts[(str(when)[:10], Status(outcome).value)] = count
    shown = []
    for offset in range(days):
        current = first + timedelta(days=offset)
        key = current.isoformat()
        shown.append(Day(current, counts.get((key, "VERIFIED"), 0), counts.get((key, "FAILED"), 0)))
    return shown


def failure_reasons(
    organization: Organization, today: date, days: int = CHART_DAYS
) -> list[tuple[str | None, int]]:
    """Failed presentations of the last ``days`` days, counted by their reason."""
    first = today - timedelta(days=days - 1)
    since = datetime(first.year, first.month, first.day, tzinfo=UTC)
    reasons = (
        _attempts_of(organization)
        .where(
            PresentationAttempt.created_at >= since,
            PresentationAttempt.outcome == Status.FAILED,
        )
        .with_only_columns(PresentationAttempt.validation_error, func.count())
        .group_by(PresentationAttempt.validation_error)
    )
    return [(reason, count) for reason, count in db.session.execute(reasons)]


def funnels(organization: Organization, limit: int = 20) -> list[Funnel]:
    """Per live verification: individuals opened, those who took the link, those who presented
    a credential, and those verified; the busiest verifications first."""
    presented = (
        select(PresentationRequest.id)
        .join(PresentationAttempt, PresentationAttempt.request_id == PresentationRequest.id)
        .where(PresentationRequest.individual_id == Individual.id)
        .exists()
    )
    opened = func.count(Individual.id)
    rows = db.session.execute(
        select(
            Verification.id,
            Verification.name,
            opened,
            func.count(Individual.connection_at),
            func.sum(case((presented, 1), else_=0)),
            func.sum(case((Individual.status == Status.VERIFIED, 1), else_=0)),
        )
        .outerjoin(Individual, Individual.verification_id == Verification.id)
        .where(Verification.organization_id == organization.id, Verification.deleted_at.is_(None))
        .group_by(Verification.id, Verification.name)
        .order_by(opened.desc(), Verification.name)
        .limit(limit)
    )
    return [
        Funnel(str(vid), name, opened or 0, link or 0, int(shown or 0), int(ok or 0))
        for vid, name, opened, link, shown, ok in rows
    ]
