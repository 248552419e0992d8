"""One row per change a member of staff or an integration made: never updated, never deleted
through the ORM (only the retention job removes events past ``AUDIT_RETENTION_DAYS``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String, event
from sqlalchemy.orm import Mapped, mapped_column

from app import clock
from app.extensions import db
from app.models_base import IdMixin


class AppendOnly(Exception):
    """An audit event was about to be changed or removed."""


class AuditEvent(IdMixin, db.Model):
    __tablename__ = "audit_events"

    # No foreign keys: the trail outlives the records (and the integration keys) it names.
    organization_id: Mapped[uuid.UUID] = mapped_column(index=True)
    created_at: Mapped[datetime] = mapped_column(default=clock.now, index=True)
    actor_type: Mapped[str] = mapped_column(String(20))
    actor_id: Mapped[str] = mapped_column(String(64))
    actor_name: Mapped[str] = mapped_column(String(320))
    action: Mapped[str] = mapped_column(String(100))
    record_type: Mapped[str] = mapped_column(String(50))
    record_id: Mapped[str] = mapped_column(String(64))
    client_ip: Mapped[str | None] = mapped_column(String(64))
    # Every changed field's name; values only for those that are neither secret nor personal.
    fields: Mapped[list[str]] = mapped_column(JSON, default=list)
    changes: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


@event.listens_for(AuditEvent, "before_update")
def refuse_update(*_: Any) -> None:
    raise AppendOnly("audit events are append-only: they are never updated")


@event.listens_for(AuditEvent, "before_delete")
def refuse_delete(*_: Any) -> None:
    raise AppendOnly("audit events are append-only: they are never deleted")
