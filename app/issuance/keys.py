"""Each organization's issuer signing keys: made on first use, rotated on demand.

The private half is stored sealed (AES-GCM, ``app.oid4vci.keys``), or with ``KEY_STORE=pkcs11``
made and kept in a PKCS#11 token (``app.hardware_keys``); ``kid`` is the RFC 7638 thumbprint. A retired key stays in the published JWKS while a credential it signed has not
expired, so rotating never breaks a credential already in a wallet.
"""

from __future__ import annotations

import uuid
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.extensions import db
from app.hardware_keys import TokenKeyError, open_token
from app.issuance import settings
from app.issuance.models import Credential, IssuerKey
from app.oid4vci.keys import generate_signing_key, open_private_key, public_jwk, seal_private_key
from app.organizations.models import Organization


def current_key(organization_id: Any) -> IssuerKey:
    """The organization's key in use, made on first use. Two first uses at once: the partial
    unique index lets one insert win and the other reads the winner's key."""
    key = _current(organization_id)
    if key is not None:
        return key
    try:
        with db.session.begin_nested():
            key = _new_key(organization_id)
    except IntegrityError:
        key = _current(organization_id)
        if key is None:
            raise
    return key


def existing_key(organization_id: Any) -> IssuerKey | None:
    """The key in use, or None before the organization's first credential; never makes one."""
    return _current(organization_id)


def _current(organization_id: Any) -> IssuerKey | None:
    return db.session.scalar(
        select(IssuerKey).where(
            IssuerKey.organization_id == organization_id, IssuerKey.retired_at.is_(None)
        )
    )


def make_private_key(purpose: str) -> tuple[ec.EllipticCurvePrivateKey, dict[str, Any]]:
    """A new P-256 key and how to store it: made in the PKCS#11 token under
    ``KEY_STORE=pkcs11`` (the columns get its label), sealed under ``ISSUER_KEY_SECRET``
    otherwise. ``purpose`` names the label ("issuer", "iaca", "mdoc-ds"). Every issuing key
    of the deployment is made here, so all of them live where staff chose."""
    current = settings.current()
    if current.key_store == "pkcs11" and current.token is not None:
        label = f"verity-{purpose}-{uuid.uuid4()}"
        return open_token(current.token).generate_signing_key(label), {"token_key_label": label}
    private = generate_signing_key()
    return private, {"sealed_private_key": seal_private_key(private, current.kek)}


def open_stored_key(
    kid: str, token_key_label: str | None, sealed_private_key: bytes | None
) -> ec.EllipticCurvePrivateKey:
    """The key to sign with: the token's (which signs inside the token), or the sealed key
    opened (fails loudly under another ``ISSUER_KEY_SECRET``)."""
    if token_key_label is not None:
        token = settings.current().token
        if token is None:
            raise TokenKeyError(
                f"{kid} is kept in a PKCS#11 token: set PKCS11_MODULE, "
                "PKCS11_TOKEN_LABEL and PKCS11_PIN"
            )
        return open_token(token).signing_key(token_key_label)
    if sealed_private_key is None:
        raise ValueError(f"{kid} has neither a sealed key nor a token label")
    return open_private_key(sealed_private_key, settings.current().kek)


def _new_key(organization_id: Any) -> IssuerKey:
    private, stored = make_private_key("issuer")
    jwk = public_jwk(private)
    key = IssuerKey(
        organization_id=organization_id,
        kid=jwk["kid"],
        public_jwk=jwk,
        created_at=clock.now(),
        **stored,
    )
    db.session.add(key)
    db.session.flush()
    return key


def private_key(key: IssuerKey) -> ec.EllipticCurvePrivateKey:
    """The key to sign with: the token's (which signs inside the token), or the sealed key
    opened (fails loudly under another ``ISSUER_KEY_SECRET``)."""
    return open_stored_key(f"issuer key {key.kid}", key.token_key_label, key.sealed_private_key)


def published_keys(organization_id: Any) -> list[dict[str, Any]]:
    """The JWKS: the current key, and each retired key some unexpired credential needs.

    Reads only (no key is made here): the metadata is fetched by verifiers while they decide a
    presentation, possibly of this deployment's own credential, and on SQLite a write lock
    taken here would wait for the very transaction that is fetching. Before the first
    credential is signed there is no key, and nothing to verify with one.
    """
    current = _current(organization_id)
    now = clock.now()
    still_needed = (
        select(Credential.signing_key_id)
        .where(
            Credential.organization_id == organization_id,
            Credential.signing_key_id.is_not(None),
            or_(Credential.expires_at.is_(None), Credential.expires_at > now),
        )
        .distinct()
    )
    retired = db.session.scalars(
        select(IssuerKey)
        .where(
            IssuerKey.organization_id == organization_id,
            IssuerKey.retired_at.is_not(None),
            IssuerKey.id.in_(still_needed),
        )
        .order_by(IssuerKey.created_at.desc())
    )
    published = [current.public_jwk] if current is not None else []
    return [*published, *(key.public_jwk for key in retired)]


def rotate_key(organization: Organization) -> IssuerKey:
    """Retire the key in use (if any) and make a new one; returns the new key."""
    old = _current(organization.id)
    if old is not None:
        old.retired_at = clock.now()
        db.session.flush()
    return _new_key(organization.id)
