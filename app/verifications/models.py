"""Verification definitions, the individuals verified against them, and each attempt."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Enum, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import clock
from app.extensions import db
from app.models_base import IdMixin, TimestampMixin
from app.organizations.models import Organization
from app.schemas.models import Schema


class Status(enum.StrEnum):
    CREATED = "CREATED"
    REQUESTED = "REQUESTED"
    VERIFIED = "VERIFIED"
    FAILED = "FAILED"


def status_column() -> Mapped[Status]:
    return mapped_column(
        Enum(Status, native_enum=False, length=20, validate_strings=True), default=Status.CREATED
    )


class Verification(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "verifications"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    schema_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("schemas.id"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    type: Mapped[str] = mapped_column(String(10), default="SINGLE")
    claims: Mapped[list[str]] = mapped_column(JSON, default=list)
    attributes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    trusted_issuers: Mapped[list[str]] = mapped_column(JSON, default=list)
    return_url: Mapped[str | None] = mapped_column(String(2000))
    # Deleting keeps the record (and its individuals' audit trail) but hides it everywhere.
    deleted_at: Mapped[datetime | None]

    organization: Mapped[Organization] = relationship()
    schema: Mapped[Schema] = relationship()

    def requested_claims(self) -> list[str]:
        """Claims asked of the wallet: those wanted plus those conditions read, nothing else."""
        names = list(self.claims)
        for condition in self.attributes:
            name = condition.get("name") or condition.get("attribute_id")
            if name and name not in names:
                names.append(name)
        return names


class Individual(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "individuals"
    # One individual per (customer_id, verification_id): concurrent opens meet here.
    __table_args__ = (UniqueConstraint("verification_id", "customer_id"),)

    verification_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("verifications.id"))
    customer_id: Mapped[str] = mapped_column(String(200))
    status: Mapped[Status] = status_column()
    validation_error: Mapped[str | None] = mapped_column(Text)
    claims: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    issuer: Mapped[str | None] = mapped_column(String(2000))
    # The presentation request behind the current connection link (no foreign key: the two
    # tables point at each other, and this is a pointer, not ownership).
    connection_request_id: Mapped[uuid.UUID | None]
    connection_at: Mapped[datetime | None]
    verified_at: Mapped[datetime | None]

    verification: Mapped[Verification] = relationship()


class PresentationRequest(IdMixin, db.Model):
    """One OpenID4VP authorization request: what a connect link or policy page points at."""

    __tablename__ = "presentation_requests"

    individual_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("individuals.id", ondelete="CASCADE"), index=True
    )
    policy_request_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("policy_requests.id", ondelete="CASCADE"), index=True
    )
    nonce: Mapped[str] = mapped_column(String(100))
    state: Mapped[str] = mapped_column(String(100), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    expires_at: Mapped[datetime]
    # Set once a response was accepted: a second response (replay) is refused.
    consumed_at: Mapped[datetime | None]
    # OpenID4VP 1.0 §13.3: the redirect after a same-device response carries a code only the
    # browser the wallet returned to holds; the result is shown to that browser.
    response_code_hash: Mapped[str | None] = mapped_column(String(64))


class PresentationAttempt(IdMixin, db.Model):
    """Every presentation, kept for the organization's audit view."""

    __tablename__ = "presentation_attempts"

    request_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("presentation_requests.id", ondelete="CASCADE"), index=True
    )
    individual_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("individuals.id", ondelete="CASCADE"), index=True
    )
    policy_request_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("policy_requests.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    outcome: Mapped[Status] = status_column()
    validation_error: Mapped[str | None] = mapped_column(Text)
    issuer: Mapped[str | None] = mapped_column(String(2000))
