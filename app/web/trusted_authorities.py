"""The DCQL ``trusted_authorities`` of a verification (OpenID4VP 1.0 §6.1.1.1).

A wallet holding several credentials of the type asked for may offer only those whose chain
names one of these authorities. That is safe only when every issuer the verification trusts
is a certificate: an issuer identified by URL or DID has no key identifier, and a query naming
authorities would hide its credentials. So the query names them when the verification pins
only PEM certificates, chooses trust sources, or both. It names none when the verification
pins nothing and chooses no source (any issuer whose signature verifies is accepted, DIDs
included), or pins an identifier or a bare SHA-256 fingerprint (no key identifier to name).
"""

from __future__ import annotations

from app import clock
from app.trust.policy import PEM_MARKER
from app.trust.x5c import load_pem_anchors
from app.trust_sources.use import chosen_sources, trusted_authorities
from app.verifications.models import Verification


def authorities_of(verification: Verification) -> list[str]:
    pins = verification.trusted_issuers or []
    if not pins and not verification.trust_sources:
        return []
    if any(PEM_MARKER not in entry for entry in pins):
        return []
    pinned = [cert for entry in pins for cert in load_pem_anchors(entry)]
    sources = chosen_sources(verification.organization_id, verification.trust_sources)
    return trusted_authorities(sources, verification.credential_type(), pinned, clock.now())
