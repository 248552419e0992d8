"""An organization's DIDComm identity and the exchanges it holds with wallets."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app import clock
from app.extensions import db
from app.models_base import IdMixin


class DidcommIdentity(IdMixin, db.Model):
    """An organization's did:peer:2 (X25519 ``#key-1``, Ed25519 ``#key-2``), whose service
    names the endpoint holders POST to. The private keys are kept only sealed.

    One per organization and endpoint: a deployment that moves to another ``PUBLIC_URL`` gets
    a new DID naming the new address, while the old one still opens messages sent to it.
    """

    __tablename__ = "didcomm_identities"
    __table_args__ = (UniqueConstraint("organization_id", "endpoint"),)

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    endpoint: Mapped[str] = mapped_column(String(2000))
    did: Mapped[str] = mapped_column(Text, unique=True)
    # The private JWKs by key id, as JSON, sealed with AES-256-GCM (``operations.seal_keys``).
    sealed_keys: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=clock.now)


class DidcommExchange(IdMixin, db.Model):
    """One invitation taken over DIDComm: its thread joined to the holder that took it, for a
    presentation request (the invitation's id is the request's) or a credential offer (the
    invitation's id is the offer's token).

    Made by the first connection request on an invitation: the unique invitation makes a
    wallet's repeated requests (the Socious Wallet sends up to three, each from a new DID) and
    a flood of them all meet the first row, so the invitation is answered once.
    """

    __tablename__ = "didcomm_exchanges"
    __table_args__ = (
        CheckConstraint(
            "(presentation_request_id IS NULL) <> (credential_id IS NULL)", name="one_subject"
        ),
    )

    invitation_id: Mapped[str] = mapped_column(String(100), unique=True)
    presentation_request_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("presentation_requests.id", ondelete="CASCADE"), index=True
    )
    credential_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("credentials.id", ondelete="CASCADE"), index=True
    )
    identity_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("didcomm_identities.id", ondelete="CASCADE"), index=True
    )
    holder_did: Mapped[str] = mapped_column(Text)
    # The id of our request-presentation or offer-credential message: the answer's thid.
    request_message_id: Mapped[str] = mapped_column(String(100), unique=True)
    # An offer's challenge, which the wallet's request-credential JWT must carry as its nonce
    # (a presentation's is its request's nonce). None once the exchange is closed (the
    # credential issued on it, the offer resent, withdrawn, revoked or found expired): no
    # request is honoured on it then (``app.issuance.didcomm.on_request``).
    challenge: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(default=clock.now)
    presented_at: Mapped[datetime | None]
