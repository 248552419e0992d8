"""Each organization's issuer certificates: a root made on first use (or uploaded from the
organization's CA) and an issuing certificate per issuer key, carried as ``x5c``.

The issuing certificate is made when a credential is first signed with a key that has none,
so a rotated key gets its own at its first signature. It names the issuer identifier the
credential's ``iss`` carries; a deployment reached under another address makes a new one. An
uploaded chain is used as it is, and where its certificate names another issuer the
credentials go without ``x5c`` (their ``iss`` still resolves through jwt-vc-issuer metadata).
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app import clock
from app.errors import InvalidRequest
from app.extensions import db
from app.hardware_keys import open_token
from app.issuance import keys, settings
from app.issuance.models import IssuerKey, IssuerRoot
from app.oid4vci.certificates import (
    CertificateChainError,
    from_pem,
    make_issuing_certificate,
    make_root,
    names_issuer,
    split_uploaded_chain,
    to_pem,
    x5c_of,
)
from app.oid4vci.keys import generate_signing_key, open_private_key, seal_private_key
from app.organizations.models import Membership, Organization
from app.organizations.operations import require_manager


def x5c_for_signing(key: IssuerKey, organization: Organization, issuer: str) -> tuple[str, ...]:
    """The ``x5c`` to sign with ``key`` as ``issuer``, making the issuing certificate (and the
    organization's root) when there is none for this issuer yet. Empty: an uploaded chain
    naming another issuer."""
    stored = _x5c_naming(key.certificate_chain_pem, issuer)
    if stored:
        return stored
    root = current_root(organization)
    if not root.generated:
        return ()
    root_certificate = from_pem(root.certificate_pem)[0]
    public = keys.private_key(key).public_key()
    leaf = make_issuing_certificate(
        root=root_certificate,
        root_key=_root_private_key(root),
        issuer_key=public,
        issuer=issuer,
        organization=organization.name,
        now=clock.now(),
    )
    key.certificate_chain_pem = to_pem([leaf])
    db.session.flush()
    return x5c_of([leaf])


def stored_x5c(key: IssuerKey, issuer: str) -> tuple[str, ...]:
    """The ``x5c`` already made for ``key`` as ``issuer``; reads only (status list tokens are
    signed in read-only requests), empty when there is none."""
    return _x5c_naming(key.certificate_chain_pem, issuer)


@functools.lru_cache(maxsize=256)
def _x5c_naming(chain_pem: str | None, issuer: str) -> tuple[str, ...]:
    """The stored chain as ``x5c`` when its first certificate names ``issuer``; empty
    otherwise. Kept by value: every credential of a key carries the same chain, and parsing
    it again for each would cost more than the signature."""
    if not chain_pem:
        return ()
    chain = from_pem(chain_pem)
    return x5c_of(chain) if names_issuer(chain[0], issuer) else ()


def roots(organization_id: uuid.UUID) -> list[x509.Certificate]:
    """Every root the organization's credentials may chain to, current and replaced: what
    this deployment's verifier validates its own credentials' ``x5c`` against."""
    rows = db.session.scalars(
        select(IssuerRoot.certificate_pem).where(IssuerRoot.organization_id == organization_id)
    )
    return [from_pem(pem)[0] for pem in rows]


def existing_root(organization_id: uuid.UUID) -> IssuerRoot | None:
    return db.session.scalar(
        select(IssuerRoot).where(
            IssuerRoot.organization_id == organization_id, IssuerRoot.retired_at.is_(None)
        )
    )


def current_root(organization: Organization) -> IssuerRoot:
    """The organization's root, made on first use; two first uses at once meet at the
    partial unique index and the loser reads the winner's."""
    root = existing_root(organization.id)
    if root is not None:
        return root
    try:
        with db.session.begin_nested():
            root = _new_root(organization)
    except IntegrityError:
        root = existing_root(organization.id)
        if root is None:
            raise
    return root


def _new_root(organization: Organization) -> IssuerRoot:
    current = settings.current()
    stored: dict[str, Any]
    if current.key_store == "pkcs11" and current.token is not None:
        label = f"verity-issuer-root-{uuid.uuid4()}"
        private: ec.EllipticCurvePrivateKey = open_token(current.token).generate_signing_key(label)
        stored = {"token_key_label": label}
    else:
        private = generate_signing_key()
        stored = {"sealed_private_key": seal_private_key(private, current.kek)}
    certificate = make_root(private, organization.name, clock.now())
    root = IssuerRoot(
        organization_id=organization.id,
        certificate_pem=to_pem([certificate]),
        created_at=clock.now(),
        **stored,
    )
    db.session.add(root)
    db.session.flush()
    return root


def _root_private_key(root: IssuerRoot) -> ec.EllipticCurvePrivateKey:
    if root.token_key_label is not None:
        token = settings.current().token
        if token is None:
            raise RuntimeError(
                "the issuer root key is kept in a PKCS#11 token: set PKCS11_MODULE, "
                "PKCS11_TOKEN_LABEL and PKCS11_PIN"
            )
        return open_token(token).signing_key(root.token_key_label)
    assert root.sealed_private_key is not None
    return open_private_key(root.sealed_private_key, settings.current().kek)


def describe(organization: Organization, issuer: str) -> dict[str, Any]:
    """What staff hand to verifiers: the root to trust and the chain credentials carry. The
    root is made here when there is none yet, so it can be shared before the first issuance."""
    root = current_root(organization)
    key = keys.existing_key(organization.id)
    chain = stored_x5c(key, issuer) if key is not None else ()
    return {
        "root_pem": root.certificate_pem,
        "uploaded": not root.generated,
        "kid": key.kid if key is not None else None,
        "chain_pem": key.certificate_chain_pem if chain and key is not None else None,
    }


def upload_chain(member: Membership, pem: str, issuer: str) -> IssuerKey:
    """Staff's chain from their CA for the current issuer key: its root becomes the
    organization's (the one made here, if any, is kept for credentials signed under it)."""
    require_manager(member)
    organization = member.organization
    key = keys.current_key(organization.id)
    public = keys.private_key(key).public_key()
    try:
        chain, root_certificate = split_uploaded_chain(pem, public, issuer, clock.now())
    except CertificateChainError as exc:
        raise InvalidRequest(str(exc), code="INVALID_CERTIFICATE_CHAIN") from exc
    previous = existing_root(organization.id)
    if previous is not None:
        previous.retired_at = clock.now()
        db.session.flush()
    db.session.add(
        IssuerRoot(
            organization_id=organization.id,
            certificate_pem=to_pem([root_certificate]),
            created_at=clock.now(),
        )
    )
    key.certificate_chain_pem = to_pem(chain)
    db.session.flush()
    return key
