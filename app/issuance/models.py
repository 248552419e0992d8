"""Issued credentials (SD-JWT VC), offered to recipients and revocable through a status list."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models_base import IdMixin, TimestampMixin


class Credential(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "credentials"
    # Each credential owns one bit of its organization's status list.
    __table_args__ = (UniqueConstraint("organization_id", "status_index"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    schema_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("schemas.id"))
    recipient_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("recipients.id"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    claims: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    status_index: Mapped[int]
    revoked_at: Mapped[datetime | None]
