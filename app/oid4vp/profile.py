"""``VERIFIER_PROFILE``: the interoperability profile a deployment promises wallets.

HAIP 1.0 (OpenID4VC High Assurance Interoperability Profile, the profile EU wallets are built
against) narrows OpenID4VP 1.0 for a verifier: requests signed under ``x509_hash`` and passed
by ``request_uri``, answers encrypted (``direct_post.jwt``, and ``dc_api.jwt`` over the browser
API) with ECDH-ES on P-256 to a key per request, ES256 signatures. A deployment that asks for
the profile and is configured otherwise is refused at start-up, each problem naming the
setting that causes it, rather than making requests a HAIP wallet refuses. HAIP covers SD-JWT
VC and mdoc only; a schema's format is chosen while the service runs, so verifications of any
other format are refused when they are made (``format_problem``), not at start-up.
"""

from __future__ import annotations

from app.oid4vp.client import X509_HASH
from app.oid4vp.formats import MSO_MDOC, SD_JWT_VC
from app.oid4vp.verifier import Verifier
from app.trust.x5c import self_signed

HAIP = "haip"
PROFILES = ("", HAIP)
HAIP_SIGNING_ALG = "ES256"
# The credential formats HAIP 1.0 profiles; W3C VC-JWT (jwt_vc_json) is not one of them.
HAIP_FORMATS = (SD_JWT_VC, MSO_MDOC)
FORMAT_NOT_IN_PROFILE = "FORMAT_NOT_IN_PROFILE"


def format_problem(profile: str, credential_format: str) -> str | None:
    """Why ``profile`` does not let a verification ask for ``credential_format``, or None."""
    if profile != HAIP or credential_format in HAIP_FORMATS:
        return None
    return (
        f"VERIFIER_PROFILE=haip (HAIP 1.0) allows SD-JWT VC ({SD_JWT_VC}) and mdoc "
        f"({MSO_MDOC}) only; this verification's schema is {credential_format}: choose a "
        "schema of one of those formats"
    )


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
    if any(self_signed(cert) for cert in getattr(client, "chain", ())):
        problems.append(
            "HAIP 1.0 asks that the signed request's x5c hold neither the trust anchor nor a "
            "self-signed certificate: REQUEST_SIGNING_CERT_FILE must hold the leaf and its "
            "intermediates only, issued by a CA"
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
