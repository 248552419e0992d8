"""Policy requests: one-off presentation requests made by a backend."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import clock
from app.extensions import db
from app.models_base import IdMixin, TimestampMixin
from app.verifications.models import Status, Verification, status_column


class PolicyRequest(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "policy_requests"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    verification_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("verifications.id"))
    recipient_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("recipients.id", ondelete="SET NULL")
    )
    # The person's page is /p/<token>; only the hash is kept, the token is returned once.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime]
    status: Mapped[Status] = status_column()
    validation_error: Mapped[str | None] = mapped_column(Text)
    claims: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    issuer: Mapped[str | None] = mapped_column(String(2000))
    verified_at: Mapped[datetime | None]
    # The presentation request behind the page's current link (a pointer, like individuals').
    connection_request_id: Mapped[uuid.UUID | None]
    connection_at: Mapped[datetime | None]

    verification: Mapped[Verification] = relationship()

    def is_final(self) -> bool:
        return self.status in (Status.VERIFIED, Status.FAILED)

    def has_expired(self) -> bool:
        return self.expires_at <= clock.now()
