"""Each organization's did:peer:2: made on first use, its private keys kept only sealed."""

from __future__ import annotations

import json
import uuid

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import sealing
from app.didcomm import peer_did
from app.didcomm_agent import settings
from app.didcomm_agent.models import DidcommIdentity
from app.extensions import db
from app.verifications.models import DIDCOMM, Verification

_SEAL_AAD = b"verity didcomm agent keys"


def seal_keys(secrets: dict[str, dict[str, str]], kek: bytes) -> bytes:
    plain = json.dumps(secrets, separators=(",", ":")).encode()
    return sealing.seal(plain, kek, _SEAL_AAD)


def open_keys(sealed: bytes, kek: bytes) -> dict[str, dict[str, str]]:
    """Raises ``ValueError`` for another key-encryption key or damaged bytes."""
    try:
        plain = sealing.open_sealed(sealed, kek, _SEAL_AAD)
    except sealing.SealBroken as exc:
        raise ValueError("The DIDComm keys do not open with this key") from exc
    return json.loads(plain)


def identity_of(organization_id: uuid.UUID) -> DidcommIdentity:
    """The organization's DID for this deployment's endpoint, made on first use.

    Concurrent first uses meet at the unique (organization, endpoint): the loser reads the
    winner's row, so an organization never has two DIDs for one address.
    """
    found = existing_identity(organization_id)
    if found is not None:
        return found
    config = settings.current()
    made = peer_did.make(config.endpoint)
    identity = DidcommIdentity(
        organization_id=organization_id,
        endpoint=config.endpoint,
        did=made.did,
        sealed_keys=seal_keys(made.secrets, config.kek),
    )
    try:
        with db.session.begin_nested():
            db.session.add(identity)
    except IntegrityError:
        found = existing_identity(organization_id)
        assert found is not None
        return found
    return identity


def prepare(verification: Verification) -> None:
    """Before a DIDComm link is handed out, the organization has a DID to invite from."""
    if DIDCOMM in verification.protocols():
        identity_of(verification.organization_id)


def existing_identity(organization_id: uuid.UUID) -> DidcommIdentity | None:
    return db.session.scalar(
        select(DidcommIdentity).where(
            DidcommIdentity.organization_id == organization_id,
            DidcommIdentity.endpoint == settings.current().endpoint,
        )
    )


def sender_of(identity: DidcommIdentity) -> peer_did.NewPeerDid:
    return peer_did.NewPeerDid(
        identity.did, open_keys(identity.sealed_keys, settings.current().kek)
    )
