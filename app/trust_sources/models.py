"""A trust source of one organization, with the last good copy of what it lists."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Enum, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models_base import IdMixin, TimestampMixin


class SourceKind(enum.StrEnum):
    # Certificates pasted by staff: nothing to fetch.
    PEM = "PEM"
    # One ETSI TS 119 612 trusted list (XML, XAdES).
    TRUSTED_LIST = "TRUSTED_LIST"
    # The EU List of Trusted Lists, followed to the member states' trusted lists.
    LIST_OF_TRUSTED_LISTS = "LIST_OF_TRUSTED_LISTS"
    # An ETSI TS 119 602 List of Trusted Entities (JSON, JAdES).
    LIST_OF_TRUSTED_ENTITIES = "LIST_OF_TRUSTED_ENTITIES"
    # An ISO/IEC 18013-5 VICAL (COSE_Sign1): IACA certificates by docType.
    VICAL = "VICAL"
    # Certificates of wallet provider CAs pasted by staff: they anchor the wallet and key
    # attestations the organization's issuer accepts, never a credential's issuer.
    WALLET_PROVIDERS = "WALLET_PROVIDERS"
    # Certificates of registrars pasted by staff: they anchor the registration certificates
    # (ETSI TS 119 475) the organization uploads, never a credential's issuer.
    REGISTRARS = "REGISTRARS"


# Sources whose certificates are pasted, not fetched.
PEM_KINDS = frozenset({SourceKind.PEM, SourceKind.WALLET_PROVIDERS, SourceKind.REGISTRARS})
FETCHED_KINDS = frozenset(set(SourceKind) - PEM_KINDS)
# Sources a verification may choose to anchor the issuers of credentials.
ISSUER_KINDS = frozenset(set(SourceKind) - {SourceKind.WALLET_PROVIDERS, SourceKind.REGISTRARS})
# The ETSI TS 119 602 service type of wallet providers: a List of Trusted Entities' services
# of this type anchor wallet attestations too.
WALLET_PROVIDER_SERVICE_TYPE = "http://uri.etsi.org/19602/SvcType/WalletSolution/Issuance"
# The ETSI TS 119 602 service type of registration certificate (WRPRC) providers: a List of
# Trusted Entities' services of this type anchor registration certificates too.
REGISTRAR_SERVICE_TYPE = "http://uri.etsi.org/19602/SvcType/WRPRC/Issuance"


class TrustSource(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "trust_sources"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[SourceKind] = mapped_column(
        Enum(SourceKind, native_enum=False, length=40, validate_strings=True)
    )
    url: Mapped[str | None] = mapped_column(String(2000))
    # PEM: the anchors themselves. Lists: who may sign the list (for a VICAL, the anchors its
    # signer's chain must lead to).
    certificates_pem: Mapped[str] = mapped_column(Text, default="")
    # The EU List of Trusted Lists only: the member states followed; empty: all of them.
    territories: Mapped[list[str]] = mapped_column(JSON, default=list)
    # ETSI lists and Lists of Trusted Entities: service type URIs kept; empty: every type.
    service_types: Mapped[list[str]] = mapped_column(JSON, default=list)

    # The last good copy. ``entries`` are the listed services of the kept types, granted or
    # not (a withdrawn one explains a refusal): [{"certificate": base64 DER, "service_type",
    # "status", "status_starting", "granted", "entity_name", "territory", "doctypes"}].
    entries: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, deferred=True)
    # Each list read for it (one, or the LoTL and the member states' lists followed):
    # [{"territory", "sequence_number", "issued_at", "next_update", "url", "error"}].
    lists: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    entry_count: Mapped[int] = mapped_column(default=0)
    sequence_number: Mapped[int | None]
    issued_at: Mapped[datetime | None]
    # The earliest next update of the lists kept: past it, the copy is stale.
    next_update: Mapped[datetime | None]
    refreshed_at: Mapped[datetime | None]
    # Bumped by every good refresh, so parsed copies can be kept per process.
    version: Mapped[int] = mapped_column(default=0)
    last_attempt_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    last_error_at: Mapped[datetime | None]

    @property
    def fetched(self) -> bool:
        return self.kind in FETCHED_KINDS
