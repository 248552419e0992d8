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
    held = db.session.get(GoogleWalletCertificate, organization.id)
    leaf = _leaf(held) if held is not None else None
    kek = settings.current().kek
    if google_registrar.needs_new_leaf(leaf, held.metadata_bytes if held else None, wanted, now):
        private = generate_signing_key()
        leaf = registrar.issue(
            organization.id, organization.name, private.public_key(), wanted, now
        )
        if held is None:
            held = GoogleWalletCertificate(organization_id=organization.id)
            db.session.add(held)
        held.sealed_private_key = seal_private_key(private, kek)
        held.leaf_pem = leaf.public_bytes(serialization.Encoding.PEM).decode("ascii")
        held.metadata_bytes = wanted
        held.not_after = leaf.not_valid_after_utc
        held.issued_at = now
        db.session.flush()
    else:
        private = open_private_key(held.sealed_private_key, kek)
    assert leaf is not None
    return GoogleWalletSigner(
        google_registrar.leaf_client(leaf, registrar, private),
        leaf,
        google_registrar.metadata_b64(wanted),
    )


def held_leaf(organization_id: uuid.UUID) -> x509.Certificate | None:
    """The leaf issued last, without issuing one."""
    held = db.session.get(GoogleWalletCertificate, organization_id)
    return _leaf(held) if held is not None else None


def _leaf(held: GoogleWalletCertificate) -> x509.Certificate:
    return x509.load_pem_x509_certificate(held.leaf_pem.encode("ascii"))
