"""An organization's verifier identity as the staff API and the dashboard show it: whose
identity its requests carry, the certificate, the CSR waiting for its chain, and what travels
with the requests. The private key is not here, in any form.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes

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
        "registration_certificates": [
            registration.describe(record) for record in registration.list_for(identity.organization)
        ],
    }


def signing_request(key: VerifierKey) -> dict[str, Any]:
    return {
        "csr_pem": key.csr_pem,
        "country": key.country,
        "dns_name": key.dns_name,
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
    }
