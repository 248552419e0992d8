"""The did:prism documents organizations pinned by trusting an issuer their people presented."""

from __future__ import annotations

import uuid

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models_base import IdMixin, TimestampMixin


class PinnedPrismDid(IdMixin, TimestampMixin, db.Model):
    """A did:prism's long form, learnt from a presentation, pinned for one organization.

    The long form is self-certifying (its short form is the SHA-256 of the creation operation
    it carries), so it is the DID's document as created; staff pinned it by trusting the
    issuer on one of their verifications. Credentials naming the short form then verify with
    its keys, for every verification of the organization (whether each verification trusts the
    issuer is still its ``trusted_issuers``).
    """

    __tablename__ = "pinned_prism_dids"
    __table_args__ = (UniqueConstraint("organization_id", "did"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    # The short form, ``did:prism:<64 hex>``: how credentials and trusted_issuers name it.
    did: Mapped[str] = mapped_column(String(100))
    long_form: Mapped[str] = mapped_column(Text)
    # The verification it was trusted on (kept if that verification is later deleted).
    verification_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("verifications.id", ondelete="SET NULL")
    )
