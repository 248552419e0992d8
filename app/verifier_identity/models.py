"""An organization's request-signing keys, their certificates, and what wallets show of it.

A key is made with its certificate signing request and waits, pending, until the chain issued
for it is uploaded; only then does it sign, and the key it replaces is retired. So generating
a new request never disturbs the certificate in use. The private half is stored only sealed
(AES-GCM under ``ISSUER_KEY_SECRET``, as issuer keys are).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, LargeBinary, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from app import clock
from app.extensions import db
from app.models_base import IdMixin


class VerifierKey(IdMixin, db.Model):
    """One P-256 key with its CSR; active once its chain is uploaded, until retired."""

    __tablename__ = "verifier_keys"
    # One key in use per organization and relying party: two uploads at once cannot both
    # activate one.
    __table_args__ = (
        Index(
            "uq_verifier_keys_active",
            "organization_id",
            "relying_party",
            unique=True,
            sqlite_where=text("activated_at IS NOT NULL AND retired_at IS NULL"),
            postgresql_where=text("activated_at IS NOT NULL AND retired_at IS NULL"),
        ),
    )

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    sealed_private_key: Mapped[bytes] = mapped_column(LargeBinary)
    csr_pem: Mapped[str] = mapped_column(Text)
    country: Mapped[str] = mapped_column(String(2))
    # The deployment's host named in the CSR's subjectAltName, if staff asked for it.
    dns_name: Mapped[str | None] = mapped_column(String(253))
    # The intermediated relying party the certificate is for, by name; "" is the organization
    # itself. An intermediary holds one access certificate per relying party it acts for.
    relying_party: Mapped[str] = mapped_column(String(200), default="", server_default="")
    # "ts-119-411-8": an EU access certificate, whose chain is checked against that profile.
    profile: Mapped[str | None] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    # Set together when the chain is uploaded: the key signs from then on.
    chain_pem: Mapped[str | None] = mapped_column(Text)
    client_id_prefix: Mapped[str | None] = mapped_column(String(20))
    client_id_name: Mapped[str | None] = mapped_column(String(253))
    not_after: Mapped[datetime | None]
    activated_at: Mapped[datetime | None]
    retired_at: Mapped[datetime | None]

    @property
    def client_id(self) -> str | None:
        if self.client_id_prefix is None:
            return None
        return f"{self.client_id_prefix}:{self.client_id_name}"


class VerifierProfile(db.Model):
    """What travels with the organization's signed requests besides its name."""

    __tablename__ = "verifier_profiles"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    # client_metadata.logo_uri (RFC 7591 §2): an https address of the organization's logo.
    logo_uri: Mapped[str | None] = mapped_column(String(2000))
    # Google Wallet's RelyingPartyMetadata privacy_policy_uri: an https address.
    privacy_policy_uri: Mapped[str | None] = mapped_column(String(2000))
    updated_at: Mapped[datetime] = mapped_column(default=clock.now, onupdate=clock.now)


class RegistrationCertificate(IdMixin, db.Model):
    """A registrar's registration certificate (ETSI TS 119 475) for one intended use of the
    organization, checked at upload; what it permits is kept as read, for the over-asking
    check of each verification that names it and for the pages."""

    __tablename__ = "registration_certificates"
    __table_args__ = (UniqueConstraint("organization_id", "token_sha256"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    # The compact JWT as the registrar signed it: sent as is in verifier_info.
    token: Mapped[str] = mapped_column(Text)
    token_sha256: Mapped[str] = mapped_column(String(64))
    sub: Mapped[str] = mapped_column(String(500))
    name: Mapped[str] = mapped_column(String(500), default="")
    intended_use_id: Mapped[str | None] = mapped_column(String(500))
    # [{"lang", "value"}]: the purpose wallets show.
    purpose: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)
    # [{"format", "meta", "claims": [[path...]] | null}]: what may be asked for.
    credentials: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The registrar certificate that signed it (RFC 4514) and its SHA-256 fingerprint.
    registrar: Mapped[str] = mapped_column(String(1000))
    # The access certificate (SHA-256 of its DER) it was checked against at upload.
    access_certificate_sha256: Mapped[str] = mapped_column(String(64))
    # TS 119 475 status (a Token Status List reference), checked at upload.
    status: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    issued_at: Mapped[datetime]
    expires_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=clock.now)

    def purpose_in(self, language: str) -> str:
        """The registered purpose in the person's language, else English, else the first."""
        texts = self.purpose or []
        for wanted in (language, "en"):
            for entry in texts:
                if (entry.get("lang") or "").split("-")[0].lower() == wanted:
                    return entry.get("value", "")
        return texts[0].get("value", "") if texts else ""


class GoogleWalletCertificate(db.Model):
    """The leaf the deployment's Google Wallet registrar CA issued the organization: its
    sealed key, the leaf, and the RelyingPartyMetadataBytes the leaf binds. One per
    organization, replaced when the metadata changes or the leaf nears its end."""

    __tablename__ = "google_wallet_certificates"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    sealed_private_key: Mapped[bytes] = mapped_column(LargeBinary)
    leaf_pem: Mapped[str] = mapped_column(Text)
    metadata_bytes: Mapped[bytes] = mapped_column(LargeBinary)
    not_after: Mapped[datetime]
    issued_at: Mapped[datetime] = mapped_column(default=clock.now)
