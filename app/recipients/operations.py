"""Recipients of an organization."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select

from app.errors import NotFound
from app.extensions import db
from app.identity.operations import normalize_email
from app.organizations.models import Organization
from app.recipients.models import Recipient

FIELDS = ("first_name", "last_name", "email", "customer_id")


def get_recipient(organization: Organization, recipient_id: uuid.UUID) -> Recipient:
    recipient = db.session.get(Recipient, recipient_id)
    if recipient is None or recipient.organization_id != organization.id:
        raise NotFound()
    return recipient


def list_recipients(
    organization: Organization, offset: int, limit: int
) -> tuple[list[Recipient], int]:
    query = select(Recipient).where(Recipient.organization_id == organization.id)
    total = db.session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = db.session.scalars(
        query.order_by(Recipient.created_at, Recipient.id).offset(offset).limit(limit)
    )
    return list(rows), total


def create_recipient(organization: Organization, fields: dict[str, Any]) -> Recipient:
    recipient = Recipient(organization_id=organization.id)
    _apply(recipient, fields)
    db.session.add(recipient)
    db.session.flush()
    return recipient


def update_recipient(
    organization: Organization, recipient_id: uuid.UUID, fields: dict[str, Any]
) -> Recipient:
    recipient = get_recipient(organization, recipient_id)
    _apply(recipient, fields)
    db.session.flush()
    return recipient


def delete_recipient(organization: Organization, recipient_id: uuid.UUID) -> None:
    db.session.delete(get_recipient(organization, recipient_id))
    db.session.flush()


def _apply(recipient: Recipient, fields: dict[str, Any]) -> None:
    for key in FIELDS:
        if key in fields and fields[key] is not None:
            value = normalize_email(fields[key]) if key == "email" else fields[key].strip()
            setattr(recipient, key, value)
