"""Wallet-side pieces for the protocol tests, built with the independent test signer
(tests/sdjwt/sdjwt_forge.py) rather than with the issuer's own JOSE code."""

from __future__ import annotations

from typing import Any

from sdjwt.sdjwt_forge import generate, public_jwk, sign

ISSUER = "https://verity.example/issuers/7f1c"
NOW = 1_800_000_000
NONCE = "c-nonce-3q2H7lXw"
PROOF_TYP = "openid4vci-proof+jwt"


def proof_jwt(
    key: Any = None,
    *,
    header: dict[str, Any] | None = None,
    drop: tuple[str, ...] = (),
    **claims: Any,
) -> str:
    """A key proof as a wallet makes it (OpenID4VCI 1.0 Appendix F.1); ``header`` and
    ``claims`` override or add members, ``drop`` removes header or payload members."""
    key = key or generate("ES256")
    full_header = {"alg": "ES256", "typ": PROOF_TYP, "jwk": public_jwk(key), **(header or {})}
    payload = {"aud": ISSUER, "iat": NOW, "nonce": NONCE, **claims}
    for name in drop:
        full_header.pop(name, None)
        payload.pop(name, None)
    return sign(full_header, payload, key)
