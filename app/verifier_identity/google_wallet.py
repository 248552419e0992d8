"""Each organization's Google Wallet leaf, issued by the deployment's registrar CA.

The leaf binds the organization's display name, logo and privacy policy, so it is issued when
first needed and again whenever one of them changes (or the leaf nears its end); the request
made then is signed with the leaf that binds what it shows. Its private key is made here and
stored only sealed, as the organization's own access certificate key is.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from app import clock
from app.extensions import db
from app.issuance import settings
from app.oid4vci.keys import generate_signing_key, open_private_key, seal_private_key
from app.oid4vp import google_registrar
from app.oid4vp.client import X509Client
from app.oid4vp.google_registrar import DisplayInfo, RegistrarCA
from app.organizations.models import Organization
from app.verifier_identity.models import GoogleWalletCertificate, VerifierProfile

# What Google's DisplayInfo requires and where staff set it, in the order a page lists them.
REQUIRED = (
    ("logo_uri", "logo_uri (PUT /verifier-identity/profile)"),
    ("privacy_policy_uri", "privacy_policy_uri (PUT /verifier-identity/profile)"),
)


@dataclass(frozen=True)
class GoogleWalletSigner:
    """What signs the organization's DC API requests to Google Wallet, and what they carry."""

    client: X509Client
    leaf: x509.Certificate
    metadata_b64: str


def display_of(organization: Organization) -> DisplayInfo | None:
    """The organization's DisplayInfo, or None while its logo or privacy policy is unset."""
    profile = db.session.get(VerifierProfile, organization.id)
    if profile is None or not profile.logo_uri or not profile.privacy_policy_uri:
        return None
    return DisplayInfo(organization.name, profile.logo_uri, profile.privacy_policy_uri)


def missing_for(organization: Organization) -> list[str]:
    """What the organization still has to set before it has a leaf."""
    profile = db.session.get(VerifierProfile, organization.id)
    return [where for field, where in REQUIRED if not getattr(profile, field, None)]


def signer_for(organization: Organization, registrar: RegistrarCA) -> GoogleWalletSigner | None:
    """The leaf that binds the organization's metadata as it is now, issued if needed; None
    while the metadata is incomplete (Google's DisplayInfo has no optional member)."""
    display = display_of(organization)
    if display is None:
        return None
    wanted = google_registrar.metadata_bytes(display)
    now = clock.now()
    kek = settings.current().kek
    held = db.session.get(GoogleWalletCertificate, organization.id)
    leaf = _leaf(held) if held is not None else None
    if (
        held is not None
        and leaf is not None
        and not google_registrar.needs_new_leaf(leaf, held.metadata_bytes, wanted, registrar, now)
    ):
        private = open_private_key(held.sealed_private_key, kek)
    else:
        private = generate_signing_key()
        leaf = registrar.issue(
            organization.id, organization.name, private.public_key(), wanted, now
        )
        _keep(organization.id, held, private, leaf, wanted, kek)
    return GoogleWalletSigner(
        google_registrar.leaf_client(leaf, registrar, private),
        leaf,
        google_registrar.metadata_b64(wanted),
    )


def _keep(
    organization_id: uuid.UUID,
    held: GoogleWalletCertificate | None,
    private: ec.EllipticCurvePrivateKey,
    leaf: x509.Certificate,
    data: bytes,
    kek: bytes,
) -> None:
    """Store the new leaf in place of the one held. Two first requests at once both issue
    one; the second insert meets the first at the primary key and overwrites it instead, so
    both requests stay signed by a leaf that binds the same metadata."""
    values = {
        "sealed_private_key": seal_private_key(private, kek),
        "leaf_pem": leaf.public_bytes(serialization.Encoding.PEM).decode("ascii"),
        "metadata_bytes": data,
        "not_after": leaf.not_valid_after_utc,
        "issued_at": clock.now(),
    }
    if held is not None:
        for name, value in values.items():
            setattr(held, name, value)
        db.session.flush()
        return
    try:
        with db.session.begin_nested():
            db.session.add(GoogleWalletCertificate(organization_id=organization_id, **values))
    except IntegrityError:
        db.session.execute(
            update(GoogleWalletCertificate)
            .where(GoogleWalletCertificate.organization_id == organization_id)
            .values(**values)
        )


def held_leaf(organization_id: uuid.UUID) -> x509.Certificate | None:
    """The leaf issued last, without issuing one."""
    held = db.session.get(GoogleWalletCertificate, organization_id)
    return _leaf(held) if held is not None else None


def _leaf(held: GoogleWalletCertificate) -> x509.Certificate:
    return x509.load_pem_x509_certificate(held.leaf_pem.encode("ascii"))
