"""Organizations, who belongs to them, and the codes that invite people in."""

from __future__ import annotations

import enum
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy import JSON, Enum, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import clock
from app.extensions import db
from app.identity.models import User
from app.models_base import IdMixin, TimestampMixin


class Plan(enum.StrEnum):
    FREE = "FREE"
    PRO = "PRO"
    PREMIUM_PLUS = "PREMIUM_PLUS"


class Role(enum.StrEnum):
    OWNER = "OWNER"
    ADMIN = "ADMIN"
    MEMBER = "MEMBER"


class WalletAttestation(enum.StrEnum):
    """Whether the organization's issuer asks wallets for a wallet attestation (OAuth 2.0
    Attestation-Based Client Authentication) at its PAR and token endpoints."""

    # Without one, the request is refused (invalid_client).
    REQUIRED = "required"
    # Checked when sent (a bad one is refused); a wallet without one is a public client.
    OPTIONAL = "optional"
    # Neither advertised nor read.
    OFF = "off"


class ApiCompatibility(enum.StrEnum):
    """Whose answer shape the organization's backend reads."""

    # Verity's own fields only.
    VERITY = "verity"
    # Verity's fields plus those Socious Verify's lookup had (``body``, ``user_id``, the
    # nested ``verification``...), for a backend written against Socious Verify (ShinID).
    SOCIOUS_VERIFY = "socious-verify"


@dataclass(frozen=True)
class SupportContact:
    """An organization's support contact as a link: ``mailto:`` for an address."""

    label: str
    href: str

    @classmethod
    def of(cls, value: str | None) -> SupportContact | None:
        if not value:
            return None
        if value.lower().startswith("https://"):
            return cls(label=value, href=value)
        return cls(label=value, href=f"mailto:{value}")


def check_support_contact(value: str) -> str:
    """An email address or an https URL, or empty (none); anything else is refused.

    Plain http is refused: the person follows this link from a page about their credential, and
    a link the network can rewrite is no way to reach the organization.
    """
    value = value.strip()
    if not value:
        return ""
    if len(value) > 320:
        raise ValueError("The support contact is at most 320 characters")
    if value.lower().startswith("https://"):
        parts = urlsplit(value)
        if parts.hostname and not any(c.isspace() for c in value):
            return value
    elif SUPPORT_EMAIL.fullmatch(value):
        return value
    raise ValueError("The support contact must be an email address or an https:// address")


SUPPORT_EMAIL = re.compile(r"[^@\s<>\"]+@[^@\s<>\"]+\.[^@\s<>\"]+")


class Organization(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "organizations"

    name: Mapped[str] = mapped_column(String(200))
    plan: Mapped[Plan] = mapped_column(
        Enum(Plan, native_enum=False, length=20, validate_strings=True), default=Plan.FREE
    )
    # A voucher's period; None means the plan holds until changed (operator or billing).
    plan_expires_at: Mapped[datetime | None]
    billing_customer_id: Mapped[str | None] = mapped_column(String(200))
    wallet_attestation: Mapped[WalletAttestation] = mapped_column(
        Enum(
            WalletAttestation,
            native_enum=False,
            length=10,
            validate_strings=True,
            values_callable=lambda kinds: [kind.value for kind in kinds],
        ),
        default=WalletAttestation.OPTIONAL,
    )

    # The answer shape its backend reads from the apikey lookup and apikey opens.
    api_compatibility: Mapped[ApiCompatibility] = mapped_column(
        Enum(
            ApiCompatibility,
            native_enum=False,
            length=20,
            validate_strings=True,
            values_callable=lambda kinds: [kind.value for kind in kinds],
        ),
        default=ApiCompatibility.VERITY,
        server_default=ApiCompatibility.VERITY.value,
    )

    # The OpenID4VP transaction data types (app.oid4vp.transaction_data) its backend may
    # attach to individuals and policy requests; none until it enables them.
    transaction_data_types: Mapped[list[str] | None] = mapped_column(JSON, default=list)

    # How the people it verifies or issues to reach it (an email address or an https URL),
    # named on their pages when something fails.
    support_contact: Mapped[str | None] = mapped_column(String(320))

    @property
    def contact(self) -> SupportContact | None:
        return SupportContact.of(self.support_contact)

    def effective_plan(self) -> Plan:
        """The plan in force now: a lapsed voucher period falls back to FREE."""
        if self.plan_expires_at is not None and self.plan_expires_at <= clock.now():
            return Plan.FREE
        return self.plan


class Membership(IdMixin, db.Model):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("user_id", "organization_id"),)

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[Role] = mapped_column(
        Enum(Role, native_enum=False, length=20, validate_strings=True), default=Role.MEMBER
    )
    created_at: Mapped[datetime] = mapped_column(default=clock.now)

    user: Mapped[User] = relationship(lazy="joined")
    organization: Mapped[Organization] = relationship(lazy="joined")


class OrganizationCode(IdMixin, db.Model):
    """An invitation code; stored hashed like every other secret."""

    __tablename__ = "organization_codes"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[Role] = mapped_column(
        Enum(Role, native_enum=False, length=20, validate_strings=True), default=Role.MEMBER
    )
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    expires_at: Mapped[datetime]
