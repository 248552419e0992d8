"""An organization's verifier identity as the staff API and the dashboard show it: whose
identity its requests carry, the certificate, the CSR waiting for its chain, and what travels
with the requests. The private key is not here, in any form.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from app.oid4vp import wrpac
from app.oid4vp.client import X509_HASH, x509_hash
from app.oid4vp.google_registrar import OCTET_STRING_32, RP_METADATA_OID
from app.verifier_identity import registration
from app.verifier_identity.models import VerifierKey
from app.verifier_identity.operations import VerifierIdentity


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def describe(identity: VerifierIdentity) -> dict[str, Any]:
    """Whose identity the organization's requests carry, the certificate, the CSR waiting for
    its chain, and what travels with the requests; never the private key."""
    active, pending, profile = identity.active, identity.pending, identity.profile
    return {
        "organization_id": str(identity.organization.id),
        "uses": "organization" if active is not None else "deployment",
        "client_name": identity.organization.name,
        "certificate": access_certificate(active) if active is not None else None,
        "pending_request": signing_request(pending) if pending is not None else None,
        "logo_uri": profile.logo_uri if profile else None,
        "privacy_policy_uri": profile.privacy_policy_uri if profile else None,
        "registration_certificates": [
            registration.describe(record) for record in registration.list_for(identity.organization)
        ],
        "relying_parties": [
            {
                "name": party.name,
                "certificate": access_certificate(party.active) if party.active else None,
                "pending_request": signing_request(party.pending) if party.pending else None,
            }
            for party in identity.relying_parties
        ],
        "google_wallet": (
            google_wallet_leaf(*identity.google_wallet) if identity.google_wallet else None
        ),
    }


def google_wallet_leaf(leaf: x509.Certificate | None, missing: list[str]) -> dict[str, Any]:
    """The registrar leaf issued last: whom it names, until when, the metadata hash it binds."""
    if leaf is None:
        return {
            "client_id": None,
            "subject": None,
            "not_after": None,
            "metadata_sha256": None,
            "missing": missing,
        }
    extension = leaf.extensions.get_extension_for_oid(RP_METADATA_OID).value
    return {
        "client_id": f"{X509_HASH}:{x509_hash(leaf)}",
        "subject": leaf.subject.rfc4514_string(),
        "not_after": _time(leaf.not_valid_after_utc),
        "metadata_sha256": extension.value[len(OCTET_STRING_32) :].hex(),
        "missing": missing,
    }


def signing_request(key: VerifierKey) -> dict[str, Any]:
    return {
        "csr_pem": key.csr_pem,
        "country": key.country,
        "dns_name": key.dns_name,
        "relying_party": key.relying_party or None,
        "profile": key.profile,
        "created_at": _time(key.created_at),
    }


def access_certificate(key: VerifierKey) -> dict[str, Any]:
    leaf = x509.load_pem_x509_certificate((key.chain_pem or "").encode("ascii"))
    return {
        "client_id": key.client_id,
        "subject": leaf.subject.rfc4514_string(),
        "issuer": leaf.issuer.rfc4514_string(),
        "not_before": _time(leaf.not_valid_before_utc),
        "not_after": _time(leaf.not_valid_after_utc),
        "sha256": leaf.fingerprint(hashes.SHA256()).hex(),
        "chain_pem": key.chain_pem,
        "activated_at": _time(key.activated_at),
        "ts_119_411_8_unmet": [item.as_dict() for item in wrpac.unmet_requirements(leaf)],
    }
