"""``VERIFIER_PROFILE``: the interoperability profile a deployment promises wallets.

HAIP 1.0 (OpenID4VC High Assurance Interoperability Profile, the profile EU wallets are built
against) narrows OpenID4VP 1.0 for a verifier: requests signed under ``x509_hash`` and passed
by ``request_uri``, answers encrypted (``direct_post.jwt``, and ``dc_api.jwt`` over the browser
API) with ECDH-ES on P-256 to a key per request, ES256 signatures. A deployment that asks for
the profile and is configured otherwise is refused at start-up, each problem naming the
setting that causes it, rather than making requests a HAIP wallet refuses.
"""

from __future__ import annotations

from app.oid4vp.client import X509_HASH
from app.oid4vp.verifier import Verifier

HAIP = "haip"
PROFILES = ("", HAIP)
HAIP_SIGNING_ALG = "ES256"


def haip_problems(verifier: Verifier) -> list[str]:
    """What of the verifier settled from the configuration HAIP 1.0 does not allow."""
    problems = []
    client = verifier.client
    if not client.signed:
        problems.append(
            "HAIP 1.0 asks for signed requests: set REQUEST_SIGNING_CERT_FILE and "
            "REQUEST_SIGNING_KEY_FILE, with REQUEST_CLIENT_ID_PREFIX=x509_hash"
        )
    elif getattr(client, "prefix", None) != X509_HASH:
        problems.append(
            "HAIP 1.0 asks for the x509_hash client identifier: set "
            "REQUEST_CLIENT_ID_PREFIX=x509_hash"
        )
    if client.signed and client.signing_alg != HAIP_SIGNING_ALG:
        problems.append(
            f"HAIP 1.0 asks for {HAIP_SIGNING_ALG} request signatures: REQUEST_SIGNING_KEY_FILE "
            f"must be a P-256 key, not one for {client.signing_alg}"
        )
    if verifier.encryption is None:
        problems.append(
            "HAIP 1.0 asks for encrypted responses (direct_post.jwt): set RESPONSE_ENCRYPTION=1"
        )
    if verifier.dc_api_encryption is None:
        problems.append(
            "HAIP 1.0 asks for encrypted answers over the browser API (dc_api.jwt): set "
            "DC_API_RESPONSE_MODE=dc_api.jwt"
        )
    return problems
