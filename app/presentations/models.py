"""The did:prism documents organizations pinned by trusting an issuer their people presented,
and the zero-knowledge answers waiting for their proof's check."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
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


class ZkCheck(IdMixin, TimestampMixin, db.Model):
    """A zero-knowledge answer received and waiting for its proof's check, off the request.

    A proof takes 0.5-0.8 s of CPU to check; a web worker that waited for it would serve no
    page meanwhile, so the answer is kept here and checked by the job worker
    (``app.presentations.zk_checks``). One per presentation request (a second answer to the
    same request is refused while the first is checked); the row goes in the transaction that
    records the decision. ``presentation`` is the proof and the document data it is over, which
    show only what the verification keeps anyway (the claim, the issuer), so it is not sealed.
    ``binding`` is what the channel's context needs to rebuild the session transcript (the
    page's origin, the response key, or the client ID and response URI).
    """

    __tablename__ = "zk_checks"

    request_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("presentation_requests.id", ondelete="CASCADE"), unique=True
    )
    presentation: Mapped[str] = mapped_column(Text)
    binding: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The hash of the code the answering browser was given (``consume`` keeps it).
    response_code_hash: Mapped[str] = mapped_column(String(64))
    # When a job took the check; a check taken long ago and not done is handed over again.
    claimed_at: Mapped[datetime | None]
    attempts: Mapped[int] = mapped_column(Integer, default=0)
