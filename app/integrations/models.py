"""Integrations: each holds one integration key for an organization's backend."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import clock
from app.extensions import db
from app.models_base import IdMixin
from app.organizations.models import Organization


class Integration(IdMixin, db.Model):
    __tablename__ = "integrations"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    # The first characters of the key, enough for people to tell keys apart; not a secret.
    key_prefix: Mapped[str] = mapped_column(String(20))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    last_used_at: Mapped[datetime | None]

    organization: Mapped[Organization] = relationship(lazy="joined")
