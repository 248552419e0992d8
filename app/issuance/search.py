"""Finding an organization's credentials by recipient and status, a page at a time for the
list and in batches for the export."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import contains_eager

from app import clock, newest_first
from app.issuance.models import Credential, CredentialStatus
from app.issuance.operations import status_is
from app.newest_first import EXPORT_BATCH
from app.recipients.models import Recipient


@dataclass(frozen=True)
class CredentialFilter:
    recipient: str | None = None  # part of the recipient's name or email
    status: CredentialStatus | None = None


def _matching(organization_id: uuid.UUID, chosen: CredentialFilter) -> Select[tuple[Credential]]:
    query = (
        select(Credential)
        .join(Credential.recipient)
        .options(contains_eager(Credential.recipient))
        .where(Credential.organization_id == organization_id)
    )
    if chosen.recipient:
        pattern = newest_first.contains_pattern(chosen.recipient.lower())
        name = func.lower(Recipient.first_name + " " + Recipient.last_name)
        query = query.where(
            or_(
                name.like(pattern, escape="\\"),
                func.lower(Recipient.email).like(pattern, escape="\\"),
            )
        )
    if chosen.status is not None:
        query = query.where(status_is(chosen.status, clock.now()))
    return query


def find_credentials(
    organization_id: uuid.UUID, chosen: CredentialFilter, offset: int, limit: int
) -> tuple[list[Credential], int]:
    """A page of the matching credentials, newest first, and how many match in all."""
    return newest_first.page(_matching(organization_id, chosen), Credential, offset, limit)


def each_credential(
    organization_id: uuid.UUID, chosen: CredentialFilter, batch: int = EXPORT_BATCH
) -> Iterator[list[Credential]]:
    """Every matching credential, newest first, ``batch`` rows per query (keyset paging, so
    each row is read once while others are issued)."""
    return newest_first.batches(lambda: _matching(organization_id, chosen), Credential, batch)
