"""Finding an organization's credentials by recipient and status, a page at a time for the
list and in batches for the export."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import contains_eager

from app import clock
from app.extensions import db
from app.issuance.models import Credential, CredentialStatus
from app.issuance.operations import status_is
from app.recipients.models import Recipient

EXPORT_BATCH = 500


@dataclass(frozen=True)
class CredentialFilter:
    recipient: str | None = None  # part of the recipient's name or email
    status: CredentialStatus | None = None


def _like(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _matching(organization_id: uuid.UUID, chosen: CredentialFilter) -> Select[tuple[Credential]]:
    query = (
        select(Credential)
        .join(Credential.recipient)
        .options(contains_eager(Credential.recipient))
        .where(Credential.organization_id == organization_id)
    )
    if chosen.recipient:
        pattern = _like(chosen.recipient)
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
    query = _matching(organization_id, chosen)
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(Credential.created_at.desc(), Credential.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return list(rows), total


def each_credential(
    organization_id: uuid.UUID, chosen: CredentialFilter, batch: int = EXPORT_BATCH
) -> Iterator[list[Credential]]:
    """Every matching credential, newest first, ``batch`` rows per query (keyset paging, so
    each row is read once while others are issued)."""
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        query = _matching(organization_id, chosen)
        if after is not None:
            query = query.where(
                or_(
                    Credential.created_at < after[0],
                    (Credential.created_at == after[0]) & (Credential.id < after[1]),
                )
            )
        rows = list(
            db.session.scalars(
                query.order_by(Credential.created_at.desc(), Credential.id.desc()).limit(batch)
            ).unique()
        )
        if not rows:
            return
        yield rows
        after = (rows[-1].created_at, rows[-1].id)
        if len(rows) < batch:
            return
