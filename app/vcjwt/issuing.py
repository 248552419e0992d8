"""Sign a W3C credential as a VC Data Model 1.1 JWT (§6.3.1), the ``jwt_vc_json`` format of
OpenID4VCI 1.0 Appendix A.1.1.

The JWT's registered claims stand for the credential's properties and the properties they
replace are left out, so the two can never disagree: ``iss`` the issuer (its HTTPS
identifier, whose ``jwt-vc-issuer`` metadata lists the key ``kid`` names), ``sub`` the holder
as a ``did:jwk`` of the key its proof was made with (the DID a presentation by that wallet is
signed under), ``jti`` the credential's id, ``nbf``/``iat`` its issuance, ``exp`` its end.
Pure: no database.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from app.oid4vci.credential import nest_claims
from app.oid4vci.jose import b64url, sign_es256_jwt
from app.oid4vci.keys import public_members

VC_CONTEXT = "https://www.w3.org/2018/credentials/v1"
CREDENTIAL_TYPE = "VerifiableCredential"
REVOCATION = "revocation"


def did_jwk(jwk: Mapping[str, Any]) -> str:
    """did:jwk (the method's §2): the public JWK, JSON then base64url, as the DID. The JSON
    is RFC 7638's canonical form (required members only, sorted, no whitespace), so one key
    always makes the same DID; a wallet presents under the DID the credential names."""
    public = public_members(dict(jwk))
    text = json.dumps(public, separators=(",", ":"), sort_keys=True)
    return "did:jwk:" + b64url(text.encode("utf-8"))


def sign_vc_jwt(
    *,
    private_key: ec.EllipticCurvePrivateKey,
    kid: str,
    issuer: str,
    credential_id: str,
    types: Sequence[str],
    claims: Mapping[str, Any],
    holder_jwk: Mapping[str, Any],
    issued_at: int,
    expires_at: int | None = None,
    status_list_credential: str | None = None,
    status_idx: int | None = None,
) -> str:
    """The compact JWS of the credential; ``types`` are those after ``VerifiableCredential``.
    With ``status_list_credential``, a ``BitstringStatusListEntry`` for revocation at
    ``status_idx`` (W3C Bitstring Status List §2.1)."""
    vc: dict[str, Any] = {
        "@context": [VC_CONTEXT],
        "type": [CREDENTIAL_TYPE, *(t for t in types if t != CREDENTIAL_TYPE)],
        "credentialSubject": nest_claims(claims),
    }
    if status_list_credential is not None and status_idx is not None:
        vc["credentialStatus"] = {
            "id": f"{status_list_credential}#{status_idx}",
            "type": "BitstringStatusListEntry",
            "statusPurpose": REVOCATION,
            "statusListIndex": str(status_idx),
            "statusListCredential": status_list_credential,
        }
    payload: dict[str, Any] = {
        "iss": issuer,
        "sub": did_jwk(holder_jwk),
        "jti": credential_id,
        "nbf": issued_at,
        "iat": issued_at,
    }
    if expires_at is not None:
        payload["exp"] = expires_at
    payload["vc"] = vc
    return sign_es256_jwt(typ="JWT", kid=kid, payload=payload, private_key=private_key)


def sign_bitstring_status_list(
    *,
    private_key: ec.EllipticCurvePrivateKey,
    kid: str,
    issuer: str,
    uri: str,
    revoked: Iterable[int],
    size: int,
    issued_at: int,
    ttl_seconds: int,
    expires_at: int,
) -> str:
    """A ``BitstringStatusListCredential`` (W3C Bitstring Status List §2.2) as a VCDM 1.1 JWT
    signed like the credentials: ``size`` one-bit revocation entries, ``revoked`` set, index 0
    the left-most bit (§6.1), GZIP-compressed and multibase base64url (``u``, §4.3); ``jti``
    is its own URL, as §2.2 has the ``id`` be."""
    data = bytearray((size + 7) // 8)
    for idx in revoked:
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < size:
            raise ValueError(f"Status index {idx!r} is outside a list of {size} entries")
        data[idx >> 3] |= 0x80 >> (idx & 7)
    encoded = "u" + b64url(gzip.compress(bytes(data), compresslevel=9, mtime=0))
    payload = {
        "iss": issuer,
        "jti": uri,
        "nbf": issued_at,
        "iat": issued_at,
        "exp": expires_at,
        "vc": {
            "@context": [VC_CONTEXT],
            "type": [CREDENTIAL_TYPE, "BitstringStatusListCredential"],
            "credentialSubject": {
                "id": f"{uri}#list",
                "type": "BitstringStatusList",
                "statusPurpose": REVOCATION,
                "encodedList": encoded,
                "ttl": ttl_seconds * 1000,
            },
        },
    }
    return sign_es256_jwt(typ="JWT", kid=kid, payload=payload, private_key=private_key)
