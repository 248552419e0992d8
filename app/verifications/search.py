"""Finding individuals of a verification by customer ID, status and the day they were opened,
a page at a time for the list and in batches for the export."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, or_, select

from app.extensions import db
from app.verifications.models import Individual, Status

EXPORT_BATCH = 500


@dataclass(frozen=True)
class IndividualFilter:
    customer_id: str | None = None  # part of it
    status: Status | None = None
    since: datetime | None = None
    until: datetime | None = None


def _matching(verification_id: uuid.UUID, chosen: IndividualFilter) -> Select[tuple[Individual]]:
    query = select(Individual).where(Individual.verification_id == verification_id)
    if chosen.customer_id:
        escaped = chosen.customer_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(Individual.customer_id.like(f"%{escaped}%", escape="\\"))
    if chosen.status is not None:
        query = query.where(Individual.status == chosen.status)
    if chosen.since is not None:
        query = query.where(Individual.created_at >= chosen.since)
    if chosen.until is not None:
        query = query.where(Individual.created_at < chosen.until)
    return query


def find_individuals(
    verification_id: uuid.UUID, chosen: IndividualFilter, offset: int, limit: int
) -> tuple[list[Individual], int]:
    """A page of the matching individuals, newest first, and how many match in all. The
    caller has checked the verification is the organization's."""
    query = _matching(verification_id, chosen)
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(Individual.created_at.desc(), Individual.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return list(rows), total


def each_individual(
    verification_id: uuid.UUID, chosen: IndividualFilter, batch: int = EXPORT_BATCH
) -> Iterator[list[Individual]]:
    """Every matching individual, newest first, ``batch`` rows per query.

    Each batch starts after the last row of the one before (keyset, not offset), so a long
    export reads each row once even while new individuals are opened.
    """
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        query = _matching(verification_id, chosen)
        if after is not None:
            query = query.where(
                or_(
                    Individual.created_at < after[0],
                    (Individual.created_at == after[0]) & (Individual.id < after[1]),
                )
            )
        rows = list(
            db.session.scalars(
                query.order_by(Individual.created_at.desc(), Individual.id.desc()).limit(batch)
            )
        )
        if not rows:
            return
        yield rows
        after = (rows[-1].created_at, rows[-1].id)
        if len(rows) < batch:
            return
