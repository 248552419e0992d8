"""Recipients: people an organization issues credentials to."""

from __future__ import annotations

import uuid

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models_base import IdMixin, TimestampMixin


class Recipient(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "recipients"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    first_name: Mapped[str] = mapped_column(String(200))
    last_name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(320))
    customer_id: Mapped[str | None] = mapped_column(String(200))
