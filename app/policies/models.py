"""Policy requests: one-off presentation requests made by a backend."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app import clock
from app.extensions import db
from app.verifications.models import PresentationSubject


class PolicyRequest(PresentationSubject, db.Model):
    __tablename__ = "policy_requests"

    request_key = "policy_request_id"
    retries_after_failure = False

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    recipient_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("recipients.id", ondelete="SET NULL")
    )
    # The registration certificate the request is made under, when it names one other than
    # its verification's (None: the verification's).
    registration_certificate_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("registration_certificates.id", ondelete="SET NULL")
    )
    # The person's page is /p/<token>; only the hash is kept, the token is returned once.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime]

    def has_expired(self) -> bool:
        return self.expires_at <= clock.now()
