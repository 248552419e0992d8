"""Finding individuals of a verification by customer ID, status and the day they were opened,
a page at a time for the list and in batches for the export."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, select

from app import newest_first
from app.newest_first import EXPORT_BATCH
from app.verifications.models import Individual, Status


@dataclass(frozen=True)
class IndividualFilter:
    customer_id: str | None = None  # part of it
    individual_id: uuid.UUID | None = None  # exactly this one (the overview's links)
    status: Status | None = None
    since: datetime | None = None
    until: datetime | None = None


def _matching(verification_id: uuid.UUID, chosen: IndividualFilter) -> Select[tuple[Individual]]:
    query = select(Individual).where(Individual.verification_id == verification_id)
    if chosen.individual_id is not None:
        query = query.where(Individual.id == chosen.individual_id)
    if chosen.customer_id:
        pattern = newest_first.contains_pattern(chosen.customer_id)
        query = query.where(Individual.customer_id.like(pattern, escape="\\"))
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
    return newest_first.page(_matching(verification_id, chosen), Individual, offset, limit)


def each_individual(
    verification_id: uuid.UUID, chosen: IndividualFilter, batch: int = EXPORT_BATCH
) -> Iterator[list[Individual]]:
    """Every matching individual, newest first, ``batch`` rows per query (keyset paging, so a
    long export reads each row once even while new individuals are opened)."""
    return newest_first.batches(lambda: _matching(verification_id, chosen), Individual, batch)
